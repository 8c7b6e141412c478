"""The backend-independent ledger: validation, hashing and verification on top of
three storage primitives each backend provides."""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from plangate.clock import format_utc, utc_now_text
from plangate.ledger.chain import (
    VERDICT_INTACT,
    VERDICT_TAMPERED,
    ChainWalk,
    Head,
    LedgerEntry,
    LedgerError,
    check_entry_fields,
    entry_from_values,
    make_entry,
    prepare_payload,
)
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from datetime import datetime

    from plangate.ledger.rows import StoredRow

RawRow = tuple[Any, ...]
"""The seven column values ``seq, kind, subject, payload, at, prev_hash, entry_hash``."""

Clock = Callable[[], "datetime"]

_T = TypeVar("_T")

# The function a backend calls inside its write transaction, once it holds the
# lock and has read the head: (last seq, last entry_hash) -> the new entry.
BuildEntry = Callable[[int, str], tuple[LedgerEntry, str]]


class Ledger(abc.ABC):
    """An append-only, hash-chained sequence of decision entries.

    Use as a context manager (``with open_ledger(root, env) as ledger:``) so the
    connection is closed. :meth:`append` is atomic: the entry is written whole,
    or not at all, and concurrent appenders (threads or processes) are
    serialised by the database so the chain never forks.
    """

    backend: str = "abstract"

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock: Clock | None = clock

    # -- storage primitives --------------------------------------------------

    @abc.abstractmethod
    def _append_locked(self, build: BuildEntry) -> LedgerEntry:
        """In one write transaction holding the append lock: read the head, call
        ``build(seq, entry_hash)``, insert the entry and move the head."""

    @abc.abstractmethod
    def _fetch(self, kind: str | None = None, subject: str | None = None) -> list[RawRow]:
        """Column values of the stored rows in ``seq`` order, optionally filtered."""

    @abc.abstractmethod
    def _fetch_newest(self, kind: str, before_seq: int | None, limit: int) -> list[RawRow]:
        """Up to ``limit`` rows of ``kind`` with ``seq < before_seq``, newest first (an index
        lookup: its answer is only a candidate, see :meth:`newest`)."""

    @abc.abstractmethod
    def _head(self) -> Head:
        """The head record (seq 0 / genesis for an empty ledger)."""

    @abc.abstractmethod
    def _snapshot(self, from_seq: int = 1) -> AbstractContextManager[tuple[Head, Iterator[RawRow]]]:
        """The head and the rows from ``from_seq`` on, in ``seq`` order, from one consistent
        snapshot, read from the table itself (never through a secondary index), streamed."""

    def _integrity_problem(self) -> Reason | None:
        """A reason when the database's own structure is damaged (backends that can tell).

        Called inside :meth:`_snapshot`, so it judges the same snapshot as the rows."""
        return None

    def _reading(self, read: Callable[[], _T]) -> _T:
        """Run one read (a backend may retry it once, see the SQLite backend)."""
        return read()

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection (idempotent)."""

    @property
    @abc.abstractmethod
    def location(self) -> str:
        """Where the ledger lives, for messages (never contains a password)."""

    # -- public API ----------------------------------------------------------

    def append(self, kind: str, subject: str, payload: Mapping[str, Any]) -> LedgerEntry:
        """Append one entry and return it as stored.

        Raises :class:`LedgerError` (an EnvironmentFailure, exit 1) when the
        kind, subject or payload is refused (``LEDGER_FORBIDDEN_KEY``, ...) or
        the ledger cannot be written.
        """
        check_entry_fields(kind, subject)
        payload_text, parsed = prepare_payload(payload)
        at = utc_now_text() if self._clock is None else format_utc(self._clock())

        def build(last_seq: int, last_hash: str) -> tuple[LedgerEntry, str]:
            entry = make_entry(
                seq=last_seq + 1,
                kind=kind,
                subject=subject,
                payload_text=payload_text,
                payload=parsed,
                at=at,
                prev_hash=last_hash,
            )
            return entry, payload_text

        return self._append_locked(build)

    def entries(self, kind: str | None = None, subject: str | None = None) -> list[LedgerEntry]:
        """Entries in ``seq`` order, optionally only one kind and/or subject.

        Raises ``LEDGER_CORRUPT`` when a stored row cannot even be decoded;
        chain integrity is checked by :meth:`verify`, not here.
        """
        rows = self._reading(lambda: self._fetch(kind, subject))
        return [entry_from_values(row) for row in rows]

    def head(self) -> Head:
        """Seq and entry_hash of the last entry (0 and the genesis hash when empty)."""
        return self._head()

    def stored_rows(self) -> tuple[list[StoredRow], Head]:
        """Every stored row and the head, as read (for export and verification)."""
        from plangate.ledger.rows import StoredRow

        def read() -> tuple[list[StoredRow], Head]:
            with self._snapshot() as (head, rows):
                return [StoredRow(*row) for row in rows], head

        return self._reading(read)

    def verify(self, *, anchor: str | None = None) -> Result:
        """Verify the database's integrity and the whole chain, streaming the rows.

        ``INTACT`` (exit 0) or ``TAMPERED`` with ``first_bad_seq``; memory does not
        grow with the number of entries.
        """
        return self.verify_streaming(_take_none, anchor=anchor)[0]

    def verify_streaming(
        self, fold: Callable[[Iterator[LedgerEntry]], _T], *, anchor: str | None = None
    ) -> tuple[Result, _T | None]:
        """:meth:`verify`, handing ``fold`` the entries as they pass their checks.

        ``fold`` gets an iterator of the entries, in ``seq`` order, each decoded
        once it has passed every check of :meth:`verify` (the payload parsed);
        rows ``fold`` leaves unread are verified all the same. The result is the
        one :meth:`verify` gives, with ``fold``'s answer only when it is
        ``INTACT`` (None otherwise: what was folded before a broken entry is
        dropped, never shown). A read that is retried (see the SQLite backend)
        calls ``fold`` again, from the first entry. Memory does not grow with the
        number of entries beyond what ``fold`` keeps.
        """
        def read() -> tuple[Result, _T | None]:
            # One read snapshot for everything verify looks at (SQLite: one read
            # transaction; PostgreSQL: REPEATABLE READ): an append committed meanwhile
            # is either wholly in it or wholly out, never half a reason for TAMPERED.
            with self._snapshot() as (head, rows):
                problem = self._integrity_problem()
                if problem is not None:
                    return integrity_result(problem), None
                walk = ChainWalk(rows, head, anchor=anchor)
                answer = fold(walk.entries())
                return walk.finish(), answer

        result, answer = self._reading(read)
        facts = dict(result.facts)
        facts["backend"] = self.backend
        facts["location"] = self.location
        intact = result.verdict == VERDICT_INTACT
        return Result(result.verdict, result.reasons, facts), answer if intact else None

    def newest(self, kind: str, *, batch: int = 64) -> Iterator[LedgerEntry]:
        """Entries of ``kind``, newest first, found through the kind index, decoded lazily.

        An index can be damaged: a row it returns that is not of ``kind`` raises
        ``LEDGER_INDEX_INCONSISTENT``, and a row it *omits* goes unnoticed here.
        Callers use the answer only to narrow where to look, then decide on
        :meth:`verified_since` (rows read from the table and chain-verified).
        """
        before: int | None = None
        while True:
            rows = self._fetch_newest(kind, before, batch)
            for row in rows:
                entry = entry_from_values(row)
                if entry.kind != kind or (before is not None and entry.seq >= before):
                    raise index_inconsistent(self.location, kind, entry.seq)
                before = entry.seq
                yield entry
            if len(rows) < batch:
                return

    def verified_since(self, seq: int) -> list[LedgerEntry]:
        """Entries ``seq - 1`` .. head, read from the table and verified as a chain segment.

        Each entry's hash is recomputed, each links to the one before, and the
        last is the head; entry ``seq - 1`` anchors the segment (for ``seq <= 1``
        the segment starts at the genesis). Raises ``LEDGER_TAMPERED`` when the
        segment does not verify. Reads only the segment: its cost depends on
        how many entries came after ``seq``, not on the ledger's length.
        """
        from plangate.ledger.chain import verify_segment

        start = max(seq - 1, 1)

        def read() -> list[LedgerEntry]:
            with self._snapshot(start) as (head, rows):
                return verify_segment(rows, head, start, location=self.location)

        return self._reading(read)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class EmptyLedger(Ledger):
    """A ledger that was never created, read by a reader: no entries, nothing written."""

    def __init__(self, backend: str, location: str) -> None:
        super().__init__()
        self.backend = backend
        self._location = location

    @property
    def location(self) -> str:
        """Where the ledger would live."""
        return self._location

    # The primitives take the base class's arguments and ignore them: there are no rows.
    def _append_locked(self, build: BuildEntry) -> LedgerEntry:  # noqa: ARG002
        raise LedgerError(
            "LEDGER_READ_ONLY", "this ledger was opened read-only", "open it for writing"
        )

    def _fetch(self, kind: str | None = None, subject: str | None = None) -> list[RawRow]:  # noqa: ARG002
        return []

    def _fetch_newest(self, kind: str, before_seq: int | None, limit: int) -> list[RawRow]:  # noqa: ARG002
        return []

    def _head(self) -> Head:
        return Head()

    @contextlib.contextmanager
    def _snapshot(self, from_seq: int = 1) -> Iterator[tuple[Head, Iterator[RawRow]]]:  # noqa: ARG002
        yield Head(), iter(())

    def close(self) -> None:
        """Nothing to release."""


def _take_none(entries: Iterator[LedgerEntry]) -> None:
    """The fold of a plain verification: it takes no entry."""


def integrity_result(problem: Reason) -> Result:
    """The verification result of a database whose own structure is damaged."""
    return Result(
        VERDICT_TAMPERED,
        (problem,),
        {"entries": 0, "head_hash": None, "first_bad_seq": None, "kinds": {}},
    )


def index_inconsistent(location: str, kind: str, seq: int) -> LedgerError:
    """A lookup index returned a row that does not match it."""
    return LedgerError(
        "LEDGER_INDEX_INCONSISTENT",
        f"ledger {location}: the index for kind {kind!r} returned entry {seq}, which is not "
        "one (the index is damaged)",
        "run 'plangate ledger verify'; a human rebuilds the indexes (REINDEX) or restores the "
        "ledger",
    )


def unavailable(location: str, detail: str, hint: str) -> LedgerError:
    """The one error for a ledger that cannot be opened, read or written."""
    return LedgerError("LEDGER_UNAVAILABLE", f"ledger {location} is unavailable: {detail}", hint)


def entry_filter(kind: str | None, subject: str | None, placeholder: str) -> tuple[str, list[str]]:
    """``(" WHERE ...", params)`` selecting entries by kind and/or subject.

    ``placeholder`` is the driver's parameter marker (``?`` for sqlite3,
    ``%s`` for psycopg); values are always passed as parameters, never inlined.
    """
    clauses: list[str] = []
    params: list[str] = []
    if kind is not None:
        clauses.append(f"kind = {placeholder}")
        params.append(kind)
    if subject is not None:
        clauses.append(f"subject = {placeholder}")
        params.append(subject)
    return (f" WHERE {' AND '.join(clauses)}" if clauses else "", params)
