"""What ``ci check`` hands to a CI system besides its verdict (pure renderers).

Three forms of one :class:`~plangate.verdict.Result`:

- :func:`workflow_annotations`: GitHub workflow commands
  (``::error file=PATH,title=CODE::message``), one per offending path, so a
  reviewer sees each reason on the file it is about;
- :func:`summary_markdown`: a short Markdown job summary (verdict, what it means, reasons);
- :func:`sarif`: a SARIF 2.1.0 log for code-scanning tools, one result per offending path;
- :func:`authority_lines`: who approved, in plain words: approvals are
  unauthenticated when the base has no trust root requiring signatures, else
  each task's verified approver and reviewers.

Every text that reaches a workflow command is escaped the way GitHub documents for
workflow commands (``%``, CR and LF in the message; also ``:`` and ``,`` in property
values), so a path or message can never start a command of its own.
"""

from __future__ import annotations

from typing import Any

from plangate.verdict import Reason, Result

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_MEANING = {
    "ACCEPTED": "every change lies in an approved task's scope; no protected surface changed",
    "HUMAN_REQUIRED": "a human must review this pull request (protected surfaces or adoption)",
    "REJECTED": "this pull request cannot merge as it is",
}

_LEVEL = {"REJECTED": "error", "HUMAN_REQUIRED": "warning", "ACCEPTED": "note"}

_TABLE_ROWS = 50
"""Reasons listed in a job summary (the JSON and SARIF outputs keep all of them)."""


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_URI_KEPT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def _uri_reference(path: str) -> str:
    """A repository path as a relative URI reference: UTF-8, every other byte percent-encoded."""
    raw = path.encode("utf-8", "surrogateescape")
    return "".join(chr(b) if b in _URI_KEPT else f"%{b:02X}" for b in raw)


def _offending(reason: Reason) -> tuple[str, ...]:
    """The paths a reason is about (its evidence), or none."""
    return tuple(p for p in reason.evidence if p)


def workflow_annotations(result: Result) -> list[str]:
    """GitHub workflow command lines for ``result``: one per offending path, else per reason."""
    command = "error" if result.verdict == "REJECTED" else "warning"
    lines: list[str] = []
    for reason in result.reasons:
        hint = f" (hint: {reason.hint})" if reason.hint else ""
        text = _escape_data(reason.message + hint)
        title = _escape_property(f"PlanGate {reason.code}")
        paths = _offending(reason)
        if not paths:
            lines.append(f"::{command} title={title}::{text}")
            continue
        for path in paths:
            lines.append(f"::{command} file={_escape_property(path)},title={title}::{text}")
    return lines


def _cell(text: str) -> str:
    """A Markdown table cell: no pipes, no line breaks, no HTML."""
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\r", " ")
        .replace("\n", " ")
    )


def authority_lines(result: Result) -> list[str]:
    """Plain lines about authority: unauthenticated, or who signed each task's approval."""
    from plangate.authority.wording import UNAUTHENTICATED

    authority = result.facts.get("authority")
    if not isinstance(authority, dict):
        return [
            f"authority: {UNAUTHENTICATED} on the base commit: anyone who can run "
            "plangate can approve"
        ]
    root = str(authority.get("trust_root", ""))[:12]
    lines = [f"authority: signatures required by the base commit's trust root ({root})"]
    tasks = result.facts.get("tasks")
    for task_id, facts in sorted(tasks.items()) if isinstance(tasks, dict) else []:
        approver = facts.get("approved_by") if isinstance(facts, dict) else None
        reviewers = facts.get("reviewed_by") if isinstance(facts, dict) else None
        if not isinstance(approver, str) or not isinstance(reviewers, list):
            lines.append(f"  {task_id}: no verified approval")
            continue
        names = ", ".join(str(r) for r in reviewers) or "nobody verified"
        lines.append(f"  {task_id}: approved by {approver}; reviewed by {names}")
    return lines


def summary_markdown(result: Result) -> str:
    """A short Markdown job summary of ``result``."""
    verdict = result.verdict
    lines = [
        f"## PlanGate ci check: {verdict}",
        "",
        _MEANING.get(verdict, "unknown verdict: treated as a failure"),
        "",
        *(_cell(line.strip()) + "  " for line in authority_lines(result)),
        "",
    ]
    if result.reasons:
        lines += ["| code | reason | hint |", "|---|---|---|"]
        for reason in result.reasons[:_TABLE_ROWS]:
            lines.append(
                f"| `{_cell(reason.code)}` | {_cell(reason.message)} | {_cell(reason.hint)} |"
            )
        if len(result.reasons) > _TABLE_ROWS:
            lines.append(f"| … | {len(result.reasons) - _TABLE_ROWS} more in the JSON output | |")
        lines.append("")
    return "\n".join(lines) + "\n"


def sarif(result: Result, *, version: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log of ``result`` (one run, one result per offending path)."""
    level = _LEVEL.get(result.verdict, "error")
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for reason in result.reasons:
        rules.setdefault(
            reason.code,
            {
                "id": reason.code,
                "shortDescription": {"text": reason.code},
                "help": {"text": reason.hint or reason.message},
            },
        )
        message = {"text": reason.message + (f" (hint: {reason.hint})" if reason.hint else "")}
        paths = _offending(reason)
        if not paths:
            results.append({"ruleId": reason.code, "level": level, "message": message})
            continue
        for path in paths:
            results.append(
                {
                    "ruleId": reason.code,
                    "level": level,
                    "message": message,
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {
                                    "uri": _uri_reference(path),
                                    "uriBaseId": "%SRCROOT%",
                                }
                            }
                        }
                    ],
                }
            )
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "plangate",
                        "version": version,
                        "rules": list(rules.values()),
                    }
                },
                "results": results,
                "properties": {"verdict": result.verdict},
            }
        ],
    }
