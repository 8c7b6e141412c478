"""The evaluator selects the plan; a relaxed plan after a FAIL needs a human (pure rules)."""

from __future__ import annotations

from typing import Any

import pytest

from plangate.authority.verify import Verified
from plangate.evaluation.registry.authority import (
    RULES,
    PlanAuthorityFacts,
    authority_label,
    plan_authority_reasons,
)
from plangate.evaluation.registry.selection import (
    PlanOnRecord,
    overlapping_plans,
    relaxations,
    select_plan,
)
from plangate.verdict import Reason


def plan(covers: list[str], **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "plan_id": "p",
        "covers": covers,
        "trials": 3,
        "fixtures": [
            {"id": "kb", "role": "known_bad", "digest": "sha256:" + "1" * 64},
            {"id": "m1", "role": "known_mutant", "digest": "sha256:" + "2" * 64},
        ],
        "verifier_set": ["verifier:a", "verifier:b"],
        "threshold": [{"metric": "known_bad_stop_rate", "op": ">=", "value": 1.0}],
        "critical_regression_conditions": ["known_bad_not_stopped", "detection_below_baseline"],
        "required_activation": "fired",
    }
    return base | over


def rec(digest: str, covers: list[str], seq: int, **over: Any) -> PlanOnRecord:
    return PlanOnRecord(digest, plan(covers, **over), seq)


def test_the_newest_plan_covering_every_changed_path_is_selected() -> None:
    old = rec("old", ["harness/**"], 1)
    new = rec("new", ["harness/**"], 5)
    chosen = select_plan([old, new], {"old": ["harness/a.md"], "new": ["harness/a.md"]})
    assert chosen.plan is not None and chosen.plan.digest == "new"


def test_an_older_plan_is_never_selected_while_a_newer_one_covers() -> None:
    lenient_old = rec("lenient", ["**"], 1, trials=1)
    strict_new = rec("strict", ["harness/prompts/**"], 2)
    chosen = select_plan(
        [lenient_old, strict_new],
        {"lenient": ["harness/prompts/x.md"], "strict": ["harness/prompts/x.md"]},
    )
    assert chosen.plan is not None and chosen.plan.digest == "strict"


def test_a_broader_older_plan_is_selected_when_no_newer_plan_judges_the_paths() -> None:
    docs = rec("docs", ["docs/**"], 2)
    everything = rec("all", ["harness/**"], 1)
    diff = ["harness/prompts/x.md", "harness/skills/y.md"]
    chosen = select_plan([docs, everything], {"docs": diff, "all": diff})
    assert chosen.plan is not None and chosen.plan.digest == "all"
    assert chosen.considered[0]["uncovered"] == diff


def test_an_extra_change_never_buys_an_older_plan() -> None:
    prompts = rec("prompts", ["harness/prompts/**"], 2)
    lenient_everything = rec("all", ["harness/**"], 1, trials=1)
    diff = ["harness/prompts/x.md", "harness/skills/y.md"]
    chosen = select_plan([prompts, lenient_everything], {"prompts": diff, "all": diff})
    assert chosen.plan is None and chosen.problem is not None
    assert chosen.problem.code == "CANDIDATE_SPANS_PLANS"
    assert "harness/prompts/x.md" in chosen.problem.message
    assert "harness/skills/y.md" not in chosen.problem.message.split("judge some of them")[1]


def test_paths_no_plan_covers_are_refused_with_a_code() -> None:
    prompts = rec("prompts", ["harness/prompts/**"], 1)
    chosen = select_plan([prompts], {"prompts": ["eval/grader.py"]})
    assert chosen.plan is None and chosen.problem is not None
    assert chosen.problem.code == "CANDIDATE_PATHS_NOT_COVERED"
    assert "eval/grader.py" in chosen.problem.message
    assert chosen.problem.hint


def test_no_plan_at_all_and_an_unavailable_diff_select_nothing() -> None:
    assert select_plan([], {}).problem == select_plan([], {}).problem
    assert select_plan([], {}).problem is not None
    assert select_plan([], {}).problem.code == "EVAL_NO_PLAN_REGISTERED"  # type: ignore[union-attr]
    only = rec("p", ["**"], 1)
    assert select_plan([only], {"p": None}).plan is None


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"trials": 2}, "trials"),
        (
            {"fixtures": [{"id": "kb", "role": "known_bad", "digest": "sha256:" + "1" * 64}]},
            "fixtures dropped",
        ),
        ({"verifier_set": ["verifier:a"]}, "verifiers dropped"),
        (
            {"threshold": [{"metric": "known_bad_stop_rate", "op": ">=", "value": 0.5}]},
            "threshold relaxed",
        ),
        ({"threshold": [{"metric": "other", "op": ">=", "value": 1.0}]}, "threshold relaxed"),
        ({"critical_regression_conditions": ["known_bad_not_stopped"]}, "critical regression"),
        ({"required_activation": "registered"}, "required_activation"),
    ],
)
def test_each_weaker_item_is_a_relaxation(change: dict[str, Any], word: str) -> None:
    found = relaxations(plan(["**"]), plan(["**"], **change))
    assert any(word in item for item in found), found


def test_a_plan_at_least_as_strict_relaxes_nothing() -> None:
    stricter = plan(
        ["**"],
        trials=5,
        threshold=[{"metric": "known_bad_stop_rate", "op": ">=", "value": 1.0}],
        verifier_set=["verifier:a", "verifier:b", "verifier:c"],
        required_activation="influenced_decision",
    )
    assert relaxations(plan(["**"]), stricter) == []


def test_relaxation_is_judged_against_every_earlier_plan_of_the_component() -> None:
    failed = rec("failed", ["harness/**"], 1)
    same = rec("same", ["harness/**"], 2)
    other = rec("o", ["docs/**"], 3)
    found = overlapping_plans(["harness/prompts/**"], [failed, same, other])
    assert [p.digest for p in found] == ["failed", "same"]


HUMAN = Verified("carol@example.com", "ssh-ed25519", "SHA256:x", ("evaluator",), True)
NOT_HUMAN = HUMAN._replace(human=False)
BAD = Reason("EVAL_PLAN_SIGNER_NOT_AUTHORISED", "alice does not hold evaluator", "")


@pytest.mark.parametrize(
    ("facts", "codes"),
    [
        (PlanAuthorityFacts(False, None, (), ()), []),
        (PlanAuthorityFacts(False, None, ("CLAUDECODE",), ()), ["EVAL_PLAN_AGENT_ENVIRONMENT"]),
        (PlanAuthorityFacts(True, None, (), ()), ["EVAL_PLAN_SIGNATURE_MISSING"]),
        (PlanAuthorityFacts(True, BAD, (), ()), ["EVAL_PLAN_SIGNER_NOT_AUTHORISED"]),
        (PlanAuthorityFacts(True, HUMAN, ("CLAUDECODE",), ()), []),
        (
            PlanAuthorityFacts(False, None, (), ("trials 3 -> 1",)),
            ["EVAL_PLAN_RELAXATION_NEEDS_HUMAN"],
        ),
        (
            PlanAuthorityFacts(True, NOT_HUMAN, (), ("trials 3 -> 1",)),
            ["EVAL_PLAN_RELAXATION_NEEDS_HUMAN"],
        ),
        (PlanAuthorityFacts(True, HUMAN, (), ("trials 3 -> 1",)), []),
    ],
)
def test_plan_registration_rules(facts: PlanAuthorityFacts, codes: list[str]) -> None:
    assert [r.code for r in plan_authority_reasons(facts)] == codes


def test_registration_rules_are_in_their_documented_order_and_labelled() -> None:
    assert [r.name for r in RULES] == [
        "signed_where_a_trust_root_is_in_force",
        "signature_valid_and_by_an_evaluator",
        "no_agent_registers_without_a_trust_root",
        "relaxation_after_fail_signed_by_a_human",
    ]
    assert authority_label(PlanAuthorityFacts(True, HUMAN, (), ())) == "signed:carol@example.com"
    assert authority_label(PlanAuthorityFacts(False, None, (), ())) == "unauthenticated"
