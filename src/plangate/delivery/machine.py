"""The delivery state machine: a pure function from facts to a merge-readiness state.

:func:`assess` never opens a file, runs git or reads the clock. The service
layer (:mod:`plangate.delivery.service`) gives it the validated PR snapshot,
the delivery record read once, the scope derived from the approved
``plan.md``, the ancestry fact *measured* with git, the protected surfaces
committed at ``source_sha`` and the bound fields of the verified c3-prime record.

The decision is the ordered table :data:`RULES`: each rule is a small named
function that decides or passes, and the first that decides wins. The scope uses
the one glob matcher and the LoopSpec's allowed paths, and ancestry is a measured
fact that fails closed when it cannot be measured. :data:`PRIORITY_ORDER` (printed
by ``plangate delivery contract``) is generated from the table. There is no
``MERGED`` state and nothing here merges: ``MERGE_READY`` is the terminal state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from plangate.canonical import digest
from plangate.delivery.pr_snapshot import (
    FAILED_CONCLUSIONS,
    PASSING_CONCLUSIONS,
    PENDING_CONCLUSIONS,
    SNAPSHOT_RULE,
    Check,
    Finding,
    PRSnapshot,
)
from plangate.paths import PathRejected, is_canonical_path, validate_pattern
from plangate.plan.scope import TaskScope, outside_scopes
from plangate.records import NamedTuple
from plangate.surfaces import PROVENANCE_BUNDLED_TEMPLATE, ResolvedSurfaces
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
    denied: tuple[str, ...] = ()


@dataclass(frozen=True)
class Assessment:
    """What :func:`assess` decided, what it asks for and what it wants recorded."""

    state: str
    reasons: tuple[Reason, ...]
    actions: tuple[dict[str, Any], ...]
    new_entries: tuple[dict[str, Any], ...]
    merge_ready_record: dict[str, Any] | None
    facts: Mapping[str, Any] = field(default_factory=dict)
    rule: str = ""
    """The row of :data:`RULES` that decided."""

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


# -- the rules ----------------------------------------------------------------------
#
# Each rule reads the case and either decides (an outcome) or passes (None). The
# table RULES lists them in priority order; the first rule that decides wins, and
# PRIORITY_ORDER is generated from the table.


class Outcome(NamedTuple):
    """What a deciding rule returns: the state, its reasons and the requested actions."""

    state: str
    reasons: tuple[Reason, ...]
    actions: tuple[dict[str, Any], ...] = ()


def _escalate(reason: Reason) -> Outcome:
    return Outcome("HUMAN_ESCALATED", (reason,))


@dataclass(frozen=True)
class Case:
    """Everything the rules read: the machine's inputs and what is derived from them (pure)."""

    snapshot: PRSnapshot
    entries: Sequence[Mapping[str, Any]]
    scope: Scope
    ancestry: Ancestry
    surfaces: ResolvedSurfaces
    completed: int
    covered: frozenset[str] = frozenset()
    """What ``ci check`` counts as no change of the task's: the files its verified approval
    covers and PlanGate's own (:func:`plangate.delivery.ci.covered_changes`)."""

    @cached_property
    def judged_files(self) -> tuple[str, ...]:
        """The changed files a protected surface judges: all but :attr:`covered`."""
        return tuple(p for p in self.snapshot.changed_files if p not in self.covered)

    @cached_property
    def at_head(self) -> tuple[Check, ...]:
        """Checks run on the head commit (older checks are stale)."""
        return self.snapshot.checks_at_head()

    @cached_property
    def failed(self) -> list[str]:
        """Names of the checks that failed at the head, sorted."""
        return sorted(c.name for c in self.at_head if c.conclusion in FAILED_CONCLUSIONS)

    @cached_property
    def conflict_need(self) -> bool:
        """Not cleanly mergeable, or a conflict resolution that does not name three commits."""
        resolution = self.snapshot.conflict_resolution
        return self.snapshot.mergeable != "MERGEABLE" or (
            resolution is not None and not resolution.complete
        )

    @cached_property
    def unresolved(self) -> list[Finding]:
        """Findings without a resolving disposition."""
        return [f for f in self.snapshot.findings if not f.resolved]

    @cached_property
    def recurrent(self) -> list[Finding]:
        """Unresolved findings whose type a receipted review repair of this PR already had."""
        past_types = {
            e.get("finding_type")
            for e in receipts_for(self.entries, self.snapshot.pr_number)
            if e.get("action_kind") == "repair_review" and isinstance(e.get("finding_type"), str)
        }
        return [f for f in self.unresolved if f.finding_type in past_types]

    @property
    def next_round(self) -> int:
        """The repair round a repair requested now would be."""
        return self.completed + 1

    def needs_repair(self) -> bool:
        """A failed check, a conflict, a blocking finding or a recurring finding."""
        blocking = [f for f in self.unresolved if f.severity in ("critical", "major")]
        return bool(self.failed or self.conflict_need or blocking or self.recurrent)

    def payload(self, **extra: Any) -> dict[str, Any]:
        """An action payload: the PR and its head, plus ``extra``."""
        return {"pr_number": self.snapshot.pr_number, "head_sha": self.snapshot.head_sha, **extra}


def _finding_action(case: Case, finding: Finding) -> dict[str, Any]:
    """``repair_review`` for a critical or major finding, else ``record_disposition``."""
    facts = {"finding_id": finding.id, "finding_type": finding.finding_type,
             "severity": finding.severity}
    if finding.severity in ("critical", "major"):
        return _action("repair_review", case.payload(round=case.next_round, **facts))
    return _action("record_disposition", case.payload(**facts))


def _plan_deviation(case: Case) -> Outcome | None:
    """The changes stay inside the approved plan's scope (or the scope cannot be derived)."""
    snapshot = case.snapshot
    patterns = _allowed_patterns(case.scope)
    if isinstance(patterns, Reason):
        return _escalate(patterns)
    reasons: list[Reason] = []
    if snapshot.allowed_paths is not None and set(snapshot.allowed_paths) != set(patterns):
        reasons.append(_reason(
            "DELIVERY_SCOPE_MISMATCH",
            "the snapshot's allowed_paths differ from the scope of the approved plan "
            f"(snapshot: {_names(sorted(snapshot.allowed_paths))}; "
            f"plan: {_names(sorted(patterns))})",
            "build the snapshot from the approved plan, or drop allowed_paths from it",
        ))
    bad = [p for p in snapshot.changed_files if not is_canonical_path(p)]
    if bad:
        reasons.append(_reason(
            "DELIVERY_PATH_NOT_CANONICAL",
            f"changed paths that are not canonical repository-relative paths: {_names(bad)}",
            "the collector must report paths as git prints them (no ./, //, \\\\ or /abs)",
            bad,
        ))
    # The one in-scope rule of ci check, exec and the hooks: the task's own directory
    # (its Plan Package, approvals) is the task, never a deviation from it.
    scope = TaskScope(patterns, None, case.scope.denied)
    canonical = [p for p in snapshot.changed_files if p not in bad]
    outside = outside_scopes(canonical, {snapshot.task_id: scope},
                             exempt=case.covered.__contains__)
    if outside:
        reasons.append(_reason(
            "DELIVERY_PLAN_DEVIATION",
            "changed files outside the approved plan's allowed paths or denied by it: "
            f"{_names(outside)}",
            "revert those changes, or return to exec and re-approve a plan that covers them",
            outside,
        ))
    return Outcome("EXEC_RETURN", tuple(reasons)) if reasons else None


def _allowed_patterns(scope: Scope) -> tuple[str, ...] | Reason:
    """The scope's patterns, or why the plan has no usable scope."""
    if scope.patterns is None:
        return _reason(
            "DELIVERY_SCOPE_UNDERIVABLE",
            f"the allowed paths cannot be derived from the approved plan.md: {scope.problem}",
            "fix the plan's scope section and re-approve it (C-3')",
        )
    try:
        for pattern in scope.patterns:
            validate_pattern(pattern)
    except PathRejected as exc:
        return _reason(
            "DELIVERY_SCOPE_UNDERIVABLE",
            f"the plan's allowed paths contain an invalid pattern: {exc.message}",
            "fix the plan's scope section and re-approve it (C-3')",
        )
    return scope.patterns


def surfaces_problem(surfaces: ResolvedSurfaces) -> str:
    """Why ``surfaces`` cannot judge a pull request, or ``""`` when they can.

    A repository without its own definition is judged by the bundled template's
    entries (the arbiter escalates an undefined boundary at approval time); any
    other problem, and a definition without entries, cannot judge anything.
    """
    problem = surfaces.problem
    if problem is not None and not (
        surfaces.provenance == PROVENANCE_BUNDLED_TEMPLATE and surfaces.entries
    ):
        return f"{problem.code}: {problem.message}"
    return "" if surfaces.entries else "it has no entries"


def protected_hits(surfaces: ResolvedSurfaces, paths: Sequence[str]) -> list[str]:
    """``path (class: pattern)`` for every path a protected surface covers.

    A path that cannot be matched counts as protected
    (:meth:`plangate.surfaces.ResolvedSurfaces.protecting`).
    """
    out = []
    for path in paths:
        entry = surfaces.protecting(path)
        if entry is not None:
            out.append(f"{path} ({entry.cls}: {entry.pattern})")
    return out


def _protected_surface(case: Case) -> Outcome | None:
    """A change to a protected surface always needs a human.

    A plan scope such as ``docs/**`` can cover protected surfaces (another task's
    ``approvals/``, a nested ``CLAUDE.md``), so the scope alone never clears a path.
    """
    problem = surfaces_problem(case.surfaces)
    if problem:
        return _escalate(_reason(
            "DELIVERY_SURFACES_UNRESOLVED",
            f"the protected-surface definition at source_sha cannot be used: {problem}",
            "commit a valid .plangate/protected-surfaces.toml",
        ))
    touched = protected_hits(case.surfaces, case.judged_files)
    if not touched:
        return None
    return _escalate(_reason(
        "DELIVERY_TOUCHES_PROTECTED_SURFACE",
        f"changed files touch protected surfaces: {_names(touched)}",
        "a human approves every change to a protected surface",
        touched,
    ))


def _escalation_flags(case: Case) -> Outcome | None:
    """Raised escalation flags, and an empty change set, go to a human."""
    snapshot = case.snapshot
    reasons = []
    if snapshot.escalation_flags:
        flags = sorted(set(snapshot.escalation_flags))
        reasons.append(_reason(
            "DELIVERY_ESCALATION_FLAGGED",
            f"escalation flags raised: {_names(flags)}",
            "a human must review the flagged condition",
            flags,
        ))
    if not snapshot.changed_files:
        reasons.append(_reason(
            "DELIVERY_CHANGED_FILES_EMPTY",
            "the snapshot lists no changed files; an empty change set is never 'all clear'",
            "report the PR's changed files (git diff --name-only base...head)",
        ))
    return Outcome("HUMAN_ESCALATED", tuple(reasons)) if reasons else None


def _ancestry_fail(case: Case) -> Outcome | None:
    """The head must provably descend from the approved ``source_sha`` (measured by git)."""
    ancestry = case.ancestry
    if ancestry.status == "descends":
        return None
    code = (
        "DELIVERY_ANCESTRY_DIVERGED"
        if ancestry.status == "diverged"
        else "DELIVERY_ANCESTRY_UNMEASURABLE"
    )
    return _escalate(_reason(
        code,
        f"the PR head does not provably descend from the approved source_sha: {ancestry.detail}",
        "fetch both commits locally, or rebase the PR onto the approved commit",
    ))


def _unknown_check_conclusion(case: Case) -> Outcome | None:
    """A conclusion outside the vocabulary is never pending or passing."""
    known = FAILED_CONCLUSIONS | PENDING_CONCLUSIONS | PASSING_CONCLUSIONS
    unknown = sorted(f"{c.name}={c.conclusion}" for c in case.at_head if c.conclusion not in known)
    if not unknown:
        return None
    return _escalate(_reason(
        "DELIVERY_CHECK_CONCLUSION_UNKNOWN",
        f"check conclusions outside the known vocabulary at head: {_names(unknown)}",
        "an unknown conclusion is never treated as pending or passing",
        unknown,
    ))


def _taxonomy_unverifiable(case: Case) -> Outcome | None:
    """A failure whose class a repair round cannot address goes to a human."""
    taxonomy = case.snapshot.ci_failure_taxonomy
    if not case.failed or taxonomy in KNOWN_TAXONOMY:
        return None
    return _escalate(_reason(
        "DELIVERY_CI_TAXONOMY_UNVERIFIABLE",
        f"checks failed ({_names(case.failed)}) with failure class {taxonomy!r}, "
        "which a repair round cannot address",
        "classify the failure as code, flaky or environment, or hand it to a human",
    ))


def _round_limit(case: Case) -> Outcome | None:
    """A repair that would exceed :data:`ROUND_LIMIT` rounds is never requested."""
    if not case.needs_repair() or case.next_round <= ROUND_LIMIT:
        return None
    return _escalate(_reason(
        "DELIVERY_ROUND_LIMIT",
        f"repair is still needed after {case.completed} rounds; round {case.next_round} "
        f"exceeds the limit of {ROUND_LIMIT}",
        "a human decides how to continue",
    ))


def _same_type_recurrence(case: Case) -> Outcome | None:
    """A finding type repaired once that recurs: repair it and refer it to the feedback loop."""
    if not case.recurrent:
        return None
    actions: list[dict[str, Any]] = []
    for finding in case.recurrent:
        actions.append(_action(
            "feedback_loop_referral", case.payload(finding_type=finding.finding_type)
        ))
        actions.append(_finding_action(case, finding))
    types = sorted({f.finding_type for f in case.recurrent})
    return Outcome(
        "REVIEW_REPAIR",
        (_reason(
            "DELIVERY_FINDING_RECURRENCE",
            f"finding types already repaired once recur: {_names(types)}",
            "repair them and refer the pattern to the feedback loop",
            types,
        ),),
        tuple(actions),
    )


def _ci_failed(case: Case) -> Outcome | None:
    """A check failed at the head: request a CI repair round."""
    if not case.failed:
        return None
    taxonomy = case.snapshot.ci_failure_taxonomy
    return Outcome(
        "CHECKS_FAILED",
        (_reason(
            "DELIVERY_CHECKS_FAILED",
            f"checks failed at head: {_names(case.failed)} (class {taxonomy})",
            f"repair round {case.next_round} of {ROUND_LIMIT}",
            case.failed,
        ),),
        (_action("repair_ci", case.payload(
            round=case.next_round, taxonomy=taxonomy, failed_checks=case.failed
        )),),
    )


def _conflict(case: Case) -> Outcome | None:
    """Not cleanly mergeable: request a conflict resolution."""
    if not case.conflict_need:
        return None
    snapshot = case.snapshot
    detail = (
        f"mergeable is {snapshot.mergeable}"
        if snapshot.mergeable != "MERGEABLE"
        else "the conflict resolution does not name base, head and result commits"
    )
    return Outcome(
        "CONFLICT",
        (_reason(
            "DELIVERY_CONFLICT",
            f"the PR cannot merge cleanly: {detail}",
            f"resolve the conflict (round {case.next_round} of {ROUND_LIMIT})",
        ),),
        (_action("resolve_conflict", case.payload(round=case.next_round)),),
    )


def _review_findings(case: Case) -> Outcome | None:
    """Unresolved findings: repair the blocking ones, record a disposition for the others."""
    if not case.unresolved:
        return None
    ids = [f.id for f in case.unresolved]
    return Outcome(
        "REVIEW_REPAIR",
        (_reason(
            "DELIVERY_FINDINGS_UNRESOLVED",
            f"review findings without a resolving disposition: {_names(ids)}",
            "adopt with a repair_commit or reject with an evidence_ref",
            ids,
        ),),
        tuple(_finding_action(case, f) for f in case.unresolved),
    )


def _waiting_checks(case: Case) -> Outcome | None:
    """Checks still running at the head, or none ran there yet."""
    pending = sorted(c.name for c in case.at_head if c.conclusion in PENDING_CONCLUSIONS)
    if pending:
        reason = _reason(
            "DELIVERY_CHECKS_PENDING",
            f"checks still running at head: {_names(pending)}",
            "wait",
            pending,
        )
    elif not case.at_head:
        reason = _reason(
            "DELIVERY_NO_CHECKS_AT_HEAD",
            "no check has run on the head commit (checks of older commits are stale)",
            "wait for CI on the head commit",
        )
    else:
        return None
    return Outcome("WAITING_FOR_CHECKS", (reason,))


def _waiting_review(case: Case) -> Outcome | None:
    """Only an approval of the head commit counts."""
    snapshot = case.snapshot
    if snapshot.review_ok:
        return None
    return Outcome("WAITING_FOR_REVIEW", (_reason(
        "DELIVERY_REVIEW_NOT_APPROVED_AT_HEAD",
        f"review is {snapshot.review_state!r} at {snapshot.review_sha[:12] or '-'}, "
        f"not 'approved' at head {snapshot.head_sha[:12]}",
        "an approval of an older commit does not count",
    ),))


def _merge_ready_candidate(case: Case) -> Outcome | None:
    """Everything is green, but the Definition of Done must be evaluated first."""
    if case.snapshot.dod_evaluated:
        return None
    return Outcome(
        "MERGE_READY_CANDIDATE",
        (_reason(
            "DELIVERY_DOD_NOT_EVALUATED",
            "everything is green but the Definition of Done has not been evaluated",
            "re-evaluate the DoD; MERGE_READY is never taken as a shortcut",
        ),),
        (_action("dod_reevaluate", case.payload()),),
    )


def _merge_ready(_case: Case) -> Outcome | None:
    """No earlier rule decided: the pull request is ready to merge."""
    return Outcome("MERGE_READY", ())


class Rule(NamedTuple):
    """One row of the decision table: its name (as printed in the contract) and its check."""

    name: str
    check: Callable[[Case], Outcome | None]


RULES: tuple[Rule, ...] = (
    Rule("plan_deviation", _plan_deviation),
    Rule("protected_surface", _protected_surface),
    Rule("escalation_flags", _escalation_flags),
    Rule("ancestry_fail", _ancestry_fail),
    Rule("unknown_check_conclusion", _unknown_check_conclusion),
    Rule("taxonomy_unverifiable", _taxonomy_unverifiable),
    Rule("round_limit", _round_limit),
    Rule("same_type_recurrence", _same_type_recurrence),
    Rule("ci_failed", _ci_failed),
    Rule("conflict", _conflict),
    Rule("review_findings", _review_findings),
    Rule("waiting_checks", _waiting_checks),
    Rule("waiting_review", _waiting_review),
    Rule("merge_ready_candidate", _merge_ready_candidate),
    Rule("merge_ready", _merge_ready),
)
"""The decision table in priority order; the first rule that decides wins. The last
rule always decides."""

PRIORITY_ORDER: tuple[str, ...] = (SNAPSHOT_RULE, *(rule.name for rule in RULES))
"""Every rule in the order it is applied: the snapshot's contract (applied while it is
parsed, before the machine runs), then :data:`RULES`."""


def decide(case: Case) -> tuple[str, Outcome]:
    """The first rule of :data:`RULES` that decides, and its outcome."""
    for rule in RULES:
        outcome = rule.check(case)
        if outcome is not None:
            return rule.name, outcome
    raise AssertionError("the last rule always decides")  # pragma: no cover


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


def _new_entries(
    entries: Sequence[Mapping[str, Any]],
    body: dict[str, Any],
    requested: Sequence[dict[str, Any]],
    merge_record: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    """What to append: the state unless unchanged, new intents, a new merge_ready record."""
    new: list[dict[str, Any]] = []
    last_state = next((e for e in reversed(entries) if e.get("kind") == "state"), None)
    if last_state is None or not _same_state(last_state, body):
        new.append(body)
    intended = {e.get("action_id") for e in entries if e.get("kind") == "intent"}
    for action in requested:
        if action["action_id"] in intended:
            continue  # intent recorded, no receipt yet: re-requested, not re-recorded
        payload = {k: v for k, v in action.items() if k not in ("action_id", "action_kind")}
        new.append(
            {
                "kind": "intent",
                "action_id": action["action_id"],
                "action_kind": action["action_kind"],
                "payload": payload,
            }
        )
    if merge_record is not None and not any(
        e.get("kind") == "merge_ready" and e.get("record") == merge_record for e in entries
    ):
        new.append({"kind": "merge_ready", "record": merge_record})
    return new


def _facts(case: Case, record: BoundRecord, rule: str) -> dict[str, Any]:
    snapshot, surfaces = case.snapshot, case.surfaces
    return {
        "task_id": record.task_id,
        "pr_number": snapshot.pr_number,
        "head_sha": snapshot.head_sha,
        "source_sha": record.source_sha,
        "plan_hash": record.plan_hash,
        "decided_by": rule,
        "ancestry": {"status": case.ancestry.status, "detail": case.ancestry.detail},
        "protected_surfaces": {
            "provenance": surfaces.provenance,
            "path": surfaces.path,
            "digest": surfaces.digest,
            "pattern_count": surfaces.pattern_count,
            "hits": protected_hits(surfaces, case.judged_files)
            if all(is_canonical_path(p) for p in snapshot.changed_files)
            else None,
        },
        "caller_ancestry_claim_ignored": snapshot.claimed_ancestry,
        "allowed_paths": list(case.scope.patterns) if case.scope.patterns is not None else None,
        "completed_rounds": case.completed,
        "round_limit": ROUND_LIMIT,
        "checks_at_head": len(case.at_head),
    }


def assess(
    snapshot: PRSnapshot,
    entries: Sequence[Mapping[str, Any]],
    *,
    scope: Scope,
    ancestry: Ancestry,
    record: BoundRecord,
    surfaces: ResolvedSurfaces,
    covered: frozenset[str] = frozenset(),
) -> Assessment:
    """Decide the delivery state of one PR snapshot; pure.

    ``entries`` are the delivery record's entries (oldest first). The result
    lists the requested actions (those without a receipt), and the new
    entries to append: a ``state`` entry unless the last recorded state is the
    same observation, an ``intent`` per requested action not yet intended, and
    a ``merge_ready`` entry when terminal. Assessing the same snapshot against
    a record that already holds these entries yields no new entries. ``covered``
    (:func:`plangate.delivery.ci.covered_changes`) are the files its verification
    covers and PlanGate's own: no protected-surface change and no deviation, as in
    ``ci check``.
    """
    case = Case(
        snapshot, entries, scope, ancestry, surfaces,
        completed_rounds(entries, snapshot.pr_number), covered,
    )
    rule, outcome = decide(case)
    receipted = {e.get("action_id") for e in entries if e.get("kind") == "receipt"}
    requested = [a for a in outcome.actions if a["action_id"] not in receipted]
    merge_record = None
    if outcome.state == "MERGE_READY":
        merge_record = _merge_ready_record(snapshot, record, case.completed)
    body = state_body(outcome.state, snapshot, outcome.reasons)
    return Assessment(
        outcome.state,
        outcome.reasons,
        tuple(requested),
        tuple(_new_entries(entries, body, requested, merge_record)),
        merge_record,
        _facts(case, record, rule),
        rule,
    )
