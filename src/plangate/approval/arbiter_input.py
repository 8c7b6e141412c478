"""Build the arbiter input from a repository (the IO edge of ``plangate arbiter TASK``).

Where each input key comes from:

- ``target_sha``: ``--target-sha`` resolved with git to exactly one full commit id.
- ``changed_files``: ``git diff --no-renames --name-only -z BASE TARGET`` where
  ``BASE`` is the required ``--base`` (resolved the same way; it must be an
  ancestor of the target, so the diff is the change being judged). There is no
  default base: guessing it could hide earlier commits of the change.
- ``allowed_paths``: the task's scope (:func:`plangate.plan.scope.derive_scope`,
  the one derivation of allowed paths, which the LoopSpec's
  ``loop.scope.allowed_paths`` shares) of ``plan.md`` *as committed at BASE*
  (the approved plan), or of the work tree when BASE has no plan yet (then the
  plan files are part of the diff and must be in scope themselves). When the
  work-tree plan differs from the committed one, the ``plan_package`` block is withheld
  (``ARBITER_PLAN_CHANGED_SINCE_BASE``): a plan edited during the change can
  neither widen its own scope nor pass as the approved package.
- ``verdicts``: ``model_a``/``model_b`` from the reviewers file (the same file
  ``plangate c3 issue --reviewers`` reads), ``reject_category`` and models C/D
  from the command line.
- ``plan_package``: built from the package (presence, hashes, both evidence
  markers) and the reviewers file, exactly as the c3-prime producer would
  stamp it; omitted when the package is incomplete or a marker fails, which
  (``production`` is always true here) escalates at priority 1.6 with the
  package's own reasons recorded.
- ``gates.c1``: ``PASS`` when the C-1 marker is valid, accepted and current;
  ``gates.breakdown``: ``--breakdown``.
- ``lite``, ``class``, ``run``: from the command line.
- protected surfaces: ``--surfaces FILE`` when given; otherwise the repository's
  ``.plangate/protected-surfaces.toml`` *as committed at BASE* (the definition
  the change is judged by, never the one the change brings), else the bundled
  template (``HO_BOUNDARY_UNDEFINED``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plangate.errors import InputRejected
from plangate.git import Git
from plangate.layout import MAX_ARTIFACT_BYTES
from plangate.plan.loopspec import derive_loopspec, loopspec_hash
from plangate.plan.package import PackageState, compute_package
from plangate.plan.scope import derive_scope
from plangate.snapshot import TaskSnapshot, read_task_snapshot, task_dir_for
from plangate.surfaces import (
    ResolvedSurfaces,
    resolve_surfaces,
    surfaces_at_commit,
)
from plangate.verdict import Reason


@dataclass(frozen=True)
class TaskArbiterRequest:
    """Everything ``plangate arbiter TASK`` needs besides the repository."""

    task_id: str
    target_sha: str
    base: str
    reviewers: Mapping[str, Any]  # model -> ReviewerEvidence (plangate.approval.record)
    maker: str
    checker: str
    lite: tuple[str, ...]
    cls: str
    breakdown: str | None = None
    reject_category: str | None = None
    model_c: str | None = None
    model_d: str | None = None
    run: Mapping[str, Any] | None = None
    explicit_surfaces: Path | None = None


@dataclass(frozen=True)
class BuiltInput:
    """The arbiter input document plus the facts it was built from."""

    document: dict[str, Any]
    surfaces: ResolvedSurfaces
    target_full: str
    base_full: str
    derived_loopspec_hash: str
    package_problems: tuple[Reason, ...] = field(default_factory=tuple)
    snapshot: TaskSnapshot | None = None
    """The one snapshot of the task directory the input was built from."""


def committed_file(git: Git, commit: str, path: str) -> bytes | None:
    """Bytes of ``path`` at ``commit``; None when absent; raises when not a regular file."""
    if not any(e.path == path for e in git.ls_tree(commit, [path])):
        return None
    return git.read_blob(commit, path, MAX_ARTIFACT_BYTES)


def plan_package_block(package: PackageState, target_full: str,
                       reviewers: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``plan_package`` block the producer would stamp, or None when it cannot exist."""
    if not package.complete or not package.evidence_ok:
        return None
    if package.plan_hash is None or package.plan_package_hash is None:
        return None
    from plangate.approval.record import evidence_refs, reviewer_snapshots

    return {
        "plan_hash": package.plan_hash,
        "source_sha": target_full,
        "plan_package_hash": package.plan_package_hash,
        **evidence_refs(package),
        "reviewers": reviewer_snapshots(package.plan_hash, package.plan_package_hash,
                                        target_full, reviewers),
    }


def build_task_input(repo_root: Path, request: TaskArbiterRequest) -> BuiltInput:
    """Read git and the task once and build the arbiter input (see the module docstring)."""
    git = Git(repo_root)
    target_full = git.resolve_commit(request.target_sha)
    base_full = git.resolve_commit(request.base)
    if not git.is_ancestor(base_full, target_full):
        raise InputRejected(
            "ARBITER_BASE_NOT_ANCESTOR",
            f"base {base_full[:12]} is not an ancestor of target {target_full[:12]}",
            "pass the commit the change started from as --base",
        )
    changed = git.changed_paths(base_full, target_full)
    snapshot = read_task_snapshot(task_dir_for(repo_root, request.task_id))
    package = compute_package(snapshot)
    plan = snapshot.artifact("plan.md")
    if plan is None:
        raise InputRejected(
            "LOOPSPEC_PACKAGE_INCOMPLETE",
            f"plan.md of {request.task_id} cannot be read: allowed_paths cannot be derived",
            "write plan.md",
        )
    problems: list[Reason] = []
    plan_relpath = f"docs/working/{request.task_id}/plan.md"
    base_plan = committed_file(git, base_full, plan_relpath)
    if base_plan is not None and base_plan != plan:
        # The scope is the plan as approved (committed at BASE). A plan edited since
        # then must not widen the scope it is judged by, and its package is not the
        # approved one: the block is withheld, so a production run escalates (1.6).
        problems.append(Reason(
            "ARBITER_PLAN_CHANGED_SINCE_BASE",
            f"{plan_relpath} differs from the version committed at base {base_full[:12]}",
            "re-plan: review the changed plan again and use its commit as --base",
        ))
    approved_plan = base_plan if base_plan is not None else plan
    # The LoopSpec fails naming the first underivable field; once it is derived,
    # the scope of the same bytes is defined and is its loop.scope.allowed_paths.
    spec = derive_loopspec(approved_plan, request.task_id, request.maker, request.checker)
    scope = derive_scope(approved_plan)
    if scope.patterns is None:  # pragma: no cover - derive_loopspec refused it first
        raise InputRejected("LOOPSPEC_UNDERIVABLE", scope.problem_text, "fix plan.md")
    surfaces = (resolve_surfaces(repo_root, request.explicit_surfaces)
                if request.explicit_surfaces is not None else surfaces_at_commit(git, base_full))
    gates = {
        "c1": "PASS" if package.c1.valid else package.c1.state.value,
        "breakdown": request.breakdown,
    }
    document: dict[str, Any] = {
        "changed_files": changed,
        "allowed_paths": list(scope.patterns),
        **({"denied_paths": list(scope.denied)} if scope.denied else {}),
        "lite": dict.fromkeys(request.lite, True),
        "class": request.cls,
        "verdicts": {
            "model_a": request.reviewers["model_a"].verdict,
            "model_b": request.reviewers["model_b"].verdict,
            "reject_category": request.reject_category,
            "model_c": request.model_c,
            "model_d": request.model_d,
        },
        "target_sha": target_full,
        "gates": gates,
        "production": True,
    }
    if request.run is not None:
        document["run"] = dict(request.run)
    block = plan_package_block(package, target_full, request.reviewers)
    if block is not None and not problems:
        document["plan_package"] = block
    problems += [*package.presence, *package.evidence_reasons]
    return BuiltInput(document, surfaces, target_full, base_full, loopspec_hash(spec),
                      tuple(problems), snapshot)
