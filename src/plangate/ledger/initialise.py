"""``plangate ledger init``: create a ledger explicitly, or start over on purpose.

- Without ``force``: an intact ledger is left alone (``exists``); an absent one
  is created (``created``) unless the repository says one existed
  (``LEDGER_MISSING``, see :mod:`plangate.ledger.existence`); a file or tables
  in its place that hold no ledger are refused with the same hint.
- With ``force`` (a human starting over): whatever is in the ledger's place is
  moved aside, never deleted (the SQLite file and its journal files get the
  suffix ``.replaced-<UTC time>``, PostgreSQL tables and indexes
  ``_replaced_<UTC time>``), and a new chain is created whose first entry,
  kind ``ledger_reinitialised``, records the restart: the previous head (seq and
  hash) when it could be read, what was found, where it was moved and the
  repository's traces. The new file is complete before it is linked into place.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.ledger import (
    Ledger,
    LedgerError,
    LedgerLocation,
    _ignore_default_ledger,
    _ledger_dir,
    missing,
    repository_evidence,
)
from plangate.ledger.chain import Head
from plangate.ledger.witness import record_witness
from plangate.records import NamedTuple

if TYPE_CHECKING:
    from plangate.ledger.postgres import PostgresLedger

KIND_REINITIALISED = "ledger_reinitialised"


class InitOutcome(NamedTuple):
    """What ``ledger init`` did."""

    action: str  # "created", "exists" or "reinitialised"
    location: str
    previous_state: str | None = None
    previous_head: Head | None = None
    moved_to: str | None = None
    witness: str | None = None
    """This working tree's witness of a SQLite ledger (None: PostgreSQL, or no git)."""


def _payload(
    previous_state: str, head: Head | None, moved_to: str | None, evidence: tuple[str, ...]
) -> dict[str, Any]:
    usable = head is not None and isinstance(head.seq, int) and not isinstance(head.seq, bool)
    return {
        "previous_state": previous_state,
        "previous_head_seq": head.seq if usable and head is not None else None,
        "previous_head_hash": head.entry_hash
        if usable and head is not None and isinstance(head.entry_hash, str)
        else None,
        "moved_aside_to": moved_to,
        "repository_traces": list(evidence),
    }


def _stamp() -> str:
    from plangate.clock import utc_now

    return utc_now().strftime("%Y%m%dT%H%M%SZ")


def initialise(location: LedgerLocation, *, force: bool) -> InitOutcome:
    """Create the ledger at ``location`` (or start over with ``force``); see the module doc."""
    if location.backend == "sqlite":
        return _sqlite(location, force=force)
    return _postgres(location, force=force)


def _sqlite_state(path: Path) -> tuple[str, Head | None, LedgerError | None]:
    """(state, head when readable, the error that refuses it without force)."""
    from plangate.ledger.sqlite import FileState, SQLiteLedger, file_state

    state = file_state(path)
    if state == FileState.ABSENT:
        return "absent", None, None
    if state == FileState.EMPTY:
        return "empty", None, None
    try:
        with SQLiteLedger(path, read_only=True) as ledger:
            return "present", ledger.head(), None
    except LedgerError as exc:
        return "not_a_ledger", None, exc


def _sqlite(location: LedgerLocation, *, force: bool) -> InitOutcome:
    from plangate.ledger.sqlite import create_file, missing_error

    path = Path(location.target)
    state, head, problem = _sqlite_state(path)
    if not force:
        if state == "present":
            witness = record_witness(location)
            return InitOutcome(
                "exists", str(path), state, head, witness=None if witness is None else str(witness)
            )
        if state == "empty":
            raise missing_error(str(path), "is empty (0 bytes)")
        if problem is not None:
            raise problem
        evidence = repository_evidence(location)
        if evidence:
            raise missing(location, "does not exist", evidence)
    evidence = repository_evidence(location) if force else ()
    with _ledger_dir(location, create=True) as directory:
        moved_to: str | None = None
        if state != "absent":
            moved_to = f"{path.name}.replaced-{_stamp()}"
            _move_aside(directory.fd, path.name, moved_to)

        def first(ledger: Ledger) -> None:
            if force:
                ledger.append(KIND_REINITIALISED, "-", _payload(state, head, moved_to, evidence))

        if not create_file(directory, path.name, first=first):
            raise LedgerError(
                "LEDGER_UNAVAILABLE",
                f"ledger {path} was created by another process meanwhile",
                "run 'plangate ledger verify' and look at what is there before retrying",
            )
        if location.source == "default":
            _ignore_default_ledger(directory)
    witness = record_witness(location)
    action = "reinitialised" if force else "created"
    return InitOutcome(
        action, str(path), state, head, moved_to, None if witness is None else str(witness)
    )


def _move_aside(dir_fd: int, name: str, moved_to: str) -> None:
    """Rename the database and its journal files aside, relative to the verified directory."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.rename(
                f"{name}{suffix}", f"{moved_to}{suffix}", src_dir_fd=dir_fd, dst_dir_fd=dir_fd
            )
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise LedgerError(
                "LEDGER_UNAVAILABLE",
                f"cannot move {name}{suffix} aside: {exc.strerror or exc}",
                "check the ledger's directory is writable",
            ) from None
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def _postgres(location: LedgerLocation, *, force: bool) -> InitOutcome:
    from plangate.ledger.postgres import PostgresLedger

    ledger = PostgresLedger(location.target)
    try:
        return _postgres_on(ledger, location, force=force)
    finally:
        ledger.close()


def _postgres_on(ledger: PostgresLedger, location: LedgerLocation, *, force: bool) -> InitOutcome:
    try:
        state = "present" if ledger.schema_state() == "complete" else "absent"
    except LedgerError as exc:
        if not force:
            raise
        state = "not_a_ledger" if exc.code == "LEDGER_SCHEMA_INCOMPLETE" else "unreadable"
    if not force:
        if state == "present":
            return InitOutcome("exists", ledger.location, state, ledger.head())
        evidence = repository_evidence(location)
        if evidence:
            raise missing(location, "has no tables", evidence)
        ledger.create_schema()
        return InitOutcome("created", ledger.location, state)
    head: Head | None = None
    if state == "present":
        with contextlib.suppress(LedgerError):
            head = ledger.head()
    evidence = repository_evidence(location)
    suffix = f"_replaced_{_stamp()}"
    moved_to = f"plangate_ledger_*{suffix}" if state != "absent" else None

    def first(new: Ledger) -> None:
        new.append(KIND_REINITIALISED, "-", _payload(state, head, moved_to, evidence))

    ledger.create_schema(first=first, replace_suffix=suffix)
    return InitOutcome("reinitialised", ledger.location, state, head, moved_to)
