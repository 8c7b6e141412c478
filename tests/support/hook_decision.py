"""Literal facts and actions for the hook decision's unit and property tests."""

from __future__ import annotations

from plangate.hooks.decision import Action, ActionKind, Facts, Target, TaskFacts, decide
from plangate.surfaces import ProtectedPattern, ResolvedSurfaces


def protected(*patterns: str) -> ResolvedSurfaces:
    """A resolved definition protecting ``patterns`` (class ``rules``)."""
    entries = tuple(ProtectedPattern(p, "rules", "protected in this test") for p in patterns)
    return ResolvedSurfaces("explicit", None, None, entries)


SURFACES = protected("**/CLAUDE.md", ".github/workflows/**")
TASK = TaskFacts("TASK-0001", "env", True, allowed_paths=("src/app.py", "tests/**"))
NO_TASK = Facts(surfaces=SURFACES)
WITH_TASK = Facts(surfaces=SURFACES, task=TASK, locked_tasks=frozenset({"TASK-0001"}))


def write(*paths: str, kind: ActionKind = ActionKind.WRITE) -> Action:
    """An action of ``kind`` (a tool write by default) on canonical ``paths``."""
    return Action(kind, tuple(Target(p, p) for p in paths), label="Write")


def codes(facts: Facts, action: Action) -> tuple[str, ...]:
    """The reason codes :func:`decide` gives ``action`` under ``facts``."""
    return decide(facts, action).codes
