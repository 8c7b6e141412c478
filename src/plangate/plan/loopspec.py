"""Derive the LoopSpec from ``plan.md`` (the mapping table of docs/loopspec.md).

Every field of ``{"loop": ...}`` is either a fixed default or derived from the
plan; a field that cannot be derived fails the whole derivation with
``LOOPSPEC_UNDERIVABLE`` naming the field. There is no manual LoopSpec:
derived is the only truth.

Section rule (:func:`extract_section`): a section starts at the one line that
is exactly ``## <heading>``, optionally followed by one parenthetical annotation
(``## Goal (draft)``, ASCII or full-width brackets; trailing whitespace ignored; ``## Goals`` is not
``## Goal``) outside fenced code blocks, and ends before the next level-1 or
level-2 heading. A heading that appears twice is ambiguous and fails.

Scope (:func:`extract_scope`): allowed and denied paths of the
``## Files / Components to Touch`` section, read by
:func:`plangate.plan.files_section.read_files_section` (the rules are listed
there and in docs/loopspec.md). Every path must be canonical; a non-canonical
one fails naming it and its line. Denied paths appear as
``loop.scope.denied_paths`` only when there are any.

Verification commands: the one ``Verification Automation: `cmd && cmd``` line
(or its bold form) of the ``## Testing Strategy`` and ``## Verification Plan``
sections; the command is split on ``&&`` and every piece must be non-empty.

Normalised YAML (:func:`normalised_yaml`): ``yaml.safe_dump`` with
``sort_keys=True, allow_unicode=True, default_flow_style=False,
explicit_start=False, explicit_end=False, indent=2, width=2**31 - 1,
line_break="\\n"`` encoded as UTF-8. ``derived_loopspec_hash`` is ``sha256:`` of
those bytes (:func:`loopspec_hash`), pinned by a golden test.
"""

from __future__ import annotations

import re
from typing import Any

from plangate.canonical import sha256_digest
from plangate.errors import InputRejected
from plangate.paths import canonical_path, validate_pattern
from plangate.plan.files_section import (
    FILES_HEADING,
    FilesSection,
    heading,
    outside_fences,
    read_files_section,
    section_spans,
    shown_line,
    span_skip_reason,
)
from plangate.shapes import is_sha256_digest
from plangate.snapshot import check_task_id

GOAL_HEADING = "Goal"
TESTING_HEADING = "Testing Strategy"
VERIFICATION_PLAN_HEADING = "Verification Plan"
VERIFICATION_PREFIX = "Verification Automation:"

YAML_WIDTH = 2**31 - 1
"""Emitter width: large enough that PyYAML never folds a line."""

_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
_VERIFICATION_RE = re.compile(r"Verification Automation:[ \t]*`([^`]+)`")
_BOLD_PREFIXES = ("**Verification Automation**:", "**Verification Automation:**")

_outside_fences = outside_fences
_heading = heading


class LoopSpecError(InputRejected):
    """The LoopSpec cannot be derived; the message names the field."""


def _underivable(field: str, message: str, hint: str) -> LoopSpecError:
    return LoopSpecError("LOOPSPEC_UNDERIVABLE", f"loop.{field}: {message}", hint)


def level2_headings(text: str) -> list[str]:
    """Texts of every ``## `` heading outside fenced code blocks, in order."""
    lines = text.splitlines()
    out = []
    for line, outside in zip(lines, _outside_fences(lines), strict=True):
        head = _heading(line) if outside else None
        if head is not None and head[0] == 2:
            out.append(head[1])
    return out


def extract_section(text: str, heading: str) -> str | None:
    """Body of the ``## <heading>`` section (stripped), or None when absent.

    The heading may carry one parenthetical annotation (``## Goal (draft)``).
    Raises :class:`LoopSpecError` (``LOOPSPEC_SECTION_AMBIGUOUS``) when the
    heading appears more than once.
    """
    lines = text.splitlines()
    spans = section_spans(lines, _outside_fences(lines), heading)
    if not spans:
        return None
    if len(spans) > 1:
        raise LoopSpecError(
            "LOOPSPEC_SECTION_AMBIGUOUS",
            f"plan.md has {len(spans)} '## {heading}' sections "
            f"(lines {', '.join(str(a + 1) for a, _ in spans)})",
            "keep exactly one section with that heading",
        )
    start, end = spans[0]
    return "\n".join(lines[start + 1:end]).strip()


def _missing_section(field: str, heading: str, text: str) -> LoopSpecError:
    near = [h for h in level2_headings(text)
            if h != heading and (heading.casefold() in h.casefold()
                                 or h.casefold() in heading.casefold())]
    extra = (f" (found {', '.join(repr('## ' + h) for h in near)}: headings are matched "
             "exactly)") if near else ""
    return _underivable(field, f"plan.md has no '## {heading}' section{extra}",
                        f"add a section headed exactly '## {heading}'")


def is_path_candidate(span: str) -> bool:
    """True when an inline code span of the Files section is meant as a path."""
    return span_skip_reason(span) is None


def files_section(plan_text: str) -> FilesSection:
    """The Files section as the derivation reads it (:mod:`plangate.plan.files_section`).

    Raises :class:`LoopSpecError` (``LOOPSPEC_SECTION_AMBIGUOUS``) when two
    headings are the section.
    """
    section = read_files_section(plan_text)
    if len(section.heading_lines) > 1:
        raise LoopSpecError(
            "LOOPSPEC_SECTION_AMBIGUOUS",
            f"plan.md has {len(section.heading_lines)} '## {FILES_HEADING}' sections "
            f"(lines {', '.join(map(str, section.heading_lines))})",
            "keep exactly one section with that heading",
        )
    return section


def _first_problem(section: FilesSection) -> LoopSpecError | None:
    if section.refusals:
        refusal = section.refusals[0]
        return LoopSpecError(
            refusal.code,
            f"loop.scope: line {refusal.line} of '## {FILES_HEADING}': {refusal.message}",
            refusal.hint,
        )
    if not section.problems:
        return None
    problem = section.problems[0]
    fix = f"write {problem.suggestion!r}" if problem.suggestion else (
        "write repository-relative paths without './', '..', '//', a leading '/' or "
        "backslashes")
    return LoopSpecError(
        "LOOPSPEC_PATH_NOT_CANONICAL",
        f"loop.scope.allowed_paths: {problem.text!r} (line {problem.line}) in "
        f"'## {FILES_HEADING}' is not canonical ({problem.code}: {problem.message})",
        fix,
    )


def extract_path_candidates(plan_text: str) -> list[str]:
    """Allowed paths of the Files section as written, in order, duplicates removed."""
    section = read_files_section(plan_text)
    out: dict[str, None] = {}  # an ordered set: linear in the number of paths
    for taken in section.taken:
        if not taken.denied:
            out[taken.text] = None
    return list(out)


def check_allowed_path(text: str) -> str:
    """Return ``text`` if it is a canonical path or (with glob characters) pattern, else raise."""
    if "*" in text or "?" in text:
        return validate_pattern(text)
    return canonical_path(text)


def extract_scope(plan_text: str) -> tuple[list[str], list[str]]:
    """``(allowed, denied)`` patterns of the ``## Files / Components to Touch`` section.

    Both ``[]`` when the section is missing. Raises :class:`LoopSpecError`
    (``LOOPSPEC_PATH_NOT_CANONICAL``) naming the first path that is not
    canonical, allowed or denied (an unusable deny entry never silently widens
    the scope), or ``LOOPSPEC_SECTION_AMBIGUOUS``.
    """
    section = files_section(plan_text)
    problem = _first_problem(section)
    if problem is not None:
        raise problem
    return list(section.allowed), list(section.denied)


def extract_allowed_paths(plan_text: str) -> list[str]:
    """Allowed paths of the Files section (see :func:`extract_scope`)."""
    return extract_scope(plan_text)[0]


def verification_lines(plan_text: str) -> list[tuple[int, str]]:
    """``(line number, text)`` of every verification line the derivation reads.

    The lines of ``## Testing Strategy`` and ``## Verification Plan`` (outside
    fenced blocks) that contain ``Verification Automation:`` or its bold form
    ``**Verification Automation**:``.
    """
    lines = plan_text.splitlines()
    outside = _outside_fences(lines)
    out: list[tuple[int, str]] = []
    for name in (TESTING_HEADING, VERIFICATION_PLAN_HEADING):
        for start, end in section_spans(lines, outside, name):
            out.extend((i + 1, lines[i]) for i in range(start + 1, end)
                       if outside[i] and _is_verification_line(lines[i]))
    return sorted(out)


def _is_verification_line(line: str) -> bool:
    return VERIFICATION_PREFIX in line or any(p in line for p in _BOLD_PREFIXES)


def extract_verification_commands(plan_text: str) -> list[str]:
    """The ``&&``-separated commands of the plan's one verification line."""
    field = "verification.deterministic"
    lines = plan_text.splitlines()
    outside = _outside_fences(lines)
    sections = [name for name in (TESTING_HEADING, VERIFICATION_PLAN_HEADING)
                if section_spans(lines, outside, name)]
    if not sections:
        raise _missing_section(field, TESTING_HEADING, plan_text)
    for name in sections:
        extract_section(plan_text, name)  # two headings of one name are ambiguous
    prefixed = verification_lines(plan_text)
    where = " or ".join(f"'## {name}'" for name in sections)
    if not prefixed:
        raise _underivable(field, f"no '{VERIFICATION_PREFIX} `...`' line in {where}",
                           f"add a line '{VERIFICATION_PREFIX} `cmd && cmd`' to that section")
    if len(prefixed) > 1:
        raise _underivable(field, f"{len(prefixed)} '{VERIFICATION_PREFIX}' lines (lines "
                           f"{', '.join(str(n) for n, _ in prefixed)}: ambiguous)",
                           "keep exactly one verification line")
    number, line = prefixed[0]
    for bold in _BOLD_PREFIXES:
        line = line.replace(bold, VERIFICATION_PREFIX)
    matches = _VERIFICATION_RE.findall(line)
    if len(matches) != 1 or len(_CODE_SPAN_RE.findall(line)) != 1:
        raise _underivable(field, f"malformed line {number}: {prefixed[0][1].strip()!r}",
                           f"write '{VERIFICATION_PREFIX} `cmd && cmd`' with one code span")
    shown = shown_line(plan_text, number)
    if (shown is None or VERIFICATION_PREFIX not in shown
            or [c.strip() for c in _CODE_SPAN_RE.findall(shown)] != [matches[0].strip()]):
        raise _underivable(field, f"line {number} ({prefixed[0][1].strip()!r}) is not shown as "
                           "written: it lies in an HTML comment or block, after an HTML block, "
                           "in a paragraph with inline HTML, or its code span is not one to a "
                           "renderer",
                           f"write '{VERIFICATION_PREFIX} `cmd && cmd`' as plain text in the "
                           "section")
    pieces = [p.strip() for p in matches[0].split("&&")]
    if any(not p for p in pieces):
        raise _underivable(field, f"empty command in {matches[0]!r}",
                           "remove the stray '&&'")
    return pieces


def _actor(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _underivable(f"actors.{field}", "required (a non-empty name)",
                           f"pass --{field} NAME")
    return value.strip()


def derive_loopspec(plan_md: bytes, task_id: str, maker: str, checker: str) -> dict[str, Any]:
    """Derive ``{"loop": {...}}`` from the bytes of ``plan.md`` (pure).

    Raises :class:`LoopSpecError` naming the first underivable field, or
    ``LOOPSPEC_ACTORS_IDENTICAL`` when maker and checker are the same actor
    (compared case-insensitively, I-2).
    """
    check_task_id(task_id)
    maker_name = _actor(maker, "maker")
    checker_name = _actor(checker, "checker")
    if maker_name.casefold() == checker_name.casefold():
        raise LoopSpecError(
            "LOOPSPEC_ACTORS_IDENTICAL",
            f"loop.actors: maker and checker are the same actor ({maker_name!r}) (I-2)",
            "the checker must be a different agent or person than the maker",
        )
    if plan_md.startswith(b"\xef\xbb\xbf"):
        raise LoopSpecError("LOOPSPEC_PLAN_NOT_UTF8", "plan.md starts with a byte-order mark",
                            "save plan.md as UTF-8 without BOM")
    try:
        text = plan_md.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise LoopSpecError("LOOPSPEC_PLAN_NOT_UTF8",
                            f"plan.md is not valid UTF-8 (byte {exc.start})",
                            "save plan.md as UTF-8") from None
    goal = extract_section(text, GOAL_HEADING)
    if goal is None:
        raise _missing_section("goal.description", GOAL_HEADING, text)
    if not goal:
        raise _underivable("goal.description", f"the '## {GOAL_HEADING}' section is empty",
                           "describe the goal under the heading")
    if not files_section(text).found:
        raise _missing_section("scope.allowed_paths", FILES_HEADING, text)
    allowed, denied = extract_scope(text)
    if not allowed:
        raise _underivable("scope.allowed_paths",
                           f"no path in '## {FILES_HEADING}' (write each path as `dir/file`)",
                           "list every file or glob the change may touch in backticks")
    commands = extract_verification_commands(text)
    return {
        "loop": {
            "name": "plan-first-" + task_id.lower(),
            "trigger": {"type": "manual"},
            "goal": {
                "description": goal,
                "exit_criteria_ref": f"docs/working/{task_id}/test-cases.md",
            },
            "context": {
                "include": ["plan_package", "diff", "test_results"],
                "exclude": ["stale_tool_outputs"],
                "external_sources": [],
            },
            "scope": ({"allowed_paths": allowed, "denied_paths": denied} if denied
                      else {"allowed_paths": allowed}),
            "actors": {"maker": maker_name, "checker": checker_name},
            "verification": {
                "deterministic": [{"cmd": c, "expect_exit": 0} for c in commands],
                "review": ["requirements_fit", "architecture_consistency"],
            },
            "stopping_rule": {
                "terminal_state_ref": "decision-table.md",
                "round_limit_ref": "execution-runbook.md §2-(7)",
            },
            "memory": {"write": ["decision_record"], "ref": "execution-runbook.md §2-(4)"},
            "escalation": {
                "touches_ho": "unconditional",
                "budget_ref": "arbiter-policy.md §7",
            },
        }
    }


def normalised_yaml(spec: dict[str, Any]) -> bytes:
    """The one normalised YAML form of a LoopSpec (see the module docstring)."""
    import yaml  # lazy: keeps yaml off the hook hot path

    text = yaml.safe_dump(
        spec,
        sort_keys=True,
        allow_unicode=True,
        default_flow_style=False,
        explicit_start=False,
        explicit_end=False,
        indent=2,
        width=YAML_WIDTH,
        line_break="\n",
    )
    return text.encode("utf-8")


def loopspec_hash(spec: dict[str, Any]) -> str:
    """``derived_loopspec_hash``: ``sha256:`` of :func:`normalised_yaml`."""
    return sha256_digest(normalised_yaml(spec))


def is_loopspec_hash(value: object) -> bool:
    """True when ``value`` has the digest form ``sha256:<64 lowercase hex>``."""
    return isinstance(value, str) and is_sha256_digest(value)
