"""The Promotion Decision (pure): PASS / FAIL / INCONCLUSIVE, as an ordered table of rules.

:func:`decide` takes everything the service gathered (the registered plan and
where the ledger put it, the recomputed digests and manifest refs, the policy
gate's verdict, every trial outcome with the baseline grader's judgement, the
computed independence level, the decisions already recorded and the runs that
started without one) and returns a :class:`~plangate.verdict.Result`. It never
opens a file, runs git or reads the clock.

:data:`RULES` lists the rules in order (:data:`DECISION_ORDER`, generated from
the table, is what docs/evaluation-run.md documents). A rule either *stops*
(the first stopping rule decides: a recorded result, a run that never
finished, a plan registered after its candidate, a missing plan, an identity
that cannot be obtained, a gate refusal) or adds findings of one kind. After
all rules ran: any *tampering* finding is FAIL with ``policy_verdict:
HUMAN_REQUIRED``; otherwise any *missing evidence* is INCONCLUSIVE; otherwise
any *failed condition* is FAIL; otherwise PASS. Every rule is recorded in the
``rules`` fact. :func:`decide_before_trials` applies only the stopping rules
that need no trial, so the service starts no trial for an evaluation that is
already decided.

Judgements ("stopped" / "passed") always come from the baseline's grader.
When trials disagree, the reading that favours the baseline is taken: the
baseline is credited with a detection seen in any trial, the candidate only
with one seen in every trial.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from plangate.canonical import is_digest
from plangate.evaluation.independence import check_independence
from plangate.evaluation.run.mutants import (
    DetectionReport,
    Judgements,
    SideJudgements,
    group_judgements,
    measure_detection,
)
from plangate.evaluation.run.protocol import ACTIVATION_LEVELS, TrialOutcome, activation_rank
from plangate.evaluation.words import PromotionDecision
from plangate.verdict import Reason, Result

JUDGE_TYPES = frozenset({"verifier", "gate"})
"""Candidates touching these need ``influenced_decision`` activation and known mutants."""

GENERAL_MIN_ACTIVATION = "fired"
JUDGE_MIN_ACTIVATION = "influenced_decision"

TAMPER_CODES = frozenset(
    {"SEALED_FIXTURE_MUTATION", "EVAL_HARNESS_FILE_MUTATION", "EVAL_HARNESS_FILE_MISSING"}
)

IDENTITY_CODE = "MANIFEST_IDENTITY_UNOBTAINABLE"

# Every critical regression the evaluator knows, whether or not the plan lists
# it: a plan can add emphasis, never switch a critical regression off.
CRITICAL_BY_CODE: Mapping[str, str] = {
    "KNOWN_BAD_NOT_STOPPED": "known_bad_not_stopped",
    "NEGATIVE_CONTROL_REGRESSION": "negative_control_blocked",
    "FALSE_POSITIVE_REGRESSION": "negative_control_blocked",
    "BASELINE_DETECTION_POWER_REGRESSION": "detection_below_baseline",
    "FALSE_NEGATIVE_REGRESSION": "detection_below_baseline",
    "TEST_STRATEGY_MUTANT_NOT_DETECTED": "detection_below_baseline",
    "SEALED_FIXTURE_MUTATION": "sealed_fixture_changed",
    "CANDIDATE_UPDATES_SEALED_FIXTURE": "sealed_fixture_changed",
    "EVAL_HARNESS_FILE_MUTATION": "sealed_fixture_changed",
    "EVAL_HARNESS_FILE_MISSING": "sealed_fixture_changed",
    "BASELINE_WORKTREE_MODIFIED": "sealed_fixture_changed",
    "REGRESSION_FIXTURE_FAILED": "regression_fixture_failed",
}


@dataclass(frozen=True)
class PriorDecision:
    """A decision the ledger already holds for this candidate's commit or tree."""

    plan_digest: str
    decision: str


@dataclass(frozen=True)
class EvaluationInput:
    """Everything :func:`decide` decides from (already read, already recomputed)."""

    candidate_id: str
    candidate_plan_digest: str
    plan: Mapping[str, Any] | None
    plan_digest: str | None
    baseline_manifest_ref: str | None
    candidate_manifest_ref: str | None
    target_components: tuple[str, ...]
    component_types: Mapping[str, str]
    changed_paths: tuple[str, ...]
    policy_verdict: str | None
    trials: Sequence[TrialOutcome]
    independence_observed: str
    independence_required: str
    prior_verdicts: Sequence[str] = ()
    """Decisions recorded under this plan for this candidate (id, commit or tree)."""
    changed_components: tuple[str, ...] = ()
    test_strategy: bool = False
    setup_problems: Sequence[Reason] = ()
    tamper_problems: Sequence[Reason] = ()
    gate_reasons: Sequence[Reason] = field(default_factory=tuple)
    candidate_components: tuple[str, ...] | None = None
    """Component ids of the candidate manifest (None: unknown, every changed one is observed)."""
    plan_seq: int | None = None
    """Ledger sequence of the plan's registration."""
    candidate_first_seq: int | None = None
    """Ledger sequence of the first entry naming the candidate's commit or tree."""
    other_plan_verdicts: Sequence[PriorDecision] = ()
    """Decisions recorded for the candidate's commit or tree under other plans."""
    unfinished_runs: Sequence[int] = ()
    """Ledger sequences of runs of this evaluation that started trials and never decided."""
    baseline_verdicts: Sequence[PriorDecision] = ()
    """Decisions recorded under other plans for the plan's baseline commit or tree as a
    candidate."""
    preflight_problems: Sequence[Reason] = ()
    """What the service found missing before any trial (sandbox, runner, grader)."""


def _decision(verdict: PromotionDecision, reasons: list[Reason], facts: dict[str, Any]) -> Result:
    facts["production_promotion_executed"] = False  # a decision never promotes anything
    facts.setdefault("policy_verdict", None)
    return Result(verdict.value, tuple(reasons), facts)


def _fixtures_by_role(plan: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for fixture in plan.get("fixtures", []):
        out.setdefault(str(fixture.get("role")), []).append(fixture)
    return out


def is_judge_candidate(targets: Sequence[str], types: Mapping[str, str]) -> bool:
    """True when any target component is a verifier or gate (or of unknown type)."""
    return any(types.get(t, "unknown") in JUDGE_TYPES or t not in types for t in targets)


def required_activation(plan_level: str, judge_candidate: bool) -> str:
    """The stricter of the plan's level and the floor for this kind of candidate."""
    floor = JUDGE_MIN_ACTIVATION if judge_candidate else GENERAL_MIN_ACTIVATION
    if activation_rank(plan_level) >= activation_rank(floor):
        return plan_level
    return floor


def _rate(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator


def _compare(value: float, op: str, bound: float) -> bool:
    if op == ">=":
        return value >= bound
    if op == "<=":
        return value <= bound
    if op == ">":
        return value > bound
    if op == "<":
        return value < bound
    if op == "==":
        return math.isclose(value, bound, rel_tol=0.0, abs_tol=1e-12)
    return False  # an unknown operator never holds


# -- findings ------------------------------------------------------------------------

STOP_INCONCLUSIVE = "stop:INCONCLUSIVE"
STOP_FAIL = "stop:FAIL"
TAMPER = "tamper"
MISSING = "missing"
FAILED = "failed"


@dataclass(frozen=True)
class Finding:
    """What a rule found: its kind (a stop, tampering, missing evidence, a failed
    condition) and the reasons."""

    kind: str
    reasons: tuple[Reason, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)


def _one(kind: str, code: str, message: str, hint: str = "") -> Finding:
    return Finding(kind, (Reason(code, message, hint),))


def _many(kind: str, reasons: Sequence[Reason]) -> Finding | None:
    return Finding(kind, tuple(reasons)) if reasons else None


class DecisionCase:
    """The input plus every value several rules read, computed once (pure)."""

    def __init__(self, inp: EvaluationInput) -> None:
        self.inp = inp

    @property
    def plan(self) -> Mapping[str, Any]:
        assert self.inp.plan is not None  # noqa: S101 -- the plan_available rule stops before
        return self.inp.plan

    @cached_property
    def roles(self) -> dict[str, list[Mapping[str, Any]]]:
        return _fixtures_by_role(self.plan)

    @cached_property
    def trials_per_fixture(self) -> int:
        return int(self.plan.get("trials", 0) or 0)

    @cached_property
    def slot_counts(self) -> dict[tuple[str, str, int], int]:
        seen: dict[tuple[str, str, int], int] = {}
        for outcome in self.inp.trials:
            key = (outcome.side, outcome.fixture_id, outcome.trial)
            seen[key] = seen.get(key, 0) + 1
        return seen

    @cached_property
    def counted_trials(self) -> list[TrialOutcome]:
        """Only the trials the plan registered count, each once: an outcome for a trial
        number, side or fixture the plan never asked for is ignored, and a trial reported
        more than once is ambiguous evidence and counts for none of its copies."""
        fixture_ids = {str(f.get("id")) for f in self.plan.get("fixtures", [])}
        return [
            o
            for o in self.inp.trials
            if self.slot_counts[(o.side, o.fixture_id, o.trial)] == 1
            and o.side in ("baseline", "candidate")
            and o.fixture_id in fixture_ids
            and 1 <= o.trial <= self.trials_per_fixture
        ]

    @cached_property
    def sides(self) -> Judgements:
        return group_judgements(self.counted_trials)

    def slot(self, side: str, fixture_id: object) -> SideJudgements:
        return self.sides.get((side, str(fixture_id)), SideJudgements())

    @cached_property
    def judge(self) -> bool:
        inp = self.inp
        return is_judge_candidate(
            (*inp.target_components, *inp.changed_components), inp.component_types
        )

    @cached_property
    def required_activation(self) -> str:
        return required_activation(str(self.plan.get("required_activation", "")), self.judge)

    @cached_property
    def activation(self) -> dict[str, str]:
        """Observed activation per target (and observed changed) component."""
        inp = self.inp
        known_bad = {str(f.get("id")) for f in self.roles.get("known_bad", [])}
        observed_trials = [
            o
            for o in self.counted_trials
            if o.side == "candidate" and o.fixture_id in known_bad and o.completed
        ]
        # The declared targets are a claim; the components the observed diff changes are
        # an observation. Both must show activation (a component the candidate removed
        # cannot act and is not observed).
        observed_changes = tuple(
            c
            for c in inp.changed_components
            if c not in inp.target_components
            and (inp.candidate_components is None or c in inp.candidate_components)
        )
        out: dict[str, str] = {}
        for component in (*inp.target_components, *observed_changes):
            levels = [
                activation_rank(o.report.activation[component].level)
                if o.report is not None and component in o.report.activation
                else 0
                for o in observed_trials
            ]
            lowest = min(levels) if levels else 0
            out[component] = "none" if lowest == 0 else _level_name(lowest)
        return out

    @cached_property
    def detection(self) -> DetectionReport:
        return measure_detection(self.roles, self.sides, test_strategy=self.inp.test_strategy)

    @cached_property
    def regressions(self) -> tuple[int, list[Reason]]:
        same = 0
        failures: list[Reason] = []
        for fixture in self.roles.get("regression", []):
            rid = str(fixture["id"])
            base, cand = self.slot("baseline", rid), self.slot("candidate", rid)
            if not (base.judgements and cand.judgements):
                continue
            base_stop = base.any_stopped
            cand_stop = cand.all_stopped if base_stop else cand.any_stopped
            if base_stop == cand_stop:
                same += 1
                continue
            failures.append(
                Reason(
                    "REGRESSION_FIXTURE_FAILED",
                    f"regression fixture {rid}: the candidate "
                    f"{'stops' if cand_stop else 'passes'} what the baseline "
                    f"{'stops' if base_stop else 'passes'}",
                )
            )
        return same, failures

    @cached_property
    def metrics(self) -> dict[str, float | None]:
        return _metrics(
            self.counted_trials,
            self.roles,
            self.sides,
            self.detection,
            regression_same=self.regressions[0],
        )


# -- the rules, in order ------------------------------------------------------------


def _already_decided(case: DecisionCase) -> Finding | None:
    """A decision recorded as INCONCLUSIVE or FAIL under this plan is final."""
    prior = case.inp.prior_verdicts
    if PromotionDecision.INCONCLUSIVE.value in prior:
        return _one(
            STOP_INCONCLUSIVE,
            "EVALUATION_ALREADY_INCONCLUSIVE",
            "this plan digest already ended INCONCLUSIVE for this candidate; "
            "INCONCLUSIVE is terminal",
            "register a new evaluation plan before a new candidate (a new digest is a new "
            "evaluation)",
        )
    if PromotionDecision.FAIL.value in prior:
        return _one(
            STOP_FAIL,
            "EVALUATION_ALREADY_FAILED",
            "this plan digest already ended FAIL for this candidate; a FAIL is not re-rolled",
            "register a new evaluation plan and a new candidate",
        )
    return None


def _evaluation_finished(case: DecisionCase) -> Finding | None:
    """A run of this evaluation that started its trials and recorded no decision ended
    abnormally (the evaluator was killed): its evaluation is INCONCLUSIVE."""
    runs = case.inp.unfinished_runs
    if not runs:
        return None
    return _one(
        STOP_INCONCLUSIVE,
        "EVALUATION_INTERRUPTED",
        f"an evaluation of this candidate under this plan started its trials (ledger seq "
        f"{', '.join(str(s) for s in runs[:5])}) and never recorded a decision",
        "an interrupted evaluation cannot be re-run: register a new plan before a new candidate",
    )


def _plan_registered_before_candidate(case: DecisionCase) -> Finding | None:
    """Pre-registration: the plan must come before its candidate, no other plan may already
    have judged the same commit or tree (a new plan is never a second chance), and a plan's
    baseline cannot be a candidate another plan failed or left INCONCLUSIVE."""
    inp = case.inp
    other = sorted({f"{d.decision} under {d.plan_digest}" for d in inp.other_plan_verdicts})
    if other:
        return _one(
            STOP_INCONCLUSIVE,
            "EVAL_PLAN_AFTER_CANDIDATE",
            f"the candidate's commit or tree already has a decision under another plan "
            f"({'; '.join(other[:3])}); a new plan does not judge it again",
            "a new plan after a result is a new evaluation of a new candidate (a new tree)",
        )
    rejected = sorted(
        {
            f"{d.decision} under {d.plan_digest}"
            for d in inp.baseline_verdicts
            if d.decision in (PromotionDecision.FAIL.value, PromotionDecision.INCONCLUSIVE.value)
        }
    )
    if rejected:
        return _one(
            STOP_INCONCLUSIVE,
            "EVAL_PLAN_AFTER_CANDIDATE",
            f"the plan's baseline was itself a candidate that did not pass "
            f"({'; '.join(rejected[:3])}); a rejected candidate does not become a baseline",
            "register a plan whose baseline is a commit that passed or was never a candidate",
        )
    first, plan_seq = inp.candidate_first_seq, inp.plan_seq
    if first is not None and plan_seq is not None and plan_seq > first:
        return _one(
            STOP_INCONCLUSIVE,
            "EVAL_PLAN_AFTER_CANDIDATE",
            f"the plan was registered at ledger seq {plan_seq}, after the candidate's commit "
            f"or tree was first recorded (seq {first}); a plan written after its candidate "
            "is not pre-registered",
            "register the plan before the candidate commit is shown to the ledger",
        )
    return None


def _plan_available(case: DecisionCase) -> Finding | None:
    inp = case.inp
    if inp.plan is not None and inp.plan_digest is not None:
        return None
    return Finding(
        STOP_INCONCLUSIVE,
        (
            *inp.setup_problems,
            Reason(
                "EVALUATION_PLAN_UNAVAILABLE",
                "the registered evaluation plan could not be read",
                "register the plan: plangate eval plan register FILE",
            ),
        ),
    )


def _manifest_identity(case: DecisionCase) -> Finding | None:
    """Both HarnessManifests must be obtainable: without an identity nothing can be judged
    (a candidate whose harness definition cannot be read is INCONCLUSIVE, not FAIL)."""
    inp = case.inp
    reported = [r for r in inp.setup_problems if r.code == IDENTITY_CODE]
    if reported:
        return Finding(STOP_INCONCLUSIVE, tuple(reported))
    if inp.baseline_manifest_ref is None or inp.candidate_manifest_ref is None:
        return _one(
            STOP_INCONCLUSIVE,
            IDENTITY_CODE,
            "the baseline or candidate HarnessManifest could not be built",
            "check the harness definition at both commits",
        )
    return None


def _policy_gate(case: DecisionCase) -> Finding | None:
    """The policy gate decides whether paired evaluation may start at all."""
    gate = case.inp.policy_verdict
    if gate == "AUTO_APPROVED":
        return None
    gate_codes = [r.code for r in case.inp.gate_reasons]
    facts = {"gate_reason_codes": gate_codes}
    if gate in ("DENIED", "HUMAN_REQUIRED"):
        reason = Reason(
            f"EVAL_GATE_{gate}",
            f"the policy gate returned {gate} ({', '.join(gate_codes) or 'no reasons'}); "
            "paired evaluation was not started",
            "see 'plangate eval gate CANDIDATE'",
        )
        return Finding(STOP_FAIL, (reason,), {**facts, "policy_verdict": gate})
    reason = Reason(
        "EVAL_GATE_INCONCLUSIVE",
        f"the policy gate could not admit the candidate ({gate or 'no verdict'}; "
        f"{', '.join(gate_codes) or 'no reasons'})",
        "see 'plangate eval gate CANDIDATE'",
    )
    return Finding(STOP_INCONCLUSIVE, (reason,), facts)


def _preflight(case: DecisionCase) -> Finding | None:
    """Everything knowable before a trial: the sandbox, the runner and the grader, and the
    independence the candidate's surfaces require. A shortfall stops before any trial
    with an INCONCLUSIVE that is not final: fix it and run again (the pre-registered
    conditions did not change)."""
    inp = case.inp
    reasons = list(inp.preflight_problems)
    shortfall = check_independence(inp.independence_observed, inp.independence_required)
    if shortfall is not None:
        reasons.append(
            Reason(
                shortfall.code,
                shortfall.message,
                (shortfall.hint + "; " if shortfall.hint else "")
                + "then run 'plangate eval run' again (no trial ran: nothing is final)",
                shortfall.evidence,
            )
        )
    if not reasons:
        return None
    return Finding(STOP_INCONCLUSIVE, tuple(reasons), {"preflight": True})


def _service_tampering(case: DecisionCase) -> Finding | None:
    """Tampering the service saw around the trials (a modified baseline worktree)."""
    return _many(TAMPER, case.inp.tamper_problems)


def _service_evidence(case: DecisionCase) -> Finding | None:
    """Evidence the service could not gather (worktrees, runner, a changed candidate tree)."""
    return _many(MISSING, [r for r in case.inp.setup_problems if r.code != IDENTITY_CODE])


def _plan_binding(case: DecisionCase) -> Finding | None:
    inp = case.inp
    reasons: list[Reason] = []
    if inp.plan_digest != inp.candidate_plan_digest:
        reasons.append(
            Reason(
                "EVALUATION_PLAN_DIGEST_MISMATCH",
                f"the candidate names plan {inp.candidate_plan_digest}, the evaluator's "
                f"registered plan is {inp.plan_digest}",
                "a candidate cannot choose its plan; register the candidate against the "
                "sealed plan",
            )
        )
    pinned = case.plan.get("baseline_manifest_ref")
    if inp.baseline_manifest_ref != pinned:
        reasons.append(
            Reason(
                "BASELINE_MANIFEST_BINDING",
                f"the baseline manifest is {inp.baseline_manifest_ref}, the plan pinned {pinned}",
                "the baseline commit's harness changed identity; register a new plan",
            )
        )
    return _many(MISSING, reasons)


def _fixtures_pinned(case: DecisionCase) -> Finding | None:
    return _many(
        MISSING,
        [
            Reason(
                "FIXTURE_NOT_PINNED",
                f"fixture {fixture.get('id')} has no pinned digest in the registered plan",
                "a fixture the evaluation needs must be pinned at registration",
            )
            for fixture in case.plan.get("fixtures", [])
            if not is_digest(fixture.get("digest"))
        ],
    )


def _plan_complete(case: DecisionCase) -> Finding | None:
    needed = ["known_bad", "negative_control"]
    if case.judge or case.inp.test_strategy:
        needed.append("known_mutant")
    return _many(
        MISSING,
        [
            Reason(
                "EVALUATION_PLAN_INCOMPLETE",
                f"the plan has no {role} fixture, which this evaluation needs",
                "register a plan with the fixture pinned",
            )
            for role in needed
            if not case.roles.get(role)
        ],
    )


def _sealed_fixtures_untouched(case: DecisionCase) -> Finding | None:
    sealed = {str(f.get("path")): str(f.get("id")) for f in case.plan.get("fixtures", [])}
    return _many(
        TAMPER,
        [
            Reason(
                "CANDIDATE_UPDATES_SEALED_FIXTURE",
                f"the candidate changes sealed fixture {sealed[path]} ({path}); a fixture "
                "update is a separate candidate and a separate evaluation",
                "split the fixture change into its own candidate (adopted only at I4)",
            )
            for path in case.inp.changed_paths
            if path in sealed
        ],
    )


def _trials_unique(case: DecisionCase) -> Finding | None:
    duplicated = sorted(f"{k[0]}/{k[1]}/{k[2]}" for k, n in case.slot_counts.items() if n > 1)
    if not duplicated:
        return None
    return _one(
        MISSING,
        "TRIAL_OUTCOME_DUPLICATE",
        f"trial(s) reported more than once: {', '.join(duplicated[:5])}",
        "the executor must return exactly one outcome per trial; none of the copies count",
    )


def _trial_tampering(case: DecisionCase) -> Finding | None:
    """Tampering seen by a trial just before use (a sealed fixture, the runner or grader)."""
    return _many(
        TAMPER,
        [
            Reason(
                "EVAL_HARNESS_FILE_MUTATION"
                if outcome.error_code == "EVAL_HARNESS_FILE_MISSING"
                else outcome.error_code,
                f"trial {outcome.key}: {outcome.detail}",
                "a human must inspect the evaluation harness; the plan's pins no longer hold",
            )
            for outcome in case.inp.trials
            if outcome.error_code in TAMPER_CODES
        ],
    )


def _grader_available(case: DecisionCase) -> Finding | None:
    missing = [
        o.key
        for o in case.inp.trials
        if not o.completed and o.error_code == "EVAL_GRADER_UNAVAILABLE"
    ]
    if not missing:
        return None
    return _one(
        MISSING,
        "EVAL_GRADER_UNAVAILABLE",
        f"the baseline grader could not judge {len(missing)} trial(s): {', '.join(missing[:5])}",
        "check the grader command of the plan at the baseline commit",
    )


def _trials_complete(case: DecisionCase) -> Finding | None:
    wanted = case.trials_per_fixture
    short: list[str] = []
    for fixture in case.plan.get("fixtures", []):
        for side in ("baseline", "candidate"):
            done = case.slot(side, fixture.get("id")).completed
            if done < wanted:
                short.append(f"{side}/{fixture.get('id')}: {done}/{wanted}")
    if not short and wanted >= 1:
        return None
    failed = [
        f"{o.key} ({o.error_code or o.status})"
        for o in case.inp.trials
        if not o.completed and o.error_code != "EVAL_GRADER_UNAVAILABLE"
    ]
    return _one(
        MISSING,
        "TRIALS_INCOMPLETE",
        f"fewer completed trials than registered: {'; '.join(short[:6]) or 'no trials'}"
        + (f"; failed: {', '.join(failed[:5])}" if failed else ""),
        "a crashed, timed-out or malformed trial does not count; fix the runner and "
        "register a new plan",
    )


def _verifiers_available(case: DecisionCase) -> Finding | None:
    unavailable: set[str] = set()
    for outcome in case.counted_trials:
        if not outcome.completed or outcome.report is None or outcome.agent is not None:
            # An agent trial's verifier is the fixture's checks: the grader's judgement.
            continue
        for verifier in case.plan.get("verifier_set", []):
            if outcome.report.detections.get(verifier) not in ("detected", "not_detected"):
                unavailable.add(f"{verifier}@{outcome.side}")
    if not unavailable:
        return None
    return _one(
        MISSING,
        "EVAL_VERIFIER_UNAVAILABLE",
        f"verifier(s) of the plan's verifier set did not run: {', '.join(sorted(unavailable))}",
        "a verifier that could not run is missing evidence, never a pass",
    )


def _activation(case: DecisionCase) -> Finding | None:
    """The target components (and changed ones) must act on the known-bad fixtures."""
    required = case.required_activation
    reasons: list[Reason] = []
    if not case.inp.target_components:
        reasons.append(
            Reason(
                "ACTIVATION_INSUFFICIENT",
                "the candidate names no target component to observe",
                "name the target components in the candidate",
            )
        )
    for component, observed in case.activation.items():
        if activation_rank(observed) < activation_rank(required):
            reasons.append(
                Reason(
                    "ACTIVATION_INSUFFICIENT",
                    f"{component} reached {observed} on the known-bad fixture(s); "
                    f"{required} is required",
                    "presence is not effect: the component must be shown to act "
                    "(influenced_decision for verifiers and gates)",
                )
            )
    return _many(MISSING, reasons)


def _baseline_valid(case: DecisionCase) -> Finding | None:
    """The incident reproduces on the baseline, and the baseline passes the control."""
    reasons: list[Reason] = []
    for fixture in case.roles.get("known_bad", []):
        base = case.slot("baseline", fixture["id"])
        if base.judgements and not base.all_passed:
            reasons.append(
                Reason(
                    "BASELINE_MISS_NOT_REPRODUCED",
                    f"the baseline already stops known-bad fixture {fixture['id']}; the "
                    "incident is not reproduced",
                    "pick a known-bad fixture the baseline lets through",
                )
            )
    for fixture in case.roles.get("negative_control", []):
        if case.slot("baseline", fixture["id"]).any_stopped:
            reasons.append(
                Reason(
                    "NEGATIVE_CONTROL_BASELINE_INVALID",
                    f"the baseline already blocks negative control {fixture['id']}",
                    "a control the baseline fails cannot show a regression",
                )
            )
    return _many(MISSING, reasons)


def _independence(case: DecisionCase) -> Finding | None:
    inp = case.inp
    shortfall = check_independence(inp.independence_observed, inp.independence_required)
    return None if shortfall is None else Finding(MISSING, (shortfall,))


def _known_bad_stopped(case: DecisionCase) -> Finding | None:
    return _many(
        FAILED,
        [
            Reason(
                "KNOWN_BAD_NOT_STOPPED",
                f"the candidate let known-bad fixture {fixture['id']} through",
            )
            for fixture in case.roles.get("known_bad", [])
            if case.slot("candidate", fixture["id"]).any_passed
        ],
    )


def _negative_control_passes(case: DecisionCase) -> Finding | None:
    return _many(
        FAILED,
        [
            Reason(
                "NEGATIVE_CONTROL_REGRESSION",
                f"the candidate blocks negative control {fixture['id']}",
            )
            for fixture in case.roles.get("negative_control", [])
            if case.slot("candidate", fixture["id"]).any_stopped
        ],
    )


def _detection_power(case: DecisionCase) -> Finding | None:
    return _many(FAILED, case.detection.reasons)


def _regression_fixtures(case: DecisionCase) -> Finding | None:
    return _many(FAILED, case.regressions[1])


def _metrics_available(case: DecisionCase) -> Finding | None:
    return _many(
        MISSING,
        [
            Reason(
                "METRIC_UNAVAILABLE",
                f"pre-registered metric {name} could not be computed from the trials",
                "the runner must report it (or use a built-in metric name)",
            )
            for name in case.plan.get("metrics", [])
            if case.metrics.get(name) is None
        ],
    )


def _thresholds(case: DecisionCase) -> Finding | None:
    reasons: list[Reason] = []
    for item in case.plan.get("threshold", []):
        value = case.metrics.get(item.get("metric"))
        if value is None:
            continue  # missing evidence, reported by metrics_available
        if not _compare(float(value), str(item.get("op")), float(item.get("value"))):
            reasons.append(
                Reason(
                    "THRESHOLD_NOT_MET",
                    f"{item.get('metric')} = {value:g}, the plan requires {item.get('op')} "
                    f"{item.get('value')}",
                )
            )
    return _many(FAILED, reasons)


@dataclass(frozen=True)
class Rule:
    """One rule of the decision: its name, its check, and whether it reads trials."""

    name: str
    check: Callable[[DecisionCase], Finding | None]
    needs_trials: bool = True


RULES: tuple[Rule, ...] = (
    Rule("already_decided", _already_decided, needs_trials=False),
    Rule("evaluation_finished", _evaluation_finished, needs_trials=False),
    Rule("plan_registered_before_candidate", _plan_registered_before_candidate, False),
    Rule("plan_available", _plan_available, needs_trials=False),
    Rule("manifest_identity", _manifest_identity, needs_trials=False),
    Rule("policy_gate", _policy_gate, needs_trials=False),
    Rule("preflight", _preflight, needs_trials=False),
    Rule("service_tampering", _service_tampering),
    Rule("service_evidence", _service_evidence),
    Rule("plan_binding", _plan_binding),
    Rule("fixtures_pinned", _fixtures_pinned),
    Rule("plan_complete", _plan_complete),
    Rule("sealed_fixtures_untouched", _sealed_fixtures_untouched),
    Rule("trials_unique", _trials_unique),
    Rule("trial_tampering", _trial_tampering),
    Rule("grader_available", _grader_available),
    Rule("trials_complete", _trials_complete),
    Rule("verifiers_available", _verifiers_available),
    Rule("activation", _activation),
    Rule("baseline_valid", _baseline_valid),
    Rule("independence", _independence),
    Rule("known_bad_stopped", _known_bad_stopped),
    Rule("negative_control_passes", _negative_control_passes),
    Rule("detection_power", _detection_power),
    Rule("regression_fixtures", _regression_fixtures),
    Rule("metrics_available", _metrics_available),
    Rule("thresholds", _thresholds),
)
"""The Promotion Decision in order. The rules that need no trial come first and stop."""

DECISION_ORDER: tuple[str, ...] = tuple(rule.name for rule in RULES)
"""The documented order, generated from :data:`RULES`."""


def _base_facts(inp: EvaluationInput) -> dict[str, Any]:
    return {
        "candidate_id": inp.candidate_id,
        "evaluation_plan_digest": inp.plan_digest,
        "candidate_plan_digest": inp.candidate_plan_digest,
        "baseline_manifest_ref": inp.baseline_manifest_ref,
        "candidate_manifest_ref": inp.candidate_manifest_ref,
        "independence": {
            "observed": inp.independence_observed,
            "required": inp.independence_required,
        },
    }


def _record(rule: Rule, found: Finding | None) -> dict[str, Any]:
    return {
        "rule": rule.name,
        "outcome": "pass" if found is None else found.kind,
        "codes": [] if found is None else [r.code for r in found.reasons],
    }


def _stop(found: Finding, facts: dict[str, Any]) -> Result:
    verdict = PromotionDecision.FAIL if found.kind == STOP_FAIL else PromotionDecision.INCONCLUSIVE
    return _decision(verdict, list(found.reasons), {**facts, **found.facts})


def decide_before_trials(inp: EvaluationInput) -> Result | None:
    """The decision when a rule that needs no trial already stops, else None (pure)."""
    case = DecisionCase(inp)
    facts = _base_facts(inp)
    records: list[dict[str, Any]] = []
    for rule in RULES:
        if rule.needs_trials:
            return None
        found = rule.check(case)
        records.append(_record(rule, found))
        if found is not None and found.kind in (STOP_FAIL, STOP_INCONCLUSIVE):
            return _stop(found, {**facts, "rules": records})
    return None  # pragma: no cover - the table always holds rules that need trials


def decide(inp: EvaluationInput) -> Result:
    """The Promotion Decision for one evaluation (rules and precedence: module doc)."""
    case = DecisionCase(inp)
    facts = _base_facts(inp)
    records: list[dict[str, Any]] = []
    found_by_kind: dict[str, list[Reason]] = {TAMPER: [], MISSING: [], FAILED: []}
    for rule in RULES:
        found = rule.check(case)
        records.append(_record(rule, found))
        if found is None:
            continue
        if found.kind in (STOP_FAIL, STOP_INCONCLUSIVE):
            return _stop(found, {**facts, "rules": records})
        found_by_kind[found.kind].extend(found.reasons)
    tamper, missing, failures = (found_by_kind[k] for k in (TAMPER, MISSING, FAILED))
    facts.update(
        policy_verdict=inp.policy_verdict,
        activation={"required_level": case.required_activation, "observed": case.activation},
        metrics=case.metrics,
        detection=case.detection.to_json(),
        critical_regressions=sorted(
            {CRITICAL_BY_CODE[r.code] for r in (*tamper, *failures) if r.code in CRITICAL_BY_CODE}
        ),
        inconclusive_codes=sorted({r.code for r in missing}),
        fail_codes=sorted({r.code for r in (*tamper, *failures)}),
        fixtures=_fixture_table(case.plan, case.sides),
        rules=records,
    )
    if tamper:
        facts["policy_verdict"] = "HUMAN_REQUIRED"
        return _decision(PromotionDecision.FAIL, [*tamper, *missing, *failures], facts)
    if missing:
        return _decision(PromotionDecision.INCONCLUSIVE, [*missing, *failures], facts)
    if failures:
        return _decision(PromotionDecision.FAIL, failures, facts)
    return _decision(PromotionDecision.PASS, _passes(case), facts)


def _passes(case: DecisionCase) -> list[Reason]:
    detection = case.detection
    return [
        Reason("KNOWN_BAD_STOPPED", "the candidate stops every known-bad fixture in every trial"),
        Reason("NEGATIVE_CONTROL_PASSED", "every negative control still passes"),
        Reason("ACTIVATION_CONFIRMED", f"target components reached {case.required_activation}"),
        Reason(
            "DETECTION_POWER_KEPT",
            f"known mutants detected: candidate {len(detection.candidate_detected)}, "
            f"baseline {len(detection.baseline_detected)}",
        ),
        Reason("THRESHOLDS_MET", "every pre-registered threshold holds"),
    ]


def _level_name(rank_value: int) -> str:
    return ACTIVATION_LEVELS[rank_value - 1]


def _metrics(
    trials: Sequence[TrialOutcome],
    roles: Mapping[str, list[Mapping[str, Any]]],
    sides: Judgements,
    detection: DetectionReport,
    *,
    regression_same: int,
) -> dict[str, float | None]:
    """Built-in metrics from the grader's judgements plus the runners' own metrics."""

    def judged(side: str, role: str) -> list[str]:
        out: list[str] = []
        for fixture in roles.get(role, []):
            out.extend(sides.get((side, str(fixture["id"])), SideJudgements()).judgements)
        return out

    kb = judged("candidate", "known_bad")
    nc = judged("candidate", "negative_control")
    sp = judged("candidate", "sealed_positive")
    sn = judged("candidate", "sealed_negative")
    mutants = len(detection.mutants)
    metrics: dict[str, float | None] = {
        "known_bad_stop_rate": _rate(kb.count("stopped"), len(kb)),
        "negative_control_pass_rate": _rate(nc.count("passed"), len(nc)),
        "mutant_detection_rate": _rate(len(detection.candidate_detected), mutants),
        "baseline_mutant_detection_rate": _rate(len(detection.baseline_detected), mutants),
        "false_positive_rate": _rate(sp.count("stopped"), len(sp)),
        "false_negative_rate": _rate(sn.count("passed"), len(sn)),
        "regression_pass_rate": _rate(regression_same, len(roles.get("regression", []))),
    }
    reported: dict[str, dict[str, list[float]]] = {"baseline": {}, "candidate": {}}
    for outcome in trials:
        if outcome.completed and outcome.report is not None:
            for name, value in outcome.report.metrics.items():
                reported[outcome.side].setdefault(name, []).append(value)
    for name, values in sorted(reported["candidate"].items()):
        if name in metrics:
            continue  # a runner cannot overwrite a built-in metric
        mean = sum(values) / len(values)
        metrics[name] = mean
        base_values = reported["baseline"].get(name)
        if base_values:
            metrics[f"{name}_delta"] = mean - sum(base_values) / len(base_values)
    return metrics


def _fixture_table(plan: Mapping[str, Any], sides: Judgements) -> list[dict[str, Any]]:
    table: list[dict[str, Any]] = []
    for fixture in plan.get("fixtures", []):
        row: dict[str, Any] = {"id": fixture.get("id"), "role": fixture.get("role")}
        for side in ("baseline", "candidate"):
            slot = sides.get((side, str(fixture.get("id"))), SideJudgements())
            row[side] = {
                "completed": slot.completed,
                "failed": slot.failed,
                "stopped": slot.judgements.count("stopped"),
                "passed": slot.judgements.count("passed"),
            }
        table.append(row)
    return table
