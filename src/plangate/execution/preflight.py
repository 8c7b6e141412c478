"""What must hold before ``plangate exec`` runs a command, and what a run records.

Pure: every function here takes values the service has already read (HEAD's
state, the verification results, the clock's text) and opens no file, runs no
git and reads no clock.

The rules before a run, in order:

1. HEAD resolves in the repository whose working tree holds the task directory
   (``EXEC_NO_HEAD``, ``EXEC_REPO_ROOT_MISMATCH``), HEAD has a commit
   (``EXEC_NO_HEAD``) and is on a branch (``EXEC_HEAD_DETACHED``);
2. an exclusive lock on the task is held for the whole run (``LOCK_HELD``);
3. the approval holds for HEAD under the ``DESCENDANT_IN_SCOPE`` policy, the
   hooks' own: the record's commit is HEAD, or HEAD descends from it through
   commits that changed only in-scope paths (anything but ``ACCEPTED`` refuses:
   exit 1, or 3 when a human must decide);
4. ``exec_started`` reaches the ledger (``EXEC_LEDGER_UNAVAILABLE``) and the
   task's ``run.ndjson`` (``EXEC_RUNLOG_UNWRITABLE``).

After the run the task is verified again; a bound digest that changed is drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from plangate.canonical import command_digest
from plangate.errors import EnvironmentFailure
from plangate.records import NamedTuple
from plangate.verdict import ExitCode, Result, exit_code_for

ACCEPTED = "ACCEPTED"
REJECTED = "REJECTED"
HUMAN_REQUIRED = "HUMAN_REQUIRED"

BOUND_FACTS: tuple[str, ...] = (
    "snapshot_digest",
    "record_digest",
    "plan_hash",
    "plan_package_hash",
    "source_sha_full",
)
"""Digests recorded in ``exec_started`` and compared after the run to report drift."""

_NOT_IN_LEDGER = ("event", "at")
"""Run-log fields the ledger entry leaves out (the ledger has its own sequence and time)."""


class PreparedRun(NamedTuple):
    """A run whose approval verified against HEAD and whose start is recorded.

    Only :func:`plangate.execution.service.execute` builds one, after every
    rule before a run held; :func:`plangate.execution.command.run_verified`
    runs its command.
    """

    task_id: str
    head: str
    command: tuple[str, ...]
    verification: Result
    bound: Mapping[str, Any]
    command_digest: str

    @property
    def program(self) -> str:
        """The program's file name (never its arguments, which may carry secrets)."""
        return Path(self.command[0]).name


class CommandResult(NamedTuple):
    """How the command ended: its exit code and, when it could not start, why.

    ``started`` is false when the run failed before the command was started (a
    workspace that could not be made, an opt-out that could not be recorded):
    ``exit_code`` is then PlanGate's own (1, or 3 when a human must decide),
    never the command's. ``result_verdict`` is how an isolated run's result was
    judged (``ACCEPTED``, ``NO_CHANGES``, ``REJECTED``, ``HUMAN_REQUIRED``);
    ``None`` when nothing judged one.
    """

    exit_code: int
    error: str | None = None
    started: bool = True
    result_verdict: str | None = None


def branch_head(
    root: Path,
    toplevel: Path,
    *,
    same_tree: bool,
    commit: str | None,
    branch: str | None,
    ref: str | None = None,
) -> str:
    """HEAD's full commit id when a run may start from it; else the refusal (rule 1).

    ``root`` holds the nearest ``.git`` entry, ``toplevel`` is git's own working
    tree, and ``same_tree`` says whether their real paths are equal.
    """
    if not same_tree:
        # The nearest ".git" (found by a file-system walk) is not the repository
        # git uses (an empty or stray .git directory, core.worktree): the task
        # directory read under it would not be the repository's own.
        raise EnvironmentFailure(
            "EXEC_REPO_ROOT_MISMATCH",
            f"{root} holds a .git entry but git's working tree is {toplevel}",
            "run plangate exec from the repository's working tree; remove stray .git entries",
        )
    if commit is None:
        raise EnvironmentFailure(
            "EXEC_NO_HEAD",
            "HEAD has no commit yet (unborn branch); an approval binds to a commit",
            "commit first, then issue the approval for that commit",
        )
    if branch is None:
        # A HEAD naming a tag or a remote-tracking ref is no more a branch than a
        # detached one: a commit would move that ref.
        where = f"names {ref}, not a local branch" if ref else f"is detached at {commit[:12]}"
        raise EnvironmentFailure(
            "EXEC_HEAD_DETACHED",
            f"HEAD {where}; exec runs on a branch",
            "check out the branch the approval was issued for",
        )
    return commit


def bound_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The digests a run is bound to, as computed from the files (not as recorded).

    Before the run they equal the record's values (the acceptor checked that);
    after it, a difference is drift.
    """
    out = {key: facts.get(key) for key in BOUND_FACTS}
    for key in ("plan_hash", "plan_package_hash"):
        current = facts.get(f"current_{key}")
        if current is not None or f"current_{key}" in facts:
            out[key] = current
    return out


def drift(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The bound digests that changed during the run, in :data:`BOUND_FACTS` order."""
    return [key for key in BOUND_FACTS if after.get(key) != before.get(key)]


def prepare(task_id: str, head: str, command: Sequence[str], verification: Result) -> PreparedRun:
    """The run a verified approval allows (``verification`` must be accepted)."""
    if not verification.accepted:
        raise ValueError("a run is prepared only from an accepted verification")
    return PreparedRun(
        task_id=task_id,
        head=head,
        command=tuple(command),
        verification=verification,
        bound=bound_facts(verification.facts),
        command_digest=command_digest(command),
    )


def refusal_payload(head: str, verification: Result) -> dict[str, Any]:
    """The ``exec_refused`` ledger payload of a verification that did not accept."""
    return {
        "head": head,
        "verdict": verification.verdict,
        "reasons": [r.code for r in verification.reasons],
        **bound_facts(verification.facts),
    }


def started_entry(run: PreparedRun, at: str) -> dict[str, Any]:
    """The ``exec_started`` run-log line."""
    facts = run.verification.facts
    return {
        "event": "exec_started",
        "task_id": run.task_id,
        "at": at,
        "head": run.head,
        "kind": facts.get("kind"),
        "decision": facts.get("decision"),
        # The program name and a digest of the full argument list: arguments may
        # carry secrets, which never enter the ledger.
        "program": run.program,
        "command_digest": run.command_digest,
        **run.bound,
    }


def runlog_failure_payload(
    run: PreparedRun, code: str = "EXEC_RUNLOG_UNWRITABLE"
) -> dict[str, Any]:
    """The ``exec_ended`` ledger payload when the run stopped after ``exec_started``.

    ``code`` says why: ``run.ndjson`` refused the line, the task directory could
    not be opened safely, or the approval changed during the ledger's wait.
    """
    error = "run.ndjson not writable" if code == "EXEC_RUNLOG_UNWRITABLE" else code
    return {
        "head": run.head,
        "exit_code": None,
        "started": False,
        "error": error,
        "command_digest": run.command_digest,
    }


def ended_entry(
    run: PreparedRun,
    at: str,
    outcome: CommandResult,
    after: Result,
    head_after: str | None,
) -> dict[str, Any]:
    """The ``exec_ended`` run-log line: exit code, the run's one verdict, the post-run
    verdict and drift."""
    after_bound = bound_facts(after.facts)
    return {
        "event": "exec_ended",
        "task_id": run.task_id,
        "at": at,
        "head": run.head,
        "head_after": head_after,
        # The command's own exit code; none for a command that was not started.
        "exit_code": outcome.exit_code if outcome.started else None,
        "started": outcome.started,
        "verdict": run_verdict(
            RunOutcome(outcome.started, outcome.result_verdict, after.verdict, outcome.exit_code)
        ),
        "error": outcome.error,
        "command_digest": run.command_digest,
        "post_verdict": after.verdict,
        "post_reasons": [r.code for r in after.reasons],
        "drift": drift(run.bound, after_bound),
        **{f"{key}_after": value for key, value in after_bound.items()},
    }


def ledger_payload(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A run-log line as a ledger payload (without ``event`` and ``at``)."""
    return {k: v for k, v in entry.items() if k not in _NOT_IN_LEDGER}


def final_exit_code(
    command_exit_code: int, *, recorded: bool, verdict: str = ACCEPTED
) -> int:
    """The exit code of a run whose command started, agreeing with its one verdict.

    ``ACCEPTED``: the command's own exit code, except that a success whose end
    was not recorded exits 1 (a run that is not fully accounted for is not a
    success). Any other verdict exits with its own code: 3 for
    ``HUMAN_REQUIRED``, else 1, whatever the command returned.
    """
    if verdict != ACCEPTED:
        return int(ExitCode.HUMAN if verdict == HUMAN_REQUIRED else ExitCode.REJECTED)
    if recorded or command_exit_code != 0:
        return command_exit_code
    return int(ExitCode.REJECTED)


class RunOutcome(NamedTuple):
    """What :func:`run_verdict` reads: whether the command started, how the result was
    judged (``None`` when nothing judged a result: a run without isolation) and the
    verdict of the approval checked again after the run."""

    started: bool
    result_verdict: str | None
    post_verdict: str
    refusal_exit_code: int = int(ExitCode.REJECTED)


def _not_started(outcome: RunOutcome) -> str | None:
    if outcome.started:
        return None
    return HUMAN_REQUIRED if outcome.refusal_exit_code == ExitCode.HUMAN else REJECTED


def _result_refused(outcome: RunOutcome) -> str | None:
    verdict = outcome.result_verdict
    if verdict is None or exit_code_for(verdict) == ExitCode.ACCEPTED:
        return None
    return HUMAN_REQUIRED if exit_code_for(verdict) == ExitCode.HUMAN else REJECTED


def _approval_lost(outcome: RunOutcome) -> str | None:
    code = exit_code_for(outcome.post_verdict)
    if code == ExitCode.ACCEPTED:
        return None
    return HUMAN_REQUIRED if code == ExitCode.HUMAN else REJECTED


RUN_VERDICT_RULES = (_not_started, _result_refused, _approval_lost)
"""The run's one verdict, first rule that answers wins: the command never started; the
result was refused; the approval no longer holds after the run; else ``ACCEPTED``."""


def run_verdict(outcome: RunOutcome) -> str:
    """The one verdict word ``plangate exec`` ends with: ``ACCEPTED``, ``REJECTED`` or
    ``HUMAN_REQUIRED`` (:data:`RUN_VERDICT_RULES`). A result that changed nothing is
    ``ACCEPTED`` (:data:`plangate.verdict` maps ``NO_CHANGES`` to exit 0)."""
    for rule in RUN_VERDICT_RULES:
        verdict = rule(outcome)
        if verdict is not None:
            return verdict
    return ACCEPTED


def refusal_exit_code(verification: Result) -> int:
    """3 when a human must decide, else 1: a refused run never exits 0."""
    if verification.exit_code == ExitCode.HUMAN:
        return int(ExitCode.HUMAN)
    return int(ExitCode.REJECTED)
