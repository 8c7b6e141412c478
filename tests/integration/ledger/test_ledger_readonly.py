"""Reading the ledger never writes: 'ledger verify' and 'ledger log' leave the file and its
directory exactly as they were, work in a read-only directory for an unprivileged user, and
still read correctly while a writer holds the database open."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.ledger import open_ledger
from support.cli import RunCli

SRC = Path(__file__).resolve().parents[3] / "src"


def _fill(repo: Path, count: int = 25) -> None:
    with open_ledger(repo, {}) as ledger:
        for i in range(count):
            ledger.append("c3_issue", "TASK-0001", {"i": i})


def _state(directory: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(directory.iterdir())
    }


def test_verify_and_log_leave_no_trace(git_repo: Path, run_cli: RunCli) -> None:
    _fill(git_repo)
    plangate_dir = git_repo / ".plangate"
    before = _state(plangate_dir)
    assert not (plangate_dir / "ledger.sqlite3-wal").exists()
    for argv in (("ledger", "verify"), ("ledger", "log", "--json"), ("ledger", "verify", "--json")):
        assert run_cli(git_repo, *argv).code == 0
    assert _state(plangate_dir) == before  # no -wal/-shm created, nothing rewritten


def test_verify_reads_correctly_while_a_writer_holds_the_ledger_open(
    git_repo: Path, run_cli: RunCli
) -> None:
    _fill(git_repo, 3)
    with open_ledger(git_repo, {}) as writer:
        writer.append("c3_issue", "TASK-0001", {"i": 99})  # committed to the log, not checkpointed
        assert (git_repo / ".plangate" / "ledger.sqlite3-wal").exists()
        res = run_cli(git_repo, "ledger", "verify", "--json")
        assert res.code == 0, res.err
        assert '"entries": 4' in res.out


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory an unprivileged user can reach (pytest's own is private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="plangate-ro-", dir="/tmp"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        for path in [directory, *directory.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(directory)


def _python_for_nobody() -> str:
    """An interpreter the unprivileged user may run (this one may live in root's home)."""
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        probe = subprocess.run(
            [
                "runuser",
                "-u",
                "nobody",
                "--",
                candidate,
                "-c",
                "import sys; assert sys.version_info >= (3, 11)",
            ],
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return candidate
    pytest.skip("no Python 3.11+ interpreter the unprivileged user can run")
    raise AssertionError  # unreachable


def test_verify_works_in_a_read_only_directory_for_an_unprivileged_user(
    shared_dir: Path,
) -> None:
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("needs root to run the check as an unprivileged user")
    python = _python_for_nobody()
    repo = shared_dir / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    _fill(repo)
    plangate_dir = repo / ".plangate"
    (plangate_dir / "ledger.sqlite3").chmod(0o444)
    plangate_dir.chmod(0o555)
    before = _state(plangate_dir)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(SRC), "HOME": str(shared_dir)}
    for argv in (["ledger", "verify", "--json"], ["ledger", "log"]):
        proc = subprocess.run(
            ["runuser", "-u", "nobody", "--", python, "-m", "plangate", *argv],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    assert (
        '"verdict": "INTACT"'
        in subprocess.run(
            [
                "runuser",
                "-u",
                "nobody",
                "--",
                python,
                "-m",
                "plangate",
                "ledger",
                "verify",
                "--json",
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    )
    assert _state(plangate_dir) == before


def test_a_read_only_ledger_refuses_appends_clearly(git_repo: Path) -> None:
    from plangate.ledger import LedgerError

    _fill(git_repo, 1)
    with open_ledger(git_repo, {}, create=False) as reader, pytest.raises(LedgerError) as info:
        reader.append("c3_issue", "TASK-0001", {"i": 2})
    assert info.value.code == "LEDGER_READ_ONLY"
    conn = sqlite3.connect(git_repo / ".plangate" / "ledger.sqlite3")
    assert conn.execute("SELECT count(*) FROM ledger_entries").fetchone() == (1,)
    conn.close()
