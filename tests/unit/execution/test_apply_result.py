"""Applying an accepted result in real git repositories: the run branch always receives
it; the current branch is fast-forwarded only while it still names the approved commit."""

from __future__ import annotations

from pathlib import Path

from plangate.execution.apply import apply_result, branch_for
from support.repo import commit_all, git

RUN_ID = "TASK-0001-20261203T093100Z-4bf50be3"


def _setup(repo: Path, tmp_path: Path) -> tuple[str, str, str, Path]:
    """(parent, approved, result, state): ``approved`` on main, and a state repository whose
    branch ``result`` holds a commit on top of it."""
    parent = git(repo, "rev-parse", "HEAD")
    (repo / "app.py").write_text("x = 1\n")
    approved = commit_all(repo, "approved")
    state = tmp_path / "state"
    git(tmp_path, "clone", "-q", str(repo), str(state))
    git(state, "config", "user.name", "Run")
    git(state, "config", "user.email", "run@example.invalid")
    git(state, "checkout", "-q", "-b", "result")
    (state / "app.py").write_text("x = 2\n")
    result = commit_all(state, "result")
    return parent, approved, result, state


def test_a_branch_still_at_the_approved_commit_is_fast_forwarded(
    git_repo: Path, tmp_path: Path
) -> None:
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert applied.fast_forwarded
    assert git(git_repo, "rev-parse", "HEAD") == result
    assert git(git_repo, "rev-parse", branch_for(RUN_ID)) == result


def test_a_branch_moved_back_from_the_approved_commit_is_left_alone(
    git_repo: Path, tmp_path: Path
) -> None:
    # Moved to the approved commit's parent: git itself would fast-forward it to the
    # result, so only the approved-commit rule keeps it where it is.
    parent, approved, result, state = _setup(git_repo, tmp_path)
    git(git_repo, "reset", "-q", "--hard", parent)
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert not applied.fast_forwarded
    assert applied.note == "the current branch moved away from the approved commit"
    assert git(git_repo, "rev-parse", "HEAD") == parent
    assert git(git_repo, "rev-parse", branch_for(RUN_ID)) == result


def test_a_detached_head_at_the_approved_commit_is_left_alone(
    git_repo: Path, tmp_path: Path
) -> None:
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    git(git_repo, "checkout", "-q", "--detach", approved)
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert not applied.fast_forwarded
    assert git(git_repo, "rev-parse", "HEAD") == approved
    assert git(git_repo, "rev-parse", "main") == approved
