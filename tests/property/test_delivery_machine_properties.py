"""Properties of the delivery state machine over generated valid snapshots.

Kept apart from the machine's unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.delivery.log import parse_record_bytes, rows_bytes, seal_entries
from plangate.delivery.machine import (
    STATE_EXIT_CODES,
    Ancestry,
    BoundRecord,
    Scope,
    assess,
    exit_code_for_state,
)
from plangate.delivery.pr_snapshot import parse_snapshot
from plangate.surfaces import ProtectedPattern, ResolvedSurfaces
from support.branches import Branches

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

# Snapshots where everything holds at the head (checks passed, review approved at the
# head, mergeable, findings resolved, definition of done evaluated, no escalation, files
# in scope), so that the MERGE_READY branch is reached; mixed with arbitrary ones.
ready_snapshots = st.builds(
    lambda head, conclusions, fs, files, taxonomy: {
        "task_id": "TASK-0001",
        "pr_number": 7,
        "head_sha": head,
        "mergeable": "MERGEABLE",
        "checks": [
            {"name": name, "sha": head, "conclusion": conclusion}
            for name, conclusion in zip(["ci", "lint", "e2e"], conclusions, strict=False)
        ],
        "review": {"state": "approved", "sha": head},
        "findings": fs,
        "changed_files": files,
        "escalation_flags": [],
        "dod_evaluated": True,
        "ci_failure_taxonomy": taxonomy,
    },
    st.sampled_from(SHAS),
    st.lists(st.sampled_from(["success", "neutral"]), min_size=1, max_size=3),
    st.lists(
        st.builds(
            lambda i, t, s, d: {"id": f"F{i}", "finding_type": t, "severity": s, "disposition": d},
            st.integers(0, 9),
            st.sampled_from(["lint", "logic"]),
            st.sampled_from(["critical", "major", "minor", "info"]),
            st.sampled_from([
                {"kind": "adopted", "repair_commit": "d" * 40},
                {"kind": "rejected", "evidence_ref": "e.log"},
            ]),
        ),
        max_size=3,
        unique_by=lambda f: f["id"],
    ),
    st.lists(
        st.sampled_from(["src/a.py", "src/x/b.py", "docs/n.md"]), min_size=1, max_size=3,
        unique=True,
    ),
    st.sampled_from([None, "code", "flaky", "permission"]),
)
cases = st.one_of(
    st.tuples(snapshots, ancestries),
    st.tuples(ready_snapshots, st.just(Ancestry("descends"))),
    st.tuples(ready_snapshots, ancestries),
)


def _strip(rows: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("prev", "at", "entry_id")} for r in rows]


@settings(max_examples=150, deadline=None)
@given(st.one_of(snapshots, ready_snapshots), ancestries)
def test_assessing_twice_appends_nothing_the_second_time(raw, ancestry):
    snapshot = parse_snapshot(raw)
    first = assess(
        snapshot, (), scope=PROP_SCOPE, ancestry=ancestry, record=RECORD, surfaces=SURFACES
    )
    entries = parse_record_bytes(
        rows_bytes(seal_entries(list(first.new_entries), prev=None, at="2026-12-02T10:00:00Z"))
    )
    second = assess(
        snapshot, entries, scope=PROP_SCOPE, ancestry=ancestry, record=RECORD, surfaces=SURFACES
    )
    assert second.new_entries == ()
    assert second.state == first.state
    assert [a["action_id"] for a in second.actions] == [a["action_id"] for a in first.actions]


def test_merge_ready_only_when_everything_holds():
    seen = Branches()

    @settings(max_examples=150, deadline=None)
    @given(cases)
    def check(case):
        seen.example()
        _merge_ready_only_when_everything_holds(*case, seen)

    check()
    seen.assert_share("MERGE_READY")
    seen.assert_share("not MERGE_READY")


def _merge_ready_only_when_everything_holds(raw, ancestry, seen: Branches):
    snapshot = parse_snapshot(raw)
    result = assess(
        snapshot, (), scope=PROP_SCOPE, ancestry=ancestry, record=RECORD, surfaces=SURFACES
    )
    assert result.state in STATE_EXIT_CODES
    assert int(exit_code_for_state(result.state)) in (0, 1, 3, 4)
    if seen.reached("MERGE_READY", result.state == "MERGE_READY"):
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
        seen.reached("not MERGE_READY", True)
        assert result.reasons  # every non-terminal outcome says why
        assert result.merge_ready_record is None


@settings(max_examples=100, deadline=None)
@given(st.one_of(snapshots, ready_snapshots))  # ready ones would be MERGE_READY if descending
def test_ancestry_failure_never_merge_ready(raw):
    snapshot = parse_snapshot(raw)
    for status in ("diverged", "unmeasurable"):
        result = assess(
            snapshot,
            (),
            scope=PROP_SCOPE,
            ancestry=Ancestry(status),
            record=RECORD,
            surfaces=SURFACES,
        )  # type: ignore[arg-type]
        assert result.state != "MERGE_READY"
