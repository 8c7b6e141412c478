"""Adversarial review of the Promotion Decision rules (pure): claims that must not decide."""

from __future__ import annotations

import dataclasses

from test_evalrun_decision import FIXTURES, GOOD, TARGET, TESTS, evaluation

from plangate.trust.evaluator import decide
from plangate.trust.runner_protocol import Activation, TrialOutcome

PROMPT = "prompt:builder"


def _activation(levels: dict[str, str]) -> list[TrialOutcome]:
    """GOOD trials whose reports carry ``levels`` as the activation evidence."""
    from test_evalrun_decision import trials

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
    from test_evalrun_decision import trials

    outcomes = [t for t in trials() if t.key != "candidate/kb/2"]
    outcomes.append(next(t for t in trials() if t.key == "candidate/kb/1"))
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE", result.codes
    assert "TRIAL_OUTCOME_DUPLICATE" in result.codes
    assert "TRIALS_INCOMPLETE" in result.codes


def test_a_trial_number_outside_the_plan_does_not_count() -> None:
    from test_evalrun_decision import trial, trials

    outcomes = [t for t in trials() if t.key != "candidate/kb/2"]
    outcomes.append(trial("candidate", "kb", 7, "stopped"))
    result = decide(evaluation(trials=outcomes))
    assert result.verdict == "INCONCLUSIVE", result.codes
    assert "TRIALS_INCOMPLETE" in result.codes
