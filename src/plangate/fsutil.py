"""File-system primitives: defensive reads, atomic writes, exclusive locks.

- :func:`read_regular_file` opens with ``O_NOFOLLOW | O_NONBLOCK`` and checks
  ``fstat`` so that a symlink, FIFO, device or directory in a file's place is
  rejected (a FIFO never blocks the reader) and the size bound holds;
  :func:`read_below` does the same for a path inside a repository with no
  link followed at any directory on the way.
- :func:`atomic_write` writes a temporary file in the same directory, fsyncs
  it, then renames it over the target (or links it, when overwriting is not
  allowed, so that "refuse to overwrite" is race-free), and fsyncs the directory.
- :class:`VerifiedDir` is a directory handle reached from a root with no link
  followed (``O_NOFOLLOW | O_DIRECTORY`` and ``dir_fd`` at every component).
  :func:`atomic_write_at`, :func:`append_at`, :func:`lock_at`, :func:`read_at`
  and :func:`mkdir_at` act relative to such a handle, so a write lands in the
  directory that was verified at the moment of writing, never through a link
  swapped in meanwhile.
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

from plangate.errors import EnvironmentFailure, InputRejected, PlanGateError
from plangate.records import NamedTuple


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


def read_regular_file(
    path: str | os.PathLike[str], max_bytes: int, *, dir_fd: int | None = None
) -> FileRead:
    """Read ``path`` once, only if it is a regular file of at most ``max_bytes``.

    Never follows a symlink at the last component and never blocks on a FIFO.
    With ``dir_fd``, ``path`` is relative to that open directory.
    """
    try:
        fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
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
        # Ask for one byte more than fstat's size (at most the bound + 1): getting
        # exactly the size means the end of the file, so one read usually suffices
        # (no second read just to see EOF). Less than the size is not yet the end
        # (a network or FUSE file system may hand a file over in parts), and more
        # means the file grew: then bounded chunks follow until a read returns
        # nothing or the bound is passed.
        first = os.read(fd, size + 1)
        if len(first) == size:
            return _OK_READ(FileRead, (FileState.OK, first, ""))
        want = max_bytes + 1
        chunks = [first]
        total = len(first)
        while total < want and chunks[-1]:
            chunk = os.read(fd, min(want - total, 65536))
            total += len(chunk)
            chunks.append(chunk)
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


# -- the working directory -----------------------------------------------------------


def working_directory_unavailable(where: str, exc: OSError) -> EnvironmentFailure:
    """``WORKING_DIRECTORY_UNAVAILABLE``: the working directory was deleted or cannot be reached."""
    return EnvironmentFailure(
        "WORKING_DIRECTORY_UNAVAILABLE",
        f"the working directory {where} cannot be used: {exc.strerror or exc}",
        "run the command from an existing directory whose every ancestor you can search "
        "(cd into the repository again)",
    )


def working_directory() -> Path:
    """The working directory, or ``WORKING_DIRECTORY_UNAVAILABLE`` (deleted, unreachable)."""
    try:
        cwd = Path.cwd()
    except OSError as exc:
        raise working_directory_unavailable("(deleted or unreachable)", exc) from None
    try:
        # getcwd answers even when an ancestor cannot be searched; every path
        # below it would then fail (git included), so refuse here, once.
        cwd.stat()
    except OSError as exc:
        raise working_directory_unavailable(str(cwd), exc) from None
    return cwd


# -- verified directory handles ------------------------------------------------------

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# The errors of a write that mean "this file system or directory does not accept
# the write": a read-only mount, missing permission, no space. Anything else is
# reported the same way; these only choose the hint.
_PERMISSION_ERRNOS = frozenset((errno.EACCES, errno.EPERM, errno.EROFS))


def _detail(exc: OSError) -> str:
    return exc.strerror or str(exc)


def path_unavailable(where: str, exc: OSError) -> EnvironmentFailure:
    """``PATH_UNAVAILABLE``: a directory on the way cannot be opened, searched or created."""
    hint = (
        "make the directory searchable and writable for this user (it is read-only or "
        "not permitted)"
        if exc.errno in _PERMISSION_ERRNOS
        else "check the directory exists and the file system is healthy"
    )
    return EnvironmentFailure("PATH_UNAVAILABLE", f"{where}: {_detail(exc)}", hint)


def not_writable(where: str, exc: OSError) -> EnvironmentFailure:
    """``PATH_NOT_WRITABLE``: the file system refused a write (read-only, permission, space)."""
    hint = (
        "make the directory writable for this user (it is read-only or not permitted)"
        if exc.errno in _PERMISSION_ERRNOS
        else "check free space and the file system, then retry"
    )
    return EnvironmentFailure("PATH_NOT_WRITABLE", f"cannot write {where}: {_detail(exc)}", hint)


def _check_name(name: str) -> str:
    """One directory entry name: no separator, not ``.``/``..``, not empty."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"not a single path component: {name!r}")
    return name


def _split_rel(rel: str) -> list[str]:
    """Components of a repository-relative directory path (``""`` or ``"."`` is the root)."""
    if rel in ("", "."):
        return []
    return [_check_name(part) for part in rel.split("/")]


def _lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _component_refusal(dir_fd: int, name: str, where: str, exc: OSError) -> PlanGateError:
    """Why ``name`` under ``dir_fd`` could not be opened as a directory without following."""
    try:
        info = _lstat_at(dir_fd, name)
    except OSError:
        info = None
    # What is there now decides; when it vanished meanwhile, the error the open saw.
    is_link = stat.S_ISLNK(info.st_mode) if info is not None else exc.errno == errno.ELOOP
    not_dir = not stat.S_ISDIR(info.st_mode) if info is not None else exc.errno == errno.ENOTDIR
    if is_link:
        return InputRejected(
            "PATH_COMPONENT_LINK",
            f"{where} is a symbolic link; refusing to follow it",
            "make it a real directory inside the repository (remove the link)",
        )
    if not_dir:
        return InputRejected(
            "PATH_COMPONENT_NOT_DIRECTORY",
            f"{where} is not a directory",
            "remove what is in its place so that a real directory can be used",
        )
    return path_unavailable(where, exc)


class VerifiedDir:
    """An open directory reached from ``root`` along ``rel`` with no link followed.

    Every component below the root was opened with ``O_NOFOLLOW | O_DIRECTORY``
    relative to its verified parent. Writes through the ``*_at`` helpers are
    relative to :attr:`fd`, so they land in this very directory even when a path
    component is swapped for a link afterwards. The root itself is taken as
    given (it is where the command runs). Close it, or use it as a context
    manager.
    """

    __slots__ = ("_display", "_fd", "rel", "root")

    def __init__(self, fd: int, root: Path, rel: str, *, display: str = "") -> None:
        self._fd: int | None = fd
        self.root = root
        self.rel = rel
        self._display = display or rel

    @property
    def fd(self) -> int:
        """The open directory descriptor."""
        if self._fd is None:
            raise ValueError("the directory handle is closed")
        return self._fd

    @property
    def path(self) -> Path:
        """The path this handle was opened at (for messages)."""
        return self.root / self.rel if self.rel else self.root

    def shown(self, name: str = "") -> str:
        """``rel/name`` as messages show it."""
        parts = [p for p in (self._display, name) if p]
        return "/".join(parts) or "."

    def proc_path(self, name: str) -> str:
        """A path to ``name`` inside this very directory, for libraries that only take paths.

        ``/proc/self/fd/<fd>/<name>`` (Linux): the kernel resolves it through the
        open handle, so SQLite (say) opens its database and journal files in the
        verified directory even after a component was swapped for a link. The
        last component is still followed if it is a link: check it first.
        """
        return f"/proc/self/fd/{self.fd}/{_check_name(name)}"

    def identity(self) -> tuple[int, int]:
        """``(st_dev, st_ino)`` of the open directory."""
        info = os.fstat(self.fd)
        return info.st_dev, info.st_ino

    def still_in_place(self) -> bool:
        """True when walking ``rel`` from the root again (no link followed) reaches it."""
        try:
            with open_verified_dir(self.root, self.rel) as again:
                return again.identity() == self.identity()
        except (PlanGateError, OSError):
            return False

    def close(self) -> None:
        """Close the handle (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> VerifiedDir:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _open_component(parent: int, name: str, where: str, *, create: bool, mode: int) -> int:
    for _attempt in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise InputRejected(
                    "PATH_COMPONENT_MISSING",
                    f"{where} does not exist",
                    "create the directory (or run the command that creates it) first",
                ) from None
            try:
                os.mkdir(name, mode, dir_fd=parent)
            except FileExistsError:
                pass  # created meanwhile: opened (without following) on the next attempt
            except OSError as exc:
                raise _component_refusal(parent, name, where, exc) from None
        except OSError as exc:
            raise _component_refusal(parent, name, where, exc) from None
    # Created and then removed again before it could be opened: a concurrent swap.
    raise InputRejected(
        "PATH_COMPONENT_MISSING",
        f"{where} disappeared while it was being created",
        "retry when nothing else is changing the directory",
    )


def open_verified_dir(
    root: Path, rel: str = "", *, create: bool = False, mode: int = 0o755
) -> VerifiedDir:
    """Open ``root/rel`` one component at a time without following any link.

    ``rel`` is a ``/``-separated path below ``root``. With ``create`` missing
    components are made with ``mkdir`` relative to their verified parent. Raises
    ``PATH_COMPONENT_LINK`` (a link in the way), ``PATH_COMPONENT_NOT_DIRECTORY``,
    ``PATH_COMPONENT_MISSING`` (without ``create``) or ``PATH_UNAVAILABLE``
    (permissions, a read-only directory that lacks the component, ...).
    """
    parts = _split_rel(rel)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise path_unavailable(f"directory {root}", exc) from None
    done: list[str] = []
    try:
        for name in parts:
            done.append(name)
            child = _open_component(fd, name, "/".join(done), create=create, mode=mode)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return VerifiedDir(fd, root, "/".join(parts))


def mkdir_at(directory: VerifiedDir, name: str, *, mode: int = 0o755) -> VerifiedDir:
    """The child directory ``name`` of ``directory``, created if missing, never a link."""
    where = directory.shown(_check_name(name))
    fd = _open_component(directory.fd, name, where, create=True, mode=mode)
    return VerifiedDir(fd, directory.root, where if directory.rel else name)


def child_dir(directory: VerifiedDir, name: str) -> VerifiedDir:
    """The existing child directory ``name`` of ``directory`` (``PATH_COMPONENT_*`` otherwise)."""
    where = directory.shown(_check_name(name))
    fd = _open_component(directory.fd, name, where, create=False, mode=0o755)
    return VerifiedDir(fd, directory.root, where if directory.rel else name)


def names_at(directory: VerifiedDir) -> list[str]:
    """The entry names of the verified ``directory``, sorted."""
    return sorted(os.listdir(directory.fd))  # noqa: PTH208 -- a directory descriptor


def read_at(directory: VerifiedDir, name: str, max_bytes: int) -> FileRead:
    """:func:`read_regular_file` of ``name`` inside the verified ``directory``."""
    return read_regular_file(_check_name(name), max_bytes, dir_fd=directory.fd)


_PARENT_STATES = {
    "PATH_COMPONENT_MISSING": FileState.MISSING,
    "PATH_COMPONENT_NOT_DIRECTORY": FileState.MISSING,
    "PATH_COMPONENT_LINK": FileState.SYMLINK,
}
"""What a parent directory that cannot be opened without following makes of the file."""


def read_below(
    root: str | os.PathLike[str], rel: str | os.PathLike[str], max_bytes: int
) -> FileRead:
    """:func:`read_regular_file` of ``root/rel`` with no link followed below ``root``.

    ``rel`` is a ``/``-separated path inside ``root``; every directory on the way is
    opened without following a link, so a directory swapped for a link (to a directory
    elsewhere) makes the file read as :attr:`FileState.SYMLINK`, never as the file there. A missing
    parent (or a file in a directory's place) is :attr:`FileState.MISSING`, as
    :func:`read_regular_file` says for a missing file.
    """
    parts = os.fspath(rel).split("/")
    try:
        _check_name(parts[-1])
        directory = open_verified_dir(Path(root), "/".join(parts[:-1]))
    except ValueError:
        return FileRead(FileState.UNREADABLE, detail="is not a path inside the repository")
    except PlanGateError as exc:
        state = _PARENT_STATES.get(exc.code, FileState.UNREADABLE)
        return FileRead(state, detail=f"cannot be reached: {exc.message}")
    with directory:
        return read_regular_file(parts[-1], max_bytes, dir_fd=directory.fd)


def _fsync_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _refuse_target(directory: VerifiedDir, name: str, *, overwrite: bool) -> None:
    """A link or a non-regular file in the target's place, or any file when not overwriting."""
    where = directory.shown(name)
    try:
        info = _lstat_at(directory.fd, name)
    except OSError as exc:
        raise path_unavailable(where, exc) from None
    if info is None:
        return
    if stat.S_ISLNK(info.st_mode):
        raise InputRejected(
            "FILE_IS_SYMLINK",
            f"{where} is a symbolic link; refusing to write through it",
            "remove the link and retry",
        )
    if not stat.S_ISREG(info.st_mode):
        raise InputRejected(
            "WRITE_TARGET_NOT_REGULAR",
            f"{where} is not a regular file",
            "remove what is in its place (a directory, FIFO, socket or device)",
        )
    if not overwrite:
        raise InputRejected(
            "FILE_EXISTS", f"{where} already exists", "pass --force to replace it explicitly"
        )


def atomic_write_at(
    directory: VerifiedDir,
    name: str,
    data: bytes,
    *,
    overwrite: bool = True,
    mode: int = 0o644,
    durable: bool = True,
) -> None:
    """Write ``data`` as ``name`` inside the verified ``directory``, atomically.

    ``durable=False`` leaves out the two ``fsync`` calls: for a file of a throwaway
    directory (a run's scratch repository) that no crash needs to find again.

    A temporary file is created in that directory (``O_EXCL | O_NOFOLLOW``),
    fsynced and renamed over ``name`` with both ends relative to the handle (or
    hard-linked into place when ``overwrite`` is false, so an existing file is
    never replaced: ``FILE_EXISTS``). A link or non-regular file at ``name`` is
    refused (``FILE_IS_SYMLINK``, ``WRITE_TARGET_NOT_REGULAR``); a refused write
    is ``PATH_NOT_WRITABLE``.
    """
    import secrets  # lazy: only writers need it

    _check_name(name)
    _refuse_target(directory, name, overwrite=overwrite)
    dfd = directory.fd
    where = directory.shown(name)
    tmp = f".{name}.{secrets.token_hex(8)}.tmp"
    created = False
    try:
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dfd,
        )
        created = True
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        if overwrite:
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            created = False
        else:
            try:
                os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
            except FileExistsError:
                raise InputRejected(
                    "FILE_EXISTS",
                    f"{where} already exists",
                    "pass --force to replace it explicitly",
                ) from None
        if durable:
            _fsync_fd(dfd)
    except IsADirectoryError:
        raise InputRejected(
            "WRITE_TARGET_NOT_REGULAR", f"{where} is a directory", "remove the directory"
        ) from None
    except OSError as exc:
        raise not_writable(where, exc) from None
    finally:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)


def create_if_absent_at(
    directory: VerifiedDir, name: str, data: bytes, *, mode: int = 0o644
) -> bool:
    """Create ``name`` holding ``data`` in ``directory`` unless it already holds exactly ``data``.

    :func:`atomic_write_at` without overwriting, made safe for processes that
    race to create the same file: ``True`` when this call created it, ``False``
    when a regular file with these very bytes was already there (written by a
    concurrent creator, or earlier). Any other file in its place is refused
    (``FILE_EXISTS``, or the refusal of :func:`atomic_write_at` for a link or a
    non-regular file): it is never replaced.
    """
    try:
        atomic_write_at(directory, name, data, overwrite=False, mode=mode)
        return True
    except InputRejected as exc:
        if exc.code != "FILE_EXISTS":
            raise
    found = read_at(directory, name, len(data))
    if found.ok and found.data == data:
        return False
    raise InputRejected(
        "FILE_EXISTS",
        f"{directory.shown(name)} already exists with other content ({found.state.value})",
        "remove it if PlanGate should write its own, then retry",
    )


def append_at(directory: VerifiedDir, name: str, data: bytes) -> None:
    """Append ``data`` to ``name`` inside the verified ``directory`` (created if missing), fsynced.

    Opened with ``O_APPEND | O_NOFOLLOW | O_NONBLOCK``: a link is refused
    (``FILE_IS_SYMLINK``), so is anything but a regular file
    (``WRITE_TARGET_NOT_REGULAR``; a FIFO never blocks) and a file with another
    hard link (``WRITE_TARGET_HARD_LINKED``: the bytes would also change that
    other name, possibly outside the repository).
    """
    _check_name(name)
    where = directory.shown(name)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, 0o644, dir_fd=directory.fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputRejected(
                "FILE_IS_SYMLINK",
                f"{where} is a symbolic link; refusing to write through it",
                "remove the link; plangate recreates the file",
            ) from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            raise InputRejected(
                "WRITE_TARGET_NOT_REGULAR",
                f"{where} is not a regular file",
                "remove what is in its place; plangate recreates the file",
            ) from None
        raise not_writable(where, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputRejected(
                "WRITE_TARGET_NOT_REGULAR",
                f"{where} is not a regular file",
                "remove what is in its place; plangate recreates the file",
            )
        if info.st_nlink != 1:
            raise InputRejected(
                "WRITE_TARGET_HARD_LINKED",
                f"{where} has {info.st_nlink} hard links; refusing to append through them",
                "replace it by a copy of its own (cp FILE FILE.new && mv FILE.new FILE)",
            )
        _write_all(fd, data)
        os.fsync(fd)
    except OSError as exc:
        raise not_writable(where, exc) from None
    finally:
        os.close(fd)


def remove_at(directory: VerifiedDir, name: str) -> None:
    """Remove the file ``name`` of the verified ``directory`` (an absent one is fine)."""
    _check_name(name)
    try:
        os.unlink(name, dir_fd=directory.fd)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise not_writable(directory.shown(name), exc) from None


@contextlib.contextmanager
def lock_at(directory: VerifiedDir, name: str, *, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``name`` inside the verified ``directory``.

    The lock file is opened without following a link and must be a regular
    file (``LOCK_UNAVAILABLE`` otherwise); with ``wait=False`` a lock held by
    another process fails at once with ``LOCK_HELD``.
    """
    _check_name(name)
    where = directory.shown(name)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, 0o644, dir_fd=directory.fd)
    except OSError as exc:
        raise _lock_unavailable(where, _detail(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _lock_unavailable(where, "not a regular file")
        _flock(fd, where, wait=wait)
        yield
    finally:
        os.close(fd)


def _lock_unavailable(where: str, detail: str) -> EnvironmentFailure:
    # A symlink in the lock's place (ELOOP), a read-only directory...: no lock
    # means no run, reported as a reason rather than a traceback.
    return EnvironmentFailure(
        "LOCK_UNAVAILABLE",
        f"cannot open lock file {where}: {detail}",
        "make sure the path is a writable regular file (not a symlink)",
    )


def _flock(fd: int, where: str, *, wait: bool) -> None:
    flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
    try:
        fcntl.flock(fd, flags)
    except BlockingIOError:
        raise EnvironmentFailure(
            "LOCK_HELD",
            f"another plangate process holds {where}",
            "wait for the other run to finish, then retry",
        ) from None


@contextlib.contextmanager
def repo_lock(root: Path, rel_dir: str, name: str, *, wait: bool = False) -> Iterator[None]:
    """:func:`lock_at` on ``root/rel_dir/name``, the directories verified (and created) first."""
    with (
        open_verified_dir(root, rel_dir, create=True) as directory,
        lock_at(directory, name, wait=wait),
    ):
        yield


def atomic_write_in(
    root: Path, rel_path: str, data: bytes, *, overwrite: bool = True, mode: int = 0o644
) -> None:
    """:func:`atomic_write_at` of ``root/rel_path``: its directories verified (and created) first.

    ``rel_path`` is a ``/``-separated path of a file below ``root``; no link on
    the way is followed (``PATH_COMPONENT_LINK``).
    """
    directory, _, name = rel_path.rpartition("/")
    with open_verified_dir(root, directory, create=True) as handle:
        atomic_write_at(handle, name, data, overwrite=overwrite, mode=mode)


# -- writes to paths the user names ----------------------------------------------------


def atomic_write(
    path: Path, data: bytes, *, overwrite: bool = True, mode: int = 0o644, durable: bool = True
) -> None:
    """Write ``data`` to ``path`` atomically (a path the user named, e.g. ``--out``).

    The parent directory is created if needed and opened once; the write is
    :func:`atomic_write_at` relative to it. With ``overwrite=False`` an existing
    file (or symlink) at ``path`` makes the call fail with ``FILE_EXISTS`` and
    nothing is changed. Paths inside the repository that PlanGate owns are
    written through :func:`open_verified_dir` instead, which follows no link.
    """
    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise path_unavailable(f"directory {directory}", exc) from None
    with VerifiedDir(fd, directory, "", display=str(directory)) as handle:
        atomic_write_at(handle, path.name, data, overwrite=overwrite, mode=mode, durable=durable)


@contextlib.contextmanager
def exclusive_lock(lock_path: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` for the duration of the block.

    With ``wait=False`` a lock held by another process fails at once with
    ``LOCK_HELD`` instead of waiting. Locks inside a repository use
    :func:`repo_lock`, which follows no link on the way.
    """
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise _lock_unavailable(str(lock_path), _detail(exc)) from None
    try:
        _flock(fd, str(lock_path), wait=wait)
        yield
    finally:
        os.close(fd)
