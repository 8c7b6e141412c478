"""``plangate plan lint``: what the scope derivation sees in one plan, and the smallest fix (pure).

:func:`lint_plan` reads the exact bytes of ``plan.md`` with the same functions
the scope and the LoopSpec use (:mod:`plangate.plan.files_section`,
:mod:`plangate.plan.loopspec`) and reports:

- the level-2 sections found, and which heading is the Files section;
- each path taken, with its line, its form and whether it is allowed or denied;
- each span or word skipped, and why; each non-canonical path;
- allowed paths that a denied pattern covers (the task cannot change them);
- the verification commands, or why there are none (and the commands of a
  ``Verification Automation`` sub-section, which are not taken);
- for a plan that does not derive, the smallest edit that would make it derive
  (``edits``), first the one that makes the scope derive.

Nothing here reads a file or widens a scope: lint explains the derivation, it
never changes it.
"""

from __future__ import annotations

import re
from typing import Any

from plangate.errors import PlanGateError
from plangate.plan.files_section import (
    FILES_HEADING,
    FilesSection,
    heading,
    outside_fences,
    read_files_section,
)
from plangate.plan.scope import TaskScope
from plangate.records import NamedTuple
from plangate.verdict import Reason

_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
_FILES_WORDS = ("files", "file", "ファイル", "変更対象", "対象ファイル", "touch")
LINT_OK = "DERIVES"
LINT_SCOPE_UNDERIVABLE = "SCOPE_UNDERIVABLE"
LINT_LOOPSPEC_UNDERIVABLE = "LOOPSPEC_UNDERIVABLE"


class PlanLint(NamedTuple):
    """The lint report of one plan."""

    task_id: str
    verdict: str  # DERIVES, LOOPSPEC_UNDERIVABLE (scope derives), SCOPE_UNDERIVABLE
    sections: tuple[tuple[int, str], ...]
    files: FilesSection | None
    scope: TaskScope
    conflicts: tuple[tuple[str, str], ...]  # (allowed pattern, denied pattern)
    verification: tuple[str, ...]
    verification_problem: str
    verification_subsection: tuple[tuple[int, str], ...]
    loopspec_problem: str
    edits: tuple[str, ...]

    @property
    def derives_scope(self) -> bool:
        """True when the plan's scope is defined."""
        return self.scope.defined

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form (one object per task)."""
        files = self.files
        return {
            "task_id": self.task_id,
            "verdict": self.verdict,
            "derives_scope": self.derives_scope,
            "sections": [{"line": n, "heading": h} for n, h in self.sections],
            "files_section": None
            if files is None or not files.found
            else {
                "line": files.heading_lines[0],
                "annotation": files.annotation,
                "subsections": [
                    {"line": n, "heading": h, "denies": d} for n, h, d in files.subsections
                ],
            },
            "taken": []
            if files is None
            else [
                {
                    "text": t.text,
                    "patterns": list(t.patterns),
                    "line": t.line,
                    "form": t.form,
                    "denied": t.denied,
                }
                for t in files.taken
            ],
            "skipped": []
            if files is None
            else [{"text": s.text, "line": s.line, "why": s.why} for s in files.skipped],
            "not_canonical": []
            if files is None
            else [
                {
                    "text": p.text,
                    "line": p.line,
                    "code": p.code,
                    "message": p.message,
                    "suggestion": p.suggestion,
                }
                for p in files.problems
            ],
            "refused": []
            if files is None
            else [
                {"text": r.text, "line": r.line, "code": r.code, "message": r.message,
                 "hint": r.hint}
                for r in files.refusals
            ],
            "not_read": []
            if files is None
            else [{"text": s.text, "line": s.line, "why": s.why} for s in files.unread],
            "allowed_paths": list(self.scope.patterns or ()),
            "denied_paths": list(self.scope.denied),
            "scope_digest": self.scope.digest,
            "conflicts": [{"allowed": a, "denied_by": d} for a, d in self.conflicts],
            "scope_problem": self.scope.problem_text or None,
            "verification": list(self.verification),
            "verification_problem": self.verification_problem or None,
            "verification_subsection": [
                {"line": n, "command": c} for n, c in self.verification_subsection
            ],
            "loopspec_problem": self.loopspec_problem or None,
            "edits": list(self.edits),
        }


def _sections(lines: list[str], outside: list[bool]) -> list[tuple[int, str]]:
    out = []
    for i, line in enumerate(lines):
        head = heading(line) if outside[i] else None
        if head is not None and head[0] == 2:
            out.append((i + 1, head[1]))
    return out


def _verification_subsection(lines: list[str], outside: list[bool]) -> list[tuple[int, str]]:
    """Code spans of list items under a ``### Verification Automation`` heading."""
    out: list[tuple[int, str]] = []
    inside_level: int | None = None
    for i, line in enumerate(lines):
        if not outside[i]:
            continue
        head = heading(line)
        if head is not None:
            if inside_level is not None and head[0] <= inside_level:
                inside_level = None
            if head[0] >= 3 and head[1].startswith("Verification Automation"):
                inside_level = head[0]
            continue
        if inside_level is not None and line.lstrip().startswith(("-", "*", "+")):
            out.extend((i + 1, m.group(1)) for m in _CODE_SPAN_RE.finditer(line))
    return out


def _conflicts(scope: TaskScope) -> list[tuple[str, str]]:
    """Allowed paths (without glob characters) that a denied pattern covers."""
    out = []
    for pattern in scope.patterns or ():
        if "*" in pattern or "?" in pattern:
            continue
        denied = scope.denies(pattern)
        if denied is not None:
            out.append((pattern, denied))
    return out


def _scope_edits(
    files: FilesSection, sections: list[tuple[int, str]], scope: TaskScope
) -> list[str]:
    if len(files.heading_lines) > 1:
        lines = ", ".join(map(str, files.heading_lines))
        return [f"keep one '## {FILES_HEADING}' heading (lines {lines}): merge the lists"]
    if not files.found:
        near = [(n, h) for n, h in sections if any(w in h.casefold() for w in _FILES_WORDS)]
        if near:
            n, h = near[0]
            return [f"line {n}: rename '## {h}' to '## {FILES_HEADING}'"]
        return [
            f"add a section '## {FILES_HEADING}' listing each path the task may change "
            "as a list item '- `dir/file`'"
        ]
    if files.refusals:
        return [
            f"line {r.line}: {r.hint} ({r.code}: {r.message})" for r in files.refusals[:5]
        ]
    if files.problems:
        edits = []
        for p in files.problems:
            if p.suggestion:
                edits.append(f"line {p.line}: write {p.text!r} as {p.suggestion!r}")
            else:
                edits.append(
                    f"line {p.line}: {p.text!r} is not a canonical path "
                    f"({p.code}); write a repository-relative path"
                )
        return edits
    if not scope.defined:
        bare = [s for s in files.skipped if s.why.startswith("a bare path")]
        if bare:
            return [
                f"line {s.line}: write {s.text!r} in backticks as its own list item "
                f"('- `{s.text}`')"
                for s in bare[:5]
            ]
        if files.allowed == () and files.denied:
            return [
                "every path of the section is denied: list the paths the task may change "
                "outside the 'not to touch' sub-section"
            ]
        return [
            f"under '## {FILES_HEADING}' (line {files.heading_lines[0]}), list each path "
            "the task may change as '- `dir/file`'"
        ]
    return []


def _verification_edit(problem: str, subsection: list[tuple[int, str]]) -> str:
    if subsection:
        return (
            "add one line 'Verification Automation: `cmd && cmd`' under '## Testing "
            "Strategy' naming the commands whose success is exit status 0 (the "
            "sub-section's bullet commands state their expected result in prose and are "
            "not taken)"
        )
    if "no '## Testing Strategy' section" in problem:
        return (
            "add a section '## Testing Strategy' with a line 'Verification Automation: "
            "`cmd && cmd`'"
        )
    if "malformed" in problem:
        return (
            "write the verification line as 'Verification Automation: `cmd && cmd`' "
            "with exactly one code span"
        )
    if "lines" in problem and "ambiguous" in problem:
        return "keep exactly one 'Verification Automation:' line"
    return "add a line 'Verification Automation: `cmd && cmd`' under '## Testing Strategy'"


def unreadable_task(task_id: str, reason: Reason) -> PlanLint:
    """The report of a task whose directory cannot be read (the snapshot's reason)."""
    scope = TaskScope(None, Reason(reason.code, reason.message, reason.hint))
    empty: tuple[Any, ...] = ()
    return PlanLint(
        task_id,
        LINT_SCOPE_UNDERIVABLE,
        empty,
        None,
        scope,
        empty,
        empty,
        "",
        empty,
        f"{reason.code}: {reason.message}",
        (reason.hint or "make the task a plain directory",),
    )


def lint_plan(task_id: str, plan: bytes | None) -> PlanLint:
    """The lint report of the ``plan.md`` bytes of ``task_id`` (None: unreadable)."""
    from plangate.plan.loopspec import derive_loopspec, extract_verification_commands
    from plangate.plan.scope import derive_scope

    scope = derive_scope(plan)
    empty: tuple[Any, ...] = ()
    try:
        text = plan.decode("utf-8") if plan is not None else None
    except UnicodeDecodeError:
        text = None
    if plan is None or text is None:
        return PlanLint(
            task_id,
            LINT_SCOPE_UNDERIVABLE,
            empty,
            None,
            scope,
            empty,
            empty,
            "",
            empty,
            scope.problem_text,
            ("save plan.md as a readable UTF-8 file",),
        )
    lines = text.splitlines()
    outside = outside_fences(lines)
    sections = _sections(lines, outside)
    files = read_files_section(text)
    subsection = _verification_subsection(lines, outside)
    commands: tuple[str, ...] = ()
    verification_problem = ""
    try:
        commands = tuple(extract_verification_commands(text))
    except PlanGateError as exc:
        verification_problem = f"{exc.code}: {exc.message}"
    loopspec_problem = ""
    try:
        derive_loopspec(plan, task_id, "maker", "checker")
    except PlanGateError as exc:
        loopspec_problem = f"{exc.code}: {exc.message}"
    edits = _scope_edits(files, sections, scope)
    if verification_problem:
        edits.append(_verification_edit(verification_problem, subsection))
    if loopspec_problem and not verification_problem and scope.defined:
        edits.append(loopspec_problem)
    if not scope.defined:
        verdict = LINT_SCOPE_UNDERIVABLE
    elif loopspec_problem:
        verdict = LINT_LOOPSPEC_UNDERIVABLE
    else:
        verdict = LINT_OK
    return PlanLint(
        task_id,
        verdict,
        tuple(sections),
        files,
        scope,
        tuple(_conflicts(scope)),
        commands,
        verification_problem,
        tuple(subsection),
        loopspec_problem,
        tuple(edits),
    )
