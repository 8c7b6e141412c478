"""``plangate exec``: preflight under a lock, records, run, re-verify, in real git repos."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plangate.approval.service import verify_task
from plangate.fsutil import exclusive_lock
from plangate.git import scrubbed_env
from plangate.ledger import open_ledger
from support import taskkit
from support.plan_tasks import approve_task, head_of, task_dir
from support.repo import commit_all, git

PY = sys.executable


def _touch_command(marker: Path, code: int = 0) -> list[str]:
    """A command that proves it ran (writes ``marker`` with PLANGATE_TASK) and exits ``code``."""
    script = (
        "import os, sys, pathlib; "
        f"pathlib.Path({str(marker)!r}).write_text(os.environ.get('PLANGATE_TASK', '')); "
        f"sys.exit({code})"
    )
    return [PY, "-c", script]


def _run_log(repo: Path, task: str = "TASK-0001") -> list[dict]:
    path = task_dir(repo, task) / "run.ndjson"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _ledger_kinds(repo: Path) -> list[str]:
    with open_ledger(repo, {}, create=False) as ledger:
        return [entry.kind for entry in ledger.entries()]


def test_accepted_run_records_and_returns_the_command_code(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    head = approve_task(git_repo, run_cli)
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--", *_touch_command(marker, 7), tty=True)
    assert result.code == 7, result.err
    assert marker.read_text() == "TASK-0001"  # ran, with PLANGATE_TASK set
    started, opted_out, ended = _run_log(git_repo)
    assert opted_out["event"] == "exec_unisolated"  # the human opt-out is in the run's evidence
    verify = json.loads(
        run_cli(git_repo, "c3", "verify", "TASK-0001", "--expected-sha", head, "--json").out
    )
    assert started["event"] == "exec_started"
    assert started["head"] == head
    assert started["source_sha_full"] == head
    for key in ("snapshot_digest", "plan_hash", "plan_package_hash", "record_digest"):
        assert started[key] == verify["facts"][key], key
    assert started["program"] == Path(PY).name
    assert ended["event"] == "exec_ended"
    assert ended["exit_code"] == 7
    assert ended["drift"] == []
    assert ended["post_verdict"] == "ACCEPTED"
    assert _ledger_kinds(git_repo)[-3:] == ["exec_started", "exec_unisolated", "exec_ended"]
    with open_ledger(git_repo, {}, create=False) as ledger:
        entry = ledger.entries(kind="exec_started")[-1]
    assert entry.subject == "TASK-0001"
    assert entry.payload["snapshot_digest"] == started["snapshot_digest"]
    # Arguments never enter the ledger, only their digest.
    assert "ran" not in json.dumps(entry.payload)


def test_success_exit_zero(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--", *_touch_command(tmp_path / "ok"), tty=True)
    assert result.code == 0
    assert (tmp_path / "ok").exists()


def _assert_not_started(repo: Path, marker: Path, result, code: int, reason: str) -> None:
    assert result.code == code, result.err
    assert not marker.exists(), "the command must not start"
    assert reason in result.err
    assert "Traceback" not in result.err
    assert all(e["event"] != "exec_started" for e in _run_log(repo))


def test_plan_edited_after_approval_blocks(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    with (task_dir(git_repo) / "plan.md").open("a") as fh:
        fh.write("\nsneaky change\n")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "EVIDENCE_C1_STALE")
    assert "C3_PLAN_HASH_STALE" in result.err
    assert _ledger_kinds(git_repo)[-1] == "exec_refused"


def test_other_artifact_edited_blocks(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    with (task_dir(git_repo) / "test-cases.md").open("a") as fh:
        fh.write("x")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "test-cases.md")


def test_head_moved_blocks(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    (git_repo / "other.txt").write_text("new commit")
    git(git_repo, "add", "other.txt")
    git(git_repo, "commit", "-q", "-m", "moves HEAD")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "HOOK_COMMITTED_OUTSIDE_SCOPE")


def test_head_moved_by_in_scope_commits_still_runs(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    """Exec and the hooks share one rule: a second agent session after the first in-scope
    commit needs no new approval."""
    approve_task(git_repo, run_cli)
    (git_repo / "src").mkdir(exist_ok=True)
    (git_repo / "src" / "greet.py").write_text("def greet():\n    return 'hi'\n")
    git(git_repo, "add", "src/greet.py")
    git(git_repo, "commit", "-q", "-m", "first session's work")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--",
                     *_touch_command(marker), tty=True)
    assert result.code == 0, result.err
    assert marker.exists()


def _status_row(repo: Path, run_cli) -> dict[str, Any]:
    body = json.loads(run_cli(repo, "status", "TASK-0001", "--json").out)
    rows = body["tasks"] if "tasks" in body else body["rows"]
    return rows[0]


def test_status_gives_the_verdict_exec_gives(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    (git_repo / "src").mkdir(exist_ok=True)
    (git_repo / "src" / "greet.py").write_text("x = 1\n")
    git(git_repo, "add", "src/greet.py")
    git(git_repo, "commit", "-q", "-m", "in scope")
    row = _status_row(git_repo, run_cli)
    assert (row["verdict"], row["at"]) == ("ACCEPTED", "exec")
    marker = tmp_path / "ran"
    started = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--",
                      *_touch_command(marker), tty=True)
    assert started.code == 0, started.err
    (git_repo / "elsewhere.txt").write_text("x\n")
    git(git_repo, "add", "elsewhere.txt")
    git(git_repo, "commit", "-q", "-m", "outside")
    row = _status_row(git_repo, run_cli)
    assert row["verdict"] == "REJECTED"
    assert row["first_reason"] == "HOOK_COMMITTED_OUTSIDE_SCOPE"
    refused = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(tmp_path / "no"))
    assert refused.code == 1 and "HOOK_COMMITTED_OUTSIDE_SCOPE" in refused.err


def test_human_escalated_exits_3(git_repo: Path, tmp_path: Path, run_cli) -> None:
    reviewers = {
        "model_a": {"verdict": "approve", "evidence_ref": "a.md"},
        "model_b": {"verdict": "reject", "evidence_ref": "b.md"},
    }
    approve_task(git_repo, run_cli, decision="HUMAN_ESCALATED", reviewers=reviewers)
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 3, "C3_DECISION_NOT_APPROVED")


def test_blocked_exits_1(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli, decision="BLOCKED")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "C3_DECISION_NOT_APPROVED")


def test_no_record_blocks(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    (task_dir(git_repo) / "approvals" / "c3.json").unlink()
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "C3_RECORD_MISSING")


def test_missing_task_blocks(git_repo: Path, tmp_path: Path, run_cli) -> None:
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0404", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "TASK_DIR_INVALID")


def test_not_a_git_repository(tmp_path: Path, run_cli) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    marker = tmp_path / "ran"
    result = run_cli(plain, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(plain, marker, result, 1, "EXEC_NO_HEAD")
    assert "not inside a git repository" in result.err


def test_unborn_head(tmp_path: Path, run_cli) -> None:
    repo = tmp_path / "unborn"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    marker = tmp_path / "ran"
    result = run_cli(repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(repo, marker, result, 1, "EXEC_NO_HEAD")
    assert "unborn" in result.err


def test_detached_head(git_repo: Path, tmp_path: Path, run_cli) -> None:
    head = approve_task(git_repo, run_cli)
    git(git_repo, "checkout", "-q", "--detach", head)
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "EXEC_HEAD_DETACHED")


def test_git_dir_in_environment_is_ignored(
    git_repo: Path, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    approve_task(git_repo, run_cli)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(tmp_path / "ran"))
    assert result.code == 0, result.err


def test_lock_held_blocks(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    marker = tmp_path / "ran"
    with exclusive_lock(git_repo / ".plangate" / "locks" / "TASK-0001.lock"):
        result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "LOCK_HELD")
    # Once the other holder is gone, the next exec runs.
    assert run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker)).code == 0


def test_lock_files_stay_out_of_git_status(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(tmp_path / "ran"))
    status = git(git_repo, "status", "--porcelain", "-uall")
    assert ".lock" not in status


def test_unwritable_ledger_refuses_to_start(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    marker = tmp_path / "ran"
    env = dict(os.environ, PLANGATE_LEDGER_URL="nosuchscheme://nowhere")
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker), env=env)
    _assert_not_started(git_repo, marker, result, 1, "EXEC_LEDGER_UNAVAILABLE")
    assert _run_log(git_repo) == []


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_unwritable_run_log_refuses_to_start(
    git_repo: Path, tmp_path: Path, run_cli, kind: str
) -> None:
    approve_task(git_repo, run_cli)
    log = task_dir(git_repo) / "run.ndjson"
    target = tmp_path / "elsewhere.ndjson"
    if kind == "symlink":
        log.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(log)
    else:
        log.mkdir()
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    assert result.code == 1
    assert not marker.exists()
    assert "EXEC_RUNLOG_UNWRITABLE" in result.err
    assert not target.exists()


def test_drift_during_the_run_is_recorded(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    todo = task_dir(git_repo) / "todo.md"
    command = [PY, "-c", f"open({str(todo)!r}, 'a').write('changed by the agent')"]
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--json", "--", *command, tty=True)
    # One verdict: the command succeeded, but the approval no longer holds after the
    # run, so the run is REJECTED and exits 1 (never ACCEPTED beside a REJECTED re-check).
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["verdict"] == "REJECTED"
    assert doc["command_exit_code"] == 0
    assert doc["post_verdict"] == "REJECTED"
    assert "snapshot_digest" in doc["drift"]
    assert "plan_package_hash" in doc["drift"]
    assert "plan_hash" not in doc["drift"]
    assert "WARNING" in result.err
    ended = _run_log(git_repo)[-1]
    assert ended["drift"] == doc["drift"]
    assert ended["post_verdict"] == "REJECTED"
    with open_ledger(git_repo, {}, create=False) as ledger:
        assert ledger.entries(kind="exec_ended")[-1].payload["drift"] == doc["drift"]


def test_commit_during_the_run_is_reported(git_repo: Path, run_cli) -> None:
    head = approve_task(git_repo, run_cli)
    command = ["git", "commit", "-q", "--allow-empty", "-m", "agent commit"]
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--", *command, tty=True)
    assert result.code == 0, result.err
    ended = _run_log(git_repo)[-1]
    assert ended["head"] == head
    assert ended["head_after"] == head_of(git_repo) != head


def test_command_not_found_is_127_and_recorded(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    result = run_cli(git_repo, "exec", "TASK-0001", "--", "no-such-command-plangate-test")
    assert result.code == 127
    assert "command not found" in result.err
    ended = _run_log(git_repo)[-1]
    assert ended["exit_code"] == 127


def test_killed_by_signal_is_128_plus_n(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    command = [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"]
    assert run_cli(git_repo, "exec", "TASK-0001", "--", *command).code == 128 + 15


@pytest.mark.parametrize(
    "argv",
    [
        ("TASK-0001",),
        ("TASK-0001", "--"),
        ("TASK-0001", "--", ""),
        ("--", "true"),
        ("TASK-1", "--", "true"),
    ],
)
def test_usage_errors(git_repo: Path, run_cli, argv: tuple[str, ...]) -> None:
    result = run_cli(git_repo, "exec", *argv)
    assert result.code == 2
    assert "Traceback" not in result.err


def test_refusal_json(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    (task_dir(git_repo) / "approvals" / "c3.json").write_text('{"a": 1, "a": 2}')
    result = run_cli(git_repo, "exec", "TASK-0001", "--json", "--", "true")
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["verdict"] == "REJECTED"
    assert doc["exit_code"] == 1
    assert doc["facts"]["started"] is False
    assert doc["reasons"][0]["code"] == "C3_RECORD_MALFORMED"


def test_ambiguous_source_sha_blocks(git_repo: Path, tmp_path: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    for message in ("c13432", "c22984"):  # two commits sharing the prefix ee26844
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
    path = task_dir(git_repo) / "approvals" / "c3.json"
    record = json.loads(path.read_text())
    record["source_sha"] = "ee26844"
    for model in ("model_a", "model_b"):
        record["reviewers"][model]["source_sha"] = "ee26844"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "C3_SOURCE_SHA_AMBIGUOUS")


def test_abbreviated_source_sha_naming_head_is_compared_in_full(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    head = approve_task(git_repo, run_cli)
    path = task_dir(git_repo) / "approvals" / "c3.json"
    record = json.loads(path.read_text())
    record["source_sha"] = head[:10]
    for model in ("model_a", "model_b"):
        record["reviewers"][model]["source_sha"] = head[:10]
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--", *_touch_command(marker), tty=True)
    assert result.code == 0, result.err
    assert _run_log(git_repo)[0]["source_sha_full"] == head
    (git_repo / "elsewhere.txt").write_text("outside the scope\n")
    commit_all(git_repo, "moves HEAD")
    marker.unlink()
    (task_dir(git_repo) / "run.ndjson").unlink()
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "HOOK_COMMITTED_OUTSIDE_SCOPE")


def _legacy_record(status: str, plan_hash: str, **extra: str) -> str:
    record = {
        "task_id": "TASK-0001",
        "phase": "C-3",
        "c3_status": status,
        "approved_by": "a human",
        "approved_at": "2026-01-02T03:04:05Z",
        "plan_hash": plan_hash,
        **extra,
    }
    return json.dumps(record, indent=2)


def test_a_legacy_approved_record_does_not_approve_the_derived_scope(
    git_repo: Path, tmp_path: Path, run_cli
) -> None:
    # a legacy C-3 record approves plan bytes, never the scope exec would enforce:
    # the task is approved again (the new record carries the scope digest)
    from plangate.canonical import sha256_digest
    from support.plan_tasks import PLAN_MD, write_package

    task = write_package(git_repo)
    commit_all(git_repo, "plan")
    (task / "approvals").mkdir()
    (task / "approvals" / "c3.json").write_text(
        _legacy_record("APPROVED", sha256_digest(PLAN_MD.encode()))
    )
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--", *_touch_command(marker), tty=True)
    assert result.code == 1
    assert "SCOPE_NOT_APPROVED" in result.err and "approve it again" in result.err
    assert not marker.exists()


@pytest.mark.parametrize(
    ("status", "extra", "code", "reason"),
    [
        ("CONDITIONAL", {"conditions": "add tests"}, 3, "LEGACY_CONDITIONAL"),
        ("REJECTED", {"rejection_reason": "scope"}, 1, "LEGACY_REJECTED"),
    ],
)
def test_legacy_not_approved_does_not_run(
    git_repo: Path,
    tmp_path: Path,
    run_cli,
    status: str,
    extra: dict[str, str],
    code: int,
    reason: str,
) -> None:
    from plangate.canonical import sha256_digest
    from support.plan_tasks import PLAN_MD, write_package

    task = write_package(git_repo)
    commit_all(git_repo, "plan")
    (task / "approvals").mkdir()
    (task / "approvals" / "c3.json").write_text(
        _legacy_record(status, sha256_digest(PLAN_MD.encode()), **extra)
    )
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, code, reason)


def test_legacy_stale_plan_hash_does_not_run(git_repo: Path, tmp_path: Path, run_cli) -> None:
    from support.plan_tasks import write_package

    task = write_package(git_repo)
    commit_all(git_repo, "plan")
    (task / "approvals").mkdir()
    (task / "approvals" / "c3.json").write_text(_legacy_record("APPROVED", "sha256:" + "0" * 64))
    marker = tmp_path / "ran"
    result = run_cli(git_repo, "exec", "TASK-0001", "--", *_touch_command(marker))
    _assert_not_started(git_repo, marker, result, 1, "LEGACY_PLAN_HASH_STALE")


def test_unrecorded_end_turns_success_into_failure(git_repo: Path, run_cli) -> None:
    approve_task(git_repo, run_cli)
    db = git_repo / ".plangate" / "ledger.sqlite3"
    # The "agent" destroys the ledger during the run: exec_ended cannot be written.
    command = [PY, "-c", f"import os; os.remove({str(db)!r}); os.mkdir({str(db)!r})"]
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--json", "--", *command, tty=True)
    assert result.code == 1, result.err
    doc = json.loads(result.out)
    assert doc["command_exit_code"] == 0
    assert doc["recorded"] is False
    assert "exec_ended not written to the ledger" in result.err
    assert _run_log(git_repo)[-1]["event"] == "exec_ended"  # run.ndjson still has it


# -- Adversarial review: exec and verify must read the repository's own task directory.
# A stray ``.git`` directory in a subdirectory, or ``docs/`` / ``docs/working/``
# replaced by a symbolic link, used to make exec read (and run on) a Plan Package
# and record from somewhere else.


TASK = "TASK-0001"


def _marker_command(marker: Path) -> list[str]:
    return [sys.executable, "-c", f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"]


def test_exec_below_a_stray_git_directory_does_not_use_a_forged_package(
    git_repo: Path, tmp_path: Path, run_cli: Any
) -> None:
    # The repository's own task has no approval; a copy with a record sits in
    # sub/, which holds an empty .git directory (git ignores it, the walk did not).
    taskkit.make_task(git_repo)
    taskkit.approve_task(git_repo)
    forged = git_repo / "sub" / "docs" / "working" / TASK
    shutil.copytree(taskkit.task_dir(git_repo), forged)
    (taskkit.task_dir(git_repo) / "approvals" / "c3.json").unlink()
    (git_repo / "sub" / ".git").mkdir()
    marker = tmp_path / "ran"
    result = run_cli(git_repo / "sub", "exec", TASK, "--", *_marker_command(marker))
    assert result.code == 1
    assert "EXEC_REPO_ROOT_MISMATCH" in result.err
    assert not marker.exists()


def test_exec_at_the_root_still_runs(git_repo: Path, tmp_path: Path, run_cli: Any) -> None:
    taskkit.make_task(git_repo)
    taskkit.approve_task(git_repo)
    marker = tmp_path / "ran"
    assert run_cli(git_repo, "exec", TASK, "--no-isolation", "--", *_marker_command(marker), tty=True).code == 0
    assert marker.exists()


@pytest.mark.parametrize("linked", ["docs", "docs/working"])
def test_task_directory_under_a_symlink_is_rejected(
    git_repo: Path, tmp_path: Path, run_cli: Any, linked: str
) -> None:
    taskkit.make_task(git_repo)
    head = taskkit.approve_task(git_repo)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(git_repo / linked), elsewhere)
    (git_repo / linked).symlink_to(elsewhere, target_is_directory=True)
    result = verify_task(git_repo, TASK, expected_sha=head)
    assert result.verdict == "REJECTED"
    assert result.codes == ("TASK_DIR_INVALID",)
    assert run_cli(git_repo, "c3", "verify", TASK).code == 1
    marker = tmp_path / "ran"
    assert run_cli(git_repo, "exec", TASK, "--", *_marker_command(marker)).code == 1
    assert not marker.exists()
