"""The backend-independent ledger: validation, hashing and verification on top of
three storage primitives each backend provides."""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from plangate.clock import format_utc, utc_now_text
from plangate.ledger.chain import (
    Head,
    LedgerEntry,
    LedgerError,
    check_entry_fields,
    entry_from_values,
    make_entry,
    prepare_payload,
)
from plangate.verdict import Result

if TYPE_CHECKING:
    from datetime import datetime

    from plangate.ledger.rows import StoredRow

RawRow = tuple[Any, ...]
"""The seven column values ``seq, kind, subject, payload, at, prev_hash, entry_hash``."""

Clock = Callable[[], "datetime"]

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

    def _rows(self, kind: str | None = None, subject: str | None = None) -> Iterator[StoredRow]:
        """Stored rows in ``seq`` order, optionally filtered."""
        # Imported here: the row type is a dataclass, which a hook process never needs.
        from plangate.ledger.rows import StoredRow

        return iter([StoredRow(*row) for row in self._fetch(kind, subject)])

    @abc.abstractmethod
    def _head(self) -> Head:
        """The head record (seq 0 / genesis for an empty ledger)."""

    @abc.abstractmethod
    def _read_snapshot(self) -> tuple[list[StoredRow], Head]:
        """Every row and the head, read in one consistent snapshot."""

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
        return [entry_from_values(row) for row in self._fetch(kind, subject)]

    def head(self) -> Head:
        """Seq and entry_hash of the last entry (0 and the genesis hash when empty)."""
        return self._head()

    def stored_rows(self) -> tuple[list[StoredRow], Head]:
        """Every stored row and the head, as read (for export and verification)."""
        return self._read_snapshot()

    def verify(self, *, anchor: str | None = None) -> Result:
        """Verify the whole chain; ``INTACT`` (exit 0) or ``TAMPERED`` with ``first_bad_seq``."""
        from plangate.ledger.chain import verify_rows

        rows, head = self._read_snapshot()
        result = verify_rows(rows, head, anchor=anchor)
        facts = dict(result.facts)
        facts["backend"] = self.backend
        facts["location"] = self.location
        return Result(result.verdict, result.reasons, facts)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


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
