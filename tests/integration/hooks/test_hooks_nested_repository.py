"""A repository inside the working tree, as the real git lists it: one ``dir/`` entry.

git never descends into a directory holding ``.git``: ``git status -uall`` names it as
``dir/`` and ``git add`` would record it as a gitlink (a commit of another repository),
never its files. The effect checks (PostToolUse, Stop) refuse it as what it is, with
its own code and hint, instead of as a malformed path; one that was there, unchanged,
when a person started the task session is not the agent's doing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.hooks import (
    claude_post_read,
    claude_stop,
)
from support.repo import git, git_as_person
from support.taskkit import approve_task, make_task
from support.terminal import adopt_at_terminal, person_env

PLAN_WITH_VENDOR = """# Plan

## Goal
Add a greeting function to the app.

## Files / Components to Touch
- `src/app.py`
- `vendor/**`

## Testing Strategy
Unit tests for the greeting.

Verification Automation: `python -m pytest -q`
"""


@pytest.fixture
def adopted(git_repo: Path) -> Path:
    return adopt_at_terminal(git_repo)


def _nested(repo: Path, rel: str) -> Path:
    """A real repository at ``rel`` holding one file."""
    where = repo / rel
    where.mkdir(parents=True)
    git(where, "init", "-q")
    (where / "lib.py").write_text("x = 1\n")
    return where


def _approve(repo: Path, plan: str) -> None:
    make_task(repo, plan_md=plan)
    approve_task(repo)
    assert git_as_person(repo, "add", "docs/working/TASK-0001/approvals").returncode == 0
    committed = git_as_person(repo, "commit", "-q", "-m", "Approve TASK-0001")
    assert committed.returncode == 0, committed.stderr


def _start(repo: Path) -> None:
    started = run_cli_in(repo, "task", "start", "TASK-0001", "--sandbox", "none",
                         env=person_env())
    assert started.code == 0, started.err


def test_git_lists_a_nested_repository_as_one_directory_entry(adopted: Path) -> None:
    """The world this rule answers: real git names the directory, never its files."""
    _nested(adopted, "vendor/lib")
    listing = git(adopted, "status", "--porcelain=v1", "--untracked-files=all")
    assert "?? vendor/lib/" in listing.splitlines()
    assert "vendor/lib/lib.py" not in listing


@pytest.mark.parametrize("check", [claude_post_read, claude_stop], ids=["post-tool-use", "stop"])
def test_a_nested_repository_is_refused_as_one(adopted: Path, check: object) -> None:
    _nested(adopted, "vendor/lib")
    code, out = check(adopted)  # type: ignore[operator]
    assert code == 2
    assert "HOOK_NESTED_REPOSITORY: vendor/lib is a repository inside the working tree" in out
    assert "gitlink" in out and "move it out of the working tree" in out
    assert "PATH_EMPTY_SEGMENT" not in out


def test_an_ignored_nested_repository_under_watched_configuration_is_refused(
    adopted: Path,
) -> None:
    """Host configuration directories are listed with what git ignores there too: a
    repository planted under .claude is named, as git lists it ('!! .claude/x/')."""
    (adopted / ".git" / "info" / "exclude").write_text(".claude/plugins/\n")
    _nested(adopted, ".claude/plugins")
    listing = git(adopted, "status", "--porcelain=v1", "-uall", "--ignored=traditional")
    assert "!! .claude/plugins/" in listing.splitlines()
    code, out = claude_post_read(adopted)
    assert code == 2
    assert "HOOK_NESTED_REPOSITORY: .claude/plugins is a repository" in out


def test_a_nested_repository_in_scope_made_during_the_session_is_refused(
    adopted: Path,
) -> None:
    """The plan allows vendor/**; a clone there still cannot be judged file by file."""
    _approve(adopted, PLAN_WITH_VENDOR)
    _start(adopted)
    assert claude_post_read(adopted)[0] == 0
    _nested(adopted, "vendor/lib")
    code, out = claude_post_read(adopted)
    assert code == 2
    assert "HOOK_NESTED_REPOSITORY: vendor/lib" in out


def test_a_nested_repository_there_when_the_session_started_is_not_blamed(
    adopted: Path,
) -> None:
    """What a person had in the tree when they started the task is in the session's
    baseline: the effect checks pass, and a new stray file is still blamed."""
    _approve(adopted, PLAN_WITH_VENDOR)
    _nested(adopted, "third_party/tool")
    _start(adopted)
    assert claude_post_read(adopted) == (0, "")
    assert claude_stop(adopted)[0] == 0
    (adopted / "notes.txt").write_text("stray\n")
    code, out = claude_post_read(adopted)
    assert code == 2 and "notes.txt" in out and "HOOK_NESTED_REPOSITORY" not in out


def test_a_nested_repository_replaced_by_a_file_after_the_start_is_blamed(
    adopted: Path,
) -> None:
    """The baseline holds what the entry was (a directory): a file in its place later is
    a change, judged as one."""
    _approve(adopted, PLAN_WITH_VENDOR)
    lib = _nested(adopted, "third_party/tool")
    _start(adopted)
    shutil.rmtree(lib)
    lib.write_text("now a file\n")
    code, out = claude_post_read(adopted)
    assert code == 2 and "third_party/tool" in out
