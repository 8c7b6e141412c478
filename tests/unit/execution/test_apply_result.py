"""Applying an accepted result in real git repositories: the run branch always receives
it; the current branch is fast-forwarded only while it still names the approved commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
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


def test_the_result_ref_is_fetched_whatever_the_run_repository_has_checked_out(
    git_repo: Path, tmp_path: Path
) -> None:
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    git(state, "checkout", "-q", "main")  # the run's repository now names another commit
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert applied.fast_forwarded
    assert git(git_repo, "rev-parse", branch_for(RUN_ID)) == result


def test_a_run_brings_no_tag_and_leaves_no_fetch_head(git_repo: Path, tmp_path: Path) -> None:
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    git(state, "tag", "v9.9.9", result)
    git(state, "tag", "-a", "-m", "annotated", "release", result)
    apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert git(git_repo, "tag", "--list") == ""
    assert not (git_repo / ".git" / "FETCH_HEAD").exists()


def test_a_run_repository_git_cannot_fetch_from_fails_closed(
    git_repo: Path, tmp_path: Path
) -> None:
    _parent, approved, result, _state = _setup(git_repo, tmp_path)
    with pytest.raises(EnvironmentFailure) as caught:
        apply_result(git_repo, tmp_path / "missing", result, approved, RUN_ID, succeeded=True)
    assert caught.value.code == "EXEC_APPLY_FAILED"
    assert f"could not be written to {branch_for(RUN_ID)}" in caught.value.message
    assert git(git_repo, "rev-parse", "HEAD") == approved


def test_a_ref_that_names_another_commit_than_the_result_fails_closed(
    git_repo: Path, tmp_path: Path
) -> None:
    parent, approved, result, state = _setup(git_repo, tmp_path)
    with pytest.raises(EnvironmentFailure) as caught:
        apply_result(git_repo, state / ".git", parent, approved, RUN_ID, succeeded=True)
    assert caught.value.code == "EXEC_APPLY_FAILED"
    assert caught.value.message == (
        f"{branch_for(RUN_ID)} names {result[:12]}, not the result {parent[:12]}"
    )
    assert git(git_repo, "rev-parse", "HEAD") == approved


def test_a_command_that_did_not_succeed_moves_no_branch_but_its_own(
    git_repo: Path, tmp_path: Path
) -> None:
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=False)
    assert applied == (
        branch_for(RUN_ID),
        False,
        "the command did not succeed: the current branch is left where it was",
    )
    assert git(git_repo, "rev-parse", "HEAD") == approved
    assert git(git_repo, "rev-parse", branch_for(RUN_ID)) == result


def test_an_untracked_file_does_not_stop_the_fast_forward(
    git_repo: Path, tmp_path: Path
) -> None:
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    (git_repo / "notes.txt").write_text("mine\n")
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert applied.fast_forwarded
    assert applied.note == "main fast-forwarded"
    assert git(git_repo, "rev-parse", "HEAD") == result
    assert (git_repo / "notes.txt").read_text() == "mine\n"


def test_a_changed_tracked_file_stops_the_fast_forward_even_one_the_result_leaves_alone(
    git_repo: Path, tmp_path: Path
) -> None:
    # README.md is not in the result, so git itself would fast-forward over the change.
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    (git_repo / "README.md").write_text("# edited by a person\n")
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert applied == (
        branch_for(RUN_ID),
        False,
        "tracked files of the working tree have changes",
    )
    assert git(git_repo, "rev-parse", "HEAD") == approved
    assert (git_repo / "README.md").read_text() == "# edited by a person\n"


def test_a_result_that_does_not_descend_from_the_approved_commit_is_never_merged(
    git_repo: Path, tmp_path: Path
) -> None:
    parent, approved, _result, state = _setup(git_repo, tmp_path)
    git(state, "reset", "-q", "--hard", parent)
    (state / "other.py").write_text("y = 1\n")
    beside = commit_all(state, "beside the approved commit")
    applied = apply_result(git_repo, state / ".git", beside, approved, RUN_ID, succeeded=True)
    assert not applied.fast_forwarded
    assert applied.note.startswith("fast-forward refused: ")
    assert git(git_repo, "rev-parse", "HEAD") == approved
    assert git(git_repo, "rev-parse", branch_for(RUN_ID)) == beside


def test_a_moved_submodule_stops_the_fast_forward_even_when_git_is_told_to_hide_it(
    git_repo: Path, tmp_path: Path
) -> None:
    # `.gitmodules` says `ignore = all`, so a plain `git status` shows nothing; the
    # submodule's checkout still differs from what the approved commit records.
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    git(sub, "config", "user.name", "Sub")
    git(sub, "config", "user.email", "sub@example.invalid")
    (sub / "lib.py").write_text("v = 1\n")
    commit_all(sub, "sub")
    git(git_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "lib")
    git(git_repo, "config", "-f", ".gitmodules", "submodule.lib.ignore", "all")
    commit_all(git_repo, "with a submodule")
    _parent, approved, result, state = _setup(git_repo, tmp_path)
    git(git_repo / "lib", "config", "user.name", "Sub")
    git(git_repo / "lib", "config", "user.email", "sub@example.invalid")
    (git_repo / "lib" / "lib.py").write_text("v = 2\n")
    commit_all(git_repo / "lib", "moved inside the submodule")
    assert git(git_repo, "status", "--porcelain") == ""
    applied = apply_result(git_repo, state / ".git", result, approved, RUN_ID, succeeded=True)
    assert applied.note == "tracked files of the working tree have changes"
    assert git(git_repo, "rev-parse", "HEAD") == approved
