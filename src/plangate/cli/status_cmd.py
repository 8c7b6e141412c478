"""``plangate status [TASK ...] [--json]``: one line per task.

For every task directory under ``docs/working/`` (or only the named tasks) it
shows the presence gate, both evidence markers, the record kind, its decision
and the static verify verdict (the same acceptor as ``plangate c3 verify``
without ``--expected-sha``). It is a report: exit 0, except 1 when a named task
does not exist. Verdicts are read from the row, not the exit code.

Each task directory is read once (one snapshot); the records' ``source_sha``
values are resolved with a single git process for all tasks.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.errors import PlanGateError
from plangate.layout import WORKING_DIR
from plangate.snapshot import (
    ARTIFACTS,
    TASK_ID_RE,
    TaskSnapshot,
    check_task_id,
    find_repo_root,
    read_task_snapshot,
)
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    import argparse

    from plangate.approval.acceptor import ParsedRecord

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("task", "TASK"),
    ("package", "PACKAGE"),
    ("c1", "C-1"),
    ("c2", "C-2"),
    ("record", "RECORD"),
    ("decision", "DECISION"),
    ("verdict", "VERIFY"),
    ("first_reason", "FIRST REASON"),
)


def _parser() -> argparse.ArgumentParser:
    import argparse  # lazy: the plain forms never need it (see _fast_args)

    parser = argparse.ArgumentParser(
        prog="plangate status",
        description="Show every task's Plan Package, evidence markers, record and static "
        "verify verdict.",
        epilog="exit codes: 0 the report was produced (read the verdicts in it); 1 a named "
        "task does not exist; 2 bad task id",
    )
    parser.add_argument("tasks", nargs="*", metavar="TASK", help="only these tasks")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _fast_args(args: list[str]) -> tuple[list[str], bool] | None:
    """``(tasks, as_json)`` for ``[TASK ...] [--json]`` or ``--json [TASK ...]``, else None.

    Exactly the forms argparse parses the same way (task names not starting
    with ``-``, ``--json`` once, before or after the names); everything else,
    help and errors included, goes through argparse.
    """
    as_json = args.count("--json")
    if as_json > 1:
        return None
    if as_json:
        if args[0] == "--json":
            args = args[1:]
        elif args[-1] == "--json":
            args = args[:-1]
        else:
            return None
    if any(arg.startswith("-") for arg in args):
        return None
    return args, bool(as_json)


def list_task_ids(root: Path) -> list[str]:
    """Names of the entries under ``docs/working`` that look like task ids, sorted."""
    working = root / WORKING_DIR
    try:
        names = os.listdir(working)  # noqa: PTH208 -- names only, no Path per entry
    except OSError:
        return []
    return sorted(name for name in names if TASK_ID_RE.fullmatch(name))


def _parse_records(snapshots: list[TaskSnapshot]) -> dict[str, ParsedRecord | None]:
    """Each snapshot's record parsed once (for git resolution and for the acceptor)."""
    from plangate.approval.acceptor import parse_record

    return {
        snap.task_id: parse_record(snap.record.data if snap.record.ok else None)
        for snap in snapshots
    }


def _resolve_sources(
    root: Path,
    snapshots: list[TaskSnapshot],
    parsed: dict[str, ParsedRecord | None] | None = None,
) -> dict[str, Any]:
    """SourceResolution per task id, with one git process for all records."""
    from plangate.approval.acceptor import SourceResolution, source_sha_of
    from plangate.git import Git, GitError

    if parsed is None:
        parsed = _parse_records(snapshots)
    wanted: dict[str, str] = {}
    for snap in snapshots:
        sha = source_sha_of(parsed.get(snap.task_id))
        if sha is not None:
            wanted[snap.task_id] = sha
    out: dict[str, Any] = {}
    if not wanted:
        return out
    try:
        resolved = Git(root).resolve_commits(list(wanted.values()))
    except GitError as exc:
        for task_id, sha in wanted.items():
            message = f"source_sha {sha}: {exc.message}"
            out[task_id] = SourceResolution(
                None, Reason("C3_SOURCE_SHA_UNRESOLVED", message, exc.hint)
            )
        return out
    codes = {
        "GIT_COMMIT_AMBIGUOUS": "C3_SOURCE_SHA_AMBIGUOUS",
        "GIT_COMMIT_UNKNOWN": "C3_SOURCE_SHA_UNKNOWN",
    }
    for task_id, sha in wanted.items():
        value = resolved.get(sha)
        if isinstance(value, str):
            out[task_id] = SourceResolution(value)
        else:
            code, message, hint = "C3_SOURCE_SHA_UNRESOLVED", "not resolved", ""
            if isinstance(value, GitError):
                code = codes.get(value.code, code)
                message, hint = value.message, value.hint
            out[task_id] = SourceResolution(
                None, Reason(code, f"source_sha {sha}: {message}", hint)
            )
    return out


def _record_kind(snapshot: TaskSnapshot, result: Result) -> str:
    if not snapshot.record.ok:
        return "none" if snapshot.record.state.value == "missing" else snapshot.record.state.value
    kind = result.facts.get("kind")
    return str(kind) if kind else "invalid"


def task_row(
    snapshot: TaskSnapshot, source: Any, *, parsed: ParsedRecord | None = None
) -> dict[str, Any]:
    """The status row of one snapshot (pure, given the git resolution ``source``).

    ``parsed`` may pass the record's parse (see
    :func:`plangate.approval.acceptor.verify_snapshot`).
    """
    from plangate.approval.acceptor import verify_snapshot
    from plangate.plan.package import compute_package

    package = compute_package(snapshot)
    result = verify_snapshot(
        snapshot, expected_sha=None, source=source, package=package, parsed=parsed
    )
    presence = package.presence
    present = len(ARTIFACTS) - len(presence)
    decision = result.facts.get("decision")
    if decision is None and result.facts.get("kind") == "legacy":
        record = result.facts.get("record")
        if isinstance(record, dict):
            decision = record.get("c3_status")
    # The first thing to fix: package and markers come before the record.
    first = presence or package.evidence_reasons or result.reasons
    return {
        "task": snapshot.task_id,
        "package": f"{present}/{len(ARTIFACTS)}",
        "presence": [r.to_json() for r in presence],
        "plan_hash": package.plan_hash,
        "plan_package_hash": package.plan_package_hash,
        "c1": package.c1.state.value,
        "c2": package.c2.state.value,
        "record": _record_kind(snapshot, result),
        "decision": decision if isinstance(decision, str) else None,
        "verdict": result.verdict,
        "exit_code": int(result.exit_code),
        "reasons": [r.to_json() for r in result.reasons],
        "first_reason": first[0].code if first else "",
    }


def _error_row(task_id: str, exc: PlanGateError) -> dict[str, Any]:
    return {
        "task": task_id,
        "package": "-",
        "presence": [],
        "plan_hash": None,
        "plan_package_hash": None,
        "c1": "-",
        "c2": "-",
        "record": "-",
        "decision": None,
        "verdict": "REJECTED",
        "exit_code": 1,
        "reasons": [Reason(exc.code, exc.message, exc.hint).to_json()],
        "first_reason": exc.code,
    }


def format_table(rows: list[dict[str, Any]]) -> list[str]:
    """Rows as aligned text lines with a header."""
    cells = [[title for _key, title in _COLUMNS]]
    for row in rows:
        cells.append([str(row.get(key) or "-") for key, _title in _COLUMNS])
    widths = [max(len(line[i]) for line in cells) for i in range(len(_COLUMNS))]
    return ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in cells]


def _collect_rows(
    root: Path, task_ids: list[str], named: bool
) -> tuple[list[dict[str, Any]], list[Reason]]:
    """The rows of ``task_ids`` in order, and a TASK_NOT_FOUND reason per missing named task."""
    missing: list[Reason] = []
    snapshots: list[TaskSnapshot] = []
    rows_by_task: dict[str, dict[str, Any]] = {}
    working = root / WORKING_DIR
    for task_id in task_ids:
        task_dir = working / task_id
        if named and not (task_dir.exists() or task_dir.is_symlink()):
            missing.append(
                Reason("TASK_NOT_FOUND", f"docs/working/{task_id} does not exist",
                       f"create it with 'plangate init {task_id}'")
            )
            continue
        try:
            snapshots.append(read_task_snapshot(task_dir))
        except PlanGateError as exc:
            rows_by_task[task_id] = _error_row(task_id, exc)
    parsed = _parse_records(snapshots)
    sources = _resolve_sources(root, snapshots, parsed)
    for snap in snapshots:
        rows_by_task[snap.task_id] = task_row(
            snap, sources.get(snap.task_id), parsed=parsed.get(snap.task_id)
        )
    return [rows_by_task[t] for t in task_ids if t in rows_by_task], missing


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate status``."""
    fast = _fast_args(argv[1:])
    if fast is not None:
        tasks, as_json = fast
    else:
        args = _parser().parse_args(argv[1:])
        tasks, as_json = args.tasks, args.json
    root = find_repo_root(ctx.cwd)
    named = [check_task_id(t) for t in tasks]
    task_ids = list(dict.fromkeys(named)) if named else list_task_ids(root)
    # Thousands of small containers that form no reference cycles: the cyclic
    # collector would only rescan them, again and again, as they pile up.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        rows, missing = _collect_rows(root, task_ids, bool(named))
    finally:
        if gc_was_enabled:
            gc.enable()
    summary: dict[str, int] = {}
    for row in rows:
        summary[row["verdict"]] = summary.get(row["verdict"], 0) + 1
    code = 1 if missing else 0
    if as_json:
        print_json(
            ctx,
            {
                "verdict": "REPORT" if not missing else "REJECTED",
                "reasons": [r.to_json() for r in missing],
                "tasks": rows,
                "summary": summary,
                "count": len(rows),
            },
        )
        return code
    if not rows and not missing:
        ctx.out("no tasks under docs/working/ (create one with 'plangate init TASK-0001')")
        return code
    # One write for the whole table (the same text as one line per call).
    ctx.out("\n".join(format_table(rows)))
    if rows:
        parts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(summary.items()))
        ctx.out(f"{len(rows)} task(s): {parts}")
    for reason in missing:
        ctx.err(f"plangate status: {reason.code}: {reason.message}")
        ctx.err(f"  hint: {reason.hint}")
    return code
