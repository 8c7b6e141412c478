"""The task snapshot: a task directory read once, defensively, into bytes.

Only this module opens task files. Static validate and exec preflight decide
from one :class:`TaskSnapshot`, so a file cannot change between
two reads of the same decision.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.canonical import digest, sha256_digest
from plangate.errors import EnvironmentFailure, InputRejected, PlanGateError, UsageError
from plangate.fsutil import FileRead, FileState, read_regular_file
from plangate.layout import MAX_ARTIFACT_BYTES, MAX_RECORD_BYTES, RECORD_RELPATH, WORKING_DIR
from plangate.records import NamedTuple
from plangate.shapes import is_task_id

ARTIFACTS: tuple[str, ...] = (
    "pbi-input.md",
    "plan.md",
    "todo.md",
    "test-cases.md",
    "review-self.md",
    "review-external.md",
)
"""The six Plan Package artifacts, in the contract's order."""

if TYPE_CHECKING:
    from plangate.fsutil import VerifiedDir


def check_task_id(task_id: object) -> str:
    """Return ``task_id`` when it is exactly ``TASK-`` and four digits, else raise."""
    if not isinstance(task_id, str) or not is_task_id(task_id):
        raise UsageError(
            "TASK_ID_INVALID",
            f"task id {task_id!r} is not of the form TASK-0000",
            "use TASK- followed by exactly four digits, e.g. TASK-0042",
        )
    return task_id


def find_repo_root(start: Path) -> Path:
    """Nearest directory at or above ``start`` holding ``.git``; ``start`` when none.

    A working directory that was deleted or lies under a directory that cannot
    be searched is ``WORKING_DIRECTORY_UNAVAILABLE``; a ``.git`` that cannot be
    looked up (permissions) is ``REPO_ROOT_UNDECIDABLE``: never a guess.

    A file-system walk, not a git call, so the hot path stays fast; commands
    that need git still ask git and fail closed when it says no.
    """
    from plangate.fsutil import working_directory_unavailable

    try:
        start.stat()
        start = start.resolve()
    except OSError as exc:
        raise working_directory_unavailable(str(start), exc) from None
    for candidate in (start, *start.parents):
        try:
            (candidate / ".git").stat()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise EnvironmentFailure(
                "REPO_ROOT_UNDECIDABLE",
                f"cannot tell whether {candidate} is the repository root: {exc.strerror or exc}",
                "make the directories from the repository root down searchable for this user",
            ) from None
        return candidate
    return start


def task_dir_for(repo_root: Path, task_id: str) -> Path:
    """``<repo_root>/docs/working/<task_id>`` after validating the id."""
    return repo_root / WORKING_DIR / check_task_id(task_id)


class TaskSnapshot(NamedTuple):
    """Every file a decision about one task may use, read once."""

    task_id: str
    task_dir: Path
    artifacts: Mapping[str, FileRead]
    record: FileRead

    def artifact(self, name: str) -> bytes | None:
        """Bytes of artifact ``name`` or None when it was not readable."""
        read = self.artifacts.get(name)
        return read.data if read is not None and read.ok else None

    def artifact_hashes(self) -> dict[str, str]:
        """``{name: sha256:...}`` for every readable artifact."""
        out = {}
        for name in ARTIFACTS:
            data = self.artifact(name)
            if data is not None:
                out[name] = sha256_digest(data)
        return out

    def digest(self) -> str:
        """Digest of the whole snapshot: each file's digest or its state."""
        files: dict[str, Any] = {}
        for name, read in (*self.artifacts.items(), (RECORD_RELPATH, self.record)):
            if read.ok and read.data is not None:
                files[name] = sha256_digest(read.data)
            else:
                files[name] = read.state.value
        return digest({"task_id": self.task_id, "files": files})


def _is_real_directory(path: Path | str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode)


# The errors for which pathlib's is_symlink() answers False instead of raising.
_NOT_A_LINK_ERRNOS = frozenset((errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP))


def _is_symlink(path: str, *, dir_fd: int | None = None) -> bool:
    """``Path(path).is_symlink()`` without building a Path (same errors raised).

    With ``dir_fd``, ``path`` is relative to that open directory.
    """
    try:
        return stat.S_ISLNK(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError as exc:
        if exc.errno not in _NOT_A_LINK_ERRNOS:
            raise
        return False
    except ValueError:
        return False


def read_artifacts_at(task: VerifiedDir) -> dict[str, FileRead]:
    """The six artifacts read through a verified task-directory handle.

    Writers that waited (for the ledger's lock, say) re-read through the handle
    they are about to write through, and compare with the bytes they judged.
    """
    from plangate.fsutil import read_at

    return {name: read_at(task, name, MAX_ARTIFACT_BYTES) for name in ARTIFACTS}


# What an approvals/ that cannot be opened means for the record (as read_task_snapshot says it).
_RECORD_STATES = {
    "PATH_COMPONENT_LINK": FileState.SYMLINK,
    "PATH_COMPONENT_MISSING": FileState.MISSING,
    "PATH_COMPONENT_NOT_DIRECTORY": FileState.MISSING,
}


def read_snapshot_at(task: VerifiedDir, task_id: str) -> TaskSnapshot:
    """The snapshot of the task read through a verified task-directory handle.

    Same states as :func:`read_task_snapshot` (an ``approvals`` link reads as a
    record in state ``symlink``), so the two digests compare.
    """
    from plangate.fsutil import child_dir, read_at

    artifacts = read_artifacts_at(task)
    approvals, name = RECORD_RELPATH.split("/")
    try:
        with child_dir(task, approvals) as directory:
            record = read_at(directory, name, MAX_RECORD_BYTES)
    except PlanGateError as exc:
        record = FileRead(_RECORD_STATES.get(exc.code, FileState.UNREADABLE), detail=exc.message)
    return TaskSnapshot(task_id=task_id, task_dir=task.path, artifacts=artifacts, record=record)


def same_reads(first: Mapping[str, FileRead], second: Mapping[str, FileRead]) -> bool:
    """True when both map the same names to the same state and bytes."""
    if first.keys() != second.keys():
        return False
    return all((first[k].state, first[k].data) == (second[k].state, second[k].data) for k in first)


def read_task_snapshot(task_dir: Path) -> TaskSnapshot:
    """Read the six artifacts and ``approvals/c3.json`` of ``task_dir`` once.

    The task directory itself must be a real directory (a symlink in its place
    is refused with ``TASK_DIR_INVALID``); an ``approvals`` symlink makes the
    record unreadable (state ``symlink``) rather than followed.
    """
    task_id = task_dir.name
    # Plain string paths: this runs for every task of 'plangate status'.
    path = os.fspath(task_dir)
    if not _is_real_directory(path):
        try:
            info: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            # A directory above it cannot be searched: say so, never a traceback.
            raise InputRejected(
                "TASK_DIR_INVALID",
                f"task directory {task_dir} cannot be looked up: {exc.strerror or exc}",
                "make docs/ and docs/working/ searchable for this user",
            ) from None
        link = info is not None and stat.S_ISLNK(info.st_mode)
        what = "a symbolic link" if link else "missing or not a directory"
        raise InputRejected(
            "TASK_DIR_INVALID",
            f"task directory {task_dir} is {what}",
            "create it with 'plangate init TASK-XXXX'",
        )
    # docs/ and docs/working/ are followed by every open below: a symbolic
    # link there would read a package from outside the repository (and past
    # protected-surface patterns anchored at docs/working/), so refuse it too.
    parent = task_dir.parent
    if f"{parent.parent.name}/{parent.name}" == WORKING_DIR:
        for ancestor in (parent, parent.parent):
            if _is_symlink(os.fspath(ancestor)):
                raise InputRejected(
                    "TASK_DIR_INVALID",
                    f"task directory {task_dir} lies under a symbolic link ({ancestor})",
                    "make docs/ and docs/working/ real directories inside the repository",
                )
    return _read_files(task_id, task_dir, path.rstrip("/") + "/", None)


def _read_files(task_id: str, task_dir: Path, base: str, dir_fd: int | None) -> TaskSnapshot:
    """The six artifacts and the record at ``base`` (a path prefix, ``""`` with ``dir_fd``)."""
    artifacts = {
        name: read_regular_file(base + name, MAX_ARTIFACT_BYTES, dir_fd=dir_fd)
        for name in ARTIFACTS
    }
    try:
        approvals_is_link = _is_symlink(base + "approvals", dir_fd=dir_fd)
    except OSError as exc:
        # The task directory cannot be searched: the record is unreadable (every
        # artifact read above says the same), never a traceback.
        record = FileRead(FileState.UNREADABLE, detail=exc.strerror or str(exc))
    else:
        if approvals_is_link:
            record = FileRead(FileState.SYMLINK, detail="approvals/ is a symbolic link")
        else:
            record = read_regular_file(base + RECORD_RELPATH, MAX_RECORD_BYTES, dir_fd=dir_fd)
    return TaskSnapshot(task_id, task_dir, artifacts, record)


def open_working_dir(root: Path) -> VerifiedDir | None:
    """``docs/working`` of ``root`` opened with no link followed, or None when it cannot be.

    For :func:`read_task_snapshot_in`. None (missing, a link on the way,
    unreadable) leaves every task to :func:`read_task_snapshot`, which says why.
    """
    from plangate.fsutil import open_verified_dir

    try:
        return open_verified_dir(root, WORKING_DIR)
    except PlanGateError:
        return None


_TASK_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def read_task_snapshot_in(working: VerifiedDir, task_dir: Path) -> TaskSnapshot:
    """:func:`read_task_snapshot` of ``task_dir``, a child of the verified ``working``.

    ``working`` is ``docs/working`` opened by :func:`open_working_dir`, so no
    link lies on the way to it (what :func:`read_task_snapshot` checks per
    task with two ``lstat``); the task directory is opened below it without
    following a link, and its files are read relative to that handle. The same
    snapshot, or the same error: a task directory that cannot be opened so (a
    link, missing, not a directory, not readable) is read by
    :func:`read_task_snapshot`, which decides and says why.
    """
    try:
        fd = os.open(task_dir.name, _TASK_DIR_FLAGS, dir_fd=working.fd)
    except OSError:
        return read_task_snapshot(task_dir)
    try:
        return _read_files(task_dir.name, task_dir, "", fd)
    finally:
        os.close(fd)
