"""``plangate evidence produce|verify`` end to end over real records and delivery logs."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from support.delivery import NOW, PLAN_MD, TASK, ApprovedTask, issue, make_approved, write_package
from support.repo import commit_all

HV = '{"plugin_version": "1.0.0", "cli_version": "0.1.0", "corpus_hash": "sha256:' + "a" * 64 + '"}'
SCHEMA = json.loads(
    resources.files("plangate.schemas").joinpath("run-evidence.schema.json").read_text()
)


def produce(task: ApprovedTask, run_cli, *extra: str):
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
        *extra,
    )


def assess(task: ApprovedTask, run_cli, snap: dict) -> int:
    path = task.write_snapshot(snap)
    return run_cli(
        task.repo, "delivery", "assess", TASK, "--snapshot", str(path), "--now", NOW
    ).code


def verify(task: ApprovedTask, run_cli, text: str, *extra: str):
    path = task.repo.parent / "ev-check.json"
    path.write_text(text)
    return run_cli(task.repo, "evidence", "verify", str(path), TASK, *extra)


@pytest.fixture
def task(git_repo, run_cli) -> ApprovedTask:
    return make_approved(git_repo, run_cli)


def test_merge_ready_run(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, checks=[])) == 4
    assert assess(task, run_cli, task.snapshot(head)) == 0
    result = produce(task, run_cli, "--harness-version-end", HV, "--routing-decisions", "[]")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["terminal_state"] == "MERGE_READY"
    assert doc["final_head_sha"] == head
    assert doc["evidence_refs"] == [
        f"docs/working/{TASK}/approvals/c3.json",
        f"docs/working/{TASK}/delivery/record.jsonl",
    ]
    assert "reasons=DELIVERY_NO_CHECKS_AT_HEAD" in doc["observation"]
    checked = verify(task, run_cli, result.out, "--json")
    assert checked.code == 4
    assert json.loads(checked.out)["facts"]["unavailable"] == ["cost_metrics", "replan_count"]


def test_no_evidence_before_terminal(task, run_cli):
    head = task.pr_commit()
    assert produce(task, run_cli).code == 4  # no delivery record at all
    assert assess(task, run_cli, task.snapshot(head, dod_evaluated=False)) == 4
    result = produce(task, run_cli)
    assert result.code == 4
    assert "MERGE_READY_CANDIDATE" in result.err
    assert result.out == ""


def test_human_escalated_delivery(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, escalation_flags=["touches_ho"])) == 3
    result = produce(task, run_cli)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["terminal_state"] == "HUMAN_ESCALATED"
    assert doc["final_head_sha"] == head
    assert doc["ci_outcomes"] == "unavailable"
    assert {"kind": "delivery_state", "detail": "HUMAN_ESCALATED"} in doc["human_interventions"]
    assert any(e["kind"] == "harness_drift_unchecked" for e in doc["escalation"])
    checked = verify(task, run_cli, result.out)
    assert checked.code == 4
    assert "escalation:harness_drift_unchecked" in checked.out


@pytest.mark.parametrize("decision", ["BLOCKED", "HUMAN_ESCALATED"])
def test_non_approved_record_is_a_terminal_source(git_repo, run_cli, decision):
    write_package(git_repo, run_cli)
    source = commit_all(git_repo, "plan")
    issue(run_cli, git_repo, source, decision=decision)
    task = ApprovedTask(git_repo, git_repo / "docs/working" / TASK, source, "")
    result = produce(task, run_cli)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["terminal_state"] == decision
    assert doc["final_head_sha"] == "unavailable"
    assert doc["evidence_refs"] == [f"docs/working/{TASK}/approvals/c3.json"]
    assert verify(task, run_cli, result.out).code == 4


def test_tampered_plan_is_refused_for_blocked_record_too(git_repo, run_cli):
    write_package(git_repo, run_cli)
    source = commit_all(git_repo, "plan")
    issue(run_cli, git_repo, source, decision="BLOCKED")
    task = ApprovedTask(git_repo, git_repo / "docs/working" / TASK, source, "")
    (task.task_dir / "plan.md").write_text("# edited after the decision\n")
    result = produce(task, run_cli)
    assert result.code == 1
    assert "plan_hash" in result.err.lower() or "PLAN_HASH" in result.err


def test_legacy_record_is_refused(git_repo, run_cli):
    from plangate.canonical import sha256_digest

    task_dir = write_package(git_repo, run_cli)
    commit_all(git_repo, "plan")
    (task_dir / "approvals").mkdir()
    (task_dir / "approvals" / "c3.json").write_text(
        json.dumps(
            {
                "task_id": TASK,
                "phase": "C-3",
                "c3_status": "APPROVED",
                "approved_by": "a",
                "approved_at": "2026-12-01T09:00:00Z",
                "plan_hash": sha256_digest((task_dir / "plan.md").read_bytes()),
            }
        )
    )
    task = ApprovedTask(git_repo, task_dir, "", "")
    result = produce(task, run_cli)
    assert result.code == 1
    assert "EVIDENCE_LEGACY_RECORD" in result.err


def test_out_file(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    bad = produce(task, run_cli, "--out", "ev.jsonl")
    assert bad.code == 2
    assert not (task.repo / "ev.jsonl").exists()
    good = produce(task, run_cli, "--out", "../ev.json")
    assert good.code == 0, good.err
    assert good.out == ""
    written = (task.repo.parent / "ev.json").read_text()
    jsonschema.validate(json.loads(written), SCHEMA)
    assert (
        produce(task, run_cli, "--out", "../ev.json").code == 1
    )  # one run, one file: no overwrite
    assert verify(task, run_cli, written).code == 4


@pytest.mark.parametrize(
    "flag", ["--run-id", "--started-at", "--now", "--repository", "--harness-version"]
)
def test_missing_required_flag_is_usage(task, run_cli, flag):
    argv = [
        "evidence",
        "produce",
        TASK,
        "--run-id",
        "r",
        "--started-at",
        "2026-12-02T09:00:00Z",
        "--now",
        NOW,
        "--repository",
        "p",
        "--harness-version",
        HV,
    ]
    index = argv.index(flag)
    del argv[index : index + 2]
    result = run_cli(task.repo, *argv)
    assert result.code == 2
    assert flag in result.err


def test_verify_detects_a_record_that_moved_on(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    text = produce(task, run_cli).out
    assert verify(task, run_cli, text).code == 4
    newer = task.pr_commit("src/app/more.py", "y = 2\n")
    assert assess(task, run_cli, task.snapshot(newer, checks=[])) == 4
    result = verify(task, run_cli, text, "--json")
    assert result.code == 1
    assert json.loads(result.out)["reasons"][0]["code"] == "EVIDENCE_RUN_NOT_TERMINAL"


def test_verify_detects_edits(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    doc = json.loads(produce(task, run_cli).out)
    doc["repair_rounds"] = 99
    assert verify(task, run_cli, json.dumps(doc)).code == 1
    assert verify(task, run_cli, "not json").code == 1
    missing = run_cli(task.repo, "evidence", "verify", "nope.json", TASK)
    assert missing.code == 2


def test_record_jsonl_with_private_key_is_refused(task, run_cli):
    from plangate.delivery.log import read_log, rows_bytes, seal_entries

    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    log = read_log(task.task_dir)
    extra = seal_entries(
        [{"kind": "notice", "stdout": "secret output"}], prev=log.last_entry_id, at=NOW
    )
    task.record_path.write_bytes(log.raw + rows_bytes(extra))
    result = produce(task, run_cli)
    assert result.code == 1
    assert "record.jsonl: stdout" in result.err
    assert "secret output" not in result.err


def test_unanchored_record_makes_evidence_partial(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head)) == 0
    (task.repo / ".plangate" / "ledger.sqlite3").unlink()
    result = produce(task, run_cli, "--harness-version-end", HV)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert [e["kind"] for e in doc["escalation"]] == ["delivery_record_unanchored"]
    checked = verify(task, run_cli, result.out)
    assert checked.code == 4
    assert "escalation:delivery_record_unanchored" in checked.out


def test_forged_merge_ready_is_refused(task, run_cli):
    from plangate.delivery.log import read_log, rows_bytes, seal_entries

    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, checks=[])) == 4
    log = read_log(task.task_dir)
    forged = seal_entries(
        [
            {
                "kind": "state",
                "state": "MERGE_READY",
                "pr_number": 7,
                "head_sha": head,
                "reasons": [],
            },
            {
                "kind": "merge_ready",
                "record": {
                    "pr_number": 7,
                    "head_sha": head,
                    "check_summary": {"ci": "success"},
                    "review_disposition": {},
                    "round": 0,
                    "plan_hash": task.plan_hash,
                    "plan_package_hash": "sha256:" + "0" * 64,
                    "source_sha": task.source_sha,
                },
            },
        ],
        prev=log.last_entry_id,
        at=NOW,
    )
    task.record_path.write_bytes(log.raw + rows_bytes(forged))
    result = produce(task, run_cli)
    assert result.code == 1
    assert "EVIDENCE_RECORD_NOT_IN_LEDGER" in result.err


# -- fail-open attempts: superseded approvals ----------------------------------------


def produce_bounded(task: ApprovedTask, run_cli):
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
    before = produce_bounded(task, run_cli)
    assert before.code == 0, before.err
    assert json.loads(before.out)["terminal_state"] == "MERGE_READY"

    _reapprove(task, run_cli, new_plan=new_plan)
    after = produce_bounded(task, run_cli)
    # The merge_ready entry binds the old plan / source commit: no MERGE_READY evidence
    # for an approval that never went through delivery.
    assert after.code == 1, after.out
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
