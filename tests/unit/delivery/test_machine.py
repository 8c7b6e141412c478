"""The delivery state machine: the decision table row by row, the states and actions with
literal snapshots, the recorded entries, properties over generated snapshots, the contract."""

from __future__ import annotations

import copy
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.delivery.log import parse_record_bytes, rows_bytes, seal_entries
from plangate.delivery.machine import (
    EXITS,
    PRIORITY_ORDER,
    RULES,
    STATE_EXIT_CODES,
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
)
from plangate.delivery.pr_snapshot import SNAPSHOT_RULE, SnapshotInvalid, parse_snapshot
from plangate.surfaces import ProtectedPattern, ResolvedSurfaces
from plangate.verdict import Reason

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
    return assess(parse_snapshot(snapshot), entries, scope=scope, ancestry=ancestry, record=RECORD, surfaces=surfaces)


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
    "plan_deviation": ({"changed_files": ["bin/tool"]}, {}, "EXEC_RETURN", "DELIVERY_PLAN_DEVIATION"),
    "protected_surface": ({"changed_files": [IN_SCOPE_APPROVALS]}, {}, "HUMAN_ESCALATED", "DELIVERY_TOUCHES_PROTECTED_SURFACE"),
    "escalation_flags": ({"escalation_flags": ["touches_ho"]}, {}, "HUMAN_ESCALATED", "DELIVERY_ESCALATION_FLAGGED"),
    "ancestry_fail": ({}, {"ancestry": Ancestry("diverged", "git")}, "HUMAN_ESCALATED", "DELIVERY_ANCESTRY_DIVERGED"),
    "unknown_check_conclusion": ({"checks": [{"name": "ci", "sha": HEAD, "conclusion": "weird"}]}, {}, "HUMAN_ESCALATED", "DELIVERY_CHECK_CONCLUSION_UNKNOWN"),
    "taxonomy_unverifiable": ({"checks": FAIL, "ci_failure_taxonomy": "permission"}, {}, "HUMAN_ESCALATED", "DELIVERY_CI_TAXONOMY_UNVERIFIABLE"),
    "round_limit": ({"checks": FAIL, "ci_failure_taxonomy": "code"}, {"entries": ("repair_ci", 3)}, "HUMAN_ESCALATED", "DELIVERY_ROUND_LIMIT"),
    "same_type_recurrence": ({"findings": [MAJOR]}, {"entries": ("repair_review", 1)}, "REVIEW_REPAIR", "DELIVERY_FINDING_RECURRENCE"),
    "ci_failed": ({"checks": FAIL, "ci_failure_taxonomy": "code"}, {}, "CHECKS_FAILED", "DELIVERY_CHECKS_FAILED"),
    "conflict": ({"mergeable": "CONFLICTING"}, {}, "CONFLICT", "DELIVERY_CONFLICT"),
    "review_findings": ({"findings": [MINOR]}, {}, "REVIEW_REPAIR", "DELIVERY_FINDINGS_UNRESOLVED"),
    "waiting_checks": ({"checks": []}, {}, "WAITING_FOR_CHECKS", "DELIVERY_NO_CHECKS_AT_HEAD"),
    "waiting_review": ({"review": {"state": "pending", "sha": HEAD}}, {}, "WAITING_FOR_REVIEW", "DELIVERY_REVIEW_NOT_APPROVED_AT_HEAD"),
    "merge_ready_candidate": ({"dod_evaluated": False}, {}, "MERGE_READY_CANDIDATE", "DELIVERY_DOD_NOT_EVALUATED"),
    "merge_ready": ({}, {}, "MERGE_READY", None),
}


def _row_case(name: str):
    overrides, extra, state, code = ROW_CASES[name]
    kwargs = dict(extra)
    entries: tuple[dict[str, Any], ...] = ()
    if "entries" in kwargs:
        kind, round_no = kwargs.pop("entries")
        entries = chain(receipt(kind, round_no, finding_type="lint" if kind == "repair_review" else None))
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
    ("plan_deviation", "protected_surface"): ({"changed_files": ["bin/tool", IN_SCOPE_APPROVALS]}, {}),
    ("unknown_check_conclusion", "taxonomy_unverifiable"): (
        {"checks": [{"name": "e2e", "sha": HEAD, "conclusion": "weird"}, *FAIL], "ci_failure_taxonomy": "permission"},
        {},
    ),
    ("taxonomy_unverifiable", "round_limit"): (
        {"checks": FAIL, "ci_failure_taxonomy": "permission"}, {"entries": ("repair_ci", 3)}
    ),
    ("round_limit", "same_type_recurrence"): ({"findings": [MAJOR]}, {"entries": ("repair_review", 3)}),
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
        entries = chain(receipt(kind, round_no, finding_type="lint" if kind == "repair_review" else None))
    alone = {**ROW_CASES[later][1]}
    alone_entries: tuple[dict[str, Any], ...] = ()
    if "entries" in alone:
        kind, round_no = alone.pop("entries")
        alone_entries = chain(receipt(kind, round_no, finding_type="lint" if kind == "repair_review" else None))
    assert run(snap(**ROW_CASES[later][0]), alone_entries, **alone).rule == later
    assert run(snap(**overrides), entries, **extra).rule == earlier


def test_an_invalid_snapshot_is_refused_before_any_row():
    with pytest.raises(SnapshotInvalid) as caught:
        parse_snapshot(snap(pr_number=0, changed_files=["bin/tool"]))
    assert caught.value.code == "DELIVERY_SNAPSHOT_INVALID"
    assert int(caught.value.exit_code) == 2


# -- the protected-surface definition the PR is judged by ---------------------------


def _defined(problem: Reason | None = None, provenance: str = "downstream", entries=SURFACES.entries):
    return ResolvedSurfaces(provenance, "x.toml", None, entries, problem)


@pytest.mark.parametrize(
    ("surfaces", "needle"),
    [
        (_defined(Reason("SURFACES_INVALID_TOML", "bad toml"), entries=()), "SURFACES_INVALID_TOML: bad toml"),
        (_defined(entries=()), "it has no entries"),
        (_defined(Reason("GIT_FAILED", "no such commit"), entries=()), "GIT_FAILED: no such commit"),
        (_defined(Reason("HO_BOUNDARY_UNDEFINED", "template"), "bundled_template", ()), "HO_BOUNDARY_UNDEFINED"),
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
    assert result.facts["protected_surfaces"]["hits"] == ["src/app/Approvals/x.py (approval: **/approvals/**)"]
    assert result.facts["protected_surfaces"]["pattern_count"] == 2


def test_a_path_that_cannot_be_matched_counts_as_protected():
    from plangate.delivery.machine import protected_hits

    assert protected_hits(SURFACES, ["a\\b.py"]) == ["a\\b.py (human-owned: <unmatchable path>)"]


# -- properties over generated valid snapshots ------------------------------------

SHAS = ["a" * 40, "b" * 40]
PROP_SCOPE = Scope(("src/**", "docs/*.md"))
CONCLUSIONS = ["success", "neutral", "failure", "pending", "queued", "weird", "timed_out"]

checks = st.lists(
    st.builds(
        lambda name, sha, conclusion: {"name": name, "sha": sha, "conclusion": conclusion},
        st.sampled_from(["ci", "lint", "e2e"]),
        st.sampled_from(SHAS),
        st.sampled_from(CONCLUSIONS),
    ),
    max_size=4,
    unique_by=lambda c: (c["name"], c["sha"]),
)
dispositions = st.sampled_from(
    [
        None,
        {"kind": "adopted", "repair_commit": "d" * 40},
        {"kind": "adopted", "repair_commit": ""},
        {"kind": "rejected", "evidence_ref": "e.log"},
        {"kind": "rejected", "evidence_ref": ""},
    ]
)
findings = st.lists(
    st.builds(
        lambda i, t, s, d: {"id": f"F{i}", "finding_type": t, "severity": s, "disposition": d},
        st.integers(0, 9),
        st.sampled_from(["lint", "logic"]),
        st.sampled_from(["critical", "major", "minor", "info"]),
        dispositions,
    ),
    max_size=3,
    unique_by=lambda f: f["id"],
)
snapshots = st.builds(
    lambda head, mergeable, cs, review_state, review_sha, fs, files, flags, dod, taxonomy: {
        "task_id": "TASK-0001",
        "pr_number": 7,
        "head_sha": head,
        "mergeable": mergeable,
        "checks": cs,
        "review": {"state": review_state, "sha": review_sha},
        "findings": fs,
        "changed_files": files,
        "escalation_flags": flags,
        "dod_evaluated": dod,
        "ci_failure_taxonomy": taxonomy,
    },
    st.sampled_from(SHAS),
    st.sampled_from(["MERGEABLE", "CONFLICTING", "UNKNOWN"]),
    checks,
    st.sampled_from(["approved", "pending", "changes_requested"]),
    st.sampled_from(SHAS),
    findings,
    st.lists(
        st.sampled_from(["src/a.py", "src/x/b.py", "docs/n.md", "bin/t", "docs/x/y.md"]),
        max_size=3,
        unique=True,
    ),
    st.lists(st.sampled_from(["touches_ho"]), max_size=1),
    st.booleans(),
    st.sampled_from([None, "code", "flaky", "permission"]),
)
ancestries = st.sampled_from([Ancestry("descends"), Ancestry("diverged"), Ancestry("unmeasurable")])


def _strip(rows: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("prev", "at", "entry_id")} for r in rows]


@settings(max_examples=150, deadline=None)
@given(snapshots, ancestries)
def test_assessing_twice_appends_nothing_the_second_time(raw, ancestry):
    snapshot = parse_snapshot(raw)
    first = assess(snapshot, (), scope=PROP_SCOPE, ancestry=ancestry, record=RECORD, surfaces=SURFACES)
    entries = parse_record_bytes(
        rows_bytes(seal_entries(list(first.new_entries), prev=None, at="2026-12-02T10:00:00Z"))
    )
    second = assess(snapshot, entries, scope=PROP_SCOPE, ancestry=ancestry, record=RECORD, surfaces=SURFACES)
    assert second.new_entries == ()
    assert second.state == first.state
    assert [a["action_id"] for a in second.actions] == [a["action_id"] for a in first.actions]


@settings(max_examples=150, deadline=None)
@given(snapshots, ancestries)
def test_merge_ready_only_when_everything_holds(raw, ancestry):
    snapshot = parse_snapshot(raw)
    result = assess(snapshot, (), scope=PROP_SCOPE, ancestry=ancestry, record=RECORD, surfaces=SURFACES)
    assert result.state in STATE_EXIT_CODES
    assert int(exit_code_for_state(result.state)) in (0, 1, 3, 4)
    if result.state == "MERGE_READY":
        head = snapshot.head_sha
        at_head = [c for c in snapshot.checks if c.sha == head]
        assert ancestry.status == "descends"
        assert at_head and all(c.conclusion in ("success", "neutral", "skipped") for c in at_head)
        assert snapshot.review_state == "approved" and snapshot.review_sha == head
        assert snapshot.mergeable == "MERGEABLE"
        assert all(f.resolved for f in snapshot.findings)
        assert snapshot.dod_evaluated and not snapshot.escalation_flags
        assert snapshot.changed_files and all(
            p.startswith(("src/", "docs/")) for p in snapshot.changed_files
        )
        assert result.merge_ready_record is not None
    else:
        assert result.reasons  # every non-terminal outcome says why
        assert result.merge_ready_record is None


@settings(max_examples=100, deadline=None)
@given(snapshots)
def test_ancestry_failure_never_merge_ready(raw):
    snapshot = parse_snapshot(raw)
    for status in ("diverged", "unmeasurable"):
        result = assess(snapshot, (), scope=PROP_SCOPE, ancestry=Ancestry(status), record=RECORD, surfaces=SURFACES)  # type: ignore[arg-type]
        assert result.state != "MERGE_READY"


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
    section = doc[doc.index("## The rules (first match wins)"):doc.index("Only checks and the review")]
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
    denied = run(snap(changed_files=["src/app/main.py"]),
                 scope=Scope(("src/**",), "", ("src/app",)))
    assert denied.state == "EXEC_RETURN"
    assert denied.reasons[0].code == "DELIVERY_PLAN_DEVIATION"
    assert denied.reasons[0].evidence == ("src/app/main.py",)
