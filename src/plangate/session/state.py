"""Which task session is open: the ``task_started`` and ``task_stopped`` entries, read back.

``plangate task start`` appends ``task_started`` (task, session id, HEAD, expiry, the
baseline's path and digest) and ``task stop`` appends ``task_stopped``
(:mod:`plangate.execution.session`). A session is open from its start until a later stop
of the same session id, and *active* while it is open and not expired: an abandoned
session ends by itself at its expiry.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from plangate.layout import SESSION_DIR_RELPATH
from plangate.records import NamedTuple

if TYPE_CHECKING:
    from plangate.ledger import Ledger

KIND_STARTED = "task_started"
KIND_STOPPED = "task_stopped"
SESSION_DIR = SESSION_DIR_RELPATH
"""Where a session's baseline is written: a directory no agent may write."""


class Session(NamedTuple):
    """One started session, as its ``task_started`` entry records it."""

    session_id: str
    task_id: str
    started_at: str
    expires_at: str
    head: str
    baseline: str
    baseline_sha256: str
    seq: int

    def expired(self, now: datetime) -> bool:
        """True at or after the session's expiry (an unreadable expiry has expired)."""
        from plangate.clock import parse_utc

        expiry = parse_utc(self.expires_at)
        return expiry is None or now >= expiry


def session_of(entry_seq: int, payload: Mapping[str, Any]) -> Session | None:
    """The session a ``task_started`` payload records; ``None`` when a field is missing."""
    fields = (
        "session_id",
        "task_id",
        "started_at",
        "expires_at",
        "head",
        "baseline",
        "baseline_sha256",
    )
    values = [payload.get(name) for name in fields]
    texts = [v for v in values if isinstance(v, str) and v]
    if len(texts) != len(fields):
        return None
    session_id, task_id, started_at, expires_at, head, baseline, digest = texts
    return Session(session_id, task_id, started_at, expires_at, head, baseline, digest, entry_seq)


def open_session(ledger: Ledger) -> Session | None:
    """The newest started session with no later ``task_stopped`` for it (expired or not)."""
    started = ledger.entries(kind=KIND_STARTED)
    if not started:
        return None
    stopped = {str(e.payload.get("session_id")): e.seq for e in ledger.entries(kind=KIND_STOPPED)}
    newest = started[-1]
    session = session_of(newest.seq, newest.payload)
    if session is None:
        return None  # a malformed entry lends no task
    if stopped.get(session.session_id, 0) > newest.seq:
        return None
    return session


def active_session(ledger: Ledger, now: datetime) -> Session | None:
    """The open session when it has not expired at ``now``."""
    session = open_session(ledger)
    if session is None or session.expired(now):
        return None
    return session
