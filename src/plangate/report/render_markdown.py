"""The report as short Markdown for a CI job summary: the banner, tasks, top denials, evaluations.

Job summaries render HTML inside Markdown, so every value is escaped twice over:
``&``, ``<`` and ``>`` become entities and Markdown punctuation is
backslash-escaped (a value cannot open a link, an image, a table cell or code).
Line breaks inside a value become spaces.
"""

from __future__ import annotations

from collections.abc import Sequence

from plangate.report.model import Report

_MD_SPECIAL = frozenset("\\`*_{}[]()#+-.!|~>")
TOP = 5
"""How many reason codes the Markdown lists."""


def md(value: object) -> str:
    """``value`` as inert Markdown text on one line."""
    text = " ".join(str(value).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return lines


def render_markdown(report: Report) -> str:
    """The Markdown summary."""
    ledger = report.ledger
    lines = [f"## PlanGate report: {md(report.repository)}", ""]
    if ledger.verified:
        lines.append(f"**Ledger verified**: {ledger.entries} entries, head {md(ledger.head_hash)}")
    else:
        first = f", first bad entry {ledger.first_bad_seq}" if ledger.first_bad_seq else ""
        lines.append(f"**:x: Ledger {md(ledger.verdict)}**{md(first)}: no ledger figures are shown")
        lines += [f"- {md(r.code)}: {md(r.message)}" for r in ledger.reasons]
    lines.append("")
    if report.since:
        lines += [f"Since {md(report.since)}.", ""]
    lines += ["### Tasks", ""]
    if report.tasks:
        lines += _table(
            ["task", "state now", "decision", "approved by", "delivery"],
            [
                [
                    t.task_id,
                    t.state,
                    t.decision,
                    t.approved_by,
                    t.delivery_state + ("" if t.delivery_verified else " (unverified)"),
                ]
                for t in report.tasks
            ],
        )
    else:
        lines.append("No task directories.")
    lines.append("")
    if report.denials is not None:
        lines += [f"### Denials: {report.denials.total}", ""]
        if report.denials.probes:
            lines += [f"{report.denials.probes} doctor probe(s) not counted as refusals.", ""]
        if report.denials.by_code:
            lines += _table(
                ["reason code", "count"], [[c.label, c.count] for c in report.denials.by_code[:TOP]]
            )
        lines.append("")
    if report.evaluations:
        lines += ["### Evaluations", ""]
        lines += _table(
            ["candidate", "Policy Verdict", "independence", "decision"],
            [
                [
                    v.candidate_id,
                    v.policy_verdict,
                    f"{v.independence} (required {v.independence_required})",
                    v.decision,
                ]
                for v in report.evaluations
            ],
        )
        lines.append("")
    if report.withheld:
        lines += [f"Not shown: {md(report.withheld)}.", ""]
    return "\n".join(lines)
