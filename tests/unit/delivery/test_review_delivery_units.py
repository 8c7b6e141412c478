"""Adversarial review, unit level: type confusion in dispositions, a record that lost rows."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.delivery.log import ledger_anchor, seal_entries
from plangate.delivery.snapshot import SnapshotInvalid, parse_snapshot

HEAD = "a" * 40
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


def with_disposition(disposition: Any) -> dict[str, Any]:
    snap = copy.deepcopy(BASE)
    snap["findings"] = [
        {"id": "F1", "finding_type": "sec", "severity": "critical", "disposition": disposition}
    ]
    return snap


NON_STRINGS = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None)
@given(NON_STRINGS)
def test_repair_commit_of_any_non_string_type_is_refused(value):
    with pytest.raises(SnapshotInvalid, match="repair_commit"):
        parse_snapshot(with_disposition({"kind": "adopted", "repair_commit": value}))


@pytest.mark.parametrize("value", [None, ""])
def test_null_or_empty_repair_commit_leaves_the_finding_unresolved(value):
    snap = parse_snapshot(with_disposition({"kind": "adopted", "repair_commit": value}))
    assert snap.findings[0].resolved is False


def test_hex_repair_commit_resolves():
    snap = parse_snapshot(with_disposition({"kind": "adopted", "repair_commit": "abc1234"}))
    assert snap.findings[0].resolved is True


STATE = {"kind": "state", "state": "WAITING_FOR_CHECKS", "pr_number": 7, "head_sha": HEAD,
         "reasons": []}
RECEIPT = {"kind": "notice", "n": 1}


def _rows(count: int) -> list[dict[str, Any]]:
    return seal_entries([{**STATE, "pr_number": n + 1} for n in range(count)], prev=None, at=NOW)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=6), st.data())
def test_any_ledger_row_missing_from_the_record_is_a_mismatch(count, data):
    rows = _rows(count)
    ids = [r["entry_id"] for r in rows]
    kept = data.draw(st.integers(min_value=0, max_value=count - 1))  # record lost a tail
    assert ledger_anchor(rows[:kept], ids).status == "mismatch"
    assert ledger_anchor(rows, ids).status == "anchored"


def test_deleted_record_with_ledger_rows_is_a_mismatch():
    ids = [r["entry_id"] for r in _rows(2)]
    assert ledger_anchor((), ids).status == "mismatch"
    assert ledger_anchor((), []).status == "anchored"
    assert ledger_anchor((), None).status == "anchored"


def test_forged_fresh_record_is_not_another_machines_record():
    ledger_ids = [r["entry_id"] for r in _rows(3)]
    forged = seal_entries([{**STATE, "head_sha": "b" * 40}], prev=None, at=NOW)
    assert ledger_anchor(forged, ledger_ids).status == "mismatch"
    assert ledger_anchor(forged, []).status == "unanchored"
