"""The Promotion Decision rules (pure): PASS / FAIL / INCONCLUSIVE.

:func:`decide` takes everything the service gathered (the registered plan, the
recomputed digests and manifest refs, the policy gate's verdict, every trial
outcome with the baseline grader's judgement, the computed independence level
and the decisions already recorded for this evaluation) and returns a
:class:`~plangate.verdict.Result`. It never opens a file, runs git or reads
the clock.

Precedence (docs/evaluation-run.md "Decision rules"):

1. a decision already recorded as INCONCLUSIVE or FAIL for the same plan
   digest and candidate is final (INCONCLUSIVE is never turned into PASS);
2. the policy gate: DENIED / HUMAN_REQUIRED -> FAIL (paired evaluation never
   started), INCONCLUSIVE -> INCONCLUSIVE;
3. tampering: a sealed fixture (or the runner/grader) changed after
   registration, the baseline worktree was modified during the trials, or the
   candidate updates a sealed fixture -> FAIL with
   ``policy_verdict: HUMAN_REQUIRED`` (DECISIONS 14);
4. missing evidence -> INCONCLUSIVE;
5. a missed condition or a critical regression -> FAIL;
6. otherwise PASS.

Judgements ("stopped" / "passed") always come from the baseline's grader.
When trials disagree, the reading that favours the baseline is taken: the
baseline is credited with a detection seen in any trial, the candidate only
with one seen in every trial.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
from plangate.verdict import PromotionDecision, Reason, Result

JUDGE_TYPES = frozenset({"verifier", "gate"})
"""Candidates touching these need ``influenced_decision`` activation and known mutants."""

GENERAL_MIN_ACTIVATION = "fired"
JUDGE_MIN_ACTIVATION = "influenced_decision"

TAMPER_CODES = frozenset(
    {"SEALED_FIXTURE_MUTATION", "EVAL_HARNESS_FILE_MUTATION", "EVAL_HARNESS_FILE_MISSING"}
)

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
    prior_decisions: Sequence[str] = ()
    changed_components: tuple[str, ...] = ()
    test_strategy: bool = False
    setup_problems: Sequence[Reason] = ()
    tamper_problems: Sequence[Reason] = ()
    gate_reasons: Sequence[Reason] = field(default_factory=tuple)
    candidate_components: tuple[str, ...] | None = None
    """Component ids of the candidate manifest (None: unknown, every changed one is observed)."""


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
    """The stricter of the plan's level and the seed's floor for this kind of candidate."""
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


def decide(inp: EvaluationInput) -> Result:
    """The Promotion Decision for one evaluation (rules and precedence: module doc)."""
    facts: dict[str, Any] = {
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
    # 1. Finality: a recorded INCONCLUSIVE/FAIL is the decision of this evaluation.
    if PromotionDecision.INCONCLUSIVE.value in inp.prior_decisions:
        return _decision(
            PromotionDecision.INCONCLUSIVE,
            [
                Reason(
                    "EVALUATION_ALREADY_INCONCLUSIVE",
                    "this plan digest already ended INCONCLUSIVE for this candidate; "
                    "INCONCLUSIVE is terminal",
                    "register a new evaluation plan (a new digest is a new evaluation)",
                )
            ],
            facts,
        )
    if PromotionDecision.FAIL.value in inp.prior_decisions:
        return _decision(
            PromotionDecision.FAIL,
            [
                Reason(
                    "EVALUATION_ALREADY_FAILED",
                    "this plan digest already ended FAIL for this candidate; "
                    "a FAIL is not re-rolled",
                    "register a new evaluation plan and a new candidate",
                )
            ],
            facts,
        )
    # 2. The policy gate decides whether paired evaluation may start at all.
    gate = inp.policy_verdict
    facts["policy_verdict"] = gate
    if gate != "AUTO_APPROVED":
        gate_codes = [r.code for r in inp.gate_reasons]
        facts["gate_reason_codes"] = gate_codes
        if gate in ("DENIED", "HUMAN_REQUIRED"):
            return _decision(
                PromotionDecision.FAIL,
                [
                    Reason(
                        f"EVAL_GATE_{gate}",
                        f"the policy gate returned {gate} "
                        f"({', '.join(gate_codes) or 'no reasons'}); "
                        "paired evaluation was not started",
                        "see 'plangate eval gate CANDIDATE'",
                    )
                ],
                facts,
            )
        facts["policy_verdict"] = None
        return _decision(
            PromotionDecision.INCONCLUSIVE,
            [
                Reason(
                    "EVAL_GATE_INCONCLUSIVE",
                    f"the policy gate could not admit the candidate ({gate or 'no verdict'}; "
                    f"{', '.join(gate_codes) or 'no reasons'})",
                    "see 'plangate eval gate CANDIDATE'",
                )
            ],
            facts,
        )

    tamper: list[Reason] = list(inp.tamper_problems)
    missing: list[Reason] = list(inp.setup_problems)
    failures: list[Reason] = []
    passes: list[Reason] = []

    # Bindings: plan digest and manifest identities.
    plan = inp.plan
    if plan is None or inp.plan_digest is None:
        missing.append(
            Reason(
                "EVALUATION_PLAN_UNAVAILABLE",
                "the registered evaluation plan could not be read",
                "register the plan: plangate eval plan register FILE",
            )
        )
        return _decision(PromotionDecision.INCONCLUSIVE, missing, facts)
    if inp.plan_digest != inp.candidate_plan_digest:
        missing.append(
            Reason(
                "EVALUATION_PLAN_DIGEST_MISMATCH",
                f"the candidate names plan {inp.candidate_plan_digest}, the evaluator's registered "
                f"plan is {inp.plan_digest}",
                "a candidate cannot choose its plan; "
                "register the candidate against the sealed plan",
            )
        )
    identity_reported = any(r.code == "MANIFEST_IDENTITY_UNOBTAINABLE" for r in missing)
    if inp.baseline_manifest_ref is None or inp.candidate_manifest_ref is None:
        if not identity_reported:  # the service already said which one and why
            missing.append(
                Reason(
                    "MANIFEST_IDENTITY_UNOBTAINABLE",
                    "the baseline or candidate HarnessManifest could not be built",
                    "check the harness definition at both commits",
                )
            )
    elif inp.baseline_manifest_ref != plan.get("baseline_manifest_ref"):
        missing.append(
            Reason(
                "BASELINE_MANIFEST_BINDING",
                f"the baseline manifest is {inp.baseline_manifest_ref}, the plan pinned "
                f"{plan.get('baseline_manifest_ref')}",
                "the baseline commit's harness changed identity; register a new plan",
            )
        )

    # Fixtures: every fixture pinned; the roles the evaluation needs are present.
    roles = _fixtures_by_role(plan)
    fixture_paths = {str(f.get("path")): str(f.get("id")) for f in plan.get("fixtures", [])}
    for fixture in plan.get("fixtures", []):
        if not is_digest(fixture.get("digest")):
            missing.append(
                Reason(
                    "FIXTURE_NOT_PINNED",
                    f"fixture {fixture.get('id')} has no pinned digest in the registered plan",
                    "a fixture the evaluation needs must be pinned at registration",
                )
            )
    judge = is_judge_candidate(
        (*inp.target_components, *inp.changed_components), inp.component_types
    )
    needed = ["known_bad", "negative_control"]
    if judge or inp.test_strategy:
        needed.append("known_mutant")
    for role in needed:
        if not roles.get(role):
            missing.append(
                Reason(
                    "EVALUATION_PLAN_INCOMPLETE",
                    f"the plan has no {role} fixture, which this evaluation needs",
                    "register a plan with the fixture pinned",
                )
            )
    for path in inp.changed_paths:
        if path in fixture_paths:
            tamper.append(
                Reason(
                    "CANDIDATE_UPDATES_SEALED_FIXTURE",
                    f"the candidate changes sealed fixture {fixture_paths[path]} ({path}); "
                    "a fixture update is a separate candidate and a separate evaluation",
                    "split the fixture change into its own candidate (adopted only at I4)",
                )
            )

    # Trials: tampering seen just before use, completeness, grader, verifiers.
    trials_per_fixture = int(plan.get("trials", 0) or 0)
    # Only the trials the plan registered count, each once: an outcome for a trial number,
    # side or fixture the plan never asked for is ignored, and a trial reported more than
    # once (an executor retrying, say) is ambiguous evidence and counts for none of its
    # copies, so it can never stand in for a trial that did not run.
    fixture_ids = {str(f.get("id")) for f in plan.get("fixtures", [])}
    seen: dict[tuple[str, str, int], int] = {}
    for outcome in inp.trials:
        slot_key = (outcome.side, outcome.fixture_id, outcome.trial)
        seen[slot_key] = seen.get(slot_key, 0) + 1
    duplicated = sorted(f"{k[0]}/{k[1]}/{k[2]}" for k, n in seen.items() if n > 1)
    if duplicated:
        missing.append(
            Reason(
                "TRIAL_OUTCOME_DUPLICATE",
                f"trial(s) reported more than once: {', '.join(duplicated[:5])}",
                "the executor must return exactly one outcome per trial; none of the copies count",
            )
        )
    counted_trials = [
        o
        for o in inp.trials
        if seen[(o.side, o.fixture_id, o.trial)] == 1
        and o.side in ("baseline", "candidate")
        and o.fixture_id in fixture_ids
        and 1 <= o.trial <= trials_per_fixture
    ]
    sides = group_judgements(counted_trials)
    grader_missing: list[str] = []
    failed_trials: list[str] = []
    for outcome in inp.trials:
        if outcome.error_code in TAMPER_CODES:
            tamper.append(
                Reason(
                    outcome.error_code
                    if outcome.error_code != "EVAL_HARNESS_FILE_MISSING"
                    else "EVAL_HARNESS_FILE_MUTATION",
                    f"trial {outcome.key}: {outcome.detail}",
                    "a human must inspect the evaluation harness; the plan's pins no longer hold",
                )
            )
        if outcome.completed:
            continue
        if outcome.error_code == "EVAL_GRADER_UNAVAILABLE":
            grader_missing.append(outcome.key)
        else:
            failed_trials.append(f"{outcome.key} ({outcome.error_code or outcome.status})")
    if grader_missing:
        missing.append(
            Reason(
                "EVAL_GRADER_UNAVAILABLE",
                f"the baseline grader could not judge {len(grader_missing)} trial(s): "
                f"{', '.join(grader_missing[:5])}",
                "check the grader command of the plan at the baseline commit",
            )
        )
    short: list[str] = []
    for fixture in plan.get("fixtures", []):
        for side in ("baseline", "candidate"):
            slot = sides.get((side, str(fixture.get("id"))), SideJudgements())
            if slot.completed < trials_per_fixture:
                short.append(f"{side}/{fixture.get('id')}: {slot.completed}/{trials_per_fixture}")
    if short or trials_per_fixture < 1:
        missing.append(
            Reason(
                "TRIALS_INCOMPLETE",
                f"fewer completed trials than registered: {'; '.join(short[:6]) or 'no trials'}"
                + (f"; failed: {', '.join(failed_trials[:5])}" if failed_trials else ""),
                "a crashed, timed-out or malformed trial does not count; fix the runner and "
                "register a new plan",
            )
        )
    unavailable_verifiers: set[str] = set()
    for outcome in counted_trials:
        if not outcome.completed or outcome.report is None:
            continue
        for verifier in plan.get("verifier_set", []):
            if outcome.report.detections.get(verifier) not in ("detected", "not_detected"):
                unavailable_verifiers.add(f"{verifier}@{outcome.side}")
    if unavailable_verifiers:
        missing.append(
            Reason(
                "EVAL_VERIFIER_UNAVAILABLE",
                f"verifier(s) of the plan's verifier set did not run: "
                f"{', '.join(sorted(unavailable_verifiers))}",
                "a verifier that could not run is missing evidence, never a pass",
            )
        )

    # Activation of the candidate's target components on the known-bad fixtures.
    required = required_activation(str(plan.get("required_activation", "")), judge)
    activation_facts: dict[str, Any] = {"required_level": required, "observed": {}}
    known_bad_ids = {str(f.get("id")) for f in roles.get("known_bad", [])}
    activation_trials = [
        o
        for o in counted_trials
        if o.side == "candidate" and o.fixture_id in known_bad_ids and o.completed
    ]
    if not inp.target_components:
        missing.append(
            Reason(
                "ACTIVATION_INSUFFICIENT",
                "the candidate names no target component to observe",
                "name the target components in the candidate",
            )
        )
    # The declared targets are a claim; the components the observed diff changes are
    # an observation. Both must show activation (a component the candidate removed
    # cannot act and is not observed).
    observed_changes = tuple(
        c
        for c in inp.changed_components
        if c not in inp.target_components
        and (inp.candidate_components is None or c in inp.candidate_components)
    )
    for component in (*inp.target_components, *observed_changes):
        levels = [
            activation_rank(o.report.activation[component].level)
            if o.report is not None and component in o.report.activation
            else 0
            for o in activation_trials
        ]
        observed_rank = min(levels) if levels else 0
        observed = "none" if observed_rank == 0 else _level_name(observed_rank)
        activation_facts["observed"][component] = observed
        if observed_rank < activation_rank(required):
            missing.append(
                Reason(
                    "ACTIVATION_INSUFFICIENT",
                    f"{component} reached {observed} on the known-bad fixture(s); "
                    f"{required} is required",
                    "presence is not effect: the component must be shown to act "
                    "(influenced_decision for verifiers and gates)",
                )
            )
    facts["activation"] = activation_facts

    # Baseline validity: the incident reproduces, the control passes.
    for fixture in roles.get("known_bad", []):
        base = sides.get(("baseline", str(fixture["id"])), SideJudgements())
        if base.judgements and not base.all_passed:
            missing.append(
                Reason(
                    "BASELINE_MISS_NOT_REPRODUCED",
                    f"the baseline already stops known-bad fixture {fixture['id']}; the incident "
                    "is not reproduced",
                    "pick a known-bad fixture the baseline lets through",
                )
            )
    for fixture in roles.get("negative_control", []):
        base = sides.get(("baseline", str(fixture["id"])), SideJudgements())
        if base.any_stopped:
            missing.append(
                Reason(
                    "NEGATIVE_CONTROL_BASELINE_INVALID",
                    f"the baseline already blocks negative control {fixture['id']}",
                    "a control the baseline fails cannot show a regression",
                )
            )

    # Independence (DECISIONS 16).
    independence = check_independence(inp.independence_observed, inp.independence_required)
    if independence is not None:
        missing.append(independence)

    # Outcomes, detection power, false positives/negatives, regressions.
    for fixture in roles.get("known_bad", []):
        cand = sides.get(("candidate", str(fixture["id"])), SideJudgements())
        if cand.any_passed:
            failures.append(
                Reason(
                    "KNOWN_BAD_NOT_STOPPED",
                    f"the candidate let known-bad fixture {fixture['id']} through",
                )
            )
    for fixture in roles.get("negative_control", []):
        cand = sides.get(("candidate", str(fixture["id"])), SideJudgements())
        if cand.any_stopped:
            failures.append(
                Reason(
                    "NEGATIVE_CONTROL_REGRESSION",
                    f"the candidate blocks negative control {fixture['id']}",
                )
            )
    detection = measure_detection(roles, sides, test_strategy=inp.test_strategy)
    failures.extend(detection.reasons)
    regression_same = 0
    regression_ids = [str(f["id"]) for f in roles.get("regression", [])]
    for rid in regression_ids:
        base = sides.get(("baseline", rid), SideJudgements())
        cand = sides.get(("candidate", rid), SideJudgements())
        base_stop = base.any_stopped
        cand_stop = cand.all_stopped if base_stop else cand.any_stopped
        if base.judgements and cand.judgements and base_stop == cand_stop:
            regression_same += 1
        elif base.judgements and cand.judgements:
            failures.append(
                Reason(
                    "REGRESSION_FIXTURE_FAILED",
                    f"regression fixture {rid}: the candidate "
                    f"{'stops' if cand_stop else 'passes'} what the baseline "
                    f"{'stops' if base_stop else 'passes'}",
                )
            )

    # Metrics (candidate side unless named otherwise) and the pre-registered thresholds.
    metrics = _metrics(counted_trials, roles, sides, detection, regression_same=regression_same)
    facts["metrics"] = metrics
    facts["detection"] = detection.to_json()
    for name in plan.get("metrics", []):
        if metrics.get(name) is None:
            missing.append(
                Reason(
                    "METRIC_UNAVAILABLE",
                    f"pre-registered metric {name} could not be computed from the trials",
                    "the runner must report it (or use a built-in metric name)",
                )
            )
    for item in plan.get("threshold", []):
        value = metrics.get(item.get("metric"))
        if value is None:
            continue  # already INCONCLUSIVE above
        if not _compare(float(value), str(item.get("op")), float(item.get("value"))):
            failures.append(
                Reason(
                    "THRESHOLD_NOT_MET",
                    f"{item.get('metric')} = {value:g}, the plan requires {item.get('op')} "
                    f"{item.get('value')}",
                )
            )

    critical = sorted(
        {CRITICAL_BY_CODE[r.code] for r in (*tamper, *failures) if r.code in CRITICAL_BY_CODE}
    )
    facts["critical_regressions"] = critical
    facts["inconclusive_codes"] = sorted({r.code for r in missing})
    facts["fail_codes"] = sorted({r.code for r in (*tamper, *failures)})
    facts["fixtures"] = _fixture_table(plan, sides)
    if tamper:
        facts["policy_verdict"] = "HUMAN_REQUIRED"
        return _decision(PromotionDecision.FAIL, [*tamper, *missing, *failures], facts)
    if missing:
        return _decision(PromotionDecision.INCONCLUSIVE, [*missing, *failures], facts)
    if failures:
        return _decision(PromotionDecision.FAIL, failures, facts)
    passes.extend(
        [
            Reason(
                "KNOWN_BAD_STOPPED", "the candidate stops every known-bad fixture in every trial"
            ),
            Reason("NEGATIVE_CONTROL_PASSED", "every negative control still passes"),
            Reason("ACTIVATION_CONFIRMED", f"target components reached {required}"),
            Reason(
                "DETECTION_POWER_KEPT",
                f"known mutants detected: candidate {len(detection.candidate_detected)}, "
                f"baseline {len(detection.baseline_detected)}",
            ),
            Reason("THRESHOLDS_MET", "every pre-registered threshold holds"),
        ]
    )
    return _decision(PromotionDecision.PASS, passes, facts)


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
