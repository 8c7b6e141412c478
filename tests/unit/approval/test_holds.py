"""Does an approval hold for this HEAD? Each policy accepts and rejects, in real repositories.

The task is approved at commit A (its record binds A). Heads are built with git:
a commit after A that changes an in-scope path, one that changes an out-of-scope
path, and a sibling of A (a commit on A's parent that A's history does not contain).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.approval.holds import ANCESTOR, DESCENDANT_IN_SCOPE, EQUAL, holds_for_head
from plangate.plan.scope import derive_scope
from plangate.snapshot import TaskSnapshot, read_task_snapshot
from support.repo import git
from support.taskkit import PLAN_MD, approve_task, make_task, task_dir


class Approved:
    """A repository whose task is approved at ``approved``, with its snapshot."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        make_task(repo)
        self.approved = approve_task(repo)
        self.snapshot: TaskSnapshot = read_task_snapshot(task_dir(repo))
        self.scope = derive_scope(PLAN_MD.encode()).patterns

    def commit(self, path: str) -> str:
        target = self.repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"changed {path}\n")
        git(self.repo, "add", path)  # only this path: the record and ledger stay uncommitted
        git(self.repo, "commit", "-q", "-m", f"change {path}")
        return git(self.repo, "rev-parse", "HEAD")

    def sibling(self) -> str:
        """A commit whose parent is the approved commit's parent: not a descendant of it."""
        parent = git(self.repo, "rev-parse", f"{self.approved}^")
        tree = git(self.repo, "rev-parse", f"{parent}^{{tree}}")
        return git(self.repo, "commit-tree", tree, "-p", parent, "-m", "sibling")

    def holds(self, head: str, policy: str, *, scoped: bool = True) -> tuple[str, tuple[str, ...]]:
        result = holds_for_head(self.repo, self.snapshot, head, policy=policy,
                                scope=self.scope if scoped else None)
        return result.verdict, result.codes


@pytest.fixture
def task(git_repo: Path) -> Approved:
    # The repository needs a commit before the task so the approved commit has a parent.
    assert git(git_repo, "rev-parse", "HEAD")
    return Approved(git_repo)


def test_equal_accepts_the_approved_commit(task: Approved) -> None:
    assert task.holds(task.approved, EQUAL) == ("ACCEPTED", ())


def test_equal_rejects_one_commit_later(task: Approved) -> None:
    head = task.commit("src/app.py")
    assert task.holds(head, EQUAL) == ("REJECTED", ("C3_SOURCE_SHA_MISMATCH",))


def test_descendant_in_scope_accepts_an_in_scope_commit(task: Approved) -> None:
    head = task.commit("src/app.py")
    result = holds_for_head(task.repo, task.snapshot, head, policy=DESCENDANT_IN_SCOPE,
                            scope=task.scope)
    assert (result.verdict, result.codes) == ("ACCEPTED", ())
    assert "src/app.py" in result.facts["committed_since_approval"]


def test_descendant_in_scope_accepts_the_approved_commit_itself(task: Approved) -> None:
    assert task.holds(task.approved, DESCENDANT_IN_SCOPE) == ("ACCEPTED", ())


def test_descendant_in_scope_rejects_an_out_of_scope_commit(task: Approved) -> None:
    head = task.commit("lib/extra.py")
    assert task.holds(head, DESCENDANT_IN_SCOPE) == (
        "REJECTED", ("HOOK_COMMITTED_OUTSIDE_SCOPE",)
    )


def test_descendant_in_scope_rejects_a_diverged_head(task: Approved) -> None:
    assert task.holds(task.sibling(), DESCENDANT_IN_SCOPE) == (
        "REJECTED", ("HOOK_HEAD_NOT_DESCENDANT",)
    )


def test_descendant_in_scope_with_an_undefined_scope_rejects_any_commit(task: Approved) -> None:
    head = task.commit("src/app.py")
    assert task.holds(head, DESCENDANT_IN_SCOPE, scoped=False) == (
        "REJECTED", ("HOOK_SCOPE_UNDEFINED",)
    )


def test_ancestor_accepts_a_descendant_head(task: Approved) -> None:
    head = task.commit("lib/anything.py")  # what changed is judged elsewhere
    assert task.holds(head, ANCESTOR) == ("ACCEPTED", ())


def test_ancestor_rejects_a_sibling_branch(task: Approved) -> None:
    assert task.holds(task.sibling(), ANCESTOR) == ("REJECTED", ("CI_SOURCE_NOT_ANCESTOR",))


def test_every_policy_rejects_what_the_acceptor_rejects(task: Approved) -> None:
    (task_dir(task.repo) / "todo.md").write_text("changed after the approval\n")
    stale = read_task_snapshot(task_dir(task.repo))
    for policy in (EQUAL, DESCENDANT_IN_SCOPE, ANCESTOR):
        result = holds_for_head(task.repo, stale, task.approved, policy=policy, scope=task.scope)
        assert (result.verdict, result.codes) == ("REJECTED", ("C3_ARTIFACT_STALE",)), policy


def test_an_unknown_policy_is_a_programming_error(task: Approved) -> None:
    with pytest.raises(ValueError, match="unknown policy"):
        holds_for_head(task.repo, task.snapshot, task.approved, policy="nearby")


def test_descendant_in_scope_rejects_a_commit_to_a_path_the_plan_denies(git_repo: Path) -> None:
    denying = PLAN_MD.replace("- `src/app.py`\n", "- `src/**`\n").replace(
        "- `tests/test_app.py`\n",
        "- `tests/test_app.py`\n\n### Do not touch\n\n- `src/keys.py`\n",
    )
    make_task(git_repo, plan_md=denying)
    approved = approve_task(git_repo)
    snapshot = read_task_snapshot(task_dir(git_repo))
    scope = derive_scope(denying.encode())
    assert scope.denied == ("src/keys.py",)
    (git_repo / "src").mkdir(exist_ok=True)
    for path, expected in (("src/app.py", ("ACCEPTED", ())),
                           ("src/keys.py", ("REJECTED", ("HOOK_COMMITTED_OUTSIDE_SCOPE",)))):
        (git_repo / path).write_text("x\n")
        git(git_repo, "add", path)
        git(git_repo, "commit", "-q", "-m", f"change {path}")
        head = git(git_repo, "rev-parse", "HEAD")
        result = holds_for_head(git_repo, snapshot, head, policy=DESCENDANT_IN_SCOPE, scope=scope)
        assert (result.verdict, result.codes) == expected
        # the bare allowed patterns (no deny list) would have accepted the denied path
        bare = holds_for_head(git_repo, snapshot, head, policy=DESCENDANT_IN_SCOPE,
                              scope=scope.patterns)
        assert bare.verdict == "ACCEPTED"
    assert approved


def test_a_record_without_a_scope_digest_does_not_approve_the_scope_enforced(
    task: Approved,
) -> None:
    # exec and the hooks pass the scope they enforce: a record issued before the scope
    # digest existed approved bytes, not this scope
    from support.taskkit import load_record, save_record

    scope = derive_scope(PLAN_MD.encode())
    record = load_record(task.repo)
    assert record["scope_digest"] == scope.digest  # the producer stamps it
    del record["scope_digest"]
    save_record(task.repo, record)
    snapshot = read_task_snapshot(task_dir(task.repo))
    result = holds_for_head(task.repo, snapshot, task.approved, policy=EQUAL, scope=scope)
    assert (result.verdict, result.codes) == ("REJECTED", ("SCOPE_NOT_APPROVED",))
    assert "approve it again" in (result.reasons[0].hint or "")
    # without a scope to enforce (c3 verify, ci's ancestor policy) the record still verifies
    bare = holds_for_head(task.repo, snapshot, task.approved, policy=EQUAL)
    assert bare.verdict == "ACCEPTED"


def test_descendant_in_scope_accepts_a_commit_of_plangates_ignore_file(task: Approved) -> None:
    # ci check counts PlanGate's own ignore file as no change of the task's; so does exec.
    head = task.commit(".plangate/.gitignore")
    assert task.holds(head, DESCENDANT_IN_SCOPE) == ("ACCEPTED", ())


def test_approval_holds_is_execs_policy_with_the_plans_own_scope(task: Approved) -> None:
    from plangate.approval.holds import approval_holds

    assert approval_holds(task.repo, task.snapshot, task.commit("src/app.py")).accepted
    outside = approval_holds(task.repo, task.snapshot, task.commit("lib/extra.py"))
    assert outside.codes == ("HOOK_COMMITTED_OUTSIDE_SCOPE",)


def test_approval_holds_starts_from_the_callers_acceptor_verdict(task: Approved) -> None:
    # status judges every task's record with one git process and hands the verdict over:
    # the policy applies to it (scope binding, descent) and does not judge it again
    from plangate.approval.holds import approval_holds
    from plangate.verdict import Reason, Result

    exact = approval_holds(task.repo, task.snapshot, task.approved)
    assert exact.accepted
    handed = approval_holds(task.repo, task.snapshot, task.approved, exact=exact)
    assert handed is exact
    refused = Result("REJECTED", (Reason("C3_SOME_RULE", "m", "h"),), {})
    assert approval_holds(task.repo, task.snapshot, task.approved, exact=refused) is refused
    # an accepted verdict whose record approved no scope is still refused by the policy
    unscoped = Result("ACCEPTED", (), {"record": {"approval_kind": "c3-prime"}})
    outcome = approval_holds(task.repo, task.snapshot, task.approved, exact=unscoped)
    assert outcome.codes == ("SCOPE_NOT_APPROVED",)
    # a record bound to another commit: the policy asks git whether HEAD descends in scope
    head = task.commit("lib/extra.py")
    mismatch = Result("REJECTED", (Reason("C3_SOURCE_SHA_MISMATCH", "m", "h"),), {})
    outcome = approval_holds(task.repo, task.snapshot, head, exact=mismatch)
    assert outcome.codes == ("HOOK_COMMITTED_OUTSIDE_SCOPE",)
