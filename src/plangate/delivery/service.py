"""Delivery at the IO edge: verify the approval, measure ancestry, assess, record.

(``ci check`` has its own edge, :mod:`plangate.delivery.ci_service`.)

``assess_task`` runs, under the task's delivery lock:

1. the acceptor (:func:`plangate.approval.service.verify_task`) on the task:
   only a c3-prime ``AUTO_APPROVED`` record whose every binding verifies is
   accepted; a legacy record, any other decision and any failing rule are a
   rejection (exit 1) carrying the acceptor's reasons;
2. the snapshot's strict validation (exit 2 when malformed) and its binding to
   the task;
3. the scope: ``plan.md`` is read again, its hash must equal the verified
   ``plan_hash`` (so the scope is the approved plan's), and the allowed paths
   come from :func:`plangate.plan.scope.derive_scope`;
4. ancestry, *measured* with git: the PR head must be a descendant of the
   record's ``source_sha``. A commit that is not present locally, or any git
   failure, makes ancestry unmeasurable, which escalates (fail closed). The
   snapshot's own ``source_sha_ancestry`` claim is never used;
5. the pure machine (:func:`plangate.delivery.machine.assess`) over the
   record read once;
6. the new rows: first each one to the ledger (kind ``delivery_transition``,
   subject the task id), then all of them to ``record.jsonl``. If the ledger
   cannot be written nothing is appended to the record and the command
   refuses (exit 1): no state, and in particular no MERGE_READY, is reported
   without its ledger entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.canonical import is_digest, sha256_digest
from plangate.delivery.ci import TaskFacts, covered_changes
from plangate.delivery.log import (
    Anchor,
    DeliveryLog,
    DeliveryRecordError,
    append_entries,
    ledger_anchor,
    read_log,
    record_lock,
    seal_entries,
)
from plangate.delivery.machine import (
    Ancestry,
    Assessment,
    BoundRecord,
    Scope,
    assess,
    exit_code_for_state,
)
from plangate.delivery.pr_event import PullRequestEvent
from plangate.delivery.pr_snapshot import PRSnapshot, parse_snapshot_bytes
from plangate.errors import PlanGateError, UsageError
from plangate.git import Git, GitError
from plangate.layout import DELIVERY_RECORD_RELPATH, RUN_LOG_NAME, WORKING_DIR
from plangate.records import NamedTuple
from plangate.snapshot import check_task_id, task_dir_for
from plangate.surfaces import ResolvedSurfaces
from plangate.verdict import ExitCode, Reason, Result

LEDGER_KIND = "delivery_transition"
"""Ledger kind of every delivery record row (subject: the task id)."""

REJECTED = "REJECTED"


@dataclass(frozen=True)
class DeliveryOutcome:
    """What a delivery command decided, how it exits and how many rows it appended."""

    result: Result
    exit_code: int
    appended: int = 0


def check_now(now: str, flag: str = "--now") -> str:
    """An injected time must be ``YYYY-MM-DDTHH:MM:SSZ`` (usage error otherwise)."""
    from plangate.clock import is_utc_timestamp

    if not is_utc_timestamp(now):
        raise UsageError(
            "DELIVERY_TIME_INVALID",
            f"{flag} {now!r} is not a UTC time YYYY-MM-DDTHH:MM:SSZ",
            "e.g. --now 2026-12-02T10:00:00Z",
        )
    return now


def _rejected(reasons: list[Reason], facts: Mapping[str, Any]) -> DeliveryOutcome:
    return DeliveryOutcome(Result(REJECTED, tuple(reasons), dict(facts)), int(ExitCode.REJECTED))


def verify_record(repo_root: Path, task_id: str) -> tuple[BoundRecord | None, Result]:
    """Run the acceptor; return the bound fields when (and only when) delivery may proceed."""
    from plangate.approval.service import verify_task

    return _bound_record(verify_task(repo_root, task_id))


def _bound_record(outcome: Result) -> tuple[BoundRecord | None, Result]:
    """The bound fields when (and only when) the acceptor's ``outcome`` lets delivery proceed."""
    facts = outcome.facts
    reasons = list(outcome.reasons)
    if facts.get("kind") == "legacy":
        reasons.insert(
            0,
            Reason(
                "DELIVERY_LEGACY_RECORD",
                "approvals/c3.json is a legacy C-3 record; delivery requires a c3-prime record",
                "issue a c3-prime record with 'plangate c3 issue'",
            ),
        )
        return None, Result(REJECTED, tuple(reasons), _public_facts(facts))
    if (
        outcome.verdict != "ACCEPTED"
        or facts.get("kind") != "c3-prime"
        or facts.get("decision") != "AUTO_APPROVED"
    ):
        reasons.insert(
            0,
            Reason(
                "DELIVERY_RECORD_NOT_ACCEPTED",
                f"the c3-prime record does not verify (acceptor verdict {outcome.verdict}, "
                f"decision {facts.get('decision')!r})",
                "only an AUTO_APPROVED record with every binding intact reaches delivery",
            ),
        )
        return None, Result(REJECTED, tuple(reasons), _public_facts(facts))
    bound = BoundRecord(
        task_id=str(facts.get("task_id")),
        source_sha=str(facts.get("source_sha_full") or facts.get("source_sha")),
        plan_hash=str(facts.get("plan_hash")),
        plan_package_hash=str(facts.get("plan_package_hash")),
    )
    return bound, outcome


def _public_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in facts.items() if k != "record"}


def approved_scope(plan: bytes | None, record: object) -> Scope | Reason:
    """The scope of the verified ``plan.md`` bytes, or a rejection when the record did not
    approve that scope (:func:`plangate.plan.scope.check_scope_binding`, as ``ci check``)."""
    from plangate.plan.scope import check_scope_binding, derive_scope

    scope = derive_scope(plan)
    unbound = check_scope_binding(scope, record)
    if unbound is not None:
        return unbound
    return Scope(scope.patterns, scope.problem_text, scope.denied)


def head_commit(repo_root: Path, head_sha: str) -> Ancestry | None:
    """None when ``head_sha`` names a commit of this repository as itself, else why not
    (an unmeasurable ancestry: the machine escalates)."""
    try:
        head_full = Git(repo_root).resolve_commit(head_sha)
    except GitError as exc:
        return Ancestry("unmeasurable", f"{exc.code}: {exc.message}")
    if head_full != head_sha:
        # git peels an annotated tag to its commit: the snapshot's head (the sha its
        # checks and review are compared with) must name the commit itself.
        return Ancestry(
            "unmeasurable",
            f"head_sha {head_sha[:12]} is not a commit object "
            f"(git resolves it to {head_full[:12]})",
        )
    return None


class MergeVerification(NamedTuple):
    """The record's verdict for merging a head, the bound fields, ancestry, and the task as
    ``ci check`` judges it (its verified ``plan.md`` and artifacts)."""

    bound: BoundRecord | None
    result: Result
    ancestry: Ancestry
    task: TaskFacts | None = None


def verify_for_merge(repo_root: Path, task_id: str, head_sha: str) -> MergeVerification:
    """The task's approval for merging ``head_sha``: the verdict ``ci check`` gets
    (:func:`plangate.approval.holds.approval_holds_for_merge`).

    A head that does not descend from the approved commit is not a rejection of the
    record here: delivery escalates it (``ancestry_fail``). A head git cannot name is
    an unmeasurable ancestry, judged with the record's static verification.
    """
    from plangate.approval.holds import NOT_ANCESTOR_CODE, approval_holds_for_merge
    from plangate.approval.service import verify_task
    from plangate.snapshot import read_task_snapshot

    try:
        snapshot = read_task_snapshot(task_dir_for(repo_root, task_id))
    except PlanGateError as exc:
        reason = Reason(exc.code, exc.message, exc.hint)
        return MergeVerification(None, Result(REJECTED, (reason,), {"task_id": task_id}),
                                 Ancestry("unmeasurable"))
    unmeasurable = head_commit(repo_root, head_sha)
    if unmeasurable is not None:
        outcome = verify_task(repo_root, task_id, snapshot=snapshot)
        ancestry = unmeasurable
    else:
        outcome = approval_holds_for_merge(repo_root, snapshot, head_sha)
        ancestry = Ancestry("descends", f"{head_sha[:12]} descends from the approved commit")
        if outcome.codes == (NOT_ANCESTOR_CODE,):
            # The record itself verified; only history differs.
            outcome = Result("ACCEPTED", (), outcome.facts)
            ancestry = Ancestry("diverged", f"{head_sha[:12]} does not descend from the "
                                "approved commit")
    bound, result = _bound_record(outcome)
    task = TaskFacts(task_id, None, outcome, snapshot.artifact("plan.md"),
                     tuple(snapshot.artifacts))
    return MergeVerification(bound, result, ancestry, task)


def protection_at(repo_root: Path, source_sha: str) -> ResolvedSurfaces:
    """The protected-surface definition committed at the approved ``source_sha``.

    Read from git at that commit (never the work tree the PR may have changed),
    through :func:`plangate.surfaces.surfaces_at_commit`: a repository without its
    own definition gets the bundled template. A git failure is a definition with a
    problem; the machine decides which problems escalate
    (:func:`plangate.delivery.machine.surfaces_problem`).
    """
    from plangate.surfaces import PROVENANCE_DOWNSTREAM, surfaces_at_commit

    try:
        return surfaces_at_commit(Git(repo_root), source_sha)
    except GitError as exc:
        return ResolvedSurfaces(
            PROVENANCE_DOWNSTREAM, None, None, (), Reason(exc.code, exc.message, exc.hint or "")
        )


def _ledger_payload(row: Mapping[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "entry_id": row["entry_id"],
        "entry_kind": row["kind"],
        "prev": row["prev"],
        "at": row["at"],
    }
    for key in ("state", "pr_number", "head_sha", "action_id", "action_kind"):
        if key in row:
            payload[key] = row[key]
    if row["kind"] == "merge_ready":
        payload["pr_number"] = row["record"]["pr_number"]
        payload["head_sha"] = row["record"]["head_sha"]
    return payload


def ledger_entry_ids(repo_root: Path, task_id: str, env: Mapping[str, str]) -> list[str] | None:
    """Entry ids the ledger holds for the task's delivery rows; None when it cannot be read."""
    from plangate.ledger import open_ledger

    try:
        with open_ledger(repo_root, env, create=False) as ledger:
            return [
                str(entry.payload.get("entry_id"))
                for entry in ledger.entries(kind=LEDGER_KIND, subject=task_id)
            ]
    except PlanGateError:
        return None


def _time_refusal(judged: DeliveryLog, now: str) -> Reason | None:
    """``--now`` must not be earlier than the last recorded row (time never runs backwards)."""
    if judged.entries and now < str(judged.entries[-1]["at"]):
        return Reason(
            "DELIVERY_TIME_BEFORE_RECORD",
            f"--now {now} is earlier than the last recorded row ({judged.entries[-1]['at']})",
            "pass the current UTC time",
        )
    return None


def _anchor_refusal(anchor: Anchor) -> Reason | None:
    if anchor.status != "mismatch":
        return None
    return Reason(
        "DELIVERY_RECORD_NOT_IN_LEDGER",
        f"record.jsonl disagrees with the ledger: {anchor.detail}",
        "rows were added or rewritten outside plangate; restore record.jsonl and compare it "
        "with 'plangate ledger log --kind delivery_transition'",
    )


def _write_rows(
    *,
    repo_root: Path,
    task_id: str,
    task_dir: Path,
    judged: DeliveryLog,
    rows: list[dict[str, Any]],
    env: Mapping[str, str],
) -> Reason | None:
    """Ledger first, then the record. Returns a refusal reason when the ledger fails."""
    if not rows:
        return None
    from plangate.ledger import open_ledger

    # Compare before the ledger write (append_entries compares again): a ledger row
    # whose record row never lands makes every later run refuse (mismatch).
    if read_log(task_dir).raw != judged.raw:
        raise DeliveryRecordError(
            "DELIVERY_RECORD_CHANGED",
            "record.jsonl changed while it was being assessed",
            "re-run the command",
        )
    try:
        with open_ledger(repo_root, env) as ledger:
            for row in rows:
                ledger.append(LEDGER_KIND, task_id, _ledger_payload(row))
    except PlanGateError as exc:
        return Reason(
            "DELIVERY_LEDGER_UNAVAILABLE",
            f"the ledger could not record the transition ({exc.code}: {exc.message}); "
            "nothing was appended to record.jsonl",
            exc.hint or "fix the ledger (plangate ledger verify) and re-run",
        )
    try:
        append_entries(task_dir, judged, rows)
    except OSError as exc:
        return Reason(
            "DELIVERY_RECORD_UNWRITABLE",
            f"record.jsonl could not be written ({exc.strerror or exc}) after the ledger "
            "recorded the transition; the record now lacks ledger rows",
            "fix the file system; a human restores the record from the ledger "
            "('plangate ledger log --kind delivery_transition')",
        )
    return None


def assess_task(
    repo_root: Path, task_id: str, snapshot_bytes: bytes, now: str, env: Mapping[str, str]
) -> DeliveryOutcome:
    """``plangate delivery assess --snapshot``: see the module docstring for the order of steps."""
    check_task_id(task_id)
    check_now(now)
    # Malformed snapshots are usage errors (exit 2) before anything is read.
    snapshot: PRSnapshot = parse_snapshot_bytes(snapshot_bytes)
    return _assess(repo_root, task_id, snapshot, now, env,
                   facts={"task_id": task_id, "snapshot_digest": sha256_digest(snapshot_bytes)})


class PullRequestInputs(NamedTuple):
    """What the command line adds to the pull request: checks at its head, the DoD flag."""

    checks: tuple[tuple[str, str], ...] = ()
    dod_evaluated: bool = False


def read_pull_request(repo_root: Path, event: PullRequestEvent) -> tuple[PullRequestEvent,
                                                                        list[str], bool | None]:
    """The event's pull request measured with git: its commits resolved in this repository,
    the paths it changes since the merge base (a three-dot diff, as ``ci check``) and
    whether it merges cleanly (the event's own flag when GitHub computed one).

    A base or head this repository does not hold is ``DELIVERY_PR_COMMIT_UNKNOWN``
    (exit 1): fetch the pull request before assessing it. The task is read from the
    working tree, so it must be the head, clean under ``docs/working/`` (as ``ci
    check`` requires): else ``DELIVERY_HEAD_NOT_CHECKED_OUT`` (exit 1).
    """
    from plangate.errors import InputRejected

    git = Git(repo_root)
    resolved = []
    for what, sha in (("base", event.base_sha), ("head", event.head_sha)):
        try:
            full = git.resolve_commit(sha)
        except GitError as exc:
            raise InputRejected(
                "DELIVERY_PR_COMMIT_UNKNOWN",
                f"the pull request's {what} {sha[:12]} is not a commit of this repository "
                f"({exc.code})",
                "fetch the pull request's history before assessing it (actions/checkout "
                "with fetch-depth: 0)",
            ) from None
        resolved.append(full)
    base, head = resolved
    try:
        checked_out = git.head()
        # The task is read from the working tree: it must hold the head's bytes. The logs
        # PlanGate itself appends there (delivery records, run logs) are not read as the task.
        dirty = [p for p in git.worktree_changes(("docs/working",), ignored=True)
                 if not _plangate_log(p)]
    except GitError as exc:
        raise InputRejected(exc.code, exc.message, exc.hint) from None
    if checked_out != head or dirty:
        where = (f"the working tree is at {checked_out[:12]}, not the head {head[:12]}"
                 if checked_out != head else
                 f"{len(dirty)} file(s) under docs/working/ differ from the head: "
                 + ", ".join(dirty[:8]))
        raise InputRejected(
            "DELIVERY_HEAD_NOT_CHECKED_OUT", where,
            "check out the pull request's head commit, clean, before assessing it "
            "(actions/checkout with ref: the pull request's head sha)",
        )
    try:
        since = git.merge_base(base, head)
        changed = git.changed_paths(since, head)
    except GitError as exc:
        raise InputRejected(exc.code, exc.message, exc.hint) from None
    mergeable = event.mergeable
    if mergeable is None:
        mergeable = git.merges_cleanly(base, head)
    return event._replace(base_sha=base, head_sha=head), changed, mergeable


def assess_pull_request(
    repo_root: Path,
    task_id: str | None,
    event: PullRequestEvent,
    now: str,
    env: Mapping[str, str],
    *,
    inputs: PullRequestInputs | None = None,
) -> DeliveryOutcome:
    """``plangate delivery assess`` from a CI event (or ``--base``/``--head``): no snapshot.

    The pull request's number, title, body and commits come from the event, what it
    changes from git (:func:`read_pull_request`); the snapshot the machine judges is
    built from them (:func:`plangate.delivery.pr_event.snapshot_object`) and
    validated by the snapshot's contract. Without ``task_id`` the task is the one whose
    directory the pull request changes (:func:`pull_request_task`).
    """
    from plangate.delivery.pr_event import snapshot_object
    from plangate.delivery.pr_snapshot import parse_snapshot

    if task_id is not None:
        check_task_id(task_id)
    check_now(now)
    inputs = inputs or PullRequestInputs()
    event, changed, mergeable = read_pull_request(repo_root, event)
    if task_id is None:
        task_id = pull_request_task(changed)
    obj = snapshot_object(event, task_id, changed, mergeable=mergeable, checks=inputs.checks,
                          dod_evaluated=inputs.dod_evaluated)
    snapshot = parse_snapshot(obj)
    facts: dict[str, Any] = {
        "task_id": task_id,
        "pull_request": {
            "event": event.name,
            "number": event.number,
            "title": event.title,
            "base_sha": event.base_sha,
            "head_sha": event.head_sha,
        },
    }
    return _assess(repo_root, task_id, snapshot, now, env, facts=facts)


def _plangate_log(path: str) -> bool:
    """A task's delivery record or run log: written by PlanGate, never part of the approval."""
    parts = path.split("/")
    if len(parts) < 4 or "/".join(parts[:2]) != WORKING_DIR:
        return False
    inside = "/".join(parts[3:])
    return inside == RUN_LOG_NAME or inside.startswith(DELIVERY_RECORD_RELPATH.split("/")[0] + "/")


def pull_request_task(changed: list[str]) -> str:
    """The one task whose directory the pull request changes (as ``ci check`` finds its
    tasks), or the refusal: none (``DELIVERY_PR_NO_TASK``, exit 1) or several
    (``DELIVERY_PR_TASK_AMBIGUOUS``, exit 2: name the one to assess)."""
    from plangate.delivery.ci import touched_tasks
    from plangate.errors import InputRejected

    tasks = touched_tasks(tuple(changed))
    if len(tasks) == 1:
        return tasks[0]
    if not tasks:
        raise InputRejected(
            "DELIVERY_PR_NO_TASK",
            "the pull request changes no task directory (docs/working/TASK-XXXX/): there is "
            "no approved plan to assess it against",
            "merge readiness is assessed for a task's pull request; name the task if its "
            "package was merged before",
        )
    raise UsageError(
        "DELIVERY_PR_TASK_AMBIGUOUS",
        f"the pull request changes {len(tasks)} task directories: {', '.join(tasks)}",
        "name the task to assess: plangate delivery assess TASK-XXXX ...",
    )


def _assess(
    repo_root: Path,
    task_id: str,
    snapshot: PRSnapshot,
    now: str,
    env: Mapping[str, str],
    *,
    facts: dict[str, Any],
) -> DeliveryOutcome:
    """Verify the record for the snapshot's head, then run the machine under the lock."""
    task_dir = task_dir_for(repo_root, task_id)
    verified = verify_for_merge(repo_root, task_id, snapshot.head_sha)
    bound = verified.bound
    if bound is None:
        return DeliveryOutcome(verified.result, int(ExitCode.REJECTED))
    if snapshot.task_id != task_id:
        return _rejected([_task_mismatch(snapshot, task_id)], facts)
    task = verified.task
    scope = approved_scope(task.plan if task else None, verified.result.facts.get("record"))
    if isinstance(scope, Reason):
        return _rejected([scope], facts)
    surfaces = protection_at(repo_root, bound.source_sha)

    try:
        with record_lock(repo_root, task_dir):
            judged = read_log(task_dir)
            anchor = ledger_anchor(judged.entries, ledger_entry_ids(repo_root, task_id, env))
            mismatch = _anchor_refusal(anchor) or _time_refusal(judged, now)
            if mismatch is not None:
                return _rejected([mismatch], facts)
            assessment: Assessment = assess(
                snapshot,
                judged.entries,
                scope=scope,
                ancestry=verified.ancestry,
                record=bound,
                surfaces=surfaces,
                covered=covered_changes(snapshot.changed_files, (task,) if task else ()),
            )
            rows = seal_entries(assessment.new_entries, prev=judged.last_entry_id, at=now)
            refusal = _write_rows(
                repo_root=repo_root,
                task_id=task_id,
                task_dir=task_dir,
                judged=judged,
                rows=rows,
                env=env,
            )
    except DeliveryRecordError as exc:
        return _rejected([Reason(exc.code, exc.message, exc.hint)], facts)
    if refusal is not None:
        return _rejected([refusal], {**facts, "state_not_recorded": assessment.state})
    return _assessed(facts, assessment, rows, anchor)


def _task_mismatch(snapshot: PRSnapshot, task_id: str) -> Reason:
    return Reason(
        "DELIVERY_SNAPSHOT_TASK_MISMATCH",
        f"the snapshot is for {snapshot.task_id}, not {task_id}",
        "assess a snapshot of this task's pull request",
    )


def _assessed(
    facts: Mapping[str, Any], assessment: Assessment, rows: list[dict[str, Any]], anchor: Anchor
) -> DeliveryOutcome:
    """The recorded assessment as the command reports it."""
    result = assessment.result()
    out_facts = {
        **facts,
        **result.facts,
        "appended_entry_ids": [r["entry_id"] for r in rows],
        "ledger_anchor": {"status": anchor.status, "detail": anchor.detail},
    }
    return DeliveryOutcome(
        Result(result.verdict, result.reasons, out_facts),
        int(exit_code_for_state(assessment.state)),
        len(rows),
    )


def record_receipt(
    repo_root: Path,
    task_id: str,
    *,
    action_id_value: str,
    result_ref: str,
    now: str,
    env: Mapping[str, str],
) -> DeliveryOutcome:
    """``plangate delivery receipt``: record an executed action against its recorded intent.

    Exit 0 when recorded (or already recorded identically), 1 when there is no
    intent with that id, the record is refused, or a different receipt for
    the same action exists; 2 for a malformed id, reference or time.
    """
    check_task_id(task_id)
    check_now(now)
    _check_receipt_arguments(action_id_value, result_ref)
    bound, verification = verify_record(repo_root, task_id)
    if bound is None:
        return DeliveryOutcome(verification, int(ExitCode.REJECTED))
    task_dir = task_dir_for(repo_root, task_id)
    facts: dict[str, Any] = {"task_id": task_id, "action_id": action_id_value}
    try:
        with record_lock(repo_root, task_dir):
            judged = read_log(task_dir)
            anchor = ledger_anchor(judged.entries, ledger_entry_ids(repo_root, task_id, env))
            mismatch = _anchor_refusal(anchor) or _time_refusal(judged, now)
            if mismatch is not None:
                return _rejected([mismatch], facts)
            body = _receipt_body(judged, action_id_value, result_ref, facts)
            if isinstance(body, DeliveryOutcome):
                return body
            rows = seal_entries([body], prev=judged.last_entry_id, at=now)
            refusal = _write_rows(
                repo_root=repo_root,
                task_id=task_id,
                task_dir=task_dir,
                judged=judged,
                rows=rows,
                env=env,
            )
    except DeliveryRecordError as exc:
        return _rejected([Reason(exc.code, exc.message, exc.hint)], facts)
    if refusal is not None:
        return _rejected([refusal], facts)
    return _receipted(facts, appended=1, entry_id=rows[0]["entry_id"])


def _check_receipt_arguments(action_id_value: str, result_ref: str) -> None:
    """A malformed ``--action-id`` or ``--result-ref`` is a usage error (exit 2)."""
    if not is_digest(action_id_value):
        raise UsageError(
            "DELIVERY_ACTION_ID_INVALID",
            f"--action-id {action_id_value!r} is not a sha256:<64 hex> action id",
            "copy the action_id from 'plangate delivery assess --json'",
        )
    if (
        not result_ref
        or len(result_ref) > 256
        or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in result_ref)
    ):
        raise UsageError(
            "DELIVERY_RESULT_REF_INVALID",
            "--result-ref must be 1-256 characters without whitespace or control characters",
            "name the result, e.g. a commit id or evidence:<file>",
        )


def _receipted(facts: Mapping[str, Any], **extra: Any) -> DeliveryOutcome:
    return DeliveryOutcome(
        Result("ACCEPTED", (), {**facts, "receipt": facts["action_id"], **extra}),
        int(ExitCode.ACCEPTED),
        int(extra.get("appended", 0)),
    )


def _receipt_body(
    judged: DeliveryLog, action_id_value: str, result_ref: str, facts: Mapping[str, Any]
) -> dict[str, Any] | DeliveryOutcome:
    """The receipt row to append, or the outcome when none is appended.

    No recorded intent with that id is a rejection; a receipt already recorded
    with the same ``result_ref`` is accepted without a new row; one with another
    ``result_ref`` is a conflict.
    """
    intent = next(
        (e for e in judged.entries if e["kind"] == "intent" and e["action_id"] == action_id_value),
        None,
    )
    if intent is None:
        return _rejected(
            [
                Reason(
                    "DELIVERY_INTENT_UNKNOWN",
                    f"no recorded intent has action_id {action_id_value}",
                    "a receipt is recorded only for an action delivery requested",
                )
            ],
            facts,
        )
    existing = [
        e for e in judged.entries if e["kind"] == "receipt" and e["action_id"] == action_id_value
    ]
    if existing and existing[0]["result_ref"] == result_ref:
        return _receipted(facts, appended=0)
    if existing:
        return _rejected(
            [
                Reason(
                    "DELIVERY_RECEIPT_CONFLICT",
                    f"action {action_id_value} already has a receipt with another "
                    f"result_ref ({existing[0]['result_ref']!r})",
                    "an action is receipted once; request a new action instead",
                )
            ],
            facts,
        )
    payload = intent["payload"]
    round_value = payload.get("round")
    body: dict[str, Any] = {
        "kind": "receipt",
        "action_id": action_id_value,
        "action_kind": intent["action_kind"],
        "pr_number": payload["pr_number"],
        "head_sha": payload["head_sha"],
        "round": round_value if isinstance(round_value, int) else None,
        "result_ref": result_ref,
    }
    if isinstance(payload.get("finding_type"), str):
        body["finding_type"] = payload["finding_type"]
    return body
