"""The page model from the facts the service read: one pure function, rules in order.

1. The ledger banner is always built from the verification result.
2. Ledger figures (timeline, denials, runs, evaluations) are built only from a
   chain that verified; otherwise they are withheld and the page says why.
3. Each task is shown with its verdict now, whatever the ledger says.
"""

from __future__ import annotations

from plangate.report.evaluations import evaluations
from plangate.report.ledger_view import denials, in_window, ledger_view, timeline
from plangate.report.model import Entry, Report, ReportInputs, clip
from plangate.report.tasks import task_view


def _withheld(inputs: ReportInputs) -> str:
    ledger = inputs.ledger
    if ledger.verified:
        return ""
    if ledger.verdict == "UNAVAILABLE":
        return "the ledger could not be read: no ledger figures are shown"
    where = (
        f" (first bad entry: {ledger.first_bad_seq})" if ledger.first_bad_seq is not None else ""
    )
    return f"the ledger does not verify{where}: no ledger figures are shown"


def _task_entries(entries: tuple[Entry, ...], task_id: str) -> list[Entry]:
    return [e for e in entries if e.subject == task_id]


def build_report(inputs: ReportInputs) -> Report:
    """The report for ``inputs``."""
    ledger = inputs.ledger
    ok = ledger.verified
    window = in_window(ledger.entries, inputs.since, inputs.task_filter) if ok else []
    task_views = tuple(
        task_view(t, _task_entries(ledger.entries, t.task_id) if ok else [], ok)
        for t in inputs.tasks
    )
    notes: list[str] = []
    if inputs.head_problem is not None:
        notes.append(f"HEAD could not be resolved ({inputs.head_problem.code}): no task holds")
    if inputs.task_filter:
        notes.append(
            "limited to tasks "
            + ", ".join(inputs.task_filter)
            + ": evaluations are not part of a task-limited report"
        )
    evaluation_views = evaluations(window) if ok and not inputs.task_filter else None
    return Report(
        repository=clip(inputs.repository, 200),
        generated_at=inputs.generated_at,
        since=inputs.since,
        task_filter=inputs.task_filter,
        head=inputs.head or "-",
        ledger=ledger_view(ledger),
        tasks=task_views,
        timeline=timeline(window) if ok else None,
        denials=denials(window) if ok else None,
        evaluations=evaluation_views,
        withheld=_withheld(inputs),
        notes=tuple(notes),
    )
