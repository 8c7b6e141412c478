"""``plangate report`` on real repositories: formats, filters, exit codes, fail-closed inputs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.report import CANARY, HOSTILE, build_repository, tamper_ledger
from support.taskkit import task_dir


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return build_repository(git_repo, hostile=True)


def test_markdown_is_short_escaped_and_names_the_verdicts(repo: Path) -> None:
    result = run_cli_in(repo, "report", "--format", "markdown")
    assert result.code == 0
    text = result.out
    assert "**Ledger verified**" in text
    assert "| TASK\\-0001 | holds: exec would run |" in text
    assert "does not hold" in text
    assert "<script" not in text and "<img" not in text
    assert "&lt;script&gt;" in text
    assert CANARY not in text
    assert len(text.splitlines()) < 40


def test_since_leaves_older_entries_out(repo: Path) -> None:
    result = run_cli_in(repo, "report", "--format", "markdown", "--since", "2999-01-01")
    assert result.code == 0
    assert "### Denials: 0" in result.out
    assert "### Evaluations" not in result.out


def test_task_filter_limits_tasks_and_leaves_evaluations_out(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "one.html"
    result = run_cli_in(repo, "report", "--task", "TASK-0002", "-o", str(out))
    assert result.code == 0
    text = out.read_text()
    assert 'id="task-TASK-0002"' in text and 'id="task-TASK-0001"' not in text
    assert "Not part of a task-limited report" in text
    assert 'tr id="e' in text  # TASK-0002's exec refusal is listed
    assert "HOOK_OUTSIDE_SCOPE" not in text  # TASK-0001's hook denials are not


@pytest.mark.parametrize("bad", ["2026-13-01", "yesterday", "2026-1-1", "2026-02-30", ""])
def test_a_bad_since_is_a_usage_error(repo: Path, bad: str) -> None:
    result = run_cli_in(repo, "report", "--since", bad)
    assert result.code == 2
    assert "REPORT_SINCE_INVALID" in result.err


@pytest.mark.parametrize("bad", ["TASK-1", "../etc", "TASK-0001/..", "<b>"])
def test_a_bad_task_id_is_a_usage_error(repo: Path, bad: str) -> None:
    result = run_cli_in(repo, "report", "--task", bad)
    assert result.code == 2
    assert "TASK_ID_INVALID" in result.err


def test_a_named_task_that_does_not_exist_is_shown_as_not_holding(repo: Path) -> None:
    result = run_cli_in(repo, "report", "--format", "markdown", "--task", "TASK-0077")
    assert result.code == 0
    assert "| TASK\\-0077 | does not hold: exec would refuse |" in result.out


def test_tampered_ledger_exits_1_and_withholds_in_markdown(repo: Path) -> None:
    tamper_ledger(repo)
    result = run_cli_in(repo, "report", "--format", "markdown")
    assert result.code == 1
    assert "Ledger TAMPERED" in result.out
    assert "### Denials" not in result.out
    assert "Not shown: the ledger does not verify" in result.out


def test_an_unreadable_ledger_is_shown_as_unavailable(repo: Path) -> None:
    result = run_cli_in(
        repo, "report", "--format", "markdown", env={"PLANGATE_LEDGER_URL": "mysql://nowhere"}
    )
    assert result.code == 1
    assert "Ledger UNAVAILABLE" in result.out
    assert "LEDGER\\_URL\\_INVALID" in result.out


def test_a_forged_run_log_line_is_unverified(repo: Path, tmp_path: Path) -> None:
    line = {
        "event": "exec_started",
        "at": "2026-12-01T00:00:00Z",
        "task_id": "TASK-0001",
        "program": "forged",
    }
    (task_dir(repo, "TASK-0001") / "run.ndjson").write_text(json.dumps(line) + "\n")
    out = tmp_path / "r.html"
    run_cli_in(repo, "report", "-o", str(out))
    assert "1 of 1 line(s) have no matching ledger entry: unverified" in out.read_text()


def test_a_delivery_record_the_ledger_does_not_hold_is_unverified(
    repo: Path, tmp_path: Path
) -> None:
    from plangate.delivery.log import rows_bytes, seal_entries

    rows = seal_entries(
        [
            {
                "kind": "state",
                "state": "MERGE_READY_CANDIDATE",
                "pr_number": 7,
                "head_sha": "a" * 40,
                "reasons": [],
            }
        ],
        prev=None,
        at="2026-12-01T00:00:00Z",
    )
    target = task_dir(repo, "TASK-0001") / "delivery"
    target.mkdir()
    (target / "record.jsonl").write_bytes(rows_bytes(rows))
    result = run_cli_in(repo, "report", "--format", "markdown")
    assert "MERGE\\_READY\\_CANDIDATE \\(unverified\\)" in result.out


def test_a_corrupt_delivery_record_is_named_not_dropped(repo: Path, tmp_path: Path) -> None:
    target = task_dir(repo, "TASK-0001") / "delivery"
    target.mkdir()
    (target / "record.jsonl").write_text('{"kind": "state"}\n')
    out = tmp_path / "r.html"
    run_cli_in(repo, "report", "-o", str(out))
    assert "DELIVERY_RECORD_CORRUPT" in out.read_text()


def test_html_without_the_chart_library_fails_closed(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "leather", None)  # import leather raises ImportError
    out = tmp_path / "r.html"
    result = run_cli_in(repo, "report", "-o", str(out))
    assert result.code == 1
    assert "REPORT_CHARTS_UNAVAILABLE" in result.err
    assert "reinstall PlanGate" in result.err  # a dependency of PlanGate, not an extra
    assert not out.exists()
    assert run_cli_in(repo, "report", "--format", "markdown").code == 0


def test_the_ledger_is_read_not_created(git_repo: Path) -> None:
    result = run_cli_in(git_repo, "report", "--format", "markdown")
    assert result.code == 0
    assert "0 entries" in result.out
    assert not (git_repo / ".plangate" / "ledger.sqlite3").exists()


def test_report_does_not_write_the_ledger(repo: Path) -> None:
    db = repo / ".plangate" / "ledger.sqlite3"
    before = sqlite3.connect(db).execute("SELECT count(*) FROM ledger_entries").fetchone()
    run_cli_in(repo, "report", "--format", "markdown")
    after = sqlite3.connect(db).execute("SELECT count(*) FROM ledger_entries").fetchone()
    assert before == after
    assert HOSTILE  # the fixture really carried hostile text
