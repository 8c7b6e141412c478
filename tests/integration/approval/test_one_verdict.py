"""One verdict everywhere: report, status, exec, ``ci check`` and ``delivery assess`` agree.

Each test builds a real repository (a trust root with real ssh keys where signatures
are required), puts the task in one state, then runs the five commands at the same
HEAD through the command line and asserts that they all accept or all refuse, and
that the refusals name the same reason:

- accepted: the task planned, reviewed, signed and approved, the approval committed
  on a feature branch (HEAD is the approval commit, one commit after the approved one);
- a stale record: an artifact of the Plan Package edited and committed after approval;
- the plan edited after approval;
- the record's signature missing where the trust root requires signatures;
- the record's scope digest not the scope of the plan (no trust root: the record is
  editable), and a record without a scope digest at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from support.cli import run_cli_in
from support.repo import commit_all, git
from support.signed import adopt_surfaces, commit_trust_root, make_team, signed_task
from support.taskkit import load_record, make_task, save_record, task_dir

TASK = "TASK-0001"
NOW = "2026-12-05T10:00:00Z"


class Verdict(NamedTuple):
    """One command's answer: does the approval hold, and its reasons (code: message)."""

    holds: bool
    reasons: tuple[str, ...]


def _reasons(doc: dict) -> tuple[str, ...]:
    return tuple(f"{r['code']}: {r['message']}" for r in doc.get("reasons", []))


def _report(repo: Path, out: Path) -> Verdict:
    result = run_cli_in(repo, "report", "--format", "markdown", "--output", str(out))
    assert result.code == 0, result.err
    row = next(line for line in out.read_text().splitlines() if line.startswith("| TASK\\-0001"))
    state = row.split("|")[2].strip()
    assert state in ("holds: exec would run", "does not hold: exec would refuse"), row
    return Verdict(state.startswith("holds"), ())


def _status(repo: Path) -> Verdict:
    result = run_cli_in(repo, "status", "--json")
    row = json.loads(result.out)["tasks"][0]
    return Verdict(row["verdict"] == "ACCEPTED", _reasons(row))


def _exec(repo: Path) -> Verdict:
    result = run_cli_in(repo, "exec", TASK, "--json", "--", "true")
    doc = json.loads(result.out)
    started = doc["facts"]["started"] is True
    return Verdict(started, _reasons(doc))


def _ci_check(repo: Path) -> Verdict:
    result = run_cli_in(repo, "ci", "check", "--base", "main", "--head", "HEAD", "--json")
    doc = json.loads(result.out)
    return Verdict(doc["verdict"] == "ACCEPTED", _reasons(doc))


def _review_event(repo: Path, directory: Path) -> Path:
    """A ``pull_request_review`` event as GitHub writes it: the head approved by a reviewer."""
    head = git(repo, "rev-parse", "HEAD")
    event = {
        "action": "submitted",
        "review": {"state": "APPROVED", "commit_id": head, "user": {"login": "carol"}},
        "pull_request": {
            "number": 7,
            "title": "TASK-0001: greet",
            "body": "Implements TASK-0001.",
            "base": {"ref": "main", "sha": git(repo, "rev-parse", "main")},
            "head": {"ref": "feature", "sha": head},
            "mergeable": None,
        },
    }
    path = directory / "event.json"
    path.write_text(json.dumps(event))
    return path


def _delivery(repo: Path, directory: Path) -> Verdict:
    env = {"GITHUB_EVENT_PATH": str(_review_event(repo, directory)),
           "GITHUB_EVENT_NAME": "pull_request_review", "HOME": str(directory)}
    result = run_cli_in(repo, "delivery", "assess", TASK, "--check", "tests=success",
                        "--dod-evaluated", "--now", NOW, "--json", env=env)
    doc = json.loads(result.out)
    return Verdict(doc["verdict"] == "MERGE_READY", _reasons(doc))


def five_verdicts(repo: Path, directory: Path) -> dict[str, Verdict]:
    """The five commands at the same HEAD (the working tree is left clean between them)."""
    head = git(repo, "rev-parse", "HEAD")
    out = {
        "report": _report(repo, directory / "report.md"),
        "status": _status(repo),
        "ci check": _ci_check(repo),
        "delivery": _delivery(repo, directory),
        "exec": _exec(repo),
    }
    assert git(repo, "rev-parse", "HEAD") == head
    return out


def assert_all(verdicts: dict[str, Verdict], *, holds: bool, code: str | None = None) -> None:
    """Every command gives the same answer; each refusal names ``code``."""
    answers = {name: v.holds for name, v in verdicts.items()}
    assert answers == dict.fromkeys(verdicts, holds), verdicts
    if code is None:
        return
    for name, verdict in verdicts.items():
        if name != "report":  # the report names the state; its reasons are on the page
            assert any(code in text for text in verdict.reasons), (name, verdict.reasons)


@pytest.fixture
def signed_repo(git_repo: Path, tmp_path: Path) -> Path:
    """main adopted with a trust root requiring signatures; the task approved on ``feature``."""
    team = make_team(tmp_path / "keys")
    adopt_surfaces(git_repo)
    commit_trust_root(git_repo, team)
    git(git_repo, "checkout", "-q", "-b", "feature")
    signed_task(git_repo, tmp_path, team)
    return git_repo


@pytest.fixture
def unsigned_repo(git_repo: Path, tmp_path: Path) -> Path:
    """main adopted without a trust root; the task approved and committed on ``feature``."""
    adopt_surfaces(git_repo)
    commit_all(git_repo, "adopt")
    git(git_repo, "checkout", "-q", "-b", "feature")
    make_task(git_repo, TASK, commit=False)
    (git_repo / "src").mkdir(exist_ok=True)
    (git_repo / "src/app.py").write_text("def greet():\n    return 'hi'\n")
    commit_all(git_repo, "plan and code")
    result = run_cli_in(git_repo, "c3", "issue", TASK, "--target-sha",
                        git(git_repo, "rev-parse", "HEAD"), "--reviewers",
                        str(_reviewers(tmp_path)), "--decision", "AUTO_APPROVED",
                        "--policy-ref", "plangate-arbiter@v1")
    assert result.code == 0, result.out + result.err
    commit_all(git_repo, "approve")
    return git_repo


def _reviewers(directory: Path) -> Path:
    path = directory / "reviewers.json"
    path.write_text(json.dumps({
        "model_a": {"verdict": "approve", "evidence_ref": "reviews/model-a.md"},
        "model_b": {"verdict": "approve", "evidence_ref": "reviews/model-b.md"},
    }))
    return path


def test_all_five_accept_a_signed_approval_committed_after_the_approved_commit(
    signed_repo: Path, tmp_path: Path
) -> None:
    verdicts = five_verdicts(signed_repo, tmp_path)
    assert_all(verdicts, holds=True)


def test_all_five_accept_an_unsigned_approval_without_a_trust_root(
    unsigned_repo: Path, tmp_path: Path
) -> None:
    assert_all(five_verdicts(unsigned_repo, tmp_path), holds=True)


def test_all_five_refuse_a_stale_record(signed_repo: Path, tmp_path: Path) -> None:
    (task_dir(signed_repo) / "todo.md").write_text("- [ ] something else entirely\n")
    commit_all(signed_repo, "todo edited after approval")
    assert_all(five_verdicts(signed_repo, tmp_path), holds=False, code="C3_ARTIFACT_STALE")


def test_all_five_refuse_a_plan_edited_after_approval(signed_repo: Path, tmp_path: Path) -> None:
    plan = task_dir(signed_repo) / "plan.md"
    plan.write_text(plan.read_text().replace("- `tests/test_app.py`", "- `lib/**`"))
    commit_all(signed_repo, "plan widened after approval")
    assert_all(five_verdicts(signed_repo, tmp_path), holds=False, code="EVIDENCE_C1_STALE")


def test_all_five_refuse_a_record_whose_signature_is_missing(
    signed_repo: Path, tmp_path: Path
) -> None:
    (task_dir(signed_repo) / "approvals" / "c3.json.sig").unlink()
    commit_all(signed_repo, "signature dropped")
    assert_all(five_verdicts(signed_repo, tmp_path), holds=False, code="SIGNATURE")


def test_all_five_refuse_a_scope_digest_that_is_not_the_plans(
    unsigned_repo: Path, tmp_path: Path
) -> None:
    record = load_record(unsigned_repo)
    record["scope_digest"] = "sha256:" + "0" * 64
    save_record(unsigned_repo, record)
    commit_all(unsigned_repo, "scope digest forged")
    assert_all(five_verdicts(unsigned_repo, tmp_path), holds=False, code="SCOPE_DIGEST_MISMATCH")


def test_all_five_refuse_a_record_without_a_scope_digest(
    unsigned_repo: Path, tmp_path: Path
) -> None:
    record = load_record(unsigned_repo)
    del record["scope_digest"]
    save_record(unsigned_repo, record)
    commit_all(unsigned_repo, "record from before scope digests")
    assert_all(five_verdicts(unsigned_repo, tmp_path), holds=False, code="SCOPE_NOT_APPROVED")


def test_all_five_refuse_a_commit_outside_the_scope_each_in_its_words(
    signed_repo: Path, tmp_path: Path
) -> None:
    (signed_repo / "lib").mkdir()
    (signed_repo / "lib/extra.py").write_text("x = 1\n")
    commit_all(signed_repo, "outside the plan's scope")
    verdicts = five_verdicts(signed_repo, tmp_path)
    assert_all(verdicts, holds=False)
    # One in-scope rule (plangate.plan.scope.outside_scopes), each command's own code.
    expected = {"status": "HOOK_COMMITTED_OUTSIDE_SCOPE", "exec": "HOOK_COMMITTED_OUTSIDE_SCOPE",
                "ci check": "CI_OUTSIDE_SCOPE", "delivery": "DELIVERY_PLAN_DEVIATION"}
    for name, code in expected.items():
        found = [text for text in verdicts[name].reasons if text.startswith(code)]
        assert found and "lib/extra.py" in found[0], (name, verdicts[name].reasons)
        assert "docs/working/" not in found[0]  # the task's own package is never outside


def test_at_the_approved_commit_itself_report_status_and_exec_agree_on_the_scope_digest(
    git_repo: Path, tmp_path: Path
) -> None:
    # The record is not committed: HEAD is the approved commit (no pull request yet).
    make_task(git_repo, TASK, commit=False)
    commit_all(git_repo, "plan")
    result = run_cli_in(git_repo, "c3", "issue", TASK, "--target-sha",
                        git(git_repo, "rev-parse", "HEAD"), "--reviewers",
                        str(_reviewers(tmp_path)), "--decision", "AUTO_APPROVED",
                        "--policy-ref", "plangate-arbiter@v1")
    assert result.code == 0, result.out + result.err
    local = {"report": lambda: _report(git_repo, tmp_path / "report.md"),
             "status": lambda: _status(git_repo), "exec": lambda: _exec(git_repo)}
    assert_all({name: run() for name, run in local.items()}, holds=True)
    record = load_record(git_repo)
    del record["scope_digest"]
    save_record(git_repo, record)
    assert_all({name: run() for name, run in local.items()}, holds=False,
               code="SCOPE_NOT_APPROVED")
