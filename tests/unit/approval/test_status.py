"""``plangate status``: one aligned row per task, a report (exit 0)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from plangate.cli.status_cmd import format_table
from plangate.git import scrubbed_env
from support.plan_tasks import approve_task, task_dir, write_package


def _status(repo: Path, run_cli, *tasks: str) -> tuple[int, dict]:
    result = run_cli(repo, "status", *tasks, "--json")
    return result.code, json.loads(result.out)


def test_every_task_with_its_state(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli, "TASK-0001")
    write_package(git_repo, "TASK-0002", markers=False)
    task_dir(git_repo, "TASK-0003").mkdir(parents=True)
    (git_repo / "docs" / "working" / "notes").mkdir()  # not a task: ignored
    code, doc = _status(git_repo, run_cli)
    assert code == 0
    rows = {row["task"]: row for row in doc["tasks"]}
    assert list(rows) == ["TASK-0001", "TASK-0002", "TASK-0003"]
    assert rows["TASK-0001"]["verdict"] == "ACCEPTED"
    assert rows["TASK-0001"]["record"] == "c3-prime"
    assert rows["TASK-0001"]["decision"] == "AUTO_APPROVED"
    assert rows["TASK-0001"]["c1"] == rows["TASK-0001"]["c2"] == "valid"
    assert rows["TASK-0001"]["package"] == "6/6"
    assert rows["TASK-0002"]["c1"] == "missing"
    assert rows["TASK-0002"]["record"] == "none"
    assert rows["TASK-0002"]["verdict"] == "REJECTED"
    assert rows["TASK-0003"]["package"] == "0/6"
    assert rows["TASK-0003"]["c1"] == "file_missing"
    assert doc["summary"] == {"ACCEPTED": 1, "REJECTED": 2}


def test_human_table_is_aligned(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli, "TASK-0001")
    write_package(git_repo, "TASK-0002", markers=False)
    result = run_cli(git_repo, "status")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split() == [
        "TASK",
        "PACKAGE",
        "C-1",
        "C-2",
        "RECORD",
        "DECISION",
        "AT",
        "EXEC",
        "FIRST",
        "REASON",
        "PACKAGE",
        "REASON",
    ]
    column = lines[0].index("AT EXEC")
    assert lines[1][column:].startswith("ACCEPTED")
    assert lines[2][column:].startswith("REJECTED")
    assert lines[-2] == "2 task(s): 1 ACCEPTED, 1 REJECTED"
    assert lines[-1].startswith("authority: approvals are unauthenticated")


def test_format_table_pads_columns() -> None:
    rows = [
        {"task": "TASK-0001", "package": "6/6", "verdict": "ACCEPTED"},
        {"task": "TASK-0002", "package": "0/6", "verdict": "REJECTED", "c1": "file_missing"},
    ]
    header, first, second = format_table(rows)
    assert header.index("PACKAGE") == first.index("6/6") == second.index("0/6")
    assert header.index("AT EXEC") == first.index("ACCEPTED") == second.index("REJECTED")
    assert header.index("C-1") == second.index("file_missing")


def _one_cell_at_a_time(rows: list[dict], signed: bool) -> list[str]:
    """The table as it was built before, a cell at a time (the reference)."""
    from plangate.cli.status_cmd import _COLUMNS, _SIGNED_COLUMNS, _cell

    columns = _COLUMNS + _SIGNED_COLUMNS if signed else _COLUMNS
    cells = [[title for _key, title in columns]]
    cells += [[_cell(row.get(key)) for key, _title in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells
    ]


@pytest.mark.parametrize("signed", [False, True])
def test_format_table_is_the_cell_by_cell_table(signed: bool) -> None:
    rows = [
        {"task": "TASK-0001", "package": "6/6", "verdict": "ACCEPTED", "c1": "valid",
         "approved_by": "alice", "reviewed_by": ["bob", "carol"], "decision": None},
        {"task": "TASK-0002", "package": "-", "verdict": "REJECTED", "first_reason": "{0}{x}",
         "reviewed_by": [], "approved_by": None, "package_reason": "", "record": 0},
        {"task": "TASK-0003"},
        {"task": "TASK-0004", "c2": "a much longer value than any title", "reviewed_by": None},
    ]
    for some in (rows, rows[:1], []):
        assert format_table(some, signed=signed) == _one_cell_at_a_time(some, signed)


def test_named_tasks_and_missing_one(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli, "TASK-0001")
    write_package(git_repo, "TASK-0002")
    code, doc = _status(git_repo, run_cli, "TASK-0002", "TASK-0404")
    assert code == 1
    assert [row["task"] for row in doc["tasks"]] == ["TASK-0002"]
    assert [r["code"] for r in doc["reasons"]] == ["TASK_NOT_FOUND"]
    human = run_cli(git_repo, "status", "TASK-0404")
    assert human.code == 1
    assert "TASK_NOT_FOUND" in human.err


def test_no_tasks(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "status")
    assert result.code == 0
    assert "no tasks" in result.out


def test_bad_task_id_is_usage(git_repo: Path, run_cli) -> None:
    assert run_cli(git_repo, "status", "TASK-1").code == 2


def test_symlinked_task_dir_is_a_rejected_row(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli, "TASK-0001")
    task_dir(git_repo, "TASK-0002").symlink_to("TASK-0001")
    code, doc = _status(git_repo, run_cli)
    assert code == 0
    rows = {row["task"]: row for row in doc["tasks"]}
    assert rows["TASK-0002"]["verdict"] == "REJECTED"
    assert rows["TASK-0002"]["first_reason"] == "TASK_DIR_INVALID"


def test_stale_and_escalated_tasks(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli, "TASK-0001")
    reviewers = {
        "model_a": {"verdict": "approve", "evidence_ref": "a.md"},
        "model_b": {"verdict": "reject", "evidence_ref": "b.md"},
    }
    approve_task(git_repo, run_cli, "TASK-0002", decision="HUMAN_ESCALATED", reviewers=reviewers)
    with (task_dir(git_repo, "TASK-0001") / "todo.md").open("a") as fh:
        fh.write("drift\n")
    _code, doc = _status(git_repo, run_cli)
    rows = {row["task"]: row for row in doc["tasks"]}
    assert rows["TASK-0001"]["verdict"] == "REJECTED"
    assert rows["TASK-0002"]["verdict"] == "HUMAN_ESCALATED"
    assert rows["TASK-0002"]["decision"] == "HUMAN_ESCALATED"


def test_status_matches_c3_verify_on_ambiguous_source(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli, "TASK-0001")
    # Two root commits sharing the prefix ee26844 (found offline).
    for message in ("c13432", "c22984"):
        body = (
            "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
            "author A <a@example.invalid> 1700000000 +0000\n"
            "committer A <a@example.invalid> 1700000000 +0000\n\n"
            f"{message}\n"
        ).encode()
        subprocess.run(
            ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
            cwd=git_repo,
            env=scrubbed_env(),
            input=body,
            check=True,
            capture_output=True,
        )
    record_path = task_dir(git_repo) / "approvals" / "c3.json"
    record = json.loads(record_path.read_text())
    record["source_sha"] = "ee26844"
    for model in ("model_a", "model_b"):
        record["reviewers"][model]["source_sha"] = "ee26844"
    record_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    _code, doc = _status(git_repo, run_cli)
    verify = json.loads(run_cli(git_repo, "c3", "verify", "TASK-0001", "--json").out)
    row = doc["tasks"][0]
    assert row["verdict"] == verify["verdict"] == "REJECTED"
    assert "C3_SOURCE_SHA_AMBIGUOUS" in [r["code"] for r in row["reasons"]]
    assert [r["code"] for r in row["reasons"]] == [r["code"] for r in verify["reasons"]]


def test_status_in_a_plain_directory_fails_closed(tmp_path: Path, run_cli) -> None:
    repo = tmp_path / "plain"
    repo.mkdir()
    head = "a" * 40
    write_package(repo)
    approvals = task_dir(repo) / "approvals"
    approvals.mkdir()
    (approvals / "c3.json").write_text(
        json.dumps({"approval_kind": "c3-prime", "source_sha": head})
    )
    code, doc = _status(repo, run_cli)
    assert code == 0
    assert doc["tasks"][0]["verdict"] == "REJECTED"
    codes = [r["code"] for r in doc["tasks"][0]["reasons"]]
    # No trust root can be read outside a repository: that comes first, then the record's own.
    assert codes[0] == "NOT_A_GIT_REPOSITORY" and "C3_SOURCE_SHA_UNRESOLVED" in codes
    assert doc["authority"]["state"] == "unreadable"


def test_first_reason_is_the_verdicts_own_and_package_problems_stand_beside_it(
    git_repo: Path, run_cli
) -> None:
    # A record that verifies while a marker is missing: the row says what exec
    # would answer, never ACCEPTED next to a reason that did not decide it.
    approve_task(git_repo, run_cli, "TASK-0001")
    review = task_dir(git_repo, "TASK-0001") / "review-self.md"
    lines = [ln for ln in review.read_text().splitlines() if "C1-VERDICT" not in ln]
    review.write_text("\n".join(lines) + "\n")
    _code, doc = _status(git_repo, run_cli, "TASK-0001")
    row = doc["tasks"][0]
    codes = [r["code"] for r in row["reasons"]]
    assert row["first_reason"] == (codes[0] if codes else "")
    assert row["package_reason"] == "EVIDENCE_C1_MARKER_MISSING"
    assert row["at"] == "exec"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=scrubbed_env(), check=True,
                   capture_output=True)


def test_the_verdict_is_the_one_exec_would_get_when_head_moved_out_of_scope(
    git_repo: Path, run_cli
) -> None:
    # HEAD descends from the approved commit through a commit that touches a
    # path outside the task's scope: exec refuses to start, and status says so.
    approve_task(git_repo, run_cli, "TASK-0001")
    (git_repo / "other.txt").write_text("x\n")
    _git(git_repo, "add", "other.txt")
    _git(git_repo, "commit", "-qm", "move HEAD")
    _code, doc = _status(git_repo, run_cli, "TASK-0001")
    row = doc["tasks"][0]
    assert row["verdict"] == "REJECTED"
    assert row["first_reason"] == "HOOK_COMMITTED_OUTSIDE_SCOPE"


def test_the_verdict_is_the_one_exec_would_get_when_head_left_the_approved_history(
    git_repo: Path, run_cli
) -> None:
    # HEAD on a branch that does not descend from the approved commit at all.
    approve_task(git_repo, run_cli, "TASK-0001")
    _git(git_repo, "checkout", "-q", "--orphan", "elsewhere")
    _git(git_repo, "commit", "-qm", "unrelated history")
    _code, doc = _status(git_repo, run_cli, "TASK-0001")
    row = doc["tasks"][0]
    assert row["verdict"] == "REJECTED"
    assert row["first_reason"] == "HOOK_HEAD_NOT_DESCENDANT"
