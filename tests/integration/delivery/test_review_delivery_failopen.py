"""Adversarial review: delivery inputs that used to end in an acceptance (fail open)."""

from __future__ import annotations

import json

import pytest

from support.delivery import NOW, TASK, ApprovedTask, make_approved


def assess(task: ApprovedTask, run_cli, snap: dict, now: str = NOW):
    path = task.write_snapshot(snap)
    return run_cli(
        task.repo, "delivery", "assess", TASK, "--snapshot", str(path), "--now", now, "--json"
    )


def receipt(task: ApprovedTask, run_cli, action_id: str, now: str = NOW):
    return run_cli(
        task.repo,
        "delivery",
        "receipt",
        TASK,
        "--action-id",
        action_id,
        "--result-ref",
        "commit:fix",
        "--now",
        now,
    )


@pytest.fixture
def task(git_repo, run_cli) -> ApprovedTask:
    return make_approved(git_repo, run_cli)


@pytest.mark.parametrize("repair_commit", [False, 0, [], {}, True, 1234567])
def test_non_string_repair_commit_never_resolves_a_finding(task, run_cli, repair_commit):
    """``"repair_commit": false`` used to become the string "False": resolved, MERGE_READY."""
    head = task.pr_commit()
    finding = {
        "id": "F1",
        "finding_type": "security",
        "severity": "critical",
        "disposition": {"kind": "adopted", "repair_commit": repair_commit},
    }
    result = assess(task, run_cli, task.snapshot(head, findings=[finding]))
    assert result.code == 2, result.out
    assert "repair_commit" in result.err


def _failing(task: ApprovedTask, head: str) -> dict:
    return task.snapshot(
        head,
        checks=[{"name": "ci", "sha": head, "conclusion": "failure"}],
        ci_failure_taxonomy="code",
    )


def _three_rounds(task: ApprovedTask, run_cli) -> dict:
    """Three receipted repair rounds; the fourth failing assessment must escalate."""
    head = task.pr_commit()
    snap = _failing(task, head)
    for round_no in (1, 2, 3):
        doc = json.loads(assess(task, run_cli, snap).out)
        (action,) = doc["facts"]["requested_actions"]
        assert action["round"] == round_no
        assert receipt(task, run_cli, action["action_id"]).code == 0
    limit = assess(task, run_cli, snap)
    assert limit.code == 3
    assert json.loads(limit.out)["reasons"][0]["code"] == "DELIVERY_ROUND_LIMIT"
    return snap


def test_deleting_the_record_does_not_reset_the_round_limit(task, run_cli):
    snap = _three_rounds(task, run_cli)
    task.record_path.unlink()
    result = assess(task, run_cli, snap)
    assert result.code == 1, result.out
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_NOT_IN_LEDGER"


def test_truncating_the_record_does_not_reset_the_round_limit(task, run_cli):
    snap = _three_rounds(task, run_cli)
    lines = task.record_path.read_bytes().splitlines(keepends=True)
    # keep only the first round's rows: a valid chain prefix, every row in the ledger
    task.record_path.write_bytes(b"".join(lines[:2]))
    result = assess(task, run_cli, snap)
    assert result.code == 1, result.out
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_NOT_IN_LEDGER"


def test_replacing_the_record_with_fresh_rows_is_refused(task, run_cli):
    """A wholly forged record (no row in the ledger) is not 'another machine's record'
    when this ledger holds rows of the task that the record lacks."""
    from plangate.delivery.log import rows_bytes, seal_entries

    snap = _three_rounds(task, run_cli)
    forged = seal_entries(
        [
            {
                "kind": "state",
                "state": "WAITING_FOR_CHECKS",
                "pr_number": 7,
                "head_sha": snap["head_sha"],
                "reasons": [],
            }
        ],
        prev=None,
        at=NOW,
    )
    task.record_path.write_bytes(rows_bytes(forged))
    result = assess(task, run_cli, snap)
    assert result.code == 1, result.out
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_NOT_IN_LEDGER"


def test_receipt_refused_on_a_truncated_record(task, run_cli):
    head = task.pr_commit()
    doc = json.loads(assess(task, run_cli, _failing(task, head)).out)
    (action,) = doc["facts"]["requested_actions"]
    assert receipt(task, run_cli, action["action_id"]).code == 0
    lines = task.record_path.read_bytes().splitlines(keepends=True)
    task.record_path.write_bytes(b"".join(lines[:-1]))  # drop the receipt
    again = receipt(task, run_cli, action["action_id"])
    assert again.code == 1
    assert "DELIVERY_RECORD_NOT_IN_LEDGER" in again.out


def test_head_sha_naming_a_tag_object_is_not_a_head_commit(task, run_cli):
    """git peels an annotated tag to its commit; the snapshot's head must be the commit itself."""
    from support.repo import git

    head = task.pr_commit()
    git(task.repo, "tag", "-a", "-m", "release", "v1", head)
    tag_object = git(task.repo, "rev-parse", "v1")
    assert tag_object != head
    result = assess(task, run_cli, task.snapshot(tag_object))
    assert result.code == 3, result.out
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_ANCESTRY_UNMEASURABLE"


def test_delivery_path_that_is_a_file_is_refused_without_a_traceback(task, run_cli):
    """``delivery`` as a regular file read as 'no record', then crashed (exit 5) after the
    ledger write, leaving ledger rows whose record rows never landed."""
    from plangate.ledger import open_ledger

    head = task.pr_commit()
    (task.task_dir / "delivery").write_text("not a directory\n")
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 1, (result.out, result.err)
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_UNREADABLE"
    with open_ledger(task.repo, {}) as ledger:
        assert ledger.entries(kind="delivery_transition") == []


@pytest.mark.parametrize(
    "path",
    ["docs/working/TASK-0002/approvals/c3.json", "src/app/CLAUDE.md", "src/app/AGENTS.md"],
)
def test_protected_surface_inside_the_plan_scope_is_never_merge_ready(git_repo, run_cli, path):
    """A plan scope like ``docs/**`` covers another task's approval record; a PR that forges
    it used to reach MERGE_READY (delivery never looked at protected surfaces)."""
    from plangate.canonical import sha256_digest
    from support.delivery import PLAN_MD, issue, write_package
    from support.repo import commit_all

    plan = PLAN_MD.replace("- `docs/notes.md`", "- `docs/**`")
    task_dir = write_package(git_repo, run_cli, plan=plan)
    source = commit_all(git_repo, "plan package")
    issue(run_cli, git_repo, source)
    task = ApprovedTask(git_repo, task_dir, source, sha256_digest(plan.encode()))
    head = task.pr_commit(path, "{}\n")
    result = assess(task, run_cli, task.snapshot(head, changed_files=[path]))
    assert result.code == 3, result.out
    doc = json.loads(result.out)
    assert doc["reasons"][0]["code"] == "DELIVERY_TOUCHES_PROTECTED_SURFACE"
    assert path in doc["reasons"][0]["message"]


def test_unprotected_change_in_scope_still_merge_ready(task, run_cli):
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 0, result.out
    surfaces = json.loads(result.out)["facts"]["protected_surfaces"]
    assert surfaces["provenance"] == "bundled_template"
    assert surfaces["hits"] == []
