"""This clone's record that it created its ledger: the witness, kept in the git directory.

A SQLite ledger belongs to one working tree (the default one lives in
``.plangate/`` of that tree). A committed file travels with every clone, so it
cannot tell a new clone (which starts its own ledger) from a clone whose ledger
was deleted. The witness can: when a SQLite ledger is created, PlanGate writes
``<git dir>/plangate/ledgers/<key>.json``, outside the working tree and outside
every commit, where ``<key>`` names the ledger's path. A fresh clone, a CI
checkout and a new linked worktree have none and start their own ledger; a
working tree whose ledger is gone while its witness is there refuses
(``LEDGER_MISSING``, see :mod:`plangate.ledger.existence`).

The git directory is the working tree's own (``git rev-parse --git-dir``): a
linked worktree has its own ledger and its own witness
(``.git/worktrees/<name>/plangate/ledgers/``), and ``git worktree remove``
removes both. PostgreSQL ledgers are shared by URL and have no witness.

The witness is canonical JSON ``{"created", "format", "ledger", "version": 1}``.
One that cannot be read or names another ledger is reported as unreadable, which
counts as a trace too (fail closed). Writing it is best effort (a ledger write
never fails for it); ``plangate doctor`` reports a ledger without its witness.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from plangate.clock import is_utc_timestamp
from plangate.ledger.config import LedgerLocation
from plangate.records import NamedTuple

WITNESS_DIR = "plangate/ledgers"
"""Where witnesses live, relative to the working tree's git directory."""
FORMAT = "plangate-ledger-witness"
MAX_WITNESS_BYTES = 4096


class Witness(NamedTuple):
    """What the git directory says about a ledger: ``state`` is ``absent``, ``present`` or
    ``unreadable``; ``detail`` is the creation time (present) or the problem (unreadable)."""

    path: str
    state: str
    detail: str = ""


def _key(target: str) -> str:
    from plangate.canonical import sha256_hex

    return sha256_hex(_normal(target).encode("utf-8", "surrogateescape"))[:32]


def _normal(target: str) -> str:
    # As named, links not followed: the key is the path the location resolves to.
    return os.path.normpath(Path(target).absolute())


def witness_path(location: LedgerLocation) -> Path | None:
    """Where the witness of ``location`` lives (None: PostgreSQL, or not in a git working tree)."""
    from plangate.githead import git_dirs

    if location.backend != "sqlite" or not location.repo_root:
        return None
    dirs = git_dirs(location.repo_root)
    if dirs is None:
        return None
    return Path(dirs[0]) / WITNESS_DIR / f"{_key(location.target)}.json"


def witness_bytes(location: LedgerLocation, created: str) -> bytes:
    """The witness file of ``location`` created at ``created`` (canonical JSON)."""
    from plangate.canonical import canonical_bytes

    return canonical_bytes(
        {"created": created, "format": FORMAT, "ledger": _normal(location.target), "version": 1}
    )


def judge_witness(location: LedgerLocation, data: bytes) -> tuple[str, str]:
    """``("present", created)`` for a witness of ``location``, else ``("unreadable", why)``."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return "unreadable", "not JSON"
    if not isinstance(value, dict) or value.get("format") != FORMAT or value.get("version") != 1:
        return "unreadable", f"not a {FORMAT} of version 1"
    if value.get("ledger") != _normal(location.target):
        return "unreadable", "it names another ledger"
    created = value.get("created")
    if not is_utc_timestamp(created) or not isinstance(created, str):
        return "unreadable", "it has no creation time"
    return "present", created


def read_witness(location: LedgerLocation) -> Witness | None:
    """The witness of ``location`` as found (None where no witness can exist)."""
    from plangate.fsutil import FileState, read_regular_file

    path = witness_path(location)
    if path is None:
        return None
    read = read_regular_file(path, MAX_WITNESS_BYTES)
    if read.state is FileState.MISSING:
        return Witness(str(path), "absent")
    if not read.ok or read.data is None:
        return Witness(str(path), "unreadable", read.detail)
    state, detail = judge_witness(location, read.data)
    return Witness(str(path), state, detail)


def record_witness(location: LedgerLocation) -> Path | None:
    """Write the witness of ``location`` unless one is there; its path, or None when there is
    no place for one or it could not be written (best effort: see the module doc)."""
    from plangate.clock import utc_now_text
    from plangate.errors import PlanGateError
    from plangate.fsutil import atomic_write_at, open_verified_dir

    path = witness_path(location)
    if path is None:
        return None
    if os.path.lexists(path):
        return path
    created = utc_now_text()
    git_dir = path.parent.parent.parent
    with contextlib.suppress(PlanGateError, OSError):
        with open_verified_dir(git_dir, WITNESS_DIR, create=True) as directory:
            atomic_write_at(directory, path.name, witness_bytes(location, created), overwrite=False)
        return path
    return path if os.path.lexists(path) else None
