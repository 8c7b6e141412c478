"""Adversarial review: forged c3-prime records that used to be ACCEPTED.

Each record below is a valid, producer-issued record with one field forged;
every one must be rejected with a reason code by ``verify_task`` and by
``plangate c3 verify``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plangate.approval.service import verify_task
from support.repo import git
from support.taskkit import approve_task, make_task, task_dir

TASK = "TASK-0001"


@pytest.fixture
def approved(git_repo: Path) -> tuple[Path, str]:
    make_task(git_repo)
    return git_repo, approve_task(git_repo)


def _record_path(repo: Path) -> Path:
    return task_dir(repo) / "approvals" / "c3.json"


def _forge(repo: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = _record_path(repo)
    record = json.loads(path.read_bytes())
    change(record)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def _set_ref(model: str, ref: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["reviewers"][model]["evidence_ref"] = ref

    return change


SAME_EVIDENCE = {
    "zero-width space": "reviews/model-a.md\u200b",
    "empty fragment": "reviews/model-a.md#",
    "full-width letter": "reviews/model-\uff41.md",
    "soft hyphen": "reviews/model\u00ad-a.md",
    "windows separator": "reviews\\model-a.md",
    "Hangul filler": "reviews/model-a.md\u3164",
}


@pytest.mark.parametrize("ref", SAME_EVIDENCE.values(), ids=SAME_EVIDENCE.keys())
def test_one_piece_of_evidence_disguised_as_two_is_rejected(
    approved: tuple[Path, str], ref: str
) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_b", ref))
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.verdict == "REJECTED"
    assert result.codes == ("C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",)


def test_decomposed_and_composed_accents_are_one_file(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_a", "reviews/\u00e9.md"))
    _forge(repo, _set_ref("model_b", "reviews/e\u0301.md"))
    assert verify_task(repo, TASK, expected_sha=head).codes == (
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    )


def test_same_anchor_in_another_case_is_not_independent(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_a", "pr/12#Review"))
    _forge(repo, _set_ref("model_b", "pr/12#review"))
    assert verify_task(repo, TASK, expected_sha=head).codes == (
        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
    )


def test_distinct_anchors_stay_independent(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_a", "pr/12#comment-1"))
    _forge(repo, _set_ref("model_b", "pr/12#comment-2"))
    assert verify_task(repo, TASK, expected_sha=head).verdict == "ACCEPTED"


@pytest.mark.parametrize("key", ["policy_ref", "issued_by", "c1_evidence_ref", "c2_evidence_ref"])
@pytest.mark.parametrize("value", ["\u200b", "\ufeff\u2060", "\x00"])
def test_invisible_only_fields_are_empty(approved: tuple[Path, str], key: str, value: str) -> None:
    repo, head = approved
    _forge(repo, lambda r: r.__setitem__(key, value))
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.verdict == "REJECTED"
    assert "C3_FIELD_EMPTY" in result.codes


def test_invisible_only_evidence_ref_is_empty(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_ref("model_b", "\u200b\u200c"))
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.codes == ("C3_REVIEWER_SNAPSHOT_EMPTY",)


def _set_source(sha: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["source_sha"] = sha
        for model in ("model_a", "model_b"):
            record["reviewers"][model]["source_sha"] = sha

    return change


def test_annotated_tag_id_as_source_sha_is_rejected(approved: tuple[Path, str]) -> None:
    # The tag peels to HEAD, but a tag object id is not the commit the
    # reviews bound; an abbreviated tag id was already refused.
    repo, head = approved
    git(repo, "tag", "-a", "-m", "release", "v1")
    tag_id = git(repo, "rev-parse", "v1")
    assert tag_id != head
    for sha in (tag_id, tag_id[:12]):
        _forge(repo, _set_source(sha))
        result = verify_task(repo, TASK, expected_sha=head)
        assert result.verdict == "REJECTED", sha
        assert result.codes == ("C3_SOURCE_SHA_UNKNOWN",)


def test_tree_id_as_source_sha_is_rejected(approved: tuple[Path, str]) -> None:
    repo, head = approved
    _forge(repo, _set_source(git(repo, "rev-parse", "HEAD^{tree}")))
    assert verify_task(repo, TASK, expected_sha=head).codes == ("C3_SOURCE_SHA_UNKNOWN",)


def test_cli_verify_rejects_a_tag_id(approved: tuple[Path, str], run_cli: Any) -> None:
    repo, head = approved
    git(repo, "tag", "-a", "-m", "release", "v1")
    _forge(repo, _set_source(git(repo, "rev-parse", "v1")))
    assert run_cli(repo, "c3", "verify", TASK).code == 1
    assert run_cli(repo, "c3", "verify", TASK, "--expected-sha", head).code == 1


def test_visible_helpers() -> None:
    from plangate.approval.acceptor import is_blank, normalise_evidence_ref

    assert is_blank("\u200b \u3000")
    assert not is_blank("a\u200b")
    assert normalise_evidence_ref(" A.md# ") == "a.md"
    assert normalise_evidence_ref("x/../a.md#S") == "a.md#s"
    assert normalise_evidence_ref("a.md#s1") != normalise_evidence_ref("a.md#s2")


def _legacy(repo: Path, approved_by: str) -> None:
    from support.taskkit import sha

    record = {
        "task_id": TASK,
        "phase": "C-3",
        "c3_status": "APPROVED",
        "approved_by": approved_by,
        "approved_at": "2026-12-01T09:00:00Z",
        "plan_hash": sha((task_dir(repo) / "plan.md").read_bytes()),
    }
    _record_path(repo).write_text(json.dumps(record, ensure_ascii=False))


def test_legacy_record_with_an_invisible_approver_is_rejected(
    approved: tuple[Path, str],
) -> None:
    repo, head = approved
    _legacy(repo, "alice")
    assert verify_task(repo, TASK, expected_sha=head).verdict == "ACCEPTED"
    _legacy(repo, "\u200b\u2060")
    result = verify_task(repo, TASK, expected_sha=head)
    assert result.verdict == "REJECTED"
    assert result.codes == ("LEGACY_FIELD_INVALID",)
