"""Apply is the boundary: judge an isolated run's result, and only then let it reach the repository.

:func:`judge` (pure) decides with the rules of ``ci check``
(:func:`plangate.delivery.ci.decide`, the one home of the scope, protected-
surface and path rules: the approved commit plays the base, the recorded
result the head, the task the one verified task) followed by :data:`RULES`,
exec's own rows:

1. ``plan_package_untouched``: no changed path lies in a task directory
   (``docs/working/TASK-XXXX/``) or in ``.plangate/``
   (``EXEC_PLAN_PACKAGE_CHANGED``): what judges the run is never changed by it.

The verdict is the strictest one: ``REJECTED`` (exit 1) or ``HUMAN_REQUIRED``
(exit 3) keep the patch and the reasons for a human under the run's directory
and nothing reaches the repository; ``ACCEPTED`` lets :func:`apply_result`
fetch the result into a branch named for the task and run, and fast-forward the
current branch when it is still at the approved commit with no tracked file
changed and the command succeeded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from plangate.delivery import ci
from plangate.errors import EnvironmentFailure
from plangate.git import Git, GitError
from plangate.records import NamedTuple
from plangate.surfaces import ResolvedSurfaces
from plangate.verdict import Reason, Result

REJECTED = ci.REJECTED
HUMAN_REQUIRED = ci.HUMAN_REQUIRED
ACCEPTED = ci.ACCEPTED

BRANCH_PREFIX = "plangate/runs"
"""Results reach the repository as ``plangate/runs/<run id>``."""

_LISTED = 8


class ResultFacts(NamedTuple):
    """Everything :func:`judge` reads (gathered by the isolated run)."""

    task_id: str
    approved: str
    result: str
    changed: tuple[str, ...]
    unmatchable: tuple[tuple[str, str], ...]
    surfaces: ResolvedSurfaces
    verification: Result
    plan: bytes | None


def _plan_package_untouched(facts: ResultFacts) -> tuple[Reason, ...]:
    touched = [
        p
        for p in facts.changed
        if ci.TASK_PATH_RE.fullmatch(p) or p == ".plangate" or p.startswith(".plangate/")
    ]
    touched += [
        raw for raw, _ in facts.unmatchable if raw.startswith(("docs/working/", ".plangate/"))
    ]
    if not touched:
        return ()
    return (
        Reason(
            "EXEC_PLAN_PACKAGE_CHANGED",
            f"the run changed {len(touched)} path(s) of a plan package or of PlanGate's "
            "own directory: " + ", ".join(touched[:_LISTED]),
            "plan packages and .plangate/ change outside a run, reviewed by a human",
            tuple(touched),
        ),
    )


class Rule(NamedTuple):
    """One of exec's own rows: its name, the verdict it gives when it fails, its check."""

    name: str
    verdict: str
    check: Callable[[ResultFacts], tuple[Reason, ...]]


RULES: tuple[Rule, ...] = (Rule("plan_package_untouched", REJECTED, _plan_package_untouched),)
"""Exec's rows, judged after every row of :data:`plangate.delivery.ci.RULES`."""


def pull_request_facts(facts: ResultFacts) -> ci.PullRequestFacts:
    """The run's result as the pull request ``ci check`` would judge."""
    task = ci.TaskFacts(facts.task_id, None, facts.verification, facts.plan, ())
    return ci.PullRequestFacts(
        base=facts.approved,
        head=facts.result,
        checked_out=facts.result,
        changed=facts.changed,
        surfaces=facts.surfaces,
        tasks=(task,),
        merge_base=facts.approved,
        unmatchable=facts.unmatchable,
    )


def judge(facts: ResultFacts) -> Result:
    """``ci check``'s rules, then :data:`RULES`; every failing row is listed (pure)."""
    ci_result = ci.decide(pull_request_facts(facts))
    failed = [(rule, reasons) for rule in RULES if (reasons := rule.check(facts))]
    verdicts = {ci_result.verdict, *(rule.verdict for rule, _ in failed)}
    verdict = next((v for v in (REJECTED, HUMAN_REQUIRED) if v in verdicts), ACCEPTED)
    reasons = (*ci_result.reasons, *(r for _, found in failed for r in found))
    out: dict[str, Any] = dict(ci_result.facts)
    out["exec_rules"] = [rule.name for rule, _ in failed]
    return Result(verdict, reasons, out)


class Applied(NamedTuple):
    """Where an accepted result reached the repository."""

    branch: str
    fast_forwarded: bool
    note: str


def branch_for(run_id: str) -> str:
    """The branch an accepted result is written to."""
    return f"{BRANCH_PREFIX}/{run_id}"


def apply_result(
    root: Path,
    state_git: Path,
    result: str,
    approved: str,
    run_id: str,
    *,
    succeeded: bool,
) -> Applied:
    """Fetch ``result`` into its run branch; fast-forward the current branch when allowed."""
    git = Git(root)
    branch = branch_for(run_id)
    try:
        git.run(
            [
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "-q",
                str(state_git),
                f"refs/heads/result:refs/heads/{branch}",
            ]
        )
        fetched = git.resolve_commit(f"refs/heads/{branch}")
    except GitError as exc:
        raise EnvironmentFailure(
            "EXEC_APPLY_FAILED",
            f"the result could not be written to {branch}: {exc.message}",
            "the patch is kept in the run's directory",
        ) from None
    if fetched != result:
        raise EnvironmentFailure(
            "EXEC_APPLY_FAILED",
            f"{branch} names {fetched[:12]}, not the result {result[:12]}",
            "remove the branch and retry",
        )
    if not succeeded:
        return Applied(
            branch, False, "the command did not succeed: the current branch is left where it was"
        )
    state = git.head_state()
    if state.commit != approved or state.branch is None:
        return Applied(branch, False, "the current branch moved away from the approved commit")
    changed = git.run(
        ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=none"]
    ).stdout
    if changed:
        return Applied(branch, False, "tracked files of the working tree have changes")
    try:
        git.run(["merge", "--ff-only", "-q", "--no-edit", result])
    except GitError as exc:
        return Applied(branch, False, f"fast-forward refused: {exc.message[:200]}")
    return Applied(branch, True, f"{state.branch.removeprefix('refs/heads/')} fast-forwarded")
