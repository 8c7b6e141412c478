"""The delivery state machine: a pure function from facts to a merge-readiness state.

:func:`assess` never opens a file, runs git or reads the clock. The service
layer (:mod:`plangate.delivery.service`) gives it the validated PR snapshot,
the delivery record read once, the scope derived from the approved
``plan.md``, the ancestry fact *measured* with git, and the bound fields of the
verified c3-prime record.

Rules are applied in :data:`PRIORITY_ORDER`; the first one that applies decides
(reference section 6.3, with the upstream defects fixed: the scope uses the
one glob matcher and the LoopSpec's allowed paths, and ancestry is a measured
fact that fails closed when it cannot be measured). There is no ``MERGED``
state and nothing here merges: ``MERGE_READY`` is the terminal state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from plangate.canonical import digest
from plangate.delivery.snapshot import (
    FAILED_CONCLUSIONS,
    PASSING_CONCLUSIONS,
    PENDING_CONCLUSIONS,
    Finding,
    PRSnapshot,
)
from plangate.paths import (
    PathRejected,
    glob_match,
    is_canonical_path,
    match_any,
    validate_pattern,
)
from plangate.verdict import ExitCode, Reason, Result

STATES: tuple[str, ...] = (
    "CHECKS_FAILED",
    "CONFLICT",
    "MERGE_READY",
    "MERGE_READY_CANDIDATE",
    "REVIEW_REPAIR",
    "WAITING_FOR_CHECKS",
    "WAITING_FOR_REVIEW",
)
"""The internal sub-states of ``PR_CREATED -> MERGE_READY`` (sorted)."""

EXITS: tuple[str, ...] = ("EXEC_RETURN", "HUMAN_ESCALATED")
"""Ways out of the machine that are not states: back to exec, or to a human."""

TERMINAL: tuple[str, ...] = ("MERGE_READY",)

PRIORITY_ORDER: tuple[str, ...] = (
    "invalid_snapshot",
    "plan_deviation",
    "protected_surface",
    "escalation_flags",
    "ancestry_fail",
    "unknown_check_conclusion",
    "taxonomy_unverifiable",
    "round_limit",
    "same_type_recurrence",
    "ci_failed",
    "conflict",
    "review_findings",
    "waiting_checks",
    "waiting_review",
    "merge_ready_candidate",
    "merge_ready",
)

ROUND_LIMIT = 3
"""At most three repair rounds; a fourth is never requested (HUMAN_ESCALATED)."""

REPAIR_KINDS = frozenset({"repair_ci", "repair_review", "resolve_conflict"})
ACTION_KINDS: tuple[str, ...] = (
    "dod_reevaluate",
    "feedback_loop_referral",
    "record_disposition",
    "repair_ci",
    "repair_review",
    "resolve_conflict",
)
KNOWN_TAXONOMY = frozenset({"code", "flaky", "environment"})
"""CI failure classes a repair round can address; anything else needs a human."""

STATE_EXIT_CODES: Mapping[str, ExitCode] = {
    "MERGE_READY": ExitCode.ACCEPTED,
    "HUMAN_ESCALATED": ExitCode.HUMAN,
    "EXEC_RETURN": ExitCode.REJECTED,
    "CHECKS_FAILED": ExitCode.INCONCLUSIVE,
    "CONFLICT": ExitCode.INCONCLUSIVE,
    "MERGE_READY_CANDIDATE": ExitCode.INCONCLUSIVE,
    "REVIEW_REPAIR": ExitCode.INCONCLUSIVE,
    "WAITING_FOR_CHECKS": ExitCode.INCONCLUSIVE,
    "WAITING_FOR_REVIEW": ExitCode.INCONCLUSIVE,
}
"""0 MERGE_READY, 4 not yet ready (waiting or repair), 3 a human, 1 back to exec."""


def exit_code_for_state(state: str) -> ExitCode:
    """Exit code of a delivery state or exit; anything unknown is a rejection."""
    return STATE_EXIT_CODES.get(state, ExitCode.REJECTED)


def contract() -> dict[str, Any]:
    """The machine's contract: exits, priority order, states, terminal, transitions.

    ``assess`` is stateless (driven by the snapshot and the record), so every
    non-terminal state can reach every state and exit; the terminal state
    reaches nothing.
    """
    every = sorted((*STATES, *EXITS))
    transitions = {state: ([] if state in TERMINAL else list(every)) for state in STATES}
    return {
        "exits": list(EXITS),
        "priority_order": list(PRIORITY_ORDER),
        "states": list(STATES),
        "terminal": list(TERMINAL),
        "transitions": transitions,
    }


def contract_text() -> str:
    """:func:`contract` as printed by ``plangate delivery contract`` (indent 2, sorted)."""
    return json.dumps(contract(), indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Ancestry:
    """Whether the PR head descends from the record's ``source_sha``, as git measured it."""

    status: Literal["descends", "diverged", "unmeasurable"]
    detail: str = ""


@dataclass(frozen=True)
class BoundRecord:
    """The fields of the verified c3-prime record that delivery binds to."""

    task_id: str
    source_sha: str
    plan_hash: str
    plan_package_hash: str


@dataclass(frozen=True)
class Scope:
    """The allowed-path patterns derived from the approved plan, or why there are none."""

    patterns: tuple[str, ...] | None
    problem: str = ""


@dataclass(frozen=True)
class Protection:
    """The protected-surface definition the PR is judged by (committed at ``source_sha``).

    ``entries`` are ``(pattern, class)`` pairs matched case-folded (over-match is the
    safe side); ``problem`` is set when no usable definition could be read, which
    escalates. A repository without its own definition is judged by the bundled
    template's entries (the arbiter escalates an undefined boundary at approval time).
    """

    entries: tuple[tuple[str, str], ...]
    provenance: str
    path: str | None = None
    digest: str | None = None
    problem: str = ""

    def hits(self, paths: Sequence[str]) -> list[str]:
        """``path (class: pattern)`` for every path a protected surface covers."""
        out = []
        for path in paths:
            for pattern, cls in self.entries:
                try:
                    matched = glob_match(pattern, path, casefold=True)
                except PathRejected:
                    matched = True  # never a silent pass
                if matched:
                    out.append(f"{path} ({cls}: {pattern})")
                    break
        return out


@dataclass(frozen=True)
class Assessment:
    """What :func:`assess` decided, what it asks for and what it wants recorded."""

    state: str
    reasons: tuple[Reason, ...]
    actions: tuple[dict[str, Any], ...]
    new_entries: tuple[dict[str, Any], ...]
    merge_ready_record: dict[str, Any] | None
    facts: Mapping[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> ExitCode:
        """0 MERGE_READY, 4 not yet ready, 3 HUMAN_ESCALATED, 1 EXEC_RETURN."""
        return exit_code_for_state(self.state)

    def result(self) -> Result:
        """The assessment as a :class:`Result` (verdict = the state name)."""
        facts = dict(self.facts)
        facts["state"] = self.state
        facts["requested_actions"] = [dict(a) for a in self.actions]
        facts["merge_ready_record"] = self.merge_ready_record
        return Result(self.state, self.reasons, facts)


def action_id(action_kind: str, payload: Mapping[str, Any]) -> str:
    """Idempotent id of an action: the digest of its payload plus its kind."""
    return digest({**payload, "action_kind": action_kind})


def _action(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"action_kind": kind, "action_id": action_id(kind, payload), **payload}


def _is_round(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def receipts_for(entries: Sequence[Mapping[str, Any]], pr_number: int) -> list[Mapping[str, Any]]:
    """Receipt entries of one pull request (receipts of other PRs never count)."""
    return [
        e
        for e in entries
        if e.get("kind") == "receipt"
        and isinstance(e.get("pr_number"), int)
        and not isinstance(e.get("pr_number"), bool)
        and e.get("pr_number") == pr_number
    ]


def completed_rounds(entries: Sequence[Mapping[str, Any]], pr_number: int) -> int:
    """Highest repair round receipted for the PR (0 when none)."""
    rounds = [
        e["round"]
        for e in receipts_for(entries, pr_number)
        if e.get("action_kind") in REPAIR_KINDS and _is_round(e.get("round"))
    ]
    return max(rounds, default=0)


def _names(items: Sequence[str]) -> str:
    """Items for a message: comma-separated, never a Python list repr."""
    return ", ".join(items) if items else "-"


def _reason(code: str, message: str, hint: str = "", evidence: Sequence[str] = ()) -> Reason:
    return Reason(code, message, hint, tuple(evidence))


def _scope_reasons(snapshot: PRSnapshot, scope: Scope) -> tuple[str, list[Reason]] | None:
    """Plan deviation: the first rule. None when the changes stay inside the plan's scope."""
    if scope.patterns is None:
        return "HUMAN_ESCALATED", [
            _reason(
                "DELIVERY_SCOPE_UNDERIVABLE",
                f"the allowed paths cannot be derived from the approved plan.md: {scope.problem}",
                "fix the plan's scope section and re-approve it (C-3')",
            )
        ]
    try:
        for pattern in scope.patterns:
            validate_pattern(pattern)
    except PathRejected as exc:
        return "HUMAN_ESCALATED", [
            _reason(
                "DELIVERY_SCOPE_UNDERIVABLE",
                f"the plan's allowed paths contain an invalid pattern: {exc.message}",
                "fix the plan's scope section and re-approve it (C-3')",
            )
        ]
    reasons: list[Reason] = []
    if snapshot.allowed_paths is not None and set(snapshot.allowed_paths) != set(scope.patterns):
        reasons.append(
            _reason(
                "DELIVERY_SCOPE_MISMATCH",
                "the snapshot's allowed_paths differ from the scope of the approved plan "
                f"(snapshot: {_names(sorted(snapshot.allowed_paths))}; "
                f"plan: {_names(sorted(scope.patterns))})",
                "build the snapshot from the approved plan, or drop allowed_paths from it",
            )
        )
    bad = [p for p in snapshot.changed_files if not is_canonical_path(p)]
    if bad:
        reasons.append(
            _reason(
                "DELIVERY_PATH_NOT_CANONICAL",
                f"changed paths that are not canonical repository-relative paths: {_names(bad)}",
                "the collector must report paths as git prints them (no ./, //, \\\\ or /abs)",
                bad,
            )
        )
    outside = [
        p for p in snapshot.changed_files if p not in bad and match_any(scope.patterns, p) is None
    ]
    if outside:
        reasons.append(
            _reason(
                "DELIVERY_PLAN_DEVIATION",
                f"changed files outside the approved plan's allowed paths: {_names(outside)}",
                "revert those changes, or return to exec and re-approve a plan that covers them",
                outside,
            )
        )
    if reasons:
        return "EXEC_RETURN", reasons
    return None


def _finding_action(snapshot: PRSnapshot, finding: Finding, round_no: int) -> dict[str, Any]:
    if finding.severity in ("critical", "major"):
        return _action(
            "repair_review",
            {
                "pr_number": snapshot.pr_number,
                "head_sha": snapshot.head_sha,
                "round": round_no,
                "finding_id": finding.id,
                "finding_type": finding.finding_type,
                "severity": finding.severity,
            },
        )
    return _action(
        "record_disposition",
        {
            "pr_number": snapshot.pr_number,
            "head_sha": snapshot.head_sha,
            "finding_id": finding.id,
            "finding_type": finding.finding_type,
            "severity": finding.severity,
        },
    )


def _decide(
    snapshot: PRSnapshot,
    entries: Sequence[Mapping[str, Any]],
    *,
    scope: Scope,
    ancestry: Ancestry,
    completed: int,
    protection: Protection,
) -> tuple[str, list[Reason], list[dict[str, Any]]]:
    """Apply the rules in priority order; return the state, reasons and requested actions."""
    deviation = _scope_reasons(snapshot, scope)
    if deviation is not None:
        return deviation[0], deviation[1], []

    # A plan scope such as docs/** can cover protected surfaces (another task's
    # approvals/, a nested CLAUDE.md): a change to one always needs a human.
    if protection.problem or not protection.entries:
        return (
            "HUMAN_ESCALATED",
            [
                _reason(
                    "DELIVERY_SURFACES_UNRESOLVED",
                    "the protected-surface definition at source_sha cannot be used: "
                    f"{protection.problem or 'it has no entries'}",
                    "commit a valid .plangate/protected-surfaces.toml",
                )
            ],
            [],
        )
    touched = protection.hits(snapshot.changed_files)
    if touched:
        return (
            "HUMAN_ESCALATED",
            [
                _reason(
                    "DELIVERY_TOUCHES_PROTECTED_SURFACE",
                    f"changed files touch protected surfaces: {_names(touched)}",
                    "a human approves every change to a protected surface",
                    touched,
                )
            ],
            [],
        )

    if snapshot.escalation_flags or not snapshot.changed_files:
        reasons = []
        if snapshot.escalation_flags:
            reasons.append(
                _reason(
                    "DELIVERY_ESCALATION_FLAGGED",
                    f"escalation flags raised: {_names(sorted(set(snapshot.escalation_flags)))}",
                    "a human must review the flagged condition",
                    sorted(set(snapshot.escalation_flags)),
                )
            )
        if not snapshot.changed_files:
            reasons.append(
                _reason(
                    "DELIVERY_CHANGED_FILES_EMPTY",
                    "the snapshot lists no changed files; an empty change set is never 'all clear'",
                    "report the PR's changed files (git diff --name-only base...head)",
                )
            )
        return "HUMAN_ESCALATED", reasons, []

    if ancestry.status != "descends":
        code = (
            "DELIVERY_ANCESTRY_DIVERGED"
            if ancestry.status == "diverged"
            else "DELIVERY_ANCESTRY_UNMEASURABLE"
        )
        return (
            "HUMAN_ESCALATED",
            [
                _reason(
                    code,
                    "the PR head does not provably descend from the approved source_sha: "
                    f"{ancestry.detail}",
                    "fetch both commits locally, or rebase the PR onto the approved commit",
                )
            ],
            [],
        )

    at_head = snapshot.checks_at_head()
    known = FAILED_CONCLUSIONS | PENDING_CONCLUSIONS | PASSING_CONCLUSIONS
    unknown = sorted(f"{c.name}={c.conclusion}" for c in at_head if c.conclusion not in known)
    if unknown:
        return (
            "HUMAN_ESCALATED",
            [
                _reason(
                    "DELIVERY_CHECK_CONCLUSION_UNKNOWN",
                    f"check conclusions outside the known vocabulary at head: {_names(unknown)}",
                    "an unknown conclusion is never treated as pending or passing",
                    unknown,
                )
            ],
            [],
        )

    failed = sorted(c.name for c in at_head if c.conclusion in FAILED_CONCLUSIONS)
    if failed and snapshot.ci_failure_taxonomy not in KNOWN_TAXONOMY:
        return (
            "HUMAN_ESCALATED",
            [
                _reason(
                    "DELIVERY_CI_TAXONOMY_UNVERIFIABLE",
                    f"checks failed ({_names(failed)}) with failure class "
                    f"{snapshot.ci_failure_taxonomy!r}, "
                    "which a repair round cannot address",
                    "classify the failure as code, flaky or environment, or hand it to a human",
                )
            ],
            [],
        )

    resolution = snapshot.conflict_resolution
    conflict_need = snapshot.mergeable != "MERGEABLE" or (
        resolution is not None and not resolution.complete
    )
    unresolved = [f for f in snapshot.findings if not f.resolved]
    blocking = [f for f in unresolved if f.severity in ("critical", "major")]
    past_types = {
        e.get("finding_type")
        for e in receipts_for(entries, snapshot.pr_number)
        if e.get("action_kind") == "repair_review" and isinstance(e.get("finding_type"), str)
    }
    recurrent = [f for f in unresolved if f.finding_type in past_types]
    next_round = completed + 1

    if (failed or conflict_need or blocking or recurrent) and next_round > ROUND_LIMIT:
        return (
            "HUMAN_ESCALATED",
            [
                _reason(
                    "DELIVERY_ROUND_LIMIT",
                    f"repair is still needed after {completed} rounds; round {next_round} exceeds "
                    f"the limit of {ROUND_LIMIT}",
                    "a human decides how to continue",
                )
            ],
            [],
        )

    if recurrent:
        actions: list[dict[str, Any]] = []
        for finding in recurrent:
            actions.append(
                _action(
                    "feedback_loop_referral",
                    {
                        "pr_number": snapshot.pr_number,
                        "head_sha": snapshot.head_sha,
                        "finding_type": finding.finding_type,
                    },
                )
            )
            actions.append(_finding_action(snapshot, finding, next_round))
        types = sorted({f.finding_type for f in recurrent})
        return (
            "REVIEW_REPAIR",
            [
                _reason(
                    "DELIVERY_FINDING_RECURRENCE",
                    f"finding types already repaired once recur: {_names(types)}",
                    "repair them and refer the pattern to the feedback loop",
                    types,
                )
            ],
            actions,
        )

    if failed:
        return (
            "CHECKS_FAILED",
            [
                _reason(
                    "DELIVERY_CHECKS_FAILED",
                    f"checks failed at head: {_names(failed)} "
                    f"(class {snapshot.ci_failure_taxonomy})",
                    f"repair round {next_round} of {ROUND_LIMIT}",
                    failed,
                )
            ],
            [
                _action(
                    "repair_ci",
                    {
                        "pr_number": snapshot.pr_number,
                        "head_sha": snapshot.head_sha,
                        "round": next_round,
                        "taxonomy": snapshot.ci_failure_taxonomy,
                        "failed_checks": failed,
                    },
                )
            ],
        )

    if conflict_need:
        detail = (
            f"mergeable is {snapshot.mergeable}"
            if snapshot.mergeable != "MERGEABLE"
            else "the conflict resolution does not name base, head and result commits"
        )
        return (
            "CONFLICT",
            [
                _reason(
                    "DELIVERY_CONFLICT",
                    f"the PR cannot merge cleanly: {detail}",
                    f"resolve the conflict (round {next_round} of {ROUND_LIMIT})",
                )
            ],
            [
                _action(
                    "resolve_conflict",
                    {
                        "pr_number": snapshot.pr_number,
                        "head_sha": snapshot.head_sha,
                        "round": next_round,
                    },
                )
            ],
        )

    if unresolved:
        ids = [f.id for f in unresolved]
        return (
            "REVIEW_REPAIR",
            [
                _reason(
                    "DELIVERY_FINDINGS_UNRESOLVED",
                    f"review findings without a resolving disposition: {_names(ids)}",
                    "adopt with a repair_commit or reject with an evidence_ref",
                    ids,
                )
            ],
            [_finding_action(snapshot, f, next_round) for f in unresolved],
        )

    pending = sorted(c.name for c in at_head if c.conclusion in PENDING_CONCLUSIONS)
    if pending or not at_head:
        if pending:
            reason = _reason(
                "DELIVERY_CHECKS_PENDING",
                f"checks still running at head: {_names(pending)}",
                "wait",
                pending,
            )
        else:
            reason = _reason(
                "DELIVERY_NO_CHECKS_AT_HEAD",
                "no check has run on the head commit (checks of older commits are stale)",
                "wait for CI on the head commit",
            )
        return "WAITING_FOR_CHECKS", [reason], []

    if not snapshot.review_ok:
        return (
            "WAITING_FOR_REVIEW",
            [
                _reason(
                    "DELIVERY_REVIEW_NOT_APPROVED_AT_HEAD",
                    f"review is {snapshot.review_state!r} at {snapshot.review_sha[:12] or '-'}, "
                    f"not 'approved' at head {snapshot.head_sha[:12]}",
                    "an approval of an older commit does not count",
                )
            ],
            [],
        )

    if not snapshot.dod_evaluated:
        return (
            "MERGE_READY_CANDIDATE",
            [
                _reason(
                    "DELIVERY_DOD_NOT_EVALUATED",
                    "everything is green but the Definition of Done has not been evaluated",
                    "re-evaluate the DoD; MERGE_READY is never taken as a shortcut",
                )
            ],
            [
                _action(
                    "dod_reevaluate",
                    {"pr_number": snapshot.pr_number, "head_sha": snapshot.head_sha},
                )
            ],
        )

    return "MERGE_READY", [], []


def _merge_ready_record(
    snapshot: PRSnapshot, record: BoundRecord, completed: int
) -> dict[str, Any]:
    return {
        "pr_number": snapshot.pr_number,
        "head_sha": snapshot.head_sha,
        "check_summary": {c.name: c.conclusion for c in snapshot.checks_at_head()},
        "review_disposition": {
            f.id: (f.disposition.to_json() if f.disposition is not None else None)
            for f in snapshot.findings
        },
        "round": completed,
        "plan_hash": record.plan_hash,
        "plan_package_hash": record.plan_package_hash,
        "source_sha": record.source_sha,
    }


def state_body(state: str, snapshot: PRSnapshot, reasons: Sequence[Reason]) -> dict[str, Any]:
    """The content of a ``state`` entry (without chain fields)."""
    return {
        "kind": "state",
        "state": state,
        "pr_number": snapshot.pr_number,
        "head_sha": snapshot.head_sha,
        "reasons": sorted(
            ({"code": r.code, "message": r.message} for r in reasons),
            key=lambda r: (r["code"], r["message"]),
        ),
    }


def _same_state(entry: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    return all(entry.get(key) == body[key] for key in ("state", "pr_number", "head_sha", "reasons"))


def assess(
    snapshot: PRSnapshot,
    entries: Sequence[Mapping[str, Any]],
    *,
    scope: Scope,
    ancestry: Ancestry,
    record: BoundRecord,
    protection: Protection,
) -> Assessment:
    """Decide the delivery state of one PR snapshot; pure.

    ``entries`` are the delivery record's entries (oldest first). The result
    lists the requested actions (those without a receipt), and the new
    entries to append: a ``state`` entry unless the last recorded state is the
    same observation, an ``intent`` per requested action not yet intended, and
    a ``merge_ready`` entry when terminal. Assessing the same snapshot against
    a record that already holds these entries yields no new entries.
    """
    completed = completed_rounds(entries, snapshot.pr_number)
    state, reasons, actions = _decide(
        snapshot,
        entries,
        scope=scope,
        ancestry=ancestry,
        completed=completed,
        protection=protection,
    )

    receipted = {e.get("action_id") for e in entries if e.get("kind") == "receipt"}
    intended = {e.get("action_id") for e in entries if e.get("kind") == "intent"}
    requested = [a for a in actions if a["action_id"] not in receipted]

    new_entries: list[dict[str, Any]] = []
    body = state_body(state, snapshot, reasons)
    last_state = next((e for e in reversed(entries) if e.get("kind") == "state"), None)
    if last_state is None or not _same_state(last_state, body):
        new_entries.append(body)
    for action in requested:
        if action["action_id"] in intended:
            continue  # intent recorded, no receipt yet: re-requested, not re-recorded
        payload = {k: v for k, v in action.items() if k not in ("action_id", "action_kind")}
        new_entries.append(
            {
                "kind": "intent",
                "action_id": action["action_id"],
                "action_kind": action["action_kind"],
                "payload": payload,
            }
        )
    merge_record = None
    if state == "MERGE_READY":
        merge_record = _merge_ready_record(snapshot, record, completed)
        already = any(
            e.get("kind") == "merge_ready" and e.get("record") == merge_record for e in entries
        )
        if not already:
            new_entries.append({"kind": "merge_ready", "record": merge_record})

    facts: dict[str, Any] = {
        "task_id": record.task_id,
        "pr_number": snapshot.pr_number,
        "head_sha": snapshot.head_sha,
        "source_sha": record.source_sha,
        "plan_hash": record.plan_hash,
        "ancestry": {"status": ancestry.status, "detail": ancestry.detail},
        "protected_surfaces": {
            "provenance": protection.provenance,
            "path": protection.path,
            "digest": protection.digest,
            "pattern_count": len(protection.entries),
            "hits": protection.hits(snapshot.changed_files)
            if all(is_canonical_path(p) for p in snapshot.changed_files)
            else None,
        },
        "caller_ancestry_claim_ignored": snapshot.claimed_ancestry,
        "allowed_paths": list(scope.patterns) if scope.patterns is not None else None,
        "completed_rounds": completed,
        "round_limit": ROUND_LIMIT,
        "checks_at_head": len(snapshot.checks_at_head()),
    }
    return Assessment(
        state, tuple(reasons), tuple(requested), tuple(new_entries), merge_record, facts
    )
