"""A working directory that was deleted, or under a directory that cannot be searched, is a
clear rejection with a reason code for every command: never a traceback, never exit 5."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import RunCli
from support.privileges import SRC, interpreter, run_plangate

COMMANDS = [
    ("status",),
    ("c3", "verify", "TASK-0001"),
    ("init", "TASK-0001"),
    ("package", "TASK-0001"),
    ("review", "mark", "TASK-0001", "--c1", "PASS"),
    ("exec", "TASK-0001", "--", "true"),
    ("ledger", "verify"),
    ("loopspec", "TASK-0001", "--actors", "agent,qa"),
    ("surfaces",),
    ("delivery", "assess", "TASK-0001"),
    ("hooks", "install", "--claude"),
]


def _no_crash(proc: subprocess.CompletedProcess[str], code: str) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "INTERNAL_ERROR" not in proc.stderr, proc.stderr
    assert proc.returncode in (1, 2), (proc.returncode, proc.stderr)
    if proc.returncode == 1:
        assert code in proc.stderr, proc.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="a deleted working directory is Linux-checked")
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_deleted_working_directory_is_a_reason(git_repo: Path, argv: tuple[str, ...]) -> None:
    gone = git_repo / "gone"
    gone.mkdir()
    env = dict(os.environ, PYTHONPATH=str(SRC))
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    proc = subprocess.run(
        ["sh", "-c", script, "sh", str(gone), interpreter(), "-m", "plangate", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    _no_crash(proc, "WORKING_DIRECTORY_UNAVAILABLE")
    assert proc.returncode == 1


@pytest.mark.skipif(sys.platform != "linux", reason="permission semantics checked on Linux")
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_an_unsearchable_ancestor_is_a_reason(tmp_path: Path, argv: tuple[str, ...]) -> None:
    ancestor = tmp_path / "locked"
    sub = ancestor / "repo" / "sub"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ancestor / "repo")], check=True)
    ancestor.chmod(0o000)
    try:
        proc = run_plangate(sub, *argv)
    finally:
        ancestor.chmod(0o755)
    _no_crash(proc, "WORKING_DIRECTORY_UNAVAILABLE")
    assert proc.returncode == 1


@pytest.mark.skipif(sys.platform != "linux", reason="a deleted working directory is Linux-checked")
def test_the_git_hook_blocks_in_a_deleted_working_directory(git_repo: Path) -> None:
    gone = git_repo / "gone"
    gone.mkdir()
    env = dict(os.environ, PYTHONPATH=str(SRC))
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    proc = subprocess.run(
        [
            "sh",
            "-c",
            script,
            "sh",
            str(gone),
            interpreter(),
            "-m",
            "plangate.hooks",
            "git-pre-commit",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "WORKING_DIRECTORY_UNAVAILABLE" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_git_entry_that_cannot_be_looked_up_makes_the_root_undecidable(
    git_repo: Path,
) -> None:
    """A ``.git`` that cannot be looked up is not "no repository here": no outer root is guessed."""
    inner = git_repo / "inner"
    inner.mkdir()
    (inner / ".git").symlink_to(inner / ".git")  # a link loop: stat fails with ELOOP
    proc = run_plangate(inner, "status")
    _no_crash(proc, "REPO_ROOT_UNDECIDABLE")
    assert proc.returncode == 1


@pytest.mark.parametrize("where", ["README.md", "nonexistent"])
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_directory_option_that_is_no_directory_is_a_reason(
    run_cli: RunCli, git_repo: Path, where: str, argv: tuple[str, ...]
) -> None:
    res = run_cli(git_repo, "-C", where, *argv)
    assert res.code == 1, res.err
    assert "WORKING_DIRECTORY_UNAVAILABLE" in res.err
    assert not (git_repo / "docs").exists()
