"""status and ci check say plainly whether approvals are authenticated, and who signed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.keys import Key, sign_bytes
from support.repo import commit_all, git
from support.signed import adopt_surfaces, ci_check, commit_trust_root, make_team, signed_task
from support.taskkit import task_dir

T = "TASK-0001"


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    return make_team(tmp_path / "keys")


def _status(repo: Path) -> tuple[str, dict]:
    text = run_cli_in(repo, "status")
    data = run_cli_in(repo, "status", "--json")
    assert text.code == 0 and data.code == 0
    return text.out, json.loads(data.out)


def test_status_says_approvals_are_unauthenticated_without_a_root(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    signed_task(git_repo, tmp_path, team, reviewers=None, approver=None, commit_approval=False)
    text, doc = _status(git_repo)
    assert "approvals are unauthenticated" in text.splitlines()[-1]
    assert "APPROVED BY" not in text
    assert doc["authority"]["state"] == "unauthenticated"
    assert "approvals are unauthenticated" in doc["authority"]["message"]
    assert doc["tasks"][0]["verdict"] == "ACCEPTED"
    assert doc["tasks"][0]["approved_by"] is None


def test_a_root_that_does_not_require_signatures_is_still_unauthenticated(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    commit_trust_root(git_repo, team, require=False)
    signed_task(git_repo, tmp_path, team, commit_approval=False)  # signed, nobody requires it
    text, doc = _status(git_repo)
    assert doc["authority"]["state"] == "unauthenticated"
    assert "approvals are unauthenticated" in text


def test_status_names_the_verified_approver_and_reviewers(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    commit_trust_root(git_repo, team)
    signed_task(git_repo, tmp_path, team, commit_approval=False)
    text, doc = _status(git_repo)
    row = doc["tasks"][0]
    assert row["verdict"] == "ACCEPTED"
    assert row["approved_by"] == "carol@example.com"
    assert row["reviewed_by"] == ["alice@example.com", "bob@example.com"]
    assert doc["authority"]["state"] == "signatures_required"
    assert doc["authority"]["trust_root"] == git(git_repo, "rev-parse", "main")
    header, first = text.splitlines()[:2]
    assert "APPROVED BY" in header and "REVIEWED BY" in header
    assert "carol@example.com" in first and "alice@example.com,bob@example.com" in first
    assert text.splitlines()[-1].startswith("authority: signatures required")


def test_status_names_nobody_for_a_forged_approval(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    commit_trust_root(git_repo, team)
    signed_task(git_repo, tmp_path, team, commit_approval=False)
    record = task_dir(git_repo) / "approvals/c3.json"
    (task_dir(git_repo) / "approvals/c3.json.sig").write_bytes(
        sign_bytes(team["mallory"], "plangate-c3", record.read_bytes())
    )
    _text, doc = _status(git_repo)
    row = doc["tasks"][0]
    assert row["verdict"] == "REJECTED" and row["first_reason"] == "C3_SIGNER_UNKNOWN"
    assert row["approved_by"] is None
    assert row["reviewed_by"] == ["alice@example.com", "bob@example.com"]


def test_status_rejects_every_row_when_the_root_cannot_be_read(
    git_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    signed_task(git_repo, tmp_path, team, reviewers=None, approver=None, commit_approval=False)
    (git_repo / ".plangate").mkdir(exist_ok=True)
    (git_repo / ".plangate/trust.toml").write_text("version = 1\nrequire_signatures = false\n")
    commit_all(git_repo, "half a trust root")
    text, doc = _status(git_repo)
    assert doc["authority"]["state"] == "unreadable"
    assert doc["tasks"][0]["verdict"] == "REJECTED"
    assert doc["tasks"][0]["first_reason"] == "AUTH_TRUST_INCOMPLETE"
    assert "trust root cannot be read" in text


@pytest.fixture
def pr_repo(git_repo: Path) -> Path:
    adopt_surfaces(git_repo)
    commit_all(git_repo, "surfaces")
    return git_repo


def test_ci_check_says_approvals_are_unauthenticated(
    pr_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    git(pr_repo, "checkout", "-q", "-b", "feature")
    signed_task(pr_repo, tmp_path, team, reviewers=None, approver=None)
    text = run_cli_in(pr_repo, "ci", "check", "--base", "main", "--head", "HEAD")
    assert text.code == 0, text.out
    assert "authority: approvals are unauthenticated" in text.out
    _code, doc = ci_check(pr_repo)
    assert doc["facts"]["authority"].startswith("unauthenticated")
    assert "approved_by" not in doc["facts"]["tasks"][T]
    summary = tmp_path / "summary.md"
    run_cli_in(
        pr_repo, "ci", "check", "--base", "main", "--head", "HEAD", "--summary", str(summary)
    )
    assert "approvals are unauthenticated" in summary.read_text()


def test_ci_check_names_who_signed_each_task(
    pr_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    commit_trust_root(pr_repo, team)
    git(pr_repo, "checkout", "-q", "-b", "feature")
    signed_task(pr_repo, tmp_path, team)
    text = run_cli_in(pr_repo, "ci", "check", "--base", "main", "--head", "HEAD")
    assert text.code == 0, text.out
    assert "authority: signatures required by the base commit's trust root" in text.out
    assert (
        f"{T}: approved by carol@example.com; reviewed by alice@example.com, bob@example.com"
    ) in text.out
    _code, doc = ci_check(pr_repo)
    task = doc["facts"]["tasks"][T]
    assert task["approved_by"] == "carol@example.com"
    assert task["reviewed_by"] == ["alice@example.com", "bob@example.com"]


def test_ci_check_names_nobody_for_an_unsigned_record_under_a_signing_root(
    pr_repo: Path, tmp_path: Path, team: dict[str, Key]
) -> None:
    commit_trust_root(pr_repo, team)
    git(pr_repo, "checkout", "-q", "-b", "feature")
    signed_task(pr_repo, tmp_path, team, approver=None)
    text = run_cli_in(pr_repo, "ci", "check", "--base", "main", "--head", "HEAD")
    assert text.code == 1
    assert f"{T}: no verified approval" in text.out
    assert "C3_SIGNATURE_MISSING" in text.out
