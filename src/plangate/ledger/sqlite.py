"""SQLite backend (standard library): the embedded default at ``.plangate/ledger.sqlite3``.

- WAL journal, ``synchronous=FULL``: a committed append survives a crash; a
  writer killed mid-append leaves the whole entry or none (SQLite's atomic commit).
- Appends run in ``BEGIN IMMEDIATE`` transactions, so concurrent processes
  take the database's write lock before reading the head and are serialised;
  ``busy_timeout`` makes them wait for it instead of failing.
- Triggers refuse ``UPDATE`` and ``DELETE`` of entries: an accident cannot
  rewrite history. (Anyone who can write the file can drop the triggers; the
  hash chain is what detects that. See docs/ledger.md, threat model.)
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from plangate.deadlines import LEDGER_LOCK_WAIT_SECONDS
from plangate.ledger.base import BuildEntry, Clock, Ledger, RawRow, entry_filter, unavailable
from plangate.ledger.chain import GENESIS_PREV_HASH, Head, LedgerEntry, LedgerError

if TYPE_CHECKING:
    from plangate.ledger.rows import StoredRow

BUSY_TIMEOUT_SECONDS = float(LEDGER_LOCK_WAIT_SECONDS)
"""How long an append waits for another process's write lock before failing
(shorter than a hook's deadline: see plangate.deadlines)."""

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS ledger_entries (
        seq        INTEGER PRIMARY KEY,
        kind       TEXT NOT NULL,
        subject    TEXT NOT NULL,
        payload    TEXT NOT NULL,
        at         TEXT NOT NULL,
        prev_hash  TEXT NOT NULL,
        entry_hash TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS ledger_entries_kind ON ledger_entries (kind, seq)",
    "CREATE INDEX IF NOT EXISTS ledger_entries_subject ON ledger_entries (subject, seq)",
    """CREATE TABLE IF NOT EXISTS ledger_head (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        seq        INTEGER NOT NULL,
        entry_hash TEXT NOT NULL
    )""",
    """CREATE TRIGGER IF NOT EXISTS ledger_entries_no_update BEFORE UPDATE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'plangate ledger entries are append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS ledger_entries_no_delete BEFORE DELETE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'plangate ledger entries are append-only'); END""",
)
"""Statements that create the schema when missing (each idempotent)."""

_SCHEMA_OBJECTS = frozenset(
    {"ledger_entries", "ledger_head", "ledger_entries_no_update", "ledger_entries_no_delete"}
)

# The genesis head is written only into an empty ledger: a head that went
# missing later is never silently recreated (verify reports it, appends refuse).
_INSERT_GENESIS_HEAD = (
    "INSERT OR IGNORE INTO ledger_head (id, seq, entry_hash) "
    "SELECT 1, 0, ? WHERE NOT EXISTS (SELECT 1 FROM ledger_entries)"
)

_COLUMNS = "seq, kind, subject, payload, at, prev_hash, entry_hash"
_INSERT = (
    "INSERT INTO ledger_entries (seq, kind, subject, payload, at, prev_hash, entry_hash) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _head_values(row: tuple[object, ...] | None, path: Path) -> tuple[int, str]:
    """(seq, entry_hash) of the head row; a missing or malformed head refuses the append."""
    if row is None or isinstance(row[0], bool) or not isinstance(row[0], int):
        raise unavailable(
            str(path), "the head record is missing or malformed", "run 'plangate ledger verify'"
        )
    return row[0], str(row[1])


def _is_busy(exc: sqlite3.Error) -> bool:
    """True when SQLite gave up waiting for another connection's lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


class SQLiteLedger(Ledger):
    """A ledger in one SQLite database file (or an empty read-only stand-in)."""

    backend = "sqlite"

    def __init__(self, path: Path, *, create: bool = True, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        self.path = path
        self._read_only_empty = False
        self._conn: sqlite3.Connection | None = None
        if path.is_symlink():
            raise unavailable(
                str(path), "it is a symbolic link", "replace the link by the ledger file itself"
            )
        if not create and not path.exists():
            # Reading a ledger that was never written: behave as an empty ledger
            # without creating files as a side effect of 'ledger log'/'verify'.
            self._read_only_empty = True
            self._conn = sqlite3.connect(":memory:", isolation_level=None)
            self._init_schema()
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise unavailable(
                str(path), str(exc), "check that the directory exists and is writable"
            ) from None
        self._conn = conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as exc:
            self.close()
            raise unavailable(
                str(path), f"cannot configure the database: {exc}", "check the file is a ledger"
            ) from None
        self._init_schema()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise unavailable(str(self.path), "the ledger is closed", "open it again")
        return self._conn

    def _schema_complete(self) -> bool:
        """True when every table, trigger and the head row exist (the common case).

        Checked without a write lock so that opening an existing ledger (every
        hook call does) never queues behind another process's append.
        """
        conn = self._connection()
        try:
            names = {
                row[0]
                for row in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')"
                )
            }
            if not _SCHEMA_OBJECTS.issubset(names):
                return False
            return conn.execute("SELECT 1 FROM ledger_head WHERE id = 1").fetchone() is not None
        except sqlite3.Error:
            return False

    def _init_schema(self) -> None:
        if self._schema_complete():
            return
        conn = self._connection()
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute("BEGIN IMMEDIATE")
            for statement in SCHEMA:
                conn.execute(statement)
            conn.execute(_INSERT_GENESIS_HEAD, (GENESIS_PREV_HASH,))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            self.close()
            raise unavailable(
                str(self.path),
                f"cannot create or open the schema: {exc}",
                "check the file is a PlanGate ledger and is writable",
            ) from None

    def _rollback(self) -> None:
        conn = self._conn
        if conn is not None and conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    @property
    def location(self) -> str:
        """The database file path."""
        return str(self.path)

    def _append_locked(self, build: BuildEntry) -> LedgerEntry:
        if self._read_only_empty:
            raise LedgerError(
                "LEDGER_READ_ONLY", "this ledger was opened read-only", "open it with create=True"
            )
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute("SELECT seq, entry_hash FROM ledger_head WHERE id = 1").fetchone()
            entry, payload_text = build(*_head_values(row, self.path))
            conn.execute(
                _INSERT,
                (
                    entry.seq,
                    entry.kind,
                    entry.subject,
                    payload_text,
                    entry.at,
                    entry.prev_hash,
                    entry.entry_hash,
                ),
            )
            conn.execute(
                "UPDATE ledger_head SET seq = ?, entry_hash = ? WHERE id = 1",
                (entry.seq, entry.entry_hash),
            )
            conn.execute("COMMIT")
            return entry
        except sqlite3.Error as exc:
            self._rollback()
            if _is_busy(exc):
                raise LedgerError(
                    "LEDGER_LOCK_TIMEOUT",
                    f"ledger {self.path}: another process held the write lock for more than "
                    f"{BUSY_TIMEOUT_SECONDS:.0f}s",
                    "find the process holding the ledger open in a write transaction, then retry",
                ) from None
            raise unavailable(
                str(self.path),
                f"append failed: {exc}",
                "check the ledger file is writable; run 'plangate ledger verify'",
            ) from None
        except BaseException:
            self._rollback()
            raise

    def _fetch(self, kind: str | None = None, subject: str | None = None) -> list[RawRow]:
        where, params = entry_filter(kind, subject, "?")
        sql = f"SELECT {_COLUMNS} FROM ledger_entries{where} ORDER BY seq"  # noqa: S608
        try:
            rows = self._connection().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise unavailable(str(self.path), f"cannot read: {exc}", "check the file") from None
        return [tuple(row) for row in rows]

    def _head(self) -> Head:
        try:
            row = (
                self._connection()
                .execute("SELECT seq, entry_hash FROM ledger_head WHERE id = 1")
                .fetchone()
            )
        except sqlite3.Error as exc:
            raise unavailable(str(self.path), f"cannot read: {exc}", "check the file") from None
        if row is None:
            return Head(seq=None, entry_hash=None)
        return Head(seq=row[0], entry_hash=row[1])

    def _read_snapshot(self) -> tuple[list[StoredRow], Head]:
        conn = self._connection()
        try:
            # One read transaction: rows and head come from the same snapshot.
            conn.execute("BEGIN")
            rows = list(self._rows())
            head = self._head()
            conn.execute("COMMIT")
        except LedgerError:
            self._rollback()
            raise
        except sqlite3.Error as exc:
            self._rollback()
            raise unavailable(str(self.path), f"cannot read: {exc}", "check the file") from None
        return rows, head

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._rollback()
            self._conn.close()
            self._conn = None
