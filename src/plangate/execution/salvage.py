"""The rules of ``plangate runs``: which paths of a refused run may land, which runs may go.

Pure: every function takes facts the IO module (:mod:`plangate.execution.runs`)
has read, and opens no file, runs no git and reads no clock.

**Per-path verdicts.** A refused run is judged path by path with exec's own
judgement (:func:`plangate.execution.apply.judge`, which is ``ci check``'s rules
followed by exec's rows): each changed path is judged as if the run had changed
it alone (:func:`path_verdicts`). A path is in scope only when that judgement is
``ACCEPTED``; a problem of the whole run (the approval no longer holds, the
scope is undefined) refuses every path, so nothing is separable then. The
commit made of the in-scope paths is judged again as a whole before it lands
(:func:`plangate.execution.runs.apply_in_scope`).

**Prune.** :data:`PRUNE_RULES` keep a run, first rule that answers wins: a run
whose task is locked (a run or an apply of that task is in progress), a run
younger than ``--older-than``, a branch that names a commit no other local
branch contains (the only reference to that work), the branch checked out.
Anything else of a finished run goes: its directory under ``.plangate/runs/``
and its ``plangate/runs/<run id>`` branch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from plangate.delivery.ci import ACCEPTED, REJECTED
from plangate.paths import CanonicalPath
from plangate.records import NamedTuple
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.execution.apply import ResultFacts

Judge = Callable[["ResultFacts"], Result]
"""Exec's judgement of a result (:func:`plangate.execution.apply.judge`), handed in."""

RUN_ID_RE = re.compile(r"(TASK-[0-9]{4})-([0-9]{8}T[0-9]{6}Z)-([0-9a-f]{8})")
"""A run id as :func:`plangate.execution.workspace.new_run_id` makes it."""

_DURATION_RE = re.compile(r"([0-9]{1,6})([smhdw])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class RunId(NamedTuple):
    """A parsed run id: its task and when the run started."""

    run_id: str
    task_id: str
    started: datetime


def parse_run_id(text: str) -> RunId | None:
    """The run id's parts, or ``None`` for anything PlanGate did not name."""
    match = RUN_ID_RE.fullmatch(text)
    if match is None:
        return None
    try:
        started = datetime.strptime(match.group(2), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return RunId(text, match.group(1), started)


def parse_duration(text: str) -> timedelta | None:
    """``30m``, ``12h``, ``14d``, ``2w`` (or ``0``) as a duration; ``None`` when malformed."""
    if text == "0":
        return timedelta(0)
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        return None
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


class PathVerdict(NamedTuple):
    """One changed path of a run: its verdict and the reason codes that gave it."""

    path: str
    verdict: str
    codes: tuple[str, ...]

    @property
    def in_scope(self) -> bool:
        """True when the path may land on its own."""
        return self.verdict == ACCEPTED


def _alone(facts: ResultFacts, path: str) -> ResultFacts:
    return facts._replace(
        changed=(CanonicalPath(path),),
        unmatchable=(),
        tree=tuple(t for t in facts.tree if t.path == path),
        workspace=(),
    )


def path_verdicts(facts: ResultFacts, judge: Judge) -> tuple[PathVerdict, ...]:
    """Each changed path judged by ``judge`` as if the run had changed it alone (module doc).

    A path that is not a canonical repository path (``facts.unmatchable``) is
    never in scope.
    """
    out = []
    for path in facts.changed:
        result = judge(_alone(facts, path))
        out.append(PathVerdict(path, result.verdict, result.codes))
    out += [PathVerdict(raw, REJECTED, (code,)) for raw, code in facts.unmatchable]
    return tuple(out)


def left_out_reason(verdicts: tuple[PathVerdict, ...]) -> Reason | None:
    """``RUNS_NOTHING_IN_SCOPE`` when no path of the run may land on its own."""
    if any(v.in_scope for v in verdicts):
        return None
    return Reason(
        "RUNS_NOTHING_IN_SCOPE",
        f"none of the run's {len(verdicts)} changed path(s) is in scope on its own: "
        + ", ".join(f"{v.path} ({'/'.join(v.codes) or v.verdict})" for v in verdicts[:8]),
        "a problem of the whole run (the approval, the scope) refuses every path: see "
        "'plangate runs show RUN'",
    )


class PruneFacts(NamedTuple):
    """What prune knows of one run (a directory, a branch or both)."""

    run: RunId
    now: datetime
    older_than: timedelta
    task_locked: bool
    branch_commit: str | None
    branch_contained_elsewhere: bool
    branch_checked_out: bool


class Keep(NamedTuple):
    """Why a run (or its branch) is kept: ``what`` is ``run`` or ``branch``."""

    what: str
    reason: str


def _in_progress(facts: PruneFacts) -> Keep | None:
    if facts.task_locked:
        return Keep("run", f"{facts.run.task_id} is locked: a run or an apply is in progress")
    return None


def _too_young(facts: PruneFacts) -> Keep | None:
    if facts.now - facts.run.started < facts.older_than:
        return Keep("run", "younger than --older-than")
    return None


def _only_reference(facts: PruneFacts) -> Keep | None:
    if facts.branch_commit is not None and not facts.branch_contained_elsewhere:
        return Keep(
            "branch",
            "no other local branch contains its commit (delete it yourself with "
            "'git branch -D' once the work is merged or unwanted)",
        )
    return None


def _checked_out(facts: PruneFacts) -> Keep | None:
    if facts.branch_commit is not None and facts.branch_checked_out:
        return Keep("branch", "it is the branch checked out")
    return None


PRUNE_RULES: tuple[Callable[[PruneFacts], Keep | None], ...] = (
    _in_progress,
    _too_young,
    _checked_out,
    _only_reference,
)
"""What keeps a run from being pruned, in order (see the module doc)."""


def prune_decision(facts: PruneFacts) -> Keep | None:
    """``None`` when the run's directory and branch go; else what is kept and why.

    A kept ``branch`` keeps only the branch: the run's directory still goes.
    """
    for rule in PRUNE_RULES:
        keep = rule(facts)
        if keep is not None:
            return keep
    return None
