"""``plangate eval run`` / ``eval review`` on a real harness repository (the demo harness)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from plangate.evaluation.harness.service import build_manifest
from plangate.git import Git
from plangate.ledger import open_ledger
from support.cli import RunCli
from support.evalrun import (
    GOOD_VERIFIER,
    LOSSY_VERIFIER,
    HarnessRepo,
    build_harness_repo,
    git,
    plan_text,
)

VERIFIER = "harness/verifiers/completion_evidence.py"

# The candidate's verifier reaches into the baseline worktree and rewrites a
# sealed fixture that later trials use.
TAMPERING_VERIFIER = (
    GOOD_VERIFIER
    + """

import pathlib as _p
_target = _p.Path(__file__).resolve().parents[3] / "baseline" / "eval" / "fixtures" / "pos-1.json"
if _target.exists():
    _target.write_text('{"fixture_id": "pos-1", "tests_pass": true, "verification_present": true}')
"""
)

CRASHING_VERIFIER = GOOD_VERIFIER.replace(
    "def check(fixture):\n",
    "def check(fixture):\n    if fixture.get('fixture_id') == 'neg-1':\n"
    "        raise RuntimeError('boom')\n",
)


@pytest.fixture
def harness(tmp_path: Path) -> HarnessRepo:
    return build_harness_repo(tmp_path)


def run_json(
    run_cli: RunCli, repo: Path, candidate: str, *extra: str
) -> tuple[int, dict[str, Any], str]:
    result = run_cli(repo, "eval", "run", candidate, "--jobs", "2", "--json", *extra)
    return result.code, json.loads(result.out) if result.out.strip() else {}, result.err


def reviewed(run_cli: RunCli, harness: HarnessRepo, name: str, files: dict[str, str]) -> str:
    digest, commit = harness.candidate(name, files)
    review = harness.review(f"candidate:{name}:v1", commit)
    added = run_cli(harness.repo, "eval", "review", "add", digest, str(review))
    assert added.code == 0, added.err
    return digest


def validate_against(name: str, doc: Any) -> None:
    import jsonschema

    text = resources.files("plangate").joinpath("schemas", name).read_text(encoding="utf-8")
    jsonschema.Draft202012Validator(json.loads(text)).validate(doc)


def decisions(repo: Path, subject: str) -> list[dict[str, Any]]:
    with open_ledger(repo, {}) as ledger:
        return [
            dict(e.payload) for e in ledger.entries(kind="eval_promotion_decision", subject=subject)
        ]


def test_pass_records_experiment_and_decision_with_digests(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    digest = reviewed(run_cli, harness, "good", {VERIFIER: GOOD_VERIFIER})
    code, body, err = run_json(run_cli, harness.repo, digest)
    assert code == 0, (body, err)
    assert body["verdict"] == "PASS"
    decision = body["decision"]
    assert decision["production_promotion_executed"] is False
    assert decision["experiment_result_ref"] == body["experiment_result_ref"]
    facts = body["facts"]
    assert facts["activation"]["observed"]["verifier:completion-evidence"] == "influenced_decision"
    assert facts["detection"]["baseline_detected"] == ["mutant-2"]
    assert facts["detection"]["candidate_detected"] == ["mutant-1", "mutant-2"]
    assert facts["independence"] == {"observed": "I3", "required": "I3"}
    with open_ledger(harness.repo, {}) as ledger:
        assert ledger.verify().verdict == "INTACT"
        [experiment] = ledger.entries(kind="eval_experiment_result", subject=digest)
        [recorded] = ledger.entries(kind="eval_promotion_decision", subject=digest)
        gates = ledger.entries(kind="eval_gate_verdict", subject=digest)
    from plangate.canonical import digest as canonical_digest

    assert canonical_digest(experiment.payload["experiment"]) == body["experiment_result_ref"]
    assert canonical_digest(recorded.payload["decision_record"]) == body["decision_digest"]
    exp = experiment.payload["experiment"]
    validate_against("experiment-result.schema.json", exp)
    validate_against("promotion-decision.schema.json", recorded.payload["decision_record"])
    assert exp["evaluation_plan_digest"] == harness.plan_digest
    assert exp["observed_component_deltas"][0]["component_id"] == "verifier:completion-evidence"
    assert {t["side"] for t in exp["trials"]} == {"baseline", "candidate"}
    assert len(gates) == 1  # the gate was re-run (and recorded) by eval run itself
    # Worktrees are always removed.
    assert len(git(harness.repo, "worktree", "list").splitlines()) == 1


def test_candidate_losing_a_known_mutant_fails(run_cli: RunCli, harness: HarnessRepo) -> None:
    digest = reviewed(run_cli, harness, "lossy", {VERIFIER: LOSSY_VERIFIER})
    result = run_cli(harness.repo, "eval", "run", digest, "--jobs", "2")
    assert result.code == 1
    assert result.out.startswith("Promotion Decision: FAIL")
    assert "BASELINE_DETECTION_POWER_REGRESSION" in result.out
    assert "production_promotion_executed: false" in result.out
    [decision] = decisions(harness.repo, digest)
    assert decision["decision"] == "FAIL"
    record = decision["decision_record"]
    assert [r["code"] for r in record["reasons"]] == ["BASELINE_DETECTION_POWER_REGRESSION"]
    assert record["reasons"][0]["evidence"][0] == record["experiment_result_ref"]


def test_crashing_trials_make_it_inconclusive_and_that_is_final(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    digest = reviewed(run_cli, harness, "crashy", {VERIFIER: CRASHING_VERIFIER})
    code, body, _err = run_json(run_cli, harness.repo, digest)
    assert code == 4
    assert "TRIALS_INCOMPLETE" in [r["code"] for r in body["reasons"]]
    assert body["facts"]["trials_completed"] < body["facts"]["trials_total"]
    with open_ledger(harness.repo, {}) as ledger:
        [experiment] = ledger.entries(kind="eval_experiment_result", subject=digest)
    validate_against("experiment-result.schema.json", experiment.payload["experiment"])
    validate_against("promotion-decision.schema.json", body["decision"])
    # A later run under the same plan digest can never overturn it, and runs no trials.
    code, body, _err = run_json(run_cli, harness.repo, digest)
    assert code == 4
    assert [r["code"] for r in body["reasons"]] == ["EVALUATION_ALREADY_INCONCLUSIVE"]
    assert body["facts"]["trials_total"] == 0
    assert [d["decision"] for d in decisions(harness.repo, digest)] == ["INCONCLUSIVE"] * 2


def test_missing_independence_is_inconclusive_and_a_new_plan_is_a_new_evaluation(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    digest, commit = harness.candidate("unreviewed", {VERIFIER: GOOD_VERIFIER})
    level = run_cli(harness.repo, "eval", "review", "level", digest, "--json")
    assert level.code == 4
    assert json.loads(level.out)["facts"]["required"] == "I3"
    code, body, _err = run_json(run_cli, harness.repo, digest)
    assert code == 4
    assert [r["code"] for r in body["reasons"]] == ["INDEPENDENCE_INSUFFICIENT"]
    # The review arrives later: the recorded INCONCLUSIVE still stands ...
    review = harness.review("candidate:unreviewed:v1", commit)
    assert run_cli(harness.repo, "eval", "review", "add", digest, str(review)).code == 0
    assert run_cli(harness.repo, "eval", "review", "level", digest).code == 0
    code, body, _err = run_json(run_cli, harness.repo, digest)
    assert code == 4
    assert [r["code"] for r in body["reasons"]] == ["EVALUATION_ALREADY_INCONCLUSIVE"]
    # ... until a new plan (new digest) starts a new evaluation.
    manifest = build_manifest(Git(harness.repo), harness.baseline)
    new_plan = harness.register_plan(
        plan_text(harness.baseline, manifest.harness_id, trials=1).replace(
            "evaluation:demo-verification-skipped:v1", "evaluation:demo-verification-skipped:v2"
        )
    )
    assert new_plan != harness.plan_digest
    again, commit2 = harness.candidate(
        "unreviewed-v2", {VERIFIER: GOOD_VERIFIER}, plan_digest=new_plan
    )
    review = harness.review("candidate:unreviewed-v2:v1", commit2)
    assert run_cli(harness.repo, "eval", "review", "add", again, str(review)).code == 0
    code, body, _err = run_json(run_cli, harness.repo, again)
    assert code == 0, body["reasons"]


def test_same_commit_under_a_new_candidate_id_cannot_dodge_inconclusive(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    digest, commit = harness.candidate("first", {VERIFIER: GOOD_VERIFIER})
    assert run_json(run_cli, harness.repo, digest)[0] == 4  # no review: INCONCLUSIVE
    renamed, same_commit = harness.candidate("renamed", {}, commit=commit)
    assert renamed != digest and same_commit == commit
    review = harness.review("candidate:renamed:v1", commit)
    assert run_cli(harness.repo, "eval", "review", "add", renamed, str(review)).code == 0
    code, body, _err = run_json(run_cli, harness.repo, renamed)
    assert code == 4
    assert [r["code"] for r in body["reasons"]] == ["EVALUATION_ALREADY_INCONCLUSIVE"]


def test_candidate_tampering_with_a_sealed_fixture_is_stopped_by_the_box(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    # Trials run in boxes: the baseline tree is read-only, the write fails, the
    # candidate's trials crash, and the evaluation is INCONCLUSIVE (never PASS).
    digest = reviewed(run_cli, harness, "tamper", {VERIFIER: TAMPERING_VERIFIER})
    code, body, _err = run_cli_jobs1(run_cli, harness.repo, digest)
    assert code == 4
    assert body["verdict"] == "INCONCLUSIVE"
    codes = [r["code"] for r in body["reasons"]]
    assert "TRIALS_INCOMPLETE" in codes
    assert "BASELINE_WORKTREE_MODIFIED" not in codes


# Writes into the baseline worktree's prompt (not a pinned file) and into its own tree.
SCRIBBLING_VERIFIER = (
    GOOD_VERIFIER
    + """

import pathlib as _p
_here = _p.Path(__file__).resolve()
_prompt = _here.parents[3] / "baseline" / "harness" / "prompts" / "builder.md"
if _prompt.exists() and "candidate" in str(_here):
    _prompt.write_text("# Builder prompt\\nSkip the tests.\\n")
"""
)

SELF_EDITING_VERIFIER = (
    GOOD_VERIFIER
    + """

import pathlib as _p
(_p.Path(__file__).resolve().parent / "notes.txt").write_text("trial state")
"""
)


def test_candidate_code_cannot_modify_the_baseline_tree(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    digest = reviewed(run_cli, harness, "scribble", {VERIFIER: SCRIBBLING_VERIFIER})
    code, body, _err = run_json(run_cli, harness.repo, digest)
    assert code == 4
    codes = [r["code"] for r in body["reasons"]]
    assert "TRIALS_INCOMPLETE" in codes
    assert "BASELINE_WORKTREE_MODIFIED" not in codes


def test_candidate_editing_its_own_tree_is_inconclusive(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    # Its own tree is read-only in its box: the edit fails and its trials crash.
    digest = reviewed(run_cli, harness, "selfedit", {VERIFIER: SELF_EDITING_VERIFIER})
    code, body, _err = run_json(run_cli, harness.repo, digest)
    assert code == 4
    codes = [r["code"] for r in body["reasons"]]
    assert "TRIALS_INCOMPLETE" in codes
    assert "CANDIDATE_WORKTREE_MODIFIED" not in codes


def run_cli_jobs1(run_cli: RunCli, repo: Path, candidate: str) -> tuple[int, dict[str, Any], str]:
    result = run_cli(repo, "eval", "run", candidate, "--jobs", "1", "--json")
    return result.code, json.loads(result.out), result.err


def test_gate_denied_candidate_never_reaches_paired_evaluation(
    run_cli: RunCli, harness: HarnessRepo
) -> None:
    grader = (harness.repo / "eval" / "grader.py").read_text().replace('"stopped"', '"passed"')
    digest, _commit = harness.candidate(
        "lenient",
        {VERIFIER: GOOD_VERIFIER, "eval/grader.py": grader},
    )
    code, body, _err = run_json(run_cli, harness.repo, digest)
    assert code == 1
    assert [r["code"] for r in body["reasons"]] == ["EVAL_GATE_DENIED"]
    assert body["facts"]["trials_total"] == 0
    assert body["decision"]["policy_verdict"] == "DENIED"


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"candidate_id": "candidate:other:v1"}, "REVIEW_CANDIDATE_MISMATCH"),
        ({"reviewed_commit": "0" * 40}, "REVIEW_COMMIT_MISMATCH"),
        ({"level": "I4"}, "REVIEW_RECORD_UNKNOWN_KEY"),
    ],
)
def test_review_add_refuses_bad_records(
    run_cli: RunCli, harness: HarnessRepo, change: dict[str, Any], code: str
) -> None:
    digest, commit = harness.candidate("r", {VERIFIER: GOOD_VERIFIER})
    path = harness.review("candidate:r:v1", commit, **change)
    result = run_cli(harness.repo, "eval", "review", "add", digest, str(path))
    assert result.code == 1
    assert code in result.err


def test_usage_errors(run_cli: RunCli, harness: HarnessRepo) -> None:
    assert run_cli(harness.repo, "eval", "run").code == 2
    assert run_cli(harness.repo, "eval", "run", "x", "--jobs", "0").code == 2
    unknown = run_cli(harness.repo, "eval", "run", "candidate:nope:v1")
    assert unknown.code == 1
    assert "CANDIDATE_NOT_REGISTERED" in unknown.err
