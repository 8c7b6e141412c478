"""The delivery state machine, rule by rule, with literal snapshots (reference 6.3, 8.7)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plangate.delivery.log import parse_record_bytes, rows_bytes, seal_entries
from plangate.delivery.machine import (
    Ancestry,
    BoundRecord,
    Protection,
    Scope,
    action_id,
    assess,
    completed_rounds,
    exit_code_for_state,
)
from plangate.delivery.snapshot import parse_snapshot

HEAD = "a" * 40
OLD = "b" * 40
SOURCE = "c" * 40
RECORD = BoundRecord("TASK-0001", SOURCE, "sha256:" + "1" * 64, "sha256:" + "2" * 64)
PROTECTION = Protection(((".claude/**", "settings"), ("**/approvals/**", "approval")), "explicit")
SCOPE = Scope(("src/app/**", "docs/notes.md"))
DESCENDS = Ancestry("descends", "measured")
NOW = "2026-12-02T10:00:00Z"

BASE: dict[str, Any] = {
    "task_id": "TASK-0001",
    "pr_number": 7,
    "head_sha": HEAD,
    "mergeable": "MERGEABLE",
    "checks": [{"name": "ci", "sha": HEAD, "conclusion": "success"}],
    "review": {"state": "approved", "sha": HEAD},
    "findings": [],
    "changed_files": ["src/app/hello.py"],
    "escalation_flags": [],
    "dod_evaluated": True,
}


def snap(**overrides: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    out.update(overrides)
    return out


def run(
    snapshot: dict[str, Any],
    entries: tuple[dict[str, Any], ...] = (),
    *,
    scope: Scope = SCOPE,
    ancestry: Ancestry = DESCENDS,
):
    return assess(parse_snapshot(snapshot), entries, scope=scope, ancestry=ancestry, record=RECORD, protection=PROTECTION)


def receipt(action_kind: str, round_no: Any, *, pr: int = 7, finding_type: str | None = None):
    body: dict[str, Any] = {
        "kind": "receipt",
        "action_id": "sha256:" + "9" * 64,
        "action_kind": action_kind,
        "pr_number": pr,
        "head_sha": OLD,
        "round": round_no,
        "result_ref": "commit:" + "d" * 7,
    }
    if finding_type is not None:
        body["finding_type"] = finding_type
    return body


def chain(*bodies: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Seal bodies into a valid record (round-tripped through bytes)."""
    rows = seal_entries(list(bodies), prev=None, at=NOW)
    return parse_record_bytes(rows_bytes(rows))


FAIL = [{"name": "ci", "sha": HEAD, "conclusion": "failure"}]
MAJOR = {"id": "F1", "finding_type": "lint", "severity": "major", "disposition": None}
MINOR = {"id": "F2", "finding_type": "style", "severity": "minor", "disposition": None}

# (id, snapshot, entries, expected state, expected first reason code)
STATE_TABLE = [
    ("merge-ready", snap(), (), "MERGE_READY", None),
    (
        "plan-deviation",
        snap(changed_files=["src/app/x.py", "bin/plangate"]),
        (),
        "EXEC_RETURN",
        "DELIVERY_PLAN_DEVIATION",
    ),
    (
        "glob-is-segment-aware",
        snap(changed_files=["src/application.py"]),
        (),
        "EXEC_RETURN",
        "DELIVERY_PLAN_DEVIATION",
    ),
    (
        "scope-is-case-sensitive",
        snap(changed_files=["SRC/app/x.py"]),
        (),
        "EXEC_RETURN",
        "DELIVERY_PLAN_DEVIATION",
    ),
    (
        "non-canonical-path",
        snap(changed_files=["src/app/../../bin/x"]),
        (),
        "EXEC_RETURN",
        "DELIVERY_PATH_NOT_CANONICAL",
    ),
    (
        "snapshot-scope-mismatch",
        snap(allowed_paths=["**"]),
        (),
        "EXEC_RETURN",
        "DELIVERY_SCOPE_MISMATCH",
    ),
    (
        "snapshot-scope-equal",
        snap(allowed_paths=["docs/notes.md", "src/app/**"]),
        (),
        "MERGE_READY",
        None,
    ),
    (
        "deviation-before-flags",
        snap(changed_files=["bin/x"], escalation_flags=["touches_ho"]),
        (),
        "EXEC_RETURN",
        "DELIVERY_PLAN_DEVIATION",
    ),
    (
        "escalation-flag",
        snap(escalation_flags=["touches_ho"]),
        (),
        "HUMAN_ESCALATED",
        "DELIVERY_ESCALATION_FLAGGED",
    ),
    (
        "empty-changed-files",
        snap(changed_files=[]),
        (),
        "HUMAN_ESCALATED",
        "DELIVERY_CHANGED_FILES_EMPTY",
    ),
    (
        "unknown-conclusion",
        snap(checks=[{"name": "ci", "sha": HEAD, "conclusion": "weird"}]),
        (),
        "HUMAN_ESCALATED",
        "DELIVERY_CHECK_CONCLUSION_UNKNOWN",
    ),
    (
        "unknown-conclusion-on-old-head-ignored",
        snap(
            checks=[
                {"name": "ci", "sha": OLD, "conclusion": "weird"},
                {"name": "ci", "sha": HEAD, "conclusion": "success"},
            ]
        ),
        (),
        "MERGE_READY",
        None,
    ),
    (
        "taxonomy-code",
        snap(checks=FAIL, ci_failure_taxonomy="code"),
        (),
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    (
        "taxonomy-flaky",
        snap(checks=FAIL, ci_failure_taxonomy="flaky"),
        (),
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    (
        "taxonomy-environment",
        snap(checks=FAIL, ci_failure_taxonomy="environment"),
        (),
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    *[
        (
            f"taxonomy-{name}",
            snap(checks=FAIL, ci_failure_taxonomy=value),
            (),
            "HUMAN_ESCALATED",
            "DELIVERY_CI_TAXONOMY_UNVERIFIABLE",
        )
        for name, value in (
            ("permission", "permission"),
            ("unknown", "unknown"),
            ("bogus", "bogus"),
            ("none", None),
        )
    ],
    (
        "round-limit",
        snap(checks=FAIL, ci_failure_taxonomy="code"),
        chain(receipt("repair_ci", 1), receipt("repair_ci", 2), receipt("repair_ci", 3)),
        "HUMAN_ESCALATED",
        "DELIVERY_ROUND_LIMIT",
    ),
    (
        "third-round-allowed",
        snap(checks=FAIL, ci_failure_taxonomy="code"),
        chain(receipt("repair_ci", 1), receipt("repair_ci", 2)),
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    (
        "other-pr-rounds-ignored",
        snap(checks=FAIL, ci_failure_taxonomy="code"),
        chain(
            receipt("repair_ci", 1, pr=999),
            receipt("repair_ci", 2, pr=999),
            receipt("repair_ci", 3, pr=999),
        ),
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    (
        "null-round-ignored",
        snap(checks=FAIL, ci_failure_taxonomy="code"),
        chain(receipt("repair_ci", None), receipt("repair_ci", 2), receipt("repair_ci", 1)),
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    (
        "recurrence",
        snap(findings=[MAJOR]),
        chain(receipt("repair_review", 1, finding_type="lint")),
        "REVIEW_REPAIR",
        "DELIVERY_FINDING_RECURRENCE",
    ),
    (
        "recurrence-other-pr-ignored",
        snap(findings=[MAJOR]),
        chain(receipt("repair_review", 1, pr=999, finding_type="lint")),
        "REVIEW_REPAIR",
        "DELIVERY_FINDINGS_UNRESOLVED",
    ),
    (
        "recurrence-before-ci",
        snap(findings=[MAJOR], checks=FAIL, ci_failure_taxonomy="code"),
        chain(receipt("repair_review", 1, finding_type="lint")),
        "REVIEW_REPAIR",
        "DELIVERY_FINDING_RECURRENCE",
    ),
    (
        "ci-before-conflict",
        snap(checks=FAIL, ci_failure_taxonomy="code", mergeable="CONFLICTING"),
        (),
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    ("conflicting", snap(mergeable="CONFLICTING"), (), "CONFLICT", "DELIVERY_CONFLICT"),
    ("mergeable-unknown", snap(mergeable="UNKNOWN"), (), "CONFLICT", "DELIVERY_CONFLICT"),
    (
        "resolution-incomplete",
        snap(conflict_resolution={"base_sha": OLD, "head_sha": HEAD, "result_sha": ""}),
        (),
        "CONFLICT",
        "DELIVERY_CONFLICT",
    ),
    (
        "resolution-complete",
        snap(conflict_resolution={"base_sha": OLD, "head_sha": HEAD, "result_sha": SOURCE}),
        (),
        "MERGE_READY",
        None,
    ),
    (
        "conflict-before-findings",
        snap(mergeable="CONFLICTING", findings=[MAJOR]),
        (),
        "CONFLICT",
        "DELIVERY_CONFLICT",
    ),
    (
        "major-unresolved",
        snap(findings=[MAJOR]),
        (),
        "REVIEW_REPAIR",
        "DELIVERY_FINDINGS_UNRESOLVED",
    ),
    (
        "minor-unresolved",
        snap(findings=[MINOR]),
        (),
        "REVIEW_REPAIR",
        "DELIVERY_FINDINGS_UNRESOLVED",
    ),
    (
        "adopted-without-commit",
        snap(findings=[{**MAJOR, "disposition": {"kind": "adopted", "repair_commit": ""}}]),
        (),
        "REVIEW_REPAIR",
        "DELIVERY_FINDINGS_UNRESOLVED",
    ),
    (
        "rejected-empty-evidence",
        snap(findings=[{**MAJOR, "disposition": {"kind": "rejected", "evidence_ref": ""}}]),
        (),
        "REVIEW_REPAIR",
        "DELIVERY_FINDINGS_UNRESOLVED",
    ),
    (
        "rejected-with-evidence",
        snap(findings=[{**MAJOR, "disposition": {"kind": "rejected", "evidence_ref": "e.log"}}]),
        (),
        "MERGE_READY",
        None,
    ),
    (
        "adopted-with-commit",
        snap(findings=[{**MAJOR, "disposition": {"kind": "adopted", "repair_commit": "d" * 40}}]),
        (),
        "MERGE_READY",
        None,
    ),
    (
        "pending-check",
        snap(checks=[{"name": "ci", "sha": HEAD, "conclusion": "in_progress"}]),
        (),
        "WAITING_FOR_CHECKS",
        "DELIVERY_CHECKS_PENDING",
    ),
    (
        "green-only-on-old-head",
        snap(checks=[{"name": "ci", "sha": OLD, "conclusion": "success"}]),
        (),
        "WAITING_FOR_CHECKS",
        "DELIVERY_NO_CHECKS_AT_HEAD",
    ),
    ("no-checks", snap(checks=[]), (), "WAITING_FOR_CHECKS", "DELIVERY_NO_CHECKS_AT_HEAD"),
    (
        "findings-before-waiting",
        snap(findings=[MINOR], checks=[]),
        (),
        "REVIEW_REPAIR",
        "DELIVERY_FINDINGS_UNRESOLVED",
    ),
    (
        "review-pending",
        snap(review={"state": "pending", "sha": HEAD}),
        (),
        "WAITING_FOR_REVIEW",
        "DELIVERY_REVIEW_NOT_APPROVED_AT_HEAD",
    ),
    (
        "approval-of-old-head",
        snap(review={"state": "approved", "sha": OLD}),
        (),
        "WAITING_FOR_REVIEW",
        "DELIVERY_REVIEW_NOT_APPROVED_AT_HEAD",
    ),
    (
        "dod-not-evaluated",
        snap(dod_evaluated=False),
        (),
        "MERGE_READY_CANDIDATE",
        "DELIVERY_DOD_NOT_EVALUATED",
    ),
    (
        "caller-ancestry-false-ignored",
        snap(source_sha_ancestry=False),
        (),
        "MERGE_READY",
        None,
    ),
]


@pytest.mark.parametrize(
    ("snapshot", "entries", "state", "code"),
    [pytest.param(s, e, st, c, id=i) for i, s, e, st, c in STATE_TABLE],
)
def test_state_table(snapshot, entries, state, code):
    result = run(snapshot, entries)
    assert result.state == state
    if code is None:
        assert result.reasons == ()
    else:
        assert result.reasons[0].code == code


@pytest.mark.parametrize(
    ("status", "code"),
    [
        ("diverged", "DELIVERY_ANCESTRY_DIVERGED"),
        ("unmeasurable", "DELIVERY_ANCESTRY_UNMEASURABLE"),
    ],
)
@pytest.mark.parametrize("claim", [True, False, None])
def test_ancestry_is_measured_not_claimed(status, code, claim):
    body = snap() if claim is None else snap(source_sha_ancestry=claim)
    result = run(body, ancestry=Ancestry(status, "git says so"))  # type: ignore[arg-type]
    assert result.state == "HUMAN_ESCALATED"
    assert result.reasons[0].code == code
    assert result.facts["caller_ancestry_claim_ignored"] == claim


def test_ancestry_after_flags_before_checks():
    result = run(snap(escalation_flags=["x"]), ancestry=Ancestry("diverged"))
    assert result.reasons[0].code == "DELIVERY_ESCALATION_FLAGGED"
    result = run(
        snap(checks=[{"name": "ci", "sha": HEAD, "conclusion": "weird"}]),
        ancestry=Ancestry("diverged"),
    )
    assert result.reasons[0].code == "DELIVERY_ANCESTRY_DIVERGED"


@pytest.mark.parametrize(
    ("scope", "code"),
    [
        (Scope(None, "no section"), "DELIVERY_SCOPE_UNDERIVABLE"),
        (Scope(("src/**x",)), "DELIVERY_SCOPE_UNDERIVABLE"),
    ],
)
def test_underivable_scope_escalates(scope, code):
    result = run(snap(), scope=scope)
    assert (result.state, result.reasons[0].code) == ("HUMAN_ESCALATED", code)


def test_empty_scope_allows_nothing():
    result = run(snap(), scope=Scope(()))
    assert result.state == "EXEC_RETURN"


@pytest.mark.parametrize(
    ("state", "code"),
    [
        ("MERGE_READY", 0),
        ("WAITING_FOR_CHECKS", 4),
        ("WAITING_FOR_REVIEW", 4),
        ("CHECKS_FAILED", 4),
        ("CONFLICT", 4),
        ("REVIEW_REPAIR", 4),
        ("MERGE_READY_CANDIDATE", 4),
        ("HUMAN_ESCALATED", 3),
        ("EXEC_RETURN", 1),
        ("MERGED", 1),
        ("", 1),
    ],
)
def test_exit_codes(state, code):
    assert int(exit_code_for_state(state)) == code


def test_checks_failed_requests_repair_ci_round_one():
    result = run(snap(checks=FAIL, ci_failure_taxonomy="code"))
    (action,) = result.actions
    assert action["action_kind"] == "repair_ci"
    assert action["round"] == 1
    assert action["failed_checks"] == ["ci"]
    payload = {k: v for k, v in action.items() if k not in ("action_id", "action_kind")}
    assert action["action_id"] == action_id("repair_ci", payload)


def test_repair_flow_to_merge_ready_round_one():
    """Scenario 70: failure, receipt of round 1, new green head -> MERGE_READY round 1."""
    first = run(snap(checks=FAIL, ci_failure_taxonomy="code"))
    entries = chain(*first.new_entries)
    intent = next(e for e in entries if e["kind"] == "intent")
    entries = chain(
        *[{k: v for k, v in e.items() if k not in ("prev", "at", "entry_id")} for e in entries],
        {
            "kind": "receipt",
            "action_id": intent["action_id"],
            "action_kind": "repair_ci",
            "pr_number": 7,
            "head_sha": HEAD,
            "round": 1,
            "result_ref": "commit:" + "e" * 40,
        },
    )
    new_head = "f" * 40
    green = snap(
        head_sha=new_head,
        checks=[{"name": "ci", "sha": new_head, "conclusion": "success"}],
        review={"state": "approved", "sha": new_head},
    )
    result = run(green, entries)
    assert result.state == "MERGE_READY"
    assert result.merge_ready_record is not None
    assert result.merge_ready_record["round"] == 1
    assert completed_rounds(entries, 7) == 1
    # the green check only on the old head: waiting
    stale = snap(head_sha=new_head, review={"state": "approved", "sha": new_head})
    assert run(stale, entries).state == "WAITING_FOR_CHECKS"


def test_recurrence_requests_referral_and_repair():
    result = run(snap(findings=[MAJOR]), chain(receipt("repair_review", 1, finding_type="lint")))
    kinds = [a["action_kind"] for a in result.actions]
    assert kinds == ["feedback_loop_referral", "repair_review"]
    assert result.actions[1]["round"] == 2


def test_findings_request_by_severity():
    result = run(snap(findings=[MAJOR, MINOR]))
    kinds = {a["finding_id"]: a["action_kind"] for a in result.actions}
    assert kinds == {"F1": "repair_review", "F2": "record_disposition"}
    assert "round" not in next(a for a in result.actions if a["finding_id"] == "F2")


def test_two_findings_two_distinct_ids():
    other = {**MAJOR, "id": "F3"}
    result = run(snap(findings=[MAJOR, other]))
    ids = [a["action_id"] for a in result.actions]
    assert len(set(ids)) == 2


def test_one_unresolved_minor_blocks_candidate_and_ready():
    resolved = {**MAJOR, "disposition": {"kind": "rejected", "evidence_ref": "e.log"}}
    result = run(snap(findings=[resolved, MINOR], dod_evaluated=False))
    assert result.state == "REVIEW_REPAIR"


def test_candidate_requests_dod_reevaluate():
    result = run(snap(dod_evaluated=False))
    assert [a["action_kind"] for a in result.actions] == ["dod_reevaluate"]


def test_merge_ready_record_shape():
    majors = [
        {**MAJOR, "id": f"F{i}", "disposition": {"kind": "rejected", "evidence_ref": f"e{i}.log"}}
        for i in range(3)
    ]
    result = run(snap(findings=majors))
    record = result.merge_ready_record
    assert record is not None
    assert set(record) == {
        "pr_number",
        "head_sha",
        "check_summary",
        "review_disposition",
        "round",
        "plan_hash",
        "plan_package_hash",
        "source_sha",
    }
    assert record["check_summary"] == {"ci": "success"}
    assert sorted(record["review_disposition"]) == ["F0", "F1", "F2"]
    assert record["plan_hash"] == RECORD.plan_hash
    assert record["source_sha"] == SOURCE
    assert [e["kind"] for e in result.new_entries] == ["state", "merge_ready"]


def test_same_snapshot_twice_appends_nothing():
    body = snap(findings=[MAJOR, {**MAJOR, "id": "F9"}])
    first = run(body)
    entries = chain(*first.new_entries)
    second = run(body, entries)
    assert second.new_entries == ()
    assert [a["action_id"] for a in second.actions] == [a["action_id"] for a in first.actions]


def test_intent_without_receipt_is_requested_again_receipt_suppresses():
    first = run(snap(findings=[MAJOR]))
    entries = chain(*first.new_entries)
    again = run(snap(findings=[MAJOR]), entries)
    assert again.actions and again.new_entries == ()
    aid = again.actions[0]["action_id"]
    stripped = [
        {k: v for k, v in e.items() if k not in ("prev", "at", "entry_id")} for e in entries
    ]
    with_receipt = chain(
        *stripped,
        {
            "kind": "receipt",
            "action_id": aid,
            "action_kind": "repair_review",
            "pr_number": 7,
            "head_sha": HEAD,
            "round": 1,
            "result_ref": "r1",
            "finding_type": "lint",
        },
    )
    # the receipted finding type now recurs: a new round is requested, not the old action
    after = run(snap(findings=[MAJOR]), with_receipt)
    assert aid not in [a["action_id"] for a in after.actions]


def test_state_returning_to_earlier_value_is_recorded_again():
    waiting = snap(checks=[])
    first = run(waiting)
    entries = chain(*first.new_entries)
    failing = run(snap(checks=FAIL, ci_failure_taxonomy="code"), entries)
    stripped = [
        {k: v for k, v in e.items() if k not in ("prev", "at", "entry_id")}
        for e in (*entries, *chain(*failing.new_entries))
    ]
    entries = chain(*stripped)
    back = run(waiting, entries)
    assert [e["kind"] for e in back.new_entries] == ["state"]


def test_no_merged_state_anywhere():
    result = run(snap())
    assert result.state == "MERGE_READY"
    assert "MERGED" not in {a["action_kind"] for a in result.actions}


def test_result_facts_and_verdict():
    result = run(snap(checks=[])).result()
    assert result.verdict == "WAITING_FOR_CHECKS"
    assert result.facts["requested_actions"] == []
    assert result.facts["merge_ready_record"] is None
