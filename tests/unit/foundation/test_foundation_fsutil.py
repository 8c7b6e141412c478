"""Defensive reads, atomic writes and exclusive locks, on a real file system."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure, InputRejected
from plangate.fsutil import FileState, atomic_write, exclusive_lock, read_regular_file
from support.privileges import interpreter, run_unprivileged


def test_reads_a_regular_file(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"hello\r\n")
    read = read_regular_file(target, 100)
    assert read.ok
    assert read.state is FileState.OK
    assert read.data == b"hello\r\n"  # raw bytes, no newline normalisation


def test_empty_file_is_ok_with_empty_bytes(tmp_path: Path) -> None:
    (tmp_path / "e").write_bytes(b"")
    read = read_regular_file(tmp_path / "e", 10)
    assert read.ok
    assert read.data == b""


def test_missing(tmp_path: Path) -> None:
    read = read_regular_file(tmp_path / "nope", 10)
    assert read.state is FileState.MISSING
    assert read.data is None
    assert not read.ok


def test_parent_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert read_regular_file(tmp_path / "file" / "child", 10).state is FileState.MISSING


def test_symlink_is_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("content")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    read = read_regular_file(link, 100)
    assert read.state is FileState.SYMLINK
    assert read.data is None


def test_dangling_symlink(tmp_path: Path) -> None:
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    assert read_regular_file(link, 100).state is FileState.SYMLINK


def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # No writer exists: a blocking open or read would hang this test forever.
    read = read_regular_file(fifo, 100)
    assert read.state is FileState.NOT_REGULAR
    assert "FIFO" in read.detail


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    read = read_regular_file(tmp_path / "d", 100)
    assert read.state is FileState.NOT_REGULAR
    assert "directory" in read.detail


def test_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
        assert read_regular_file(path, 100).state is FileState.NOT_REGULAR


def test_device(tmp_path: Path) -> None:
    read = read_regular_file(Path("/dev/null"), 100)
    assert read.state is FileState.NOT_REGULAR


def test_size_bound_is_inclusive(tmp_path: Path) -> None:
    target = tmp_path / "big"
    target.write_bytes(b"x" * 10)
    assert read_regular_file(target, 10).ok
    read = read_regular_file(target, 9)
    assert read.state is FileState.TOO_LARGE
    assert "10 bytes" in read.detail


def test_unreadable(tmp_path: Path) -> None:
    """A mode-000 file, read without the capabilities that let root ignore the mode."""
    target = tmp_path / "secret"
    target.write_text("x")
    target.chmod(0)
    snippet = (
        "import sys; from plangate.fsutil import read_regular_file; "
        "print(read_regular_file(sys.argv[1], 10).state.value)"
    )
    proc = run_unprivileged([interpreter(), "-c", snippet, str(target)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == FileState.UNREADABLE.value


def test_atomic_write_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "dir" / "f.json"
    atomic_write(target, b"one")
    assert target.read_bytes() == b"one"
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)
    # No temporary files are left behind.
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.json"]


def test_atomic_write_refuses_to_overwrite(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    target = work / "c3.json"
    target.write_bytes(b"original")
    with pytest.raises(InputRejected) as info:
        atomic_write(target, b"replacement", overwrite=False)
    assert info.value.code == "FILE_EXISTS"
    assert target.read_bytes() == b"original"
    assert sorted(p.name for p in work.iterdir()) == ["c3.json"]


def test_atomic_write_without_overwrite_creates_new(tmp_path: Path) -> None:
    target = tmp_path / "w" / "new"
    atomic_write(target, b"data", overwrite=False)
    assert target.read_bytes() == b"data"
    assert sorted(p.name for p in target.parent.iterdir()) == ["new"]


def test_atomic_write_refuses_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    link = tmp_path / "link"
    link.symlink_to(victim)
    for overwrite in (True, False):
        with pytest.raises(InputRejected) as info:
            atomic_write(link, b"evil", overwrite=overwrite)
        assert info.value.code == "FILE_IS_SYMLINK"
    assert victim.read_bytes() == b"keep"


def test_atomic_write_custom_mode(tmp_path: Path) -> None:
    target = tmp_path / "x"
    atomic_write(target, b"", mode=0o600)
    assert target.stat().st_mode & 0o777 == 0o600


def test_lock_is_exclusive(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "TASK-0001.lock"
    with exclusive_lock(lock):
        assert lock.exists()
        with pytest.raises(EnvironmentFailure) as info, exclusive_lock(lock):
            pass
        assert info.value.code == "LOCK_HELD"
    # Released afterwards: it can be taken again.
    with exclusive_lock(lock):
        pass


def test_lock_released_when_the_block_raises(tmp_path: Path) -> None:
    lock = tmp_path / "l.lock"
    with pytest.raises(RuntimeError), exclusive_lock(lock):
        raise RuntimeError("boom")
    with exclusive_lock(lock):
        pass


def test_lock_on_a_symlink_is_a_reason_not_a_traceback(tmp_path: Path) -> None:
    lock = tmp_path / "l.lock"
    lock.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(EnvironmentFailure) as info, exclusive_lock(lock):
        pass
    assert info.value.code == "LOCK_UNAVAILABLE"
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize(("durable", "syncs"), [(True, 2), (False, 0)])
def test_a_durable_write_syncs_the_file_and_its_directory_and_a_throwaway_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool, syncs: int
) -> None:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    target = tmp_path / "scratch" / "info" / "attributes"
    atomic_write(target, b"* -text\n", mode=0o640, durable=durable)
    assert target.read_bytes() == b"* -text\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["attributes"]  # no temporary left
    assert len(calls) == syncs
