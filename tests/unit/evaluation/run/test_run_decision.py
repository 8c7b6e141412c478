"""Promotion Decision rules (pure): every rule is a test over literal facts."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from plangate.evaluation.run.decision import EvaluationInput, decide, required_activation
from plangate.evaluation.run.protocol import Activation, TrialOutcome, TrialStatus
from plangate.verdict import Reason
from support.run_decision import (
    BASE_REF,
    CAND_REF,
    D2,
    FIXTURES,
    GOOD,
    TARGET,
    TESTS,
    D,
    evaluation,
    plan,
    trial,
    trials,
    with_judgement,
)

# -- PASS ----------------------------------------------------------------------


def test_pass_when_every_condition_holds() -> None:
    result = decide(evaluation())
    assert result.verdict == "PASS", result.codes
    assert result.codes == (
        "KNOWN_BAD_STOPPED",
        "NEGATIVE_CONTROL_PASSED",
        "ACTIVATION_CONFIRMED",
        "DETECTION_POWER_KEPT",
        "THRESHOLDS_MET",
    )
    assert result.facts["production_promotion_executed"] is False
    assert result.facts["critical_regressions"] == []
    assert result.facts["metrics"]["known_bad_stop_rate"] == 1.0


# -- FAIL ----------------------------------------------------------------------


def test_known_bad_not_stopped_in_one_trial_fails() -> None:
    result = decide(evaluation(trials=with_judgement("kb", "candidate", "passed", 2)))
    assert result.verdict == "FAIL"
    assert "KNOWN_BAD_NOT_STOPPED" in result.codes
    assert "known_bad_not_stopped" in result.facts["critical_regressions"]


def test_negative_control_blocked_fails() -> None:
    result = decide(evaluation(trials=with_judgement("nc", "candidate", "stopped")))
    assert result.verdict == "FAIL"
    assert "NEGATIVE_CONTROL_REGRESSION" in result.codes


def test_detection_below_baseline_fails_even_when_incident_stopped() -> None:
    table = dict(GOOD, m2=("stopped", "passed"))
    result = decide(evaluation(trials=trials(table)))
    assert result.verdict == "FAIL"
    assert result.codes == ("BASELINE_DETECTION_POWER_REGRESSION",)
    assert result.facts["detection"]["baseline_detected"] == ["m2"]
    assert result.facts["detection"]["candidate_detected"] == ["m1"]


def test_candidate_credited_only_with_detection_in_every_trial() -> None:
    result = decide(evaluation(trials=with_judgement("m2", "candidate", "passed", 2)))
    assert "BASELINE_DETECTION_POWER_REGRESSION" in result.codes


def test_false_positive_regression_fails() -> None:
    result = decide(evaluation(trials=with_judgement("pos", "candidate", "stopped")))
    assert result.verdict == "FAIL"
    assert "FALSE_POSITIVE_REGRESSION" in result.codes


def test_false_negative_regression_fails() -> None:
    result = decide(evaluation(trials=with_judgement("neg", "candidate", "passed")))
    assert result.verdict == "FAIL"
    assert "FALSE_NEGATIVE_REGRESSION" in result.codes


def test_regression_fixture_outcome_change_fails() -> None:
    result = decide(evaluation(trials=with_judgement("reg", "candidate", "stopped")))
    assert result.verdict == "FAIL"
    assert "REGRESSION_FIXTURE_FAILED" in result.codes


def test_test_strategy_must_detect_every_mutant() -> None:
    table = dict(GOOD, m1=("passed", "passed"))
    ordinary = decide(evaluation(trials=trials(table)))
    assert ordinary.verdict == "PASS"  # m1 was never detected by the baseline either
    strategy = decide(evaluation(trials=trials(table), test_strategy=True))
    assert strategy.verdict == "FAIL"
    assert strategy.codes == ("TEST_STRATEGY_MUTANT_NOT_DETECTED",)


def test_missed_threshold_fails() -> None:
    p = plan(metrics=["latency"], threshold=[{"metric": "latency", "op": "<=", "value": 5}])
    ok = decide(evaluation(plan=p, trials=trials(metrics={"latency": 3.0})))
    assert ok.verdict == "PASS", ok.codes
    bad = decide(evaluation(plan=p, trials=trials(metrics={"latency": 7.0})))
    assert bad.verdict == "FAIL"
    assert bad.codes == ("THRESHOLD_NOT_MET",)


@pytest.mark.parametrize("code", ["SEALED_FIXTURE_MUTATION", "EVAL_HARNESS_FILE_MUTATION"])
def test_tampering_seen_before_use_is_fail_with_human_required(code: str) -> None:
    outcomes = trials()
    outcomes[3] = dataclasses.replace(
        outcomes[3],
        status=TrialStatus.FIXTURE_MISMATCH,
        report=None,
        judgement=None,
        error_code=code,
        detail="digest differs",
    )
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "FAIL"
    assert result.codes[0] == code
    assert result.facts["policy_verdict"] == "HUMAN_REQUIRED"
    assert "sealed_fixture_changed" in result.facts["critical_regressions"]


def test_candidate_updating_a_sealed_fixture_is_refused() -> None:
    result = decide(evaluation(changed_paths=("eval/fixtures/kb.json",)))
    assert result.verdict == "FAIL"
    assert result.codes[0] == "CANDIDATE_UPDATES_SEALED_FIXTURE"
    assert result.facts["policy_verdict"] == "HUMAN_REQUIRED"


# -- INCONCLUSIVE ----------------------------------------------------------------


def test_manifest_identity_unobtainable_is_inconclusive() -> None:
    result = decide(evaluation(candidate_manifest_ref=None))
    assert result.verdict == "INCONCLUSIVE"
    assert "MANIFEST_IDENTITY_UNOBTAINABLE" in result.codes


def test_baseline_manifest_not_the_pinned_one_is_inconclusive() -> None:
    result = decide(evaluation(baseline_manifest_ref=CAND_REF))
    assert result.verdict == "INCONCLUSIVE"
    assert "BASELINE_MANIFEST_BINDING" in result.codes


def test_fewer_completed_trials_than_registered_is_inconclusive() -> None:
    outcomes = trials()
    outcomes[0] = dataclasses.replace(
        outcomes[0],
        status=TrialStatus.CRASHED,
        report=None,
        judgement=None,
        error_code="TRIAL_RUNNER_CRASHED",
    )
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("TRIALS_INCOMPLETE",)


def test_grader_unavailable_is_inconclusive_never_pass() -> None:
    outcomes = trials()
    outcomes[1] = dataclasses.replace(
        outcomes[1], judgement="unavailable", error_code="EVAL_GRADER_UNAVAILABLE"
    )
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE"
    assert "EVAL_GRADER_UNAVAILABLE" in result.codes


@pytest.mark.parametrize("detections", [{}, {TESTS: "error"}])
def test_verifier_unavailable_is_inconclusive(detections: dict[str, str]) -> None:
    result = decide(evaluation(trials=trials(detections=detections)))
    assert result.verdict == "INCONCLUSIVE"
    assert "EVAL_VERIFIER_UNAVAILABLE" in result.codes


def test_verifier_candidate_needs_influenced_decision() -> None:
    result = decide(evaluation(trials=trials(level="produced_evidence")))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("ACTIVATION_INSUFFICIENT",)
    assert result.facts["activation"]["required_level"] == "influenced_decision"


def test_general_candidate_needs_fired() -> None:
    prompt = {TARGET: "prompt", TESTS: "verifier"}
    fired = decide(evaluation(component_types=prompt, trials=trials(level="fired")))
    assert fired.verdict == "PASS", fired.codes
    registered = decide(evaluation(component_types=prompt, trials=trials(level="registered")))
    assert registered.verdict == "INCONCLUSIVE"
    assert registered.codes == ("ACTIVATION_INSUFFICIENT",)


def test_required_activation_takes_the_stricter_level() -> None:
    assert required_activation("installed", judge_candidate=False) == "fired"
    assert required_activation("produced_evidence", judge_candidate=False) == "produced_evidence"
    assert required_activation("fired", judge_candidate=True) == "influenced_decision"
    assert required_activation("bogus", judge_candidate=False) == "fired"


def test_baseline_not_reproducing_the_miss_is_inconclusive() -> None:
    result = decide(evaluation(trials=with_judgement("kb", "baseline", "stopped")))
    assert result.verdict == "INCONCLUSIVE"
    assert "BASELINE_MISS_NOT_REPRODUCED" in result.codes


def test_negative_control_failing_on_baseline_is_inconclusive() -> None:
    result = decide(evaluation(trials=with_judgement("nc", "baseline", "stopped")))
    assert result.verdict == "INCONCLUSIVE"
    assert "NEGATIVE_CONTROL_BASELINE_INVALID" in result.codes


def test_plan_digest_mismatch_is_inconclusive() -> None:
    result = decide(evaluation(candidate_plan_digest=D))
    assert result.verdict == "INCONCLUSIVE"
    assert "EVALUATION_PLAN_DIGEST_MISMATCH" in result.codes


def test_unpinned_fixture_is_inconclusive() -> None:
    fixtures = [dict(f) for f in FIXTURES]
    fixtures[0]["digest"] = None
    result = decide(evaluation(plan=plan(fixtures=fixtures)))
    assert result.verdict == "INCONCLUSIVE"
    assert "FIXTURE_NOT_PINNED" in result.codes


def test_verifier_candidate_without_known_mutants_is_inconclusive() -> None:
    fixtures = [f for f in FIXTURES if f["role"] != "known_mutant"]
    table = {k: v for k, v in GOOD.items() if not k.startswith("m")}
    result = decide(evaluation(plan=plan(fixtures=fixtures), trials=trials(table)))
    assert result.verdict == "INCONCLUSIVE"
    assert "EVALUATION_PLAN_INCOMPLETE" in result.codes


@pytest.mark.parametrize(("observed", "required"), [("I2", "I3"), ("I0", "I1"), ("I9", "I1")])
def test_independence_insufficient_is_inconclusive(observed: str, required: str) -> None:
    result = decide(evaluation(independence_observed=observed, independence_required=required))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("INDEPENDENCE_INSUFFICIENT",)


def test_pre_registered_metric_that_cannot_be_computed_is_inconclusive() -> None:
    p = plan(metrics=["latency"], threshold=[{"metric": "latency", "op": "<=", "value": 5}])
    result = decide(evaluation(plan=p))
    assert result.verdict == "INCONCLUSIVE"
    assert "METRIC_UNAVAILABLE" in result.codes


def test_evidence_missing_wins_over_a_failed_condition() -> None:
    outcomes = with_judgement("kb", "baseline", "stopped")
    outcomes = [
        trial(t.side, t.fixture_id, t.trial, "stopped")
        if (t.side, t.fixture_id) == ("candidate", "nc")
        else t
        for t in outcomes
    ]
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE"
    assert "NEGATIVE_CONTROL_REGRESSION" in result.facts["fail_codes"]


# -- finality and the gate ---------------------------------------------------------


def test_recorded_inconclusive_is_never_turned_into_pass() -> None:
    result = decide(evaluation(prior_verdicts=("PASS", "INCONCLUSIVE")))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("EVALUATION_ALREADY_INCONCLUSIVE",)


def test_recorded_fail_is_not_rerolled() -> None:
    result = decide(evaluation(prior_verdicts=("FAIL",)))
    assert result.verdict == "FAIL"
    assert result.codes == ("EVALUATION_ALREADY_FAILED",)


def test_recorded_pass_does_not_short_circuit() -> None:
    result = decide(evaluation(prior_verdicts=("PASS",), candidate_manifest_ref=None))
    assert result.verdict == "INCONCLUSIVE"


@pytest.mark.parametrize(
    ("gate", "verdict", "code"),
    [
        ("DENIED", "FAIL", "EVAL_GATE_DENIED"),
        ("HUMAN_REQUIRED", "FAIL", "EVAL_GATE_HUMAN_REQUIRED"),
        ("INCONCLUSIVE", "INCONCLUSIVE", "EVAL_GATE_INCONCLUSIVE"),
        (None, "INCONCLUSIVE", "EVAL_GATE_INCONCLUSIVE"),
    ],
)
def test_gate_refusal_stops_before_paired_evaluation(
    gate: str | None, verdict: str, code: str
) -> None:
    result = decide(evaluation(policy_verdict=gate, gate_reasons=(Reason("X", "y"),)))
    assert result.verdict == verdict
    assert result.codes == (code,)


def test_missing_plan_is_inconclusive() -> None:
    result = decide(evaluation(plan=None, plan_digest=None))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("EVALUATION_PLAN_UNAVAILABLE",)


def test_identity_problem_from_the_service_is_reported_once() -> None:
    problem = Reason("MANIFEST_IDENTITY_UNOBTAINABLE", "no HarnessManifest for abc: why")
    result = decide(evaluation(candidate_manifest_ref=None, setup_problems=(problem,)))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes.count("MANIFEST_IDENTITY_UNOBTAINABLE") == 1
    assert result.reasons[0].message.endswith("why")


def test_activation_must_hold_in_every_known_bad_trial() -> None:
    outcomes = [
        trial(t.side, t.fixture_id, t.trial, str(t.judgement), level="produced_evidence")
        if (t.side, t.fixture_id, t.trial) == ("candidate", "kb", 2)
        else t
        for t in trials()
    ]
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("ACTIVATION_INSUFFICIENT",)
    assert result.facts["activation"]["observed"][TARGET] == "produced_evidence"


def test_baseline_credited_with_a_detection_seen_in_any_trial() -> None:
    # The baseline caught m2 in one of two trials; the candidate never does: still a loss.
    table = dict(GOOD, m2=("passed", "passed"))
    outcomes = [
        trial("baseline", "m2", 1, "stopped")
        if (t.side, t.fixture_id, t.trial) == ("baseline", "m2", 1)
        else t
        for t in trials(table)
    ]
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "FAIL"
    assert result.codes == ("BASELINE_DETECTION_POWER_REGRESSION",)


def test_tampering_reported_by_the_service_is_fail_with_human_required() -> None:
    problem = Reason("BASELINE_WORKTREE_MODIFIED", "the baseline worktree changed")
    result = decide(evaluation(tamper_problems=(problem,)))
    assert result.verdict == "FAIL"
    assert result.codes == ("BASELINE_WORKTREE_MODIFIED",)
    assert result.facts["policy_verdict"] == "HUMAN_REQUIRED"


# -- attacks: claims that must not decide --------------------------------------

PROMPT = "prompt:builder"


def _activation(levels: dict[str, str]) -> list[TrialOutcome]:
    """GOOD trials whose reports carry ``levels`` as the activation evidence."""

    out = []
    for t in trials(GOOD):
        assert t.report is not None
        report = dataclasses.replace(
            t.report,
            activation={cid: Activation(level, ("ref",)) for cid, level in levels.items()},
        )
        out.append(dataclasses.replace(t, report=report))
    return out


def test_activation_of_an_undeclared_changed_verifier_is_checked() -> None:
    # The candidate declares only the prompt as its target (a claim) while the observed
    # diff also changes a verifier. The verifier's activation was never looked at, so a
    # verifier that is merely registered could ride along into a PASS.
    inp = evaluation(
        target_components=(PROMPT,),
        component_types={PROMPT: "prompt", TARGET: "verifier", TESTS: "verifier"},
        changed_components=(PROMPT, TARGET),
        trials=_activation({PROMPT: "influenced_decision", TARGET: "registered"}),
    )
    result = decide(inp)
    assert result.verdict == "INCONCLUSIVE", result.codes
    assert "ACTIVATION_INSUFFICIENT" in result.codes
    assert result.facts["activation"]["observed"][TARGET] == "registered"


def test_declared_and_changed_components_all_active_still_pass() -> None:
    # Control: the same evaluation passes once every changed component shows activation.
    inp = evaluation(
        target_components=(PROMPT,),
        component_types={PROMPT: "prompt", TARGET: "verifier", TESTS: "verifier"},
        changed_components=(PROMPT, TARGET),
        trials=_activation({PROMPT: "influenced_decision", TARGET: "influenced_decision"}),
    )
    result = decide(inp)
    assert result.verdict == "PASS", result.codes
    assert FIXTURES  # the shared fixture table is the one the rules were written against


def test_a_changed_component_the_candidate_removed_is_not_asked_to_act() -> None:
    # A component gone from the candidate manifest cannot show activation; requiring it
    # would make every removal INCONCLUSIVE. Declared targets are still observed.
    inp = evaluation(
        target_components=(TARGET,),
        component_types={PROMPT: "prompt", TARGET: "verifier", TESTS: "verifier"},
        changed_components=(PROMPT, TARGET),
        candidate_components=(TARGET, TESTS),
        trials=_activation({TARGET: "influenced_decision"}),
    )
    assert decide(inp).verdict == "PASS"
    unknown = dataclasses.replace(inp, candidate_components=None)
    assert decide(unknown).verdict == "INCONCLUSIVE"


def test_a_trial_reported_twice_does_not_stand_in_for_a_missing_one() -> None:
    # An executor (a retrying distributed engine, say) hands back candidate/kb/1 twice and
    # never ran candidate/kb/2: two completed judgements, but only one registered trial.

    outcomes = [t for t in trials() if t.key != "candidate/kb/2"]
    outcomes.append(next(t for t in trials() if t.key == "candidate/kb/1"))
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE", result.codes
    assert "TRIAL_OUTCOME_DUPLICATE" in result.codes
    assert "TRIALS_INCOMPLETE" in result.codes


def test_a_trial_number_outside_the_plan_does_not_count() -> None:

    outcomes = [t for t in trials() if t.key != "candidate/kb/2"]
    outcomes.append(trial("candidate", "kb", 7, "stopped"))
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE", result.codes
    assert "TRIALS_INCOMPLETE" in result.codes


# -- pre-registration, interrupted runs, identity before the gate -----------------------


def test_a_decision_under_another_plan_stops_a_new_plan() -> None:
    from plangate.evaluation.run.decision import PriorDecision

    for prior in ("FAIL", "PASS", "INCONCLUSIVE"):
        result = decide(evaluation(other_plan_verdicts=(PriorDecision(D, prior),)))
        assert result.verdict == "INCONCLUSIVE"
        assert result.codes == ("EVAL_PLAN_AFTER_CANDIDATE",)
        assert prior in result.reasons[0].message


@pytest.mark.parametrize(
    ("plan_seq", "first_seq", "refused"),
    [(5, 4, True), (5, 5, False), (5, 6, False), (None, 4, False), (5, None, False)],
)
def test_a_plan_registered_after_the_candidate_was_first_recorded_is_refused(
    plan_seq: int | None, first_seq: int | None, refused: bool
) -> None:
    result = decide(evaluation(plan_seq=plan_seq, candidate_first_seq=first_seq))
    if refused:
        assert result.verdict == "INCONCLUSIVE"
        assert result.codes == ("EVAL_PLAN_AFTER_CANDIDATE",)
    else:
        assert result.verdict == "PASS", result.codes


def test_an_unfinished_run_makes_the_evaluation_inconclusive() -> None:
    result = decide(evaluation(unfinished_runs=(17,)))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("EVALUATION_INTERRUPTED",)
    assert "17" in result.reasons[0].message
    # A recorded decision comes first: finality is about the same evaluation.
    result = decide(evaluation(unfinished_runs=(17,), prior_verdicts=("FAIL",)))
    assert result.codes == ("EVALUATION_ALREADY_FAILED",)


def test_an_unobtainable_candidate_identity_is_inconclusive_even_when_the_gate_refused() -> None:
    problem = Reason("MANIFEST_IDENTITY_UNOBTAINABLE", "no HarnessManifest for abc: unreadable")
    result = decide(
        evaluation(
            candidate_manifest_ref=None,
            setup_problems=(problem,),
            policy_verdict="HUMAN_REQUIRED",
            gate_reasons=(Reason("HARNESS_DEFINITION_UNREADABLE_AT_CANDIDATE", "x"),),
        )
    )
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("MANIFEST_IDENTITY_UNOBTAINABLE",)


def test_decide_before_trials_stops_only_where_no_trial_is_needed() -> None:
    from plangate.evaluation.run.decision import decide_before_trials

    assert decide_before_trials(evaluation(trials=())) is None
    stopped = decide_before_trials(evaluation(trials=(), policy_verdict="DENIED"))
    assert stopped is not None and stopped.verdict == "FAIL"
    assert [r["rule"] for r in stopped.facts["rules"]][-1] == "policy_gate"


def test_every_rule_is_recorded_in_table_order() -> None:
    from plangate.evaluation.run.decision import DECISION_ORDER

    result = decide(evaluation())
    assert [r["rule"] for r in result.facts["rules"]] == list(DECISION_ORDER)
    assert {r["outcome"] for r in result.facts["rules"]} == {"pass"}
    failed = decide(evaluation(trials=with_judgement("kb", "candidate", "passed")))
    by_rule = {r["rule"]: r for r in failed.facts["rules"]}
    assert by_rule["known_bad_stopped"] == {
        "rule": "known_bad_stopped",
        "outcome": "failed",
        "codes": ["KNOWN_BAD_NOT_STOPPED"],
    }


def test_the_documented_decision_order_is_the_table() -> None:
    import re
    from pathlib import Path

    from plangate.evaluation.run.decision import DECISION_ORDER

    doc = (Path(__file__).resolve().parents[4] / "docs" / "evaluation-run.md").read_text()
    section = doc.split("### Decision order", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| \d+ \| `([a-z_]+)` \|", section, flags=re.MULTILINE)
    assert documented == list(DECISION_ORDER)


def test_a_baseline_that_failed_as_a_candidate_under_another_plan_is_refused() -> None:
    from plangate.evaluation.run.decision import PriorDecision

    for prior, refused in (("FAIL", True), ("INCONCLUSIVE", True), ("PASS", False)):
        result = decide(evaluation(baseline_verdicts=(PriorDecision(D, prior),)))
        if refused:
            assert result.codes == ("EVAL_PLAN_AFTER_CANDIDATE",), prior
            assert "baseline" in result.reasons[0].message
        else:
            assert result.verdict == "PASS", result.codes


def test_run_help_lists_the_rule_order(run_cli: Any, tmp_path: Any) -> None:
    from plangate.evaluation.run.decision import DECISION_ORDER

    result = run_cli(tmp_path, "eval", "run", "--help")
    assert result.code == 0
    assert ", ".join(DECISION_ORDER) in " ".join(result.out.split())


# -- what the decision records -------------------------------------------------------


def _without_activation() -> list[TrialOutcome]:
    out = []
    for t in trials():
        assert t.report is not None
        out.append(dataclasses.replace(t, report=dataclasses.replace(t.report, activation={})))
    return out


CRITICAL_CASES: list[tuple[str, EvaluationInput, list[str]]] = [
    (
        "negative control blocked",
        evaluation(trials=with_judgement("nc", "candidate", "stopped")),
        ["negative_control_blocked"],
    ),
    (
        "sealed positive stopped",
        evaluation(trials=with_judgement("pos", "candidate", "stopped")),
        ["negative_control_blocked"],
    ),
    (
        "baseline detection lost",
        evaluation(trials=trials(dict(GOOD, m2=("stopped", "passed")))),
        ["detection_below_baseline"],
    ),
    (
        "sealed negative passed",
        evaluation(trials=with_judgement("neg", "candidate", "passed")),
        ["detection_below_baseline"],
    ),
    (
        "test strategy misses a mutant",
        evaluation(trials=trials(dict(GOOD, m1=("passed", "passed"))), test_strategy=True),
        ["detection_below_baseline"],
    ),
    (
        "candidate updates a sealed fixture",
        evaluation(changed_paths=("eval/fixtures/kb.json",)),
        ["sealed_fixture_changed"],
    ),
    (
        "harness file missing",
        evaluation(tamper_problems=(Reason("EVAL_HARNESS_FILE_MISSING", "grade.py is gone"),)),
        ["sealed_fixture_changed"],
    ),
    (
        "baseline worktree modified",
        evaluation(tamper_problems=(Reason("BASELINE_WORKTREE_MODIFIED", "changed"),)),
        ["sealed_fixture_changed"],
    ),
    (
        "regression fixture changed outcome",
        evaluation(trials=with_judgement("reg", "candidate", "stopped")),
        ["regression_fixture_failed"],
    ),
]


@pytest.mark.parametrize(
    ("inp", "critical"),
    [case[1:] for case in CRITICAL_CASES],
    ids=[case[0] for case in CRITICAL_CASES],
)
def test_every_critical_regression_is_named_in_the_facts(
    inp: EvaluationInput, critical: list[str]
) -> None:
    result = decide(inp)
    assert result.verdict == "FAIL", result.codes
    assert result.facts["critical_regressions"] == critical


def test_a_harness_file_a_trial_finds_missing_is_tampering() -> None:
    outcomes = trials()
    outcomes[3] = dataclasses.replace(
        outcomes[3],
        status=TrialStatus.FIXTURE_MISMATCH,
        report=None,
        judgement=None,
        error_code="EVAL_HARNESS_FILE_MISSING",
        detail="grade.py is gone",
    )
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "FAIL"
    assert result.codes[0] == "EVAL_HARNESS_FILE_MUTATION"
    assert result.facts["policy_verdict"] == "HUMAN_REQUIRED"


def test_a_gate_candidate_needs_influenced_decision() -> None:
    gate = {TARGET: "gate", TESTS: "verifier"}
    result = decide(evaluation(component_types=gate, trials=trials(level="fired")))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("ACTIVATION_INSUFFICIENT",)
    assert result.facts["activation"]["required_level"] == "influenced_decision"


def test_the_plan_can_require_more_activation_than_the_floor() -> None:
    prompt = {TARGET: "prompt", TESTS: "verifier"}
    strict = plan(required_activation="influenced_decision")
    result = decide(evaluation(plan=strict, component_types=prompt, trials=trials(level="fired")))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("ACTIVATION_INSUFFICIENT",)
    assert result.facts["activation"]["required_level"] == "influenced_decision"


def test_a_component_no_known_bad_trial_reports_reached_none() -> None:
    result = decide(evaluation(trials=_without_activation()))
    assert result.codes == ("ACTIVATION_INSUFFICIENT",)
    assert result.facts["activation"]["observed"] == {TARGET: "none"}
    assert result.reasons[0].message.startswith(f"{TARGET} reached none on")
    no_kb = [t for t in trials() if (t.side, t.fixture_id) != ("candidate", "kb")]
    result = decide(evaluation(trials=no_kb))
    assert result.facts["activation"]["observed"] == {TARGET: "none"}
    assert "ACTIVATION_INSUFFICIENT" in result.codes


def test_a_stopped_decision_records_no_policy_verdict() -> None:
    for prior in ("FAIL", "INCONCLUSIVE"):
        result = decide(evaluation(prior_verdicts=(prior,)))
        assert "policy_verdict" in result.facts
        assert result.facts["policy_verdict"] is None


def test_the_rules_fact_names_how_each_rule_ended() -> None:
    def outcomes(inp: EvaluationInput) -> dict[str, str]:
        return {r["rule"]: r["outcome"] for r in decide(inp).facts["rules"]}

    assert outcomes(evaluation(prior_verdicts=("INCONCLUSIVE",))) == {
        "already_decided": "stop:INCONCLUSIVE"
    }
    assert outcomes(evaluation(prior_verdicts=("FAIL",))) == {"already_decided": "stop:FAIL"}
    tampered = outcomes(evaluation(tamper_problems=(Reason("BASELINE_WORKTREE_MODIFIED", "x"),)))
    assert tampered["service_tampering"] == "tamper"
    short = outcomes(evaluation(independence_observed="I2"))
    assert short["preflight"] == "stop:INCONCLUSIVE"
    assert "independence" not in short  # stopped before the rules that read trials
    assert set(short.values()) == {"pass", "stop:INCONCLUSIVE"}


def test_preflight_stops_before_any_trial_and_says_so() -> None:
    from plangate.evaluation.run.decision import decide_before_trials

    short = decide_before_trials(evaluation(independence_observed="I2", trials=()))
    assert short is not None and short.verdict == "INCONCLUSIVE"
    assert short.codes == ("INDEPENDENCE_INSUFFICIENT",)
    assert short.facts["preflight"] is True
    assert "run 'plangate eval run' again" in short.reasons[0].hint
    box = decide_before_trials(
        evaluation(preflight_problems=(Reason("SANDBOX_UNAVAILABLE", "no bwrap"),), trials=())
    )
    assert box is not None and box.codes == ("SANDBOX_UNAVAILABLE",)
    assert decide_before_trials(evaluation(trials=())) is None


@pytest.mark.parametrize(
    ("op", "value", "holds"),
    [
        (">=", 3.0, True),
        (">=", 3.5, False),
        ("<=", 3.0, True),
        ("<=", 2.5, False),
        (">", 2.5, True),
        (">", 3.0, False),
        ("<", 3.5, True),
        ("<", 3.0, False),
        ("==", 3.0, True),
        ("==", 3.5, False),
        ("!=", 4.0, False),
    ],
)
def test_each_threshold_operator(op: str, value: float, holds: bool) -> None:
    p = plan(metrics=["latency"], threshold=[{"metric": "latency", "op": op, "value": value}])
    result = decide(evaluation(plan=p, trials=trials(metrics={"latency": 3.0})))
    if holds:
        assert result.verdict == "PASS", result.codes
    else:
        assert result.codes == ("THRESHOLD_NOT_MET",)


@pytest.mark.parametrize("trials_value", [None, 0])
def test_a_plan_without_a_trial_count_never_completes(trials_value: Any) -> None:
    p = plan()
    if trials_value is None:
        del p["trials"]
    else:
        p["trials"] = trials_value
    result = decide(evaluation(plan=p, trials=trials(n=1)))
    assert result.verdict == "INCONCLUSIVE"
    assert "TRIALS_INCOMPLETE" in result.codes


def test_a_trial_numbered_zero_does_not_count() -> None:
    outcomes = [*trials(), trial("candidate", "kb", 0, "passed")]
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "PASS", result.codes


def test_the_regression_pass_rate_counts_only_judged_fixtures() -> None:
    assert decide(evaluation()).facts["metrics"]["regression_pass_rate"] == 1.0
    changed = decide(evaluation(trials=with_judgement("reg", "candidate", "stopped")))
    assert changed.facts["metrics"]["regression_pass_rate"] == 0.0
    unjudged = [t for t in trials() if (t.side, t.fixture_id) != ("candidate", "reg")]
    result = decide(evaluation(trials=unjudged))
    assert result.facts["metrics"]["regression_pass_rate"] == 0.0
    assert "REGRESSION_FIXTURE_FAILED" not in result.codes


@pytest.mark.parametrize("present", [("plan",), ("digest",)])
def test_a_plan_without_its_digest_or_a_digest_without_its_plan_is_unavailable(
    present: tuple[str],
) -> None:
    inp = evaluation(plan=None) if present == ("digest",) else evaluation(plan_digest=None)
    result = decide(inp)
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("EVALUATION_PLAN_UNAVAILABLE",)


def test_a_gate_refusal_records_the_gate_verdict_and_its_reason_codes() -> None:
    reasons = (Reason("PROTECTED_AUTHORITY_CHANGED", "eval/grader.py"),)
    denied = decide(evaluation(policy_verdict="DENIED", gate_reasons=reasons))
    assert denied.facts["policy_verdict"] == "DENIED"
    assert denied.facts["gate_reason_codes"] == ["PROTECTED_AUTHORITY_CHANGED"]
    unsure = decide(evaluation(policy_verdict="INCONCLUSIVE", gate_reasons=reasons))
    assert unsure.facts["gate_reason_codes"] == ["PROTECTED_AUTHORITY_CHANGED"]
    assert unsure.facts["policy_verdict"] is None


def test_evidence_the_service_could_not_gather_is_inconclusive() -> None:
    problem = Reason("EVAL_WORKTREE_UNAVAILABLE", "the baseline worktree could not be made")
    result = decide(evaluation(setup_problems=(problem,)))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("EVAL_WORKTREE_UNAVAILABLE",)


@pytest.mark.parametrize("role", ["known_bad", "negative_control"])
def test_a_plan_without_a_known_bad_or_a_negative_control_is_incomplete(role: str) -> None:
    fixtures = [f for f in FIXTURES if f["role"] != role]
    kept = {str(f["id"]) for f in fixtures}
    table = {k: v for k, v in GOOD.items() if k in kept}
    result = decide(evaluation(plan=plan(fixtures=fixtures), trials=trials(table)))
    assert result.verdict == "INCONCLUSIVE"
    assert "EVALUATION_PLAN_INCOMPLETE" in result.codes
    incomplete = [r for r in result.reasons if r.code == "EVALUATION_PLAN_INCOMPLETE"]
    assert [r.message for r in incomplete] == [
        f"the plan has no {role} fixture, which this evaluation needs"
    ]


def test_a_sealed_fixture_change_names_the_fixture() -> None:
    result = decide(evaluation(changed_paths=("eval/fixtures/nc.json",)))
    assert result.codes[0] == "CANDIDATE_UPDATES_SEALED_FIXTURE"
    assert "sealed fixture nc (eval/fixtures/nc.json)" in result.reasons[0].message


def test_one_registered_trial_per_fixture_can_pass() -> None:
    result = decide(evaluation(plan=plan(trials=1), trials=trials(n=1)))
    assert result.verdict == "PASS", result.codes


def test_incomplete_trials_name_the_short_slots_and_the_failed_trials() -> None:
    missing = [t for t in trials() if t.key != "candidate/kb/2"]
    result = decide(evaluation(trials=missing))
    assert result.codes == ("TRIALS_INCOMPLETE",)
    assert result.reasons[0].message == (
        "fewer completed trials than registered: candidate/kb: 1/2"
    )
    outcomes = trials()
    outcomes[0] = dataclasses.replace(
        outcomes[0],
        status=TrialStatus.CRASHED,
        report=None,
        judgement=None,
        error_code="TRIAL_RUNNER_CRASHED",
    )
    outcomes[3] = dataclasses.replace(
        outcomes[3], judgement="unavailable", error_code="EVAL_GRADER_UNAVAILABLE"
    )
    result = decide(evaluation(trials=outcomes))
    incomplete = next(r for r in result.reasons if r.code == "TRIALS_INCOMPLETE")
    assert incomplete.message.endswith(f"; failed: {outcomes[0].key} (TRIAL_RUNNER_CRASHED)"), (
        incomplete.message
    )


def test_a_trial_the_grader_could_not_judge_reports_no_verifier() -> None:
    outcomes = trials()
    report = outcomes[1].report
    assert report is not None
    outcomes[1] = dataclasses.replace(
        outcomes[1],
        judgement="unavailable",
        error_code="EVAL_GRADER_UNAVAILABLE",
        report=dataclasses.replace(report, detections={}),
    )
    result = decide(evaluation(trials=outcomes))
    assert "EVAL_GRADER_UNAVAILABLE" in result.codes
    assert "EVAL_VERIFIER_UNAVAILABLE" not in result.codes


def test_a_verifier_that_detected_something_ran() -> None:
    result = decide(evaluation(trials=trials(detections={TESTS: "detected"})))
    assert result.verdict == "PASS", result.codes


def test_a_passing_decision_records_what_it_decided_from() -> None:
    facts = decide(evaluation()).facts
    assert {k: facts[k] for k in list(facts)[:6]} == {
        "candidate_id": "candidate:x:v1",
        "evaluation_plan_digest": D2,
        "candidate_plan_digest": D2,
        "baseline_manifest_ref": BASE_REF,
        "candidate_manifest_ref": CAND_REF,
        "independence": {"observed": "I3", "required": "I3"},
    }
    assert facts["metrics"] == {
        "known_bad_stop_rate": 1.0,
        "negative_control_pass_rate": 1.0,
        "mutant_detection_rate": 1.0,
        "baseline_mutant_detection_rate": 0.5,
        "false_positive_rate": 0.0,
        "false_negative_rate": 0.0,
        "regression_pass_rate": 1.0,
    }
    assert [(row["id"], row["role"]) for row in facts["fixtures"]] == [
        (f["id"], f["role"]) for f in FIXTURES
    ]
    assert facts["fixtures"][0] == {
        "id": "kb",
        "role": "known_bad",
        "baseline": {"completed": 2, "failed": 0, "stopped": 0, "passed": 2},
        "candidate": {"completed": 2, "failed": 0, "stopped": 2, "passed": 0},
    }


def test_false_positive_and_false_negative_rates_count_the_candidates_judgements() -> None:
    positive = decide(evaluation(trials=with_judgement("pos", "candidate", "stopped")))
    assert positive.facts["metrics"]["false_positive_rate"] == 0.5
    negative = decide(evaluation(trials=with_judgement("neg", "candidate", "passed")))
    assert negative.facts["metrics"]["false_negative_rate"] == 0.5


def _with_metric(outcomes: list[TrialOutcome], side: str, value: float) -> list[TrialOutcome]:
    out = []
    for t in outcomes:
        report = t.report
        if t.side == side and report is not None:
            report = dataclasses.replace(report, metrics={"latency": value})
        out.append(dataclasses.replace(t, report=report))
    return out


def test_a_runner_metric_is_the_mean_of_completed_trials_with_its_delta_to_the_baseline() -> None:
    outcomes = _with_metric(_with_metric(trials(), "baseline", 5.0), "candidate", 3.0)
    metrics = decide(evaluation(trials=outcomes)).facts["metrics"]
    assert metrics["latency"] == 3.0
    assert metrics["latency_delta"] == -2.0
    # A trial the grader could not judge does not count, whatever its runner reported.
    ungraded = dataclasses.replace(
        outcomes[1], judgement="unavailable", error_code="EVAL_GRADER_UNAVAILABLE"
    )
    assert ungraded.report is not None
    ungraded = dataclasses.replace(
        ungraded, report=dataclasses.replace(ungraded.report, metrics={"latency": 103.0})
    )
    outcomes[1] = ungraded
    metrics = decide(evaluation(trials=outcomes)).facts["metrics"]
    assert metrics["latency"] == 3.0


def test_a_candidate_naming_no_target_component_is_inconclusive() -> None:
    result = decide(evaluation(target_components=()))
    assert result.verdict == "INCONCLUSIVE"
    assert "ACTIVATION_INSUFFICIENT" in result.codes
    assert any(
        r.message == "the candidate names no target component to observe" for r in result.reasons
    )


def test_decide_before_trials_stops_on_a_recorded_inconclusive() -> None:
    from plangate.evaluation.run.decision import decide_before_trials

    stopped = decide_before_trials(evaluation(trials=(), prior_verdicts=("INCONCLUSIVE",)))
    assert stopped is not None
    assert stopped.verdict == "INCONCLUSIVE"
    assert stopped.codes == ("EVALUATION_ALREADY_INCONCLUSIVE",)
