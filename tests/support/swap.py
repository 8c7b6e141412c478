"""Deterministic concurrent swappers: hold the ledger's write lock, let a command reach it, swap.

A command that writes the ledger waits for the SQLite write lock. Holding that
lock from the test (``BEGIN IMMEDIATE`` on the same database) stops the command
at its ledger write; :func:`wait_until_open` returns once the command has the
ledger file open (so it has already read and judged its inputs), the test then
changes the file system, and releasing the lock lets the command continue.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from plangate.layout import SQLITE_LEDGER_RELPATH
from support.privileges import SRC, interpreter


def ledger_path(repo: Path) -> Path:
    """The repository's default SQLite ledger."""
    return repo / SQLITE_LEDGER_RELPATH


def create_ledger(repo: Path) -> Path:
    """Make sure the default ledger exists (created through the ledger's own API)."""
    from plangate.ledger import open_ledger

    with open_ledger(repo, {}):
        pass
    return ledger_path(repo)


@contextmanager
def ledger_write_lock(repo: Path) -> Iterator[None]:
    """Hold the SQLite ledger's write lock for the duration of the block."""
    conn = sqlite3.connect(str(create_ledger(repo)), isolation_level=None, timeout=10)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def spawn_plangate(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start ``python -m plangate ARGS`` in ``cwd`` (this tree's sources)."""
    child_env = dict(os.environ if env is None else env)
    child_env["PYTHONPATH"] = str(SRC)
    return subprocess.Popen(
        [interpreter(), "-m", "plangate", *args],
        cwd=cwd,
        env=child_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _has_open(pid: int, target: Path) -> bool:
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except OSError:
        return False
    wanted = os.path.realpath(target)
    for entry in entries:
        try:
            if os.readlink(entry) == wanted:
                return True
        except OSError:
            continue
    return False


def wait_until_open(proc: subprocess.Popen[str], target: Path, timeout: float = 60.0) -> None:
    """Return once ``proc`` holds ``target`` open; fail if it exits or the timeout passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the command ended before the ledger write: {err}{out}")
        if _has_open(proc.pid, target):
            return
        time.sleep(0.01)
    proc.kill()
    raise AssertionError("the command never reached the ledger")


def finish(proc: subprocess.Popen[str], timeout: float = 120.0) -> tuple[int, str, str]:
    """Wait for ``proc``; its exit code, stdout and stderr."""
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def tree_files(directory: Path) -> list[str]:
    """Every path below ``directory`` (relative, sorted), links not followed."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))
