"""``plangate ci check``: the last line of defence, for a pull request (pure decision).

Hooks can be bypassed (a host that does not fire them, ``--no-verify``, a
machine without PlanGate). CI sees the result instead: the diff between the
pull request's base and head. :func:`plangate.delivery.ci_service.gather_pull_request`
collects the facts with git and the acceptor; :func:`decide` judges them here,
without IO, as the ordered table :data:`RULES`:

1. ``head_checked_out``: the working tree is at the head, with nothing changed,
   untracked or ignored under ``docs/working/`` (the tasks are read from the
   working tree, so it must hold the head's bytes): ``CI_HEAD_NOT_CHECKED_OUT``;
   when it fails, nothing else was gathered and nothing else is judged.
   The changed paths are those of the pull request alone: from the merge base
   of base and head to the head (a three-dot diff), so commits on the base
   branch after branching never count against it.
2. ``surfaces_available``: the protected surfaces are read from the **base**
   commit (the pull request cannot relax the definition that judges it); a
   definition without entries is ``CI_SURFACES_UNAVAILABLE``.
3. ``tasks_verified``: every task directory touched (``docs/working/TASK-XXXX/...``)
   is a task of this pull request. Each must verify (the acceptor on the head
   checkout, ``CI_TASK_NOT_VERIFIED``), its ``source_sha`` must be an ancestor of
   the head (``CI_SOURCE_NOT_ANCESTOR``) and its plan must name its allowed paths
   (``CI_SCOPE_UNDEFINED``). A signature or statement file of the task that its
   verification did not check (the base's trust root does not require signatures)
   must verify on its own under that root (``CI_APPROVAL_PART_UNVERIFIED``).
4. ``paths_matchable``: every changed path is a canonical repository path
   (``CI_PATH_UNMATCHABLE``: no scope or surface rule can be trusted on it).
5. ``in_scope``: every changed path outside the touched task directories
   (``docs/working/TASK-XXXX/...``) lies inside the allowed paths of at least
   one verified task (case-sensitive) and in no task's denied paths (the
   plan's "not to touch" entries, case-folded): ``CI_OUTSIDE_SCOPE``, or ``CI_NO_TASK``
   when the pull request touches no task at all. Other paths under
   ``docs/working/`` are judged like any other path.
6. ``protected_surfaces``: a changed path a protected surface covers
   (case-folded; a path that cannot be matched counts as protected) needs a
   human (``CI_PROTECTED_SURFACE``). Files a verified task's own verification
   covers (its approval parts, :mod:`plangate.approval.parts`), and the files PlanGate
   never blames in history (:mod:`plangate.ownfiles`), are not protected changes.
7. ``surfaces_defined``: a definition with a problem (only the bundled template,
   or a copy of it: ``HO_BOUNDARY_UNDEFINED``) still protects its patterns, but it
   never lets a pull request pass: a human must define the repository's surfaces.

A pull request that touches no task is judged by ``.plangate/policy.toml`` **at the
base commit** (:mod:`plangate.delivery.pr_policy`; none: every change needs a task):
``policy_readable`` (before ``in_scope``) refuses a policy file the pull request would
merge that is not a valid policy, and a base policy that cannot be read when a
pull request without a task needs it (the strict default judges it meanwhile);
``in_scope`` leaves out the paths a policy rule lets through and the policy file
itself; ``taskless_approval`` (``CI_TASKLESS_HUMAN``) sends the paths of a rule
with ``human = true`` to a human; ``policy_unchanged`` (``CI_POLICY_CHANGED``)
sends every change to the policy file to a human. Protected surfaces and the
trust root are judged as always: no policy rule lifts them.

Adopting PlanGate is one pull request: ``adopts_plangate`` (after ``in_scope``) holds
when the base commit has no ``.plangate/protected-surfaces.toml``, the pull request
adds it, touches no task and changes only :data:`ADOPTION_PATHS` (surfaces, tool
policy, trust root, ignore files, hook configuration, CI workflows). Such a pull
request is ``CI_ADOPTS_PLANGATE`` (a human reviews the trust root and surfaces) in
place of the ``in_scope``, ``protected_surfaces``, ``surfaces_defined`` and
``trust_root_unchanged`` rows, which judge a repository that already has them.

Where the base's trust root requires signatures, three more rows judge authority:
``trust_root_readable``, ``approvals_fresh`` (a touched task whose approval is
already on the base is refused, ``CI_APPROVAL_NOT_FRESH``, unless an approver
signed its continuation for this pull request's merge base:
:mod:`plangate.authority.continuation`) and ``trust_root_unchanged``.

Every row is evaluated and every failing row is listed, in table order. The
verdict is the strictest failing row's (:data:`RULES` gives each row's): ``REJECTED``
(exit 1), else ``HUMAN_REQUIRED`` (exit 3), else ``ACCEPTED`` (exit 0).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from itertools import compress
from operator import methodcaller
from typing import TYPE_CHECKING, Any

from plangate.authority.wording import signers_of
from plangate.delivery.pr_policy import (
    POLICY_RELPATH,
    STRICT,
    PullRequestPolicy,
    TasklessRule,
    taskless_rule_for,
)
from plangate.ownfiles import HISTORY, never_blamed_of
from plangate.paths import (
    CanonicalPath,
    PathRejected,
    is_canonical_path,
    link_leaves_repository,
    match_any,
)
from plangate.plan.scope import TaskScope, check_scope_binding, derive_scope, outside_scopes
from plangate.records import NamedTuple
from plangate.surfaces import ResolvedSurfaces
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.authority.continuation import ContinuationFacts
    from plangate.authority.root import TrustRoot

TASK_PATH_RE = re.compile(r"docs/working/(TASK-[0-9]{4})/.+")
"""A changed path inside a task directory; the group is the task id."""

_TASKS_DIR = "docs/working/"
"""What every path of :data:`TASK_PATH_RE` starts with (a cheaper test, asked first)."""

ADOPTION_REQUIRED = ".plangate/protected-surfaces.toml"
"""The file whose arrival adopts PlanGate: the repository's own protected surfaces."""

ADOPTION_PATHS: tuple[str, ...] = (
    ".plangate/protected-surfaces.toml",
    ".plangate/tools.toml",
    ".plangate/trust.toml",
    ".plangate/allowed_signers",
    ".plangate/revoked_signers",
    ".plangate/.gitignore",
    ".plangate/policy.toml",
    ".gitignore",
    ".claude/settings.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".cursor/hooks.json",
    ".pre-commit-config.yaml",
    ".github/workflows/**",
)
"""What a pull request adopting PlanGate may change: the surfaces, the tool policy, the
trust root, ignore files, hook configuration and CI workflows (``**`` any depth)."""

REJECTED = "REJECTED"
HUMAN_REQUIRED = "HUMAN_REQUIRED"
ACCEPTED = "ACCEPTED"

_LISTED = 8
"""Paths named in a reason message (every path is in its evidence)."""


class TaskFacts(NamedTuple):
    """What was gathered about one touched task.

    ``read_error`` is set when the task directory could not be read; otherwise
    ``outcome`` is the acceptor's verdict under the ancestor policy
    (:func:`plangate.approval.holds.approval_holds_for_merge`), ``plan`` the verified
    ``plan.md`` bytes and ``artifacts`` the artifact names its verification covers.
    """

    task_id: str
    read_error: Reason | None = None
    outcome: Result | None = None
    plan: bytes | None = None
    artifacts: tuple[str, ...] = ()
    parts: tuple[tuple[str, Reason | None], ...] = ()
    """Approval parts the pull request changes that the record's verification does not
    cover (signatures where the base's trust root does not require them), each checked
    on its own under that root (:mod:`plangate.approval.parts_service`): None, or why not."""


class PullRequestFacts(NamedTuple):
    """Everything :func:`decide` reads. ``surfaces`` is None when the head is not checked out.

    ``changed`` holds the canonical changed paths since ``merge_base`` (each validated
    once, when gathered: the rules match them without validating them again);
    ``unmatchable`` the changed paths that are not canonical repository paths
    (as git printed them, each with the code of its problem); ``dirty`` what
    differs from the head under ``docs/working/`` in the working tree.
    """

    base: str
    head: str
    checked_out: str
    changed: tuple[CanonicalPath, ...] = ()
    surfaces: ResolvedSurfaces | None = None
    tasks: tuple[TaskFacts, ...] = ()
    merge_base: str = ""
    unmatchable: tuple[tuple[str, str], ...] = ()
    dirty: tuple[str, ...] = ()
    trust: TrustRoot | None = None
    trust_problem: Reason | None = None
    trust_changed: tuple[str, ...] = ()
    stale_approvals: tuple[tuple[str, str], ...] = ()
    base_adopted: bool = True
    """The base commit already holds ``.plangate/protected-surfaces.toml``."""
    continuations: tuple[tuple[str, ContinuationFacts], ...] = ()
    policy: PullRequestPolicy = STRICT
    """The base commit's ``.plangate/policy.toml`` (:data:`STRICT` without one)."""
    policy_problem: Reason | None = None
    """Why the base commit's policy file cannot be used (then :data:`STRICT` is in force)."""
    head_policy_problem: Reason | None = None
    """Why the head's policy file, when the pull request changes it, is not a valid policy."""
    links: tuple[tuple[str, bytes | None], ...] = ()
    """The symbolic links the pull request adds or changes: (path, target; None when git
    did not hand the target over), from the diff's own modes."""
    gitlinks: tuple[str, ...] = ()
    """The gitlinks (commits of other repositories) the pull request adds or changes."""


def touched_tasks(changed: tuple[str, ...]) -> list[str]:
    """The task ids whose directories the pull request changes, sorted."""
    # The prefix test runs over the whole list in C; the pattern only for the paths under it.
    under = compress(changed, map(methodcaller("startswith", _TASKS_DIR), changed))
    return sorted({m.group(1) for p in under if (m := TASK_PATH_RE.fullmatch(p))})


def _in_task_dir(path: str) -> bool:
    return path.startswith(_TASKS_DIR) and TASK_PATH_RE.fullmatch(path) is not None


class _TaskJudgement(NamedTuple):
    reasons: tuple[Reason, ...]
    facts: dict[str, Any]
    allowed: tuple[str, ...] = ()
    covered: tuple[str, ...] = ()
    scope: TaskScope | None = None


def _judge_task(task: TaskFacts) -> _TaskJudgement:
    """One touched task: verified, approved on this history, with a scope."""
    task_id = task.task_id
    if task.read_error is not None or task.outcome is None:
        error = task.read_error or Reason("?", "not read")
        return _TaskJudgement(
            (Reason("CI_TASK_NOT_VERIFIED", f"{task_id}: {error.code}: {error.message}",
                    error.hint),),
            {"verdict": REJECTED},
        )
    outcome = task.outcome
    facts: dict[str, Any] = {"verdict": outcome.verdict, "codes": list(outcome.codes)}
    if outcome.codes == ("CI_SOURCE_NOT_ANCESTOR",):
        return _TaskJudgement(outcome.reasons, facts)
    if not outcome.accepted:
        first = outcome.reasons[0] if outcome.reasons else Reason("?", "not accepted")
        return _TaskJudgement(
            (Reason("CI_TASK_NOT_VERIFIED",
                    f"{task_id}: {outcome.verdict}: {first.code}: {first.message}",
                    "run 'plangate c3 verify' on the head checkout"),),
            facts,
        )
    scope = derive_scope(task.plan)
    if scope.patterns is None:
        return _TaskJudgement(
            (Reason("CI_SCOPE_UNDEFINED", f"{task_id}: {scope.problem_text}",
                    "declare the allowed paths in plan.md"),),
            facts,
        )
    unbound = check_scope_binding(scope, outcome.facts.get("record"))
    if unbound is not None:  # the scope enforced here is not the scope that was approved
        return _TaskJudgement(
            (Reason(unbound.code, f"{task_id}: {unbound.message}", unbound.hint),), facts
        )
    signers = signers_of(outcome.facts.get("authority"))
    if signers is not None:  # the verified principals, under the base's trust root
        facts["approved_by"] = signers.approver
        facts["reviewed_by"] = list(signers.reviewers)
    facts["allowed_paths"] = list(scope.patterns)
    if scope.denied:
        facts["denied_paths"] = list(scope.denied)
    # The record, its artifacts and, once verified under a trust root requiring them, the
    # signatures and statements: the task's approval parts (one rule with the hooks).
    # Imported here: a pull request without a task (a CI job's process) never loads the
    # approval checks.
    from plangate.approval.parts import verified_parts

    covered = verified_parts(task_id, outcome.facts.get("authority"), task.artifacts)
    covered += tuple(path for path, refused in task.parts if refused is None)
    refused = tuple(Reason("CI_APPROVAL_PART_UNVERIFIED", f"{task_id}: {r.message}", r.hint,
                           (path,)) for path, r in task.parts if r is not None)
    return _TaskJudgement(refused, facts, scope.patterns, covered, scope)


class Case:
    """The gathered facts and what the rules derive from them (pure).

    A plain class, not a dataclass: every ``ci check`` process builds it, and
    importing :mod:`dataclasses` costs more than the whole judgement of a small
    pull request.
    """

    def __init__(self, facts: PullRequestFacts) -> None:
        self.facts = facts

    @cached_property
    def tasks(self) -> dict[str, _TaskJudgement]:
        """Each touched task's judgement, in task order."""
        return {t.task_id: _judge_task(t) for t in self.facts.tasks}

    @cached_property
    def continued(self) -> dict[str, list[Reason]]:
        """Per task with a continuation statement: why it does not hold (empty: it holds)."""
        if not self.facts.continuations:
            return {}  # the usual case; the statement's checks are not even imported
        from plangate.authority.continuation import Expected, continuation_reasons

        out: dict[str, list[Reason]] = {}
        stale = dict(self.facts.stale_approvals)
        tasks = {t.task_id: t for t in self.facts.tasks}
        for task_id, facts in self.facts.continuations:
            task = tasks.get(task_id)
            outcome_facts = task.outcome.facts if task and task.outcome else {}
            plan_hash = outcome_facts.get("current_plan_hash")
            expected = Expected(task_id, plan_hash if isinstance(plan_hash, str) else None,
                                stale.get(task_id, ""), self.facts.merge_base)
            out[task_id] = continuation_reasons(facts, expected)
        return out

    @cached_property
    def covered(self) -> frozenset[str]:
        """Files that a verified task's own verification covers, and the changed files
        PlanGate never blames in history (:func:`plangate.ownfiles.never_blamed`), matched as the
        canonical paths they are."""
        out: set[str] = set(never_blamed_of(self.facts.changed, HISTORY))
        for judgement in self.tasks.values():
            out.update(judgement.covered)
        if self.facts.stale_approvals:
            from plangate.approval.parts import continuation_parts
        for task_id, _source in self.facts.stale_approvals:
            # The continuation of a task approved on the base is judged by approvals_fresh
            # (it holds, or the pull request is rejected); any other one is no part.
            out.update(continuation_parts(task_id))
        return frozenset(out)

    @cached_property
    def adopting(self) -> bool:
        """The pull request adopts PlanGate (:func:`adopts_plangate`)."""
        return adopts_plangate(self.facts)

    @cached_property
    def outside(self) -> list[str]:
        """Changed paths outside the touched task directories that no verified task allows.

        A path the plan of any touched task says not to touch is outside too,
        whatever another pattern allows.
        """
        # The one in-scope rule (exec's commits since approval and delivery use it too).
        undefined = TaskScope(None)  # a task that did not verify lends no scope
        scopes = {task_id: j.scope if j.scope is not None else undefined
                  for task_id, j in self.tasks.items()}
        return outside_scopes(self.facts.changed, scopes, exempt=self.covered.__contains__,
                              canonical=True)

    @cached_property
    def taskless(self) -> dict[str, TasklessRule]:
        """A pull request without a task: each changed path the base's policy lets through.

        The policy file itself is never among them: a change to it goes to a human
        (``policy_unchanged``), judged by the base's version.
        """
        if self.facts.tasks or self.adopting or not self.facts.policy.taskless:
            return {}
        out: dict[str, TasklessRule] = {}
        for path in self.outside:
            rule = taskless_rule_for(self.facts.policy, path)
            if rule is not None:
                out[path] = rule
        return out

    @cached_property
    def unowned(self) -> list[str]:
        """Changed paths outside every task that nothing else answers for: ``in_scope``'s list.

        With a task, every path :attr:`outside` lists. Without one, the policy file (a
        human's decision) and the paths the base's policy lets through are left out.
        """
        if self.facts.tasks:
            return self.outside
        return [p for p in self.outside if p != POLICY_RELPATH and p not in self.taskless]

    @cached_property
    def protected(self) -> list[CanonicalPath]:
        """Changed paths (not covered) that a protected surface of the base commit covers."""
        surfaces = self.facts.surfaces
        if surfaces is None or not surfaces.entries:
            return []
        covered = self.covered
        open_paths = [p for p in self.facts.changed if p not in covered]
        try:
            return surfaces.protected_among(open_paths)
        except PathRejected:  # an entry that does not validate: nothing can be matched
            return open_paths


def adoption_change(changed: tuple[str, ...], base_adopted: bool) -> bool:
    """True when a change adopts PlanGate: its base has no protected-surfaces file, the
    change adds it, touches no task, and changes only :data:`ADOPTION_PATHS`. One rule for
    ``ci check`` and the git hooks (which let a person commit and push it)."""
    return (
        not base_adopted
        and ADOPTION_REQUIRED in changed
        and all(
            TASK_PATH_RE.fullmatch(p) is None and match_any(ADOPTION_PATHS, p) is not None
            for p in changed
        )
    )


def adopts_plangate(facts: PullRequestFacts) -> bool:
    """True when the pull request adopts PlanGate (:func:`adoption_change`), every changed
    path being a canonical one."""
    return not facts.unmatchable and adoption_change(facts.changed, facts.base_adopted)


def adoption_reason(changed: tuple[str, ...]) -> Reason:
    """Why a pull request that adopts PlanGate goes to a human (``CI_ADOPTS_PLANGATE``);
    git's hooks tell a person the same words."""
    return Reason(
        "CI_ADOPTS_PLANGATE",
        "adopts PlanGate: a human reviews the trust root and surfaces: "
        + ", ".join(changed[:_LISTED]) + (f" (+{len(changed) - _LISTED} more)"
                                          if len(changed) > _LISTED else ""),
        "review the protected surfaces, the trust root and the hook configuration, then merge "
        "by hand; every later pull request is judged against them",
        changed,
    )


def _adopts(case: Case) -> tuple[Reason, ...]:
    if not case.adopting:
        return ()
    return (adoption_reason(case.facts.changed),)


def _head_checked_out(case: Case) -> tuple[Reason, ...]:
    facts = case.facts
    if facts.checked_out != facts.head:
        return (Reason(
            "CI_HEAD_NOT_CHECKED_OUT",
            f"the working tree is at {facts.checked_out[:12]}, not the head {facts.head[:12]}",
            "check out the pull request's head commit before running the check",
        ),)
    if facts.dirty:
        return (Reason(
            "CI_HEAD_NOT_CHECKED_OUT",
            f"{len(facts.dirty)} file(s) under docs/working/ differ from the head: "
            + ", ".join(facts.dirty[:_LISTED]),
            "run the check on a clean checkout of the pull request's head commit",
            facts.dirty,
        ),)
    return ()


def _paths_matchable(case: Case) -> tuple[Reason, ...]:
    bad = case.facts.unmatchable
    if not bad:
        return ()
    return (Reason(
        "CI_PATH_UNMATCHABLE",
        f"{len(bad)} changed path(s) are not canonical repository paths: "
        + ", ".join(f"{path!r} ({code})" for path, code in bad[:_LISTED]),
        "rename them to plain paths (no control characters, no non-UTF-8 bytes, NFC)",
        tuple(path for path, _ in bad),
    ),)


def _surfaces_available(case: Case) -> tuple[Reason, ...]:
    surfaces = case.facts.surfaces
    if surfaces is not None and surfaces.entries:
        return ()
    return (Reason("CI_SURFACES_UNAVAILABLE",
                   "the base commit's protected surfaces cannot be resolved",
                   "fix .plangate/protected-surfaces.toml on the base branch"),)


def _tasks_verified(case: Case) -> tuple[Reason, ...]:
    return tuple(r for judgement in case.tasks.values() for r in judgement.reasons)


def _in_scope(case: Case) -> tuple[Reason, ...]:
    outside = case.unowned
    if not outside or case.adopting:
        return ()
    named = ", ".join(outside[:_LISTED])
    if not case.facts.tasks:
        return (Reason("CI_NO_TASK", f"{len(outside)} changed path(s) belong to no task: "
                       + named,
                       "every change needs an approved task (docs/working/TASK-XXXX), or a "
                       f"rule in {POLICY_RELPATH} on the base branch that lets a pull request "
                       "without a task change these paths",
                       tuple(outside)),)
    return (Reason("CI_OUTSIDE_SCOPE",
                   f"{len(outside)} changed path(s) are outside every task's allowed paths "
                   "or denied by a task's plan: "
                   + named,
                   "revert them or re-plan the task with a wider scope",
                   tuple(outside)),)


def _policy_readable(case: Case) -> tuple[Reason, ...]:
    facts = case.facts
    reasons: list[Reason] = []
    if facts.head_policy_problem is not None:  # never merge a policy that cannot be read
        reasons.append(facts.head_policy_problem)
    needed = (not facts.tasks and not case.adopting
              and any(p != POLICY_RELPATH for p in case.outside))
    if facts.policy_problem is not None and needed:  # the strict default judged instead
        reasons.append(facts.policy_problem)
    return tuple(reasons)


def _taskless_approval(case: Case) -> tuple[Reason, ...]:
    needs_human = [p for p, rule in case.taskless.items() if rule.human]
    if not needs_human:
        return ()
    names = sorted({case.taskless[p].name for p in needs_human})
    return (Reason(
        "CI_TASKLESS_HUMAN",
        f"{len(needs_human)} changed path(s) without a task that {POLICY_RELPATH} ("
        + ", ".join(names) + ") sends to a human: " + ", ".join(needs_human[:_LISTED]),
        "a human reviews and approves the change (the policy rule says human = true)",
        tuple(needs_human),
    ),)


def _policy_unchanged(case: Case) -> tuple[Reason, ...]:
    if POLICY_RELPATH not in case.facts.changed or case.adopting:
        return ()
    return (Reason(
        "CI_POLICY_CHANGED",
        f"the pull request changes {POLICY_RELPATH}: it is judged by the base commit's "
        "version, and only a human lets the new one in force",
        "a human reviews what the new policy lets a pull request without a task change",
        (POLICY_RELPATH,),
    ),)


def _protected_surfaces(case: Case) -> tuple[Reason, ...]:
    protected = case.protected
    if not protected or case.adopting:
        return ()
    return (Reason("CI_PROTECTED_SURFACE",
                   f"{len(protected)} protected surface(s) changed: "
                   + ", ".join(protected[:_LISTED]),
                   "a human reviews and approves protected-surface changes",
                   tuple(protected)),)


def _surfaces_defined(case: Case) -> tuple[Reason, ...]:
    surfaces = case.facts.surfaces
    if surfaces is None or surfaces.problem is None or not surfaces.entries or case.adopting:
        return ()
    return (surfaces.problem,)


def _link_text(path: str, target: bytes | None) -> str:
    if target is None:
        return f"{path} -> (target not readable)"
    where = " (outside the repository)" if link_leaves_repository(path, target) else ""
    return f"{path} -> {target[:200].decode('utf-8', 'replace')}{where}"


def _no_links(case: Case) -> tuple[Reason, ...]:
    links = case.facts.links
    if not links:
        return ()
    return (Reason(
        "CI_SYMLINK",
        f"{len(links)} symbolic link(s) added or changed: "
        + ", ".join(_link_text(path, target) for path, target in links[:_LISTED]),
        "a link shows whoever opens it its target's bytes, not what a reviewer read: a "
        "human reviews where it points and approves it, or the change writes the file itself",
        tuple(path for path, _ in links),
    ),)


def _no_gitlinks(case: Case) -> tuple[Reason, ...]:
    gitlinks = case.facts.gitlinks
    if not gitlinks:
        return ()
    return (Reason(
        "CI_GITLINK",
        f"{len(gitlinks)} gitlink(s) (a commit of another repository) added or changed: "
        + ", ".join(gitlinks[:_LISTED]),
        "a gitlink brings another repository's commit that no reviewer of this one read: a "
        "human reviews it and approves it",
        gitlinks,
    ),)


def _trust_root_readable(case: Case) -> tuple[Reason, ...]:
    problem = case.facts.trust_problem
    if problem is None:
        return ()
    return (Reason("CI_TRUST_ROOT_UNREADABLE",
                   f"the base commit's trust root cannot be used: {problem.code}: "
                   f"{problem.message}", problem.hint or "fix the trust root on the base branch"),)


def _approvals_fresh(case: Case) -> tuple[Reason, ...]:
    reasons: list[Reason] = []
    for task_id, source in case.facts.stale_approvals:
        held = case.continued.get(task_id)
        if held is not None and not held:
            continue  # an approver signed its continuation for this starting point
        reasons.append(Reason(
            "CI_APPROVAL_NOT_FRESH",
            f"{task_id}: its approval names {source[:12]}, already on the base before this pull "
            "request: an approved, merged task cannot lend its scope to new changes"
            + (" (its continuation statement does not hold)" if held else ""),
            "plan a new task for this change, approve it again on this branch, or have an "
            "approver sign its continuation: plangate trust continue TASK --base REF --sign KEY",
        ))
        reasons.extend(held or ())
    return tuple(reasons)


def _trust_root_unchanged(case: Case) -> tuple[Reason, ...]:
    facts = case.facts
    if not facts.trust_changed or case.adopting:
        return ()
    signed = (facts.trust is not None and facts.trust.require_signatures and facts.tasks
              and all(not j.reasons for j in case.tasks.values()))
    if signed:
        return ()
    return (Reason("CI_TRUST_ROOT_CHANGED",
                   "the pull request changes the trust root: "
                   + ", ".join(facts.trust_changed),
                   "a change to the trust root lands only with an approval signed under the "
                   "base's trust root", facts.trust_changed),)


class Rule(NamedTuple):
    """One row: its name, the verdict it gives when it fails, and its check."""

    name: str
    verdict: str
    check: Callable[[Case], tuple[Reason, ...]]


RULES: tuple[Rule, ...] = (
    Rule("head_checked_out", REJECTED, _head_checked_out),
    Rule("surfaces_available", REJECTED, _surfaces_available),
    Rule("trust_root_readable", REJECTED, _trust_root_readable),
    Rule("tasks_verified", REJECTED, _tasks_verified),
    Rule("approvals_fresh", REJECTED, _approvals_fresh),
    Rule("paths_matchable", REJECTED, _paths_matchable),
    Rule("policy_readable", REJECTED, _policy_readable),
    Rule("in_scope", REJECTED, _in_scope),
    Rule("adopts_plangate", HUMAN_REQUIRED, _adopts),
    Rule("taskless_approval", HUMAN_REQUIRED, _taskless_approval),
    Rule("policy_unchanged", HUMAN_REQUIRED, _policy_unchanged),
    Rule("protected_surfaces", HUMAN_REQUIRED, _protected_surfaces),
    Rule("surfaces_defined", HUMAN_REQUIRED, _surfaces_defined),
    Rule("trust_root_unchanged", HUMAN_REQUIRED, _trust_root_unchanged),
    Rule("no_symlinks", HUMAN_REQUIRED, _no_links),
    Rule("no_gitlinks", HUMAN_REQUIRED, _no_gitlinks),
)
"""The pull-request rules in order. Every failing row is listed; the first row, when
it fails, is the only one judged (nothing else was gathered)."""

_STRICTNESS = (REJECTED, HUMAN_REQUIRED)


def _facts_json(case: Case) -> dict[str, Any]:
    facts = case.facts
    out: dict[str, Any] = {
        "base": facts.base,
        "head": facts.head,
        "merge_base": facts.merge_base,
        "tasks": {task_id: j.facts for task_id, j in case.tasks.items()},
        "changed_paths": list(facts.changed),
        "unmatchable_paths": [path for path, _ in facts.unmatchable],
        "authority": (
            {"trust_root": facts.trust.commit, "digest": facts.trust.digest}
            if facts.trust is not None and facts.trust.require_signatures
            else "unauthenticated: the base commit has no trust root requiring signatures"
        ),
    }
    continued = {task_id: _continued_by(case, task_id)
                 for task_id, held in case.continued.items() if not held}
    if continued:  # tasks an approver's signed continuation lets this pull request use
        out["continued"] = continued
    if not facts.tasks and facts.surfaces is not None:  # a pull request without a task
        out["policy"] = {
            "read_at": facts.base,
            "rules": [rule.name for rule in facts.policy.taskless],
            "taskless": {p: rule.name for p, rule in case.taskless.items()},
        }
    if facts.surfaces is not None:
        out["surfaces_provenance"] = facts.surfaces.provenance
        out["outside_scope"] = case.outside
        out["protected_paths"] = case.protected
    return out


def covered_changes(changed: tuple[str, ...], tasks: tuple[TaskFacts, ...]) -> frozenset[str]:
    """The changed paths that are no protected-surface change and no scope change of
    ``tasks`` (:attr:`Case.covered`): what their verification covers and PlanGate's own.

    ``delivery assess`` asks this of its one task, so that merge readiness and ``ci check``
    never disagree on a task's own files. A path that is not canonical is never covered
    (the caller refuses it in its own words).
    """
    canonical = tuple(CanonicalPath(p) for p in changed if is_canonical_path(p))
    return frozenset(Case(PullRequestFacts("", "", "", canonical, tasks=tasks)).covered)


def _continued_by(case: Case, task_id: str) -> str | None:
    from plangate.authority.verify import Verified

    for tid, facts in case.facts.continuations:
        if tid == task_id and isinstance(facts.signature, Verified):
            return facts.signature.principal
    return None


def decide(facts: PullRequestFacts) -> Result:
    """Judge the gathered facts with :data:`RULES` (see the module docstring)."""
    case = Case(facts)
    failed: list[tuple[Rule, tuple[Reason, ...]]] = []
    for rule in RULES:
        reasons = rule.check(case)
        if reasons:
            failed.append((rule, reasons))
            if rule is RULES[0]:
                break
    verdict = next((v for v in _STRICTNESS if any(r.verdict == v for r, _ in failed)), ACCEPTED)
    reasons = tuple(reason for _, found in failed for reason in found)
    out = _facts_json(case)
    # Each reason's own weight (a protected surface beside a refusal is still a human's
    # finding, not an error): what the annotations and the SARIF log grade it by.
    severity: dict[str, str] = {}
    for rule, found in failed:
        for reason in found:
            severity.setdefault(reason.code, rule.verdict)
    out["severity"] = severity
    return Result(verdict, reasons, out)
