"""Which exec run is open: the ledger lookup the hooks use when ``PLANGATE_TASK`` is not set.

An exec run is *open* from its ``exec_started`` entry until an ``exec_ended``
entry of the same run (``payload.run_id`` when present, else the same
subject); the open run the hooks act on is the most recent one. A run whose
start is older than :data:`OPEN_RUN_MAX_AGE_HOURS` is stale (its exec was killed
before it could record the end) and no longer counts: an agent that needs a
task for longer is started by ``plangate exec``, which passes ``PLANGATE_TASK``.

The lookup costs what recent history costs, never the ledger's length:

1. walk ``exec_started`` and ``exec_ended`` entries newest first through the
   kind index, only as far back as the age limit, to find the newest start the
   index shows without an end (a candidate);
2. decide on the entries from the candidate to the head, read from the table
   itself and verified as a chain segment (:meth:`Ledger.verified_since`): an
   end the index lost is found there, and a segment that does not verify is a
   refusal (``LEDGER_TAMPERED``), never an open run.

An open run lends its task only while it is *live*: while its exec process holds the
task's lock (``.plangate/locks/TASK.lock``, held for the whole run). A killed exec
releases it, so its run no longer lends its task (:func:`exec_run_alive`).
"""

# ruff: noqa: PTH118
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plangate.ledger import Ledger, LedgerEntry

KIND_STARTED = "exec_started"
KIND_ENDED = "exec_ended"

OPEN_RUN_MAX_AGE_HOURS = 24
"""A run started longer ago than this is stale, not open."""


def run_key(payload: Mapping[str, Any], subject: str) -> str:
    """The run an exec entry belongs to: its ``run_id``, else its subject."""
    run_id = payload.get("run_id")
    return f"run:{run_id}" if isinstance(run_id, str) and run_id else f"subject:{subject}"


def run_task(entry: LedgerEntry) -> str | None:
    """The task an ``exec_started`` entry names (``task_id``, ``task``, else the subject)."""
    task = entry.payload.get("task_id", entry.payload.get("task", entry.subject))
    return task if isinstance(task, str) else None


def _cutoff(now: datetime) -> str:
    from plangate.clock import format_utc

    return format_utc(now - timedelta(hours=OPEN_RUN_MAX_AGE_HOURS))


def newest_open_start(entries: Iterable[LedgerEntry], now: datetime) -> LedgerEntry | None:
    """The newest ``exec_started`` without a later end among ``entries`` (in ``seq`` order),
    not older than the age limit. Pure: the decision over entries already verified."""
    cutoff = _cutoff(now)
    open_runs: dict[str, LedgerEntry] = {}
    for entry in entries:
        if entry.kind == KIND_STARTED:
            open_runs[run_key(entry.payload, entry.subject)] = entry
        elif entry.kind == KIND_ENDED:
            open_runs.pop(run_key(entry.payload, entry.subject), None)
    live = [e for e in open_runs.values() if e.at >= cutoff]
    return max(live, key=lambda e: e.seq) if live else None


def _candidates(ledger: Ledger, now: datetime) -> Iterator[LedgerEntry]:
    """Starts the kind index shows without a later end, newest first, within the age limit."""
    cutoff = _cutoff(now)
    starts, ends = ledger.newest(KIND_STARTED), ledger.newest(KIND_ENDED)
    start, end = next(starts, None), next(ends, None)
    ended: set[str] = set()
    while start is not None and start.at >= cutoff:
        if end is not None and end.seq > start.seq:
            ended.add(run_key(end.payload, end.subject))
            end = next(ends, None)
            continue
        if run_key(start.payload, start.subject) not in ended:
            yield start
        start = next(starts, None)


def open_run(ledger: Ledger, now: datetime) -> LedgerEntry | None:
    """The ``exec_started`` entry of the open run, decided on verified entries (see above)."""
    for candidate in _candidates(ledger, now):
        found = newest_open_start(ledger.verified_since(candidate.seq), now)
        if found is not None:
            return found
    return None


def exec_run_alive(root: str, task_id: str) -> bool:
    """True while a ``plangate exec`` process holds the task's lock (see the module doc).

    The lock is tried shared and without waiting, then released at once. A lock file
    that is missing, a link, or cannot be opened counts as no live run: the stricter
    answer (the run lends no task).
    """
    import errno
    import fcntl

    from plangate.layout import LOCK_DIR_RELPATH

    path = os.path.join(root, LOCK_DIR_RELPATH, f"{task_id}.lock")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)  # closing releases a lock this process took
    return False
