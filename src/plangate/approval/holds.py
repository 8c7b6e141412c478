"""Does an approval hold for this HEAD? One function, three named policies.

The record binds one commit (``source_sha``). Where that commit must stand in
relation to the commit being judged depends on who asks:

- :data:`EQUAL`: HEAD is the approved commit itself.
- :data:`DESCENDANT_IN_SCOPE`: HEAD is the approved commit, or descends from it
  through commits that changed only the task's own directory, PlanGate's ignore
  file and paths inside the task's scope
  (:func:`plangate.plan.scope.outside_scopes`).
- :data:`ANCESTOR`: the approved commit is an ancestor of the head being merged;
  what the pull request changed is judged separately against the scope and the
  protected surfaces.

Two named entry points give every command the same answer to the same question:
:func:`approval_holds` ("may the task work at HEAD now": exec, the hooks,
``plangate status`` and ``plangate report``) and :func:`approval_holds_for_merge`
("may this head be merged under the approval": ``ci check`` and ``delivery
assess``).

Every policy first runs the acceptor on the record's own bindings; anything it
rejects is rejected whatever the policy. Anything git cannot measure is a
rejection.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from plangate.ownfiles import HISTORY, never_blamed
from plangate.plan.scope import (
    TaskScope,
    check_scope_binding,
    derive_scope,
    outside_scopes,
)
from plangate.snapshot import TaskSnapshot
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.authority.root import TrustRoot

EQUAL = "equal"
DESCENDANT_IN_SCOPE = "descendant_in_scope"
ANCESTOR = "ancestor"
POLICIES = (EQUAL, DESCENDANT_IN_SCOPE, ANCESTOR)

_NOT_RELATED_CODE = {
    DESCENDANT_IN_SCOPE: "HOOK_HEAD_NOT_DESCENDANT",
    ANCESTOR: "CI_SOURCE_NOT_ANCESTOR",
}


def _never_blamed_in_history(path: str) -> bool:
    # PlanGate's committed own files (its ignore file, a task's delivery record) are never
    # a task's change: the same rule as the hooks and ``ci check``.
    return never_blamed(path, HISTORY)


def holds_for_head(
    repo_root: Path,
    snapshot: TaskSnapshot,
    head: str,
    *,
    policy: str,
    scope: TaskScope | tuple[str, ...] | None = None,
    trust: TrustRoot | str | None = "local",
    exact: Result | None = None,
) -> Result:
    """The acceptor's verdict on ``snapshot`` for the full commit id ``head`` under ``policy``.

    ``scope`` (the task's scope, see :mod:`plangate.plan.scope`, or its bare
    allowed-path patterns) is needed by :data:`DESCENDANT_IN_SCOPE` only; ``None``
    there means the scope is undefined and any commit since the approval is a
    rejection. A committed path the plan denies is outside the scope. ``trust``
    is the trust root authority is judged by (see
    :func:`plangate.approval.service.verify_task`). ``exact``: the acceptor's
    verdict on ``snapshot`` for ``head`` under ``trust``, when the caller judged it
    already (see :func:`approval_holds`); else it is judged here.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}")
    if policy == ANCESTOR:
        return _ancestor(repo_root, snapshot, head, trust)
    if exact is None:
        exact = _equal(repo_root, snapshot, head, trust)
    if policy == EQUAL or exact.accepted or exact.codes != ("C3_SOURCE_SHA_MISMATCH",):
        return _scope_approved(exact, scope)
    return _scope_approved(_descendant_in_scope(repo_root, snapshot, head, scope, trust), scope)


def approval_holds(
    repo_root: Path, snapshot: TaskSnapshot, head: str, *,
    trust: TrustRoot | str | None = "local", scope: TaskScope | None = None,
    exact: Result | None = None,
) -> Result:
    """Does the task's approval hold at ``head`` now? The one verdict of exec, the hooks,
    ``plangate status`` and ``plangate report``.

    :data:`DESCENDANT_IN_SCOPE` with the scope derived from the snapshot's own
    ``plan.md`` bytes: HEAD is the approved commit, or descends from it through
    commits that changed only the task's own directory, PlanGate's ignore file and
    paths inside the scope (:func:`plangate.plan.scope.outside_scopes`); the record
    must carry that scope's digest. ``scope``: the caller's own derivation from those
    same bytes (the hook has one already), else derived here when the verdict depends
    on it (an accepted record, or one that binds another commit). ``exact``: the
    acceptor's verdict on the snapshot at ``head`` under the same ``trust``, when the
    caller judged it already (``plangate status`` judges every task with one git
    process for all records); else it is judged here.
    """
    if exact is None:
        exact = _equal(repo_root, snapshot, head, trust)
    if scope is None and (exact.accepted or exact.codes == ("C3_SOURCE_SHA_MISMATCH",)):
        scope = derive_scope(snapshot.artifact("plan.md"))
    return holds_for_head(repo_root, snapshot, head, policy=DESCENDANT_IN_SCOPE, scope=scope,
                          trust=trust, exact=exact)


def approval_holds_for_merge(
    repo_root: Path, snapshot: TaskSnapshot, head: str, *,
    trust: TrustRoot | str | None = "local",
) -> Result:
    """Does the task's approval hold for merging ``head``? The verdict of ``ci check``
    and ``delivery assess``.

    :data:`ANCESTOR`: the approved commit is an ancestor of ``head`` (what the pull
    request changed is judged against the scope separately, with
    :func:`plangate.plan.scope.outside_scopes`). The scope binding is judged by the
    caller with :func:`plangate.plan.scope.check_scope_binding`, so that it can name
    the task in its own words.
    """
    return holds_for_head(repo_root, snapshot, head, policy=ANCESTOR, trust=trust)


NOT_ANCESTOR_CODE = _NOT_RELATED_CODE[ANCESTOR]
"""The code of :data:`ANCESTOR`'s one rejection that is about history, not the record."""


def _scope_approved(result: Result, scope: TaskScope | tuple[str, ...] | None) -> Result:
    """``result``, or a rejection when the scope the caller enforces is not the approved one.

    The caller (hooks, exec) enforces ``scope``; an accepted record must carry its
    digest (:func:`plangate.plan.scope.check_scope_binding`).
    """
    if not result.accepted or not isinstance(scope, TaskScope):
        return result
    problem = check_scope_binding(scope, result.facts.get("record"))
    if problem is None:
        return result
    return Result("REJECTED", (problem,), result.facts)


def _equal(repo_root: Path, snapshot: TaskSnapshot, head: str,
           trust: TrustRoot | str | None) -> Result:
    # Fast path: a record whose source_sha is HEAD's full id resolves to that
    # commit without asking git (git could answer nothing else).
    from plangate.approval.acceptor import SourceResolution, extract_source_sha, verify_snapshot
    from plangate.approval.service import verify_task, with_bound_digests

    record = snapshot.record.data if snapshot.record.ok else None
    if extract_source_sha(record) == head and len(head) == 40 and not _signatures_required(
        repo_root, trust
    ):
        # Without a trust root requiring signatures nothing but the acceptor's rules apply.
        result = verify_snapshot(snapshot, expected_sha=head, source=SourceResolution(head))
        return with_bound_digests(result, snapshot)

    return verify_task(repo_root, snapshot.task_id, expected_sha=head, snapshot=snapshot,
                       trust=trust)


def _signatures_required(repo_root: Path, trust: TrustRoot | str | None) -> bool:
    """Whether the trust root in force requires signatures (unreadable: yes, fail closed)."""
    from plangate.authority.consumer import trust_root_for
    from plangate.errors import PlanGateError

    try:
        root = trust_root_for(repo_root, trust)
    except PlanGateError:
        return True  # verify_task reports why
    return root is not None and root.require_signatures


def _static(repo_root: Path, snapshot: TaskSnapshot, trust: TrustRoot | str | None) -> Result:
    from plangate.approval.service import verify_task

    return verify_task(repo_root, snapshot.task_id, expected_sha=None, snapshot=snapshot,
                       trust=trust)


def _rejected(code: str, message: str, hint: str, static: Result) -> Result:
    return Result("REJECTED", (Reason(code, message, hint),), dict(static.facts))


def _ancestor(repo_root: Path, snapshot: TaskSnapshot, head: str,
              trust: TrustRoot | str | None) -> Result:
    from plangate.git import Git, GitError

    static = _static(repo_root, snapshot, trust)
    if not static.accepted:
        return static
    source = static.facts.get("source_sha_full") or static.facts.get("source_sha")
    try:
        git = Git(repo_root)
        related = isinstance(source, str) and git.commit_exists(source) and git.is_ancestor(
            git.resolve_commit(source), head
        )
    except GitError as exc:
        return _rejected(exc.code, exc.message, exc.hint or "", static)
    if not related:
        return _rejected(
            _NOT_RELATED_CODE[ANCESTOR],
            f"{snapshot.task_id}: the approved commit {source!r} is not an ancestor of the head",
            "approve the plan on this branch's history",
            static,
        )
    return static


def _descendant_in_scope(
    repo_root: Path, snapshot: TaskSnapshot, head: str,
    scope: TaskScope | tuple[str, ...] | None,
    trust: TrustRoot | str | None,
) -> Result:
    from plangate.git import Git, GitError

    static = _static(repo_root, snapshot, trust)
    source = static.facts.get("source_sha_full")
    if not static.accepted or not isinstance(source, str):
        return static
    try:
        git = Git(repo_root)
        if not git.is_ancestor(source, head):
            return _rejected(
                _NOT_RELATED_CODE[DESCENDANT_IN_SCOPE],
                f"HEAD {head[:12]} does not descend from the approved commit {source[:12]}",
                "return to the approved commit or get a new approval",
                static,
            )
        committed = git.changed_paths(source, head)
    except GitError as exc:
        return _rejected(exc.code, exc.message, exc.hint or "", static)
    if scope is not None and not isinstance(scope, TaskScope):
        scope = TaskScope(scope)
    if scope is None or not scope.defined:
        return _rejected("HOOK_SCOPE_UNDEFINED", "the task's scope cannot be derived", "", static)
    outside = outside_scopes(committed, {snapshot.task_id: scope},
                             exempt=_never_blamed_in_history)
    if outside:
        return _rejected(
            "HOOK_COMMITTED_OUTSIDE_SCOPE",
            "commits since the approved commit changed paths outside the task's scope: "
            + ", ".join(outside[:10]),
            "revert those commits or get a new approval that covers them",
            static,
        )
    facts = dict(static.facts)
    facts["head"] = head
    facts["committed_since_approval"] = committed
    return Result("ACCEPTED", (), facts)
