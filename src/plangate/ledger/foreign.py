"""A SQLite ledger file PlanGate did not keep (a box's): read from a private copy, judged whole.

:func:`read_foreign_sqlite` reads such a file as untrusted input. The file (and
its ``-wal`` log, if any) is read once, without following a link, bounded in
size, and copied into a private directory; only the copy is opened, so nothing
the file's writer placed beside it (a link, a shared-memory file) is touched.
The copy's schema must be exactly the one PlanGate creates (no view, trigger,
index or table of anyone else's; compared with the schema of a freshly created
ledger, never executed with trusted-schema functions), then its hash chain is
verified and its entries are read, at most ``max_entries``.

The answer is a status, never an exception: ``MISSING``, ``OVERSIZED``,
``MALFORMED`` (not a regular file, not a database, another schema, unreadable),
``TAMPERED`` (the chain does not verify) or ``INTACT`` with the entries.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import tempfile
from pathlib import Path

from plangate.canonical import sha256_digest
from plangate.errors import PlanGateError
from plangate.fsutil import FileState, atomic_write, read_regular_file
from plangate.ledger.chain import LedgerEntry
from plangate.records import NamedTuple

MISSING = "MISSING"
OVERSIZED = "OVERSIZED"
MALFORMED = "MALFORMED"
TAMPERED = "TAMPERED"
INTACT = "INTACT"


class ForeignRead(NamedTuple):
    """What a foreign ledger file held: a status, why, its digest and, when intact, entries."""

    status: str
    detail: str = ""
    digest: str = ""
    size: int = 0
    entries: tuple[LedgerEntry, ...] = ()


def _schema(path: Path) -> set[tuple[str, str, str]] | None:
    """``(type, name, sql)`` of every schema object, read without trusting the schema."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        problems = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if problems != [("ok",)]:
        return None
    return {(str(t), str(n), str(s)) for t, n, s in rows}


@functools.cache
def _reference_schema() -> frozenset[tuple[str, str, str]]:
    """The schema objects a ledger is created with (the same statements in memory: the
    rows of ``sqlite_master`` do not depend on the file, its journal or its pages)."""
    from plangate.ledger.sqlite import SCHEMA

    with contextlib.closing(sqlite3.connect(":memory:", isolation_level=None)) as conn:
        for statement in SCHEMA:
            conn.execute(statement)
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    return frozenset((str(t), str(n), str(s)) for t, n, s in rows)


def read_foreign_sqlite(
    directory: Path, name: str, *, max_bytes: int, max_entries: int, pristine: str = ""
) -> ForeignRead:
    """Read the ledger ``directory/name`` as untrusted input (see the module docstring).

    ``pristine``: the digest of the empty ledger PlanGate itself made there. A file with
    no ``-wal`` log whose bytes still hash to it is that ledger, intact and empty: it is
    not opened."""
    main = read_regular_file(directory / name, max_bytes)
    if main.state is FileState.MISSING:
        return ForeignRead(MISSING, "the file does not exist")
    if main.state is FileState.TOO_LARGE:
        return ForeignRead(OVERSIZED, f"the file {main.detail}")
    if not main.ok or main.data is None:
        return ForeignRead(MALFORMED, f"the file {main.detail}")
    if not main.data:
        return ForeignRead(MALFORMED, "the file is empty")
    wal = read_regular_file(directory / f"{name}-wal", max_bytes)
    if wal.state not in (FileState.OK, FileState.MISSING):
        status = OVERSIZED if wal.state is FileState.TOO_LARGE else MALFORMED
        return ForeignRead(status, f"its -wal log {wal.detail}")
    log = wal.data or b""
    size = len(main.data) + len(log)
    if size > max_bytes:
        return ForeignRead(OVERSIZED, f"the file and its log are {size} bytes (limit {max_bytes})")
    digest = sha256_digest(main.data + log)
    if pristine and not log and digest == pristine:
        return ForeignRead(INTACT, "", digest, size)
    with tempfile.TemporaryDirectory(prefix="plangate-foreign-") as tmp:
        private = Path(tmp)
        copy = private / "copy.sqlite3"
        atomic_write(copy, main.data, mode=0o600)
        if log:
            atomic_write(private / "copy.sqlite3-wal", log, mode=0o600)
        return _judge(copy, digest, size, max_entries)


def _judge(copy: Path, digest: str, size: int, max_entries: int) -> ForeignRead:
    from plangate.ledger.sqlite import SQLiteLedger

    def bad(status: str, detail: str) -> ForeignRead:
        return ForeignRead(status, detail, digest, size)

    try:
        reference = _reference_schema()
    except sqlite3.Error as exc:
        return bad(MALFORMED, f"no reference schema could be made: {exc}")
    try:
        # Opening for writing (a private copy) folds a -wal log into the database first.
        with contextlib.closing(sqlite3.connect(str(copy), isolation_level=None)) as conn:
            conn.execute("PRAGMA trusted_schema = OFF")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error as exc:
        return bad(MALFORMED, f"not a readable SQLite database: {exc}")
    found = _schema(copy)
    if found is None:
        return bad(MALFORMED, "not a readable SQLite database (integrity check failed)")
    if found != reference:
        return bad(MALFORMED, "its schema is not the ledger's (objects added, dropped or altered)")
    try:
        with SQLiteLedger(copy, read_only=True) as ledger:
            verdict = ledger.verify()
            if not verdict.accepted:
                first = verdict.reasons[0] if verdict.reasons else None
                what = f"{first.code}: {first.message}" if first else "the chain does not verify"
                return bad(TAMPERED, what)
            entries = tuple(ledger.entries())
    except (PlanGateError, sqlite3.Error, OSError, ValueError) as exc:
        return bad(MALFORMED, f"it cannot be read as a ledger: {exc}")
    if len(entries) > max_entries:
        return bad(OVERSIZED, f"it holds {len(entries)} entries (limit {max_entries})")
    return ForeignRead(INTACT, "", digest, size, entries)
