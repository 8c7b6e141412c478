"""Time of check: later targets judged as if earlier parts had already run.

Targets are resolved before anything runs. When an earlier part of the same
command line creates, replaces or moves a link or a directory (``ln``, ``mv``,
``cp -r``, ``rm``, ``git mv``, ``git restore``...) at a path, a later target at
that path or below it may resolve somewhere else once the earlier part has
run (``ln -s ../../.claude/settings.json src/a.py && echo x > src/a.py``).
That cannot be decided before running, so it is a problem. Paths are compared
both as written (normalised) and as resolved.
"""

from __future__ import annotations

from collections.abc import Sequence

from plangate.records import NamedTuple


class Placed(NamedTuple):
    """One write target with its step and both spellings of its path."""

    step: int
    relinks: bool
    lexical: str
    resolved: str | None


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def order_problems(targets: Sequence[Placed]) -> list[str]:
    """A problem for each later target under an earlier relinking write."""
    problems: list[str] = []
    relinking = [t for t in targets if t.relinks]
    if not relinking:
        return problems
    for later in targets:
        for earlier in relinking:
            if earlier.step >= later.step:
                continue
            same = _within(later.lexical, earlier.lexical) or (
                later.resolved is not None
                and earlier.resolved is not None
                and _within(later.resolved, earlier.resolved)
            )
            if same:
                note = (
                    f"{later.lexical!r} is written after an earlier part replaces or links "
                    f"{earlier.lexical!r}: where it lands cannot be decided before running"
                )
                if note not in problems:
                    problems.append(note)
    return problems
