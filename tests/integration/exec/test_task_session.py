"""Task sessions in real repositories: ``plangate task start|stop|show``, the hooks of
every host and git using the session's task, the baseline of pre-existing files,
expiry, and a killed exec run that no longer lends its task."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from plangate.clock import utc_now
from plangate.execution import session as sessions
from plangate.git import scrubbed_env
from plangate.hooks.install import apply
from support.cli import run_cli_in
from support.hooks import (
    approved_repo,
    claude_payload,
    cursor_payload,
    hook_env,
    init_ledger,
    run_hook,
)
from support.repo import commit_all, git
from support.taskkit import make_task


def human_env() -> dict[str, str]:
    """A person's terminal: no agent or automation marker."""
    markers = ("CLAUDE", "CURSOR", "CODEX", "PLANGATE_TASK", "CI", "GITHUB_ACTIONS")
    return {k: v for k, v in os.environ.items() if not k.startswith(markers)}


@pytest.fixture
def repo(git_repo: Path) -> Path:
    repo = approved_repo(git_repo)
    init_ledger(repo)
    return repo


def _write(repo: Path, path: str) -> tuple[int, str]:
    result = run_hook(
        repo,
        "claude",
        claude_payload("PreToolUse", repo, "Write", {"file_path": path}),
        hook_env(None),
    )
    return result.code, result.err


def _stop_hook(repo: Path) -> tuple[int, str]:
    payload = claude_payload("Stop", repo, stop_hook_active=False)
    result = run_hook(repo, "claude", payload, hook_env(None))
    return result.code, result.err


def test_without_a_session_an_ide_agent_has_no_task(repo: Path) -> None:
    code, err = _write(repo, "src/app.py")
    assert code == 2 and "HOOK_NO_ACTIVE_TASK" in err


def test_a_started_session_is_the_task_of_every_host(repo: Path) -> None:
    started = run_cli_in(repo, "task", "start", "TASK-0001", env=human_env())
    assert started.code == 0, started.err + started.out
    assert "TASK-0001 is the active task" in started.out
    assert "src/app.py" in started.out  # the scope is shown
    assert _write(repo, "src/app.py")[0] == 0
    code, err = _write(repo, "lib/other.py")
    assert code == 2 and "HOOK_OUTSIDE_SCOPE" in err
    cursor = run_hook(
        repo,
        "cursor",
        cursor_payload("beforeShellExecution", repo, command="touch src/app.py", cwd=str(repo)),
        hook_env(None),
    )
    assert json.loads(cursor.out) == {"permission": "allow"}
    stopped = run_cli_in(repo, "task", "stop", env=human_env())
    assert stopped.code == 0, stopped.err
    code, err = _write(repo, "src/app.py")
    assert code == 2 and "HOOK_NO_ACTIVE_TASK" in err


def test_start_refuses_a_task_whose_approval_does_not_hold(repo: Path) -> None:
    (repo / "README.md").write_text("moved on\n")
    commit_all(repo, "HEAD moves outside the task's scope")
    result = run_cli_in(repo, "task", "start", "TASK-0001", env=human_env())
    assert result.code == 1
    assert "TASK_APPROVAL_NOT_HELD" in result.err + result.out
    assert _write(repo, "src/app.py")[0] == 2


def test_start_refuses_a_task_without_an_approval(repo: Path) -> None:
    make_task(repo, "TASK-0002")
    result = run_cli_in(repo, "task", "start", "TASK-0002", env=human_env())
    assert result.code == 1
    assert "TASK_APPROVAL_NOT_HELD" in result.err + result.out


@pytest.mark.parametrize("marker", ["CLAUDECODE", "CURSOR_AGENT", "CODEX_SANDBOX", "PLANGATE_TASK"])
def test_start_and_stop_refuse_under_agent_markers(repo: Path, marker: str) -> None:
    env = human_env() | {marker: "1"}
    result = run_cli_in(repo, "task", "start", "TASK-0001", env=env)
    assert result.code == 3 and "TASK_AGENT_ENVIRONMENT" in result.err + result.out
    assert _write(repo, "src/app.py")[0] == 2
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=human_env()).code == 0
    stop = run_cli_in(repo, "task", "stop", env=env)
    assert stop.code == 3
    assert _write(repo, "src/app.py")[0] == 0  # still active


def test_a_second_start_is_refused_while_one_is_active(repo: Path) -> None:
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=human_env()).code == 0
    again = run_cli_in(repo, "task", "start", "TASK-0001", env=human_env())
    assert again.code == 1 and "TASK_ALREADY_ACTIVE" in again.err + again.out


@pytest.mark.parametrize("hours", ["0", "25", "-1"])
def test_a_session_lasts_one_to_twenty_four_hours(repo: Path, hours: str) -> None:
    result = run_cli_in(repo, "task", "start", "TASK-0001", "--hours", hours, env=human_env())
    assert result.code == 2 and "TASK_BAD_DURATION" in result.err + result.out


def test_an_expired_session_is_no_longer_active(repo: Path) -> None:
    sessions.start(repo, human_env(), "TASK-0001", hours=1, now=utc_now() - timedelta(hours=2))
    code, err = _write(repo, "src/app.py")
    assert code == 2 and "HOOK_NO_ACTIVE_TASK" in err
    shown = run_cli_in(repo, "task", "show", "--json", env=human_env())
    view = json.loads(shown.out)
    assert view["expired"] is True and view["active"] is False
    # An expired session no longer blocks a new start.
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=human_env()).code == 0


def test_show_reports_the_scope_and_whether_the_approval_holds(repo: Path) -> None:
    assert "no task session" in run_cli_in(repo, "task", "show", env=human_env()).out
    run_cli_in(repo, "task", "start", "TASK-0001", env=human_env())
    view = json.loads(run_cli_in(repo, "task", "show", "--json", env=human_env()).out)
    assert view["active"] is True and view["approval_holds"] is True
    assert "src/app.py" in view["allowed_paths"]


def test_pre_existing_files_do_not_block_the_effect_checks(repo: Path) -> None:
    (repo / "notes.txt").write_text("my own notes\n")
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=human_env()).code == 0
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    assert _stop_hook(repo)[0] == 0
    # A pre-existing file changed after the start is a change of the task again.
    (repo / "notes.txt").write_text("changed by the agent\n")
    code, err = _stop_hook(repo)
    assert code == 2 and "notes.txt" in err


def test_a_new_untracked_file_still_blocks(repo: Path) -> None:
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=human_env()).code == 0
    (repo / "stray.txt").write_text("x\n")
    code, err = _stop_hook(repo)
    assert code == 2 and "stray.txt" in err


def test_a_baseline_that_does_not_match_the_ledger_counts_as_empty(repo: Path) -> None:
    (repo / "notes.txt").write_text("my own notes\n")
    started, _facts, _count = sessions.start(repo, human_env(), "TASK-0001")
    baseline = repo / started.baseline
    document = json.loads(baseline.read_text())
    document["files"]["extra.txt"] = "missing"
    baseline.write_text(json.dumps(document))
    code, err = _stop_hook(repo)
    assert code == 2 and "notes.txt" in err


def test_the_baseline_lives_where_no_agent_may_write(repo: Path) -> None:
    started, _facts, _count = sessions.start(repo, human_env(), "TASK-0001")
    code, err = _write(repo, started.baseline)
    assert code == 2 and "HOOK_PLANGATE_STATE" in err


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = scrubbed_env() | {
        "GIT_AUTHOR_NAME": "Human",
        "GIT_AUTHOR_EMAIL": "h@example.invalid",
        "GIT_COMMITTER_NAME": "Human",
        "GIT_COMMITTER_EMAIL": "h@example.invalid",
    }
    env.pop("PLANGATE_TASK", None)
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)


def test_a_human_commits_in_scope_work_of_the_session_without_any_variable(repo: Path) -> None:
    apply(repo, ["git"], install=True)
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    git(repo, "add", "src/app.py")
    refused = _git(repo, "commit", "-q", "-m", "before the session")
    assert refused.returncode == 1
    text = refused.stderr.decode()
    assert "HOOK_NO_ACTIVE_TASK" in text
    # The message speaks to the person at the terminal.
    assert "PlanGate stopped this commit" in text
    assert "plangate task start TASK-XXXX" in text and ".plangate/policy.toml" in text
    assert "--no-verify" not in text
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=human_env()).code == 0
    ok = _git(repo, "commit", "-q", "-m", "in scope")
    assert ok.returncode == 0, ok.stderr
    (repo / "lib.py").write_text("x\n")
    git(repo, "add", "lib.py")
    outside = _git(repo, "commit", "-q", "-m", "outside")
    assert outside.returncode == 1 and b"HOOK_OUTSIDE_SCOPE" in outside.stderr


def _open_exec_run(repo: Path) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(repo, {}) as ledger:
        ledger.append("exec_started", "TASK-0001", {"task_id": "TASK-0001", "run_id": "r1"})


def test_a_killed_exec_run_lends_no_task(repo: Path) -> None:
    _open_exec_run(repo)  # exec_started, never ended, and no process holds the lock
    code, err = _write(repo, "src/app.py")
    assert code == 2 and "HOOK_NO_ACTIVE_TASK" in err


def test_a_live_exec_run_lends_its_task(repo: Path) -> None:
    _open_exec_run(repo)
    lock = repo / ".plangate" / "locks" / "TASK-0001.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # what a running exec holds
        assert _write(repo, "src/app.py")[0] == 0
    finally:
        os.close(fd)
    assert _write(repo, "src/app.py")[0] == 2


def test_plangate_state_that_git_ignores_as_a_directory_does_not_block(repo: Path) -> None:
    # setup ignores whole directories of PlanGate's runtime state (the session, locks);
    # git reports an ignored directory as one 'dir/' entry unless asked for its files.
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("/.plangate/session/\n/.plangate/locks/\n")
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=human_env()).code == 0
    assert any((repo / ".plangate" / "session").iterdir())
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    code, err = _stop_hook(repo)
    assert code == 0, err
    # A file an agent plants beside them in an ignored directory is still seen.
    (repo / ".plangate" / "locks").mkdir(exist_ok=True)
    (repo / ".claude").mkdir(exist_ok=True)
    exclude.write_text("/.plangate/session/\n/.plangate/locks/\n/.claude/x/\n")
    (repo / ".claude" / "x").mkdir()
    (repo / ".claude" / "x" / "planted.md").write_text("x\n")
    code, err = _stop_hook(repo)
    assert code == 2 and ".claude/x/planted.md" in err
