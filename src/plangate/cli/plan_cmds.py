"""``plangate init``, ``plangate package`` and ``plangate review mark``.

Thin commands over the Plan Package core (:mod:`plangate.plan.package`,
:mod:`plangate.plan.markers`); every decision is made there.

Exit codes:

- ``init``: 0 scaffolded; 1 the task (``TASK_EXISTS``) or a file (``FILE_EXISTS``)
  already exists, nothing is overwritten; 2 bad task id.
- ``package``: 0 only when all six artifacts are present, regular and non-empty
  AND both evidence markers are valid (accepted verdict, bound to the current
  plan.md); 1 otherwise (the output says which artifact or marker and why).
- ``review mark``: 0 marker written; 1 plan.md or the evidence file is unusable.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.errors import InputRejected, UsageError
from plangate.fsutil import FileState, atomic_write
from plangate.layout import MAX_ARTIFACT_BYTES
from plangate.snapshot import (
    ARTIFACTS,
    TaskSnapshot,
    check_task_id,
    find_repo_root,
    read_task_snapshot,
    task_dir_for,
)
from plangate.verdict import Result

PACKAGE_COMPLETE = "COMPLETE"
PACKAGE_INCOMPLETE = "INCOMPLETE"

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "resources" / "task-templates"
"""Bundled artifact templates (package data)."""


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate init``, ``plangate package`` and ``plangate review``."""
    command, rest = argv[0], argv[1:]
    if command == "init":
        return _init(rest, ctx)
    if command == "package":
        return _package(rest, ctx)
    if command == "review":
        return _review(rest, ctx)
    raise UsageError("UNKNOWN_COMMAND", f"plan_cmds does not handle {command!r}", "see --help")


# --- init ------------------------------------------------------------------------------


def template_text(name: str, task_id: str) -> bytes:
    """The bundled template of artifact ``name`` with ``{task_id}`` filled in."""
    text = (TEMPLATE_DIR / name).read_text(encoding="utf-8")
    return text.replace("{task_id}", task_id).encode("utf-8")


def _init(args_list: list[str], ctx: Context) -> int:
    parser = argparse.ArgumentParser(
        prog="plangate init",
        description="Scaffold docs/working/TASK-XXXX/ with the six Plan Package artifacts "
        "as templates. Never overwrites anything.",
        epilog="exit codes: 0 created; 1 the task or a file already exists (TASK_EXISTS / "
        "FILE_EXISTS); 2 bad task id",
    )
    parser.add_argument("task", help="task id, e.g. TASK-0001")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(args_list)
    task_id = check_task_id(args.task)
    root = find_repo_root(ctx.cwd)
    task_dir = task_dir_for(root, task_id)
    rel = f"docs/working/{task_id}"

    if task_dir.is_symlink() or (task_dir.exists() and not task_dir.is_dir()):
        raise InputRejected(
            "TASK_EXISTS",
            f"{rel} already exists and is not a plain directory",
            "remove it or choose another task id",
        )
    if task_dir.is_dir():
        present = [p.name for p in sorted(task_dir.iterdir())]
        if present:
            raise InputRejected(
                "TASK_EXISTS",
                f"{rel} already exists and holds {', '.join(present)}",
                "plangate init never overwrites; edit the files or choose another task id",
            )
    # Render every template before writing anything, so a broken install
    # cannot leave a half-scaffolded task behind.
    rendered = {name: template_text(name, task_id) for name in ARTIFACTS}
    created: list[str] = []
    for name in ARTIFACTS:
        # overwrite=False links the file into place: a file created meanwhile by
        # someone else makes this fail with FILE_EXISTS instead of being replaced.
        atomic_write(task_dir / name, rendered[name], overwrite=False)
        created.append(f"{rel}/{name}")
    if args.json:
        print_json(ctx, {"verdict": "CREATED", "reasons": [], "task_id": task_id,
                         "created": created})
        return 0
    ctx.out(f"{task_id}: created {rel}/ with the six Plan Package artifacts:")
    for path in created:
        ctx.out(f"  {path}")
    ctx.out("next: fill in the artifacts, then record both reviews:")
    ctx.out(f"  plangate review mark {task_id} --c1 PASS")
    ctx.out(f"  plangate review mark {task_id} --c2 approve")
    ctx.out(f"  plangate package {task_id}")
    return 0


# --- package ---------------------------------------------------------------------------


def _snapshot(ctx: Context, task: str) -> tuple[Path, TaskSnapshot]:
    task_id = check_task_id(task)
    root = find_repo_root(ctx.cwd)
    return root, read_task_snapshot(task_dir_for(root, task_id))


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


def _package(args_list: list[str], ctx: Context) -> int:
    parser = argparse.ArgumentParser(
        prog="plangate package",
        description="Presence gate, artifact hashes, plan_hash, plan_package_hash and the "
        "state of both evidence markers of one task.",
        epilog="exit codes: 0 all six artifacts present and both markers valid (accepted "
        "verdict bound to the current plan.md); 1 anything else; 2 bad task id",
    )
    parser.add_argument("task", help="task id, e.g. TASK-0001")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(args_list)
    _root, snapshot = _snapshot(ctx, args.task)
    result, facts = package_result(snapshot)
    if args.json:
        out = {"verdict": result.verdict, "reasons": [r.to_json() for r in result.reasons]}
        out.update(facts)
        print_json(ctx, out)
        return int(result.exit_code)
    ctx.out(f"{snapshot.task_id} package: {result.verdict}")
    width = max(len(name) for name in ARTIFACTS)
    for item in facts["artifacts"]:
        digest = item["sha256"] or "-"
        state = item["state"] if item["problem"] is None else f"{item['state']} ({item['problem']})"
        ctx.out(f"  {item['name'].ljust(width)}  {state.ljust(12)}  {digest}")
    ctx.out(f"  plan_hash          {facts['plan_hash'] or '-'}")
    ctx.out(f"  plan_package_hash  {facts['plan_package_hash'] or '-'}")
    for key, label in (("c1", "C-1 marker"), ("c2", "C-2 marker")):
        marker = facts["markers"][key]
        verdict = f" {marker['verdict']}" if marker["verdict"] else ""
        ctx.out(f"  {label}  ({marker['file']}): {marker['state']}{verdict}")
    for reason in result.reasons:
        ctx.out(f"  - {reason.code}: {reason.message}")
        if reason.hint:
            ctx.out(f"    hint: {reason.hint}")
    return int(result.exit_code)


# --- review mark -----------------------------------------------------------------------


def _review(args_list: list[str], ctx: Context) -> int:
    parser = argparse.ArgumentParser(
        prog="plangate review",
        description="Record a C-1 or C-2 review verdict as the one marker line of its "
        "evidence file, bound to the current plan.md.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    mark = sub.add_parser(
        "mark",
        help="write the C1-VERDICT / C2-VERDICT marker line",
        description="Write exactly one marker line bound to the sha256 of the current "
        "plan.md, replacing every earlier marker line, atomically.",
        epilog="exit codes: 0 written; 1 plan.md or the evidence file is unusable; "
        "2 usage error",
    )
    mark.add_argument("task", help="task id, e.g. TASK-0001")
    which = mark.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--c1", choices=("PASS", "FAIL"), help="self review verdict (review-self.md)"
    )
    which.add_argument(
        "--c2", choices=("approve", "reject"), help="external review verdict (review-external.md)"
    )
    mark.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(args_list)

    from plangate.plan.markers import C1, C2, marker_line, replace_marker
    from plangate.plan.package import artifact_reason

    kind, verdict = (C1, args.c1) if args.c1 is not None else (C2, args.c2)
    _root, snapshot = _snapshot(ctx, args.task)
    plan_problem = artifact_reason("plan.md", snapshot.artifacts["plan.md"])
    plan_bytes = snapshot.artifact("plan.md")
    if plan_problem is not None or plan_bytes is None:
        message = plan_problem.message if plan_problem is not None else "plan.md is unreadable"
        raise InputRejected(
            "REVIEW_PLAN_UNREADABLE",
            f"cannot bind a review to plan.md: {message}",
            "write plan.md as a regular, non-empty file first",
        )
    from plangate.canonical import sha256_digest

    plan_hash = sha256_digest(plan_bytes)
    evidence = snapshot.artifacts[kind.filename]
    if evidence.state is FileState.MISSING:
        current = b""
    elif evidence.ok and evidence.data is not None:
        current = evidence.data
    else:
        raise InputRejected(
            "REVIEW_EVIDENCE_INVALID",
            f"{kind.filename} {evidence.detail or evidence.state.value}",
            f"make {kind.filename} a regular file (links, FIFOs and directories are refused)",
        )
    line = marker_line(kind, verdict, plan_hash)
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
    atomic_write(snapshot.task_dir / kind.filename, updated, overwrite=True)
    rel = f"docs/working/{snapshot.task_id}/{kind.filename}"
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "WRITTEN",
                "reasons": [],
                "task_id": snapshot.task_id,
                "file": rel,
                "marker": line,
                "plan_hash": plan_hash,
                "evidence_sha256": sha256_digest(updated),
            },
        )
        return 0
    ctx.out(f"{snapshot.task_id}: wrote {kind.name} marker to {rel}")
    ctx.out(f"  {line}")
    if verdict != kind.accepted:
        ctx.out(f"  note: {verdict} is recorded, but only {kind.accepted} lets the task proceed")
    return 0

