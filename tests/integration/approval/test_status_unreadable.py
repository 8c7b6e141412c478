"""``plangate status`` with an unreadable ``docs/working/`` says so; it never reports "no tasks"."""

from __future__ import annotations

from pathlib import Path

from support.privileges import run_plangate
from support.taskkit import make_task


def test_an_unreadable_working_directory_is_not_an_empty_one(git_repo: Path) -> None:
    make_task(git_repo)
    working = git_repo / "docs" / "working"
    working.chmod(0o000)
    try:
        proc = run_plangate(git_repo, "status")
    finally:
        working.chmod(0o755)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "PATH_UNAVAILABLE" in proc.stderr
    assert "No tasks" not in proc.stdout


def test_an_unsearchable_task_directory_reads_as_unreadable_files(git_repo: Path) -> None:
    """Each command reports the task's files as unreadable, with the acceptor's codes."""
    make_task(git_repo)
    tdir = git_repo / "docs" / "working" / "TASK-0001"
    tdir.chmod(0o000)
    try:
        status = run_plangate(git_repo, "status")
        verify = run_plangate(git_repo, "c3", "verify", "TASK-0001")
        package = run_plangate(git_repo, "package", "TASK-0001")
    finally:
        tdir.chmod(0o755)
    for proc in (status, verify, package):
        assert "FILESYSTEM_UNAVAILABLE" not in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert "unreadable" in status.stdout
    assert "REJECTED" in status.stdout
    assert verify.returncode == 1
    assert "C3_RECORD_UNREADABLE" in verify.stdout + verify.stderr
    assert package.returncode == 1


def test_an_unsearchable_docs_directory_is_a_task_directory_reason(git_repo: Path) -> None:
    make_task(git_repo)
    docs = git_repo / "docs"
    docs.chmod(0o000)
    try:
        procs = [
            run_plangate(git_repo, "c3", "verify", "TASK-0001"),
            run_plangate(git_repo, "exec", "TASK-0001", "--", "true"),
            run_plangate(git_repo, "package", "TASK-0001"),
        ]
    finally:
        docs.chmod(0o755)
    for proc in procs:
        assert proc.returncode == 1, proc.stderr
        assert "TASK_DIR_INVALID" in proc.stdout + proc.stderr
        assert "FILESYSTEM_UNAVAILABLE" not in proc.stderr
