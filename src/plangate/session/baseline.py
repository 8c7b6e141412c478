"""The baseline of a task session: which files were already changed when it started.

Effect checks of a session (PostToolUse, Stop, Cursor's ``afterFileEdit``/``stop``) compare
against the baseline ``task start`` recorded: a file that was already changed, untracked
or ignored at start (a human's notes, their own ``.claude/settings.local.json``) and is
byte for byte the same is not a change of the task. A baseline whose digest does not
match the ledger, or that cannot be read, counts as empty: every change is judged.
"""

# ruff: noqa: PTH115, PTH118
from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from plangate.fsutil import read_regular_file
from plangate.session.state import Session

MAX_BASELINE_BYTES = 16 * 1024 * 1024
"""Largest baseline document ``task start`` writes and an effect check reads."""


def path_digest(root: str, path: str) -> str:
    """What ``path`` is now: ``sha256:<hex>`` of a regular file, ``link:<hex>`` of a link's
    target text, ``dir``, ``missing`` or ``other`` (a device, a FIFO, an unreadable file)."""
    full = os.path.join(root, path)
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    if stat.S_ISLNK(info.st_mode):
        try:
            return "link:" + hashlib.sha256(os.fsencode(os.readlink(full))).hexdigest()
        except OSError:
            return "other"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return "other"
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "other"
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    except OSError:
        return "other"
    finally:
        os.close(fd)
    return "sha256:" + digest.hexdigest()


def unchanged_since_baseline(root: str, session: Session, paths: list[str]) -> set[str]:
    """The ``paths`` that are in the session's baseline with the same digest as now.

    The baseline is read only when its bytes match the digest the ledger recorded;
    otherwise nothing counts as unchanged.
    """
    if not paths:
        return set()
    read = read_regular_file(Path(os.path.join(root, session.baseline)), MAX_BASELINE_BYTES)
    if not read.ok or read.data is None:
        return set()
    if hashlib.sha256(read.data).hexdigest() != session.baseline_sha256:
        return set()
    try:
        document = json.loads(read.data)
    except ValueError:
        return set()
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, dict):
        return set()
    return {p for p in paths if isinstance(files.get(p), str) and files[p] == path_digest(root, p)}
