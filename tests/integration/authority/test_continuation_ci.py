"""A pull request may use a task approved on its base only with an approver's signed continuation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.authority.continuation import Continuation, continuation_bytes
from support.cli import run_cli_in
from support.keys import Key, sign_bytes
from support.repo import commit_all, git
from support.signed import adopt_surfaces, ci_check, commit_trust_root, make_team, signed_task
from support.taskkit import sha, task_dir

T = "TASK-0001"


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    return make_team(tmp_path / "keys")


@pytest.fixture
def second_pr(git_repo: Path, tmp_path: Path, team: dict[str, Key]) -> Path:
    """TASK-0001 approved, signed and merged; a new branch changes code in its scope."""
    adopt_surfaces(git_repo)
    commit_trust_root(git_repo, team)
    git(git_repo, "checkout", "-q", "-b", "first")
    signed_task(git_repo, tmp_path, team)
    git(git_repo, "checkout", "-q", "main")
    git(git_repo, "merge", "-q", "--no-ff", "-m", "merge TASK-0001", "first")
    git(git_repo, "checkout", "-q", "-b", "second")
    (git_repo / "src/app.py").write_text("def greet():\n    return 'hi again'\n")
    commit_all(git_repo, "continue TASK-0001")
    return git_repo


def _codes(doc: dict) -> list[str]:
    return [r["code"] for r in doc["reasons"]]


def _continue(repo: Path, key: Key) -> None:
    result = run_cli_in(repo, "trust", "continue", T, "--base", "main", "--sign", str(key.path))
    assert result.code == 0, result.out + result.err
    commit_all(repo, "continuation")


def _statement(repo: Path, **change: str) -> bytes:
    record = json.loads((task_dir(repo) / "approvals/c3.json").read_bytes())
    fields = {
        "task_id": T,
        "plan_hash": sha((task_dir(repo) / "plan.md").read_bytes()),
        "source_sha": record["source_sha"],
        "base": git(repo, "merge-base", "main", "HEAD"),
        "principal": "carol@example.com",
    }
    fields.update(change)
    return continuation_bytes(Continuation(**fields))


def _write(repo: Path, data: bytes, signature: bytes | None) -> None:
    (task_dir(repo) / "approvals/continuation.json").write_bytes(data)
    if signature is not None:
        (task_dir(repo) / "approvals/continuation.json.sig").write_bytes(signature)
    commit_all(repo, "continuation by hand")


def test_without_a_continuation_the_merged_task_is_not_fresh(second_pr: Path) -> None:
    # A file touched in the task directory makes the task this pull request's: it is stale.
    (task_dir(second_pr) / "notes.md").write_text("more to do\n")
    commit_all(second_pr, "touch the task")
    code, doc = ci_check(second_pr)
    assert code == 1 and _codes(doc) == ["CI_APPROVAL_NOT_FRESH"]
    assert "plangate trust continue" in doc["reasons"][0]["hint"]


def test_an_approvers_signed_continuation_lets_the_pull_request_use_the_task(
    second_pr: Path, team: dict[str, Key]
) -> None:
    _continue(second_pr, team["carol"])
    code, doc = ci_check(second_pr)
    assert (code, _codes(doc)) == (0, []), doc
    assert doc["facts"]["continued"] == {T: "carol@example.com"}
    statement = json.loads((task_dir(second_pr) / "approvals/continuation.json").read_bytes())
    assert statement["base"] == git(second_pr, "merge-base", "main", "HEAD")
    assert statement["kind"] == "plangate-continuation"


def test_a_reviewer_cannot_continue_a_task(second_pr: Path, team: dict[str, Key]) -> None:
    _continue(second_pr, team["alice"])
    code, doc = ci_check(second_pr)
    assert code == 1
    assert _codes(doc) == ["CI_APPROVAL_NOT_FRESH", "CONTINUATION_SIGNER_NOT_AUTHORISED"]


def test_an_unlisted_key_is_refused_when_signing_and_when_checking(
    second_pr: Path, team: dict[str, Key]
) -> None:
    result = run_cli_in(
        second_pr, "trust", "continue", T, "--base", "main", "--sign", str(team["mallory"].path)
    )
    assert result.code != 0 and "AUTH_SIGNER_NOT_LISTED" in result.err
    assert not (task_dir(second_pr) / "approvals/continuation.json").exists()
    data = _statement(second_pr, principal="mallory@example.com")
    _write(second_pr, data, sign_bytes(team["mallory"], "plangate-continue", data))
    assert "CONTINUATION_SIGNER_UNKNOWN" in _codes(ci_check(second_pr)[1])


def test_a_statement_an_agent_wrote_alone_is_refused(second_pr: Path) -> None:
    _write(second_pr, _statement(second_pr), None)
    code, doc = ci_check(second_pr)
    assert code == 1
    assert _codes(doc) == ["CI_APPROVAL_NOT_FRESH", "CONTINUATION_SIGNATURE_MISSING"]


@pytest.mark.parametrize("field", ["task_id", "plan_hash", "source_sha", "base"])
def test_a_continuation_for_anything_else_is_stale(
    second_pr: Path, team: dict[str, Key], field: str
) -> None:
    other = {
        "task_id": "TASK-0002",
        "plan_hash": sha(b"another plan"),
        "source_sha": git(second_pr, "rev-parse", "main~1"),
        "base": git(second_pr, "rev-parse", "main~1"),
    }[field]
    data = _statement(second_pr, **{field: other})
    _write(second_pr, data, sign_bytes(team["carol"], "plangate-continue", data))
    code, doc = ci_check(second_pr)
    assert code == 1 and "CONTINUATION_STALE" in _codes(doc)


def test_a_continuation_signed_for_another_namespace_is_refused(
    second_pr: Path, team: dict[str, Key]
) -> None:
    data = _statement(second_pr)
    _write(second_pr, data, sign_bytes(team["carol"], "plangate-c3", data))
    assert "CONTINUATION_SIGNATURE_NAMESPACE" in _codes(ci_check(second_pr)[1])


def test_a_continuation_naming_another_signer_is_refused(
    second_pr: Path, team: dict[str, Key]
) -> None:
    # carol signs a statement that names bob: the statement lies about who continued.
    data = _statement(second_pr, principal="bob@example.com")
    _write(second_pr, data, sign_bytes(team["carol"], "plangate-continue", data))
    assert "CONTINUATION_PRINCIPAL_MISMATCH" in _codes(ci_check(second_pr)[1])


@pytest.mark.parametrize("data", [b"", b"{}", b"not json", b'{"kind": "plangate-continuation"}'])
def test_a_malformed_continuation_is_refused(
    second_pr: Path, team: dict[str, Key], data: bytes
) -> None:
    _write(second_pr, data, sign_bytes(team["carol"], "plangate-continue", data))
    code, doc = ci_check(second_pr)
    assert code == 1 and "CONTINUATION_MALFORMED" in _codes(doc)


def test_a_continuation_for_the_first_starting_point_does_not_survive_a_merge_of_main(
    second_pr: Path, team: dict[str, Key]
) -> None:
    _continue(second_pr, team["carol"])
    assert ci_check(second_pr)[0] == 0
    git(second_pr, "checkout", "-q", "main")
    (second_pr / "NOTES.txt").write_text("main moved on\n")
    commit_all(second_pr, "main moves")
    git(second_pr, "checkout", "-q", "second")
    git(second_pr, "merge", "-q", "--no-edit", "main")
    code, doc = ci_check(second_pr)
    assert code == 1 and "CONTINUATION_STALE" in _codes(doc)


def test_continue_refuses_a_task_without_an_approval(git_repo: Path, team: dict[str, Key]) -> None:
    from support.taskkit import make_task

    commit_trust_root(git_repo, team)
    make_task(git_repo)
    result = run_cli_in(
        git_repo, "trust", "continue", T, "--base", "main", "--sign", str(team["carol"].path)
    )
    assert result.code == 1 and "C3_RECORD_MISSING" in result.err
    assert not (task_dir(git_repo) / "approvals/continuation.json").exists()


def test_continue_refuses_an_unknown_base(second_pr: Path, team: dict[str, Key]) -> None:
    result = run_cli_in(
        second_pr,
        "trust",
        "continue",
        T,
        "--base",
        "no-such-branch",
        "--sign",
        str(team["carol"].path),
    )
    assert result.code != 0 and "GIT_" in result.err
    assert not (task_dir(second_pr) / "approvals/continuation.json").exists()


def test_continue_refuses_a_bad_task_id(second_pr: Path, team: dict[str, Key]) -> None:
    result = run_cli_in(
        second_pr,
        "trust",
        "continue",
        "../TASK-0001",
        "--base",
        "main",
        "--sign",
        str(team["carol"].path),
    )
    assert result.code == 2
