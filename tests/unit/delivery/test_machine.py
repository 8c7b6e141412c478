"""The delivery state machine: the decision table row by row, the states and actions with
literal snapshots, the recorded entries, the contract (properties over generated snapshots: tests/property)."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from plangate.canonical import digest
from plangate.delivery.log import parse_record_bytes, rows_bytes, seal_entries
from plangate.delivery.machine import (
    ACTION_KINDS,
    EXITS,
    PRIORITY_ORDER,
    REPAIR_KINDS,
    RULES,
    STATES,
    Ancestry,
    BoundRecord,
    Scope,
    action_id,
    assess,
    completed_rounds,
    contract,
    contract_text,
    exit_code_for_state,
    protected_hits,
    receipts_for,
    state_body,
    surfaces_problem,
)
from plangate.delivery.pr_snapshot import SNAPSHOT_RULE, SnapshotInvalid, parse_snapshot
from plangate.surfaces import ProtectedPattern, ResolvedSurfaces
from plangate.verdict import ExitCode, Reason

ROOT = Path(__file__).resolve().parents[3]

HEAD = "a" * 40
OLD = "b" * 40
SOURCE = "c" * 40
RECORD = BoundRecord("TASK-0001", SOURCE, "sha256:" + "1" * 64, "sha256:" + "2" * 64)
SURFACES = ResolvedSurfaces(
    "explicit",
    None,
    None,
    (
        ProtectedPattern(".claude/**", "settings", "agent settings"),
        ProtectedPattern("**/approvals/**", "approval", "approval records"),
    ),
)
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


# The documented priority order (docs/delivery.md, ``plangate delivery contract``).
EXPECTED_ORDER = (
    "invalid_snapshot",
    "plan_deviation",
    "protected_surface",  # a plan scope may cover protected surfaces
    "escalation_flags",
    "ancestry_fail",
    "unknown_check_conclusion",
    "taxonomy_unverifiable",
    "round_limit",
    "same_type_recurrence",
    "ci_failed",
    "conflict",
    "review_findings",
    "waiting_checks",
    "waiting_review",
    "merge_ready_candidate",
    "merge_ready",
)


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
    surfaces: ResolvedSurfaces = SURFACES,
):
    return assess(
        parse_snapshot(snapshot),
        entries,
        scope=scope,
        ancestry=ancestry,
        record=RECORD,
        surfaces=surfaces,
    )


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


# -- the decision table, row by row -------------------------------------------------
#
# One input per row of RULES that every earlier row passes and that row decides.
# Removing a row from the table hands its input to a later row: its test turns red.

IN_SCOPE_APPROVALS = "src/app/approvals/x.py"  # inside the plan's scope, a protected surface
ROW_CASES: dict[str, tuple[dict[str, Any], dict[str, Any], str, str | None]] = {
    "plan_deviation": (
        {"changed_files": ["bin/tool"]},
        {},
        "EXEC_RETURN",
        "DELIVERY_PLAN_DEVIATION",
    ),
    "protected_surface": (
        {"changed_files": [IN_SCOPE_APPROVALS]},
        {},
        "HUMAN_ESCALATED",
        "DELIVERY_TOUCHES_PROTECTED_SURFACE",
    ),
    "escalation_flags": (
        {"escalation_flags": ["touches_ho"]},
        {},
        "HUMAN_ESCALATED",
        "DELIVERY_ESCALATION_FLAGGED",
    ),
    "ancestry_fail": (
        {},
        {"ancestry": Ancestry("diverged", "git")},
        "HUMAN_ESCALATED",
        "DELIVERY_ANCESTRY_DIVERGED",
    ),
    "unknown_check_conclusion": (
        {"checks": [{"name": "ci", "sha": HEAD, "conclusion": "weird"}]},
        {},
        "HUMAN_ESCALATED",
        "DELIVERY_CHECK_CONCLUSION_UNKNOWN",
    ),
    "taxonomy_unverifiable": (
        {"checks": FAIL, "ci_failure_taxonomy": "permission"},
        {},
        "HUMAN_ESCALATED",
        "DELIVERY_CI_TAXONOMY_UNVERIFIABLE",
    ),
    "round_limit": (
        {"checks": FAIL, "ci_failure_taxonomy": "code"},
        {"entries": ("repair_ci", 3)},
        "HUMAN_ESCALATED",
        "DELIVERY_ROUND_LIMIT",
    ),
    "same_type_recurrence": (
        {"findings": [MAJOR]},
        {"entries": ("repair_review", 1)},
        "REVIEW_REPAIR",
        "DELIVERY_FINDING_RECURRENCE",
    ),
    "ci_failed": (
        {"checks": FAIL, "ci_failure_taxonomy": "code"},
        {},
        "CHECKS_FAILED",
        "DELIVERY_CHECKS_FAILED",
    ),
    "conflict": ({"mergeable": "CONFLICTING"}, {}, "CONFLICT", "DELIVERY_CONFLICT"),
    "review_findings": ({"findings": [MINOR]}, {}, "REVIEW_REPAIR", "DELIVERY_FINDINGS_UNRESOLVED"),
    "waiting_checks": ({"checks": []}, {}, "WAITING_FOR_CHECKS", "DELIVERY_NO_CHECKS_AT_HEAD"),
    "waiting_review": (
        {"review": {"state": "pending", "sha": HEAD}},
        {},
        "WAITING_FOR_REVIEW",
        "DELIVERY_REVIEW_NOT_APPROVED_AT_HEAD",
    ),
    "merge_ready_candidate": (
        {"dod_evaluated": False},
        {},
        "MERGE_READY_CANDIDATE",
        "DELIVERY_DOD_NOT_EVALUATED",
    ),
    "merge_ready": ({}, {}, "MERGE_READY", None),
}


def _row_case(name: str):
    overrides, extra, state, code = ROW_CASES[name]
    kwargs = dict(extra)
    entries: tuple[dict[str, Any], ...] = ()
    if "entries" in kwargs:
        kind, round_no = kwargs.pop("entries")
        entries = chain(
            receipt(kind, round_no, finding_type="lint" if kind == "repair_review" else None)
        )
    return run(snap(**overrides), entries, **kwargs), state, code


@pytest.mark.parametrize("name", EXPECTED_ORDER[1:])
def test_each_row_decides_its_own_input(name):
    result, state, code = _row_case(name)
    assert result.rule == name
    assert result.facts["decided_by"] == name
    assert result.state == state
    assert (result.reasons[0].code if result.reasons else None) == code


def test_every_row_of_the_table_has_an_input():
    assert sorted(ROW_CASES) == sorted(rule.name for rule in RULES)


def test_the_last_row_always_decides():
    last = RULES[-1]
    assert last.name == "merge_ready"
    assert all(rule.check is not last.check for rule in RULES[:-1])


# Inputs for neighbouring rows that read the same field, built to satisfy both.
BOTH: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {
    ("plan_deviation", "protected_surface"): (
        {"changed_files": ["bin/tool", IN_SCOPE_APPROVALS]},
        {},
    ),
    ("unknown_check_conclusion", "taxonomy_unverifiable"): (
        {
            "checks": [{"name": "e2e", "sha": HEAD, "conclusion": "weird"}, *FAIL],
            "ci_failure_taxonomy": "permission",
        },
        {},
    ),
    ("taxonomy_unverifiable", "round_limit"): (
        {"checks": FAIL, "ci_failure_taxonomy": "permission"},
        {"entries": ("repair_ci", 3)},
    ),
    ("round_limit", "same_type_recurrence"): (
        {"findings": [MAJOR]},
        {"entries": ("repair_review", 3)},
    ),
}


@pytest.mark.parametrize(("earlier", "later"), list(itertools.pairwise(EXPECTED_ORDER[1:])))
def test_each_row_wins_over_the_next(earlier, later):
    """Both rows' inputs at once: the earlier row decides (the order is the table's)."""
    first, second = ROW_CASES[earlier], ROW_CASES[later]
    overrides, extra = {**second[0], **first[0]}, {**second[1], **first[1]}
    if (earlier, later) in BOTH:
        overrides, extra = copy.deepcopy(BOTH[earlier, later][0]), dict(BOTH[earlier, later][1])
    else:
        assert not set(first[0]) & set(second[0]) and not set(first[1]) & set(second[1])
    entries: tuple[dict[str, Any], ...] = ()
    if "entries" in extra:
        kind, round_no = extra.pop("entries")
        entries = chain(
            receipt(kind, round_no, finding_type="lint" if kind == "repair_review" else None)
        )
    alone = {**ROW_CASES[later][1]}
    alone_entries: tuple[dict[str, Any], ...] = ()
    if "entries" in alone:
        kind, round_no = alone.pop("entries")
        alone_entries = chain(
            receipt(kind, round_no, finding_type="lint" if kind == "repair_review" else None)
        )
    assert run(snap(**ROW_CASES[later][0]), alone_entries, **alone).rule == later
    assert run(snap(**overrides), entries, **extra).rule == earlier


def test_an_invalid_snapshot_is_refused_before_any_row():
    with pytest.raises(SnapshotInvalid) as caught:
        parse_snapshot(snap(pr_number=0, changed_files=["bin/tool"]))
    assert caught.value.code == "DELIVERY_SNAPSHOT_INVALID"
    assert int(caught.value.exit_code) == 2


# -- the protected-surface definition the PR is judged by ---------------------------


def _defined(
    problem: Reason | None = None, provenance: str = "downstream", entries=SURFACES.entries
):
    return ResolvedSurfaces(provenance, "x.toml", None, entries, problem)


@pytest.mark.parametrize(
    ("surfaces", "needle"),
    [
        (
            _defined(Reason("SURFACES_INVALID_TOML", "bad toml"), entries=()),
            "SURFACES_INVALID_TOML: bad toml",
        ),
        (_defined(entries=()), "it has no entries"),
        (
            _defined(Reason("GIT_FAILED", "no such commit"), entries=()),
            "GIT_FAILED: no such commit",
        ),
        (
            _defined(Reason("HO_BOUNDARY_UNDEFINED", "template"), "bundled_template", ()),
            "HO_BOUNDARY_UNDEFINED",
        ),
    ],
)
def test_an_unusable_definition_escalates(surfaces, needle):
    result = run(snap(), surfaces=surfaces)
    assert (result.state, result.rule) == ("HUMAN_ESCALATED", "protected_surface")
    assert result.reasons[0].code == "DELIVERY_SURFACES_UNRESOLVED"
    assert needle in result.reasons[0].message


def test_the_bundled_templates_entries_judge_a_repository_without_its_own_definition():
    template = _defined(Reason("HO_BOUNDARY_UNDEFINED", "template"), "bundled_template")
    assert run(snap(), surfaces=template).state == "MERGE_READY"
    touched = run(snap(changed_files=[IN_SCOPE_APPROVALS]), surfaces=template)
    assert touched.reasons[0].code == "DELIVERY_TOUCHES_PROTECTED_SURFACE"
    assert touched.reasons[0].evidence == (f"{IN_SCOPE_APPROVALS} (approval: **/approvals/**)",)


def test_protected_surfaces_match_case_folded_and_are_reported():
    result = run(snap(changed_files=["src/app/Approvals/x.py"]))
    assert result.reasons[0].code == "DELIVERY_TOUCHES_PROTECTED_SURFACE"
    assert result.facts["protected_surfaces"]["hits"] == [
        "src/app/Approvals/x.py (approval: **/approvals/**)"
    ]
    assert result.facts["protected_surfaces"]["pattern_count"] == 2


def test_a_path_that_cannot_be_matched_counts_as_protected():
    from plangate.delivery.machine import protected_hits

    assert protected_hits(SURFACES, ["a\\b.py"]) == ["a\\b.py (human-owned: <unmatchable path>)"]


# -- the contract ------------------------------------------------------------------


def test_contract_shape():
    doc = contract()
    assert sorted(doc) == ["exits", "priority_order", "states", "terminal", "transitions"]
    assert doc["terminal"] == ["MERGE_READY"]
    assert doc["transitions"]["MERGE_READY"] == []
    every = sorted((*STATES, *EXITS))
    assert len(every) == 9
    for state in STATES:
        if state != "MERGE_READY":
            assert doc["transitions"][state] == every
    assert doc["states"] == sorted(doc["states"])
    assert doc["exits"] == ["EXEC_RETURN", "HUMAN_ESCALATED"]


def test_priority_order_is_the_documented_one_and_the_tables_order():
    assert PRIORITY_ORDER == EXPECTED_ORDER
    # The order is the table's: the snapshot contract first, then every row of RULES.
    assert (SNAPSHOT_RULE, *(rule.name for rule in RULES)) == PRIORITY_ORDER
    assert contract()["priority_order"] == list(EXPECTED_ORDER)


def test_the_documented_rule_table_is_the_tables_order():
    doc = (ROOT / "docs" / "delivery.md").read_text()
    section = doc[
        doc.index("## The rules (first match wins)") : doc.index("Only checks and the review")
    ]
    names = [m.group(1) for m in re.finditer(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE)]
    assert list(dict.fromkeys(names)) == list(PRIORITY_ORDER)


def test_assess_help_lists_the_priority_order(run_cli, tmp_path):
    result = run_cli(tmp_path, "delivery", "assess", "--help")
    assert result.code == 0
    assert ", ".join(PRIORITY_ORDER) in " ".join(result.out.split())


def test_contract_text_is_deterministic_sorted_json():
    text = contract_text()
    assert text == contract_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert "MERGED" not in text.replace("MERGE_READY", "")


def test_contract_cli(run_cli, tmp_path):
    result = run_cli(tmp_path, "delivery", "contract")
    assert result.code == 0
    assert result.out == contract_text()


def test_docs_embed_the_contract_verbatim():
    doc = (ROOT / "docs" / "delivery.md").read_text()
    blocks = re.findall(r"```json contract\n(.*?)```", doc, flags=re.DOTALL)
    assert blocks == [contract_text()]


def test_a_changed_file_the_plan_denies_is_a_deviation_even_inside_an_allowed_pattern():
    allowed = run(snap(changed_files=["src/app/main.py"]), scope=Scope(("src/**",)))
    assert allowed.state != "EXEC_RETURN"
    denied = run(
        snap(changed_files=["src/app/main.py"]), scope=Scope(("src/**",), "", ("src/app",))
    )
    assert denied.state == "EXEC_RETURN"
    assert denied.reasons[0].code == "DELIVERY_PLAN_DEVIATION"
    assert denied.reasons[0].evidence == ("src/app/main.py",)


# -- what each row says, asks for and records ------------------------------------------


def raw_receipt(action_kind: str, round_no: Any, pr: Any = 7, **extra: Any) -> dict[str, Any]:
    """A receipt entry as the machine reads it (not sealed: the machine reads fields)."""
    return {
        "kind": "receipt",
        "action_id": "sha256:" + "8" * 64,
        "action_kind": action_kind,
        "pr_number": pr,
        "round": round_no,
        **extra,
    }


def test_facts_of_a_merge_ready_assessment():
    result = run(snap())
    assert dict(result.facts) == {
        "task_id": "TASK-0001",
        "pr_number": 7,
        "head_sha": HEAD,
        "source_sha": SOURCE,
        "plan_hash": RECORD.plan_hash,
        "decided_by": "merge_ready",
        "ancestry": {"status": "descends", "detail": "measured"},
        "protected_surfaces": {
            "provenance": "explicit",
            "path": None,
            "digest": None,
            "pattern_count": 2,
            "hits": [],
        },
        "caller_ancestry_claim_ignored": None,
        "allowed_paths": ["src/app/**", "docs/notes.md"],
        "completed_rounds": 0,
        "round_limit": 3,
        "checks_at_head": 1,
    }
    as_result = result.result()
    assert as_result.facts["state"] == "MERGE_READY"
    assert as_result.facts["merge_ready_record"] == result.merge_ready_record
    assert as_result.verdict == "MERGE_READY"


def test_facts_name_no_hits_for_uncanonical_paths_and_no_scope_when_underivable():
    result = run(snap(changed_files=["src/app//x.py"]))
    assert result.facts["protected_surfaces"]["hits"] is None
    result = run(snap(changed_files=["src/app/approvals/x.py"]), scope=Scope(None, "none"))
    assert result.facts["allowed_paths"] is None
    result = run(snap(changed_files=["src/app/approvals/x.py"]))
    assert result.facts["protected_surfaces"]["hits"] == [
        "src/app/approvals/x.py (approval: **/approvals/**)"
    ]


def test_the_action_kinds_are_the_ones_the_machine_requests():
    assert ACTION_KINDS == (
        "dod_reevaluate",
        "feedback_loop_referral",
        "record_disposition",
        "repair_ci",
        "repair_review",
        "resolve_conflict",
    )
    assert {"repair_ci", "repair_review", "resolve_conflict"} == REPAIR_KINDS


@pytest.mark.parametrize("kind", ["repair_ci", "repair_review", "resolve_conflict"])
def test_every_repair_kind_counts_as_a_round(kind):
    entries = (
        raw_receipt(kind, 2),
        raw_receipt("dod_reevaluate", 9),
        raw_receipt("record_disposition", 8),
        raw_receipt("feedback_loop_referral", 7),
    )
    assert completed_rounds(entries, 7) == 2


@pytest.mark.parametrize("round_no", [True, -1, "2", 2.0, None])
def test_a_round_that_is_not_a_whole_number_counts_nothing(round_no):
    assert completed_rounds((raw_receipt("repair_ci", round_no),), 7) == 0


def test_receipts_of_another_or_a_malformed_pull_request_do_not_count():
    entries = (
        raw_receipt("repair_ci", 3, pr=True),
        raw_receipt("repair_ci", 2, pr="1"),
        {"kind": "intent", "pr_number": 1, "action_kind": "repair_ci", "round": 3},
        raw_receipt("repair_ci", 1, pr=1),
    )
    assert [e["round"] for e in receipts_for(entries, 1)] == [1]
    assert completed_rounds(entries, 1) == 1


def test_plan_deviation_reasons_name_the_paths():
    result = run(snap(allowed_paths=[], changed_files=["src/app/x.py", "./a.py", "lib/y.py"]))
    assert result.state == "EXEC_RETURN"
    mismatch, not_canonical, outside = result.reasons
    assert mismatch.code == "DELIVERY_SCOPE_MISMATCH"
    assert mismatch.message.endswith("(snapshot: -; plan: docs/notes.md, src/app/**)")
    assert (not_canonical.code, not_canonical.evidence) == (
        "DELIVERY_PATH_NOT_CANONICAL",
        ("./a.py",),
    )
    assert (outside.code, outside.evidence) == ("DELIVERY_PLAN_DEVIATION", ("lib/y.py",))
    assert outside.message.endswith(": lib/y.py")


def test_a_path_the_plan_denies_is_a_deviation():
    result = run(
        snap(changed_files=["src/app/Secret/k.py"]),
        scope=Scope(("src/app/**",), denied=("src/app/secret/**",)),
    )
    assert (result.state, result.reasons[0].evidence) == ("EXEC_RETURN", ("src/app/Secret/k.py",))


def test_what_makes_a_definition_unusable():
    template = ResolvedSurfaces(
        "bundled_template",
        None,
        None,
        SURFACES.entries,
        Reason("HO_BOUNDARY_UNDEFINED", "template"),
    )
    assert surfaces_problem(template) == ""
    assert surfaces_problem(template._replace(entries=())) == "HO_BOUNDARY_UNDEFINED: template"
    assert surfaces_problem(template._replace(provenance="explicit")) == (
        "HO_BOUNDARY_UNDEFINED: template"
    )
    assert surfaces_problem(SURFACES) == ""
    assert surfaces_problem(SURFACES._replace(entries=())) == "it has no entries"
    result = run(snap(), surfaces=SURFACES._replace(entries=()))
    assert result.reasons[0].code == "DELIVERY_SURFACES_UNRESOLVED"
    assert result.reasons[0].message.endswith(": it has no entries")
    assert run(snap(), surfaces=template).state == "MERGE_READY"


def test_protected_hits_name_class_and_pattern():
    assert protected_hits(SURFACES, [".claude/x.json", "src/a.py"]) == [
        ".claude/x.json (settings: .claude/**)"
    ]


def test_escalation_reasons_list_flags_once_and_an_empty_change():
    result = run(snap(escalation_flags=["b", "a", "b"], changed_files=[]))
    flagged, empty = result.reasons
    assert (flagged.code, flagged.evidence) == ("DELIVERY_ESCALATION_FLAGGED", ("a", "b"))
    assert flagged.message == "escalation flags raised: a, b"
    assert empty.code == "DELIVERY_CHANGED_FILES_EMPTY"


def test_ancestry_reason_carries_the_measurement():
    result = run(snap(), ancestry=Ancestry("unmeasurable", "object missing"))
    assert result.reasons[0].message.endswith(": object missing")


def test_unknown_conclusions_are_listed_sorted_with_their_names():
    checks = [
        {"name": "z", "sha": HEAD, "conclusion": "odd"},
        {"name": "a", "sha": HEAD, "conclusion": "weird"},
    ]
    result = run(snap(checks=checks))
    assert result.reasons[0].evidence == ("a=weird", "z=odd")


def test_failed_checks_reason_and_repair_request():
    checks = [
        {"name": "zeta", "sha": HEAD, "conclusion": "failure"},
        {"name": "alpha", "sha": HEAD, "conclusion": "timed_out"},
        {"name": "ok", "sha": HEAD, "conclusion": "success"},
    ]
    result = run(snap(checks=checks, ci_failure_taxonomy="flaky"), (raw_receipt("repair_ci", 1),))
    (reason,) = result.reasons
    assert reason.message == "checks failed at head: alpha, zeta (class flaky)"
    assert reason.hint == "repair round 2 of 3"
    assert reason.evidence == ("alpha", "zeta")
    (action,) = result.actions
    assert {k: v for k, v in action.items() if k != "action_id"} == {
        "action_kind": "repair_ci",
        "pr_number": 7,
        "head_sha": HEAD,
        "round": 2,
        "taxonomy": "flaky",
        "failed_checks": ["alpha", "zeta"],
    }


def test_taxonomy_reason_names_the_failed_checks_and_class():
    result = run(snap(checks=FAIL, ci_failure_taxonomy="permission"))
    assert result.reasons[0].message.startswith(
        "checks failed (ci) with failure class 'permission'"
    )


@pytest.mark.parametrize(
    ("overrides", "state"),
    [
        ({"mergeable": "CONFLICTING"}, "HUMAN_ESCALATED"),
        ({"findings": [{**MAJOR, "severity": "critical"}]}, "HUMAN_ESCALATED"),
        ({"findings": [MAJOR]}, "HUMAN_ESCALATED"),
        ({"findings": [MINOR]}, "REVIEW_REPAIR"),
        ({"checks": []}, "WAITING_FOR_CHECKS"),
    ],
)
def test_the_round_limit_stops_only_a_repair(overrides, state):
    entries = (raw_receipt("resolve_conflict", 3),)
    result = run(snap(**overrides), entries)
    assert result.state == state
    if state == "HUMAN_ESCALATED":
        assert result.reasons[0].message == (
            "repair is still needed after 3 rounds; round 4 exceeds the limit of 3"
        )


def test_a_recurring_minor_finding_at_the_limit_is_escalated():
    entries = (raw_receipt("repair_review", 3, finding_type="style"),)
    assert run(snap(findings=[MINOR]), entries).reasons[0].code == "DELIVERY_ROUND_LIMIT"


def test_recurrence_actions_and_reason():
    entries = (
        raw_receipt("repair_review", 1, finding_type="lint"),
        raw_receipt("repair_review", 1, finding_type=7),
        raw_receipt("repair_ci", 1, finding_type="style"),
    )
    result = run(snap(findings=[MAJOR, MINOR]), entries)
    (reason,) = result.reasons
    assert (reason.code, reason.evidence) == ("DELIVERY_FINDING_RECURRENCE", ("lint",))
    referral, repair = result.actions
    assert {k: v for k, v in referral.items() if k != "action_id"} == {
        "action_kind": "feedback_loop_referral",
        "pr_number": 7,
        "head_sha": HEAD,
        "finding_type": "lint",
    }
    assert {k: v for k, v in repair.items() if k != "action_id"} == {
        "action_kind": "repair_review",
        "pr_number": 7,
        "head_sha": HEAD,
        "round": 2,
        "finding_id": "F1",
        "finding_type": "lint",
        "severity": "major",
    }


def test_conflict_reason_and_request():
    result = run(snap(mergeable="CONFLICTING"))
    assert result.reasons[0].message == "the PR cannot merge cleanly: mergeable is CONFLICTING"
    assert result.reasons[0].hint == "resolve the conflict (round 1 of 3)"
    (action,) = result.actions
    assert {k: v for k, v in action.items() if k != "action_id"} == {
        "action_kind": "resolve_conflict",
        "pr_number": 7,
        "head_sha": HEAD,
        "round": 1,
    }
    result = run(snap(conflict_resolution={"base_sha": OLD, "head_sha": "", "result_sha": OLD}))
    assert result.reasons[0].message.endswith("does not name base, head and result commits")


def test_findings_reason_lists_the_unresolved_ids_and_records_minor_ones():
    resolved = {**MAJOR, "id": "F0", "disposition": {"kind": "rejected", "evidence_ref": "e"}}
    result = run(snap(findings=[resolved, MINOR, {**MINOR, "id": "F5", "severity": "info"}]))
    assert result.reasons[0].evidence == ("F2", "F5")
    assert result.reasons[0].message == ("review findings without a resolving disposition: F2, F5")
    assert {k: v for k, v in result.actions[0].items() if k != "action_id"} == {
        "action_kind": "record_disposition",
        "pr_number": 7,
        "head_sha": HEAD,
        "finding_id": "F2",
        "finding_type": "style",
        "severity": "minor",
    }
    assert run(snap(findings=[{**MAJOR, "severity": "critical"}])).actions[0]["action_kind"] == (
        "repair_review"
    )


def test_pending_checks_are_listed_sorted():
    checks = [
        {"name": "z", "sha": HEAD, "conclusion": "queued"},
        {"name": "a", "sha": HEAD, "conclusion": "in_progress"},
        {"name": "m", "sha": HEAD, "conclusion": "success"},
    ]
    result = run(snap(checks=checks))
    assert result.reasons[0].evidence == ("a", "z")
    assert result.reasons[0].message == "checks still running at head: a, z"


def test_review_reason_names_state_and_commits():
    result = run(snap(review={"state": "changes_requested", "sha": OLD}))
    assert result.reasons[0].message == (
        f"review is 'changes_requested' at {OLD[:12]}, not 'approved' at head {HEAD[:12]}"
    )
    snapshot = dataclasses.replace(parse_snapshot(snap()), review_state="pending", review_sha="")
    result = assess(snapshot, (), scope=SCOPE, ancestry=DESCENDS, record=RECORD, surfaces=SURFACES)
    assert f"review is 'pending' at -, not 'approved' at head {HEAD[:12]}" == (
        result.reasons[0].message
    )


def test_candidate_action_payload_is_the_pr_and_head():
    (action,) = run(snap(dod_evaluated=False)).actions
    assert {k: v for k, v in action.items() if k != "action_id"} == {
        "action_kind": "dod_reevaluate",
        "pr_number": 7,
        "head_sha": HEAD,
    }


def test_merge_ready_record_values():
    checks = [
        {"name": "ci", "sha": HEAD, "conclusion": "success"},
        {"name": "old", "sha": OLD, "conclusion": "failure"},
        {"name": "lint", "sha": HEAD, "conclusion": "skipped"},
    ]
    adopted = {**MAJOR, "disposition": {"kind": "adopted", "repair_commit": "d" * 40}}
    result = run(snap(checks=checks, findings=[adopted]), (raw_receipt("repair_review", 2),))
    assert result.merge_ready_record == {
        "pr_number": 7,
        "head_sha": HEAD,
        "check_summary": {"ci": "success", "lint": "skipped"},
        "review_disposition": {"F1": {"kind": "adopted", "repair_commit": "d" * 40}},
        "round": 2,
        "plan_hash": RECORD.plan_hash,
        "plan_package_hash": RECORD.plan_package_hash,
        "source_sha": SOURCE,
    }
    assert result.new_entries[-1] == {"kind": "merge_ready", "record": result.merge_ready_record}


def test_a_state_entry_sorts_its_reasons():
    reasons = [Reason("B", "x"), Reason("A", "z"), Reason("A", "y")]
    body = state_body("CONFLICT", parse_snapshot(snap()), reasons)
    assert body == {
        "kind": "state",
        "state": "CONFLICT",
        "pr_number": 7,
        "head_sha": HEAD,
        "reasons": [
            {"code": "A", "message": "y"},
            {"code": "A", "message": "z"},
            {"code": "B", "message": "x"},
        ],
    }


def test_new_entries_state_intent_and_merge_record():
    first = run(snap(findings=[MAJOR]))
    state, intent = first.new_entries
    assert state["kind"] == "state" and state["state"] == "REVIEW_REPAIR"
    action = first.actions[0]
    assert intent == {
        "kind": "intent",
        "action_id": action["action_id"],
        "action_kind": "repair_review",
        "payload": {k: v for k, v in action.items() if k not in ("action_id", "action_kind")},
    }
    # the same state on another head is a new observation
    moved = run(
        snap(
            findings=[MAJOR],
            head_sha=OLD,
            review={"state": "approved", "sha": OLD},
            checks=[{"name": "ci", "sha": OLD, "conclusion": "success"}],
        ),
        first.new_entries,
    )
    assert [e["kind"] for e in moved.new_entries] == ["state", "intent"]
    ready = run(snap())
    again = run(snap(), ready.new_entries)
    assert again.new_entries == ()
    other = dict(ready.new_entries[1], record={**ready.merge_ready_record, "round": 9})
    assert [e["kind"] for e in run(snap(), (ready.new_entries[0], other)).new_entries] == [
        "merge_ready"
    ]


def test_a_receipted_action_is_no_longer_requested():
    first = run(snap(dod_evaluated=False))
    done = {"kind": "receipt", "action_id": first.actions[0]["action_id"]}
    result = run(snap(dod_evaluated=False), (*first.new_entries, done))
    assert result.state == "MERGE_READY_CANDIDATE"
    assert result.actions == () and result.new_entries == ()


# -- what an assessment exits with, and when a state is recorded again ---------------


def test_an_assessment_exits_by_its_state():
    assert run(snap()).exit_code == ExitCode.ACCEPTED
    assert run(snap(dod_evaluated=False)).exit_code == ExitCode.INCONCLUSIVE
    assert run(snap(escalation_flags=["secrets"])).exit_code == ExitCode.HUMAN
    assert run(snap(changed_files=["elsewhere/x.py"])).exit_code == ExitCode.REJECTED


def test_an_action_id_is_the_digest_of_its_payload_with_its_kind():
    # Recorded intents and receipts carry this id: a different formula would re-request
    # every action a delivery log already holds.
    payload = {"pr_number": 7, "head_sha": HEAD}
    assert action_id("dod_reevaluate", payload) == digest(
        {"pr_number": 7, "head_sha": HEAD, "action_kind": "dod_reevaluate"}
    )
    (action,) = run(snap(dod_evaluated=False)).actions
    assert action["action_id"] == action_id("dod_reevaluate", payload)


def test_pending_checks_say_wait():
    result = run(snap(checks=[{"name": "ci", "sha": HEAD, "conclusion": "pending"}]))
    assert result.reasons[0].code == "DELIVERY_CHECKS_PENDING"
    assert result.reasons[0].hint == "wait"


@pytest.mark.parametrize(
    "recorded",
    [
        {"state": "WAITING_FOR_REVIEW"},  # another state, the same (empty) reasons
        {"pr_number": 6},  # another pull request at the same head
        {"reasons": [{"code": "DELIVERY_CHECKS_PENDING", "message": "checks still running"}]},
    ],
)
def test_a_state_that_differs_in_any_field_is_recorded(recorded):
    ready = run(snap())
    assert ready.state == "MERGE_READY"
    last = {**state_body("MERGE_READY", parse_snapshot(snap()), ready.reasons), **recorded}
    if "reasons" in recorded:
        last["state"] = "MERGE_READY"
    result = run(snap(), chain(last))
    assert [e["kind"] for e in result.new_entries] == ["state", "merge_ready"]
    same = run(snap(), chain(state_body("MERGE_READY", parse_snapshot(snap()), ready.reasons)))
    assert [e["kind"] for e in same.new_entries] == ["merge_ready"]


PACKAGE = [f"docs/working/TASK-0001/{name}" for name in ("plan.md", "todo.md",
                                                          "approvals/c3.json")]


def test_the_tasks_own_plan_package_is_not_a_plan_deviation():
    outcome = run(snap(changed_files=["src/app/hello.py", *PACKAGE]), surfaces=NO_APPROVALS)
    assert outcome.rule != "plan_deviation"
    assert outcome.state == "MERGE_READY"


def test_another_tasks_plan_package_is_a_plan_deviation():
    outcome = run(snap(changed_files=["src/app/hello.py", "docs/working/TASK-0002/plan.md"]))
    assert (outcome.rule, outcome.state) == ("plan_deviation", "EXEC_RETURN")
    assert outcome.reasons[0].evidence == ("docs/working/TASK-0002/plan.md",)


def test_the_files_ci_check_covers_are_no_protected_surface_change_nor_deviation():
    changed = ["src/app/hello.py", ".plangate/.gitignore", *PACKAGE]
    covered = frozenset((*PACKAGE, ".plangate/.gitignore"))
    outcome = assess(parse_snapshot(snap(changed_files=changed)), (), scope=SCOPE,
                     ancestry=DESCENDS, record=RECORD, surfaces=SURFACES, covered=covered)
    assert outcome.state == "MERGE_READY"
    # Not covered (not verified by the approval): the approvals surface escalates.
    uncovered = run(snap(changed_files=[p for p in changed if p.startswith(("src/", "docs/"))]))
    assert (uncovered.rule, uncovered.state) == ("protected_surface", "HUMAN_ESCALATED")
    assert uncovered.reasons[0].evidence == ("docs/working/TASK-0001/approvals/c3.json "
                                             "(approval: **/approvals/**)",)


NO_APPROVALS = ResolvedSurfaces(
    "explicit", None, None, (ProtectedPattern(".claude/**", "settings", "agent settings"),)
)
