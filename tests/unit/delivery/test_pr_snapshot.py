"""Strict PR-snapshot validation: every violation is listed, nothing is repaired."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.delivery.pr_snapshot import SnapshotInvalid, parse_snapshot, parse_snapshot_bytes
from plangate.verdict import ExitCode

HEAD = "a" * 40
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


def variant(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key)
        else:
            out[key] = value
    return out


_DROP = object()
FINDING = {"id": "F1", "finding_type": "lint", "severity": "major", "disposition": None}

INVALID = [
    ("empty", {}, "head_sha"),
    ("missing-head", variant(head_sha=_DROP), "required key missing: head_sha"),
    ("pr-number-string", variant(pr_number="123"), "pr_number"),
    ("pr-number-bool", variant(pr_number=True), "pr_number"),
    ("pr-number-zero", variant(pr_number=0), "pr_number"),
    ("task-id", variant(task_id="task-0001"), "task_id"),
    ("short-head", variant(head_sha="abcdef1"), "head_sha"),
    ("upper-head", variant(head_sha="A" * 40), "head_sha"),
    *[
        (f"mergeable-{v}", variant(mergeable=v), "mergeable")
        for v in ("unknown", "garbage", "dirty", "blocked")
    ],
    ("checks-not-list", variant(checks={}), "checks"),
    (
        "check-extra-key",
        variant(checks=[{"name": "ci", "sha": HEAD, "conclusion": "success", "url": "x"}]),
        "unknown key",
    ),
    (
        "check-short-sha",
        variant(checks=[{"name": "ci", "sha": "abc1234", "conclusion": "success"}]),
        "checks[0].sha",
    ),
    (
        "check-empty-name",
        variant(checks=[{"name": "", "sha": HEAD, "conclusion": "success"}]),
        "checks[0].name",
    ),
    (
        "check-duplicate",
        variant(checks=[{"name": "ci", "sha": HEAD, "conclusion": "success"}] * 2),
        "duplicate check",
    ),
    ("review-missing-sha", variant(review={"state": "approved"}), "review.sha"),
    ("review-extra", variant(review={"state": "approved", "sha": HEAD, "by": "x"}), "unknown key"),
    *[
        (f"severity-{v}", variant(findings=[{**FINDING, "severity": v}]), "severity")
        for v in ("blocker", "P0", "showstopper")
    ],
    (
        "disposition-wontfix",
        variant(findings=[{**FINDING, "disposition": {"kind": "wontfix"}}]),
        "disposition.kind",
    ),
    (
        "disposition-string",
        variant(findings=[{**FINDING, "disposition": "adopted"}]),
        "disposition",
    ),
    (
        "disposition-bad-commit",
        variant(
            findings=[{**FINDING, "disposition": {"kind": "adopted", "repair_commit": "HEAD~1"}}]
        ),
        "repair_commit",
    ),
    ("finding-duplicate-id", variant(findings=[FINDING, FINDING]), "duplicate finding id"),
    (
        "finding-missing-disposition",
        variant(findings=[{k: v for k, v in FINDING.items() if k != "disposition"}]),
        "disposition",
    ),
    ("changed-files-not-strings", variant(changed_files=[1]), "changed_files[0]"),
    ("changed-files-duplicate", variant(changed_files=["a", "a"]), "duplicate"),
    ("flags-not-list", variant(escalation_flags="touches_ho"), "escalation_flags"),
    ("dod-string", variant(dod_evaluated="yes"), "dod_evaluated"),
    ("resolution-list", variant(conflict_resolution=[]), "conflict_resolution"),
    (
        "resolution-bad-sha",
        variant(conflict_resolution={"base_sha": "x", "head_sha": HEAD, "result_sha": HEAD}),
        "base_sha",
    ),
    ("taxonomy-number", variant(ci_failure_taxonomy=3), "ci_failure_taxonomy"),
    ("ancestry-string", variant(source_sha_ancestry="true"), "source_sha_ancestry"),
    ("unknown-top-key", variant(merged=True), "unknown key"),
    ("allowed-paths-not-list", variant(allowed_paths="src/**"), "allowed_paths"),
]


@pytest.mark.parametrize(("snapshot", "needle"), [pytest.param(s, n, id=i) for i, s, n in INVALID])
def test_invalid_snapshot_lists_the_problem(snapshot, needle):
    with pytest.raises(SnapshotInvalid) as info:
        parse_snapshot(snapshot)
    assert info.value.code == "DELIVERY_SNAPSHOT_INVALID"
    assert info.value.exit_code == ExitCode.USAGE
    assert any(needle in p for p in info.value.problems), info.value.problems


def test_every_problem_is_listed():
    with pytest.raises(SnapshotInvalid) as info:
        parse_snapshot(variant(pr_number="1", mergeable="x", dod_evaluated=None))
    assert len(info.value.problems) == 3


@pytest.mark.parametrize(
    "raw",
    [b"", b"[]", b'{"a": 1, "a": 2}', b"\xef\xbb\xbf{}", b'{"x": NaN}', b"{} trailing"],
)
def test_strict_json(raw):
    with pytest.raises(SnapshotInvalid):
        parse_snapshot_bytes(raw)


def test_valid_snapshot_keeps_bytes_and_fields():
    raw = json.dumps(
        variant(
            allowed_paths=["src/app/**"],
            conflict_resolution=None,
            ci_failure_taxonomy=None,
            source_sha_ancestry=True,
            findings=[{**FINDING, "disposition": {"kind": "rejected", "evidence_ref": "e.log"}}],
        )
    ).encode()
    parsed = parse_snapshot_bytes(raw)
    assert parsed.raw == raw
    assert parsed.claimed_ancestry is True
    assert parsed.allowed_paths == ("src/app/**",)
    assert parsed.findings[0].resolved
    assert parsed.review_ok


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*BASE, "allowed_paths", "conflict_resolution", "x"]), json_values
    )
)
def test_arbitrary_objects_validate_or_raise_cleanly(obj):
    problems = ["ok"]
    try:
        parse_snapshot(obj)
    except SnapshotInvalid as exc:
        problems = exc.problems
    assert problems


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(BASE)), json_values)
def test_single_field_mutation_never_crashes(key, value):
    candidate = variant(**{key: value})
    try:
        parsed = parse_snapshot(candidate)
    except SnapshotInvalid:
        return
    assert parsed.task_id == candidate["task_id"]


RUNTIME_ONLY = {"check-duplicate", "finding-duplicate-id"}  # uniqueness by key: not expressible


def _schema():
    import json as _json
    from importlib import resources

    return _json.loads(
        resources.files("plangate.schemas").joinpath("delivery-snapshot.schema.json").read_text()
    )


@pytest.mark.parametrize(("case_id", "snapshot"), [(i, s) for i, s, _ in INVALID])
def test_published_schema_agrees_with_the_validator(case_id, snapshot):
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    assert validator.is_valid(BASE)
    if case_id not in RUNTIME_ONLY:
        assert not validator.is_valid(snapshot), case_id


# -- dispositions: type confusion is refused, never stringified ---------------------


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
