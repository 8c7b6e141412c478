"""Adversarial review of ``eval run`` finality: INCONCLUSIVE is terminal for its evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import RunCli
from support.evalrun import GOOD_VERIFIER, HarnessRepo, build_harness_repo, git

VERIFIER = "harness/verifiers/completion_evidence.py"


@pytest.fixture
def harness(tmp_path: Path) -> HarnessRepo:
    return build_harness_repo(tmp_path)


def test_recommitting_the_same_tree_cannot_dodge_a_recorded_inconclusive(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    # Without a review the first evaluation ends INCONCLUSIVE. Re-committing the very same
    # tree (a new message is enough for a new commit id) under a new candidate id, then
    # attaching a review, re-rolled the same evaluation into a PASS.
    digest, commit = harness.candidate("first", {VERIFIER: GOOD_VERIFIER})
    first = run_cli(harness.repo, "eval", "run", digest, "--json")
    assert first.code == 4, first.out

    tree = git(harness.repo, "rev-parse", f"{commit}^{{tree}}")
    parent = git(harness.repo, "rev-parse", f"{commit}^")
    recommit = git(harness.repo, "commit-tree", tree, "-p", parent, "-m", "same change, again")
    assert recommit != commit
    again, _ = harness.candidate("again", {}, commit=recommit)
    review = harness.review("candidate:again:v1", recommit)
    assert run_cli(harness.repo, "eval", "review", "add", again, str(review)).code == 0

    second = run_cli(harness.repo, "eval", "run", again, "--json")
    body = json.loads(second.out)
    assert second.code == 4, body["reasons"]
    assert [r["code"] for r in body["reasons"]] == ["EVALUATION_ALREADY_INCONCLUSIVE"]


def test_two_runs_under_one_plan_cannot_interleave(run_cli: RunCli, harness: HarnessRepo) -> None:
    # The finality check spans candidate ids, commits and trees of one plan, so the lock
    # must too: with a per-candidate lock, two registrations of the same commit could run
    # at once, both see no recorded decision, and re-roll the evaluation in parallel.
    from plangate.evaluation.run.service import evaluation_lock_path
    from plangate.fsutil import exclusive_lock

    digest, commit = harness.candidate("first", {VERIFIER: GOOD_VERIFIER})
    twin, _ = harness.candidate("twin", {}, commit=commit)
    with exclusive_lock(evaluation_lock_path(harness.repo, harness.plan_digest)):
        for ref in (digest, twin):
            held = run_cli(harness.repo, "eval", "run", ref, "--json")
            assert held.code != 0
            assert "LOCK_HELD" in held.out + held.err
