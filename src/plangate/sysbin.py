"""Where PlanGate finds the system programs it trusts (``git``, ``ssh-keygen``, ``bwrap``).

Never through ``PATH``: whoever starts PlanGate (an agent's shell included)
chooses ``PATH``, and a program that prints "Good signature" would be believed.
A program is looked for in fixed system directories (:data:`SYSTEM_BIN_DIRS`)
and taken only when it is trusted (:func:`trusted_binary`): a regular,
executable file owned by root and writable by nobody else.

One override exists, for installations outside those directories (Homebrew,
a newer OpenSSH built by hand): the person's own ``programs.toml`` in
``~/.config/plangate/`` of the account PlanGate runs as, found through the
password database (never ``HOME`` or ``XDG_CONFIG_HOME``, which a command's
caller sets)::

    ssh-keygen = "/opt/homebrew/bin/ssh-keygen"

The file must be a regular file owned by that account (or root) and writable
by nobody else; the program it names must be an absolute path to a regular,
executable file owned by that account or root and writable by nobody else.
Anything else is refused (:func:`find_program` says why), never skipped.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

from plangate.fsutil import FileState, read_regular_file

SYSTEM_BIN_DIRS: tuple[str, ...] = (
    "/usr/bin",
    "/bin",
    "/usr/local/bin",
    "/usr/sbin",
    "/run/current-system/sw/bin",
)
"""Where trusted programs are looked for (root-owned system directories only)."""

PROGRAMS_FILE = "programs.toml"
MAX_PROGRAMS_BYTES = 16 * 1024


def user_config_dir() -> Path:
    """``~/.config/plangate`` of the account this process runs as (password database)."""
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".config" / "plangate"


_ROOT_UIDS: list[tuple[int, ...]] = []


def root_uid_from(uid_map: str, overflow: int) -> int:
    """The uid the parent namespace's root has in a user namespace whose
    ``/proc/self/uid_map`` is ``uid_map`` (pure): its mapped uid, else ``overflow``
    (the uid the kernel shows for an unmapped owner)."""
    for line in uid_map.splitlines():
        fields = line.split()
        if len(fields) == 3 and all(f.isdigit() for f in fields):
            inside, outside, count = (int(f) for f in fields)
            if outside <= 0 < outside + count:
                return inside - outside
    return overflow


def root_uids() -> tuple[int, ...]:
    """Who may own a program PlanGate trusts as a system one: root (uid 0) and, inside
    a user namespace (a box of ``plangate exec``), the uid the system's root shows
    under there: the uid root maps to, or the kernel's overflow uid when it is not
    mapped (a box run by an ordinary account shows root's files as owned by
    ``nobody``). The box's own account owns neither: it cannot have made such a file."""
    if _ROOT_UIDS:
        return _ROOT_UIDS[0]
    try:
        uid_map = Path("/proc/self/uid_map").read_text()
    except OSError:
        uid_map = "0 0 4294967295"  # no /proc (macOS): no user namespaces
    try:
        overflow = int(Path("/proc/sys/kernel/overflowuid").read_text().strip())
    except (OSError, ValueError):
        overflow = 65534  # the kernel's default
    found = tuple(dict.fromkeys((0, root_uid_from(uid_map, overflow))))
    _ROOT_UIDS.append(found)
    return found


def trusted_binary(path: str, owners: tuple[int, ...] | None = None) -> str | None:
    """Why ``path`` cannot be trusted as a program to run (None: it can).

    It must be a regular, executable file owned by one of ``owners`` (by default
    root: :func:`root_uids`) and writable by nobody else.
    """
    owners = root_uids() if owners is None else owners
    try:
        info = Path(path).stat()
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_uid not in owners:
        return f"{path} is not owned by root" if owners == root_uids() else (
            f"{path} is owned by neither root nor this account")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by others than its owner"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable"
    return None


def find_system_binary(name: str) -> tuple[str | None, str]:
    """``(path, "")`` of the first trusted ``name`` in :data:`SYSTEM_BIN_DIRS`, or
    ``(None, why)``: not installed there, or only untrusted copies found."""
    problems = []
    for directory in SYSTEM_BIN_DIRS:
        candidate = Path(directory) / name
        if not os.path.lexists(candidate):
            continue
        real = str(candidate.resolve())
        problem = trusted_binary(real)
        if problem is None:
            return real, ""
        problems.append(problem)
    if problems:
        return None, "; ".join(problems)
    return None, f"{name} is not installed (looked in {', '.join(SYSTEM_BIN_DIRS)})"


def configured_program(name: str) -> tuple[str | None, str]:
    """The person's override for ``name`` from ``programs.toml``: ``(path, "")``,
    ``(None, "")`` when there is none, or ``(None, why)`` when it cannot be trusted."""
    where = user_config_dir() / PROGRAMS_FILE
    read = read_regular_file(where, MAX_PROGRAMS_BYTES)
    if read.state is FileState.MISSING:
        return None, ""
    if not read.ok or read.data is None:
        return None, f"{where} {read.detail}"
    owners = (*root_uids(), os.getuid())
    try:
        info = where.lstat()
    except OSError as exc:
        return None, f"{where}: {exc.strerror or exc}"
    if info.st_uid not in owners or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None, f"{where} must be owned by this account and writable by nobody else"
    # Loaded only when the person has the file: git's lookup is on the hook's hot path.
    import tomllib

    try:
        table = tomllib.loads(read.data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return None, f"{where} is not valid TOML: {exc}"
    value = table.get(name)
    if value is None:
        return None, ""
    if not isinstance(value, str) or not Path(value).is_absolute():
        return None, f"{where}: {name} must be an absolute path"
    problem = trusted_binary(value, owners)
    return (value, "") if problem is None else (None, f"{where}: {problem}")


def find_program(name: str) -> tuple[str | None, str]:
    """The program PlanGate runs as ``name``: the person's override when one is
    configured, else the trusted system copy; ``(None, why)`` when neither is usable.

    An override that cannot be trusted is refused rather than passed over: the
    person asked for that program, and a silent fallback would hide the problem.
    """
    configured, problem = configured_program(name)
    if configured is not None or problem:
        return configured, problem
    return find_system_binary(name)
