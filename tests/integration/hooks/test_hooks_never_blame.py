"""Files PlanGate never blames, in a repository set up as a person does (``plangate setup``
at a terminal): its own state and Claude Code's local settings never make a PostToolUse
or Stop call exit 2, while a tool call writing them, or a commit carrying them, is still
refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.hooks import (
    claude_payload,
    claude_post_read,
    claude_stop,
    hook_env,
    run_hook,
)
from support.repo import git, git_as_person
from support.taskkit import approve_task, make_task
from support.terminal import adopt_at_terminal, person_env

# What Claude Code writes when a person clicks "Yes, and don't ask again".
DONT_ASK_AGAIN = {"permissions": {"allow": ["Bash(python -m pytest:*)"], "deny": []}}


@pytest.fixture
def adopted(git_repo: Path) -> Path:
    """``plangate setup --claude --git`` typed at a terminal, and the adoption committed."""
    return adopt_at_terminal(git_repo)


def _real_hook(repo: Path, payload: bytes) -> subprocess.CompletedProcess[bytes]:
    """The installed ``plangate-hook claude`` program, as Claude Code runs it."""
    env = {k: v for k, v in person_env().items() if k != "PLANGATE_TASK"}
    return subprocess.run(
        [sys.executable, "-m", "plangate.hooks", "claude"], cwd=repo, input=payload,
        capture_output=True, env=env, check=False,
    )


def test_local_settings_after_dont_ask_again_do_not_block_a_read_without_a_task(
    adopted: Path,
) -> None:
    settings = adopted / ".claude" / "settings.local.json"
    settings.write_text(json.dumps(DONT_ASK_AGAIN, indent=2) + "\n")
    code, err = claude_post_read(adopted)
    assert code == 0, err
    assert claude_stop(adopted)[0] == 0
    payload = claude_payload("PostToolUse", adopted, "Read",
                             {"file_path": str(adopted / "README.md")})
    real = _real_hook(adopted, payload)
    assert real.returncode == 0, real.stderr
    # setup git-ignored it: it cannot slip into a commit by accident...
    assert git(adopted, "status", "--porcelain") == ""
    # ...and forced in, the commit is judged like any path and refused.
    git(adopted, "add", "-f", ".claude/settings.local.json")
    forced = git_as_person(adopted, "commit", "-q", "-m", "my settings")
    assert forced.returncode == 1 and b"HOOK_CONFIG_FILE" in forced.stderr


def test_an_agent_still_may_not_write_the_local_settings(adopted: Path) -> None:
    payload = claude_payload("PreToolUse", adopted, "Write", {
        "file_path": str(adopted / ".claude" / "settings.local.json"),
        "content": json.dumps({"permissions": {"allow": ["Bash(*)"]}}),
    })
    result = run_hook(adopted, "claude", payload, hook_env(None))
    assert result.code == 2 and "HOOK_CONFIG_FILE" in result.err


def test_after_task_start_post_tool_use_and_stop_pass_with_the_session_on_disk(
    adopted: Path,
) -> None:
    make_task(adopted)
    approve_task(adopted)
    approval = git_as_person(adopted, "add", "docs/working/TASK-0001/approvals")
    assert approval.returncode == 0
    committed = git_as_person(adopted, "commit", "-q", "-m", "Approve TASK-0001")
    assert committed.returncode == 0, committed.stderr  # no --no-verify
    started = run_cli_in(adopted, "task", "start", "TASK-0001", "--sandbox", "none",
                         env=person_env())
    assert started.code == 0, started.err
    assert "!! .plangate/session/" in git(adopted, "status", "--porcelain", "--ignored")
    assert claude_post_read(adopted)[0] == 0
    assert claude_stop(adopted)[0] == 0
    # Claude Code writes its local settings while the session runs: still nobody's change.
    (adopted / ".claude" / "settings.local.json").write_text(json.dumps(DONT_ASK_AGAIN))
    assert claude_post_read(adopted) == (0, "")
    # An agent forging the session through a tool call is denied before it runs.
    forge = claude_payload("PreToolUse", adopted, "Write", {
        "file_path": str(adopted / ".plangate" / "session" / "claude.json"), "content": "{}",
    })
    denied = run_hook(adopted, "claude", forge, hook_env(None))
    assert denied.code == 2 and "HOOK_PLANGATE_STATE" in denied.err


@pytest.mark.parametrize(
    "written",
    [
        ".plangate/locks/TASK-0001.lock",
        ".plangate/eval-plan-0123abcd.lock",
        ".plangate/doctor-canary",
        "docs/working/TASK-0001/run.ndjson",
        ".plangate/runs/TASK-0001-20261201T090000Z-1a2b3c4d/tree/src/app.py",
    ],
)
def test_files_plangate_writes_itself_do_not_block(adopted: Path, written: str) -> None:
    path = adopted / written
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    code, err = claude_post_read(adopted)
    assert code == 0, err
    assert claude_stop(adopted)[0] == 0


def test_an_exec_workspace_holding_a_repository_does_not_block(adopted: Path) -> None:
    """git lists a nested repository as one 'dir/' entry, which names no file: the
    listing never descends into the directories PlanGate owns whole."""
    runs = adopted / ".plangate" / "runs"
    tree = runs / "TASK-0001-20261201T090000Z-1a2b3c4d" / "tree"
    tree.mkdir(parents=True)
    (runs / ".gitignore").write_text("# written by plangate: isolated runs are not source\n*\n")
    git(tree, "init", "-q")
    (tree / "a.py").write_text("x = 1\n")
    code, err = claude_post_read(adopted)
    assert code == 0, err


def test_other_changes_are_still_blamed(adopted: Path) -> None:
    """The rule names its files only: a stray file beside them still blocks."""
    (adopted / ".claude" / "settings.local.json").write_text(json.dumps(DONT_ASK_AGAIN))
    (adopted / ".claude" / "agents").mkdir()
    (adopted / ".claude" / "agents" / "helper.md").write_text("be helpful\n")
    code, err = claude_post_read(adopted)
    assert code == 2
    assert ".claude/agents/helper.md" in err and "settings.local.json" not in err


def test_a_delivery_record_is_no_change_in_the_working_tree_or_a_commit(adopted: Path) -> None:
    """delivery writes its chained record into the task directory: neither the agent's
    hooks nor a person's commit of it blame it."""
    make_task(adopted)  # committed through the hooks: planning files only
    record = adopted / "docs" / "working" / "TASK-0001" / "delivery" / "record.jsonl"
    record.parent.mkdir()
    record.write_text('{"kind":"state"}\n')
    assert claude_post_read(adopted) == (0, "")
    git(adopted, "add", "-A")
    committed = git_as_person(adopted, "commit", "-q", "-m", "delivery record")
    assert committed.returncode == 0, committed.stderr
