"""The RunEvidence verifier: bindings re-derived, completeness derived, schema published."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import jsonschema
import pytest

from plangate.canonical import pretty_bytes
from plangate.delivery.log import rows_bytes, seal_entries
from plangate.evidence.contract import REQUIRED_KEYS
from plangate.evidence.producer import produce
from plangate.evidence.verifier import verify_document
from support.evidence import (
    MERGE_LOG,
    PLAN_HASH,
    injected,
    inputs,
    log,
    merge_ready,
    record,
    state,
)


def schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files("plangate.schemas").joinpath(name).read_text())


def produced(**changes: Any) -> dict[str, Any]:
    outcome = produce(inputs(), injected(**changes))
    assert outcome.document is not None, outcome.result.reasons
    return copy.deepcopy(outcome.document)


def complete() -> dict[str, Any]:
    """A synthetic complete EV: Phase 1 never observes replans or costs, so set them."""
    doc = produced()
    doc["replan_count"] = 0
    doc["cost_metrics"] = {"usd": 0}
    return doc


def verify(doc: dict[str, Any], task_inputs=None):
    return verify_document(pretty_bytes(doc), task_inputs or inputs())


def test_synthetic_complete_evidence_is_complete():
    result = verify(complete())
    assert (result.verdict, int(result.exit_code)) == ("COMPLETE", 0)


def test_real_evidence_is_partial_naming_the_fields():
    result = verify(produced())
    assert (result.verdict, int(result.exit_code)) == ("PARTIAL", 4)
    assert result.facts["unavailable"] == ["cost_metrics", "replan_count"]
    assert "cost_metrics" in result.reasons[0].message


def test_routing_alone_unavailable_is_partial():
    doc = complete()
    doc["routing_decisions"] = "unavailable"
    result = verify(doc)
    assert result.verdict == "PARTIAL"
    assert result.facts["unavailable"] == ["routing_decisions"]


def test_nested_unavailable_is_found():
    doc = complete()
    doc["cost_metrics"] = {"usd": "unavailable"}
    assert verify(doc).facts["unavailable"] == ["cost_metrics.usd"]


@pytest.mark.parametrize(
    ("kind", "verdict"),
    [
        ("harness_drift_unchecked", "PARTIAL"),
        ("pr_number_unverified", "PARTIAL"),
        ("privacy_url_reduced", "COMPLETE"),
    ],
)
def test_escalations_that_leave_bindings_unverified_make_it_partial(kind, verdict):
    doc = complete()
    doc["escalation"] = [{"kind": kind, "detail": "x"}]
    assert verify(doc).verdict == verdict


def test_blocked_evidence_is_partial_naming_delivery_fields():
    outcome = produce(inputs(record("BLOCKED"), None), injected())
    assert outcome.document is not None
    result = verify(outcome.document, inputs(record("BLOCKED"), None))
    assert result.verdict == "PARTIAL"
    assert {
        "final_head_sha",
        "ci_outcomes",
        "review_findings",
        "repair_rounds",
        "quality_metrics",
    } <= set(result.facts["unavailable"])


@pytest.mark.parametrize("key", REQUIRED_KEYS)
def test_each_required_key_removed_is_rejected(key):
    doc = complete()
    del doc[key]
    result = verify(doc)
    assert result.verdict == "REJECTED"
    assert key in result.reasons[0].message


TAMPER = [
    (
        "plan-hash-last-char",
        lambda d: d.update(plan_hash=PLAN_HASH[:-1] + ("0" if PLAN_HASH[-1] != "0" else "1")),
    ),
    ("source-sha", lambda d: d.update(source_sha="fff9999")),
    ("final-head", lambda d: d.update(final_head_sha="f" * 40)),
    ("repair-rounds", lambda d: d.update(repair_rounds=99)),
    ("task-id", lambda d: d.update(task_id="TASK-0002")),
    ("unknown-key", lambda d: d.update(evidence_status="complete")),
    ("annotation-not-string", lambda d: d.update(_note=1)),
    ("terminal", lambda d: d.update(terminal_state="HUMAN_ESCALATED")),
    ("ci-outcomes", lambda d: d["ci_outcomes"].pop()),
    ("quality", lambda d: d.update(quality_metrics={"first_pass": False, "rounds": 1})),
    (
        "c3-ref-path",
        lambda d: d["c3_prime_decision_ref"].update(
            path="docs/working/TASK-0002/approvals/c3.json"
        ),
    ),
    (
        "c3-ref-hash",
        lambda d: d["c3_prime_decision_ref"].update(plan_package_hash="sha256:" + "0" * 64),
    ),
    ("evidence-refs", lambda d: d.update(evidence_refs=["other.json"])),
    ("interventions", lambda d: d.update(human_interventions=[{"kind": "x", "detail": "y"}])),
    ("schema-version", lambda d: d.update(schema_version="2.0")),
    ("absolute-ref", lambda d: d["evidence_refs"].append("/etc/passwd")),
    ("url-in-observation", lambda d: d.update(observation="see https://github.com/x")),
    ("account-key", lambda d: d.update(cost_metrics={"login": "me"})),
    ("handle", lambda d: d.update(cause_hypothesis="ask @someone")),
    ("repository-owner", lambda d: d.update(repository="acme/plangate")),
]


@pytest.mark.parametrize("mutate", [pytest.param(m, id=i) for i, m in TAMPER])
def test_tampering_is_rejected(mutate):
    doc = complete()
    mutate(doc)
    result = verify(doc)
    assert (result.verdict, int(result.exit_code)) == ("REJECTED", 1), result


def test_dropping_a_derived_escalation_is_rejected():
    delivery = log({"kind": "notice"}, state("MERGE_READY"), merge_ready())
    task_inputs = inputs(record(), delivery)
    doc = produce(task_inputs, injected()).document
    assert doc is not None
    assert verify(doc, task_inputs).verdict == "PARTIAL"
    doc = copy.deepcopy(doc)
    doc["escalation"] = []
    assert verify(doc, task_inputs).verdict == "REJECTED"


def test_tampered_delivery_record_is_rejected():
    doc = complete()
    lines = [json.loads(line) for line in MERGE_LOG.decode().splitlines()]
    lines[-1]["record"]["round"] = 1
    tampered = "".join(json.dumps(x) + "\n" for x in lines).encode()
    result = verify(doc, inputs(record(), tampered))
    assert result.verdict == "REJECTED"
    assert result.codes == ("DELIVERY_RECORD_TAMPERED",)


def test_record_that_moved_on_is_rejected():
    doc = complete()
    rows = seal_entries(
        [state("MERGE_READY"), merge_ready(), state("WAITING_FOR_CHECKS")],
        prev=None,
        at="2026-12-02T10:00:00Z",
    )
    result = verify(doc, inputs(record(), rows_bytes(rows)))
    assert result.codes == ("EVIDENCE_RUN_NOT_TERMINAL",)


def test_stale_plan_is_rejected():
    from support.evidence import ARTIFACT_BYTES

    artifacts = dict(ARTIFACT_BYTES)
    artifacts["plan.md"] = b"changed\n"
    result = verify(complete(), inputs(artifacts=artifacts))
    assert result.verdict == "REJECTED"


@pytest.mark.parametrize("raw", [b"", b"[]", b'{"a": 1, "a": 1}', b"{} x"])
def test_malformed_documents_are_rejected(raw):
    assert verify_document(raw, inputs()).verdict == "REJECTED"


def test_arbiter_record_is_rejected():
    arbiter = dict.fromkeys(
        (
            "boundary_check",
            "class_check",
            "decision",
            "issued_by",
            "lite_check",
            "policy_ref",
            "target_sha",
            "timestamp",
            "w_check",
        ),
        "x",
    )
    assert verify(arbiter).verdict == "REJECTED"


# --- the published schema ---------------------------------------------------------------


def test_schema_contract():
    doc = schema("run-evidence.schema.json")
    jsonschema.Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["additionalProperties"] is False
    assert doc["patternProperties"] == {"^_": {"type": "string"}}
    assert doc["required"] == list(REQUIRED_KEYS)
    assert len(doc["required"]) == 21
    assert "evidence_status" not in doc["properties"]
    from plangate.forbidden_keys import ACCOUNT_KEYS, PRIVATE_KEYS, SECRET_KEYS

    text = json.dumps(doc)
    for key in SECRET_KEYS | PRIVATE_KEYS | ACCOUNT_KEYS:
        assert f'"{key}":' not in text


@pytest.mark.parametrize(
    ("decision", "delivery"),
    [
        ("AUTO_APPROVED", MERGE_LOG),
        ("BLOCKED", None),
        ("HUMAN_ESCALATED", log(state("WAITING_FOR_CHECKS"))),
    ],
)
def test_produced_documents_validate_against_the_schema(decision, delivery):
    outcome = produce(inputs(record(decision), delivery), injected(routing_decisions=None))
    assert outcome.document is not None
    jsonschema.Draft202012Validator(schema("run-evidence.schema.json")).validate(outcome.document)


def test_schema_and_runtime_checker_agree_on_tampering():
    validator = jsonschema.Draft202012Validator(schema("run-evidence.schema.json"))
    for _, mutate in TAMPER[:8]:
        doc = complete()
        mutate(doc)
        # the schema catches format problems; the verifier catches those and binding ones
        assert verify(doc).verdict == "REJECTED"
        if (
            any(k in doc for k in ("evidence_status", "_note"))
            or doc.get("schema_version") != "1.0"
        ):
            assert not validator.is_valid(doc)
