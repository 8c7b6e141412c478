"""Adversarial review: RunEvidence claims that used to outlive the approval they were made under."""

from __future__ import annotations

import json

import pytest

from support.delivery import NOW, PLAN_MD, TASK, ApprovedTask, issue, make_approved, write_package
from support.repo import commit_all

HV = '{"plugin_version": "1.0.0", "cli_version": "0.1.0", "corpus_hash": "sha256:' + "a" * 64 + '"}'


def produce(task: ApprovedTask, run_cli):
    return run_cli(
        task.repo,
        "evidence",
        "produce",
        TASK,
        "--run-id",
        "run-1",
        "--started-at",
        "2026-12-02T09:00:00Z",
        "--now",
        NOW,
        "--repository",
        "plangate",
        "--harness-version",
        HV,
        "--harness-version-end",
        HV,
    )


def assess(task: ApprovedTask, run_cli, snap: dict) -> int:
    path = task.write_snapshot(snap)
    return run_cli(
        task.repo, "delivery", "assess", TASK, "--snapshot", str(path), "--now", NOW
    ).code


@pytest.fixture
def task(git_repo, run_cli) -> ApprovedTask:
    return make_approved(git_repo, run_cli)


def _reapprove(task: ApprovedTask, run_cli, *, new_plan: bool) -> None:
    """Issue a new AUTO_APPROVED record (new commit, optionally a new plan) over the old one."""
    plan = PLAN_MD.replace("- `docs/notes.md`", "- `docs/notes.md`\n- `docs/more.md`")
    if new_plan:
        write_package(task.repo, run_cli, plan=plan)
    else:
        (task.repo / "unrelated.txt").write_text("moved on\n")
    source = commit_all(task.repo, "re-plan")
    issue(run_cli, task.repo, source, force=True)


@pytest.mark.parametrize("new_plan", [True, False])
def test_merge_ready_of_a_superseded_approval_is_not_evidence_of_the_new_one(
    task, run_cli, new_plan
):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    before = produce(task, run_cli)
    assert before.code == 0, before.err
    assert json.loads(before.out)["terminal_state"] == "MERGE_READY"

    _reapprove(task, run_cli, new_plan=new_plan)
    after = produce(task, run_cli)
    # The merge_ready entry binds the old plan / source commit: no MERGE_READY evidence
    # for an approval that never went through delivery.
    assert after.code != 0, after.out
    assert "MERGE_READY" not in after.out
    assert "EVIDENCE_MERGE_READY_UNBOUND" in after.err
    (task.repo.parent / "ev.json").write_text(before.out)
    checked = run_cli(task.repo, "evidence", "verify", str(task.repo.parent / "ev.json"), TASK)
    assert checked.code == 1, checked.out


@pytest.mark.parametrize(
    "key",
    ["apiKey", "access_token", "githubToken", "GITHUB_TOKEN", "client_secret", "private_key",
     "userName", "stackTrace", "filePath", "db_password", "session.cookie"],
)
def test_credential_keys_in_any_spelling_are_refused(task, run_cli, key):
    """Only the exact snake_case names were refused: ``apiKey`` or ``access_token`` passed
    through ``--routing-decisions`` into the evidence with their values."""
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    routing = json.dumps([{"route": "impl", key: "ghp_0123456789abcdef"}])
    result = run_cli(
        task.repo, "evidence", "produce", TASK, "--run-id", "run-1",
        "--started-at", "2026-12-02T09:00:00Z", "--now", NOW, "--repository", "plangate",
        "--harness-version", HV, "--harness-version-end", HV, "--routing-decisions", routing,
    )
    assert result.code == 1, result.out
    assert "EVIDENCE_INPUT_PRIVACY" in result.err
    assert "ghp_0123456789abcdef" not in result.out + result.err


@pytest.mark.parametrize("key", ["route", "max_tokens", "token_budget_note", "reviewer_model"])
def test_ordinary_routing_keys_pass(task, run_cli, key):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    routing = json.dumps([{key: "impl"}])
    result = run_cli(
        task.repo, "evidence", "produce", TASK, "--run-id", "run-1",
        "--started-at", "2026-12-02T09:00:00Z", "--now", NOW, "--repository", "plangate",
        "--harness-version", HV, "--harness-version-end", HV, "--routing-decisions", routing,
    )
    assert result.code == 0, result.err
