"""Did this repository have a ledger? The rule that keeps a lost ledger from restarting silently.

A ledger that is absent (no SQLite file, no PostgreSQL tables) is either new or
lost. It is *lost* when this clone or the repository says decisions were recorded,
and then nothing creates a fresh chain in its place: every command refuses with
``LEDGER_MISSING`` until a human restores it or starts over explicitly with
``plangate ledger init --force`` (which records the restart as the new chain's
first entry).

A ledger existed when any of these traces is present (the
rules below, in order; each trace is written only after, or together with, an
entry in the ledger):

1. ``clone_witness``: this working tree's git directory holds the witness
   written when its SQLite ledger was created (:mod:`plangate.ledger.witness`):
   the ledger was created here and has been deleted or moved since;
2. ``witness_unreadable``: a witness is there but cannot be read or names
   another ledger (fail closed: it counts);
3. ``issued_record``: a task's ``approvals/c3.json`` issued by ``plangate c3
   issue`` (a JSON object whose ``approval_kind`` is ``c3-prime``);
4. ``run_log``: a task's ``run.ndjson`` (``plangate exec`` writes it after its
   ``exec_started`` entry);
5. ``delivery_log``: a task's ``delivery/record.jsonl`` (delivery records its
   transitions in the ledger too);
6. ``ledger_configured``: ``.plangate/config.toml`` names a ledger (``[ledger]
   url``): a configured shared ledger is created once, by ``plangate ledger
   init``, never by whichever command happens to run first;
7. ``ledger_ignore_file``: ``.plangate/.gitignore`` as PlanGate writes it when
   it creates the default SQLite ledger (a trace of that ledger only);
8. ``sqlite_sidecar``: the SQLite ledger's own ``-wal``, ``-shm`` or
   ``-journal`` file without the database beside it (a trace of that file only).

A SQLite ledger belongs to one clone: for it, a trace that HEAD's commit holds
(an issued record, a committed ``.plangate/.gitignore``...) came with the clone
and speaks of the ledger of the clone that wrote it, not of this one, so the
gatherer leaves it out; a new clone or CI checkout then starts its own ledger.
A PostgreSQL ledger is shared by URL: every trace counts, committed or not.

Nothing else counts (in particular not the ``PLANGATE_LEDGER_URL`` variable: it
is the caller's choice, not the repository's record). Legacy records (with
``c3_status``) never went through this ledger and do not count either.

The rule is pure: :class:`Traces` are gathered by :mod:`plangate.ledger.traces`.
"""

from __future__ import annotations

from collections.abc import Callable

from plangate.records import NamedTuple

MAX_EXAMPLES = 3
"""How many paths of one kind of trace a message names."""


class Traces(NamedTuple):
    """What the repository holds that only a recorded decision leaves behind."""

    witness: str | None = None
    """This working tree's witness of its ledger: ``"PATH (created TIME)"``."""
    witness_problem: str | None = None
    """A witness that cannot be read: ``"PATH: why"``."""
    issued_records: tuple[str, ...] = ()
    run_logs: tuple[str, ...] = ()
    delivery_logs: tuple[str, ...] = ()
    ledger_config: str | None = None
    ledger_ignore_file: str | None = None
    sqlite_sidecars: tuple[str, ...] = ()


def _paths(kind: str, paths: tuple[str, ...]) -> str | None:
    if not paths:
        return None
    shown = ", ".join(paths[:MAX_EXAMPLES])
    more = f" and {len(paths) - MAX_EXAMPLES} more" if len(paths) > MAX_EXAMPLES else ""
    return f"{kind}: {shown}{more}"


def clone_witness(traces: Traces) -> str | None:
    """This clone's git directory says the ledger was created here."""
    if traces.witness is None:
        return None
    return (f"this clone created it and recorded so in {traces.witness}: it was deleted "
            "or moved since")


def witness_unreadable(traces: Traces) -> str | None:
    """A witness is there but cannot be read: it counts (fail closed)."""
    if traces.witness_problem is None:
        return None
    return f"this clone's ledger witness {traces.witness_problem}"


def issued_record(traces: Traces) -> str | None:
    """Records issued by ``c3 issue`` (which records each issue in the ledger first)."""
    return _paths("issued c3-prime records", traces.issued_records)


def run_log(traces: Traces) -> str | None:
    """Exec run logs (each run is in the ledger before its log line)."""
    return _paths("exec run logs", traces.run_logs)


def delivery_log(traces: Traces) -> str | None:
    """Delivery logs (each transition is in the ledger too)."""
    return _paths("delivery logs", traces.delivery_logs)


def ledger_configured(traces: Traces) -> str | None:
    """The repository's configuration names a ledger."""
    if traces.ledger_config is None:
        return None
    return f"the ledger configured in {traces.ledger_config}"


def ledger_ignore_file(traces: Traces) -> str | None:
    """The ignore file PlanGate writes when it creates the default ledger."""
    if traces.ledger_ignore_file is None:
        return None
    return f"the ledger's ignore file {traces.ledger_ignore_file}"


def sqlite_sidecar(traces: Traces) -> str | None:
    """SQLite's own files for the database, left without it."""
    return _paths("the database's journal files", traces.sqlite_sidecars)


RULES: tuple[tuple[str, Callable[[Traces], str | None]], ...] = (
    ("clone_witness", clone_witness),
    ("witness_unreadable", witness_unreadable),
    ("issued_record", issued_record),
    ("run_log", run_log),
    ("delivery_log", delivery_log),
    ("ledger_configured", ledger_configured),
    ("ledger_ignore_file", ledger_ignore_file),
    ("sqlite_sidecar", sqlite_sidecar),
)
"""The traces that say a ledger existed, in the order messages list them."""


def evidence_of_a_ledger(traces: Traces) -> tuple[str, ...]:
    """What in the repository says a ledger existed (empty: nothing does, it may be new)."""
    return tuple(found for _name, rule in RULES if (found := rule(traces)) is not None)
