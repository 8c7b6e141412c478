"""``plangate status``: judge every task statically, one snapshot and one git process.

For every task directory under ``docs/working/`` (or only the named tasks):
the presence gate, both evidence markers, the record kind, its decision and the
verdict the task gets at exec, from the one function exec, the hooks and
``plangate report`` call (:func:`plangate.approval.holds.approval_holds`: the
acceptor at HEAD, a HEAD that descends from the approved commit through in-scope
commits, the scope the record approved) with the first reason for that verdict;
the first package or marker problem is shown beside it (``package_reason``),
never in place of the verdict's own reason. Without a
readable HEAD (not a git repository, no commit yet) the verdict is the static
one (``source_sha`` must name exactly one commit, not compared with HEAD). Each
task directory is read once (one snapshot); the records' ``source_sha`` values
are resolved with a single git process for all tasks, HEAD from the ``.git``
files.

Authority: the trust root is read once, from the tip of the local trust
branch. Without one that requires signatures, the report says so plainly
(approvals are unauthenticated). With one, every task's signatures are
checked as ``plangate c3 verify`` checks them, and each row names the verified
approver and reviewers; a root that cannot be read rejects every row with its
reason first, as verify does.
"""

from __future__ import annotations

import functools
import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.errors import PlanGateError
from plangate.layout import WORKING_DIR
from plangate.records import NamedTuple
from plangate.shapes import is_task_id
from plangate.snapshot import (
    ARTIFACTS,
    TaskSnapshot,
    open_working_dir,
    read_task_snapshot,
    read_task_snapshot_in,
)
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from collections.abc import Callable

    from plangate.approval.acceptor import ParsedRecord
    from plangate.authority.approval import ApprovalAuthority
    from plangate.authority.root import TrustRoot
    from plangate.authority.wording import Signers
    from plangate.fsutil import VerifiedDir
    from plangate.plan.package import PackageState


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
    return sorted(name for name in names if is_task_id(name))


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
    known: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """SourceResolution per task id, with one git process for all records.

    ``known`` (kept by the caller for one report) holds the resolutions of full
    commit ids that git named as themselves: they are reused, not asked again,
    and the new ones are added.
    """
    from plangate.approval.acceptor import SourceResolution, source_sha_of
    from plangate.git import Git, GitError

    if parsed is None:
        parsed = _parse_records(snapshots)
    wanted: dict[str, str] = {}
    out: dict[str, Any] = {}
    for snap in snapshots:
        sha = source_sha_of(parsed.get(snap.task_id))
        if sha is not None:
            if known is not None and sha in known:
                out[snap.task_id] = known[sha]
            else:
                wanted[snap.task_id] = sha
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
        resolution = source_resolution(sha, resolved.get(sha))
        out[task_id] = resolution
        if known is not None and resolution.full_sha == sha:  # a full id naming a commit
            known[sha] = resolution
    return out


def _record_kind(snapshot: TaskSnapshot, result: Result) -> str:
    if not snapshot.record.ok:
        return "none" if snapshot.record.state.value == "missing" else snapshot.record.state.value
    kind = result.facts.get("kind")
    return str(kind) if kind else "invalid"


@functools.cache
def _row_tools() -> tuple[
    Callable[[TaskSnapshot], PackageState],
    Callable[..., Result],
    Callable[[object], Signers | None],
]:
    """What :func:`task_row` calls, imported once (an import statement per row costs more
    than a third of the row's own work; the modules stay out of this module's import)."""
    from plangate.approval.acceptor import verify_snapshot
    from plangate.authority.wording import signers_of
    from plangate.plan.package import compute_package

    return compute_package, verify_snapshot, signers_of


def task_row(
    snapshot: TaskSnapshot,
    source: Any,
    *,
    parsed: ParsedRecord | None = None,
    head: str | None = None,
    authority: ApprovalAuthority | None = None,
) -> dict[str, Any]:
    """The status row of one snapshot (pure, given the git resolution ``source``).

    ``parsed`` may pass the record's parse (see
    :func:`plangate.approval.acceptor.verify_snapshot`); ``head`` is HEAD's full
    id (the verdict is then the acceptor's at HEAD), or None (the static one);
    ``authority`` the task's authority facts when the trust root requires signatures.
    """
    return _judged_row(snapshot, source, parsed=parsed, head=head, authority=authority)[0]


def _judged_row(
    snapshot: TaskSnapshot,
    source: Any,
    *,
    parsed: ParsedRecord | None,
    head: str | None,
    authority: ApprovalAuthority | None,
) -> tuple[dict[str, Any], Result]:
    """:func:`task_row` and the acceptor's verdict it shows."""
    compute_package, verify_snapshot, signers_of = _row_tools()
    package = compute_package(snapshot)
    result = verify_snapshot(
        snapshot,
        expected_sha=head,
        source=source,
        package=package,
        parsed=parsed,
        authority=authority,
    )
    signers = signers_of(result.facts.get("authority"))
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
        "approved_by": signers.approver if signers else None,
        "reviewed_by": list(signers.reviewers) if signers else None,
    }, result


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
        "approved_by": None,
        "reviewed_by": None,
    }


def _head(root: Path) -> str | None:
    """HEAD's full commit id (read from the ``.git`` files, else asked of git), or None."""
    from plangate.git import Git, GitError
    from plangate.githead import read_head

    head = read_head(str(root))
    if head is not None:
        return head
    try:
        return Git(root).head_state().commit
    except GitError:
        return None


class TrustState(NamedTuple):
    """The trust root in force for the report: one requiring signatures, or why none is used."""

    root: TrustRoot | None
    problem: Reason | None
    branch: str

    def to_json(self) -> dict[str, Any]:
        """The report's ``authority`` object."""
        from plangate.authority.wording import UNAUTHENTICATED, UNAUTHENTICATED_HINT

        if self.problem is not None:
            return {"state": "unreadable", "reason": self.problem.to_json()}
        if self.root is None:
            return {
                "state": "unauthenticated",
                "message": UNAUTHENTICATED,
                "hint": UNAUTHENTICATED_HINT,
            }
        return {
            "state": "signatures_required",
            "trust_branch": self.branch,
            "trust_root": self.root.commit,
            "digest": self.root.digest,
        }


def read_trust_state(root: Path) -> TrustState:
    """The local trust branch's root when it requires signatures (one read for every task)."""
    from plangate.authority.source import local_root
    from plangate.git import Git

    try:
        local = local_root(Git(root), root)
    except PlanGateError as exc:
        return TrustState(None, Reason(exc.code, exc.message, exc.hint), "")
    required = local.root if local.root is not None and local.root.require_signatures else None
    return TrustState(required, None, local.branch)


def _refused(row: dict[str, Any], problem: Reason) -> dict[str, Any]:
    """A row judged without its trust root: rejected, the root's problem first."""
    return {
        **row,
        "verdict": "REJECTED",
        "exit_code": 1,
        "reasons": [problem.to_json(), *row["reasons"]],
        "first_reason": problem.code,
    }


def _row(
    root: Path,
    snap: TaskSnapshot,
    source: Any,
    parsed: ParsedRecord | None,
    *,
    head: str | None,
    trust: TrustState,
) -> dict[str, Any]:
    """One task's row under the trust state: authority checked when signatures are required."""
    if trust.problem is not None:  # fail closed, as verify does
        return _refused(task_row(snap, source, parsed=parsed, head=head), trust.problem)
    authority = None
    if trust.root is not None:
        from plangate.authority.consumer import approval_authority

        try:
            authority = approval_authority(
                root,
                root / WORKING_DIR / snap.task_id,
                snap.record.data if snap.record.ok else None,
                parsed.value if parsed is not None else None,
                head=head,
                trust=trust.root,
            )
        except PlanGateError as exc:  # ssh-keygen missing or too old: fail closed
            problem = Reason(exc.code, exc.message, exc.hint)
            return _refused(task_row(snap, source, parsed=parsed, head=head), problem)
    row, result = _judged_row(snap, source, parsed=parsed, head=head, authority=authority)
    return _as_exec(root, snap, head, row, result, trust=trust)


def _as_exec(
    root: Path, snap: TaskSnapshot, head: str | None, row: dict[str, Any], result: Result, *,
    trust: TrustState,
) -> dict[str, Any]:
    """The row with exec's own verdict (:func:`plangate.approval.holds.approval_holds`).

    ``result``, the row's acceptor verdict at HEAD (judged with the report's one git
    process), is handed to it as the acceptor's answer; the policy does the rest: an
    accepted record must also approve the scope its ``plan.md`` gives now, and a record
    that binds another commit than HEAD still holds when HEAD descends from it through
    in-scope commits.
    """
    if head is None:
        return row
    outcome = _row_tools_holds()(root, snap, head, trust=trust.root, exact=result)
    return row if outcome is result else _with_outcome(row, outcome)


@functools.cache
def _row_tools_holds() -> Callable[..., Result]:
    """:func:`plangate.approval.holds.approval_holds`, imported once (see :func:`_row_tools`)."""
    from plangate.approval.holds import approval_holds

    return approval_holds


def _with_outcome(row: dict[str, Any], outcome: Result) -> dict[str, Any]:
    return {
        **row,
        "verdict": outcome.verdict,
        "exit_code": int(outcome.exit_code),
        "reasons": [r.to_json() for r in outcome.reasons],
        "first_reason": outcome.reasons[0].code if outcome.reasons else "",
    }


SNAPSHOT_BATCH = 512
"""Tasks whose files are held in memory at once: a report over any number of tasks keeps
at most this many snapshots (one git process resolves each batch's records)."""


def _collect_rows(
    root: Path, task_ids: list[str], named: bool, trust: TrustState
) -> tuple[list[dict[str, Any]], list[Reason]]:
    """The rows of ``task_ids`` in order, and a TASK_NOT_FOUND reason per missing named task.

    Tasks are read in batches of :data:`SNAPSHOT_BATCH`: a row is small, a snapshot holds
    every file of its task, so memory stays bounded whatever the number of tasks.
    """
    handle = open_working_dir(root) if task_ids else None
    try:
        return _collect_rows_in(root, task_ids, named, trust, handle)
    finally:
        if handle is not None:
            handle.close()


def _collect_rows_in(
    root: Path, task_ids: list[str], named: bool, trust: TrustState, handle: VerifiedDir | None
) -> tuple[list[dict[str, Any]], list[Reason]]:
    """:func:`_collect_rows` with ``docs/working`` open (``handle``), or None: read by path."""
    missing: list[Reason] = []
    rows_by_task: dict[str, dict[str, Any]] = {}
    working = root / WORKING_DIR
    head: str | None = None
    head_read = False
    known: dict[str, Any] = {}  # full source ids git named as commits, for later batches
    for start in range(0, len(task_ids), SNAPSHOT_BATCH):
        snapshots: list[TaskSnapshot] = []
        for task_id in task_ids[start : start + SNAPSHOT_BATCH]:
            task_dir = working / task_id
            if named and not (task_dir.exists() or task_dir.is_symlink()):
                missing.append(
                    Reason(
                        "TASK_NOT_FOUND",
                        f"docs/working/{task_id} does not exist",
                        f"create it with 'plangate init {task_id}'",
                    )
                )
                continue
            try:
                snapshots.append(
                    read_task_snapshot(task_dir)
                    if handle is None
                    else read_task_snapshot_in(handle, task_dir)
                )
            except PlanGateError as exc:
                rows_by_task[task_id] = _error_row(task_id, exc)
        if not snapshots:
            continue
        parsed = _parse_records(snapshots)
        sources = _resolve_sources(root, snapshots, parsed, known)
        if not head_read:  # one HEAD for the whole report
            head, head_read = _head(root), True
        for snap in snapshots:
            rows_by_task[snap.task_id] = _row(
                root, snap, sources.get(snap.task_id), parsed.get(snap.task_id), head=head,
                trust=trust,
            )
    return [rows_by_task[t] for t in task_ids if t in rows_by_task], missing


class StatusReport(NamedTuple):
    """The rows in order, a ``TASK_NOT_FOUND`` reason per missing named task, verdict counts,
    and the trust root the rows were judged under."""

    rows: list[dict[str, Any]]
    missing: list[Reason]
    summary: dict[str, int]
    trust: TrustState


def status_report(root: Path, named: list[str]) -> StatusReport:
    """The status of the ``named`` tasks (already checked), or of every task when none."""
    task_ids = list(dict.fromkeys(named)) if named else list_task_ids(root)
    # Thousands of small containers that form no reference cycles: the cyclic
    # collector would only rescan them, again and again, as they pile up.
    trust = read_trust_state(root)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        rows, missing = _collect_rows(root, task_ids, bool(named), trust)
    finally:
        if gc_was_enabled:
            gc.enable()
    summary: dict[str, int] = {}
    for row in rows:
        summary[row["verdict"]] = summary.get(row["verdict"], 0) + 1
    return StatusReport(rows, missing, summary, trust)
