"""The IO of ``plangate exec``: HEAD, the lock, the verification, the ledger, the run log.

:func:`execute` applies the rules of :mod:`plangate.execution.preflight` in
order, hands the prepared run to :func:`plangate.execution.command.run_verified`,
then verifies the task again and records how the run ended:

- a refusal before the command starts is best-effort recorded as
  ``exec_refused`` (failing to record it changes nothing: the command does not
  start either way);
- ``exec_started`` must reach the ledger and ``run.ndjson`` or the command does
  not start;
- ``exec_ended`` records the exit code and any drift; if it cannot be recorded,
  a command that succeeded exits 1 (the run is not fully accounted for).

Messages during the run go to the caller's :class:`ExecObserver`, so the
command's own output and plangate's notes keep their order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from plangate.clock import utc_now_text
from plangate.errors import EnvironmentFailure, PlanGateError
from plangate.execution import preflight
from plangate.execution.command import run_verified
from plangate.execution.preflight import CommandResult, PreparedRun
from plangate.execution.runlog import RUN_LOG_NAME, append_run_log, open_task_dir, unwritable
from plangate.layout import LOCK_DIR_RELPATH
from plangate.records import NamedTuple
from plangate.snapshot import check_task_id, find_repo_root, task_dir_for
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.fsutil import VerifiedDir

REJECTED = "REJECTED"  # the verdict word of a check that refuses (exit 1)


class ExecObserver(Protocol):
    """Where :func:`execute` reports while the run is in progress."""

    def note(self, text: str) -> None:
        """A message for the human (the command's stdout is left to the command)."""

    def starting(self, run: PreparedRun) -> None:
        """Called once, just before the command starts."""


Runner = Callable[..., CommandResult]
"""How a prepared run's command runs: ``runner(run, cwd=..., env=...)``.

:func:`plangate.execution.command.run_verified` runs it in the caller's tree;
:class:`plangate.execution.isolated.IsolatedRunner` in a box on a workspace."""


class Refusal(NamedTuple):
    """The command did not start: the verification (or failure) that refused it."""

    result: Result

    @property
    def exit_code(self) -> int:
        """3 when a human must decide, else 1."""
        return preflight.refusal_exit_code(self.result)


class Completion(NamedTuple):
    """The command ran: how it ended, the post-run verification and what drifted."""

    run: PreparedRun
    command: CommandResult
    after: Result
    head_after: str | None
    drift: list[str]
    recorded: bool

    @property
    def verdict(self) -> str:
        """The run's one verdict word (:func:`plangate.execution.preflight.run_verdict`)."""
        return preflight.run_verdict(
            preflight.RunOutcome(
                started=self.command.started,
                result_verdict=self.command.result_verdict,
                post_verdict=self.after.verdict,
                refusal_exit_code=self.command.exit_code,
            )
        )

    @property
    def exit_code(self) -> int:
        """The command's own exit code; 1 (or 3) for a success the verdict refuses or whose
        end was not recorded."""
        return preflight.final_exit_code(
            self.command.exit_code, recorded=self.recorded, verdict=self.verdict
        )


def execute(
    cwd: Path,
    task_id: str,
    command: Sequence[str],
    env: Mapping[str, str],
    observer: ExecObserver,
    *,
    runner: Runner = run_verified,
) -> Refusal | Completion:
    """Verify ``task_id`` against HEAD under its lock, record, run ``command``, record the end.

    A task id that is malformed or a directory outside any repository raises
    (usage and environment errors); every failure of the rules before a run is
    a :class:`Refusal`.
    """
    task_id = check_task_id(task_id)
    root = find_repo_root(cwd)
    try:
        return _locked_run(root, cwd, task_id, command, env, observer=observer, runner=runner)
    except PlanGateError as exc:
        reason = Reason(exc.code, exc.message, exc.hint)
        return Refusal(Result(REJECTED, (reason,), {"task_id": task_id, "started": False}))


def resolve_head(root: Path) -> str:
    """HEAD's full commit id, when a run may start from it (preflight rule 1)."""
    from plangate.git import Git, GitError

    try:
        toplevel, state = Git(root).toplevel_and_head_state()
    except GitError as exc:
        raise EnvironmentFailure(
            "EXEC_NO_HEAD", f"cannot resolve HEAD: {exc.message}", exc.hint
        ) from None
    same_tree = os.path.realpath(toplevel) == os.path.realpath(root)
    return preflight.branch_head(
        root,
        toplevel,
        same_tree=same_tree,
        commit=state.commit,
        branch=state.branch,
        ref=state.ref,
    )


def verify_for_head(root: Path, task_id: str, head: str) -> Result:
    """Does the task's approval hold for ``head``? The hooks' policy: HEAD is the approved
    commit or descends from it through in-scope commits (a second agent session after the
    first commit needs no new approval)."""
    from plangate.approval.holds import approval_holds
    from plangate.snapshot import read_task_snapshot

    task_dir = task_dir_for(root, task_id)
    try:
        snapshot = read_task_snapshot(task_dir)
    except PlanGateError as exc:
        return Result(REJECTED, (Reason(exc.code, exc.message, exc.hint),), {"task_id": task_id})
    # The result carries the digests the run binds (the snapshot and the record's bytes).
    return approval_holds(root, snapshot, head)


def _ledger_append(
    root: Path, env: Mapping[str, str], kind: str, task_id: str, payload: Mapping[str, Any]
) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(root, env) as ledger:
        ledger.append(kind, task_id, dict(payload))


def _ignore_lock_files(locks: VerifiedDir) -> None:
    """Keep lock files out of ``git status`` (best effort, never blocks a run).

    Written relative to the verified ``.plangate/locks`` handle, never through a link.
    """
    from plangate.fsutil import atomic_write_at

    try:
        atomic_write_at(
            locks,
            ".gitignore",
            b"# written by plangate: exec locks are not source\n*\n",
            overwrite=False,
        )
    except PlanGateError:
        return


def _head_after(root: Path) -> str | None:
    from plangate.git import Git

    try:
        return Git(root).head_state().commit
    except PlanGateError:
        return None


def _locked_run(
    root: Path,
    cwd: Path,
    task_id: str,
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    observer: ExecObserver,
    runner: Runner,
) -> Refusal | Completion:
    from plangate.fsutil import lock_at, open_verified_dir

    head = resolve_head(root)
    task_dir_for(root, task_id)  # a task directory that cannot be used refuses before the lock
    # .plangate/ and .plangate/locks/ are opened with no link followed: a linked
    # one refuses the run (PATH_COMPONENT_LINK) before anything is written.
    with (
        open_verified_dir(root, LOCK_DIR_RELPATH, create=True) as locks,
        lock_at(locks, f"{task_id}.lock", wait=False),
    ):
        _ignore_lock_files(locks)
        before = verify_for_head(root, task_id, head)
        if not before.accepted:
            return _refuse(root, env, task_id, head, before, observer=observer)
        run = preflight.prepare(task_id, head, command, before)
        _record_start(root, env, run, observer)
        observer.starting(run)
        outcome = runner(run, cwd=cwd, env=env)
        return _record_end(root, env, run, outcome, observer)


def _refuse(
    root: Path,
    env: Mapping[str, str],
    task_id: str,
    head: str,
    before: Result,
    *,
    observer: ExecObserver,
) -> Refusal:
    try:
        _ledger_append(root, env, "exec_refused", task_id, preflight.refusal_payload(head, before))
    except PlanGateError as exc:
        observer.note(f"note: refusal not recorded in the ledger ({exc.code})")
    facts = dict(before.facts)
    facts.update({"head": head, "started": False})
    return Refusal(Result(before.verdict, before.reasons, facts))


def _record_start(
    root: Path, env: Mapping[str, str], run: PreparedRun, observer: ExecObserver
) -> None:
    """``exec_started`` to the ledger, then to ``run.ndjson``; either failing refuses the run."""
    started = preflight.started_entry(run, utc_now_text())
    try:
        _ledger_append(root, env, "exec_started", run.task_id, preflight.ledger_payload(started))
    except PlanGateError as exc:
        raise EnvironmentFailure(
            "EXEC_LEDGER_UNAVAILABLE",
            f"exec_started could not be written to the ledger: {exc.code}: {exc.message}",
            exc.hint or "fix the ledger (plangate ledger verify), then retry",
        ) from None
    try:
        # After the ledger's wait: the task directory opened again with no link
        # followed, the approval re-read through it, then the log appended there.
        with open_task_dir(root, run.task_id) as task:
            _check_unchanged(task, run)
            append_run_log(task, started)
    except PlanGateError as failure:
        try:
            _ledger_append(
                root,
                env,
                "exec_ended",
                run.task_id,
                preflight.runlog_failure_payload(run, failure.code),
            )
        except PlanGateError as exc:
            observer.note(f"note: ledger not updated ({exc.code})")
        raise


def _check_unchanged(task: VerifiedDir, run: PreparedRun) -> None:
    """``EXEC_APPROVAL_CHANGED`` when the task's files are not the ones the run verified."""
    from plangate.snapshot import read_snapshot_at

    now = read_snapshot_at(task, run.task_id).digest()
    if now != run.bound.get("snapshot_digest"):
        raise EnvironmentFailure(
            "EXEC_APPROVAL_CHANGED",
            "the task's artifacts or approval record changed after they were verified "
            "(while waiting for the ledger); the command was not started",
            "run exec again",
        )


def _record_end(
    root: Path,
    env: Mapping[str, str],
    run: PreparedRun,
    outcome: CommandResult,
    observer: ExecObserver,
) -> Completion:
    after = verify_for_head(root, run.task_id, run.head)
    head_after = _head_after(root)
    ended = preflight.ended_entry(run, utc_now_text(), outcome, after, head_after)
    recorded = True
    try:
        try:
            task = open_task_dir(root, run.task_id)
        except PlanGateError as exc:
            raise unwritable(exc) from None
        with task:
            append_run_log(task, ended)
    except PlanGateError as exc:
        recorded = False
        observer.note(f"{exc.code}: exec_ended not written to {RUN_LOG_NAME}")
    try:
        _ledger_append(root, env, "exec_ended", run.task_id, preflight.ledger_payload(ended))
    except PlanGateError as exc:
        recorded = False
        observer.note(f"{exc.code}: exec_ended not written to the ledger")
    return Completion(run, outcome, after, head_after, list(ended["drift"]), recorded)
