"""The tamper-evident decision ledger.

::

    from plangate.ledger import open_ledger
    with open_ledger(repo_root, env) as ledger:
        entry = ledger.append("c3_issue", task_id, {"decision": "AUTO_APPROVED", ...})
        ledger.entries(kind="c3_issue", subject=task_id)
        ledger.verify()  # Result: INTACT (exit 0) or TAMPERED (exit 1, first_bad_seq)

The backend is chosen by :func:`plangate.ledger.config.resolve_location`:
SQLite at ``<repo>/.plangate/ledger.sqlite3`` by default, PostgreSQL when
``PLANGATE_LEDGER_URL`` (or ``.plangate/config.toml`` ``[ledger] url``) is a
``postgresql://`` URL. See docs/ledger.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

from plangate.errors import PlanGateError
from plangate.fsutil import atomic_write
from plangate.ledger.base import Clock, Ledger
from plangate.ledger.chain import (
    GENESIS_PREV_HASH,
    LedgerEntry,
    LedgerError,
)
from plangate.ledger.config import LedgerLocation, resolve_location

__all__ = [
    "GENESIS_PREV_HASH",
    "Ledger",
    "LedgerEntry",
    "LedgerError",
    "LedgerLocation",
    "open_ledger",
    "open_location",
    "resolve_location",
]


def open_ledger(
    repo_root: Path, env: Mapping[str, str], *, create: bool = True, clock: Clock | None = None
) -> Ledger:
    """Open the ledger of ``repo_root`` as configured by ``env`` and the repository.

    With ``create=False`` a missing SQLite ledger is read as empty and no file
    is created (for read-only commands). Raises :class:`LedgerError` with a
    hint when the configuration is bad or the ledger cannot be opened.
    """
    return open_location(resolve_location(Path(repo_root), env), create=create, clock=clock)


_GITIGNORE = (
    b"# written by plangate: the local ledger database is not source\n"
    b"/ledger.sqlite3\n/ledger.sqlite3-*\n"
)


def _ignore_default_ledger(directory: Path) -> None:
    """Write ``.plangate/.gitignore`` for the database files unless one exists.

    The SQLite file lives in the work tree; untracked database files would
    otherwise show up in ``git status`` and in every dirty-tree check.
    """
    target = directory / ".gitignore"
    if target.exists() or target.is_symlink():
        return
    # Best effort: a missing ignore file never blocks a ledger write.
    with contextlib.suppress(PlanGateError, OSError):
        atomic_write(target, _GITIGNORE, overwrite=False)


def open_location(
    location: LedgerLocation, *, create: bool = True, clock: Clock | None = None
) -> Ledger:
    """Open an already resolved :class:`LedgerLocation`."""
    if location.backend == "sqlite":
        from plangate.ledger.sqlite import SQLiteLedger

        ledger = SQLiteLedger(Path(location.target), create=create, clock=clock)
        if create and location.source == "default":
            _ignore_default_ledger(Path(location.target).parent)
        return ledger
    if location.backend == "postgresql":
        from plangate.ledger.postgres import PostgresLedger

        return PostgresLedger(location.target, clock=clock)
    raise LedgerError(
        "LEDGER_URL_INVALID",
        f"unknown ledger backend {location.backend!r}",
        "use a postgresql:// or sqlite: URL",
    )
