"""The RunEvidence contract as an ordered table: every field rule, in order, each one able to fail."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plangate.evidence.contract import (
    DOCUMENT_RULES,
    FIELD_RULES,
    NON_TERMINAL_STATES,
    OUTPUT_KEYS,
    PARTIAL_ESCALATIONS,
    REQUIRED_KEYS,
    SCHEMA_VERSION,
    TERMINAL_STATES,
    UNAVAILABLE,
    structure_problems,
    unavailable_paths,
)
from plangate.evidence.producer import produce
from support.evidence import injected, inputs

LIST_FIELDS = ("human_interventions", "escalation")
"""Checked item by item by the kind/detail rule, not by a field rule."""

BAD_VALUE: dict[str, Any] = {
    "run_id": "has space",
    "task_id": "TASK-12",
    "started_at": "2026-01-01 00:00:00",
    "completed_at": 5,
    "repository": "owner/name",
    "source_sha": "ABCDEF1",
    "final_head_sha": "a" * 39,
    "plan_hash": "sha256:xyz",
    "c3_prime_decision_ref": {"path": "../x", "plan_package_hash": "sha256:" + "a" * 64},
    "harness_version": {"plugin_version": "1", "cli_version": "1"},
    "routing_decisions": {},
    "ci_outcomes": [{"name": "", "conclusion": "ok"}],
    "review_findings": [{"id": "1"}],
    "repair_rounds": -1,
    "replan_count": True,
    "terminal_state": "DONE",
    "quality_metrics": {"first_pass": True, "rounds": 0},
    "cost_metrics": [],
    "evidence_refs": [],
    "schema_version": "2.0",
    "observation": None,
    "cause_hypothesis": 3,
}


def good() -> dict[str, Any]:
    outcome = produce(inputs(), injected())
    assert outcome.document is not None
    return copy.deepcopy(outcome.document)


def test_a_produced_document_has_no_problem() -> None:
    assert structure_problems(good()) == []


def test_every_key_has_exactly_one_rule() -> None:
    keys = [rule.key for rule in FIELD_RULES]
    assert len(keys) == len(set(keys))
    assert sorted([*keys, *LIST_FIELDS]) == sorted(OUTPUT_KEYS)


@pytest.mark.parametrize("rule", FIELD_RULES, ids=lambda r: r.key)
def test_each_field_rule_refuses_its_bad_value(rule: Any) -> None:
    doc = good()
    doc[rule.key] = BAD_VALUE[rule.key]
    assert structure_problems(doc) == [f"{rule.key}: {rule.what}"]


def test_problems_come_in_table_order() -> None:
    doc = good()
    for key in ("cause_hypothesis", "run_id", "terminal_state"):
        doc[key] = BAD_VALUE[key]
    doc["extra"] = 1
    doc["escalation"] = [{"kind": "x"}]
    del doc["plan_hash"]
    assert structure_problems(doc) == [
        "unknown key 'extra'",
        "missing required key(s): plan_hash",
        "run_id: 1-128 of A-Z a-z 0-9 . _ : -",
        "terminal_state: one of MERGE_READY, HUMAN_ESCALATED, BLOCKED",
        "cause_hypothesis: a string or null",
        "escalation[0]: must be {kind, detail} strings",
    ]
    assert len(DOCUMENT_RULES) == 4


def test_unavailable_is_accepted_only_where_the_contract_allows_it() -> None:
    allowed = {
        "final_head_sha",
        "routing_decisions",
        "ci_outcomes",
        "review_findings",
        "repair_rounds",
        "replan_count",
        "quality_metrics",
        "cost_metrics",
        # free text or names the word happens to fit
        "run_id",
        "repository",
        "observation",
        "cause_hypothesis",
    }
    for rule in FIELD_RULES:
        doc = good()
        doc[rule.key] = "unavailable"
        assert (structure_problems(doc) == []) == (rule.key in allowed), rule.key


def test_start_after_completion_is_refused_and_annotations_must_be_strings() -> None:
    doc = good()
    doc["started_at"], doc["completed_at"] = "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"
    doc["_note"] = 1
    doc["_ok"] = "fine"
    assert structure_problems(doc) == [
        "annotation '_note' must be a string",
        "started_at: later than completed_at (the producer refuses this)",
    ]


# -- values at the edges of each field rule ---------------------------------------------

ACCEPTED_VALUES: list[tuple[str, Any]] = [
    ("run_id", "a" * 128),
    ("run_id", "run.1_x:y-z"),
    ("source_sha", "abcdef0"),
    ("source_sha", "a" * 40),
    ("final_head_sha", "a" * 64),
    ("final_head_sha", "b" * 40),
    ("repair_rounds", 0),
    ("replan_count", 7),
    ("quality_metrics", {"first_pass": False, "rounds": 1}),
    ("routing_decisions", []),
    ("ci_outcomes", []),
    ("ci_outcomes", [{"name": "ci", "conclusion": "success"}]),
    ("review_findings", [{"id": "F1", "disposition": "adopted"}]),
    ("cost_metrics", {}),
    ("observation", ""),
    ("cause_hypothesis", None),
    ("cause_hypothesis", "flaky network"),
    ("terminal_state", "MERGE_READY"),
    ("terminal_state", "HUMAN_ESCALATED"),
    ("terminal_state", "BLOCKED"),
    ("evidence_refs", ["docs/a.md", "b.log"]),
]


@pytest.mark.parametrize(("key", "value"), ACCEPTED_VALUES)
def test_a_field_accepts_values_at_its_edges(key: str, value: Any) -> None:
    doc = good()
    doc[key] = value
    assert structure_problems(doc) == []


REFUSED_VALUES: list[tuple[str, Any]] = [
    ("run_id", "a" * 129),
    ("run_id", ""),
    ("source_sha", "abcdef"),
    ("source_sha", "a" * 41),
    ("final_head_sha", "a" * 63),
    ("final_head_sha", "A" * 40),
    ("repository", "a" * 201),
    ("quality_metrics", {"first_pass": 1, "rounds": 1}),
    ("quality_metrics", {"first_pass": True, "rounds": True}),
    ("quality_metrics", {"first_pass": True, "rounds": 1, "x": 1}),
    ("quality_metrics", [True, 1]),
    ("ci_outcomes", [["ci", "success"]]),
    ("ci_outcomes", [{"name": "ci", "conclusion": "success", "extra": "x"}]),
    ("ci_outcomes", [{"name": "ci", "conclusion": 1}]),
    ("ci_outcomes", {"name": "ci", "conclusion": "success"}),
    ("review_findings", [{"id": "F1", "disposition": ""}]),
    ("c3_prime_decision_ref", {"path": "a.json", "plan_package_hash": "sha256:x"}),
    (
        "c3_prime_decision_ref",
        {"path": "a.json", "plan_package_hash": "sha256:" + "a" * 64, "x": 1},
    ),
    ("c3_prime_decision_ref", "a.json"),
    (
        "harness_version",
        {"plugin_version": "1 0", "cli_version": "1", "corpus_hash": "sha256:" + "a" * 64},
    ),
    (
        "harness_version",
        {"plugin_version": "1", "cli_version": "", "corpus_hash": "sha256:" + "a" * 64},
    ),
    ("harness_version", {"plugin_version": "1", "cli_version": "1", "corpus_hash": "x"}),
    ("harness_version", "1.0"),
    ("evidence_refs", ["docs/a.md", "../b.log"]),
    ("evidence_refs", "docs/a.md"),
    ("repair_rounds", 1.0),
    ("replan_count", -1),
    ("terminal_state", "MERGE_READY_CANDIDATE"),
    ("schema_version", 1.0),
    ("started_at", "2026-01-01T00:00:00+00:00"),
]


@pytest.mark.parametrize(("key", "value"), REFUSED_VALUES)
def test_a_field_refuses_values_just_past_its_edges(key: str, value: Any) -> None:
    doc = good()
    doc[key] = value
    rule = next(r for r in FIELD_RULES if r.key == key)
    assert structure_problems(doc) == [f"{key}: {rule.what}"]


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        ([], []),
        ([{"kind": "x", "detail": ""}], []),
        ("x", ["{key}: must be an array"]),
        ([{"kind": "", "detail": "d"}], ["{key}[0]: must be {{kind, detail}} strings"]),
        ([{"kind": "k", "detail": 1}], ["{key}[0]: must be {{kind, detail}} strings"]),
        (["kind"], ["{key}[0]: must be {{kind, detail}} strings"]),
        (
            [{"kind": "k", "detail": "d"}, {"kind": "k", "detail": "d", "x": "y"}],
            ["{key}[1]: must be {{kind, detail}} strings"],
        ),
    ],
)
@pytest.mark.parametrize("key", ["human_interventions", "escalation"])
def test_kind_detail_lists(key: str, value: Any, problems: list[str]) -> None:
    doc = good()
    doc[key] = value
    assert structure_problems(doc) == [p.format(key=key) for p in problems]


def test_only_human_interventions_may_be_unavailable() -> None:
    doc = good()
    doc["human_interventions"] = "unavailable"
    assert structure_problems(doc) == []
    doc["escalation"] = "unavailable"
    assert structure_problems(doc) == ["escalation: must be an array"]


def test_optional_keys_may_be_absent_and_required_ones_are_named() -> None:
    doc = good()
    for key in ("observation", "cause_hypothesis", "escalation"):
        del doc[key]
    assert structure_problems(doc) == []
    del doc["run_id"], doc["schema_version"]
    assert structure_problems(doc) == ["missing required key(s): run_id, schema_version"]


def test_equal_start_and_completion_times_are_in_order() -> None:
    doc = good()
    doc["started_at"] = doc["completed_at"] = "2026-01-01T00:00:00Z"
    assert structure_problems(doc) == []
    doc["started_at"] = "2026-01-01T00:00:01Z"
    assert structure_problems(doc) == [
        "started_at: later than completed_at (the producer refuses this)"
    ]
    doc["completed_at"] = "later"
    assert structure_problems(doc) == ["completed_at: YYYY-MM-DDTHH:MM:SSZ"]


def test_the_contracts_vocabularies() -> None:
    assert TERMINAL_STATES == ("MERGE_READY", "HUMAN_ESCALATED", "BLOCKED")
    assert NON_TERMINAL_STATES == (
        "CHECKS_FAILED",
        "CONFLICT",
        "EXEC_RETURN",
        "MERGE_READY_CANDIDATE",
        "REVIEW_REPAIR",
        "WAITING_FOR_CHECKS",
        "WAITING_FOR_REVIEW",
    )
    assert (
        frozenset({"harness_drift_unchecked", "pr_number_unverified", "delivery_record_unanchored"})
        == PARTIAL_ESCALATIONS
    )
    assert (UNAVAILABLE, SCHEMA_VERSION) == ("unavailable", "1.0")
    assert len(REQUIRED_KEYS) == 21 and len(OUTPUT_KEYS) == 24


def test_unavailable_paths_reach_every_depth() -> None:
    value = {
        "a": "unavailable",
        "b": {"c": ["x", "unavailable", {"d": "unavailable"}]},
        "e": "fine",
        "f": 0,
    }
    assert list(unavailable_paths(value)) == ["a", "b.c[1]", "b.c[2].d"]
    assert list(unavailable_paths("unavailable")) == ["<root>"]
    assert list(unavailable_paths(["unavailable"])) == ["[0]"]
    assert list(unavailable_paths({"x": "available"})) == []


def test_the_format_problems_name_the_expected_form() -> None:
    doc = good()
    doc["task_id"], doc["started_at"] = "TASK-1", "yesterday"
    assert structure_problems(doc) == ["task_id: TASK-0000", "started_at: YYYY-MM-DDTHH:MM:SSZ"]
