"""``plangate ci check``: the last line of defence, for a pull request.

Hooks can be bypassed (a host that does not fire them, ``--no-verify``, a
machine without PlanGate). CI sees the result instead: the diff between the
pull request's base and head.

For the diff ``base..head`` (``--no-renames``: both sides of a rename count):

1. Protected surfaces are read from the **base** commit (the pull request
   cannot relax the definition that judges it). Touching one makes the verdict
   ``HUMAN_REQUIRED`` (exit 3): a person must review it, CI never passes it.
2. Every task directory touched (``docs/working/TASK-XXXX/...``) is a task of
   this pull request. Each must verify (the acceptor on the head checkout, its
   ``source_sha`` resolved to exactly one commit), and its ``source_sha`` must
   be an ancestor of the head.
3. Every changed path outside ``docs/working/`` must lie inside the allowed
   paths of at least one touched task (case-sensitive). A pull request that
   changes code without any task is rejected (``CI_NO_TASK``).

Verdict: ``REJECTED`` (exit 1) when any task fails or a path is out of scope,
else ``HUMAN_REQUIRED`` (exit 3) when a protected surface is touched, else
``ACCEPTED`` (exit 0). All failing rules are listed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from plangate.errors import InputRejected
from plangate.verdict import Reason, Result

_TASK_PATH_RE = re.compile(r"docs/working/(TASK-[0-9]{4})/.+")


def check(cwd: Path, base_rev: str, head_rev: str) -> Result:
    """Run the pull-request check (see the module docstring)."""
    from plangate.approval.holds import ANCESTOR, holds_for_head
    from plangate.git import Git, GitError
    from plangate.paths import match_any
    from plangate.plan.scope import derive_scope
    from plangate.snapshot import read_task_snapshot, task_dir_for
    from plangate.surfaces import surfaces_at_commit

    git = Git(cwd)
    root = git.toplevel()
    git = Git(root)
    base = git.resolve_commit(base_rev)
    head = git.resolve_commit(head_rev)
    checked_out = git.head()
    facts: dict[str, Any] = {"base": base, "head": head, "tasks": {}, "changed_paths": []}
    if checked_out != head:
        return Result("REJECTED", (Reason(
            "CI_HEAD_NOT_CHECKED_OUT",
            f"the working tree is at {checked_out[:12]}, not the head {head[:12]}",
            "check out the pull request's head commit before running the check",
        ),), facts)
    changed = git.changed_paths(base, head)
    facts["changed_paths"] = changed
    reasons: list[Reason] = []
    try:
        surfaces = surfaces_at_commit(git, base)
    except GitError as exc:
        raise InputRejected("CI_SURFACES_UNREADABLE", exc.message, exc.hint) from None
    facts["surfaces_provenance"] = surfaces.provenance
    if not surfaces.entries:
        reasons.append(Reason("CI_SURFACES_UNAVAILABLE",
                              "the base commit's protected surfaces cannot be resolved",
                              "fix .plangate/protected-surfaces.toml on the base branch"))
    tasks = sorted({m.group(1) for p in changed if (m := _TASK_PATH_RE.fullmatch(p))})
    allowed: list[str] = []
    # Files that a verified task's own verification covers, and PlanGate's own ignore
    # file (it can only ignore files inside .plangate/), are not protected changes.
    covered: set[str] = {".plangate/.gitignore"}
    for task_id in tasks:
        task_facts: dict[str, Any] = {}
        facts["tasks"][task_id] = task_facts
        try:
            snapshot = read_task_snapshot(task_dir_for(root, task_id))
        except InputRejected as exc:
            task_facts["verdict"] = "REJECTED"
            reasons.append(Reason("CI_TASK_NOT_VERIFIED", f"{task_id}: {exc.code}: {exc.message}",
                                  exc.hint))
            continue
        # CI judges a merge: the approved commit must be an ancestor of the head.
        outcome = holds_for_head(root, snapshot, head, policy=ANCESTOR)
        task_facts["verdict"] = outcome.verdict
        task_facts["codes"] = list(outcome.codes)
        if outcome.codes == ("CI_SOURCE_NOT_ANCESTOR",):
            reasons.extend(outcome.reasons)
            continue
        if not outcome.accepted:
            first = outcome.reasons[0] if outcome.reasons else Reason("?", "not accepted")
            reasons.append(Reason("CI_TASK_NOT_VERIFIED",
                                  f"{task_id}: {outcome.verdict}: {first.code}: {first.message}",
                                  "run 'plangate c3 verify' on the head checkout"))
            continue
        derived = derive_scope(snapshot.artifact("plan.md"))
        if derived.patterns is None:
            reasons.append(Reason("CI_SCOPE_UNDEFINED", f"{task_id}: {derived.problem_text}",
                                  "declare the allowed paths in plan.md"))
            continue
        scope = list(derived.patterns)
        task_facts["allowed_paths"] = scope
        allowed.extend(scope)
        covered.add(f"docs/working/{task_id}/approvals/c3.json")
        covered.update(f"docs/working/{task_id}/{name}" for name in snapshot.artifacts)
    protected = [p for p in changed if p not in covered
                 and surfaces.entries and surfaces.match(p) is not None]
    outside = [p for p in changed if not p.startswith("docs/working/")
               and p not in covered and match_any(allowed, p) is None]
    facts["outside_scope"] = outside
    facts["protected_paths"] = protected
    if outside and not tasks:
        reasons.append(Reason("CI_NO_TASK",
                              f"{len(outside)} changed path(s) belong to no task: "
                              + ", ".join(outside[:8]),
                              "every change needs an approved task (docs/working/TASK-XXXX)",
                              tuple(outside)))
    elif outside:
        reasons.append(Reason("CI_OUTSIDE_SCOPE",
                              f"{len(outside)} changed path(s) are outside every task's allowed "
                              "paths: " + ", ".join(outside[:8]),
                              "revert them or re-plan the task with a wider scope",
                              tuple(outside)))
    # A definition with a problem (only the bundled template, or a copy of it:
    # HO_BOUNDARY_UNDEFINED) still protects its patterns above, but it never
    # lets a pull request pass: a human must define the repository's surfaces.
    unresolved = [surfaces.problem] if surfaces.problem is not None and surfaces.entries else []
    if reasons:
        if protected:
            reasons.append(_protected_reason(protected))
        return Result("REJECTED", (*reasons, *unresolved), facts)
    if protected or unresolved:
        found = (_protected_reason(protected),) if protected else ()
        return Result("HUMAN_REQUIRED", (*found, *unresolved), facts)
    return Result("ACCEPTED", (), facts)


def _protected_reason(protected: list[str]) -> Reason:
    return Reason("CI_PROTECTED_SURFACE",
                  f"{len(protected)} protected surface(s) changed: " + ", ".join(protected[:8]),
                  "a human reviews and approves protected-surface changes",
                  tuple(protected))
