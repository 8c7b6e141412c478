"""PostgreSQL backend (psycopg 3, imported lazily): one ledger shared by a team.

- Tables ``plangate_ledger_entries`` and ``plangate_ledger_head`` in the
  connection's ``search_path`` (put ``?options=-csearch_path%3Dmyschema`` in the
  URL to use another schema). They are created only where a new ledger may be
  (see plangate.ledger.existence), under a transaction-scoped advisory lock so
  two first users do not race; opening never creates or alters anything except
  putting dropped append-only triggers back for a writer.
- Every session sets ``lock_timeout`` and ``statement_timeout`` below a hook's
  deadline (plangate.deadlines); a timeout is its own reason code.
- An append is one transaction that locks the head row (``SELECT ... FOR
  UPDATE``) before reading it: concurrent appenders queue on that row lock, so
  sequence numbers never repeat and the chain never forks. A client killed
  mid-append leaves an aborted transaction: the whole entry or none.
- Triggers refuse ``UPDATE``, ``DELETE`` and ``TRUNCATE`` of entries (an
  accident cannot rewrite history; the table owner can still drop them, which
  the hash chain then detects).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from plangate.deadlines import (
    LEDGER_CONNECT_TIMEOUT_SECONDS,
    LEDGER_LOCK_WAIT_SECONDS,
    LEDGER_STATEMENT_TIMEOUT_SECONDS,
)
from plangate.ledger.base import BuildEntry, Clock, Ledger, RawRow, entry_filter, unavailable
from plangate.ledger.chain import GENESIS_PREV_HASH, Head, LedgerEntry, LedgerError
from plangate.ledger.credentials import redact_credentials, url_secrets

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

_SESSION_TIMEOUTS = (
    "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)"
)
"""Every wait of this session ends before a hook's deadline (see plangate.deadlines)."""

# SQLSTATEs of the two timeouts: lock_not_available, query_canceled.
_TIMEOUT_CODES = {
    "55P03": (
        "LEDGER_LOCK_TIMEOUT",
        f"another session held the ledger lock for more than {LEDGER_LOCK_WAIT_SECONDS}s",
        "find the idle or long transaction holding plangate_ledger_head (pg_stat_activity) "
        "and end it, then retry",
    ),
    "57014": (
        "LEDGER_STATEMENT_TIMEOUT",
        f"a ledger statement ran longer than {LEDGER_STATEMENT_TIMEOUT_SECONDS}s",
        "check the server's load and locks, then retry",
    ),
}
_STREAM_BATCH = 2000
SCHEMA_LOCK_KEY = 0x706C616E67617465  # "plangate" as a bigint: the schema-creation advisory lock

ENTRIES_TABLE = "plangate_ledger_entries"
HEAD_TABLE = "plangate_ledger_head"

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS plangate_ledger_entries (
        seq        BIGINT PRIMARY KEY,
        kind       TEXT NOT NULL,
        subject    TEXT NOT NULL,
        payload    TEXT NOT NULL,
        at         TEXT NOT NULL,
        prev_hash  TEXT NOT NULL,
        entry_hash TEXT NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS plangate_ledger_entries_kind
        ON plangate_ledger_entries (kind, seq)""",
    """CREATE INDEX IF NOT EXISTS plangate_ledger_entries_subject
        ON plangate_ledger_entries (subject, seq)""",
    """CREATE TABLE IF NOT EXISTS plangate_ledger_head (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        seq        BIGINT NOT NULL,
        entry_hash TEXT NOT NULL
    )""",
    """CREATE OR REPLACE FUNCTION plangate_ledger_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'plangate ledger entries are append-only';
        END $$""",
)

_TRIGGERS: tuple[tuple[str, str], ...] = (
    (
        "plangate_ledger_no_update_delete",
        "CREATE TRIGGER plangate_ledger_no_update_delete BEFORE UPDATE OR DELETE "
        "ON plangate_ledger_entries FOR EACH ROW EXECUTE FUNCTION plangate_ledger_append_only()",
    ),
    (
        "plangate_ledger_no_truncate",
        "CREATE TRIGGER plangate_ledger_no_truncate BEFORE TRUNCATE "
        "ON plangate_ledger_entries FOR EACH STATEMENT "
        "EXECUTE FUNCTION plangate_ledger_append_only()",
    ),
)

_COLUMNS = "seq, kind, subject, payload, at, prev_hash, entry_hash"
_INSERT_AND_MOVE_HEAD = (
    "WITH appended AS ("
    " INSERT INTO plangate_ledger_entries (seq, kind, subject, payload, at, prev_hash, entry_hash)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING seq, entry_hash)"
    " UPDATE plangate_ledger_head SET seq = appended.seq, entry_hash = appended.entry_hash"
    " FROM appended WHERE plangate_ledger_head.id = 1"
)
_HINT = (
    "check PLANGATE_LEDGER_URL / .plangate/config.toml, that the server is reachable and that "
    "the role may create and write the plangate_ledger_* tables"
)


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise LedgerError(
            "LEDGER_BACKEND_MISSING",
            "the PostgreSQL ledger needs psycopg 3, which is not installed",
            "pip install 'plangate[postgres]'",
        ) from None
    return psycopg


class PostgresLedger(Ledger):
    """A ledger in a PostgreSQL database."""

    backend = "postgresql"

    def __init__(self, url: str, *, read_only: bool = False, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        self.read_only = read_only
        self._secrets = url_secrets(url)
        self._url_display = redact_credentials(url, self._secrets)
        self._pg = _psycopg()
        self._conn: psycopg.Connection[Any] | None = None
        try:
            self._conn = self._pg.connect(
                url, autocommit=True, connect_timeout=LEDGER_CONNECT_TIMEOUT_SECONDS
            )
            self._conn.execute(
                _SESSION_TIMEOUTS,
                (f"{LEDGER_LOCK_WAIT_SECONDS}s", f"{LEDGER_STATEMENT_TIMEOUT_SECONDS}s"),
            )
        except self._pg.Error as exc:
            self.close()
            raise self._fail("cannot connect", exc) from None

    @property
    def location(self) -> str:
        """The connection URL without its password."""
        return self._url_display

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            raise unavailable(self._url_display, "the ledger is closed", "open it again")
        return self._conn

    def _fail(self, what: str, exc: Exception) -> LedgerError:
        """The error for a driver failure: a timeout by its own code, else unavailable."""
        detail = redact_credentials(_first_line(exc), self._secrets)
        timeout = _TIMEOUT_CODES.get(str(getattr(exc, "sqlstate", None) or ""))
        if timeout is not None:
            code, message, hint = timeout
            return LedgerError(code, f"ledger {self._url_display}: {message} ({detail})", hint)
        return unavailable(self._url_display, f"{what}: {detail}", _HINT)

    def schema_state(self) -> str:
        """``absent`` (no ledger table), ``complete``; a partial schema is refused.

        Read without a write: opening an existing ledger changes nothing.
        """
        entries, head, triggers = self._read_catalog(serialised=False)
        if entries != head:
            # Catalog lookups take no lock, so a creator committing between the two
            # lookups looks like half a schema. Read again once creation, which holds
            # the schema lock, can no longer be in flight.
            entries, head, triggers = self._read_catalog(serialised=True)
        if not entries and not head:
            return "absent"
        if entries and head:
            if triggers != len(_TRIGGERS) and not self.read_only:
                # Dropped append-only triggers only lose protection: put them back.
                self.create_schema()
            return "complete"
        missing = [
            name for name, present in ((ENTRIES_TABLE, entries), (HEAD_TABLE, head)) if not present
        ]
        raise LedgerError(
            "LEDGER_SCHEMA_INCOMPLETE",
            f"ledger {self._url_display} lacks {', '.join(missing)}",
            "someone altered the ledger's tables: run 'plangate ledger verify', restore them, "
            "or start over with 'plangate ledger init --force'",
        )

    def _read_catalog(self, *, serialised: bool) -> tuple[bool, bool, int]:
        """Whether each table exists and how many append-only triggers are present.

        ``serialised`` waits for the schema lock (shared) first, so no creation is
        half-way through while the catalog is read.
        """
        conn = self._connection()
        try:
            with conn.transaction():
                if serialised:
                    conn.execute("SELECT pg_advisory_xact_lock_shared(%s)", (SCHEMA_LOCK_KEY,))
                row = conn.execute(
                    "SELECT to_regclass('plangate_ledger_entries') IS NOT NULL, "
                    "to_regclass('plangate_ledger_head') IS NOT NULL, "
                    "(SELECT count(*) FROM pg_trigger WHERE tgname = ANY(%s) "
                    "     AND tgrelid = to_regclass('plangate_ledger_entries'))",
                    ([name for name, _ in _TRIGGERS],),
                ).fetchone()
        except self._pg.Error as exc:
            raise self._fail("cannot read the catalog", exc) from None
        if row is None:
            return False, False, 0
        return bool(row[0]), bool(row[1]), int(row[2])

    def create_schema(
        self, *, first: Callable[[Ledger], None] | None = None, replace_suffix: str | None = None
    ) -> tuple[Head | None, str | None]:
        """Create the tables (and append ``first``'s entries) in one transaction.

        With ``replace_suffix`` existing tables and their indexes are renamed aside
        first (that suffix appended, nothing is dropped). Returns the old head (None
        when there was none or it could not be read) and the suffix used.
        Another process that created the tables meanwhile wins: then nothing is
        created and ``(None, None)`` is returned.
        """
        conn = self._connection()
        old_head: Head | None = None
        suffix: str | None = None
        try:
            with conn.transaction():
                # Serialise creation between processes: concurrent CREATE ... IF NOT
                # EXISTS can still collide.
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
                exists = conn.execute(
                    "SELECT to_regclass('plangate_ledger_entries') IS NOT NULL "
                    "OR to_regclass('plangate_ledger_head') IS NOT NULL"
                ).fetchone()
                if exists and exists[0]:
                    if replace_suffix is None:
                        if conn.execute(
                            "SELECT to_regclass('plangate_ledger_entries') IS NOT NULL"
                        ).fetchone() == (True,):
                            self._ensure_triggers()
                        return None, None
                    suffix = replace_suffix
                    old_head = self._rename_aside(suffix)
                # Idempotent statements all the same: the catalog a concurrent
                # creator just committed may not be visible to the check above.
                for statement in SCHEMA:
                    conn.execute(statement)
                self._ensure_triggers()
                conn.execute(
                    "INSERT INTO plangate_ledger_head (id, seq, entry_hash) "
                    "SELECT 1, 0, %s WHERE NOT EXISTS (SELECT 1 FROM plangate_ledger_entries) "
                    "ON CONFLICT (id) DO NOTHING",
                    (GENESIS_PREV_HASH,),
                )
                if first is not None:
                    first(self)
        except self._pg.Error as exc:
            raise self._fail("cannot create the ledger tables", exc) from None
        return old_head, suffix

    def _ensure_triggers(self) -> None:
        conn = self._connection()
        for name, create in _TRIGGERS:
            present = conn.execute(
                "SELECT 1 FROM pg_trigger WHERE tgname = %s "
                "AND tgrelid = to_regclass('plangate_ledger_entries')",
                (name,),
            ).fetchone()
            if present is None:
                conn.execute(create)

    def _rename_aside(self, suffix: str) -> Head | None:
        conn = self._connection()
        head: Head | None = None
        try:
            with conn.transaction():
                row = conn.execute(
                    "SELECT seq, entry_hash FROM plangate_ledger_head WHERE id = 1"
                ).fetchone()
                if row is not None:
                    head = Head(row[0], row[1])
        except self._pg.Error:
            head = None
        for table in (ENTRIES_TABLE, HEAD_TABLE):
            present = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
            if not (present and present[0]):
                continue
            # Index and constraint names are unique per schema: move them aside too.
            for (index,) in conn.execute(
                "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = to_regclass(%s)",
                (table,),
            ).fetchall():
                conn.execute(f'ALTER INDEX "{index}" RENAME TO "{index}{suffix}"')
            conn.execute(f'ALTER TABLE "{table}" RENAME TO "{table}{suffix}"')
        return head

    def _append_locked(self, build: BuildEntry) -> LedgerEntry:
        if self.read_only:
            raise LedgerError(
                "LEDGER_READ_ONLY", "this ledger was opened read-only", "open it for writing"
            )
        conn = self._connection()
        try:
            with conn.transaction():
                row = conn.execute(
                    "SELECT seq, entry_hash FROM plangate_ledger_head WHERE id = 1 FOR UPDATE"
                ).fetchone()
                if row is None or isinstance(row[0], bool) or not isinstance(row[0], int):
                    raise unavailable(
                        self._url_display,
                        "the head record is missing or malformed",
                        "run 'plangate ledger verify'",
                    )
                entry, payload_text = build(row[0], str(row[1]))
                # Entry and head in one statement (one round trip, same transaction).
                conn.execute(
                    _INSERT_AND_MOVE_HEAD,
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
            return entry
        except self._pg.Error as exc:
            raise self._fail("append failed", exc) from None

    def _fetch(self, kind: str | None = None, subject: str | None = None) -> list[RawRow]:
        where, params = entry_filter(kind, subject, "%s")
        sql = f"SELECT {_COLUMNS} FROM plangate_ledger_entries{where} ORDER BY seq"  # noqa: S608
        try:
            rows = self._connection().execute(sql, params).fetchall()
        except self._pg.Error as exc:
            raise self._fail("cannot read", exc) from None
        return [tuple(row) for row in rows]

    def _head(self) -> Head:
        try:
            row = (
                self._connection()
                .execute("SELECT seq, entry_hash FROM plangate_ledger_head WHERE id = 1")
                .fetchone()
            )
        except self._pg.Error as exc:
            raise self._fail("cannot read", exc) from None
        if row is None:
            return Head(seq=None, entry_hash=None)
        return Head(seq=row[0], entry_hash=row[1])

    def _fetch_newest(self, kind: str, before_seq: int | None, limit: int) -> list[RawRow]:
        sql = f"SELECT {_COLUMNS} FROM plangate_ledger_entries WHERE kind = %s"  # noqa: S608
        params: list[object] = [kind]
        if before_seq is not None:
            sql += " AND seq < %s"
            params.append(before_seq)
        # The order of the (kind, seq) index itself, so the planner walks that index
        # backwards instead of scanning the primary key for a rare kind.
        sql += " ORDER BY kind DESC, seq DESC LIMIT %s"
        params.append(limit)
        try:
            rows = self._connection().execute(sql, params).fetchall()
        except self._pg.Error as exc:
            raise self._fail("cannot read", exc) from None
        return [tuple(row) for row in rows]

    @contextlib.contextmanager
    def _snapshot(self, from_seq: int = 1) -> Iterator[tuple[Head, Iterator[RawRow]]]:
        conn = self._connection()
        try:
            with conn.transaction():
                # One snapshot for head and rows, so a concurrent append cannot make
                # an intact ledger look truncated; a server-side cursor streams.
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                head = self._head()
                with conn.cursor(name="plangate_ledger_stream") as cursor:
                    cursor.itersize = _STREAM_BATCH
                    # Verification from the start reads every row, whatever its seq.
                    where, params = ("", ()) if from_seq <= 1 else (" WHERE seq >= %s", (from_seq,))
                    cursor.execute(
                        f"SELECT {_COLUMNS} FROM plangate_ledger_entries{where} "  # noqa: S608
                        "ORDER BY seq",
                        params,
                    )
                    yield head, self._stream(cursor)
        except self._pg.Error as exc:
            raise self._fail("cannot read", exc) from None

    def _stream(self, cursor: Any) -> Iterator[RawRow]:
        try:
            for row in cursor:
                yield tuple(row)
        except self._pg.Error as exc:
            raise self._fail("cannot read", exc) from None

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
