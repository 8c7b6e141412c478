"""The ledger's banner, the timeline and the denials: pure functions over verified entries.

:func:`ledger_figures` computes the whole ledger part of a report in one pass over
an iterator of entries, keeping only aggregates: counts per day and kind, counts
per reason code, path and task, the newest refusals (at most
:data:`~plangate.report.model.MAX_DENIAL_ROWS`), the newest checkpoint, each
evaluated candidate's newest entry of each kind and each listed task's runs.
Memory grows with how many distinct days, kinds, codes, paths, tasks and
candidates there are, never with how many entries.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence

from plangate.hooks.decision import DOCTOR_PROBE, PROBE_FIELD
from plangate.report.evaluations import EvaluationTally
from plangate.report.model import (
    MAX_DENIAL_ROWS,
    Count,
    Denials,
    DenialView,
    Entry,
    LedgerFacts,
    LedgerFigures,
    LedgerView,
    Timeline,
    clip,
    text_of,
    texts_of,
)
from plangate.report.tasks import TaskTally

CHECKPOINT_KINDS = ("ledger_checkpoint",)
"""Kinds whose newest entry is named in the banner (its signature is not checked here)."""

HOOK_DENY = "DENY"
EXEC_ACCEPTED_RESULTS = ("ACCEPTED", "NO_CHANGES")
TOP = 10
"""How many codes, paths and subjects the denial summaries list."""


def checkpoint_line(entry: Entry) -> str:
    """The banner's line on a checkpoint entry."""
    return (
        f"entry {entry.seq} ({entry.kind}) at {entry.at}, {entry.entry_hash}; "
        "its signature is not checked by this report"
    )


def ledger_view(facts: LedgerFacts) -> LedgerView:
    """The banner: verification result and the newest checkpoint entry."""
    return LedgerView(
        verified=facts.verified,
        verdict=facts.verdict,
        location=clip(facts.location),
        entries=facts.entries_checked,
        head_hash=facts.head_hash,
        first_bad_seq=facts.first_bad_seq,
        reasons=facts.reasons,
        checkpoint=facts.figures.checkpoint if facts.figures is not None else None,
    )


def about(entry: Entry, tasks: frozenset[str]) -> bool:
    """True when ``entry`` is about one of ``tasks``: its subject or its payload's task."""
    return entry.subject in tasks or text_of(entry.payload, "task_id") in tasks


def in_window(entries: Iterable[Entry], since: str | None, tasks: Sequence[str]) -> Iterator[Entry]:
    """Entries at or after the day ``since`` and, when ``tasks`` are named, about them."""
    wanted = frozenset(tasks)
    for entry in entries:
        if since is not None and entry.at[:10] < since:
            continue
        if wanted and not about(entry, wanted):
            continue
        yield entry


def _ranked(counter: Mapping[str, int], limit: int = TOP) -> tuple[Count, ...]:
    ordered = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    return tuple(Count(label, count) for label, count in ordered[:limit])


class TimelineTally:
    """Entries per day and kind, counted one entry at a time."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()

    def add(self, entry: Entry) -> None:
        """Count one entry."""
        self.counts[(entry.at[:10], entry.kind)] += 1

    def result(self) -> Timeline:
        """The timeline of the entries counted."""
        per_kind: Counter[str] = Counter()
        for (_day, kind), count in self.counts.items():
            per_kind[kind] += count
        return Timeline(
            days=tuple(sorted({day for day, _kind in self.counts})),
            kinds=tuple(sorted(per_kind)),
            counts=dict(self.counts),
            per_kind=_ranked(per_kind, limit=len(per_kind)),
            total=sum(per_kind.values()),
        )


def timeline(entries: Iterable[Entry]) -> Timeline:
    """Entries per kind per day."""
    tally = TimelineTally()
    for entry in entries:
        tally.add(entry)
    return tally.result()


def denial_row(entry: Entry) -> DenialView | None:
    """The refusal an entry records, or None when it records none."""
    payload = entry.payload
    if entry.kind == "hook_decision":
        if text_of(payload, "verdict") != HOOK_DENY:
            return None
        return DenialView(
            entry.seq,
            entry.at,
            entry.kind,
            clip(entry.subject),
            text_of(payload, "tool", "?"),
            texts_of(payload, "codes"),
            texts_of(payload, "targets"),
        )
    if entry.kind == "exec_refused":
        return DenialView(
            entry.seq,
            entry.at,
            entry.kind,
            clip(entry.subject),
            "exec",
            texts_of(payload, "reasons"),
            (),
        )
    if entry.kind == "exec_result":
        verdict = text_of(payload, "verdict")
        if verdict in EXEC_ACCEPTED_RESULTS:
            return None
        codes = texts_of(payload, "reasons") or ((verdict,) if verdict else ("UNRECORDED",))
        return DenialView(
            entry.seq,
            entry.at,
            entry.kind,
            clip(entry.subject),
            "exec",
            codes,
            texts_of(payload, "changed"),
        )
    return None


DENIAL_KINDS = frozenset({"hook_decision", "exec_refused", "exec_result"})
"""The kinds :func:`denial_row` can find a refusal in (any other kind records none)."""


def is_probe(entry: Entry) -> bool:
    """A hook decision ``plangate doctor`` made with a canary, as marked when it was recorded."""
    return entry.kind == "hook_decision" and entry.payload.get(PROBE_FIELD) == DOCTOR_PROBE


class DenialTally:
    """Hook and exec refusals, counted one entry at a time; the newest listed."""

    __slots__ = ("by_code", "by_path", "by_subject", "newest", "probes", "total")

    def __init__(self, listed: int = MAX_DENIAL_ROWS) -> None:
        self.newest: deque[DenialView] = deque(maxlen=listed)
        self.by_code: Counter[str] = Counter()
        self.by_path: Counter[str] = Counter()
        self.by_subject: Counter[str] = Counter()
        self.probes = 0
        self.total = 0

    def add(self, entry: Entry) -> None:
        """Count one entry: a probe apart, a refusal by code, path and task, else nothing."""
        if entry.kind not in DENIAL_KINDS:
            return
        if is_probe(entry):
            self.probes += 1
            return
        row = denial_row(entry)
        if row is None:
            return
        self.total += 1
        self.newest.append(row)
        self.by_code.update(row.codes or ("(no code recorded)",))
        self.by_path.update(row.paths)
        self.by_subject[row.subject] += 1

    def result(self) -> Denials:
        """The refusals counted."""
        return Denials(
            tuple(self.newest),
            self.total,
            _ranked(self.by_code),
            _ranked(self.by_path),
            _ranked(self.by_subject),
            self.probes,
        )


def denials(entries: Iterable[Entry], listed: int = MAX_DENIAL_ROWS) -> Denials:
    """Hook and exec refusals, by reason code, by path and by task; doctor's probes apart."""
    tally = DenialTally(listed)
    for entry in entries:
        tally.add(entry)
    return tally.result()


def ledger_figures(
    entries: Iterable[Entry],
    *,
    since: str | None = None,
    task_filter: Sequence[str] = (),
    tasks: Mapping[str, frozenset[str]] | None = None,
) -> LedgerFigures:
    """The ledger part of a report from one pass over verified entries, oldest first.

    ``tasks`` maps each listed task to the canonical texts of its run-log lines
    (what :class:`~plangate.report.tasks.TaskTally` looks for). Each entry, in order:

    1. a checkpoint kind: it is the newest checkpoint so far;
    2. its subject is a listed task: it is one of that task's entries (runs,
       run-log twins, delivery transitions), whatever the window;
    3. before the day ``since``, or (with ``task_filter``) about none of the
       named tasks: nothing more;
    4. it counts in the timeline, in the denials and, unless the report is
       limited to tasks, in the evaluations.
    """
    per_task = {task: TaskTally(twins) for task, twins in (tasks or {}).items()}
    wanted = frozenset(task_filter)
    counted = TimelineTally()
    refused = DenialTally()
    evaluated = EvaluationTally() if not wanted else None
    checkpoint: Entry | None = None
    for entry in entries:
        if entry.kind in CHECKPOINT_KINDS:
            checkpoint = entry
        task = per_task.get(entry.subject)
        if task is not None:
            task.add(entry)
        if since is not None and entry.at[:10] < since:
            continue
        if wanted and not about(entry, wanted):
            continue
        counted.add(entry)
        refused.add(entry)
        if evaluated is not None:
            evaluated.add(entry)
    return LedgerFigures(
        checkpoint=checkpoint_line(checkpoint) if checkpoint is not None else None,
        timeline=counted.result(),
        denials=refused.result(),
        evaluations=evaluated.result() if evaluated is not None else (),
        tasks={task: tally.result() for task, tally in per_task.items()},
    )
