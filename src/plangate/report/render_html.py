"""The report as one self-contained HTML page: escaped text, inline SVG, inline CSS, no script.

The page fetches nothing when viewed (no script, font, image or style sheet
from elsewhere) and forbids it too: its Content-Security-Policy allows only the
inline style sheet, so even a value that escaped escaping could not run or
fetch. Every string from the model goes through :func:`esc`; markup is built
only from constants and escaped values.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from plangate.report import charts
from plangate.report.model import (
    Count,
    Denials,
    EvaluationView,
    LedgerView,
    Report,
    TaskView,
    Timeline,
)
from plangate.verdict import Reason

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
"""Nothing but the page's own inline style sheet may load."""

STYLE = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: #1d1d1f;
       margin: 0 auto; max-width: 1100px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin-top: 28px;
  border-bottom: 1px solid #ccc; } h3 { font-size: 15px; margin: 18px 0 6px; }
table { border-collapse: collapse; margin: 8px 0; width: 100%; }
th, td { border: 1px solid #d0d0d0; padding: 3px 6px; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
.keep { white-space: nowrap; }
.free { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
th { background: #f2f2f2; }
code, .mono { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace;
              font-size: 12px; }
.banner { padding: 10px 14px; border-radius: 4px; margin: 10px 0; border: 2px solid; }
.banner.ok { border-color: #2e7d32; background: #edf7ee; }
.banner.bad { border-color: #c62828; background: #fdecea; color: #8e0000; }
.ok-text { color: #2e7d32; font-weight: 600; } .bad-text { color: #c62828; font-weight: 600; }
.warn-text { color: #a05a00; font-weight: 600; }
.unverified { color: #a05a00; }
.withheld { color: #c62828; font-weight: 600; }
svg.chart { max-width: 100%; height: auto; display: block; margin: 8px 0; }
td.hit { background: #e3f1e4; } td.miss { background: #fbe3e1; }
.meta { color: #555; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  section, table, svg.chart, .banner { break-inside: avoid; page-break-inside: avoid; }
  h2 { break-after: avoid; page-break-after: avoid; }
  a { color: inherit; text-decoration: none; }
  th, td.hit, td.miss, .banner { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def esc(value: object) -> str:
    """Text made safe for an HTML text node or a quoted attribute."""
    return html.escape(str(value), quote=True)


def keep(value: object) -> str:
    """An id, a time, a digest or a code: laid out on one line, never broken inside.

    Table cells may break long words (``overflow-wrap``) so that a long path cannot
    widen the page; without this an id or a time in a crowded table is squeezed to
    one character per line.
    """
    return f'<span class="keep">{esc(value)}</span>'


def keep_code(value: object) -> str:
    """:func:`keep` in the monospace face (reason codes, commit ids)."""
    return f'<code class="keep">{esc(value)}</code>'


def free_code(value: object) -> str:
    """A path or other long text in the monospace face: it may wrap anywhere in its cell."""
    return f'<code class="free">{esc(value)}</code>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A table; ``rows`` cells are already-safe markup. A table wider than the page
    scrolls sideways rather than squeezing its columns."""
    # A header such as a ledger kind may break after an underscore, never inside a word.
    head = "".join(f"<th>{esc(h).replace('_', '_<wbr>')}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    attr = f' class="{esc(cls)}"' if cls else ""
    return (f'<div class="scroll"><table{attr}><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _reasons(reasons: Sequence[Reason]) -> str:
    if not reasons:
        return ""
    items = "".join(
        f"<li><code>{esc(r.code)}</code>" + (f": {esc(r.message)}" if r.message else "") + "</li>"
        for r in reasons
    )
    return f'<ul class="reasons">{items}</ul>'


def _codes(codes: Sequence[str]) -> str:
    return ", ".join(keep_code(c) for c in codes)


def _ledger(view: LedgerView) -> str:
    if view.verified:
        status = (
            f'<span class="ok-text">Ledger verified</span>: {esc(view.entries)} entries, '
            f"head <code>{esc(view.head_hash)}</code>"
        )
        cls = "ok"
    else:
        first = (
            f", first bad entry {esc(view.first_bad_seq)}" if view.first_bad_seq is not None else ""
        )
        status = (
            f'<span class="bad-text">Ledger {esc(view.verdict)}</span>{first}. '
            "Nothing below is shown as if it were sound."
        )
        cls = "bad"
    checkpoint = (
        esc(view.checkpoint)
        if view.checkpoint is not None
        else "none recorded (anchor the head hash elsewhere to detect a rewrite)"
    )
    return (
        f'<div class="banner {cls}" id="ledger-status" data-verified='
        f'"{"true" if view.verified else "false"}">'
        f'<div>{status}</div><div class="meta">Location: <code>{esc(view.location)}</code>'
        f'</div><div class="meta">Newest checkpoint: {checkpoint}</div>'
        f"{_reasons(view.reasons)}</div>"
    )


def _withheld(reason: str) -> str:
    return f'<p class="withheld">Not shown: {esc(reason)}.</p>'


def _task_row(task: TaskView) -> list[str]:
    state_cls = "ok-text" if task.holds else "bad-text"
    who_cls = "" if task.authenticated else ' class="unverified"'
    delivery = esc(task.delivery_state)
    if not task.delivery_verified:
        delivery = f'<span class="unverified">{delivery} (unverified)</span>'
    return [
        f'<a class="keep" href="#task-{esc(task.task_id)}">{esc(task.task_id)}</a>',
        f'<span class="free">{esc(task.title)}</span>',
        f'<span class="{state_cls}">{esc(task.state)}</span>',
        esc(task.decision),
        f"<span{who_cls}>{esc(task.approved_by)}</span>",
        keep_code(task.source_sha[:12]),
        esc(len(task.runs)),
        delivery,
    ]


def _task_detail(task: TaskView) -> str:
    scope = (
        ", ".join(f"<code>{esc(p)}</code>" for p in task.scope)
        or f'<span class="bad-text">undefined</span> {esc(task.scope_problem)}'
    )
    denied = (
        " &mdash; denied: " + ", ".join(f"<code>{esc(p)}</code>" for p in task.scope_denied)
        if task.scope_denied
        else ""
    )
    runs = (
        _table(
            ["entry", "at", "program", "isolation", "outcome", "codes"],
            [
                [
                    keep(run.seq),
                    keep(run.at),
                    esc(run.program),
                    esc(run.isolation),
                    f'<span class="{"bad-text" if run.refused else ""}">{esc(run.outcome)}</span>',
                    _codes(run.codes),
                ]
                for run in task.runs
            ],
            "runs",
        )
        if task.runs
        else f"<p>{esc(task.runs_note or 'no runs recorded')}</p>"
    )
    log_cls = "" if task.run_log_verified else ' class="unverified"'
    return (
        f'<section class="task" id="task-{esc(task.task_id)}">'
        f"<h3>{esc(task.task_id)}: {esc(task.title)}</h3>"
        f"<p>State now: <b>{esc(task.state)}</b></p>{_reasons(task.reasons)}"
        f"<p>Approval: {esc(task.decision)} for commit <code>{esc(task.source_sha)}</code>, "
        f"issued {esc(task.issued_at)}; approved by <b>{esc(task.approved_by)}</b>; "
        f'the record names <span class="unverified">{esc(task.declared_by)}</span> '
        "(as written, not verified)</p>"
        f"<p>Scope: {scope}{denied}</p>"
        f"<p{log_cls}>{esc(task.run_log_note)}</p>{runs}"
        f"<p>Delivery: {esc(task.delivery_state)}"
        + (f" &mdash; {esc(task.delivery_note)}" if task.delivery_note else "")
        + "</p></section>"
    )


def _tasks(tasks: Sequence[TaskView]) -> str:
    if not tasks:
        return "<p>No task directories.</p>"
    table = _table(
        ["task", "plan", "state now", "decision", "approved by", "commit", "runs", "delivery"],
        [_task_row(t) for t in tasks],
        "tasks",
    )
    return table + "".join(_task_detail(t) for t in tasks)


def _counts_table(
    title: str, counts: Sequence[Count], *, code: bool = False, paths: bool = False
) -> str:
    def cell(label: str) -> str:
        if not code:
            return keep(label)
        return free_code(label) if paths else keep_code(label)

    return f"<h3>{esc(title)}</h3>" + _table(
        [title.rsplit(" ", maxsplit=1)[-1], "count"],
        [[cell(c.label), esc(c.count)] for c in counts],
    )


def _timeline(data: Timeline) -> str:
    if data.total == 0:
        return "<p>No ledger entries in this period.</p>"
    chart = charts.timeline_chart(data)
    rows = [
        [keep(day)] + [esc(data.counts.get((day, kind), "")) for kind in data.kinds]
        for day in data.days
    ]
    return chart + _table(["day", *data.kinds], rows, "timeline")


def _probes(data: Denials) -> str:
    if not data.probes:
        return ""
    return (f'<p class="meta">{esc(data.probes)} hook decision(s) of plangate doctor\'s probes '
            "are not counted as refusals.</p>")


def _denials(data: Denials) -> str:
    if not data.total:
        return "<p>No hook or exec refusals in this period.</p>" + _probes(data)
    parts = [
        _probes(data),
        charts.bar_chart("Refusals by reason code", [(c.label, c.count) for c in data.by_code])
    ]
    parts.append(_counts_table("Top reason code", data.by_code, code=True))
    if data.by_path:
        parts.append(_counts_table("Top path", data.by_path, code=True, paths=True))
    parts.append(_counts_table("Top offending task", data.by_subject))
    head = "".join(
        f"<th>{h}</th>" for h in ("entry", "at", "kind", "task", "tool", "codes", "paths")
    )
    listed = data.rows
    if len(listed) < data.total:
        parts.append(
            f"<p>Listing the newest {len(listed)} of {data.total} refusals; every refusal "
            "is counted above.</p>"
        )
    body = "".join(
        f'<tr id="e{d.seq}"><td><a class="keep" href="#e{d.seq}">{d.seq}</a></td>'
        f"<td>{keep(d.at)}</td><td>{keep(d.kind)}</td><td>{keep(d.subject)}</td>"
        f"<td>{keep(d.tool)}</td><td>{_codes(d.codes)}</td>"
        f"<td>{', '.join(free_code(p) for p in d.paths)}</td></tr>"
        for d in listed
    )
    parts.append(
        f'<h3>Every refusal</h3><div class="scroll"><table class="denials"><thead><tr>{head}'
        f"</tr></thead><tbody>{body}</tbody></table></div>"
    )
    return "".join(parts)


def _matrix(view: EvaluationView) -> str:
    if not view.mutants:
        return "<p>No known mutants recorded.</p>"

    def cell(hit: bool) -> str:
        return '<td class="hit">detected</td>' if hit else '<td class="miss">missed</td>'

    rows = "".join(
        f"<tr><td>{keep_code(m)}</td>{cell(m in view.baseline_detected)}"
        f"{cell(m in view.candidate_detected)}</tr>"
        for m in view.mutants
    )
    return (
        '<table class="mutants"><thead><tr><th>known mutant</th><th>baseline</th>'
        f"<th>candidate</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _evaluation(view: EvaluationView) -> str:
    decision_cls = {"PASS": "ok-text", "FAIL": "bad-text"}.get(view.decision, "warn-text")
    fixtures = ""
    if view.fixtures:
        labels = [f"{f.fixture} ({f.role})" for f in view.fixtures]
        fixtures = charts.paired_chart(
            f"Paired trials of {view.candidate_id}",
            labels,
            [
                f.baseline_stopped / f.baseline_completed if f.baseline_completed else 0
                for f in view.fixtures
            ],
            [
                f.candidate_stopped / f.candidate_completed if f.candidate_completed else 0
                for f in view.fixtures
            ],
        ) + _table(
            ["fixture", "role", "baseline stopped", "candidate stopped"],
            [
                [
                    keep_code(f.fixture),
                    esc(f.role),
                    esc(f"{f.baseline_stopped}/{f.baseline_completed}"),
                    esc(f"{f.candidate_stopped}/{f.candidate_completed}"),
                ]
                for f in view.fixtures
            ],
            "fixtures",
        )
    problems = "".join(f'<p class="bad-text">{esc(p)}</p>' for p in view.problems)
    grounds = "".join(f"<li>{esc(g)}</li>" for g in view.independence_grounds)
    entries = ", ".join(str(s) for s in view.seqs)
    return (
        f'<section class="evaluation"><h3>{esc(view.candidate_id)}</h3>'
        f'<p class="meta">candidate <code>{esc(view.candidate_digest)}</code>; '
        f"ledger entries {esc(entries)}</p>"
        + (f"<p>Hypothesis: {esc(view.hypothesis)}</p>" if view.hypothesis else "")
        + f"<p>Policy Verdict: <b>{esc(view.policy_verdict)}</b></p>"
        f"{_reasons(view.policy_reasons)}{problems}{fixtures}"
        f"<h4>Known-mutant detection</h4>{_matrix(view)}"
        f"<p>Independence: <b>{esc(view.independence)}</b> (required "
        f"{esc(view.independence_required)})</p><ul>{grounds}</ul>"
        f'<p>Promotion Decision: <span class="{decision_cls}">{esc(view.decision)}</span> '
        f"(production promotion executed: {esc(view.promotion_executed)})</p>"
        f"{_reasons(view.decision_reasons)}</section>"
    )


def _evaluations(views: Sequence[EvaluationView]) -> str:
    if not views:
        return "<p>No evaluations in this period.</p>"
    summary = _table(
        ["candidate", "Policy Verdict", "independence", "decision"],
        [
            [
                keep(v.candidate_id),
                keep(v.policy_verdict),
                esc(f"{v.independence} (required {v.independence_required})"),
                esc(v.decision),
            ]
            for v in views
        ],
        "evaluations",
    )
    return summary + "".join(_evaluation(v) for v in views)


def _section(ident: str, title: str, body: str) -> str:
    return f'<section id="{ident}"><h2>{esc(title)}</h2>{body}</section>'


def render_html(report: Report) -> str:
    """The whole page."""
    withheld = _withheld(report.withheld) if report.withheld else ""
    since = f" since {esc(report.since)}" if report.since else ""
    notes = "".join(f'<p class="meta">{esc(n)}</p>' for n in report.notes)
    timeline = _timeline(report.timeline) if report.timeline is not None else withheld
    denials = _denials(report.denials) if report.denials is not None else withheld
    if report.evaluations is not None:
        evaluations = _evaluations(report.evaluations)
    else:
        evaluations = withheld or "<p>Not part of a task-limited report.</p>"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>PlanGate report: {esc(report.repository)}</title>"
        f"<style>{STYLE}</style></head><body>"
        f"<header><h1>PlanGate report: {esc(report.repository)}</h1>"
        f'<p class="meta">Generated {keep(report.generated_at)}{since}; HEAD '
        f"{keep_code(report.head)}</p>{notes}{_ledger(report.ledger)}</header>"
        + _section("tasks", "Tasks", _tasks(report.tasks))
        + _section("timeline", "Timeline", timeline)
        + _section("denials", "Denials", denials)
        + _section("evaluations", "Evaluations", evaluations)
        + "</body></html>\n"
    )
