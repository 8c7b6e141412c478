"""Adversarial review: exec and verify must read the repository's own task directory.

A stray ``.git`` directory in a subdirectory, or ``docs/`` / ``docs/working/``
replaced by a symbolic link, used to make exec read (and run on) a Plan Package
and record from somewhere else.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from plangate.approval.service import verify_task
from support.taskkit import approve_task, make_task, task_dir

TASK = "TASK-0001"


def _marker_command(marker: Path) -> list[str]:
    return [sys.executable, "-c", f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"]


def test_exec_below_a_stray_git_directory_does_not_use_a_forged_package(
    git_repo: Path, tmp_path: Path, run_cli: Any
) -> None:
    # The repository's own task has no approval; a copy with a record sits in
    # sub/, which holds an empty .git directory (git ignores it, the walk did not).
    make_task(git_repo)
    approve_task(git_repo)
    forged = git_repo / "sub" / "docs" / "working" / TASK
    shutil.copytree(task_dir(git_repo), forged)
    (task_dir(git_repo) / "approvals" / "c3.json").unlink()
    (git_repo / "sub" / ".git").mkdir()
    marker = tmp_path / "ran"
    result = run_cli(git_repo / "sub", "exec", TASK, "--", *_marker_command(marker))
    assert result.code == 1
    assert "EXEC_REPO_ROOT_MISMATCH" in result.err
    assert not marker.exists()


def test_exec_at_the_root_still_runs(git_repo: Path, tmp_path: Path, run_cli: Any) -> None:
    make_task(git_repo)
    approve_task(git_repo)
    marker = tmp_path / "ran"
    assert run_cli(git_repo, "exec", TASK, "--", *_marker_command(marker)).code == 0
    assert marker.exists()


@pytest.mark.parametrize("linked", ["docs", "docs/working"])
def test_task_directory_under_a_symlink_is_rejected(
    git_repo: Path, tmp_path: Path, run_cli: Any, linked: str
) -> None:
    make_task(git_repo)
    head = approve_task(git_repo)
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
