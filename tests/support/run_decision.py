"""Literal facts for the Promotion Decision (plangate.evaluation.run.decision): a plan,
trial outcomes per side and fixture, and an evaluation input that passes every rule."""

from __future__ import annotations

import dataclasses
from typing import Any

from plangate.evaluation.run.decision import EvaluationInput
from plangate.evaluation.run.protocol import Activation, TrialOutcome, TrialReport, TrialStatus

D = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64
BASE_REF = "sha256:" + "b" * 64
CAND_REF = "sha256:" + "c" * 64
TARGET = "verifier:completion-evidence"
TESTS = "verifier:deterministic-tests"

FIXTURES = [
    {"id": "kb", "role": "known_bad", "path": "eval/fixtures/kb.json", "digest": D},
    {"id": "nc", "role": "negative_control", "path": "eval/fixtures/nc.json", "digest": D},
    {"id": "pos", "role": "sealed_positive", "path": "eval/fixtures/pos.json", "digest": D},
    {"id": "neg", "role": "sealed_negative", "path": "eval/fixtures/neg.json", "digest": D},
    {"id": "m1", "role": "known_mutant", "path": "eval/fixtures/m1.json", "digest": D},
    {"id": "m2", "role": "known_mutant", "path": "eval/fixtures/m2.json", "digest": D},
    {"id": "reg", "role": "regression", "path": "eval/fixtures/reg.json", "digest": D},
]

# What a good verifier candidate does: (baseline judgement, candidate judgement).
GOOD = {
    "kb": ("passed", "stopped"),
    "nc": ("passed", "passed"),
    "pos": ("passed", "passed"),
    "neg": ("stopped", "stopped"),
    "m1": ("passed", "stopped"),
    "m2": ("stopped", "stopped"),
    "reg": ("passed", "passed"),
}


def plan(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "baseline_manifest_ref": BASE_REF,
        "fixtures": FIXTURES,
        "verifier_set": [TESTS],
        "trials": 2,
        "metrics": ["known_bad_stop_rate", "negative_control_pass_rate"],
        "threshold": [
            {"metric": "known_bad_stop_rate", "op": ">=", "value": 1.0},
            {"metric": "negative_control_pass_rate", "op": ">=", "value": 1.0},
        ],
        "critical_regression_conditions": ["known_bad_not_stopped"],
        "required_activation": "fired",
    }
    base.update(overrides)
    return base


def trial(
    side: str,
    fixture: str,
    number: int,
    judgement: str,
    *,
    level: str = "influenced_decision",
    detections: dict[str, str] | None = None,
    status: TrialStatus = TrialStatus.COMPLETED,
    error_code: str = "",
    metrics: dict[str, float] | None = None,
) -> TrialOutcome:
    role = next(f["role"] for f in FIXTURES if f["id"] == fixture)
    report = None
    if status is TrialStatus.COMPLETED:
        report = TrialReport(
            side=side,
            fixture_id=fixture,
            role=role,
            trial=number,
            outcome="MERGE_READY" if judgement == "passed" else "BLOCKED",
            stop_reasons=() if judgement == "passed" else ("VERIFIER_UNAVAILABLE",),
            metrics=metrics or {},
            activation={TARGET: Activation(level, ("ref",))},
            detections=detections if detections is not None else {TESTS: "not_detected"},
        )
    return TrialOutcome(
        key=f"{side}/{fixture}/{number}",
        side=side,
        fixture_id=fixture,
        role=role,
        trial=number,
        status=status,
        report=report,
        judgement=judgement if status is TrialStatus.COMPLETED else None,
        error_code=error_code,
    )


def trials(
    table: dict[str, tuple[str, str]] | None = None, n: int = 2, **kw: Any
) -> list[TrialOutcome]:
    out = []
    for fixture, (base, cand) in (table or GOOD).items():
        for number in range(1, n + 1):
            out.append(trial("baseline", fixture, number, base, **kw))
            out.append(trial("candidate", fixture, number, cand, **kw))
    return out


def evaluation(**overrides: Any) -> EvaluationInput:
    base = EvaluationInput(
        candidate_id="candidate:x:v1",
        candidate_plan_digest=D2,
        plan=plan(),
        plan_digest=D2,
        baseline_manifest_ref=BASE_REF,
        candidate_manifest_ref=CAND_REF,
        target_components=(TARGET,),
        component_types={TARGET: "verifier", TESTS: "verifier"},
        changed_paths=("harness/verifiers/completion_evidence.py",),
        policy_verdict="AUTO_APPROVED",
        trials=trials(),
        independence_observed="I3",
        independence_required="I3",
    )
    return dataclasses.replace(base, **overrides)


def with_judgement(fixture: str, side: str, judgement: str, number: int = 1) -> list[TrialOutcome]:
    out = []
    for t in trials():
        if t.fixture_id == fixture and t.side == side and t.trial == number:
            out.append(trial(side, fixture, number, judgement))
        else:
            out.append(t)
    return out
