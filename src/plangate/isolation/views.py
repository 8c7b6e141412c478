"""What a box is built from on this machine: system directories and hidden paths (reads only).

:func:`system_view` lists the directories every box shows read-only so that
programs run at all (the system's binaries, libraries and configuration, and
the Python installation PlanGate itself runs on); :func:`hidden` says what
kind of placeholder a path to hide needs. Both only look; the policy built
from them is data (:mod:`plangate.isolation.policy`).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from plangate.isolation.policy import Hidden, Mount, path_within

SYSTEM_ROOTS: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
    "/run/current-system",
    "/run/systemd/resolve",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db/timezone",
)
"""System directories shown read-only in every box (those that exist here)."""

NOT_SHOWN: tuple[str, ...] = (
    "/",
    "/home",
    "/Users",
    "/root",
    "/tmp",  # noqa: S108 -- never shown, not used
    "/var",
    "/run",
    "/private",
)
"""Directories never shown whole: a Python installed directly in one of them is skipped."""


def _clean(path: str) -> str:
    return os.path.normpath(os.path.realpath(path))


def narrowest(paths: Iterable[str]) -> tuple[str, ...]:
    """``paths`` without duplicates and without paths inside another one, in order (pure)."""
    out: list[str] = []
    for path in paths:
        if any(path_within(path, kept) for kept in out):
            continue
        out = [kept for kept in out if not path_within(kept, path)]
        out.append(path)
    return tuple(out)


def python_dirs() -> tuple[str, ...]:
    """The directories of the Python installation running PlanGate."""
    found = []
    for candidate in (sys.base_prefix, sys.prefix, str(Path(sys.executable).parent)):
        if candidate:
            real = _clean(candidate)
            if real not in NOT_SHOWN:
                found.append(real)
    return tuple(found)


def system_view(extra: Iterable[str] = (), *, remaps: bool = True) -> tuple[Mount, ...]:
    """Read-only mounts of the system roots, Python's directories and ``extra`` that exist.

    A symbolic link among the roots (``/bin`` -> ``/usr/bin``) is shown at its
    own path with its target's content when the backend ``remaps``; otherwise
    (Seatbelt) the target itself is listed.
    """
    paths: list[str] = []
    for root in (*SYSTEM_ROOTS, *python_dirs(), *extra):
        if Path(root).is_dir():
            paths.append(os.path.normpath(root))
    if not remaps:
        return tuple(Mount.same(p) for p in narrowest(_clean(p) for p in paths))
    return tuple(Mount(os.path.realpath(p), p) for p in narrowest(paths))


def hidden(path: str) -> Hidden:
    """The placeholder ``path`` needs: a directory, a file (also sockets), or nothing."""
    clean = os.path.normpath(path)
    try:
        info = os.lstat(clean)
    except OSError:
        return Hidden(clean, "missing")
    if stat.S_ISLNK(info.st_mode):
        try:
            info = Path(clean).stat()
        except OSError:
            return Hidden(clean, "missing")
    return Hidden(clean, "dir" if stat.S_ISDIR(info.st_mode) else "file")
