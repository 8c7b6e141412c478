"""SQLite backend (standard library): the embedded default at ``.plangate/ledger.sqlite3``.

- WAL journal, ``synchronous=FULL``: a committed append survives a crash; a
  writer killed mid-append leaves the whole entry or none (SQLite's atomic commit).
- Appends run in ``BEGIN IMMEDIATE`` transactions, so concurrent processes
  take the database's write lock before reading the head and are serialised;
  ``busy_timeout`` makes them wait for it (never longer than a hook's deadline).
- Triggers refuse ``UPDATE`` and ``DELETE`` of entries: an accident cannot
  rewrite history. (Anyone who can write the file can drop the triggers; the
  hash chain is what detects that. See docs/ledger.md, threat model.)
- A ledger file is created whole or not at all: the schema (and, for a
  restart, its first entry) is written into a temporary file in the same
  verified directory, which is then hard-linked into place. Opening never
  creates or repairs anything: a 0-byte file, a file without the schema or a
  partial schema is refused, never silently initialised.
- Readers open the file read-only (``mode=ro``); when the database has no
  write-ahead log beside it they read it as an immutable snapshot, so reading
  leaves no ``-wal``/``-shm`` files behind and works in a read-only directory.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import quote

if TYPE_CHECKING:
    import sqlite3
else:
    # The C module alone. The sqlite3 package adds only adapters for datetime objects,
    # which this ledger never stores (its times are text), and importing datetime for
    # them costs about 1.5 ms in every hook process.
    try:
        import _sqlite3 as sqlite3
    except ImportError:  # an interpreter that ships the package only
        import sqlite3

from plangate.deadlines import LEDGER_LOCK_WAIT_SECONDS
from plangate.ledger.base import (
    BuildEntry,
    Clock,
    Ledger,
    RawRow,
    entry_filter,
    unavailable,
)
from plangate.ledger.chain import GENESIS_PREV_HASH, Head, LedgerEntry, LedgerError
from plangate.verdict import Reason

if TYPE_CHECKING:
    from plangate.fsutil import VerifiedDir

T = TypeVar("T")

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
"""Statements that create the schema of a new ledger file."""

SCHEMA_OBJECTS = frozenset(
    {"ledger_entries", "ledger_head", "ledger_entries_no_update", "ledger_entries_no_delete"}
)

_TABLES = frozenset({"ledger_entries", "ledger_head"})

_COLUMNS = "seq, kind, subject, payload, at, prev_hash, entry_hash"
_INSERT = (
    "INSERT INTO ledger_entries (seq, kind, subject, payload, at, prev_hash, entry_hash) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_STREAM_BATCH = 1000


class FileState:
    """What is at the ledger's path (see :func:`file_state`)."""

    ABSENT = "absent"
    EMPTY = "empty"
    PRESENT = "present"


def file_state(path: Path) -> str:
    """``absent``, ``empty`` (0 bytes) or ``present``; a link or non-file is refused."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return FileState.ABSENT
    except OSError as exc:
        raise unavailable(str(path), exc.strerror or str(exc), "check the permissions") from None
    if stat.S_ISLNK(info.st_mode):
        raise unavailable(
            str(path), "it is a symbolic link", "replace the link by the ledger file itself"
        )
    if not stat.S_ISREG(info.st_mode):
        raise unavailable(str(path), "it is not a regular file", "remove what is in its place")
    return FileState.EMPTY if info.st_size == 0 else FileState.PRESENT


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


class ChangedWhileRead(LedgerError):
    """An immutable read saw the file change underneath it."""


def missing_error(where: str, detail: str) -> LedgerError:
    """The refusal for a file in the ledger's place that holds no ledger."""
    return LedgerError(
        "LEDGER_MISSING",
        f"ledger {where} {detail}; it is never re-created silently",
        "restore the ledger file (or a verified export); to start a new chain, a human runs "
        "'plangate ledger init --force' (the restart is recorded)",
    )


def _read_uri(path: Path, *, immutable: bool) -> str:
    flags = "mode=ro&immutable=1" if immutable else "mode=ro"
    return f"file:{quote(str(path.resolve()))}?{flags}"


class SQLiteLedger(Ledger):
    """A ledger in one existing SQLite database file (opened for writing or read-only)."""

    backend = "sqlite"

    def __init__(self, path: Path, *, read_only: bool = False, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        self.path = path
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None
        self._stamp: tuple[int, int, int] | None = None
        state = file_state(path)
        if state == FileState.ABSENT:
            raise missing_error(str(path), "does not exist")
        if state == FileState.EMPTY:
            raise missing_error(str(path), "is empty (0 bytes)")
        self._conn = self._connect()
        self._check_schema()

    # -- opening ---------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        path = self.path
        try:
            if self.read_only:
                conn = self._connect_read_only()
            else:
                conn = sqlite3.connect(
                    str(path), timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
                )
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
                conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as exc:
            raise unavailable(
                str(path), f"cannot open the database: {exc}", "check the file is a ledger"
            ) from None
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        """Read-only: immutable when no log is beside the file (no side files), else ``mode=ro``."""
        wal = Path(f"{self.path}-wal")
        if not os.path.lexists(wal):
            info = self.path.stat()
            self._stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
            return sqlite3.connect(
                _read_uri(self.path, immutable=True), uri=True, isolation_level=None
            )
        conn = sqlite3.connect(
            _read_uri(self.path, immutable=False),
            uri=True,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_SECONDS,
        )
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.OperationalError:
            # A read-only directory without the shared-memory file: read the
            # file as it is; the stamp check below catches a concurrent writer.
            conn.close()
            info = self.path.stat()
            self._stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
            return sqlite3.connect(
                _read_uri(self.path, immutable=True), uri=True, isolation_level=None
            )
        return conn

    def _check_unchanged(self) -> None:
        """An immutable read is valid only if nobody wrote the file meanwhile."""
        if self._stamp is None:
            return
        try:
            info = self.path.stat()
            changed = (info.st_ino, info.st_size, info.st_mtime_ns) != self._stamp or (
                os.path.lexists(f"{self.path}-wal")
            )
        except OSError:
            changed = True
        if changed:
            raise ChangedWhileRead(
                "LEDGER_UNAVAILABLE",
                f"ledger {self.path} changed while it was being read",
                "retry the read",
            )

    def _reading(self, read: Callable[[], T]) -> T:
        """Run ``read``; if another process wrote the file during an immutable read,
        read again through SQLite's shared read path (a writer is active, so its
        ``-wal`` and ``-shm`` files exist already: nothing new is left behind)."""
        try:
            return read()
        except ChangedWhileRead:
            if not self.read_only or self._stamp is None:
                raise
        self.close()
        self._stamp = None
        try:
            self._conn = sqlite3.connect(
                _read_uri(self.path, immutable=False),
                uri=True,
                isolation_level=None,
                timeout=BUSY_TIMEOUT_SECONDS,
            )
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None
        return read()

    def _check_schema(self) -> None:
        conn = self._connection()
        try:
            names = {
                row[0]
                for row in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')"
                )
            }
        except sqlite3.Error as exc:
            self.close()
            raise unavailable(
                str(self.path), f"it is not a readable database: {exc}", "check the file"
            ) from None
        tables = names & _TABLES
        if not tables:
            self.close()
            raise missing_error(str(self.path), "holds no ledger (no ledger tables)")
        if tables != _TABLES:
            self.close()
            raise LedgerError(
                "LEDGER_SCHEMA_INCOMPLETE",
                f"ledger {self.path} lacks the table {', '.join(sorted(_TABLES - tables))}",
                "someone altered the database: run 'plangate ledger verify', restore it, or start "
                "over with 'plangate ledger init --force'",
            )
        if not self.read_only and not SCHEMA_OBJECTS.issubset(names):
            self._restore_triggers()

    def _restore_triggers(self) -> None:
        """Put dropped append-only triggers back (they only add protection; the chain is
        what detects a rewrite)."""
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            for statement in SCHEMA:
                if statement.lstrip().startswith("CREATE TRIGGER"):
                    conn.execute(statement)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            self.close()
            raise unavailable(
                str(self.path), f"cannot restore the triggers: {exc}", "check the file is writable"
            ) from None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise unavailable(str(self.path), "the ledger is closed", "open it again")
        return self._conn

    def _rollback(self) -> None:
        conn = self._conn
        if conn is not None and conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    @property
    def location(self) -> str:
        """The database file path."""
        return str(self.path)

    def _read_error(self, exc: sqlite3.Error) -> LedgerError:
        return unavailable(str(self.path), f"cannot read: {exc}", "run 'plangate ledger verify'")

    # -- storage primitives ----------------------------------------------------

    def _append_locked(self, build: BuildEntry) -> LedgerEntry:
        if self.read_only:
            raise LedgerError(
                "LEDGER_READ_ONLY", "this ledger was opened read-only", "open it for writing"
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
            raise self._read_error(exc) from None
        self._check_unchanged()
        return [tuple(row) for row in rows]

    def _fetch_newest(self, kind: str, before_seq: int | None, limit: int) -> list[RawRow]:
        # Through the (kind, seq) index, newest first: a lookup, never a decision alone.
        sql = f"SELECT {_COLUMNS} FROM ledger_entries WHERE kind = ?"  # noqa: S608
        params: list[object] = [kind]
        if before_seq is not None:
            sql += " AND seq < ?"
            params.append(before_seq)
        # The order of the (kind, seq) index itself, so the planner walks that index
        # backwards instead of scanning the table for a rare kind.
        sql += " ORDER BY kind DESC, seq DESC LIMIT ?"
        params.append(limit)
        try:
            rows = self._connection().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None
        return [tuple(row) for row in rows]

    def _head(self) -> Head:
        try:
            row = (
                self._connection()
                .execute("SELECT seq, entry_hash FROM ledger_head WHERE id = 1")
                .fetchone()
            )
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None
        if row is None:
            return Head(seq=None, entry_hash=None)
        return Head(seq=row[0], entry_hash=row[1])

    @contextlib.contextmanager
    def _snapshot(self, from_seq: int = 1) -> Iterator[tuple[Head, Iterator[RawRow]]]:
        conn = self._connection()
        try:
            # One read transaction: head and rows come from the same snapshot.
            conn.execute("BEGIN")
            head = self._head()
            # NOT INDEXED: the rows come from the table itself (rowid order),
            # never through a secondary index that could be damaged.
            # Verification from the start reads every row, whatever its seq.
            where, params = ("", ()) if from_seq <= 1 else (" WHERE seq >= ?", (from_seq,))
            cursor = conn.execute(
                f"SELECT {_COLUMNS} FROM ledger_entries NOT INDEXED{where} "  # noqa: S608
                "ORDER BY seq",
                params,
            )
            yield head, _batched(cursor.fetchmany, self._read_error)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            self._check_unchanged()
            raise self._read_error(exc) from None
        except LedgerError:
            # A read error of an immutable read whose file changed meanwhile is a retry.
            self._rollback()
            self._check_unchanged()
            raise
        except BaseException:
            self._rollback()
            raise
        self._check_unchanged()

    def _integrity_problem(self) -> Reason | None:
        """``PRAGMA integrity_check``: pages, indexes against their table, constraints."""
        try:
            rows = self._connection().execute("PRAGMA integrity_check").fetchall()
        except sqlite3.OperationalError as exc:
            # Busy, locked or unopenable says nothing about the data: a read error, which
            # an immutable read whose file changed meanwhile turns into a retry.
            self._check_unchanged()
            raise self._read_error(exc) from None
        except sqlite3.DatabaseError as exc:
            self._check_unchanged()
            return Reason(
                "LEDGER_INTEGRITY_FAILED",
                f"the database cannot be checked: {exc}",
                "restore the ledger from a verified export or a backup",
            )
        problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
        if not problems:
            return None
        # An immutable read of a file another process rewrote meanwhile can see torn
        # pages: that is a changed file (read again), not a damaged one.
        self._check_unchanged()
        shown = "; ".join(problems[:3]) + (
            f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        return Reason(
            "LEDGER_INTEGRITY_FAILED",
            f"the database is damaged: {shown}",
            "restore the ledger from a verified export or a backup; 'REINDEX' repairs only "
            "damaged indexes",
        )

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._rollback()
            self._conn.close()
            self._conn = None


def _batched(
    fetch: Callable[[int], list[tuple[object, ...]]],
    error: Callable[[sqlite3.Error], LedgerError],
) -> Iterator[RawRow]:
    while True:
        try:
            batch = fetch(_STREAM_BATCH)
        except sqlite3.Error as exc:
            raise error(exc) from None
        if not batch:
            return
        yield from batch  # tuples: the connection has no row factory


# -- creation ------------------------------------------------------------------


def _fd_path(directory: VerifiedDir, name: str) -> str:
    """A path that reaches ``name`` through the open directory (Linux), else by name."""
    proc = f"/proc/self/fd/{directory.fd}"
    if Path(proc).is_dir():
        return f"{proc}/{name}"
    return str(directory.path / name)


def create_file(
    directory: VerifiedDir,
    name: str,
    *,
    first: Callable[[Ledger], None] | None = None,
    durable: bool = True,
) -> bool:
    """Create the ledger file ``name`` in ``directory`` whole: schema, genesis head, and
    the entries ``first`` appends (a restart's record), then link it into place.

    ``durable=False`` writes without waiting for the disk (a box's ledger: it lives as
    long as its run, and what it holds is read back before the run's directory goes).
    Returns False when a ledger file appeared there meanwhile (nothing replaced).
    """
    import secrets

    tmp = f".{name}.{secrets.token_hex(8)}.creating"
    dfd = directory.fd
    where = directory.shown(name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dfd)
        os.close(fd)
    except OSError as exc:
        raise unavailable(
            where, f"cannot create it: {exc.strerror or exc}", "check the directory is writable"
        ) from None
    try:
        _build(Path(_fd_path(directory, tmp)), where, first, durable=durable)
        if os.stat(tmp, dir_fd=dfd, follow_symlinks=False).st_size == 0:
            raise unavailable(where, "the new database was not written", "retry")
        try:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        except FileExistsError:
            return False
        if durable:
            with contextlib.suppress(OSError):
                os.fsync(dfd)
        return True
    except OSError as exc:
        raise unavailable(
            where, f"cannot create it: {exc.strerror or exc}", "check the directory is writable"
        ) from None
    finally:
        for leftover in (tmp, f"{tmp}-wal", f"{tmp}-shm", f"{tmp}-journal"):
            with contextlib.suppress(OSError):
                os.unlink(leftover, dir_fd=dfd)


def _build(
    path: Path, where: str, first: Callable[[Ledger], None] | None, *, durable: bool = True
) -> None:
    try:
        conn = sqlite3.connect(str(path), isolation_level=None)
    except sqlite3.Error as exc:
        raise unavailable(where, f"cannot create it: {exc}", "check the directory") from None
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'OFF'}")
        conn.execute("BEGIN IMMEDIATE")
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO ledger_head (id, seq, entry_hash) VALUES (1, 0, ?)", (GENESIS_PREV_HASH,)
        )
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise unavailable(
            where, f"cannot create the schema: {exc}", "check the directory"
        ) from None
    finally:
        conn.close()
    if first is not None:
        with SQLiteLedger(path) as ledger:
            first(ledger)
