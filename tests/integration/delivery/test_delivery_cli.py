"""``plangate delivery`` end to end: real git, the lead's producer and acceptor, the ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.ledger import open_ledger
from support.delivery import NOW, TASK, ApprovedTask, issue, make_approved, write_package
from support.repo import commit_all, git


def assess(task: ApprovedTask, run_cli, snap: dict, *extra: str, env=None):
    path = task.write_snapshot(snap)
    return run_cli(
        task.repo,
        "delivery",
        "assess",
        TASK,
        "--snapshot",
        str(path),
        "--now",
        NOW,
        "--json",
        *extra,
        env=env,
    )


@pytest.fixture
def task(git_repo, run_cli) -> ApprovedTask:
    return make_approved(git_repo, run_cli)


def test_merge_ready_exit_0_with_ledger_entries(task, run_cli):
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["verdict"] == "MERGE_READY"
    assert doc["facts"]["merge_ready_record"]["plan_hash"] == task.plan_hash
    assert doc["facts"]["ancestry"]["status"] == "descends"
    rows = [json.loads(line) for line in task.record_path.read_text().splitlines()]
    assert [r["kind"] for r in rows] == ["state", "merge_ready"]
    with open_ledger(task.repo, {}) as ledger:
        entries = ledger.entries(kind="delivery_transition", subject=TASK)
    assert [e.payload["entry_id"] for e in entries] == [r["entry_id"] for r in rows]


@pytest.mark.parametrize(
    ("overrides", "state"),
    [
        ({"checks": []}, "WAITING_FOR_CHECKS"),
        ({"review": {"state": "pending", "sha": "HEAD"}}, "WAITING_FOR_REVIEW"),
        ({"dod_evaluated": False}, "MERGE_READY_CANDIDATE"),
        ({"mergeable": "CONFLICTING"}, "CONFLICT"),
        (
            {
                "checks": [{"name": "ci", "sha": "HEAD", "conclusion": "failure"}],
                "ci_failure_taxonomy": "code",
            },
            "CHECKS_FAILED",
        ),
        (
            {
                "findings": [
                    {"id": "F1", "finding_type": "lint", "severity": "major", "disposition": None}
                ]
            },
            "REVIEW_REPAIR",
        ),
    ],
)
def test_not_yet_ready_exit_4_with_actions(task, run_cli, overrides, state):
    head = task.pr_commit()
    text = json.dumps(overrides).replace('"HEAD"', json.dumps(head))
    result = assess(task, run_cli, task.snapshot(head, **json.loads(text)))
    assert result.code == 4, result.err
    doc = json.loads(result.out)
    assert doc["verdict"] == state
    if state not in ("WAITING_FOR_CHECKS", "WAITING_FOR_REVIEW"):
        assert doc["facts"]["requested_actions"]
        assert all(a["action_id"].startswith("sha256:") for a in doc["facts"]["requested_actions"])


def test_plan_deviation_exit_1(task, run_cli):
    head = task.pr_commit("bin/tool.sh", "echo\n")
    result = assess(task, run_cli, task.snapshot(head, changed_files=["bin/tool.sh"]))
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["verdict"] == "EXEC_RETURN"
    assert "bin/tool.sh" in doc["reasons"][0]["message"]


def test_escalation_flag_exit_3(task, run_cli):
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head, escalation_flags=["touches_ho"]))
    assert result.code == 3
    assert json.loads(result.out)["verdict"] == "HUMAN_ESCALATED"


@pytest.mark.parametrize("claim", [True, None])
def test_diverged_head_escalates_whatever_the_caller_claims(task, run_cli, claim):
    git(task.repo, "checkout", "-q", "--orphan", "elsewhere")
    git(task.repo, "rm", "-rq", "--cached", ".")
    (task.repo / "src" / "app").mkdir(parents=True)
    (task.repo / "src" / "app" / "x.py").write_text("x = 1\n")
    git(task.repo, "add", "src/app/x.py")
    git(task.repo, "commit", "-q", "-m", "unrelated")
    head = git(task.repo, "rev-parse", "HEAD")
    git(task.repo, "checkout", "-q", "-f", "main")
    snap = task.snapshot(head, source_sha_ancestry=claim)
    result = assess(task, run_cli, snap)
    assert result.code == 3, result.err
    doc = json.loads(result.out)
    assert doc["reasons"][0]["code"] == "DELIVERY_ANCESTRY_DIVERGED"


def test_head_missing_locally_is_unmeasurable(task, run_cli):
    head = "d" * 40
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 3
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_ANCESTRY_UNMEASURABLE"


def test_caller_claim_false_does_not_block_a_measured_descendant(task, run_cli):
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head, source_sha_ancestry=False))
    assert result.code == 0
    assert json.loads(result.out)["facts"]["caller_ancestry_claim_ignored"] is False


def test_same_snapshot_twice_appends_nothing(task, run_cli):
    head = task.pr_commit()
    snap = task.snapshot(
        head,
        findings=[{"id": "F1", "finding_type": "lint", "severity": "minor", "disposition": None}],
    )
    first = assess(task, run_cli, snap)
    before = task.record_path.read_bytes()
    second = assess(task, run_cli, snap)
    assert first.code == second.code == 4
    assert task.record_path.read_bytes() == before
    ids = lambda r: [a["action_id"] for a in json.loads(r.out)["facts"]["requested_actions"]]  # noqa: E731
    assert ids(first) == ids(second)
    assert json.loads(second.out)["facts"]["appended_entry_ids"] == []
    with open_ledger(task.repo, {}) as ledger:
        assert len(ledger.entries(kind="delivery_transition")) == len(before.splitlines())


def test_receipt_flow(task, run_cli):
    head = task.pr_commit()
    failing = task.snapshot(
        head,
        checks=[{"name": "ci", "sha": head, "conclusion": "failure"}],
        ci_failure_taxonomy="code",
    )
    doc = json.loads(assess(task, run_cli, failing).out)
    (action,) = doc["facts"]["requested_actions"]
    assert (action["action_kind"], action["round"]) == ("repair_ci", 1)
    argv = [
        "delivery",
        "receipt",
        TASK,
        "--action-id",
        action["action_id"],
        "--result-ref",
        "commit:abc",
        "--now",
        NOW,
    ]
    assert run_cli(task.repo, *argv).code == 0
    size = len(task.record_path.read_bytes())
    assert run_cli(task.repo, *argv).code == 0  # identical receipt: nothing appended
    assert len(task.record_path.read_bytes()) == size
    conflict = run_cli(task.repo, *argv[:-4], "--result-ref", "commit:other", "--now", NOW)
    assert conflict.code == 1
    assert "DELIVERY_RECEIPT_CONFLICT" in conflict.out
    again = json.loads(assess(task, run_cli, failing).out)
    assert again["facts"]["requested_actions"][0]["round"] == 2


def test_receipt_without_intent_is_refused(task, run_cli):
    result = run_cli(
        task.repo,
        "delivery",
        "receipt",
        TASK,
        "--action-id",
        "sha256:" + "0" * 64,
        "--result-ref",
        "x",
        "--now",
        NOW,
    )
    assert result.code == 1
    assert "DELIVERY_INTENT_UNKNOWN" in result.out


@pytest.mark.parametrize(
    "argv",
    [
        ["--action-id", "abc", "--result-ref", "x", "--now", NOW],
        ["--action-id", "sha256:" + "0" * 64, "--result-ref", "has space", "--now", NOW],
        ["--action-id", "sha256:" + "0" * 64, "--result-ref", "x", "--now", "yesterday"],
    ],
)
def test_receipt_usage_errors(task, run_cli, argv):
    assert run_cli(task.repo, "delivery", "receipt", TASK, *argv).code == 2


@pytest.mark.parametrize(
    "content",
    [b"{}", b"[]", b"not json", b'{"task_id": "TASK-0001", "pr_number": "123"}'],
)
def test_malformed_snapshot_exit_2(task, run_cli, content):
    path = task.repo.parent / "bad.json"
    path.write_bytes(content)
    result = run_cli(task.repo, "delivery", "assess", TASK, "--snapshot", str(path), "--now", NOW)
    assert result.code == 2
    assert "DELIVERY_SNAPSHOT_INVALID" in result.err


@pytest.mark.parametrize(
    "argv",
    [
        ["assess", TASK, "--now", NOW],  # no --snapshot
        ["assess", TASK, "--snapshot", "x.json"],  # no --now
        ["assess", "task-1", "--snapshot", "x.json", "--now", NOW],
        ["assess", TASK, "--snapshot", "missing.json", "--now", NOW],
        ["bogus"],
        [],
    ],
)
def test_usage_errors_exit_2(task, run_cli, argv):
    assert run_cli(task.repo, "delivery", *argv).code == 2


def test_bad_now_exit_2(task, run_cli):
    head = task.pr_commit()
    path = task.write_snapshot(task.snapshot(head))
    result = run_cli(
        task.repo,
        "delivery",
        "assess",
        TASK,
        "--snapshot",
        str(path),
        "--now",
        "2026-12-02T10:00:00+01:00",
    )
    assert result.code == 2


def test_snapshot_for_another_task_is_refused(task, run_cli):
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head, task_id="TASK-0002"))
    assert result.code == 1
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_SNAPSHOT_TASK_MISMATCH"


def test_stale_plan_is_a_rejected_record(task, run_cli):
    head = task.pr_commit()
    (task.task_dir / "plan.md").write_text("# tampered\n")
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 1
    doc = json.loads(result.out)
    codes = [r["code"] for r in doc["reasons"]]
    assert codes[0] == "DELIVERY_RECORD_NOT_ACCEPTED"
    assert "C3_PLAN_HASH_STALE" in codes
    assert not task.record_path.exists()


@pytest.mark.parametrize("decision", ["HUMAN_ESCALATED", "BLOCKED"])
def test_non_approved_decision_is_rejected(git_repo, run_cli, decision):
    write_package(git_repo, run_cli)
    source = commit_all(git_repo, "plan")
    issue(run_cli, git_repo, source, decision=decision)
    task = ApprovedTask(git_repo, git_repo / "docs/working" / TASK, source, "")
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 1
    assert "C3_DECISION_NOT_APPROVED" in result.out


def test_legacy_record_is_rejected(git_repo, run_cli):
    from plangate.canonical import sha256_digest

    task_dir = write_package(git_repo, run_cli)
    source = commit_all(git_repo, "plan")
    legacy = {
        "task_id": TASK,
        "phase": "C-3",
        "c3_status": "APPROVED",
        "approved_by": "someone",
        "approved_at": "2026-12-01T09:00:00Z",
        "plan_hash": sha256_digest((task_dir / "plan.md").read_bytes()),
    }
    (task_dir / "approvals").mkdir()
    (task_dir / "approvals" / "c3.json").write_text(json.dumps(legacy))
    task = ApprovedTask(git_repo, task_dir, source, "")
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 1
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_LEGACY_RECORD"


def test_corrupt_record_line_is_refused(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, checks=[])).code == 4
    with task.record_path.open("ab") as handle:
        handle.write(b"{broken\n")
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 1
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_CORRUPT"


def test_forged_entry_id_is_refused(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, checks=[])).code == 4
    row = json.loads(task.record_path.read_text())
    row["state"] = "MERGE_READY"
    task.record_path.write_text(json.dumps(row) + "\n")
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 1
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_TAMPERED"


def test_ledger_failure_refuses_and_writes_nothing(task, run_cli):
    head = task.pr_commit()
    env = {"PLANGATE_LEDGER_URL": "mysql://nowhere/db"}
    result = assess(task, run_cli, task.snapshot(head), env=env)
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["reasons"][0]["code"] == "DELIVERY_LEDGER_UNAVAILABLE"
    assert doc["facts"]["state_not_recorded"] == "MERGE_READY"
    assert not task.record_path.exists()


def test_scope_mismatch_and_non_canonical_paths(task, run_cli):
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head, allowed_paths=["**"]))
    assert (result.code, json.loads(result.out)["reasons"][0]["code"]) == (
        1,
        "DELIVERY_SCOPE_MISMATCH",
    )
    result = assess(task, run_cli, task.snapshot(head, changed_files=["./src/app/hello.py"]))
    assert (result.code, json.loads(result.out)["reasons"][0]["code"]) == (
        1,
        "DELIVERY_PATH_NOT_CANONICAL",
    )


def test_plan_without_scope_escalates(git_repo, run_cli):
    write_package(git_repo, run_cli, plan="# Plan\n\n## Goal\n\nNo files section.\n")
    source = commit_all(git_repo, "plan")
    issue(run_cli, git_repo, source)
    task = ApprovedTask(git_repo, git_repo / "docs/working" / TASK, source, "")
    head = task.pr_commit()
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 3
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_SCOPE_UNDERIVABLE"


def test_human_output_lists_actions(task, run_cli):
    head = task.pr_commit()
    path = task.write_snapshot(task.snapshot(head, dod_evaluated=False))
    result = run_cli(task.repo, "delivery", "assess", TASK, "--snapshot", str(path), "--now", NOW)
    assert result.code == 4
    assert "MERGE_READY_CANDIDATE" in result.out
    assert "requested: dod_reevaluate sha256:" in result.out


def test_snapshot_from_stdin(task, run_cli):
    head = task.pr_commit()
    result = run_cli(
        task.repo,
        "delivery",
        "assess",
        TASK,
        "--snapshot",
        "-",
        "--now",
        NOW,
        stdin=json.dumps(task.snapshot(head)).encode(),
    )
    assert result.code == 0


def test_record_entries_validate_against_the_schema(task, run_cli):
    from importlib import resources

    import jsonschema

    schema = json.loads(
        resources.files("plangate.schemas")
        .joinpath("delivery-record-entry.schema.json")
        .read_text()
    )
    snap_schema = json.loads(
        resources.files("plangate.schemas").joinpath("delivery-snapshot.schema.json").read_text()
    )
    head = task.pr_commit()
    failing = task.snapshot(
        head,
        checks=[{"name": "ci", "sha": head, "conclusion": "failure"}],
        ci_failure_taxonomy="code",
    )
    jsonschema.validate(failing, snap_schema)
    doc = json.loads(assess(task, run_cli, failing).out)
    aid = doc["facts"]["requested_actions"][0]["action_id"]
    assert (
        run_cli(
            task.repo,
            "delivery",
            "receipt",
            TASK,
            "--action-id",
            aid,
            "--result-ref",
            "r",
            "--now",
            NOW,
        ).code
        == 0
    )
    green = task.snapshot(head)
    jsonschema.validate(green, snap_schema)
    assert assess(task, run_cli, green).code == 0
    rows = [json.loads(line) for line in task.record_path.read_text().splitlines()]
    assert {r["kind"] for r in rows} == {"state", "intent", "receipt", "merge_ready"}
    for row in rows:
        jsonschema.validate(row, schema)


def test_record_path_is_inside_task(task: ApprovedTask):
    assert task.record_path == task.task_dir / "delivery" / "record.jsonl"
    assert isinstance(task.repo, Path)


def _forge_append(task: ApprovedTask, body: dict) -> None:
    """Append a row with a correct chain and entry id, behind plangate's back."""
    from plangate.delivery.log import read_log, rows_bytes, seal_entries

    log = read_log(task.task_dir)
    rows = seal_entries([body], prev=log.last_entry_id, at=NOW)
    task.record_path.write_bytes(log.raw + rows_bytes(rows))


def test_consistently_forged_row_is_caught_by_the_ledger(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, checks=[])).code == 4
    _forge_append(
        task,
        {"kind": "state", "state": "MERGE_READY", "pr_number": 7, "head_sha": head, "reasons": []},
    )
    result = assess(task, run_cli, task.snapshot(head, checks=[]))
    assert result.code == 1
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_NOT_IN_LEDGER"


def test_record_from_another_ledger_is_unanchored_not_refused(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, checks=[])).code == 4
    (task.repo / ".plangate" / "ledger.sqlite3").unlink()
    # A deleted ledger is never re-created silently: the record says one existed.
    refused = assess(task, run_cli, task.snapshot(head))
    assert refused.code == 1
    assert "LEDGER_MISSING" in refused.out
    assert run_cli(task.repo, "ledger", "init", "--force").code == 0  # a human starts over
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 0
    assert json.loads(result.out)["facts"]["ledger_anchor"]["status"] == "unanchored"
    # the new rows are anchored in the new ledger: the record is now partially anchored
    again = assess(task, run_cli, task.snapshot(head))
    assert json.loads(again.out)["facts"]["ledger_anchor"]["status"] == "partially_anchored"


def test_time_never_runs_backwards(task, run_cli):
    head = task.pr_commit()
    assert assess(task, run_cli, task.snapshot(head, checks=[])).code == 4
    path = task.write_snapshot(task.snapshot(head))
    argv = ["delivery", "assess", TASK, "--snapshot", str(path), "--json"]
    earlier = run_cli(task.repo, *argv, "--now", "2026-12-02T09:59:59Z")
    assert earlier.code == 1
    assert json.loads(earlier.out)["reasons"][0]["code"] == "DELIVERY_TIME_BEFORE_RECORD"
    assert run_cli(task.repo, *argv, "--now", NOW).code == 0  # the same second is fine


# -- fail-open attempts: type confusion, lost rounds, stale records ------------------


def assess_at(task: ApprovedTask, run_cli, snap: dict, now: str = NOW):
    path = task.write_snapshot(snap)
    return run_cli(
        task.repo, "delivery", "assess", TASK, "--snapshot", str(path), "--now", now, "--json"
    )


def receipt_at(task: ApprovedTask, run_cli, action_id: str, now: str = NOW):
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
    result = assess_at(task, run_cli, task.snapshot(head, findings=[finding]))
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
        doc = json.loads(assess_at(task, run_cli, snap).out)
        (action,) = doc["facts"]["requested_actions"]
        assert action["round"] == round_no
        assert receipt_at(task, run_cli, action["action_id"]).code == 0
    limit = assess_at(task, run_cli, snap)
    assert limit.code == 3
    assert json.loads(limit.out)["reasons"][0]["code"] == "DELIVERY_ROUND_LIMIT"
    return snap


def test_deleting_the_record_does_not_reset_the_round_limit(task, run_cli):
    snap = _three_rounds(task, run_cli)
    task.record_path.unlink()
    result = assess_at(task, run_cli, snap)
    assert result.code == 1, result.out
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_NOT_IN_LEDGER"


def test_truncating_the_record_does_not_reset_the_round_limit(task, run_cli):
    snap = _three_rounds(task, run_cli)
    lines = task.record_path.read_bytes().splitlines(keepends=True)
    # keep only the first round's rows: a valid chain prefix, every row in the ledger
    task.record_path.write_bytes(b"".join(lines[:2]))
    result = assess_at(task, run_cli, snap)
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
    result = assess_at(task, run_cli, snap)
    assert result.code == 1, result.out
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_RECORD_NOT_IN_LEDGER"


def test_receipt_refused_on_a_truncated_record(task, run_cli):
    head = task.pr_commit()
    doc = json.loads(assess_at(task, run_cli, _failing(task, head)).out)
    (action,) = doc["facts"]["requested_actions"]
    assert receipt_at(task, run_cli, action["action_id"]).code == 0
    lines = task.record_path.read_bytes().splitlines(keepends=True)
    task.record_path.write_bytes(b"".join(lines[:-1]))  # drop the receipt
    again = receipt_at(task, run_cli, action["action_id"])
    assert again.code == 1
    assert "DELIVERY_RECORD_NOT_IN_LEDGER" in again.out


def test_head_sha_naming_a_tag_object_is_not_a_head_commit(task, run_cli):
    """git peels an annotated tag to its commit; the snapshot's head must be the commit itself."""
    from support.repo import git

    head = task.pr_commit()
    git(task.repo, "tag", "-a", "-m", "release", "v1", head)
    tag_object = git(task.repo, "rev-parse", "v1")
    assert tag_object != head
    result = assess_at(task, run_cli, task.snapshot(tag_object))
    assert result.code == 3, result.out
    assert json.loads(result.out)["reasons"][0]["code"] == "DELIVERY_ANCESTRY_UNMEASURABLE"


def test_delivery_path_that_is_a_file_is_refused_without_a_traceback(task, run_cli):
    """``delivery`` as a regular file read as 'no record', then crashed (exit 5) after the
    ledger write, leaving ledger rows whose record rows never landed."""
    from plangate.ledger import open_ledger

    head = task.pr_commit()
    (task.task_dir / "delivery").write_text("not a directory\n")
    result = assess_at(task, run_cli, task.snapshot(head))
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
    result = assess_at(task, run_cli, task.snapshot(head, changed_files=[path]))
    assert result.code == 3, result.out
    doc = json.loads(result.out)
    assert doc["reasons"][0]["code"] == "DELIVERY_TOUCHES_PROTECTED_SURFACE"
    assert path in doc["reasons"][0]["message"]


def test_unprotected_change_in_scope_still_merge_ready(task, run_cli):
    head = task.pr_commit()
    result = assess_at(task, run_cli, task.snapshot(head))
    assert result.code == 0, result.out
    surfaces = json.loads(result.out)["facts"]["protected_surfaces"]
    assert surfaces["provenance"] == "bundled_template"
    assert surfaces["hits"] == []


def test_a_record_that_did_not_approve_the_derived_scope_is_refused(task, run_cli):
    # a record issued before the scope digest existed approved the plan's bytes only
    head = task.pr_commit()
    c3 = task.task_dir / "approvals" / "c3.json"
    record = json.loads(c3.read_text())
    assert record["scope_digest"].startswith("sha256:")
    del record["scope_digest"]
    c3.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    result = assess(task, run_cli, task.snapshot(head))
    assert result.code == 1
    assert [r["code"] for r in json.loads(result.out)["reasons"]] == ["SCOPE_NOT_APPROVED"]
    assert not task.record_path.exists()
