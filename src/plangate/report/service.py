"""The one IO module of ``plangate report``: read the ledger, the tasks and the records once.

1. Each task directory is read through :mod:`plangate.snapshot` and judged by
   :func:`plangate.approval.holds.approval_holds` at HEAD, the verdict exec,
   the hooks and ``plangate status`` give; its scope (from the snapshot's
   ``plan.md``), its ``run.ndjson`` and its delivery record are read.
2. The ledger is streamed once in one snapshot: verified as ``ledger verify``
   verifies it and, in the same pass, folded into the figures the page shows
   (memory does not grow with the number of entries); only a chain that
   verifies hands its figures on (a ledger that cannot be read is ``UNAVAILABLE``).
3. Each delivery record is checked against the verified ledger.
4. The pure builder makes the page model; the renderer makes the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from plangate.errors import PlanGateError, UsageError
from plangate.layout import RUN_LOG_NAME
from plangate.report.build import build_report
from plangate.report.ledger_view import ledger_figures
from plangate.report.model import (
    DeliveryFacts,
    Entry,
    LedgerFacts,
    LedgerFigures,
    Report,
    ReportInputs,
    RunLogFacts,
    TaskFacts,
)
from plangate.report.tasks import run_log_twins
from plangate.verdict import Reason

FORMATS = ("html", "markdown")
MAX_RUN_LOG_BYTES = 16 * 1024 * 1024
"""Largest ``run.ndjson`` a report reads."""
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def check_since(value: str) -> str:
    """``value`` when it is a real ``YYYY-MM-DD`` day, else ``REPORT_SINCE_INVALID``."""
    from datetime import date

    problem = DATE_RE.fullmatch(value) is None
    if not problem:
        try:
            date.fromisoformat(value)
        except ValueError:
            problem = True
    if problem:
        raise UsageError(
            "REPORT_SINCE_INVALID",
            f"--since {value!r} is not a day of the form YYYY-MM-DD",
            "pass a UTC day such as 2026-12-01",
        )
    return value


def read_ledger(
    root: Path,
    env: Mapping[str, str],
    *,
    since: str | None = None,
    task_filter: Sequence[str] = (),
    tasks: Mapping[str, frozenset[str]] | None = None,
) -> LedgerFacts:
    """The ledger read once, verified as ``ledger verify`` does, and folded into figures in
    the same pass; the figures only from a chain that verifies.

    The rows are streamed: each entry is handed to
    :func:`plangate.report.ledger_view.ledger_figures` once it passed its checks, and
    what was folded is dropped unless the whole chain verifies (``tasks``: each listed
    task's run-log twins, see :class:`plangate.report.tasks.TaskTally`).
    """
    from plangate.ledger import LedgerError, open_ledger

    def fold(entries: Iterator[Entry]) -> LedgerFigures:
        return ledger_figures(
            entries,
            since=since,
            task_filter=task_filter,
            tasks=tasks,
        )

    try:
        with open_ledger(root, env, create=False) as ledger:
            result, figures = ledger.verify_streaming(fold)
            location = ledger.location
    except LedgerError as exc:
        return LedgerFacts(
            "UNAVAILABLE", (Reason(exc.code, exc.message, exc.hint),), "-", 0, None, None
        )
    facts = result.facts
    return LedgerFacts(
        verdict=result.verdict,
        reasons=result.reasons,
        location=location,
        entries_checked=int(facts.get("entries") or 0),
        head_hash=facts.get("head_hash"),
        first_bad_seq=facts.get("first_bad_seq"),
        figures=figures if result.accepted else None,
    )


def _read_run_log(task_dir: Path) -> RunLogFacts:
    from plangate.canonical import StrictJSONError, strict_loads_object
    from plangate.fsutil import FileState, read_regular_file

    read = read_regular_file(task_dir / RUN_LOG_NAME, MAX_RUN_LOG_BYTES)
    if read.state is FileState.MISSING:
        return RunLogFacts()
    if not read.ok or read.data is None:
        return RunLogFacts(
            problem=Reason("REPORT_RUN_LOG_UNREADABLE", f"{RUN_LOG_NAME} {read.detail}"),
            present=True,
        )
    lines = []
    for number, line in enumerate(read.data.splitlines(), start=1):
        try:
            lines.append(strict_loads_object(line, f"{RUN_LOG_NAME} line {number}"))
        except StrictJSONError as exc:
            return RunLogFacts(
                problem=Reason("REPORT_RUN_LOG_UNREADABLE", f"line {number}: {exc.message}"),
                present=True,
            )
    return RunLogFacts(lines=tuple(lines), present=True)


def _read_delivery(task_dir: Path) -> DeliveryFacts:
    """The delivery record as read (checked against the ledger by :func:`anchor_delivery`)."""
    from plangate.delivery.log import read_log

    try:
        log = read_log(task_dir)
    except PlanGateError as exc:
        return DeliveryFacts(problem=Reason(exc.code, exc.message, exc.hint), present=True)
    return DeliveryFacts(rows=log.entries, present=log.exists)


def anchor_delivery(task: TaskFacts, ledger: LedgerFacts) -> TaskFacts:
    """``task`` with its delivery record checked against the ledger's delivery transitions."""
    from plangate.delivery.log import ledger_anchor

    record = task.delivery
    if record.problem is not None:
        return task
    ids: list[str] | None = None
    if ledger.verified and ledger.figures is not None:
        told = ledger.figures.tasks.get(task.task_id)
        ids = list(told.delivery_ids) if told is not None else []
    anchor = ledger_anchor(record.rows, ids)
    delivery = replace(record, anchor=anchor.status, anchor_detail=anchor.detail)
    return replace(task, delivery=delivery)


def read_task(
    root: Path, task_id: str, head: str | None, head_problem: Reason | None
) -> TaskFacts:
    """One task as exec would judge it now, with its scope, run log and delivery record
    (not yet checked against the ledger: :func:`anchor_delivery`)."""
    from plangate.approval.holds import approval_holds
    from plangate.plan.scope import derive_scope
    from plangate.report.tasks import plan_title
    from plangate.snapshot import read_task_snapshot, task_dir_for

    try:
        snapshot = read_task_snapshot(task_dir_for(root, task_id))
    except PlanGateError as exc:
        return TaskFacts(task_id, "REJECTED", (Reason(exc.code, exc.message, exc.hint),), {})
    reasons: tuple[Reason, ...]
    if head is None:
        reason = head_problem or Reason("REPORT_HEAD_UNRESOLVED", "HEAD could not be resolved")
        verdict, reasons, facts = "REJECTED", (reason,), {}
    else:
        try:
            result = approval_holds(root, snapshot, head)
            verdict, reasons, facts = result.verdict, result.reasons, dict(result.facts)
        except PlanGateError as exc:
            verdict, reasons, facts = "REJECTED", (Reason(exc.code, exc.message, exc.hint),), {}
    plan = snapshot.artifact("plan.md")
    scope = derive_scope(plan)
    return TaskFacts(
        task_id=task_id,
        verdict=verdict,
        reasons=tuple(reasons),
        facts=facts,
        title=plan_title(plan),
        scope_patterns=scope.patterns,
        scope_denied=scope.denied,
        scope_problem=scope.problem_text,
        run_log=_read_run_log(snapshot.task_dir),
        delivery=_read_delivery(snapshot.task_dir),
    )


def _head(root: Path) -> tuple[str | None, Reason | None]:
    from plangate.git import Git

    try:
        return Git(root).head(), None
    except PlanGateError as exc:
        return None, Reason(exc.code, exc.message, exc.hint)


def gather(
    root: Path,
    env: Mapping[str, str],
    *,
    since: str | None = None,
    tasks: Sequence[str] = (),
    now: str | None = None,
) -> ReportInputs:
    """Read everything a report shows, once."""
    from plangate.approval.status import list_task_ids
    from plangate.clock import utc_now_text
    from plangate.snapshot import check_task_id

    named = tuple(dict.fromkeys(check_task_id(t) for t in tasks))
    if since is not None:
        check_since(since)
    head, head_problem = _head(root)
    task_ids = named or tuple(list_task_ids(root))
    read = tuple(read_task(root, t, head, head_problem) for t in task_ids)
    ledger = read_ledger(
        root,
        env,
        since=since,
        task_filter=named,
        tasks={t.task_id: run_log_twins(t.run_log) for t in read},
    )
    return ReportInputs(
        repository=root.name,
        generated_at=now or utc_now_text(),
        ledger=ledger,
        tasks=tuple(anchor_delivery(t, ledger) for t in read),
        since=since,
        task_filter=named,
        head=head,
        head_problem=head_problem,
    )


def render(report: Report, fmt: str) -> str:
    """The report as text in ``fmt`` (``html`` needs the chart library)."""
    if fmt == "markdown":
        from plangate.report.render_markdown import render_markdown

        return render_markdown(report)
    if fmt != "html":
        raise UsageError(
            "REPORT_FORMAT_INVALID",
            f"unknown report format {fmt!r}",
            "use --format html or --format markdown",
        )
    from plangate.report.charts import require_charts
    from plangate.report.render_html import render_html

    require_charts()
    return render_html(report)


def make_report(
    root: Path,
    env: Mapping[str, str],
    *,
    fmt: str = "html",
    since: str | None = None,
    tasks: Sequence[str] = (),
    now: str | None = None,
) -> tuple[Report, str]:
    """Gather, build and render: the page model and its text."""
    if fmt == "html":  # refuse before reading anything when the charts cannot be drawn
        from plangate.report.charts import require_charts

        require_charts()
    report = build_report(gather(root, env, since=since, tasks=tasks, now=now))
    return report, render(report, fmt)


def write_report(path: Path, text: str) -> None:
    """Write the rendered report to ``path`` atomically (an existing file is replaced)."""
    from plangate.fsutil import atomic_write

    atomic_write(path, text.encode("utf-8"))
