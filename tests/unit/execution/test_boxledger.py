"""The box-local ledger: prepared before the box, imported after it (real SQLite, real repo)."""

from __future__ import annotations

import json
from pathlib import Path

from plangate.execution.boxledger import box_payloads, import_box_ledger, prepare_box_dir
from plangate.ledger import open_ledger
from plangate.ledger.sqlite import SQLiteLedger

RUN_ID = "TASK-0001-20261203T093100Z-4bf50be3"


def _box(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    return prepare_box_dir(
        run_dir, run_id=RUN_ID, task_id="TASK-0001", approved="a" * 40,
        plan_hash="sha256:" + "0" * 64, backend="bubblewrap",
    )


def _repo_entries(repo: Path) -> list[tuple[str, str, dict]]:
    with open_ledger(repo, {}, create=False) as ledger:
        assert ledger.verify().accepted
        return [(e.kind, e.subject, dict(e.payload)) for e in ledger.entries()]


def test_prepared_box_has_an_empty_ledger_and_the_run_facts(tmp_path: Path) -> None:
    from plangate.isolation.contract import read_box_facts

    box = _box(tmp_path)
    facts = read_box_facts((box / "run.json").read_bytes())
    assert facts is not None
    assert (facts.run_id, facts.task_id, facts.backend) == (RUN_ID, "TASK-0001", "bubblewrap")
    with SQLiteLedger(box / "ledger.sqlite3", read_only=True) as ledger:
        assert ledger.entries() == []


def test_hook_decisions_are_imported_as_observations_tied_to_the_run(
    tmp_path: Path, git_repo: Path
) -> None:
    box = _box(tmp_path)
    with SQLiteLedger(box / "ledger.sqlite3") as ledger:
        ledger.append("hook_decision", "TASK-0001", {"verdict": "ALLOW", "tool": "Write"})
        ledger.append("hook_decision", "TASK-0001", {"verdict": "DENY", "tool": "Bash"})
    summary = import_box_ledger(git_repo, {}, box, run_id=RUN_ID, task_id="TASK-0001")
    assert (summary["status"], summary["imported"], summary["recorded"]) == ("INTACT", 2, True)
    entries = _repo_entries(git_repo)
    assert [k for k, _, _ in entries] == ["exec_box_entry", "exec_box_entry", "exec_box_ledger"]
    first = entries[0][2]
    assert entries[0][1] == "TASK-0001"
    assert first["run_id"] == RUN_ID
    assert first["reported_from"] == "exec_box"
    assert (first["box_seq"], first["box_kind"]) == (1, "hook_decision")
    assert first["entry"] == {"verdict": "ALLOW", "tool": "Write"}


def test_other_kinds_or_refused_payloads_import_nothing(tmp_path: Path, git_repo: Path) -> None:
    box = _box(tmp_path)
    with SQLiteLedger(box / "ledger.sqlite3") as ledger:
        ledger.append("hook_decision", "TASK-0001", {"verdict": "ALLOW"})
        ledger.append("c3_issue", "TASK-0001", {"decision": "AUTO_APPROVED"})
    summary = import_box_ledger(git_repo, {}, box, run_id=RUN_ID, task_id="TASK-0001")
    assert (summary["status"], summary["imported"]) == ("MALFORMED", 0)
    assert "c3_issue" in summary["detail"]
    assert [k for k, _, _ in _repo_entries(git_repo)] == ["exec_box_ledger"]


def test_an_unwritable_repository_ledger_is_reported_never_raised(
    tmp_path: Path, git_repo: Path
) -> None:
    box = _box(tmp_path)
    with SQLiteLedger(box / "ledger.sqlite3") as ledger:
        ledger.append("hook_decision", "TASK-0001", {"verdict": "ALLOW"})
    env = {"PLANGATE_LEDGER_URL": "ftp://nowhere"}
    summary = import_box_ledger(git_repo, env, box, run_id=RUN_ID, task_id="TASK-0001")
    assert summary["recorded"] is False
    assert summary["error"] == "LEDGER_URL_INVALID"


def test_payloads_keep_the_box_entry_whole() -> None:
    from plangate.ledger.chain import LedgerEntry

    entry = LedgerEntry(7, "hook_decision", "-", {"verdict": "DENY"}, "2026-12-03T00:00:00Z",
                        "0" * 64, "1" * 64)
    payloads, why = box_payloads((entry,), RUN_ID, "TASK-0001")
    assert why == ""
    assert json.loads(json.dumps(payloads[0]))["box_entry_hash"] == "1" * 64


def test_a_payload_the_ledger_refuses_makes_the_whole_box_ledger_malformed() -> None:
    from plangate.ledger.chain import LedgerEntry

    good = LedgerEntry(1, "hook_decision", "-", {"verdict": "ALLOW"}, "2026-12-03T00:00:00Z",
                       "0" * 64, "1" * 64)
    bad = good._replace(seq=2, payload={"access_token": "t"})
    payloads, why = box_payloads((good, bad), RUN_ID, "TASK-0001")
    assert payloads == []
    assert why.startswith("entry 2: LEDGER_FORBIDDEN_KEY")
