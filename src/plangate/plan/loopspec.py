"""Derive the LoopSpec from ``plan.md`` (the mapping table of docs/loopspec.md).

Every field of ``{"loop": ...}`` is either a fixed default or derived from the
plan; a field that cannot be derived fails the whole derivation with
``LOOPSPEC_UNDERIVABLE`` naming the field. There is no manual LoopSpec:
derived is the only truth.

Section rule (:func:`extract_section`): a section starts at the one line that
is exactly ``## <heading>`` (trailing whitespace ignored; ``## Goals`` is not
``## Goal``) outside fenced code blocks, and ends before the next level-1 or
level-2 heading. A heading that appears twice is ambiguous and fails.

Allowed paths (:func:`extract_allowed_paths`): the inline code spans of the
``## Files / Components to Touch`` section that look like paths (contain ``/``,
a backslash or a glob character, or are a file name with an extension such as
``README.md``), in order, duplicates removed. Every one must be canonical
(:func:`plangate.paths.canonical_path`, or :func:`plangate.paths.validate_pattern`
when it contains a glob character); a non-canonical one fails naming it.

Verification commands: the ``Verification Automation: `cmd && cmd``` line,
read from the ``## Testing Strategy`` section only, exactly once; the command is
split on ``&&`` and every piece must be non-empty.

Normalised YAML (:func:`normalised_yaml`): ``yaml.safe_dump`` with
``sort_keys=True, allow_unicode=True, default_flow_style=False,
explicit_start=False, explicit_end=False, indent=2, width=2**31 - 1,
line_break="\\n"`` encoded as UTF-8. ``derived_loopspec_hash`` is ``sha256:`` of
those bytes (:func:`loopspec_hash`), pinned by a golden test.
"""

from __future__ import annotations

import re
from typing import Any

from plangate.canonical import DIGEST_RE, sha256_digest
from plangate.errors import InputRejected
from plangate.paths import PathRejected, canonical_path, validate_pattern
from plangate.snapshot import check_task_id

GOAL_HEADING = "Goal"
FILES_HEADING = "Files / Components to Touch"
TESTING_HEADING = "Testing Strategy"
VERIFICATION_PREFIX = "Verification Automation:"

YAML_WIDTH = 2**31 - 1
"""Emitter width: large enough that PyYAML never folds a line."""

_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
_FILE_NAME_RE = re.compile(r"[A-Za-z0-9_.-]*[A-Za-z0-9_-]\.[A-Za-z0-9]+")
_VERIFICATION_RE = re.compile(r"Verification Automation:[ \t]*`([^`]+)`")


class LoopSpecError(InputRejected):
    """The LoopSpec cannot be derived; the message names the field."""


def _underivable(field: str, message: str, hint: str) -> LoopSpecError:
    return LoopSpecError("LOOPSPEC_UNDERIVABLE", f"loop.{field}: {message}", hint)


def _outside_fences(lines: list[str]) -> list[bool]:
    """For each line, True when it is outside a fenced code block (fence lines count as inside)."""
    flags: list[bool] = []
    fence: str | None = None
    for line in lines:
        match = _FENCE_RE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
            flags.append(False)
        elif fence is not None:
            if line.lstrip(" ").startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            flags.append(False)
        else:
            flags.append(True)
    return flags


def _heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading at column 0, or None.

    One to six ``#``, then a space or tab and the text; trailing spaces, tabs
    and closing ``#`` are not part of the text. A line of only ``#``, spaces and
    tabs is a heading with empty text (at most level 6). Written with string
    scans rather than a regular expression so the work is linear in the line
    (a lazy group before an optional tail is quadratic on long lines).
    """
    stripped = line.rstrip()
    hashes = len(stripped) - len(stripped.lstrip("#"))
    if hashes == 0:
        return None
    rest = stripped[hashes:]
    if rest.strip(" \t#") == "":
        return min(hashes, 6), ""
    if hashes > 6 or rest[0] not in " \t":
        return None
    return hashes, rest.strip(" \t").rstrip(" \t#").strip()


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

    Raises :class:`LoopSpecError` (``LOOPSPEC_SECTION_AMBIGUOUS``) when the
    heading appears more than once.
    """
    lines = text.splitlines()
    outside = _outside_fences(lines)
    starts = [
        i for i, line in enumerate(lines)
        if outside[i] and _heading(line) == (2, heading)
    ]
    if not starts:
        return None
    if len(starts) > 1:
        raise LoopSpecError(
            "LOOPSPEC_SECTION_AMBIGUOUS",
            f"plan.md has {len(starts)} '## {heading}' sections",
            "keep exactly one section with that heading",
        )
    body: list[str] = []
    for i in range(starts[0] + 1, len(lines)):
        head = _heading(lines[i]) if outside[i] else None
        if head is not None and head[0] <= 2:
            break
        body.append(lines[i])
    return "\n".join(body).strip()


def _missing_section(field: str, heading: str, text: str) -> LoopSpecError:
    near = [h for h in level2_headings(text)
            if h != heading and (heading.casefold() in h.casefold()
                                 or h.casefold() in heading.casefold())]
    extra = (f" (found {', '.join(repr('## ' + h) for h in near)}: headings are matched "
             "exactly)") if near else ""
    return _underivable(field, f"plan.md has no '## {heading}' section{extra}",
                        f"add a section headed exactly '## {heading}'")


def _section_code_spans(section: str) -> list[str]:
    lines = section.splitlines()
    spans: list[str] = []
    for line, outside in zip(lines, _outside_fences(lines), strict=True):
        if outside:
            spans.extend(m.group(1) for m in _CODE_SPAN_RE.finditer(line))
    return spans


def is_path_candidate(span: str) -> bool:
    """True when an inline code span of the Files section is meant as a path."""
    if any(ch in span for ch in "/\\*?"):
        return True
    return _FILE_NAME_RE.fullmatch(span) is not None


def extract_path_candidates(plan_text: str) -> list[str]:
    """Path-like code spans of the Files section, in order, duplicates removed, unvalidated."""
    section = extract_section(plan_text, FILES_HEADING)
    if section is None:
        return []
    out: list[str] = []
    for span in _section_code_spans(section):
        if is_path_candidate(span) and span not in out:
            out.append(span)
    return out


def check_allowed_path(text: str) -> str:
    """Return ``text`` if it is a canonical path or (with glob characters) pattern, else raise."""
    if "*" in text or "?" in text:
        return validate_pattern(text)
    return canonical_path(text)


def extract_allowed_paths(plan_text: str) -> list[str]:
    """Allowed paths of the ``## Files / Components to Touch`` section.

    Returns ``[]`` when the section is missing or lists no path (callers that
    need a scope treat that as a failure). Raises :class:`LoopSpecError`
    (``LOOPSPEC_PATH_NOT_CANONICAL``) naming the first non-canonical path.
    """
    paths = extract_path_candidates(plan_text)
    for path in paths:
        try:
            check_allowed_path(path)
        except PathRejected as exc:
            raise LoopSpecError(
                "LOOPSPEC_PATH_NOT_CANONICAL",
                f"loop.scope.allowed_paths: {path!r} in '## {FILES_HEADING}' is not canonical "
                f"({exc.code}: {exc.message})",
                "write repository-relative paths without './', '..', '//', a leading or "
                "trailing '/' or backslashes",
            ) from None
    return paths


def extract_verification_commands(plan_text: str) -> list[str]:
    """The ``&&``-separated commands of the Testing Strategy's verification line."""
    field = "verification.deterministic"
    section = extract_section(plan_text, TESTING_HEADING)
    if section is None:
        raise _missing_section(field, TESTING_HEADING, plan_text)
    lines = section.splitlines()
    prefixed = [ln for ln, outside in zip(lines, _outside_fences(lines), strict=True)
                if outside and VERIFICATION_PREFIX in ln]
    if not prefixed:
        raise _underivable(field, f"no '{VERIFICATION_PREFIX} `...`' line in '## "
                           f"{TESTING_HEADING}'",
                           f"add a line '{VERIFICATION_PREFIX} `cmd && cmd`' to that section")
    if len(prefixed) > 1:
        raise _underivable(field, f"{len(prefixed)} '{VERIFICATION_PREFIX}' lines (ambiguous)",
                           "keep exactly one verification line")
    matches = _VERIFICATION_RE.findall(prefixed[0])
    if len(matches) != 1 or len(_CODE_SPAN_RE.findall(prefixed[0])) != 1:
        raise _underivable(field, f"malformed line {prefixed[0].strip()!r}",
                           f"write '{VERIFICATION_PREFIX} `cmd && cmd`' with one code span")
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
    if extract_section(text, FILES_HEADING) is None:
        raise _missing_section("scope.allowed_paths", FILES_HEADING, text)
    allowed = extract_allowed_paths(text)
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
            "scope": {"allowed_paths": allowed},
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
    return isinstance(value, str) and DIGEST_RE.fullmatch(value) is not None
