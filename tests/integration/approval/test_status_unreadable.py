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
