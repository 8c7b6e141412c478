"""The RunEvidence contract as an ordered table: every field rule, in order, each one able to fail."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plangate.evidence.contract import (
    DOCUMENT_RULES,
    FIELD_RULES,
    OUTPUT_KEYS,
    structure_problems,
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
    allowed = {"final_head_sha", "routing_decisions", "ci_outcomes", "review_findings",
               "repair_rounds", "replan_count", "quality_metrics", "cost_metrics",
               # free text or names the word happens to fit
               "run_id", "repository", "observation", "cause_hypothesis"}
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
