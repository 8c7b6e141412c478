"""Through the real Claude Code hook and a real repository with an approved task: a
command that moves a ref is a write of git's directory, a command holding a control
character is unclassified, and the listing forms stay allowed. Command strings are
only handed to the hook, never run."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.hooks import claude_payload, hook_env, run_hook
from support.taskkit import PLAN_MD, approve_task, make_task

PLAN = PLAN_MD.replace("- `src/app.py`\n- `tests/test_app.py`\n", "- `**`\n")
"""A scope holding every path: only the guards can deny."""


@pytest.fixture
def repo(git_repo: Path) -> Path:
    assert PLAN != PLAN_MD
    make_task(git_repo, "TASK-0001", plan_md=PLAN)
    approve_task(git_repo, "TASK-0001")
    return git_repo


def _codes(repo: Path, command: str) -> list[str]:
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": command})
    result = run_hook(repo, "claude", payload, hook_env("TASK-0001", CDPATH=""))
    assert "Traceback" not in result.err
    assert (result.code == 0) == (result.err == ""), result.err
    return [
        line.split(":")[0].lstrip("- ") for line in result.err.splitlines() if line.startswith("- ")
    ]


@pytest.mark.parametrize(
    "command",
    [
        "git branch -f main HEAD~1",
        "git branch -M topic main",
        "git fetch . +topic:main",
        "git push . +HEAD~1:main",
        "git tag -f v1",
        "git update-ref refs/heads/main HEAD",
        "git reset --soft HEAD~1",
        "git -C src branch -D main",
    ],
)
def test_a_ref_moving_command_is_denied_as_a_write_of_git(repo: Path, command: str) -> None:
    assert "HOOK_GIT_INTERNALS" in _codes(repo, command)


@pytest.mark.parametrize(
    "command",
    ["ls\r#; echo x > CLAUDE.md", "ls\x0b#; tee .claude/settings.json", "git status\x0c# x"],
)
def test_a_control_character_is_denied_as_unclassifiable(repo: Path, command: str) -> None:
    assert _codes(repo, command) == ["HOOK_SHELL_UNCLASSIFIABLE"]


@pytest.mark.parametrize("command", ["git branch", "git tag -l", "git symbolic-ref HEAD"])
def test_listing_refs_stays_allowed(repo: Path, command: str) -> None:
    assert _codes(repo, command) == []
