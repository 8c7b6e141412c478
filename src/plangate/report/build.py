"""The page model from the facts the service read: one pure function, rules in order.

1. The ledger banner is always built from the verification result.
2. Ledger figures (timeline, denials, runs, evaluations), computed in one pass
   over the chain as it was verified (:func:`plangate.report.ledger_view.ledger_figures`),
   are shown only for a chain that verified; otherwise they are withheld and the
   page says why.
3. Each task is shown with its verdict now, whatever the ledger says.
"""

from __future__ import annotations

from plangate.report.ledger_view import ledger_view
from plangate.report.model import Report, ReportInputs, TaskLedger, clip
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


def build_report(inputs: ReportInputs) -> Report:
    """The report for ``inputs``."""
    ledger = inputs.ledger
    figures = ledger.figures if ledger.verified else None
    task_views = tuple(
        task_view(t, figures.tasks.get(t.task_id, TaskLedger()) if figures else None)
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
    evaluation_views = figures.evaluations if figures and not inputs.task_filter else None
    return Report(
        repository=clip(inputs.repository, 200),
        generated_at=inputs.generated_at,
        since=inputs.since,
        task_filter=inputs.task_filter,
        head=inputs.head or "-",
        ledger=ledger_view(ledger),
        tasks=task_views,
        timeline=figures.timeline if figures else None,
        denials=figures.denials if figures else None,
        evaluations=evaluation_views,
        withheld=_withheld(inputs),
        notes=tuple(notes),
    )
