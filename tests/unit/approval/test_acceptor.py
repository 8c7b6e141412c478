"""The acceptor: its rule table (the documented order is the table, and the table is what
runs) and each rule over records built in memory.

Every rule has a record that fails it (and the number the contract gives it): deleting,
reordering or renumbering a row of ``PARSE_RULES``/``RECORD_RULES`` turns a test red, and
so does a docs/approval.md list that differs from the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plangate.approval import acceptor
from plangate.approval.acceptor import (
    ACCEPTOR_RULE_ORDER,
    PARSE_RULES,
    RECORD_RULES,
    ParsedRecord,
    SourceResolution,
    decision_only,
    extract_source_sha,
    normalise_evidence_ref,
    parse_record,
    rule_order_markdown,
    source_sha_of,
    verify_snapshot,
)
from plangate.approval.service import verify_task
from plangate.canonical import sha256_digest
from plangate.fsutil import FileRead, FileState
from plangate.plan.package import compute_package, plan_package_hash
from plangate.snapshot import ARTIFACTS, TaskSnapshot
from plangate.verdict import Reason
from support.repo import git
from support.signed import commit_trust_root, make_team, signed_task
from support.taskkit import approve_task, load_record, make_task, save_record, sha, task_dir

ROOT = Path(__file__).resolve().parents[3]
TASK = "TASK-0001"
OTHER = "sha256:" + "0" * 64


@pytest.fixture
def approved(git_repo: Path) -> tuple[Path, str]:
    make_task(git_repo)
    return git_repo, approve_task(git_repo)


def _record_path(repo: Path) -> Path:
    return task_dir(repo) / "approvals" / "c3.json"


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(repo: Path) -> None:
        record = load_record(repo)
        change(record)
        save_record(repo, record)

    return apply


def _raw(data: bytes) -> Callable[[Path], None]:
    return lambda repo: _record_path(repo).write_bytes(data)


def _set(key: str, value: Any) -> Callable[[Path], None]:
    return _edit(lambda r: r.__setitem__(key, value))


def _reviewer(model: str, key: str, value: Any) -> Callable[[Path], None]:
    return _edit(lambda r: r["reviewers"][model].__setitem__(key, value))


def _same_evidence(record: dict[str, Any]) -> None:
    record["reviewers"]["model_b"]["evidence_ref"] = record["reviewers"]["model_a"]["evidence_ref"]


def _reject_b(record: dict[str, Any]) -> None:
    record["reviewers"]["model_b"]["verdict"] = "reject"


def _no_marker(repo: Path) -> None:
    (task_dir(repo) / "review-self.md").write_text("# Self review\n\nno marker\n")


def _stale_todo(record: dict[str, Any]) -> None:
    record["artifact_hashes"]["todo.md"] = OTHER


# -- the rules over a snapshot built in memory (no repository) -----------------------------

PLAN_BYTES = b"# Plan\n\n## Files / Components to Touch\n- `src/**`\n"
PLAN_HASH = sha256_digest(PLAN_BYTES)
FILES = {name: f"# {name}\n\ncontent\n".encode() for name in ARTIFACTS}
FILES["plan.md"] = PLAN_BYTES
FILES["review-self.md"] = f"# Self review\n\nC1-VERDICT: PASS plan={PLAN_HASH}\n".encode()
FILES["review-external.md"] = f"# Review\n\nC2-VERDICT: approve plan={PLAN_HASH}\n".encode()
HASHES = {name: sha256_digest(data) for name, data in FILES.items()}
PACKAGE = plan_package_hash(HASHES)
SRC = "c" * 40
FULL = SourceResolution(SRC)


def good_record(**changes: Any) -> dict[str, Any]:
    snap = {"plan_hash": PLAN_HASH, "source_sha": SRC, "plan_package_hash": PACKAGE}
    record: dict[str, Any] = {
        "task_id": TASK,
        "approval_kind": "c3-prime",
        "phase": "C-3'",
        "decision": "AUTO_APPROVED",
        "source_sha": SRC,
        "plan_hash": PLAN_HASH,
        "plan_package_hash": PACKAGE,
        "artifact_hashes": dict(HASHES),
        "c1_evidence_ref": "review-self.md#PASS",
        "c2_evidence_ref": "review-external.md#approve",
        "reviewers": {
            "model_a": {**snap, "verdict": "approve", "evidence_ref": "reviews/a.md"},
            "model_b": {**snap, "verdict": "approve", "evidence_ref": "reviews/b.md"},
        },
        "policy_ref": "plangate-arbiter@v1",
        "issued_at": "2026-12-01T09:00:00Z",
        "issued_by": "tests",
    }
    record.update(changes)
    return record


def snapshot_of(
    record: Any = None,
    *,
    data: bytes | None = None,
    files: dict[str, bytes] | None = None,
    record_read: FileRead | None = None,
) -> TaskSnapshot:
    body = (
        data
        if data is not None
        else json.dumps(good_record() if record is None else record).encode()
    )
    reads = {name: FileRead(FileState.OK, content) for name, content in (files or FILES).items()}
    return TaskSnapshot(
        TASK, Path("docs/working") / TASK, reads, record_read or FileRead(FileState.OK, body)
    )


def check(
    record: Any = None,
    *,
    source: SourceResolution | None = FULL,
    expected: str | None = None,
    **kw: Any,
):
    return verify_snapshot(snapshot_of(record, **kw), expected_sha=expected, source=source)


def reasons_of(record: Any = None, **kw: Any) -> list[tuple[str, str]]:
    return [(r.code, r.message) for r in check(record, **kw).reasons]


def test_a_consistent_record_is_accepted_with_its_facts() -> None:
    result = check(expected=SRC)
    assert (result.verdict, result.codes) == ("ACCEPTED", ())
    facts = dict(result.facts)
    assert facts.pop("record") == good_record()
    assert facts == {
        "kind": "c3-prime",
        "task_dir": TASK,
        "task_id": TASK,
        "decision": "AUTO_APPROVED",
        "source_sha": SRC,
        "plan_hash": PLAN_HASH,
        "plan_package_hash": PACKAGE,
        "artifact_hashes": HASHES,
        "current_plan_hash": PLAN_HASH,
        "current_plan_package_hash": PACKAGE,
        "source_sha_full": SRC,
        "expected_sha": SRC,
        "reviewer_verdicts": {"model_a": "approve", "model_b": "approve"},
        "authority": "unauthenticated",
    }


@pytest.mark.parametrize(
    ("state", "code"),
    [
        (FileState.MISSING, "C3_RECORD_MISSING"),
        (FileState.SYMLINK, "C3_RECORD_SYMLINK"),
        (FileState.NOT_REGULAR, "C3_RECORD_NOT_REGULAR"),
        (FileState.TOO_LARGE, "C3_RECORD_TOO_LARGE"),
        (FileState.UNREADABLE, "C3_RECORD_UNREADABLE"),
    ],
)
def test_each_unreadable_record_state_has_its_code(state: FileState, code: str) -> None:
    result = check(record_read=FileRead(state))
    assert (result.verdict, result.codes) == ("REJECTED", (code,))
    assert result.reasons[0].message == f"approvals/c3.json {state.value}"
    assert dict(result.facts) == {"kind": None}
    detailed = check(record_read=FileRead(state, None, "why not"))
    assert detailed.reasons[0].message == "approvals/c3.json why not"


def test_parse_level_failures_stop_at_the_first() -> None:
    assert reasons_of(data=b"{")[0][0] == "C3_RECORD_MALFORMED"
    assert reasons_of(data=b"{")[0][1].startswith("approvals/c3.json: JSON_")
    assert reasons_of(data=b"[1]") == [
        ("C3_RECORD_NOT_OBJECT", "approvals/c3.json top level is list, not an object")
    ]
    assert [c for c, _ in reasons_of(good_record(approval_kind="c4", c3_status="x"))] == [
        "C3_APPROVAL_KIND_UNKNOWN"
    ]


def test_a_record_without_approval_kind_goes_to_the_legacy_rules() -> None:
    record = good_record()
    del record["approval_kind"]
    assert check(record).facts.get("kind") != "c3-prime"


def test_a_given_parse_is_used_only_for_the_very_bytes_it_parsed() -> None:
    snapshot = snapshot_of()
    data = snapshot.record.data
    assert data is not None
    forged = ParsedRecord(data, good_record(decision="BLOCKED"))
    result = verify_snapshot(snapshot, expected_sha=None, source=FULL, parsed=forged)
    assert result.codes == ("C3_DECISION_NOT_APPROVED",)  # the given parse was used
    copy_of_bytes = ParsedRecord(bytes(bytearray(data)), good_record(decision="BLOCKED"))
    result = verify_snapshot(snapshot, expected_sha=None, source=FULL, parsed=copy_of_bytes)
    assert result.verdict == "ACCEPTED"  # other bytes: parsed again here
    unreadable = snapshot._replace(record=FileRead(FileState.MISSING))
    result = verify_snapshot(unreadable, expected_sha=None, source=FULL, parsed=forged)
    assert result.codes == ("C3_RECORD_MISSING",)


def test_parse_record_and_source_sha_of() -> None:
    assert parse_record(None) is None
    assert parse_record(b"{") is None
    assert parse_record(b"[]") is None
    parsed = parse_record(b'{"source_sha": "abc1234"}')
    assert parsed is not None and parsed.value == {"source_sha": "abc1234"}
    assert source_sha_of(parsed) == "abc1234"
    assert source_sha_of(None) is None
    assert extract_source_sha(b'{"source_sha": "ABC1234"}') is None
    assert extract_source_sha(b'{"source_sha": 7}') is None
    assert extract_source_sha(b'{"source_sha": "abc123"}') is None
    assert extract_source_sha(b'{"source_sha": "' + b"a" * 40 + b'"}') == "a" * 40


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("a.md", "./a.md", True),
        ("a.md", "x/../a.md", True),
        ("a.md", "A.md", True),
        ("a.md", "a.md#", True),
        ("a.md", " a.md ", True),
        ("x\\a.md", "x/a.md", True),
        ("a.md", "a\u200b.md", True),
        ("a.md", "\uff41.md", True),
        ("a.md#One", "a.md#one", True),
        ("a.md#one", "a.md#two", False),
        ("a.md", "b.md", False),
        (".", "", True),
        ("./", "", True),
        ("#x", "#X", True),
    ],
)
def test_evidence_references_compare_as_the_same_file(a: str, b: str, same: bool) -> None:
    assert (normalise_evidence_ref(a) == normalise_evidence_ref(b)) is same


def test_normalised_reference_forms() -> None:
    assert normalise_evidence_ref(" ./Docs/../A.md # Part ") == "a.md#part"
    assert normalise_evidence_ref("a.md#") == "a.md"
    assert normalise_evidence_ref(".") == ""
    assert normalise_evidence_ref("a//b.md") == "a/b.md"


RECORD_PROBLEMS: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    (
        "c3_status",
        {"c3_status": "APPROVED"},
        [
            (
                "C3_STATUS_FORBIDDEN",
                "c3_status is forbidden in a c3-prime record (legacy grep paths read it)",
            )
        ],
    ),
    (
        "unknown keys",
        {"zz": 1, "yy": 2, "_ok": "x"},
        [("C3_UNKNOWN_KEYS", "unknown top-level keys: zz, yy")],
    ),
    ("phase type", {"phase": 3}, [("C3_FIELD_TYPE", "phase must be a string, got int")]),
    (
        "task id",
        {"task_id": "TASK-1"},
        [("C3_TASK_ID_INVALID", "task_id 'TASK-1' is not TASK-0000")],
    ),
    (
        "other task",
        {"task_id": "TASK-0002"},
        [
            (
                "C3_TASK_ID_MISMATCH",
                "task_id 'TASK-0002' does not match the task directory 'TASK-0001'",
            )
        ],
    ),
    ("phase", {"phase": "C-3"}, [("C3_PHASE_INVALID", "phase 'C-3' is not \"C-3'\"")]),
    ("policy blank", {"policy_ref": " \u200b"}, [("C3_FIELD_EMPTY", "policy_ref is empty")]),
    (
        "issued_by type",
        {"issued_by": ["x"]},
        [("C3_FIELD_TYPE", "issued_by must be a string, got list")],
    ),
    ("c2 ref blank", {"c2_evidence_ref": ""}, [("C3_FIELD_EMPTY", "c2_evidence_ref is empty")]),
    (
        "issued_at",
        {"issued_at": "2026-12-01T09:00:00.5Z"},
        [
            (
                "C3_ISSUED_AT_INVALID",
                "issued_at '2026-12-01T09:00:00.5Z' is not YYYY-MM-DDTHH:MM:SSZ "
                "(no fractions, no offset)",
            )
        ],
    ),
    (
        "annotation",
        {"_n": 1, "_s": "fine"},
        [("C3_ANNOTATION_NOT_STRING", "annotation _n must be a string")],
    ),
    (
        "loopspec hash",
        {"derived_loopspec_hash": "x"},
        [("C3_LOOPSPEC_HASH_INVALID", "derived_loopspec_hash is not sha256:<64 lowercase hex>")],
    ),
    (
        "decision word",
        {"decision": "APPROVED"},
        [
            (
                "C3_DECISION_INVALID",
                "decision 'APPROVED' is not one of ('AUTO_APPROVED', 'HUMAN_ESCALATED', 'BLOCKED')",
            )
        ],
    ),
    (
        "blocked",
        {"decision": "BLOCKED"},
        [("C3_DECISION_NOT_APPROVED", "decision=BLOCKED: only AUTO_APPROVED is executable")],
    ),
    (
        "source format",
        {"source_sha": "c" * 41},
        [
            ("C3_SOURCE_SHA_INVALID", f"source_sha {'c' * 41!r} is not 7-40 lowercase hex"),
            (
                "C3_REVIEWER_TRIO_MISMATCH",
                "reviewers.model_a.source_sha differs from the top-level "
                "value (the reviewers did not see the same Plan Package)",
            ),
            (
                "C3_REVIEWER_TRIO_MISMATCH",
                "reviewers.model_b.source_sha differs from the top-level "
                "value (the reviewers did not see the same Plan Package)",
            ),
        ],
    ),
    (
        "plan stale",
        {"plan_hash": "sha256:" + "0" * 64},
        [
            ("C3_PLAN_HASH_STALE", "plan_hash differs from the current plan.md (stale)"),
            (
                "C3_REVIEWER_TRIO_MISMATCH",
                "reviewers.model_a.plan_hash differs from the top-level "
                "value (the reviewers did not see the same Plan Package)",
            ),
            (
                "C3_REVIEWER_TRIO_MISMATCH",
                "reviewers.model_b.plan_hash differs from the top-level "
                "value (the reviewers did not see the same Plan Package)",
            ),
        ],
    ),
    (
        "hashes keys",
        {"artifact_hashes": {"plan.md": PLAN_HASH}},
        [("C3_ARTIFACT_HASHES_KEYS", "artifact_hashes must map exactly the six artifact names")],
    ),
    (
        "hash not a digest",
        {"artifact_hashes": {**HASHES, "todo.md": "x"}},
        [
            ("C3_ARTIFACT_HASH_INVALID", "artifact_hashes['todo.md'] is not a sha256 digest"),
            (
                "C3_PLAN_PACKAGE_HASH_MISMATCH",
                "plan_package_hash is not the canonical hash of artifact_hashes",
            ),
        ],
    ),
    (
        "hash stale",
        {"artifact_hashes": {**HASHES, "todo.md": "sha256:" + "0" * 64}},
        [
            (
                "C3_ARTIFACT_STALE",
                "artifact_hashes mismatch: todo.md changed since the record was issued",
            ),
            (
                "C3_PLAN_PACKAGE_HASH_MISMATCH",
                "plan_package_hash is not the canonical hash of artifact_hashes",
            ),
        ],
    ),
    (
        "reviewers keys",
        {"reviewers": {"model_a": {}}},
        [("C3_REVIEWERS_KEYS", "reviewers must hold exactly model_a and model_b")],
    ),
]


@pytest.mark.parametrize(
    ("what", "changes", "expected"), RECORD_PROBLEMS, ids=[p[0] for p in RECORD_PROBLEMS]
)
def test_each_record_rule_names_its_problem(
    what: str, changes: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    result = check(good_record(**changes))
    assert result.verdict == "REJECTED"
    assert [(r.code, r.message) for r in result.reasons] == expected


def test_missing_keys_are_named_in_contract_order() -> None:
    record = good_record()
    del record["issued_by"], record["phase"]
    assert reasons_of(record) == [("C3_MISSING_KEYS", "missing required keys: phase, issued_by")]


def test_a_typographic_apostrophe_is_named_in_the_hint() -> None:
    (reason,) = check(good_record(phase="C-3\u2019")).reasons
    assert reason.hint.startswith("the phase uses a typographic apostrophe")
    (reason,) = check(good_record(phase="C-4")).reasons
    assert reason.hint.startswith("re-run the reviews")


@pytest.mark.parametrize(
    ("source", "expected", "codes"),
    [
        (None, None, ("C3_SOURCE_SHA_UNRESOLVED",)),
        (
            SourceResolution(None, Reason("C3_SOURCE_SHA_UNKNOWN", "no such commit")),
            None,
            ("C3_SOURCE_SHA_UNKNOWN",),
        ),
        (SourceResolution(None), None, ("C3_SOURCE_SHA_UNRESOLVED",)),
        (FULL, "d" * 40, ("C3_SOURCE_SHA_MISMATCH",)),
        (FULL, None, ()),
    ],
)
def test_source_sha_resolution_and_expected_commit(
    source: SourceResolution | None, expected: str | None, codes: tuple[str, ...]
) -> None:
    result = check(source=source, expected=expected)
    assert result.codes == codes
    assert ("source_sha_full" in result.facts) is (source is FULL)


def test_a_mismatched_source_names_both_commits() -> None:
    (reason,) = check(expected="d" * 40).reasons
    assert reason.message == f"source_sha {SRC} names {SRC}, not the expected commit {'d' * 40}"


@pytest.mark.parametrize(
    ("model", "change", "code", "message"),
    [
        (
            "model_a",
            {"note": "x"},
            "C3_REVIEWER_SNAPSHOT_KEYS",
            "reviewers.model_a must hold exactly verdict, plan_hash, source_sha, plan_package_hash, "
            "evidence_ref",
        ),
        (
            "model_b",
            {"evidence_ref": " "},
            "C3_REVIEWER_SNAPSHOT_EMPTY",
            "reviewers.model_b: missing, empty or non-string: evidence_ref",
        ),
        (
            "model_b",
            {"verdict": 1},
            "C3_REVIEWER_SNAPSHOT_EMPTY",
            "reviewers.model_b: missing, empty or non-string: verdict",
        ),
        (
            "model_a",
            {"plan_package_hash": "sha256:" + "0" * 64},
            "C3_REVIEWER_TRIO_MISMATCH",
            "reviewers.model_a.plan_package_hash differs from the top-level value (the reviewers "
            "did not see the same Plan Package)",
        ),
        (
            "model_b",
            {"verdict": "approved"},
            "C3_REVIEWER_VERDICT_INVALID",
            "reviewers.model_b.verdict 'approved' is not approve/reject",
        ),
        (
            "model_b",
            {"evidence_ref": "./Reviews/A.md"},
            "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
            "both reviewers cite the same evidence 'reviews/a.md'",
        ),
        (
            "model_b",
            {"verdict": "reject"},
            "C3_DECISION_VERDICT_INCONSISTENT",
            "decision is AUTO_APPROVED but a reviewer verdict is reject (tamper sign)",
        ),
    ],
)
def test_each_reviewer_rule_names_its_problem(
    model: str, change: dict[str, Any], code: str, message: str
) -> None:
    record = good_record()
    record["reviewers"][model].update(change)
    result = check(record)
    assert [(r.code, r.message) for r in result.reasons] == [(code, message)]


def test_a_reviewer_snapshot_that_is_not_an_object_is_named() -> None:
    record = good_record()
    record["reviewers"]["model_b"] = "approve"
    assert check(record).codes == ("C3_REVIEWER_SNAPSHOT_KEYS",)


def test_only_a_consistent_human_escalated_record_needs_a_human() -> None:
    result = check(good_record(decision="HUMAN_ESCALATED"))
    assert (result.verdict, result.codes) == ("HUMAN_ESCALATED", ("C3_DECISION_NOT_APPROVED",))
    assert decision_only(result)
    assert check(good_record(decision="BLOCKED")).verdict == "REJECTED"
    mixed = check(good_record(decision="HUMAN_ESCALATED", policy_ref=""))
    assert mixed.verdict == "REJECTED" and not decision_only(mixed)
    assert mixed.codes == ("C3_FIELD_EMPTY", "C3_DECISION_NOT_APPROVED")


def test_a_rejected_verdict_under_a_human_decision_is_not_a_tamper_sign() -> None:
    record = good_record(decision="HUMAN_ESCALATED")
    record["reviewers"]["model_b"]["verdict"] = "reject"
    result = check(record)
    assert result.codes == ("C3_DECISION_NOT_APPROVED",)
    assert result.facts["reviewer_verdicts"] == {"model_a": "approve", "model_b": "reject"}


def test_a_missing_artifact_and_a_missing_marker_are_reported_from_the_package() -> None:
    files = dict(FILES)
    del files["todo.md"]
    codes = check(files=files).codes
    assert codes[0] == "ARTIFACT_MISSING"
    files = dict(FILES)
    files["review-external.md"] = b"# Review\n\nno marker\n"
    assert "EVIDENCE_C2_MARKER_MISSING" in check(files=files).codes


def test_a_non_string_field_is_judged_by_no_later_rule() -> None:
    result = check(good_record(source_sha=7, plan_hash=None, decision=1))
    assert [r.code for r in result.reasons][:3] == ["C3_FIELD_TYPE"] * 3
    assert result.facts["source_sha"] is None and result.facts["decision"] is None


# -- the parse rules' guards, the non-empty fields, the key shortcuts, a foreign package ------


def test_a_record_read_that_is_not_ok_is_never_parsed() -> None:
    good_bytes = json.dumps(good_record()).encode()
    result = check(record_read=FileRead(FileState.MISSING, good_bytes))
    assert (result.verdict, result.codes) == ("REJECTED", ("C3_RECORD_MISSING",))
    result = check(record_read=FileRead(FileState.OK, None))
    assert (result.verdict, result.codes) == ("REJECTED", ("C3_RECORD_UNREADABLE",))


@pytest.mark.parametrize("key", ["c1_evidence_ref", "c2_evidence_ref", "policy_ref", "issued_by"])
def test_each_evidence_and_authorship_field_must_be_a_non_empty_string(key: str) -> None:
    assert reasons_of(good_record(**{key: "\u200b "})) == [("C3_FIELD_EMPTY", f"{key} is empty")]
    assert reasons_of(good_record(**{key: 3})) == [
        ("C3_FIELD_TYPE", f"{key} must be a string, got int")
    ]


def test_a_record_with_every_allowed_key_and_more_is_still_checked_for_extra_keys() -> None:
    full = good_record(derived_loopspec_hash="sha256:" + "1" * 64)
    assert check(full).verdict == "ACCEPTED"
    assert reasons_of({**full, "zzz": "x"}) == [("C3_UNKNOWN_KEYS", "unknown top-level keys: zzz")]
    assert reasons_of({**full, "_note": 1}) == [
        ("C3_ANNOTATION_NOT_STRING", "annotation _note must be a string")
    ]


def test_a_non_string_task_id_is_reported_once() -> None:
    result = check(good_record(task_id=7))
    assert (result.verdict, result.codes) == ("REJECTED", ("C3_FIELD_TYPE",))


def test_a_package_computed_for_another_task_is_not_used() -> None:
    other_files = {**FILES, "plan.md": b"# Plan\n\nanother plan\n"}
    other = TaskSnapshot(
        "TASK-0002",
        Path("docs/working/TASK-0002"),
        {name: FileRead(FileState.OK, data) for name, data in other_files.items()},
        FileRead(FileState.OK, b"{}"),
    )
    result = verify_snapshot(
        snapshot_of(), expected_sha=None, source=FULL, package=compute_package(other)
    )
    assert (result.verdict, result.codes) == ("ACCEPTED", ())
    assert result.facts["current_plan_hash"] == PLAN_HASH


@pytest.mark.parametrize(
    "key",
    [
        "task_id",
        "artifact_hashes",
        "reviewers",
        "decision",
        "phase",
        "issued_at",
        "c1_evidence_ref",
    ],
)
def test_a_missing_key_is_reported_by_the_key_rule_only(key: str) -> None:
    record = good_record()
    del record[key]
    assert check(record).codes == ("C3_MISSING_KEYS",)


# -- the quick acceptance of the usual record, against the full table ------------------


def _table(snapshot: TaskSnapshot, source: SourceResolution | None, expected: str | None):
    """The full table's answer (what verify_snapshot answered before the quick path)."""
    record = json.loads(snapshot.record.data or b"{}")
    return acceptor._verify_c3_prime(
        acceptor._Check(
            record, snapshot, expected_sha=expected, source=source,
            given_package=compute_package(snapshot),
        )
    )


def _with_reviewer(model: str, **changes: Any) -> dict[str, Any]:
    record = good_record()
    record["reviewers"][model] = {**record["reviewers"][model], **changes}
    return record


def _everywhere(key: str, value: Any) -> dict[str, Any]:
    """``key`` changed at the top level and in both snapshots (the trio stays equal)."""
    record = good_record(**{key: value})
    for snap in record["reviewers"].values():
        snap[key] = value
    return record


def _without(key: str) -> dict[str, Any]:
    record = good_record()
    del record[key]
    return record


def _reviewer_without(model: str, key: str) -> dict[str, Any]:
    record = good_record()
    del record["reviewers"][model][key]
    return record


STALE_FILES = {**FILES, "review-self.md": b"C1-VERDICT: PASS plan=sha256:" + b"0" * 64 + b"\n"}
QUICK_CASES: list[tuple[str, dict[str, Any], dict[str, bytes]]] = [
    ("good", good_record(), FILES),
    ("loopspec hash", good_record(derived_loopspec_hash=OTHER), FILES),
    ("non-ASCII visible refs", good_record(c1_evidence_ref="r\u00e9view.md", issued_by="\u00e9"),
     FILES),
    ("annotation", good_record(_note="fine"), FILES),
    ("bad loopspec hash", good_record(derived_loopspec_hash=OTHER.upper()), FILES),
    *[(f"problem: {what}", good_record(**changes), FILES) for what, changes, _ in RECORD_PROBLEMS],
    ("escalated", good_record(decision="HUMAN_ESCALATED"), FILES),
    ("decision type", good_record(decision=1), FILES),
    ("task id type", good_record(task_id=1), FILES),
    ("issued_at calendar", good_record(issued_at="2026-02-30T09:00:00Z"), FILES),
    ("policy zero-width", good_record(policy_ref="\u200b"), FILES),
    ("issued_by int", good_record(issued_by=5), FILES),
    ("c1 ref tab only", good_record(c1_evidence_ref="\t"), FILES),
    ("package hash", good_record(plan_package_hash=OTHER), FILES),
    ("package hash everywhere", _everywhere("plan_package_hash", OTHER), FILES),
    ("plan hash everywhere", _everywhere("plan_hash", OTHER), FILES),
    ("source everywhere", _everywhere("source_sha", "d" * 40), FILES),
    ("short source everywhere", _everywhere("source_sha", "c" * 7), FILES),
    ("bad source everywhere", _everywhere("source_sha", "C" * 40), FILES),
    ("blank trio everywhere", _everywhere("plan_hash", " "), FILES),
    ("package hash upper", good_record(plan_package_hash=PACKAGE.upper()), FILES),
    ("hashes upper", good_record(artifact_hashes={**HASHES, "plan.md": PLAN_HASH.upper()}),
     FILES),
    ("hashes extra", good_record(artifact_hashes={**HASHES, "x.md": OTHER}), FILES),
    ("hashes list", good_record(artifact_hashes=list(HASHES)), FILES),
    ("reviewers list", good_record(reviewers=[]), FILES),
    ("reviewers extra", good_record(reviewers={**good_record()["reviewers"], "model_c": {}}),
     FILES),
    ("snapshot list", _with_reviewer("model_a") | {"reviewers": {"model_a": [], "model_b": {}}},
     FILES),
    ("snapshot key missing", _reviewer_without("model_b", "source_sha"), FILES),
    ("snapshot extra key", _with_reviewer("model_a", extra="x"), FILES),
    ("verdict reject", _with_reviewer("model_b", verdict="reject"), FILES),
    ("verdict case", _with_reviewer("model_a", verdict="Approve"), FILES),
    ("verdict blank", _with_reviewer("model_a", verdict=" "), FILES),
    ("ref blank", _with_reviewer("model_a", evidence_ref="\u200b"), FILES),
    ("ref int", _with_reviewer("model_b", evidence_ref=3), FILES),
    ("ref shared", _with_reviewer("model_b", evidence_ref="./REVIEWS/a.md"), FILES),
    ("trio plan", _with_reviewer("model_a", plan_hash=OTHER), FILES),
    ("trio source", _with_reviewer("model_b", source_sha="d" * 40), FILES),
    ("trio package", _with_reviewer("model_b", plan_package_hash=OTHER), FILES),
    ("no reviewers", _without("reviewers"), FILES),
    ("no hashes", _without("artifact_hashes"), FILES),
    ("no issued_at", _without("issued_at"), FILES),
    ("missing artifact", good_record(), {k: v for k, v in FILES.items() if k != "todo.md"}),
    ("empty artifact", good_record(), {**FILES, "todo.md": b""}),
    ("stale marker", good_record(), STALE_FILES),
    ("changed artifact", good_record(), {**FILES, "todo.md": b"changed\n"}),
]
SOURCES = [(FULL, None), (FULL, SRC), (FULL, "d" * 40), (None, None), (SourceResolution(None), SRC)]


@pytest.mark.parametrize(("what", "record", "files"), QUICK_CASES, ids=[c[0] for c in QUICK_CASES])
@pytest.mark.parametrize(("source", "expected"), SOURCES)
def test_the_quick_acceptance_gives_the_tables_answer(
    what: str,
    record: dict[str, Any],
    files: dict[str, bytes],
    source: SourceResolution | None,
    expected: str | None,
) -> None:
    snapshot = snapshot_of(record, files=files)
    table = _table(snapshot, source, expected)
    answer = verify_snapshot(snapshot, expected_sha=expected, source=source)
    assert (answer.verdict, answer.reasons, answer.facts) == (
        table.verdict, table.reasons, table.facts
    )
    quick = acceptor.quick_accept(record, snapshot, compute_package(snapshot), expected, source)
    # The quick path answers only what the table accepts, and then exactly as it does.
    assert quick is None or quick == table
    if quick is not None:
        assert table.verdict == "ACCEPTED"


@pytest.mark.parametrize(
    "what", ["good", "loopspec hash", "non-ASCII visible refs"]
)
def test_the_usual_record_is_accepted_by_the_quick_path(what: str) -> None:
    record = next(r for name, r, _ in QUICK_CASES if name == what)
    snapshot = snapshot_of(record)
    quick = acceptor.quick_accept(record, snapshot, compute_package(snapshot), SRC, FULL)
    assert quick is not None and quick == _table(snapshot, FULL, SRC)


def test_the_quick_path_stands_only_for_the_table_it_was_written_for() -> None:
    # A rule added, removed or moved switches it off: every record then takes the table.
    assert acceptor._QUICK_COVERS_TABLE
    assert tuple(rule.check for rule in RECORD_RULES) == acceptor._QUICK_COVERED


def test_the_documented_table_has_its_header() -> None:
    assert rule_order_markdown()[:2] == ["| # | rule | reason code |", "|---|---|---|"]


# -- the rules through the service, over a real repository -------------------------------
# Kept after the in-memory tests: they are slower (a git repository each), and with
# `pytest -x` a broken rule is then found by the fast tests first.

EXPECTED_SHA = "expected"  # replaced by a full id that is not HEAD


# (rule number in docs/approval.md, code the rule reports, how to break only that rule)
def _require_signatures(repo: Path) -> None:
    """Commit a trust root that requires signatures: the unsigned record then fails."""
    from support.keys import allowed_signers, make_key, trust_toml
    from support.repo import commit_all

    names = ["a@example.com", "b@example.com", "c@example.com"]
    keys = [make_key(repo.parent / "keys", n) for n in names]
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/trust.toml").write_bytes(trust_toml(names[:2], names[2:]))
    (repo / ".plangate/allowed_signers").write_bytes(allowed_signers(*keys))
    commit_all(repo, "trust root")


RULES: list[tuple[int, str, Callable[[Path], None]]] = [
    (1, "C3_RECORD_MISSING", lambda repo: _record_path(repo).unlink()),
    (2, "C3_RECORD_MALFORMED", _raw(b"{")),
    (3, "C3_RECORD_NOT_OBJECT", _raw(b"[]")),
    (4, "C3_APPROVAL_KIND_UNKNOWN", _set("approval_kind", "c4")),
    (5, "C3_STATUS_FORBIDDEN", _set("c3_status", "APPROVED")),
    (6, "C3_UNKNOWN_KEYS", _set("zzz", "x")),
    (7, "C3_MISSING_KEYS", _edit(lambda r: r.pop("policy_ref"))),
    (8, "C3_FIELD_TYPE", _set("phase", 3)),
    (9, "C3_TASK_ID_INVALID", _set("task_id", "TASK-1")),
    (9, "C3_TASK_ID_MISMATCH", _set("task_id", "TASK-0002")),
    (10, "C3_PHASE_INVALID", _set("phase", "C-3")),
    (11, "C3_FIELD_EMPTY", _set("policy_ref", "\u200b ")),
    (12, "C3_ISSUED_AT_INVALID", _set("issued_at", "2026-02-30T00:00:00Z")),
    (13, "C3_ANNOTATION_NOT_STRING", _set("_note", 1)),
    (14, "C3_LOOPSPEC_HASH_INVALID", _set("derived_loopspec_hash", "sha256:x")),
    (15, "ARTIFACT_MISSING", lambda repo: (task_dir(repo) / "todo.md").unlink()),
    (16, "EVIDENCE_C1_*", _no_marker),
    (17, "C3_DECISION_NOT_APPROVED", _set("decision", "BLOCKED")),
    (17, "C3_DECISION_INVALID", _set("decision", "APPROVED")),
    (18, "C3_SOURCE_SHA_INVALID", _set("source_sha", "XYZ")),
    (19, "C3_SOURCE_SHA_MISMATCH", lambda repo: None),
    (20, "C3_PLAN_HASH_STALE", _set("plan_hash", OTHER)),
    (21, "C3_ARTIFACT_HASHES_KEYS", _set("artifact_hashes", {})),
    (21, "C3_ARTIFACT_STALE", _edit(_stale_todo)),
    (22, "C3_PLAN_PACKAGE_HASH_MISMATCH", _set("plan_package_hash", OTHER)),
    (23, "C3_REVIEWERS_KEYS", _set("reviewers", {})),
    (24, "C3_REVIEWER_TRIO_MISMATCH", _reviewer("model_a", "plan_hash", OTHER)),
    (24, "C3_REVIEWER_SNAPSHOT_EMPTY", _reviewer("model_a", "evidence_ref", " ")),
    (25, "C3_REVIEWER_VERDICT_INVALID", _reviewer("model_a", "verdict", "maybe")),
    (26, "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT", _edit(_same_evidence)),
    (27, "C3_DECISION_VERDICT_INCONSISTENT", _edit(_reject_b)),
    (28, "C3_SIGNATURE_*", _require_signatures),
    (29, "C3_SCOPE_DIGEST_INVALID", _set("scope_digest", "sha256:x")),
    (29, "C3_SCOPE_DIGEST_MISMATCH", _set("scope_digest", "sha256:" + "0" * 64)),
]


def _verify(repo: Path, head: str, code: str) -> tuple[str, ...]:
    expected = None
    if code == "C3_SOURCE_SHA_MISMATCH":
        expected = "f" * 40 if head != "f" * 40 else "e" * 40
    return verify_task(repo, TASK, expected_sha=expected).codes


def _matches(code: str, pattern: str) -> bool:
    return code.startswith(pattern[:-1]) if pattern.endswith("*") else code == pattern


def test_the_documented_list_is_generated_from_the_table() -> None:
    docs = (ROOT / "docs" / "approval.md").read_text(encoding="utf-8").split("\n")
    lines = rule_order_markdown()
    start = docs.index(lines[0])
    end = start
    while end < len(docs) and docs[end].startswith("|"):
        end += 1
    assert docs[start:end] == lines, (
        "docs/approval.md's rule list differs from the acceptor's table; paste "
        "'\\n'.join(plangate.approval.acceptor.rule_order_markdown()) into it"
    )


def test_the_order_is_the_parse_rules_then_the_record_rules() -> None:
    assert len(ACCEPTOR_RULE_ORDER) == len(PARSE_RULES) + len(RECORD_RULES) == 29
    assert [r.number for r in ACCEPTOR_RULE_ORDER] == list(range(1, 30))
    assert [r.codes for r in ACCEPTOR_RULE_ORDER] == [
        *(r.codes for r in PARSE_RULES),
        *(r.codes for r in RECORD_RULES),
    ]


def test_every_rule_of_the_table_has_a_breaking_record_here() -> None:
    assert {number for number, _code, _break in RULES} == {r.number for r in ACCEPTOR_RULE_ORDER}


@pytest.mark.parametrize(("number", "code", "breaker"), RULES, ids=[r[1] for r in RULES])
def test_each_rule_reports_its_code_at_its_number(
    approved: tuple[Path, str], number: int, code: str, breaker: Callable[[Path], None]
) -> None:
    repo, head = approved
    assert code in ACCEPTOR_RULE_ORDER[number - 1].codes
    breaker(repo)
    found = _verify(repo, head, code)
    assert any(_matches(f, code) for f in found), found
    if number <= len(PARSE_RULES):
        assert len(found) == 1  # a parse-level failure stops evaluation at once


def test_every_failing_rule_is_reported_in_table_order(approved: tuple[Path, str]) -> None:
    repo, _head = approved
    record = load_record(repo)
    record.update(
        {
            "c3_status": "APPROVED",
            "zzz": 1,
            "issued_at": 5,
            "task_id": "TASK-1",
            "phase": "C-3",
            "policy_ref": " ",
            "_note": 1,
            "derived_loopspec_hash": "x",
            "decision": "BLOCKED",
            "plan_hash": OTHER,
            "plan_package_hash": OTHER,
        }
    )
    del record["c2_evidence_ref"]
    record["artifact_hashes"]["todo.md"] = OTHER
    record["reviewers"]["model_a"]["source_sha"] = "a" * 40
    record["reviewers"]["model_b"]["verdict"] = "maybe"
    record["reviewers"]["model_b"]["evidence_ref"] = record["reviewers"]["model_a"]["evidence_ref"]
    save_record(repo, record)
    result = verify_task(repo, TASK, expected_sha="f" * 40)
    assert result.verdict == "REJECTED"
    assert result.codes == (
        "C3_STATUS_FORBIDDEN",
        "C3_UNKNOWN_KEYS",
        "C3_MISSING_KEYS",
        "C3_FIELD_TYPE",
        "C3_TASK_ID_INVALID",
        "C3_PHASE_INVALID",
        "C3_FIELD_EMPTY",
        "C3_ANNOTATION_NOT_STRING",
        "C3_LOOPSPEC_HASH_INVALID",
        "C3_DECISION_NOT_APPROVED",
        "C3_SOURCE_SHA_MISMATCH",
        "C3_PLAN_HASH_STALE",
        "C3_ARTIFACT_STALE",
        "C3_PLAN_PACKAGE_HASH_MISMATCH",
        # model_a: plan_hash, source_sha, plan_package_hash; model_b: plan_hash,
        # plan_package_hash (the top-level values changed)
        *["C3_REVIEWER_TRIO_MISMATCH"] * 5,
        "C3_REVIEWER_VERDICT_INVALID",
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    )
    numbers = [
        next(r.number for r in ACCEPTOR_RULE_ORDER if code in r.codes) for code in result.codes
    ]
    assert numbers == sorted(numbers)


def test_a_record_whose_only_failure_is_escalation_needs_a_human(git_repo: Path) -> None:
    make_task(git_repo)
    approve_task(git_repo, decision="HUMAN_ESCALATED")
    result = verify_task(git_repo, TASK)
    assert (result.verdict, result.codes, int(result.exit_code)) == (
        "HUMAN_ESCALATED",
        ("C3_DECISION_NOT_APPROVED",),
        3,
    )


def test_an_accepted_record_exits_zero(approved: tuple[Path, str]) -> None:
    repo, head = approved
    result = verify_task(repo, TASK, expected_sha=head)
    assert (result.verdict, result.codes, int(result.exit_code)) == ("ACCEPTED", (), 0)
    assert result.facts["source_sha_full"] == head
    assert result.facts["current_plan_hash"] == sha((task_dir(repo) / "plan.md").read_bytes())
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_record_signed_under_a_trust_root_is_accepted(git_repo: Path, tmp_path: Path) -> None:
    team = make_team(tmp_path / "keys")
    commit_trust_root(git_repo, team)
    signed_task(git_repo, tmp_path, team)
    result = verify_task(git_repo, TASK)
    assert (result.verdict, result.codes) == ("ACCEPTED", ())
    assert result.facts["authority"] != "unauthenticated"


def _sharing_prefix(full: str, width: int) -> str:
    """A different full commit id that shares the first ``width`` hex digits of ``full``."""
    flipped = "".join("0" if ch != "0" else "1" for ch in full[width:])
    return full[:width] + flipped


@pytest.mark.parametrize("width", [7, 12, 39])
def test_an_expected_commit_sharing_a_prefix_is_not_the_commit(width: int) -> None:
    other = _sharing_prefix(SRC, width)
    assert len(other) == 40 and other != SRC
    result = check(expected=other)
    assert (result.verdict, result.codes) == ("REJECTED", ("C3_SOURCE_SHA_MISMATCH",))
    assert check(expected=SRC).verdict == "ACCEPTED"


def test_the_expected_commit_of_a_real_approval_must_match_in_full(
    approved: tuple[Path, str],
) -> None:
    repo, head = approved
    assert verify_task(repo, TASK, expected_sha=head).verdict == "ACCEPTED"
    for width in (7, 39):
        result = verify_task(repo, TASK, expected_sha=_sharing_prefix(head, width))
        assert result.codes == ("C3_SOURCE_SHA_MISMATCH",), width
