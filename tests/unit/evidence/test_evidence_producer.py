"""The pure RunEvidence producer: terminal mapping, unavailable matrix, bindings, privacy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plangate.canonical import pretty_bytes
from plangate.errors import UsageError
from plangate.evidence.contract import NON_TERMINAL_STATES, OUTPUT_KEYS, UNAVAILABLE
from plangate.evidence.producer import produce
from plangate.verdict import Reason, Result
from support.evidence import (
    ARTIFACT_BYTES,
    C3_PATH,
    HEAD,
    HV,
    LOG_PATH,
    MERGE_LOG,
    PACKAGE_HASH,
    PLAN_HASH,
    SOURCE,
    TASK,
    injected,
    inputs,
    log,
    merge_ready,
    record,
    state,
)


def ok(result):
    assert result.document is not None, result.result.reasons
    return result.document


def codes(outcome) -> list[str]:
    return [r.code for r in outcome.result.reasons]


# --- terminal_state mapping (reference 7.2, with the merge_ready entry as the last word) ----

TERMINAL_TABLE = [
    ("blocked-no-record", "BLOCKED", None, "BLOCKED"),
    ("blocked-wins-over-merge-ready", "BLOCKED", MERGE_LOG, "BLOCKED"),
    ("c3-human", "HUMAN_ESCALATED", None, "HUMAN_ESCALATED"),
    (
        "c3-human-last-waiting",
        "HUMAN_ESCALATED",
        log(state("WAITING_FOR_CHECKS")),
        "HUMAN_ESCALATED",
    ),
    (
        "last-state-human",
        "AUTO_APPROVED",
        log(state("MERGE_READY"), merge_ready(), state("HUMAN_ESCALATED")),
        "HUMAN_ESCALATED",
    ),
    ("merge-ready", "AUTO_APPROVED", MERGE_LOG, "MERGE_READY"),
]


@pytest.mark.parametrize(
    ("decision", "delivery", "terminal"),
    [pytest.param(d, r, t, id=i) for i, d, r, t in TERMINAL_TABLE],
)
def test_terminal_mapping(decision, delivery, terminal):
    doc = ok(produce(inputs(record(decision), delivery), injected()))
    assert doc["terminal_state"] == terminal


@pytest.mark.parametrize("name", NON_TERMINAL_STATES)
def test_non_terminal_last_state_gives_no_evidence(name):
    outcome = produce(inputs(record(), log(state(name))), injected())
    assert outcome.document is None
    assert outcome.result.verdict == "INCONCLUSIVE"
    assert int(outcome.result.exit_code) == 4
    assert name in outcome.result.reasons[0].message


@pytest.mark.parametrize(
    "delivery",
    [
        None,
        log(state("MERGE_READY")),  # a state entry alone is not a physical merge_ready entry
        log(state("MERGE_READY_CANDIDATE")),
        log(state("MERGE_READY"), merge_ready(), state("WAITING_FOR_CHECKS", head="f" * 40)),
        log(state("MERGE_READY"), merge_ready(head="f" * 40)),  # merge_ready of another head
    ],
    ids=["no-record", "state-without-entry", "candidate", "superseded", "other-head"],
)
def test_merge_ready_needs_a_current_physical_entry(delivery):
    outcome = produce(inputs(record(), delivery), injected())
    assert outcome.document is None
    assert codes(outcome) == ["EVIDENCE_RUN_NOT_TERMINAL"]


# --- the unavailable matrix ----------------------------------------------------------------

PHASE1 = {"replan_count", "cost_metrics"}
MATRIX = [
    (
        "blocked",
        "BLOCKED",
        None,
        {"final_head_sha", "ci_outcomes", "review_findings", "repair_rounds", "quality_metrics"},
    ),
    (
        "human-no-record",
        "HUMAN_ESCALATED",
        None,
        {"final_head_sha", "ci_outcomes", "review_findings", "repair_rounds", "quality_metrics"},
    ),
    (
        "human-with-states",
        "HUMAN_ESCALATED",
        log(state("WAITING_FOR_CHECKS")),
        {"ci_outcomes", "review_findings", "repair_rounds", "quality_metrics"},
    ),
    ("merge-ready", "AUTO_APPROVED", MERGE_LOG, set()),
]


@pytest.mark.parametrize("routing", [None, "[]"], ids=["routing-absent", "routing-empty"])
@pytest.mark.parametrize(
    ("decision", "delivery", "expected"), [pytest.param(d, r, e, id=i) for i, d, r, e in MATRIX]
)
def test_unavailable_matrix(decision, delivery, expected, routing):
    doc = ok(produce(inputs(record(decision), delivery), injected(routing_decisions=routing)))
    want = expected | PHASE1 | ({"routing_decisions"} if routing is None else set())
    assert {k for k, v in doc.items() if v == UNAVAILABLE} == want
    if routing == "[]":
        assert doc["routing_decisions"] == []
    # never padded: nothing that is unavailable shows up as 0, "" or []
    for key in expected:
        assert doc[key] not in (0, "", [], {})


def test_every_output_key_is_present():
    doc = ok(produce(inputs(), injected()))
    assert set(doc) == set(OUTPUT_KEYS)
    assert len(OUTPUT_KEYS) == 24


def test_record_fields_are_carried():
    doc = ok(produce(inputs(), injected()))
    assert doc["task_id"] == TASK
    assert doc["source_sha"] == SOURCE
    assert doc["plan_hash"] == PLAN_HASH
    assert doc["c3_prime_decision_ref"] == {"path": C3_PATH, "plan_package_hash": PACKAGE_HASH}
    assert doc["evidence_refs"] == [C3_PATH, LOG_PATH]
    assert doc["final_head_sha"] == HEAD
    assert [c["name"] for c in doc["ci_outcomes"]] == ["ci", "lint"]
    assert doc["repair_rounds"] == 0
    assert doc["quality_metrics"] == {"first_pass": True, "rounds": 1}
    assert doc["schema_version"] == "1.0"
    assert doc["cause_hypothesis"] is None
    assert doc["observation"]


def test_blocked_record_without_delivery_has_no_record_ref():
    doc = ok(produce(inputs(record("BLOCKED"), None), injected()))
    assert doc["evidence_refs"] == [C3_PATH]
    assert doc["human_interventions"] == [{"kind": "c3_prime_decision", "detail": "BLOCKED"}]


def test_human_state_entries_are_interventions():
    delivery = log(state("HUMAN_ESCALATED", codes=("DELIVERY_ESCALATION_FLAGGED",)))
    doc = ok(produce(inputs(record(), delivery), injected()))
    assert doc["human_interventions"] == [{"kind": "delivery_state", "detail": "HUMAN_ESCALATED"}]
    assert "DELIVERY_ESCALATION_FLAGGED" in doc["observation"]


# --- determinism ---------------------------------------------------------------------------


def test_same_inputs_same_bytes():
    first = pretty_bytes(ok(produce(inputs(), injected())))
    second = pretty_bytes(ok(produce(inputs(), injected())))
    assert first == second
    assert first.endswith(b"\n")


def test_key_order_of_inputs_does_not_matter():
    rec = record()
    reordered = json.dumps(dict(reversed(list(rec.items())))).encode()
    lines = [json.loads(line) for line in MERGE_LOG.decode().splitlines()]
    shuffled = "".join(
        json.dumps(dict(reversed(list(obj.items())))) + "\n" for obj in lines
    ).encode()
    a = ok(produce(inputs(rec), injected()))
    b = ok(produce(inputs(rec, shuffled, record_bytes=reordered), injected()))
    assert pretty_bytes(a) == pretty_bytes(b)


# --- injected values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"run_id": ""},
        {"run_id": "a/b"},
        {"started_at": "2026-12-02 09:00:00"},
        {"now": "2026-12-02T10:00:00.5Z"},
        {"started_at": "2026-12-02T11:00:00Z"},
        {"repository": "owner/plangate"},
        {"repository": ""},
        {"harness_version": "{}"},
        {"harness_version": '{"plugin_version": "1", "cli_version": "1", "corpus_hash": "x"}'},
        {"harness_version": "not json"},
        {"routing_decisions": '{"a": 1}'},
        {"evidence_refs": ("/Users/foo/bar.json",)},
        {"evidence_refs": ("/var/folders/x/y.json",)},
        {"evidence_refs": ("",)},
        {"evidence_refs": ("a/../b.json",)},
        {"pr_number": "7a"},
        {"pr_number": "0"},
        {"observation": "  "},
    ],
)
def test_bad_injected_values_are_usage_errors(changes):
    with pytest.raises(UsageError):
        produce(inputs(), injected(**changes))


def test_relative_evidence_ref_is_kept():
    doc = ok(produce(inputs(), injected(evidence_refs=("reports/run-1.json",))))
    assert doc["evidence_refs"][-1] == "reports/run-1.json"


@pytest.mark.parametrize("key", ["plugin_version", "cli_version", "corpus_hash"])
def test_harness_drift_is_refused_showing_both(key):
    end = json.loads(HV)
    end[key] = "9.9.9" if key != "corpus_hash" else "sha256:" + "f" * 64
    outcome = produce(inputs(), injected(harness_version_end=json.dumps(end)))
    assert codes(outcome) == ["EVIDENCE_HARNESS_DRIFT"]
    assert end[key] in outcome.result.reasons[0].message


def test_harness_end_absent_is_escalated():
    doc = ok(produce(inputs(), injected(harness_version_end=None)))
    assert {"kind": "harness_drift_unchecked", "detail": doc["escalation"][0]["detail"]} in doc[
        "escalation"
    ]
    doc = ok(produce(inputs(), injected()))
    assert doc["escalation"] == []


def test_pr_number_is_a_cross_check_only():
    assert ok(produce(inputs(), injected(pr_number="7")))["repair_rounds"] == 0
    outcome = produce(inputs(), injected(pr_number="1"))
    assert codes(outcome) == ["EVIDENCE_PR_NUMBER_MISMATCH"]
    doc = ok(produce(inputs(record("BLOCKED"), None), injected(pr_number="7")))
    assert doc["repair_rounds"] == UNAVAILABLE
    assert any(e["kind"] == "pr_number_unverified" for e in doc["escalation"])


def test_cause_hypothesis_only_when_injected():
    doc = ok(produce(inputs(), injected(cause_hypothesis="flaky runner")))
    assert doc["cause_hypothesis"] == "flaky runner"


# --- the record: legacy, unverified, decision-only bindings (upstream defect 6) ------------


def test_legacy_record_is_refused():
    outcome = produce(inputs(acceptor=Result("ACCEPTED", (), {"kind": "legacy"})), injected())
    assert codes(outcome) == ["EVIDENCE_LEGACY_RECORD"]


def test_acceptor_rejection_is_refused_with_its_reasons():
    acceptor = Result("REJECTED", (Reason("C3_PLAN_HASH_STALE", "stale"),), {"kind": "c3-prime"})
    outcome = produce(inputs(acceptor=acceptor), injected())
    assert codes(outcome) == ["EVIDENCE_RECORD_NOT_VERIFIED", "C3_PLAN_HASH_STALE"]


def _with_reviewer(rec: dict[str, Any], model: str, **changes: Any) -> dict[str, Any]:
    rec["reviewers"][model].update(changes)
    return rec


DECISION_ONLY_BINDINGS = [
    (
        "verdict-vocabulary",
        lambda r: _with_reviewer(r, "model_a", verdict="maybe"),
        "EVIDENCE_BINDING_VERDICT",
    ),
    (
        "same-evidence",
        lambda r: _with_reviewer(r, "model_b", evidence_ref="reviews/a.md"),
        "EVIDENCE_BINDING_INDEPENDENCE",
    ),
    (
        "same-evidence-dot-slash",
        lambda r: _with_reviewer(r, "model_b", evidence_ref="./reviews/a.md"),
        "EVIDENCE_BINDING_INDEPENDENCE",
    ),
    ("plan-hash", lambda r: {**r, "plan_hash": PLAN_HASH[:-1] + "0"}, "EVIDENCE_BINDING_PLAN_HASH"),
    (
        "package-hash",
        lambda r: {**r, "plan_package_hash": "sha256:" + "0" * 64},
        "EVIDENCE_BINDING_PACKAGE_HASH",
    ),
    (
        "artifact-hash",
        lambda r: {
            **r,
            "artifact_hashes": {**r["artifact_hashes"], "todo.md": "sha256:" + "0" * 64},
        },
        "EVIDENCE_BINDING_ARTIFACTS",
    ),
    (
        "artifact-keys",
        lambda r: {**r, "artifact_hashes": {"plan.md": PLAN_HASH}},
        "EVIDENCE_BINDING_ARTIFACTS",
    ),
    ("trio", lambda r: _with_reviewer(r, "model_a", source_sha="d" * 40), "EVIDENCE_BINDING_TRIO"),
    (
        "reviewers-extra",
        lambda r: {**r, "reviewers": {**r["reviewers"], "model_c": {}}},
        "EVIDENCE_BINDING_REVIEWERS",
    ),
    (
        "snapshot-extra-key",
        lambda r: _with_reviewer(r, "model_a", note="x"),
        "EVIDENCE_BINDING_REVIEWERS",
    ),
    ("source-sha", lambda r: {**r, "source_sha": "XYZ"}, "EVIDENCE_BINDING_SOURCE_SHA"),
    ("task", lambda r: {**r, "task_id": "TASK-0002"}, "EVIDENCE_BINDING_TASK"),
]


@pytest.mark.parametrize("decision", ["BLOCKED", "HUMAN_ESCALATED"])
@pytest.mark.parametrize(
    ("mutate", "code"), [pytest.param(m, c, id=i) for i, m, c in DECISION_ONLY_BINDINGS]
)
def test_decision_only_path_rechecks_every_binding(decision, mutate, code):
    rec = mutate(record(decision))
    # The acceptor is modelled as upstream's, which stops at the decision: only the
    # decision reason. The producer must still find the broken binding itself.
    outcome = produce(
        inputs(
            rec,
            None,
            acceptor=Result(
                "REJECTED", (Reason("C3_DECISION_NOT_APPROVED", "d"),), {"kind": "c3-prime"}
            ),
        ),
        injected(),
    )
    assert outcome.document is None
    assert code in codes(outcome)


def test_auto_approved_with_reject_verdict_is_refused_even_if_accepted():
    rec = _with_reviewer(record(), "model_b", verdict="reject")
    outcome = produce(
        inputs(rec, acceptor=Result("ACCEPTED", (), {"kind": "c3-prime"})), injected()
    )
    assert "EVIDENCE_BINDING_VERDICT" in codes(outcome)


def test_changed_artifact_bytes_are_refused():
    artifacts = dict(ARTIFACT_BYTES)
    artifacts["plan.md"] = b"# edited\n"
    outcome = produce(inputs(artifacts=artifacts), injected())
    assert "EVIDENCE_BINDING_PLAN_HASH" in codes(outcome)


# --- delivery record anomalies and privacy -------------------------------------------------


def test_unknown_record_kind_is_escalated_not_swallowed():
    delivery = log({"kind": "notice", "note": "hello"}, state("MERGE_READY"), merge_ready())
    doc = ok(produce(inputs(record(), delivery), injected()))
    assert {"kind": "unknown_record_kind", "detail": "notice"} in doc["escalation"]
    assert {"kind": "record_notice", "detail": "notice"} in doc["human_interventions"]
    assert "unknown_record_kinds=notice" in doc["observation"]


FORBIDDEN = [
    "file_path",
    "file_paths",
    "stack_trace",
    "stacktrace",
    "command_output",
    "stdout",
    "stderr",
    "raw_response",
    "raw_request",
    "api_key",
    "user_prompt",
    "system_prompt",
    "prompt_text",
    "absolute_path",
    "transcript",
    "token",
    "password",
]
ACCOUNT = ["account", "actor", "author", "github_user", "login", "owner", "user", "username"]


@pytest.mark.parametrize("key", FORBIDDEN + ACCOUNT)
def test_record_entry_with_private_key_is_refused(key):
    delivery = log({"kind": "notice", "nested": {key: "x"}}, state("MERGE_READY"), merge_ready())
    outcome = produce(inputs(record(), delivery), injected())
    assert codes(outcome) == ["EVIDENCE_INPUT_PRIVACY"]
    assert f"record.jsonl: {key}" in outcome.result.reasons[0].message
    assert "'x'" not in outcome.result.reasons[0].message


def test_c3_record_with_account_key_is_refused():
    rec = record(_login="someone")
    rec["reviewers"]["model_a"] = dict(rec["reviewers"]["model_a"])
    outcome = produce(inputs(rec, record_bytes=pretty_bytes({**rec, "author": "x"})), injected())
    assert codes(outcome) == ["EVIDENCE_INPUT_PRIVACY"]
    assert "c3.json: author" in outcome.result.reasons[0].message


def test_routing_decisions_with_private_key_are_refused():
    outcome = produce(inputs(), injected(routing_decisions='[{"route": "a", "user_prompt": "hi"}]'))
    assert codes(outcome) == ["EVIDENCE_INPUT_PRIVACY"]


def test_urls_handles_and_paths_are_redacted_and_escalated():
    doc = ok(
        produce(
            inputs(),
            injected(
                observation="see https://github.com/acme/plangate/pull/940#issuecomment-5140067809 "
                "ping @someone about /Users/me/x.log",
                cause_hypothesis="https://example.com/thing",
                routing_decisions='[{"route": "fast", "why": "see /tmp/a.log"}]',
            ),
        )
    )
    text = json.dumps(doc)
    assert "pr:940" in text and "comment:5140067809" in text
    assert "github.com" not in text and "acme" not in text and "@someone" not in text
    assert "/Users/" not in text and "/tmp/" not in text
    assert doc["cause_hypothesis"] == "ref:redacted"
    kinds = {e["kind"] for e in doc["escalation"]}
    assert {"privacy_url_reduced", "privacy_account_handle", "privacy_absolute_path"} <= kinds


def test_derived_observation_uses_codes_not_messages():
    delivery = log(
        state("WAITING_FOR_CHECKS", codes=("DELIVERY_PLAN_DEVIATION",)),
        state("HUMAN_ESCALATED"),
    )
    doc = ok(produce(inputs(record(), delivery), injected()))
    assert "reasons=DELIVERY_PLAN_DEVIATION" in doc["observation"]
    assert "delivery_plan_deviation" not in doc["observation"]


# --- findings, dispositions (upstream defect 8), rounds ------------------------------------


def test_dispositions_are_canonical_strings_not_reprs():
    delivery = log(
        state("MERGE_READY"),
        merge_ready(
            review_disposition={
                "F1": {"kind": "adopted", "repair_commit": "d" * 40},
                "F2": {"kind": "rejected", "evidence_ref": "e.log"},
            }
        ),
    )
    doc = ok(produce(inputs(record(), delivery), injected()))
    assert doc["review_findings"] == [
        {"id": "F1", "disposition": "adopted:" + "d" * 40},
        {"id": "F2", "disposition": "rejected:e.log"},
    ]
    assert "{'" not in json.dumps(doc)


def _intent_receipt(kind: str, round_no: int, finding_id: str | None = None, pr: int = 7):
    from plangate.delivery.machine import action_id

    payload: dict[str, Any] = {"pr_number": pr, "head_sha": "b" * 40, "round": round_no}
    if finding_id is not None:
        payload.update({"finding_id": finding_id, "finding_type": "lint", "severity": "major"})
    aid = action_id(kind, payload)
    intent = {"kind": "intent", "action_id": aid, "action_kind": kind, "payload": payload}
    receipt = {
        "kind": "receipt",
        "action_id": aid,
        "action_kind": kind,
        "pr_number": pr,
        "head_sha": "b" * 40,
        "round": round_no,
        "result_ref": f"r{round_no}",
    }
    if finding_id is not None:
        receipt["finding_type"] = "lint"
    return intent, receipt


def test_rounds_and_repaired_findings_come_from_receipts():
    i1, r1 = _intent_receipt("repair_ci", 1)
    i2, r2 = _intent_receipt("repair_review", 2, "F7")
    i3, r3 = _intent_receipt("repair_ci", 3, pr=999)
    delivery = log(i1, r1, i2, r2, i3, r3, state("MERGE_READY"), merge_ready(round=2))
    doc = ok(produce(inputs(record(), delivery), injected()))
    assert doc["repair_rounds"] == 2
    assert doc["quality_metrics"] == {"first_pass": False, "rounds": 3}
    assert doc["review_findings"] == [{"id": "F7", "disposition": "repaired"}]


def test_produce_is_pure_source():
    import plangate.evidence.producer as module

    text = Path(module.__file__).read_text()
    for token in (
        "import datetime",
        "import time",
        "import random",
        "import uuid",
        "subprocess",
        "plangate.git",
        "os.environ",
    ):
        assert token not in text
