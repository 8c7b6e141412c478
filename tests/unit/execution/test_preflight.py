"""The pure rules of exec: HEAD, bound digests, entries, drift and the exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.execution.preflight import (
    BOUND_FACTS,
    CommandResult,
    RunOutcome,
    bound_facts,
    branch_head,
    drift,
    ended_entry,
    final_exit_code,
    ledger_payload,
    prepare,
    refusal_exit_code,
    run_verdict,
    started_entry,
)
from plangate.verdict import Reason, Result

SHA = "a" * 40
FACTS = {
    "snapshot_digest": "s", "record_digest": "r", "plan_hash": "p-recorded",
    "current_plan_hash": "p", "plan_package_hash": "k", "source_sha_full": SHA,
    "kind": "c3_prime", "decision": "AUTO_APPROVED",
}
ACCEPTED = Result("ACCEPTED", (), FACTS)


@pytest.mark.parametrize(
    ("same_tree", "commit", "branch", "code"),
    [
        (False, SHA, "main", "EXEC_REPO_ROOT_MISMATCH"),
        (True, None, "main", "EXEC_NO_HEAD"),
        (True, SHA, None, "EXEC_HEAD_DETACHED"),
    ],
)
def test_a_run_starts_only_from_a_branch_head_of_this_tree(
    same_tree: bool, commit: str | None, branch: str | None, code: str
) -> None:
    with pytest.raises(EnvironmentFailure) as info:
        branch_head(Path("/r"), Path("/t"), same_tree=same_tree, commit=commit, branch=branch)
    assert info.value.code == code


def test_branch_head_is_the_commit() -> None:
    assert branch_head(Path("/r"), Path("/r"), same_tree=True, commit=SHA, branch="main") == SHA


def test_bound_facts_use_the_digests_computed_from_the_files() -> None:
    bound = bound_facts(FACTS)
    assert tuple(bound) == BOUND_FACTS
    assert bound["plan_hash"] == "p"  # the current hash, not the recorded one
    assert bound_facts({"current_plan_package_hash": None})["plan_package_hash"] is None


def test_drift_lists_changed_digests_in_order() -> None:
    before = bound_facts(FACTS)
    after = dict(before, record_digest="r2", snapshot_digest="s2")
    assert drift(before, after) == ["snapshot_digest", "record_digest"]
    assert drift(before, before) == []


def test_prepare_refuses_a_verification_that_did_not_accept() -> None:
    with pytest.raises(ValueError, match="accepted"):
        prepare("TASK-0001", SHA, ["true"], Result("REJECTED", (Reason("X", "x"),), {}))


def test_entries_keep_arguments_out_and_the_ledger_drops_event_and_time() -> None:
    run = prepare("TASK-0001", SHA, ["/usr/bin/env", "SECRET=1", "make"], ACCEPTED)
    started = started_entry(run, "2026-01-01T00:00:00Z")
    assert started["program"] == "env"
    assert "SECRET" not in repr(started)
    assert set(started) - set(ledger_payload(started)) == {"event", "at"}
    after = Result("REJECTED", (Reason("C3_PLAN_HASH_MISMATCH", "m"),),
                   dict(FACTS, current_plan_hash="p2"))
    ended = ended_entry(run, "t", CommandResult(0), after, SHA)
    assert ended["drift"] == ["plan_hash"]
    assert ended["post_reasons"] == ["C3_PLAN_HASH_MISMATCH"]
    assert ended["plan_hash_after"] == "p2"


def test_exit_codes() -> None:
    assert final_exit_code(0, recorded=True) == 0
    assert final_exit_code(0, recorded=False) == 1
    assert final_exit_code(7, recorded=False) == 7
    assert refusal_exit_code(Result("HUMAN_ESCALATED", (), {})) == 3
    assert refusal_exit_code(Result("REJECTED", (), {})) == 1


@pytest.mark.parametrize(
    ("outcome", "verdict"),
    [
        (RunOutcome(True, "ACCEPTED", "ACCEPTED"), "ACCEPTED"),
        (RunOutcome(True, "NO_CHANGES", "ACCEPTED"), "ACCEPTED"),
        (RunOutcome(True, None, "ACCEPTED"), "ACCEPTED"),
        (RunOutcome(True, "REJECTED", "ACCEPTED"), "REJECTED"),
        (RunOutcome(True, "HUMAN_REQUIRED", "ACCEPTED"), "HUMAN_REQUIRED"),
        (RunOutcome(True, "ACCEPTED", "REJECTED"), "REJECTED"),
        (RunOutcome(True, None, "HUMAN_ESCALATED"), "HUMAN_REQUIRED"),
        (RunOutcome(True, "SOMETHING_NEW", "ACCEPTED"), "REJECTED"),
        (RunOutcome(False, "REJECTED", "ACCEPTED", 1), "REJECTED"),
        (RunOutcome(False, None, "ACCEPTED", 3), "HUMAN_REQUIRED"),
    ],
)
def test_one_verdict_per_run(outcome: RunOutcome, verdict: str) -> None:
    assert run_verdict(outcome) == verdict


def test_the_exit_code_agrees_with_the_verdict() -> None:
    assert final_exit_code(0, recorded=True, verdict="REJECTED") == 1
    assert final_exit_code(0, recorded=True, verdict="HUMAN_REQUIRED") == 3
    assert final_exit_code(2, recorded=True, verdict="REJECTED") == 1
    assert final_exit_code(2, recorded=True, verdict="ACCEPTED") == 2


def test_the_ended_entry_says_whether_the_command_started() -> None:
    run = prepare("TASK-0001", SHA, ["make"], ACCEPTED)
    ended = ended_entry(run, "t", CommandResult(1, "EXEC_WORKSPACE_FAILED: x", started=False),
                        ACCEPTED, SHA)
    assert ended["started"] is False
    assert ended["exit_code"] is None  # never an exit code for a command that did not run
    assert ended["verdict"] == "REJECTED"
