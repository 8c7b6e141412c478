"""The approval services: ``c3 issue`` reads the task once; the LoopSpec check uses that read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plangate.approval import service
from plangate.approval.service import IssueRequest, check_task_loopspec, issue_task
from plangate.plan.loopspec import derive_loopspec, loopspec_hash
from plangate.snapshot import TaskSnapshot
from support.repo import git
from support.taskkit import PLAN_MD, load_record, make_task, reviewers_file, sha, task_dir

TASK = "TASK-0001"
EDITED = PLAN_MD.replace("- `tests/test_app.py`\n", "- `tests/test_app.py`\n- `lib/**`\n")


def _request(repo: Path) -> IssueRequest:
    return IssueRequest(
        task_id=TASK, target_sha=git(repo, "rev-parse", "HEAD"), reviewers={},
        decision="AUTO_APPROVED", policy_ref="plangate-arbiter@v1",
        issued_at="2026-12-01T09:00:00Z", issued_by="test-suite",
    )


def test_issue_derives_the_loopspec_hash_from_the_plan_it_hashes(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_task(git_repo)
    original = (task_dir(git_repo) / "plan.md").read_bytes()
    reads: list[TaskSnapshot] = []
    real_read = service.read_task_snapshot

    def read_then_swap(path: Path) -> TaskSnapshot:
        snapshot = real_read(path)
        reads.append(snapshot)
        # plan.md changes right after the read: a second read would see other bytes.
        (task_dir(git_repo) / "plan.md").write_text(EDITED)
        return snapshot

    real_append = service._ledger_append

    def restore_then_append(*args: Any) -> None:
        # plan.md is back to the judged bytes by the time of the write: a record
        # whose hashes came from two different reads would now be stale.
        (task_dir(git_repo) / "plan.md").write_bytes(original)
        real_append(*args)

    monkeypatch.setattr(service, "read_task_snapshot", read_then_swap)
    monkeypatch.setattr(service, "_ledger_append", restore_then_append)
    result = issue_task(git_repo, _request(git_repo), {},
                        reviewers_file=reviewers_file(tmp_path / "rev.json"),
                        loopspec_actors="maker,checker")
    assert (result.verdict, result.codes) == ("ACCEPTED", ())
    assert len(reads) == 1
    record = load_record(git_repo)
    assert record["plan_hash"] == sha(original)
    assert record["derived_loopspec_hash"] == loopspec_hash(
        derive_loopspec(original, TASK, "maker", "checker")
    )
    assert record["derived_loopspec_hash"] != loopspec_hash(
        derive_loopspec(EDITED.encode(), TASK, "maker", "checker")
    )


def test_issue_without_actors_stamps_no_loopspec_hash(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    result = issue_task(git_repo, _request(git_repo), {},
                        reviewers_file=reviewers_file(tmp_path / "rev.json"))
    assert (result.verdict, int(result.exit_code)) == ("ACCEPTED", 0)
    assert "derived_loopspec_hash" not in load_record(git_repo)


def test_loopspec_check_compares_with_the_recorded_hash(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    issue_task(git_repo, _request(git_repo), {},
               reviewers_file=reviewers_file(tmp_path / "rev.json"),
               loopspec_actors="maker,checker")
    same = check_task_loopspec(git_repo, TASK, "maker", "checker")
    assert (same.verdict, int(same.exit_code)) == ("ACCEPTED", 0)
    other = check_task_loopspec(git_repo, TASK, "maker", "someone-else")
    assert (other.verdict, other.codes, int(other.exit_code)) == (
        "REJECTED", ("LOOPSPEC_HASH_MISMATCH",), 1
    )


def test_source_resolution_refuses_sha256_object_ids_and_maps_git_errors() -> None:
    from plangate.approval.service import source_resolution
    from plangate.git import GitError

    full1 = "a" * 40
    assert source_resolution("aaaaaaa", full1).full_sha == full1
    refused = source_resolution("b" * 12, "b" * 64)
    assert refused.full_sha is None
    assert refused.reason is not None and refused.reason.code == "C3_SOURCE_SHA_UNRESOLVED"
    assert "SHA-1" in refused.reason.message
    ambiguous = source_resolution("abc1234", GitError("GIT_COMMIT_AMBIGUOUS", "two", "full id"))
    assert ambiguous.reason is not None and ambiguous.reason.code == "C3_SOURCE_SHA_AMBIGUOUS"
    unknown = source_resolution("abc1234", GitError("GIT_COMMIT_UNKNOWN", "none", ""))
    assert unknown.reason is not None and unknown.reason.code == "C3_SOURCE_SHA_UNKNOWN"
    other = source_resolution("abc1234", GitError("GIT_TIMEOUT", "slow", ""))
    assert other.reason is not None and other.reason.code == "C3_SOURCE_SHA_UNRESOLVED"


def test_a_twelve_hex_abbreviation_in_a_sha256_repository_is_refused(tmp_path) -> None:
    # The same refusal whichever command resolves it (verify, exec, status).
    from plangate.approval.service import _resolve_sha
    from support.repo import commit_all, git

    repo = tmp_path / "sha256"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256", "-b", "main")
    git(repo, "config", "user.name", "Test Author")
    git(repo, "config", "user.email", "author@example.invalid")
    (repo / "a.txt").write_text("a")
    head = commit_all(repo, "first")
    assert len(head) == 64
    resolution = _resolve_sha(repo, head[:12])
    assert resolution.full_sha is None
    assert resolution.reason is not None
    assert resolution.reason.code == "C3_SOURCE_SHA_UNRESOLVED"
