"""The acceptor's rule table: the documented order is the table, and the table is what runs.

Every rule has a record that fails it (and the number the contract gives it): deleting,
reordering or renumbering a row of ``PARSE_RULES``/``RECORD_RULES`` turns a test red, and
so does a docs/approval.md list that differs from the table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plangate.approval.acceptor import (
    ACCEPTOR_RULE_ORDER,
    PARSE_RULES,
    RECORD_RULES,
    rule_order_markdown,
)
from plangate.approval.service import verify_task
from support.repo import git
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
    assert len(ACCEPTOR_RULE_ORDER) == len(PARSE_RULES) + len(RECORD_RULES) == 28
    assert [r.number for r in ACCEPTOR_RULE_ORDER] == list(range(1, 29))
    assert [r.codes for r in ACCEPTOR_RULE_ORDER] == [
        *(r.codes for r in PARSE_RULES), *(r.codes for r in RECORD_RULES)
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
    record.update({
        "c3_status": "APPROVED", "zzz": 1, "issued_at": 5, "task_id": "TASK-1",
        "phase": "C-3", "policy_ref": " ", "_note": 1, "derived_loopspec_hash": "x",
        "decision": "BLOCKED", "plan_hash": OTHER, "plan_package_hash": OTHER,
    })
    del record["c2_evidence_ref"]
    record["artifact_hashes"]["todo.md"] = OTHER
    record["reviewers"]["model_a"]["source_sha"] = "a" * 40
    record["reviewers"]["model_b"]["verdict"] = "maybe"
    record["reviewers"]["model_b"]["evidence_ref"] = record["reviewers"]["model_a"]["evidence_ref"]
    save_record(repo, record)
    result = verify_task(repo, TASK, expected_sha="f" * 40)
    assert result.verdict == "REJECTED"
    assert result.codes == (
        "C3_STATUS_FORBIDDEN", "C3_UNKNOWN_KEYS", "C3_MISSING_KEYS", "C3_FIELD_TYPE",
        "C3_TASK_ID_INVALID", "C3_PHASE_INVALID", "C3_FIELD_EMPTY", "C3_ANNOTATION_NOT_STRING",
        "C3_LOOPSPEC_HASH_INVALID", "C3_DECISION_NOT_APPROVED", "C3_SOURCE_SHA_MISMATCH",
        "C3_PLAN_HASH_STALE", "C3_ARTIFACT_STALE", "C3_PLAN_PACKAGE_HASH_MISMATCH",
        # model_a: plan_hash, source_sha, plan_package_hash; model_b: plan_hash,
        # plan_package_hash (the top-level values changed)
        *["C3_REVIEWER_TRIO_MISMATCH"] * 5,
        "C3_REVIEWER_VERDICT_INVALID", "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    )
    numbers = [next(r.number for r in ACCEPTOR_RULE_ORDER if code in r.codes)
               for code in result.codes]
    assert numbers == sorted(numbers)


def test_a_record_whose_only_failure_is_escalation_needs_a_human(git_repo: Path) -> None:
    make_task(git_repo)
    approve_task(git_repo, decision="HUMAN_ESCALATED")
    result = verify_task(git_repo, TASK)
    assert (result.verdict, result.codes, int(result.exit_code)) == (
        "HUMAN_ESCALATED", ("C3_DECISION_NOT_APPROVED",), 3
    )


def test_an_accepted_record_exits_zero(approved: tuple[Path, str]) -> None:
    repo, head = approved
    result = verify_task(repo, TASK, expected_sha=head)
    assert (result.verdict, result.codes, int(result.exit_code)) == ("ACCEPTED", (), 0)
    assert result.facts["source_sha_full"] == head
    assert result.facts["current_plan_hash"] == sha((task_dir(repo) / "plan.md").read_bytes())
    assert git(repo, "rev-parse", "HEAD") == head
