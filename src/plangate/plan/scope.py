"""The task's scope: the allowed-path patterns of an approved ``plan.md``, derived once.

The hooks, exec, ``ci check``, delivery and the arbiter all ask the same
question ("which paths may this task change?") and get the same answer from
:func:`derive_scope`: a pure function over the exact bytes of ``plan.md``
that were verified. Every problem (unreadable, not UTF-8, a non-canonical
path, no path at all) is a scope of ``None`` with a reason: an undefined scope
allows nothing, never everything.
"""

from __future__ import annotations

from typing import NamedTuple

from plangate.errors import PlanGateError
from plangate.verdict import Reason

SCOPE_UNDEFINED = "SCOPE_UNDEFINED"
"""Reason code of every scope problem; callers re-code it in their own vocabulary."""


class TaskScope(NamedTuple):
    """The allowed-path patterns of a plan, or why there are none."""

    patterns: tuple[str, ...] | None
    problem: Reason | None = None

    @property
    def defined(self) -> bool:
        """True when the plan names at least one valid path."""
        return self.patterns is not None

    @property
    def problem_text(self) -> str:
        """The problem's message, or ``""`` for a defined scope."""
        return self.problem.message if self.problem is not None else ""


def _undefined(message: str) -> TaskScope:
    return TaskScope(None, Reason(SCOPE_UNDEFINED, message,
                                  "list the paths the task may change under "
                                  "'## Files / Components to Touch' in plan.md"))


def derive_scope(plan: bytes | None) -> TaskScope:
    """The scope of the ``plan.md`` bytes given (None: the plan could not be read)."""
    from plangate.paths import validate_pattern
    from plangate.plan.loopspec import extract_allowed_paths

    if plan is None:
        return _undefined("plan.md is unreadable")
    try:
        text = plan.decode("utf-8")
    except UnicodeDecodeError:
        return _undefined("plan.md is not UTF-8")
    try:
        patterns = tuple(validate_pattern(p) for p in extract_allowed_paths(text))
    except PlanGateError as exc:
        return _undefined(f"{exc.code}: {exc.message}")
    if not patterns:
        return _undefined("the plan's '## Files / Components to Touch' section lists no path")
    return TaskScope(patterns)
