"""``plangate status``: judge every task statically, one snapshot and one git process.

For every task directory under ``docs/working/`` (or only the named tasks):
the presence gate, both evidence markers, the record kind, its decision and the
verdict the task would get at exec (the acceptor as ``plangate c3 verify
--expected-sha HEAD`` runs it: the record must bind HEAD) with the first reason
for that verdict; the first package or marker problem is shown beside it
(``package_reason``), never in place of the verdict's own reason. Without a
readable HEAD (not a git repository, no commit yet) the verdict is the static
one (``source_sha`` must name exactly one commit, not compared with HEAD). Each
task directory is read once (one snapshot); the records' ``source_sha`` values
are resolved with a single git process for all tasks, HEAD from the ``.git``
files.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from plangate.errors import PlanGateError
from plangate.layout import WORKING_DIR
from plangate.snapshot import ARTIFACTS, TASK_ID_RE, TaskSnapshot, read_task_snapshot
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.approval.acceptor import ParsedRecord


def list_task_ids(root: Path) -> list[str]:
    """Names of the entries under ``docs/working`` that look like task ids, sorted."""
    working = root / WORKING_DIR
    try:
        names = os.listdir(working)  # noqa: PTH208 -- names only, no Path per entry
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        # An unreadable docs/working/ is not "no tasks": say so instead of an empty report.
        from plangate.fsutil import path_unavailable

        raise path_unavailable(WORKING_DIR, exc) from None
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
    from plangate.approval.service import source_resolution

    for task_id, sha in wanted.items():
        out[task_id] = source_resolution(sha, resolved.get(sha))
    return out


def _record_kind(snapshot: TaskSnapshot, result: Result) -> str:
    if not snapshot.record.ok:
        return "none" if snapshot.record.state.value == "missing" else snapshot.record.state.value
    kind = result.facts.get("kind")
    return str(kind) if kind else "invalid"


def task_row(
    snapshot: TaskSnapshot,
    source: Any,
    *,
    parsed: ParsedRecord | None = None,
    head: str | None = None,
) -> dict[str, Any]:
    """The status row of one snapshot (pure, given the git resolution ``source``).

    ``parsed`` may pass the record's parse (see
    :func:`plangate.approval.acceptor.verify_snapshot`); ``head`` is HEAD's full
    id (the verdict is then the one exec would get), or None (the static one).
    """
    from plangate.approval.acceptor import verify_snapshot
    from plangate.plan.package import compute_package

    package = compute_package(snapshot)
    result = verify_snapshot(
        snapshot, expected_sha=head, source=source, package=package, parsed=parsed
    )
    presence = package.presence
    present = len(ARTIFACTS) - len(presence)
    decision = result.facts.get("decision")
    if decision is None and result.facts.get("kind") == "legacy":
        record = result.facts.get("record")
        if isinstance(record, dict):
            decision = record.get("c3_status")
    # The first reason is the verdict's own; package and marker problems that
    # did not decide it are reported beside it.
    package_first = presence or package.evidence_reasons
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
        "first_reason": result.reasons[0].code if result.reasons else "",
        "package_reason": package_first[0].code if package_first else "",
        "at": "exec" if head is not None else "static",
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
        "package_reason": "",
        "at": "static",
    }


def _head(root: Path) -> str | None:
    """HEAD's full commit id (read from the ``.git`` files, else asked of git), or None."""
    from plangate.git import Git, GitError
    from plangate.hooks.githead import read_head

    head = read_head(str(root))
    if head is not None:
        return head
    try:
        return Git(root).head_state().commit
    except GitError:
        return None


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
    head = _head(root) if snapshots else None
    for snap in snapshots:
        rows_by_task[snap.task_id] = task_row(
            snap, sources.get(snap.task_id), parsed=parsed.get(snap.task_id), head=head
        )
    return [rows_by_task[t] for t in task_ids if t in rows_by_task], missing


class StatusReport(NamedTuple):
    """The rows in order, a ``TASK_NOT_FOUND`` reason per missing named task, verdict counts."""

    rows: list[dict[str, Any]]
    missing: list[Reason]
    summary: dict[str, int]


def status_report(root: Path, named: list[str]) -> StatusReport:
    """The status of the ``named`` tasks (already checked), or of every task when none."""
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
    return StatusReport(rows, missing, summary)
