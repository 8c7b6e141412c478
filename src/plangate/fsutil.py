"""File-system primitives: defensive reads, atomic writes, exclusive locks.

- :func:`read_regular_file` opens with ``O_NOFOLLOW | O_NONBLOCK`` and checks
  ``fstat`` so that a symlink, FIFO, device or directory in a file's place is
  rejected (a FIFO never blocks the reader) and the size bound holds.
- :func:`atomic_write` writes a temporary file in the same directory, fsyncs
  it, then renames it over the target (or links it, when overwriting is not
  allowed, so that "refuse to overwrite" is race-free), and fsyncs the directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from plangate.errors import EnvironmentFailure, InputRejected


class FileState(StrEnum):
    """What was found where a regular file was expected."""

    OK = "ok"
    MISSING = "missing"
    SYMLINK = "symlink"
    NOT_REGULAR = "not_regular"
    TOO_LARGE = "too_large"
    UNREADABLE = "unreadable"


class FileRead(NamedTuple):
    """Result of one defensive read: the state and, when OK, the exact bytes."""

    state: FileState
    data: bytes | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        """True when the bytes were read."""
        return self.state is FileState.OK


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_regular_file(path: str | os.PathLike[str], max_bytes: int) -> FileRead:
    """Read ``path`` once, only if it is a regular file of at most ``max_bytes``.

    Never follows a symlink at the last component and never blocks on a FIFO.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return FileRead(FileState.MISSING, detail="does not exist")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return FileRead(FileState.SYMLINK, detail="is a symbolic link")
        if exc.errno in (errno.ENOTDIR,):
            return FileRead(FileState.MISSING, detail="a parent is not a directory")
        if exc.errno == errno.EISDIR:
            return FileRead(FileState.NOT_REGULAR, detail="is a directory")
        if exc.errno in (errno.ENXIO,):
            return FileRead(FileState.NOT_REGULAR, detail="is a socket or device")
        return FileRead(FileState.UNREADABLE, detail=exc.strerror or str(exc))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "directory" if stat.S_ISDIR(info.st_mode) else "FIFO, device or socket"
            return FileRead(FileState.NOT_REGULAR, detail=f"is a {kind}, not a regular file")
        size = info.st_size
        if size > max_bytes:
            return FileRead(FileState.TOO_LARGE, detail=f"is {size} bytes (limit {max_bytes})")
        # Ask for one byte more than fstat's size (at most the bound + 1): a
        # short read then means the end of the file, so one read usually
        # suffices (no second read just to see EOF); getting it all means the
        # file grew, and bounded chunks follow.
        first = os.read(fd, size + 1)
        if len(first) <= size:
            return _OK_READ(FileRead, (FileState.OK, first, ""))
        want = max_bytes + 1
        chunks = [first]
        total = len(first)
        while total < want:
            request = min(want - total, 65536)
            chunk = os.read(fd, request)
            total += len(chunk)
            chunks.append(chunk)
            if len(chunk) < request:
                break
        if total > max_bytes:
            return FileRead(FileState.TOO_LARGE, detail=f"grew past the limit {max_bytes}")
        return FileRead(FileState.OK, data=b"".join(chunks))
    except OSError as exc:
        return FileRead(FileState.UNREADABLE, detail=exc.strerror or str(exc))
    finally:
        os.close(fd)


# FileRead(FileState.OK, data) without the Python-level namedtuple __new__:
# the same object, built once per file that 'plangate status' reads.
_OK_READ = tuple.__new__


def _fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def atomic_write(path: Path, data: bytes, *, overwrite: bool = True, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` atomically.

    With ``overwrite=False`` an existing file (or symlink) at ``path`` makes the
    call fail with ``FILE_EXISTS`` and nothing is changed.
    """
    import tempfile  # lazy: only writers need it

    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        raise InputRejected(
            "FILE_IS_SYMLINK",
            f"{path} is a symbolic link; refusing to write through it",
            "remove the link and retry",
        )
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(mode)
        if overwrite:
            tmp.replace(path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise InputRejected(
                    "FILE_EXISTS",
                    f"{path} already exists",
                    "pass --force to replace it explicitly",
                ) from None
            tmp.unlink()
        _fsync_dir(directory)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@contextlib.contextmanager
def exclusive_lock(lock_path: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` for the duration of the block.

    With ``wait=False`` a lock held by another process fails at once with
    ``LOCK_HELD`` instead of waiting.
    """
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        # A symlink in the lock's place (ELOOP), a read-only directory...: no
        # lock means no run, reported as a reason rather than a traceback.
        raise EnvironmentFailure(
            "LOCK_UNAVAILABLE",
            f"cannot open lock file {lock_path}: {exc.strerror or exc}",
            "make sure the path is a writable regular file (not a symlink)",
        ) from None
    try:
        flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            raise EnvironmentFailure(
                "LOCK_HELD",
                f"another plangate process holds {lock_path}",
                "wait for the other run to finish, then retry",
            ) from None
        yield
    finally:
        os.close(fd)
