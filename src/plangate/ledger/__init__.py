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
from typing import TYPE_CHECKING

from plangate.layout import PLANGATE_DIR
from plangate.ledger.base import Clock, EmptyLedger, Ledger
from plangate.ledger.chain import (
    GENESIS_PREV_HASH,
    LedgerEntry,
    LedgerError,
)
from plangate.ledger.config import LedgerLocation, resolve_location
from plangate.ledger.traces import IGNORE_FILE_HEADER

if TYPE_CHECKING:
    from plangate.fsutil import VerifiedDir

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
    repo_root: Path,
    env: Mapping[str, str],
    *,
    create: bool = True,
    must_exist: bool = False,
    clock: Clock | None = None,
) -> Ledger:
    """Open the ledger of ``repo_root`` as configured by ``env`` and the repository.

    - ``create=True`` (writers): an absent ledger is created, unless the
      repository says one existed (:mod:`plangate.ledger.existence`): then
      ``LEDGER_MISSING``. ``must_exist=True`` never creates (the hooks).
    - ``create=False`` (readers): opened read-only; an absent ledger reads as
      empty, unless the repository says one existed (``LEDGER_MISSING``).

    A file or tables in the ledger's place that hold no ledger (a 0-byte file,
    no tables) are ``LEDGER_MISSING`` in every mode. Raises :class:`LedgerError`
    with a hint when the configuration is bad or the ledger cannot be opened.
    """
    return open_location(
        resolve_location(Path(repo_root), env), create=create, must_exist=must_exist, clock=clock
    )


_GITIGNORE = (
    IGNORE_FILE_HEADER + b"/ledger.sqlite3\n/ledger.sqlite3-*\n/ledger.sqlite3.*\n"
    b"/.ledger.sqlite3.*\n"
)


def _ledger_dir(location: LedgerLocation, *, create: bool) -> VerifiedDir:
    """The directory of a SQLite ledger, opened without following links.

    For the default location that is ``.plangate/`` below the repository root
    (created when ``create``); a configured path's directory is taken as given.
    """
    from plangate.errors import PlanGateError
    from plangate.fsutil import open_verified_dir

    target = Path(location.target)
    try:
        if location.source == "default" and location.repo_root:
            return open_verified_dir(Path(location.repo_root), PLANGATE_DIR, create=create)
        if create:
            target.parent.mkdir(parents=True, exist_ok=True)
        return open_verified_dir(target.parent)
    except OSError as exc:
        raise LedgerError(
            "LEDGER_UNAVAILABLE",
            f"ledger {target} is unavailable: {exc.strerror or exc}",
            "make the ledger's directory a real, writable directory",
        ) from None
    except PlanGateError as exc:
        raise LedgerError(
            "LEDGER_UNAVAILABLE",
            f"ledger {target} is unavailable: {exc.message}",
            exc.hint or "make the ledger's directory a real, writable directory",
        ) from None


def _ignore_default_ledger(directory: VerifiedDir) -> None:
    """Write ``.plangate/.gitignore`` for the database files unless one exists.

    Written relative to the verified directory: never through a link.
    """
    from plangate.errors import PlanGateError
    from plangate.fsutil import atomic_write_at

    # Best effort: a missing ignore file never blocks a ledger write.
    with contextlib.suppress(PlanGateError, OSError):
        atomic_write_at(directory, ".gitignore", _GITIGNORE, overwrite=False)


def missing(location: LedgerLocation, detail: str, evidence: tuple[str, ...]) -> LedgerError:
    """``LEDGER_MISSING``: an absent ledger that must not be created here."""
    said = f"; it existed ({'; '.join(evidence)})" if evidence else ""
    return LedgerError(
        "LEDGER_MISSING",
        f"ledger {location.display} {detail}{said}; it is never re-created silently",
        "restore the ledger (or a verified export); to start a new chain, a human runs "
        "'plangate ledger init --force' (the restart is recorded)",
    )


def repository_evidence(location: LedgerLocation) -> tuple[str, ...]:
    """What in the repository says this ledger existed (see plangate.ledger.existence)."""
    from plangate.ledger.existence import evidence_of_a_ledger
    from plangate.ledger.traces import gather_traces
    from plangate.ledger.witness import read_witness

    if not location.repo_root:
        return ()
    sqlite_path = Path(location.target) if location.backend == "sqlite" else None
    traces = gather_traces(
        Path(location.repo_root),
        sqlite_path,
        default_location=location.source == "default",
        witness=read_witness(location),
    )
    return evidence_of_a_ledger(traces)


def open_location(
    location: LedgerLocation,
    *,
    create: bool = True,
    must_exist: bool = False,
    clock: Clock | None = None,
) -> Ledger:
    """Open an already resolved :class:`LedgerLocation` (modes: see :func:`open_ledger`)."""
    if location.backend == "sqlite":
        return _open_sqlite(location, create=create, must_exist=must_exist, clock=clock)
    if location.backend == "postgresql":
        return _open_postgres(location, create=create, must_exist=must_exist, clock=clock)
    raise LedgerError(
        "LEDGER_URL_INVALID",
        f"unknown ledger backend {location.backend!r}",
        "use a postgresql:// or sqlite: URL",
    )


def _open_sqlite(
    location: LedgerLocation, *, create: bool, must_exist: bool, clock: Clock | None
) -> Ledger:
    from plangate.ledger.sqlite import FileState, SQLiteLedger, create_file, file_state

    path = Path(location.target)
    if location.source == "default" and location.repo_root:
        plangate_dir = Path(location.repo_root) / PLANGATE_DIR
        if plangate_dir.is_symlink():
            raise LedgerError(
                "LEDGER_UNAVAILABLE",
                f"ledger {path} is unavailable: {PLANGATE_DIR} is a symbolic link",
                f"make {PLANGATE_DIR} a real directory (remove the link)",
            )
    from plangate.ledger.witness import record_witness

    if file_state(path) == FileState.ABSENT:
        refusal = _absent_refusal(location, "does not exist", must_exist=must_exist)
        # Another process may have created it meanwhile (and with it a trace, its
        # ignore file): a ledger that is there now is opened, not refused.
        if refusal is not None and file_state(path) == FileState.ABSENT:
            raise refusal
        if refusal is None and not create:
            return EmptyLedger("sqlite", str(path))
        if refusal is None:
            with _ledger_dir(location, create=True) as directory:
                create_file(directory, path.name)
                if location.source == "default":
                    _ignore_default_ledger(directory)
    ledger = SQLiteLedger(path, read_only=not create, clock=clock)
    if create and not must_exist:
        # A writer records the witness (a ledger made before witnesses existed gets
        # its own here); the hooks never write one.
        record_witness(location)
    return ledger


def _open_postgres(
    location: LedgerLocation, *, create: bool, must_exist: bool, clock: Clock | None
) -> Ledger:
    from plangate.ledger.postgres import PostgresLedger

    ledger = PostgresLedger(location.target, read_only=not create, clock=clock)
    try:
        absent = ledger.schema_state() == "absent"
        refusal = (
            _absent_refusal(location, "has no tables", must_exist=must_exist) if absent else None
        )
        if refusal is not None and ledger.schema_state() != "absent":
            refusal, absent = None, False  # created meanwhile by another process: open it
    except BaseException:
        ledger.close()
        raise
    if refusal is not None:
        ledger.close()
        raise refusal
    if absent and not create:
        ledger.close()
        return EmptyLedger("postgresql", ledger.location)
    if absent:
        try:
            ledger.create_schema()
        except BaseException:
            ledger.close()
            raise
    return ledger


def _absent_refusal(
    location: LedgerLocation, detail: str, *, must_exist: bool
) -> LedgerError | None:
    """Why an absent ledger must not be created here (None: it may be, it is new)."""
    if must_exist:
        return missing(location, detail, ())
    evidence = repository_evidence(location)
    return missing(location, detail, evidence) if evidence else None
