"""Adversarial review: ``plangate c3 issue`` never writes through a symlinked ``approvals/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import CliResult, RunCli
from support.repo import git
from support.taskkit import make_task, reviewers_file, task_dir

TASK = "TASK-0001"


def _issue(run_cli: RunCli, repo: Path, tmp_path: Path, *extra: str) -> CliResult:
    rev = reviewers_file(tmp_path / "reviewers.json")
    head = git(repo, "rev-parse", "HEAD")
    return run_cli(
        repo, "c3", "issue", TASK, "--target-sha", head, "--reviewers", str(rev),
        "--decision", "AUTO_APPROVED", "--policy-ref", "p@v1",
        "--issued-at", "2026-12-01T09:00:00Z", *extra,
    )  # fmt: skip


@pytest.mark.parametrize("force", [(), ("--force",)], ids=["plain", "force"])
def test_issue_refuses_a_symlinked_approvals_directory(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, force: tuple[str, ...]
) -> None:
    make_task(git_repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (task_dir(git_repo) / "approvals").symlink_to(outside, target_is_directory=True)
    result = _issue(run_cli, git_repo, tmp_path, *force)
    assert result.code == 1
    assert "C3_RECORD_SYMLINK" in result.out + result.err
    assert list(outside.iterdir()) == []


def test_issue_refuses_a_directory_in_the_record_place(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "approvals" / "c3.json").mkdir(parents=True)
    result = _issue(run_cli, git_repo, tmp_path, "--force")
    assert result.code == 1
    assert "C3_RECORD_NOT_REGULAR" in result.out + result.err


def test_issue_into_a_fresh_task_still_works(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)
    result = _issue(run_cli, git_repo, tmp_path)
    assert result.code == 0, result.err
    assert run_cli(git_repo, "c3", "verify", TASK).code == 0


def test_issue_with_a_file_in_place_of_approvals_is_a_reason_not_a_crash(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "approvals").write_text("not a directory\n")
    result = _issue(run_cli, git_repo, tmp_path, "--force")
    assert result.code == 1, result.err
    assert "C3_RECORD_NOT_REGULAR" in result.out + result.err
    assert (task_dir(git_repo) / "approvals").read_text() == "not a directory\n"
