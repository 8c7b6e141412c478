"""``plangate ci check`` at the IO edge: gather, judge, publish.

The facts of a pull request are read with git and the acceptor
(:func:`gather_pull_request`), judged by the pure rules of
:mod:`plangate.delivery.ci`, and published for a CI system
(:func:`publish_ci_result`). Only what the check needs is imported here (the
delivery log, its state machine and the PR snapshot stay out): every CI job
starts a process for it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from plangate.delivery.ci import PullRequestFacts, TaskFacts, touched_tasks
from plangate.delivery.ci import decide as decide_pull_request
from plangate.delivery.pr_policy import (
    MAX_POLICY_BYTES,
    POLICY_INVALID,
    POLICY_RELPATH,
    STRICT,
    PullRequestPolicy,
    parse_policy,
)
from plangate.errors import PlanGateError
from plangate.git import Git, GitError
from plangate.snapshot import task_dir_for
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from pathlib import Path

    from plangate.authority.continuation import ContinuationFacts
    from plangate.authority.root import TrustRoot


def gather_pull_request(cwd: Path, base_rev: str, head_rev: str) -> PullRequestFacts:
    """Everything ``ci check`` judges, read once with git and the acceptor.

    The commits are resolved in the repository that holds ``cwd``. When the
    working tree is not at the head nothing else is read. Otherwise: the changed
    paths (a path that is not a canonical repository path is kept apart, as
    ``unmatchable``), the protected surfaces committed at the base (a git
    failure is ``CI_SURFACES_UNREADABLE``, exit 1), and for every touched task its
    snapshot on the head checkout and the acceptor's verdict under the ancestor
    policy (the approved commit must be an ancestor of the head).

    The changed paths are those since the merge base of base and head (a
    three-dot diff); no single merge base, grafts or a shallow history refuse
    the check (exit 1). A working tree that differs from the head under
    ``docs/working/`` is reported instead of read.
    """
    from plangate.approval.holds import approval_holds_for_merge
    from plangate.authority.consumer import read_continuation
    from plangate.authority.trustpaths import TRUST_FILES
    from plangate.errors import InputRejected
    from plangate.paths import canonical_paths
    from plangate.snapshot import read_task_snapshot
    from plangate.surfaces import REPO_SURFACES_RELPATH, surfaces_with_presence_at_commit

    root, checked_out = Git(cwd).toplevel_and_head()
    git = Git(root)
    # One resolver for both names (full commit ids in one git process): a branch name
    # means the branch, never a tag or another ref of the same name (GIT_REF_AMBIGUOUS).
    resolved = git.resolve_commits([base_rev, head_rev])
    for rev in (base_rev, head_rev):
        if isinstance(failed := resolved[rev], GitError):
            raise InputRejected(failed.code, failed.message, failed.hint)
    base, head = str(resolved[base_rev]), str(resolved[head_rev])
    if checked_out is None:  # HEAD named no commit: head() says why (GIT_HEAD_UNBORN)
        checked_out = git.head()
    if checked_out != head:
        return PullRequestFacts(base, head, checked_out)
    dirty = tuple(git.worktree_changes(("docs/working",), ignored=True))
    if dirty:
        return PullRequestFacts(base, head, checked_out, dirty=dirty)
    try:
        since = git.merge_base(base, head)
    except GitError as exc:
        raise InputRejected(exc.code, exc.message, exc.hint) from None
    # Each path is validated here, once: the rules match these paths as they are.
    entries = git.changed_entries(since, head)
    changed, rejected = canonical_paths(entries.paths)
    unmatchable = [(str(raw), code) for raw, code in rejected]
    # What is read at the base (the surfaces, the trust root, the policy) is listed once.
    at_base = git.listed_at(base, [REPO_SURFACES_RELPATH, *TRUST_FILES, POLICY_RELPATH])
    try:
        # One listing answers both: the definition in force, and whether the base has
        # adopted PlanGate (ADOPTION_REQUIRED is the definition's own file).
        surfaces, base_adopted = surfaces_with_presence_at_commit(at_base, base)
    except GitError as exc:
        raise InputRejected("CI_SURFACES_UNREADABLE", exc.message, exc.hint) from None
    trust, trust_problem = base_trust_root(at_base, base)
    tasks: list[TaskFacts] = []
    stale: list[tuple[str, str]] = []
    continuations: list[tuple[str, ContinuationFacts]] = []
    for task_id in touched_tasks(tuple(changed)):
        try:
            snapshot = read_task_snapshot(task_dir_for(root, task_id))
        except InputRejected as exc:
            tasks.append(TaskFacts(task_id, read_error=Reason(exc.code, exc.message, exc.hint)))
            continue
        outcome = approval_holds_for_merge(root, snapshot, head, trust=trust)
        parts = _single_parts(root, task_id, changed, outcome, trust)
        tasks.append(TaskFacts(task_id, None, outcome, snapshot.artifact("plan.md"),
                               tuple(snapshot.artifacts), parts))
        source = outcome.facts.get("source_sha_full")
        if (trust is not None and trust.require_signatures and isinstance(source, str)
                and git.is_ancestor(source, since)):
            stale.append((task_id, source))
            continued = read_continuation(task_dir_for(root, task_id), trust)
            if continued is not None:
                continuations.append((task_id, continued))
    # The policy for a pull request without a task: the base's (it judges), and the head's
    # when the pull request changes it (it must be a valid policy before it can merge).
    policy, policy_problem = (policy_at(at_base, base) if not tasks
                              else (STRICT, None))
    head_policy_problem = (policy_at(git, head)[1] if POLICY_RELPATH in changed
                           else None)
    return PullRequestFacts(base, head, checked_out, tuple(changed), surfaces, tuple(tasks),
                            since, tuple(unmatchable), trust=trust, trust_problem=trust_problem,
                            # (in the changed list's order: sorted)
                            trust_changed=tuple(sorted(set(TRUST_FILES).intersection(changed))),
                            stale_approvals=tuple(stale), base_adopted=base_adopted,
                            continuations=tuple(continuations), policy=policy,
                            policy_problem=policy_problem,
                            head_policy_problem=head_policy_problem,
                            links=_link_targets(git, entries.links),
                            gitlinks=tuple(entries.gitlinks))


def _link_targets(git: Git, links: list[tuple[str, str]]) -> tuple[tuple[str, bytes | None], ...]:
    """Each changed link with its target as git holds it (None: git did not hand it
    over; the link is judged all the same)."""
    if not links:
        return ()
    objects = git.read_objects([object_id for _path, object_id in links])
    if objects is None:
        return tuple((path, None) for path, _ in links)
    return tuple(
        (path, obj.data if obj is not None and obj.kind == "blob" else None)
        for (path, _), obj in zip(links, objects, strict=True)
    )


def policy_at(git: Git, commit: str) -> tuple[PullRequestPolicy, Reason | None]:
    """``.plangate/policy.toml`` committed at ``commit`` (:data:`STRICT` when absent), or
    why it cannot be used (then :data:`STRICT`, with the problem)."""
    from plangate.errors import InputRejected

    where = f"{POLICY_RELPATH}@{commit[:12]}"
    try:
        if not any(e.path == POLICY_RELPATH for e in git.ls_tree(commit, [POLICY_RELPATH])):
            return STRICT, None  # deleted at the head: back to the strict default
        data = git.read_blob(commit, POLICY_RELPATH, MAX_POLICY_BYTES)
        return parse_policy(data, where), None
    except GitError as exc:  # a link, a directory, too large
        return STRICT, Reason(POLICY_INVALID, f"{where}: {exc.message}",
                              f"commit {POLICY_RELPATH} as a regular file of at most "
                              f"{MAX_POLICY_BYTES} bytes")
    except InputRejected as exc:
        return STRICT, Reason(exc.code, exc.message, exc.hint)


def _single_parts(
    root: Path, task_id: str, changed: Sequence[str], outcome: Result, trust: TrustRoot | None
) -> tuple[tuple[str, Reason | None], ...]:
    """The task's changed approval parts its verified record does not cover (signatures the
    base's trust root does not require), each checked on its own under that root."""
    from plangate.approval.parts import part_of, unverified
    from plangate.approval.parts_service import single_parts
    from plangate.layout import RECORD_RELPATH

    if not outcome.accepted or isinstance(outcome.facts.get("authority"), dict):
        return ()  # not verified (rejected anyway), or the acceptor checked them all
    wanted = [p for p in changed if (hit := part_of(p)) is not None and hit[0] == task_id
              and hit[1] != RECORD_RELPATH]
    if not wanted:
        return ()
    found = single_parts(root, task_id, wanted, trust, record_verified=True)
    return tuple((path, found[path] if path in found else unverified(path, "no check applies"))
                 for path in wanted)


def base_trust_root(git: Git, base: str) -> tuple[TrustRoot | None, Reason | None]:
    """The trust root committed at the pull request's base, or why it cannot be used."""
    from plangate.authority.source import root_at

    try:
        return root_at(git, base), None
    except PlanGateError as exc:
        return None, Reason(exc.code, exc.message, exc.hint)


def check_pull_request(cwd: Path, base_rev: str, head_rev: str) -> Result:
    """``plangate ci check``: gather the pull request's facts, then judge them (pure)."""
    return decide_pull_request(gather_pull_request(cwd, base_rev, head_rev))


def publish_ci_result(
    result: Result, *, sarif_path: Path | None, summary_path: Path | None
) -> None:
    """Write what a CI system reads besides the verdict: a SARIF log, a job summary.

    The SARIF file is replaced atomically (never through a link); the summary is
    appended (CI runners hand a file to append to), opened without following a
    link. A file that cannot be written is ``CI_OUTPUT_UNWRITABLE`` (exit 1).
    """
    import json

    from plangate import __version__
    from plangate.delivery.ci_report import sarif, summary_markdown
    from plangate.errors import EnvironmentFailure
    from plangate.fsutil import atomic_write

    try:
        if sarif_path is not None:
            data = json.dumps(sarif(result, version=__version__), indent=2) + "\n"
            atomic_write(sarif_path, data.encode())
        if summary_path is not None:
            fd = os.open(summary_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | getattr(os, "O_CLOEXEC", 0), 0o644)
            try:
                os.write(fd, summary_markdown(result).encode())
            finally:
                os.close(fd)
    except OSError as exc:
        raise EnvironmentFailure(
            "CI_OUTPUT_UNWRITABLE",
            f"cannot write {exc.filename or 'a CI output file'}: {exc.strerror}",
            "check the path given to --sarif or --summary",
        ) from None


def codeowners_at(cwd: Path, rev: str, owner: str) -> str:
    """``plangate ci codeowners``: a CODEOWNERS suggestion from what ``rev`` commits.

    The protected surfaces at ``rev`` (the bundled template when it has none), the policy
    file itself, and the paths of each policy rule with ``human = true``: what ``ci check``
    hands to a human when ``rev`` is a pull request's base. A policy that cannot be read
    refuses (its reason code), as ``ci check`` would.
    """
    from plangate.delivery.ci_report import OWNER_RE, codeowners
    from plangate.errors import InputRejected, UsageError
    from plangate.surfaces import surfaces_with_presence_at_commit

    if OWNER_RE.fullmatch(owner) is None:
        raise UsageError("CI_CODEOWNERS_OWNER", f"{owner!r} is not a GitHub owner",
                         "give @user, @org/team or an e-mail address")
    git = Git(Git(cwd).toplevel())
    try:
        commit = git.resolve_commit(rev)
        surfaces, _ = surfaces_with_presence_at_commit(git, commit)
    except GitError as exc:
        raise InputRejected(exc.code, exc.message, exc.hint) from None
    policy, problem = policy_at(git, commit)
    if problem is not None:
        raise InputRejected(problem.code, problem.message, problem.hint)
    sections: list[tuple[str, tuple[str, ...]]] = [
        (f"protected surfaces ({surfaces.path or surfaces.provenance})",
         tuple(e.pattern for e in surfaces.entries)),
        ("the policy for a pull request without a task", (POLICY_RELPATH,)),
    ]
    sections += [(f"policy rule {rule.name!r}: human = true", rule.paths)
                 for rule in policy.taskless if rule.human]
    return codeowners(sections, owner)
