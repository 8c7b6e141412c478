"""``plangate c3 issue`` / ``c3 verify`` as a user runs them, in real repositories.

Adversarial review: ``plangate c3 issue`` never writes through a symlinked ``approvals/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import CliResult, RunCli
from support.repo import git
from support.taskkit import make_task, reviewers_file, task_dir, write_markers

TASK = "TASK-0001"
AT = "2026-12-01T09:00:00Z"


def issue(run_cli: RunCli, repo: Path, tmp_path: Path, *extra: str, a: str = "approve", b: str = "approve", decision: str = "AUTO_APPROVED", ref_b: str = "reviews/model-b.md"):
    rev = reviewers_file(tmp_path / "reviewers.json", a=a, b=b, ref_b=ref_b)
    head = git(repo, "rev-parse", "HEAD")
    return run_cli(
        repo, "c3", "issue", TASK, "--target-sha", head, "--reviewers", str(rev),
        "--decision", decision, "--policy-ref", "plangate-arbiter@v1", "--issued-at", AT, *extra,
    )  # fmt: skip


def test_issue_then_verify_then_exec_sha(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    res = issue(run_cli, git_repo, tmp_path)
    assert res.code == 0, res.err
    head = git(git_repo, "rev-parse", "HEAD")
    res = run_cli(git_repo, "c3", "verify", TASK, "--expected-sha", head, "--json")
    doc = json.loads(res.out)
    assert res.code == 0
    assert doc["verdict"] == "ACCEPTED" and doc["kind"] == "c3-prime" and doc["reasons"] == []
    assert doc["facts"]["source_sha_full"] == head


def test_record_serialisation_contract(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    assert issue(run_cli, git_repo, tmp_path).code == 0
    text = (task_dir(git_repo) / "approvals" / "c3.json").read_text()
    assert text.endswith("}\n")
    assert [ln for ln in text.splitlines() if ln.startswith('  "plan_hash"')].__len__() == 1
    assert "c3_status" not in text
    record = json.loads(text)
    assert record["approval_kind"] == "c3-prime" and record["phase"] == "C-3'"
    assert record["c1_evidence_ref"] == "review-self.md#PASS"
    assert record["c2_evidence_ref"] == "review-external.md#approve"
    assert list(record) == sorted(record)
    assert json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n" == text


def test_same_inputs_give_byte_identical_records(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    assert issue(run_cli, git_repo, tmp_path).code == 0
    first = (task_dir(git_repo) / "approvals" / "c3.json").read_bytes()
    assert issue(run_cli, git_repo, tmp_path, "--force").code == 0
    assert (task_dir(git_repo) / "approvals" / "c3.json").read_bytes() == first


def test_existing_record_is_not_overwritten_without_force(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    assert issue(run_cli, git_repo, tmp_path).code == 0
    res = issue(run_cli, git_repo, tmp_path)
    assert res.code == 1 and "C3_RECORD_EXISTS" in res.out


@pytest.mark.parametrize(
    "c1,c2,code",
    [("FAIL", "approve", "EVIDENCE_C1_NOT_ACCEPTED"), ("PASS", "reject", "EVIDENCE_C2_NOT_ACCEPTED")],
)
def test_failing_evidence_issues_no_record_and_escalates(run_cli: RunCli, git_repo: Path, tmp_path: Path, c1: str, c2: str, code: str) -> None:
    make_task(git_repo)
    write_markers(git_repo, c1=c1, c2=c2)
    res = issue(run_cli, git_repo, tmp_path)
    assert res.code == 3
    assert code in res.out
    assert not (task_dir(git_repo) / "approvals" / "c3.json").exists()


def test_stale_evidence_issues_no_record(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "plan.md").write_text("# Plan\n\n## Goal\nchanged\n")
    res = issue(run_cli, git_repo, tmp_path)
    assert res.code == 3 and "EVIDENCE_C1_STALE" in res.out and "EVIDENCE_C2_STALE" in res.out


def test_missing_artifact_issues_no_record(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "todo.md").unlink()
    res = issue(run_cli, git_repo, tmp_path)
    assert res.code == 3 and "ARTIFACT_MISSING" in res.out


def test_auto_approved_with_a_reject_is_refused(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    res = issue(run_cli, git_repo, tmp_path, b="reject")
    assert res.code == 1 and "C3_DECISION_VERDICT_INCONSISTENT" in res.out


def test_human_escalated_with_a_reject_is_issued(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    res = issue(run_cli, git_repo, tmp_path, b="reject", decision="HUMAN_ESCALATED")
    assert res.code == 0
    assert run_cli(git_repo, "c3", "verify", TASK).code == 3


def test_producer_refuses_what_the_acceptor_would_reject(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    res = issue(run_cli, git_repo, tmp_path, ref_b="./reviews/model-a.md")
    assert res.code == 1 and "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT" in res.out
    assert not (task_dir(git_repo) / "approvals" / "c3.json").exists()


@pytest.mark.parametrize(
    "argv,code",
    [
        (("--decision", "APPROVED"), 1),
        (("--issued-at", "2026-12-01T09:00:00.123Z"), 1),
        (("--policy-ref", ""), 1),
    ],
)
def test_bad_issue_arguments_are_refused(run_cli: RunCli, git_repo: Path, tmp_path: Path, argv: tuple[str, ...], code: int) -> None:
    make_task(git_repo)
    res = issue(run_cli, git_repo, tmp_path, *argv)
    assert res.code == code
    assert "Traceback" not in res.err


def test_refusals_and_issues_go_to_the_ledger(run_cli: RunCli, git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    write_markers(git_repo, c1="FAIL")
    assert issue(run_cli, git_repo, tmp_path).code == 3
    write_markers(git_repo)
    assert issue(run_cli, git_repo, tmp_path).code == 0
    from plangate.ledger import open_ledger

    with open_ledger(git_repo, {}) as ledger:
        kinds = [e.kind for e in ledger.entries(subject=TASK)]
    assert kinds == ["c3_issue_refused", "c3_issue"]


@pytest.mark.parametrize(
    "argv",
    [
        ("c3", "verify", "task-1"),
        ("c3", "verify", TASK, "--expected-sha", "abc1234"),
        ("c3", "verify", TASK, "--expected-sha", ""),
        ("c3", "frobnicate"),
    ],
)
def test_usage_errors_exit_2(run_cli: RunCli, git_repo: Path, argv: tuple[str, ...]) -> None:
    make_task(git_repo)
    res = run_cli(git_repo, *argv)
    assert res.code == 2
    assert "Traceback" not in res.err


def test_verify_missing_task_is_rejected(run_cli: RunCli, git_repo: Path) -> None:
    res = run_cli(git_repo, "c3", "verify", "TASK-0042")
    assert res.code == 1 and "TASK_DIR_INVALID" in res.out




def _issue(run_cli: RunCli, repo: Path, tmp_path: Path, *extra: str) -> CliResult:
    rev = reviewers_file(tmp_path / "reviewers.json")
    head = git(repo, "rev-parse", "HEAD")
    return run_cli(
        repo, "c3", "issue", TASK, "--target-sha", head, "--reviewers", str(rev),
        "--decision", "AUTO_APPROVED", "--policy-ref", "p@v1",
        "--issued-at", "2026-12-01T09:00:00Z", *extra,
    )  # fmt: skip


@pytest.mark.parametrize("force", [(), ("--force",)], ids=["plain", "force"])
def test_issue_refuses_a_symlinked_approvals_directory(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, force: tuple[str, ...]
) -> None:
    make_task(git_repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (task_dir(git_repo) / "approvals").symlink_to(outside, target_is_directory=True)
    result = _issue(run_cli, git_repo, tmp_path, *force)
    assert result.code == 1
    assert "C3_RECORD_SYMLINK" in result.out + result.err
    assert list(outside.iterdir()) == []


def test_issue_refuses_a_directory_in_the_record_place(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "approvals" / "c3.json").mkdir(parents=True)
    result = _issue(run_cli, git_repo, tmp_path, "--force")
    assert result.code == 1
    assert "C3_RECORD_NOT_REGULAR" in result.out + result.err


def test_issue_into_a_fresh_task_still_works(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)
    result = _issue(run_cli, git_repo, tmp_path)
    assert result.code == 0, result.err
    assert run_cli(git_repo, "c3", "verify", TASK).code == 0


def test_issue_with_a_file_in_place_of_approvals_is_a_reason_not_a_crash(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "approvals").write_text("not a directory\n")
    result = _issue(run_cli, git_repo, tmp_path, "--force")
    assert result.code == 1, result.err
    assert "C3_RECORD_NOT_REGULAR" in result.out + result.err
    assert (task_dir(git_repo) / "approvals").read_text() == "not a directory\n"


@pytest.mark.parametrize("rev", ["HEAD", "main", "short", "tag"])
def test_verify_expected_sha_accepts_a_revision_resolved_to_the_full_id(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, rev: str
) -> None:
    make_task(git_repo)
    assert issue(run_cli, git_repo, tmp_path).code == 0
    head = git(git_repo, "rev-parse", "HEAD")
    git(git_repo, "tag", "approved")
    given = {"short": head[:12], "tag": "refs/tags/approved"}.get(rev, rev)
    res = run_cli(git_repo, "c3", "verify", TASK, "--expected-sha", given, "--json")
    doc = json.loads(res.out)
    assert res.code == 0, res.out
    assert doc["facts"]["expected_sha"] == head  # resolved once, to the full object id


@pytest.mark.parametrize(("tag", "code"), [("approved", "GIT_REF_NOT_A_BRANCH"),
                                            ("main", "GIT_REF_AMBIGUOUS")])
def test_verify_expected_sha_is_never_a_name_a_tag_can_redirect(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, tag: str, code: str
) -> None:
    make_task(git_repo)
    assert issue(run_cli, git_repo, tmp_path).code == 0
    git(git_repo, "tag", tag)
    res = run_cli(git_repo, "c3", "verify", TASK, "--expected-sha", tag, "--json")
    assert res.code == 2, res.out
    assert "C3_EXPECTED_SHA_INVALID" in res.err and code in res.err


def test_verify_expected_sha_of_another_commit_is_a_mismatch(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)
    assert issue(run_cli, git_repo, tmp_path).code == 0
    res = run_cli(git_repo, "c3", "verify", TASK, "--expected-sha", "HEAD~1", "--json")
    assert res.code == 1
    assert "C3_SOURCE_SHA_MISMATCH" in [r["code"] for r in json.loads(res.out)["reasons"]]


@pytest.mark.parametrize("rev", ["no-such-branch", "HEAD~99", "-x"])
def test_verify_expected_revision_git_cannot_resolve_is_a_usage_error(
    run_cli: RunCli, git_repo: Path, rev: str
) -> None:
    make_task(git_repo)
    res = run_cli(git_repo, "c3", "verify", TASK, f"--expected-sha={rev}")
    assert res.code == 2
    assert "C3_EXPECTED_SHA_INVALID" in res.err and "Traceback" not in res.err
