"""Plan Package services: the IO edge of ``init``, ``package``, ``review mark`` and ``loopspec``.

Each function reads the task directory once (one snapshot) and hands those
bytes to the pure cores (:mod:`plangate.plan.package`, :mod:`plangate.plan.markers`,
:mod:`plangate.plan.loopspec`); the command modules only parse and print.

- :func:`init_task` scaffolds the six artifacts from the bundled templates and
  never overwrites anything (``TASK_EXISTS``, ``FILE_EXISTS``).
- :func:`package_report` is the presence gate, the hashes and both markers.
- :func:`mark_review` writes the one marker line of an evidence file, bound to
  the sha256 of the current plan.md, atomically.
- :func:`derive_task_loopspec` derives the LoopSpec of a complete package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plangate.errors import InputRejected
from plangate.fsutil import (
    FileState,
    VerifiedDir,
    atomic_write_at,
    child_dir,
    mkdir_at,
    names_at,
    open_verified_dir,
)
from plangate.layout import MAX_ARTIFACT_BYTES, WORKING_DIR
from plangate.records import NamedTuple
from plangate.snapshot import (
    ARTIFACTS,
    TaskSnapshot,
    check_task_id,
    read_artifacts_at,
    read_task_snapshot,
    same_reads,
    task_dir_for,
)
from plangate.verdict import Result

PACKAGE_COMPLETE = "COMPLETE"
PACKAGE_INCOMPLETE = "INCOMPLETE"

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "resources" / "task-templates"
"""Bundled artifact templates (package data)."""


def read_task(repo_root: Path, task_id: str) -> TaskSnapshot:
    """The one snapshot of ``task_id`` (``task_id`` already checked)."""
    return read_task_snapshot(task_dir_for(repo_root, task_id))


# --- init ------------------------------------------------------------------------------


def template_text(name: str, task_id: str) -> bytes:
    """The bundled template of artifact ``name`` with ``{task_id}`` filled in."""
    text = (TEMPLATE_DIR / name).read_text(encoding="utf-8")
    return text.replace("{task_id}", task_id).encode("utf-8")


def _refuse_existing(working: VerifiedDir, task_id: str, rel: str) -> None:
    """``TASK_EXISTS`` unless ``task_id`` is absent or an empty real directory under ``working``."""
    import os
    import stat

    try:
        info = os.stat(task_id, dir_fd=working.fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        raise InputRejected(
            "TASK_EXISTS",
            f"{rel} already exists and is not a plain directory",
            "remove it or choose another task id",
        )
    with child_dir(working, task_id) as task:
        present = names_at(task)
    if present:
        raise InputRejected(
            "TASK_EXISTS",
            f"{rel} already exists and holds {', '.join(present)}",
            "plangate init never overwrites; edit the files or choose another task id",
        )


def init_task(repo_root: Path, task_id: str) -> list[str]:
    """Scaffold ``docs/working/<task_id>`` with the six templates; the created paths.

    Raises ``TASK_EXISTS`` when the task directory exists (and is not empty) and
    ``FILE_EXISTS`` when a file appears while writing: nothing is overwritten.
    ``docs/``, ``docs/working/`` and the task directory are opened from the
    repository root with no link followed (``PATH_COMPONENT_LINK``), and every
    file is written relative to the verified task-directory handle; a read-only
    directory is ``PATH_UNAVAILABLE`` or ``PATH_NOT_WRITABLE``, never a traceback.
    """
    task_id = check_task_id(task_id)
    rel = f"{WORKING_DIR}/{task_id}"
    # Render every template before writing anything, so a broken install
    # cannot leave a half-scaffolded task behind.
    rendered = {name: template_text(name, task_id) for name in ARTIFACTS}
    created: list[str] = []
    with open_verified_dir(repo_root, WORKING_DIR, create=True) as working:
        _refuse_existing(working, task_id, rel)
        with mkdir_at(working, task_id) as task:
            for name in ARTIFACTS:
                # overwrite=False links the file into place: a file created meanwhile by
                # someone else makes this fail with FILE_EXISTS instead of being replaced.
                atomic_write_at(task, name, rendered[name], overwrite=False)
                created.append(f"{rel}/{name}")
    return created


# --- package ---------------------------------------------------------------------------


def package_result(snapshot: TaskSnapshot) -> tuple[Result, dict[str, Any]]:
    """The package verdict of ``snapshot`` and its JSON facts.

    ``COMPLETE`` (exit 0) needs all six artifacts and both markers valid;
    anything else is ``INCOMPLETE`` (exit 1) with every reason listed.
    """
    from plangate.plan.package import artifact_reason, compute_package

    package = compute_package(snapshot)
    reasons = (*package.presence, *package.evidence_reasons)
    verdict = PACKAGE_COMPLETE if package.complete and package.evidence_ok else PACKAGE_INCOMPLETE
    hashes = snapshot.artifact_hashes()
    artifacts = []
    for name in ARTIFACTS:
        read = snapshot.artifacts[name]
        problem = artifact_reason(name, read)
        artifacts.append(
            {
                "name": name,
                "state": "empty" if read.ok and not read.data else read.state.value,
                "sha256": hashes.get(name),
                "size": len(read.data) if read.data is not None else None,
                "problem": problem.code if problem is not None else None,
            }
        )
    facts: dict[str, Any] = package.to_json()
    facts["artifacts"] = artifacts
    return Result(verdict, tuple(reasons), facts), facts


def package_report(repo_root: Path, task_id: str) -> tuple[Result, dict[str, Any]]:
    """:func:`package_result` of the task's one snapshot."""
    return package_result(read_task(repo_root, task_id))


# --- review mark -----------------------------------------------------------------------


class MarkedReview(NamedTuple):
    """What ``review mark`` wrote."""

    task_id: str
    file: str
    marker: str
    plan_hash: str
    evidence_sha256: str
    kind_name: str
    accepted: str
    allowed: tuple[str, ...] = ()  # the derived scope the marker approves (empty: undefined)
    denied: tuple[str, ...] = ()
    scope_digest: str | None = None
    scope_problem: str = ""


def _plan_hash(snapshot: TaskSnapshot) -> str:
    from plangate.canonical import sha256_digest
    from plangate.plan.package import artifact_reason

    plan_problem = artifact_reason("plan.md", snapshot.artifacts["plan.md"])
    plan_bytes = snapshot.artifact("plan.md")
    if plan_problem is not None or plan_bytes is None:
        message = plan_problem.message if plan_problem is not None else "plan.md is unreadable"
        raise InputRejected(
            "REVIEW_PLAN_UNREADABLE",
            f"cannot bind a review to plan.md: {message}",
            "write plan.md as a regular, non-empty file first",
        )
    return sha256_digest(plan_bytes)


def _current_evidence(snapshot: TaskSnapshot, filename: str) -> bytes:
    evidence = snapshot.artifacts[filename]
    if evidence.state is FileState.MISSING:
        return b""
    if evidence.ok and evidence.data is not None:
        return evidence.data
    raise InputRejected(
        "REVIEW_EVIDENCE_INVALID",
        f"{filename} {evidence.detail or evidence.state.value}",
        f"make {filename} a regular file (links, FIFOs and directories are refused)",
    )


def marked_evidence(snapshot: TaskSnapshot, which: str, verdict: str) -> tuple[bytes, str, str]:
    """The evidence file's new bytes, its marker line and the plan hash it binds (pure).

    ``which`` is ``"c1"`` or ``"c2"``. Refuses an unusable plan.md, an evidence
    file that is not a regular file or not UTF-8, and a result larger than the
    artifact size bound (nothing is written then).
    """
    from plangate.plan.markers import C1, C2, marker_line, replace_marker
    from plangate.plan.scope import derive_scope

    kind = C1 if which == "c1" else C2
    plan_hash = _plan_hash(snapshot)
    current = _current_evidence(snapshot, kind.filename)
    line = marker_line(kind, verdict, plan_hash, derive_scope(snapshot.artifact("plan.md")).digest)
    try:
        updated = replace_marker(current, kind, line)
    except UnicodeDecodeError:
        raise InputRejected(
            "REVIEW_EVIDENCE_NOT_UTF8",
            f"{kind.filename} is not valid UTF-8; refusing to rewrite it",
            "save the file as UTF-8",
        ) from None
    if len(updated) > MAX_ARTIFACT_BYTES:
        raise InputRejected(
            "REVIEW_EVIDENCE_TOO_LARGE",
            f"{kind.filename} would exceed {MAX_ARTIFACT_BYTES} bytes",
            "shorten the review",
        )
    return updated, line, plan_hash


def mark_review(repo_root: Path, task_id: str, which: str, verdict: str) -> MarkedReview:
    """Write the ``which`` (``c1``/``c2``) marker of ``task_id`` bound to the current plan.md."""
    from plangate.canonical import sha256_digest
    from plangate.plan.markers import C1, C2
    from plangate.plan.scope import derive_scope

    kind = C1 if which == "c1" else C2
    snapshot = read_task(repo_root, task_id)
    updated, line, plan_hash = marked_evidence(snapshot, which, verdict)
    scope = derive_scope(snapshot.artifact("plan.md"))
    with open_verified_dir(repo_root, f"{WORKING_DIR}/{snapshot.task_id}") as task:
        # The file is rewritten from the bytes judged above: refuse if the package
        # changed meanwhile (or the task directory was swapped: PATH_COMPONENT_LINK).
        if not same_reads(read_artifacts_at(task), snapshot.artifacts):
            raise InputRejected(
                "REVIEW_TASK_CHANGED",
                f"the Plan Package of {snapshot.task_id} changed while the marker was prepared; "
                "nothing was written",
                "run review mark again",
            )
        atomic_write_at(task, kind.filename, updated, overwrite=True)
    return MarkedReview(
        task_id=snapshot.task_id,
        file=f"docs/working/{snapshot.task_id}/{kind.filename}",
        marker=line,
        plan_hash=plan_hash,
        evidence_sha256=sha256_digest(updated),
        kind_name=kind.name,
        accepted=kind.accepted,
        allowed=scope.patterns or (),
        denied=scope.denied,
        scope_digest=scope.digest,
        scope_problem=scope.problem_text,
    )


# --- loopspec --------------------------------------------------------------------------


def require_package(snapshot: TaskSnapshot) -> bytes:
    """Bytes of plan.md after checking that all six artifacts are present and non-empty."""
    for name in ARTIFACTS:
        read = snapshot.artifacts[name]
        if not read.ok:
            raise InputRejected(
                "LOOPSPEC_PACKAGE_INCOMPLETE",
                f"{name} of {snapshot.task_id} cannot be read: {read.detail or read.state.value}",
                "the LoopSpec is derived only from a complete Plan Package (six artifacts)",
            )
        if not read.data:
            raise InputRejected(
                "LOOPSPEC_PACKAGE_INCOMPLETE",
                f"{name} of {snapshot.task_id} is 0 bytes",
                "write the artifact; an empty artifact fails the package",
            )
    data = snapshot.artifact("plan.md")
    assert data is not None  # checked above  # noqa: S101
    return data


class DerivedLoopSpec(NamedTuple):
    """A task's LoopSpec, its hash and the snapshot it was derived from."""

    spec: dict[str, Any]
    hash: str
    snapshot: TaskSnapshot


def derive_task_loopspec(
    repo_root: Path, task_id: str, maker: str, checker: str
) -> DerivedLoopSpec:
    """The LoopSpec of a complete package, derived from the task's one snapshot."""
    from plangate.plan.loopspec import derive_loopspec, loopspec_hash

    snapshot = read_task(repo_root, task_id)
    spec = derive_loopspec(require_package(snapshot), task_id, maker, checker)
    return DerivedLoopSpec(spec, loopspec_hash(spec), snapshot)
