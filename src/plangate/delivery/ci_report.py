"""What ``ci check`` hands to a CI system besides its verdict (pure renderers).

The forms of one :class:`~plangate.verdict.Result` a CI system reads, and the CODEOWNERS
suggestion that hands the same paths to code-owner review:

- :func:`workflow_annotations`: GitHub workflow commands
  (``::error file=PATH,title=CODE::message``), one per finding (:func:`findings`: a
  reason on one path, saying what is wrong with that path), so a reviewer sees each
  reason on the file it is about;
- :func:`summary_markdown`: a short Markdown job summary (verdict, what it means, reasons);
- :func:`sarif`: a SARIF 2.1.0 log for code-scanning tools, one result per finding;
- :func:`codeowners`: a CODEOWNERS suggestion for the paths a human approves;
- :func:`authority_lines`: who approved, in plain words: approvals are
  unauthenticated when the base has no trust root requiring signatures, else
  each task's verified approver and reviewers.

Every text that reaches a workflow command is escaped the way GitHub documents for
workflow commands (``%``, CR and LF in the message; also ``:`` and ``,`` in property
values), so a path or message can never start a command of its own.
"""

from __future__ import annotations

import re
from typing import Any

from plangate.records import NamedTuple
from plangate.verdict import Reason, Result

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_MEANING = {
    "ACCEPTED": "every change lies in an approved task's scope, or is one the base's "
                ".plangate/policy.toml lets a pull request make without a task; no protected "
                "surface changed",
    "HUMAN_REQUIRED": "a human must approve this pull request (protected surfaces, the policy "
                      "for a pull request without a task, or adoption): PlanGate hands the "
                      "decision to the repository's human gate (a job in a deployment "
                      "environment with required reviewers, or code-owner review)",
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


FINDING: dict[str, str] = {
    "CI_OUTSIDE_SCOPE": "outside every task's allowed paths, or denied by a task's plan",
    "CI_NO_TASK": "changed without a task, and no rule of the base's .plangate/policy.toml "
                  "lets it through",
    "CI_TASKLESS_HUMAN": "changed without a task: the base's .plangate/policy.toml sends it "
                         "to a human",
    "CI_POLICY_CHANGED": "the policy for a pull request without a task: a human approves a "
                         "change to it",
    "CI_PROTECTED_SURFACE": "a protected surface: a human reviews and approves the change",
    "CI_ADOPTS_PLANGATE": "adopts PlanGate: a human reviews it",
    "CI_TRUST_ROOT_CHANGED": "a trust-root file: it changes only with approvals signed under "
                             "the base's trust root, or a human's review",
    "CI_PATH_UNMATCHABLE": "not a canonical repository path: no scope or surface rule can "
                           "judge it",
    "CI_HEAD_NOT_CHECKED_OUT": "differs from the head commit in the working tree",
}
"""What one finding says about the one path it is on, per reason code (the reason's own
message lists every path; a finding names only its own). A code without a row keeps its
message."""

ANNOTATIONS_PER_KIND = 10
"""Annotations of one kind (error, warning) GitHub shows for a step; the rest are dropped,
so the last one shown says how many more the job summary and the SARIF log hold."""


class Finding(NamedTuple):
    """One thing to fix or review: a reason on one path (or on no path), with its level."""

    code: str
    level: str
    text: str
    path: str = ""


def findings(result: Result) -> list[Finding]:
    """One finding per offending path of each reason (one for a reason without a path).

    Its level is the reason's own weight: ``error`` for a row that rejects, ``warning``
    for one that needs a human (``facts["severity"]``, else the result's verdict).
    """
    severity = result.facts.get("severity")
    graded = severity if isinstance(severity, dict) else {}
    out: list[Finding] = []
    for reason in result.reasons:
        level = _LEVEL.get(str(graded.get(reason.code, result.verdict)), "error")
        hint = f" (hint: {reason.hint})" if reason.hint else ""
        paths = _offending(reason)
        if not paths:
            out.append(Finding(reason.code, level, reason.message + hint))
            continue
        phrase = FINDING.get(reason.code)
        for path in paths:
            text = f"{path}: {phrase}{hint}" if phrase else reason.message + hint
            out.append(Finding(reason.code, level, text, path))
    return out


def workflow_annotations(result: Result) -> list[str]:
    """GitHub workflow command lines for ``result``: one per finding (:func:`findings`).

    At most :data:`ANNOTATIONS_PER_KIND` of each kind: past that, the last one says how
    many more findings the job summary and the SARIF log hold.
    """
    kinds: dict[str, list[str]] = {}
    for finding in findings(result):
        command = "error" if finding.level == "error" else "warning"
        title = _escape_property(f"PlanGate {finding.code}")
        where = f"file={_escape_property(finding.path)}," if finding.path else ""
        kinds.setdefault(command, []).append(
            f"::{command} {where}title={title}::{_escape_data(finding.text)}")
    lines: list[str] = []
    for command, found in kinds.items():
        if len(found) <= ANNOTATIONS_PER_KIND:
            lines += found
            continue
        more = len(found) - ANNOTATIONS_PER_KIND + 1
        lines += found[:ANNOTATIONS_PER_KIND - 1]
        lines.append(f"::{command} title=PlanGate::{more} more {command} finding(s): see the "
                     "job summary, the SARIF log or the JSON result in the log")
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
    rules: dict[str, dict[str, Any]] = {}
    for reason in result.reasons:
        rules.setdefault(
            reason.code,
            {
                "id": reason.code,
                "shortDescription": {"text": reason.code},
                "help": {"text": reason.hint or reason.message},
            },
        )
    results: list[dict[str, Any]] = []
    for finding in findings(result):
        entry: dict[str, Any] = {"ruleId": finding.code, "level": finding.level,
                                 "message": {"text": finding.text}}
        if finding.path:
            entry["locations"] = [{"physicalLocation": {"artifactLocation": {
                "uri": _uri_reference(finding.path), "uriBaseId": "%SRCROOT%"}}}]
        results.append(entry)
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


_CODEOWNERS_SAFE = re.compile(r"[A-Za-z0-9._+@/*?-]+")
"""Pattern text a CODEOWNERS line carries as is (it has no escape for '#', '!', '[', ' ')."""

OWNER_RE = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:/[A-Za-z0-9._-]+)?"
                      r"|[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
"""A GitHub user (``@name``), team (``@org/team``) or e-mail address."""


def codeowners_pattern(pattern: str) -> str | None:
    """A PlanGate glob (anchored at the repository root) as a CODEOWNERS pattern, or None
    when CODEOWNERS cannot say it. ``**/x`` matches at any depth in both."""
    if _CODEOWNERS_SAFE.fullmatch(pattern) is None:
        return None
    return pattern if pattern.startswith("**/") else "/" + pattern


def codeowners(sections: list[tuple[str, tuple[str, ...]]], owner: str) -> str:
    """A CODEOWNERS suggestion: per section (a comment, its PlanGate globs), one line per
    pattern naming ``owner``; a pattern CODEOWNERS cannot say is left as a comment.

    GitHub matches CODEOWNERS case-sensitively and the last matching line wins, so the
    text warns that lines added after it may take paths away from ``owner``.
    """
    lines = [
        "# Code owners for the paths PlanGate hands to a human (plangate ci codeowners).",
        "# Require review from Code Owners on the base branch for it to hold. GitHub matches",
        "# these lines case-sensitively (PlanGate's surfaces fold case) and the last matching",
        "# line wins: keep them at the end of .github/CODEOWNERS.",
    ]
    seen: set[str] = set()
    for title, patterns in sections:
        lines += ["", f"# {title}"]
        for pattern in patterns:
            if pattern in seen:
                continue
            seen.add(pattern)
            said = codeowners_pattern(pattern)
            lines.append(f"{said} {owner}" if said else
                         f"# not expressible in CODEOWNERS, review by hand: {pattern!r}")
    return "\n".join(lines) + "\n"
