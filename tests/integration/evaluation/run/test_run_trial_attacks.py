"""Adversarial review of one trial: harness code under test runs with the evaluator's rights.

The runner executes the candidate's harness; that code can reach the baseline worktree
(its sibling directory) while the trial runs. The judge must still be the pinned one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from plangate.canonical import sha256_digest
from plangate.evaluation.run.protocol import CommandSpec, TrialSpec, TrialStatus
from plangate.evaluation.run.trials import execute_trial
from support.cli import RunCli
from support.evalrun import GOOD_VERIFIER, build_harness_repo

VERIFIER = "harness/verifiers/completion_evidence.py"

# Candidate verifier code that plants a file the baseline's .gitignore hides.
PLANTING_VERIFIER = (
    GOOD_VERIFIER
    + """

import pathlib as _p
_here = _p.Path(__file__).resolve()
_cache = _here.parents[3] / "baseline" / "eval" / "__pycache__"
if _cache.parent.exists() and "candidate" in str(_here):
    _cache.mkdir(exist_ok=True)
    (_cache / "helpers.cpython-311.pyc").write_bytes(b"forged bytecode")
"""
)

GRADER = """
import argparse, json, pathlib
p = argparse.ArgumentParser()
for n in ("--side", "--fixture", "--fixture-id", "--role", "--result", "--out"):
    p.add_argument(n, required=True)
p.add_argument("--trial", type=int, required=True)
a = p.parse_args()
result = json.loads(pathlib.Path(a.result).read_text())
judgement = "passed" if result["outcome"] == "MERGE_READY" else "stopped"
pathlib.Path(a.out, "grade.json").write_text(json.dumps({
    "protocol": "plangate-grade/1", "side": a.side, "fixture_id": a.fixture_id,
    "role": a.role, "trial": a.trial, "judgement": judgement}))
"""

# The candidate's code (run by the runner) swaps the baseline grader for one that
# always says "stopped" and puts the original bytes back after judging, so the
# baseline worktree looks untouched once the trials are over.
FORGED_GRADER = """
import argparse, json, pathlib
p = argparse.ArgumentParser()
for n in ("--side", "--fixture", "--fixture-id", "--role", "--result", "--out"):
    p.add_argument(n, required=True)
p.add_argument("--trial", type=int, required=True)
a = p.parse_args()
pathlib.Path(a.out, "grade.json").write_text(json.dumps({
    "protocol": "plangate-grade/1", "side": a.side, "fixture_id": a.fixture_id,
    "role": a.role, "trial": a.trial, "judgement": "stopped"}))
pathlib.Path(__file__).write_text(ORIGINAL)
"""

RUNNER = """
import argparse, json, pathlib
p = argparse.ArgumentParser()
for n in ("--trial-id", "--harness-dir", "--fixture", "--out"):
    p.add_argument(n, required=True)
a = p.parse_args()
grader = pathlib.Path(__file__).with_name("grader.py")
original = grader.read_text()
forged = pathlib.Path(a.harness_dir, "forged.py").read_text()
grader.write_text("ORIGINAL = " + repr(original) + "\\n" + forged)
pathlib.Path(a.out, "result.json").write_text(json.dumps({
    "protocol": "plangate-trial/2", "trial_id": a.trial_id,
    "outcome": "MERGE_READY", "stop_reasons": [],
    "metrics": {}, "activation": {}, "detections": {}}))
"""


def test_grader_swapped_during_the_runner_is_caught_before_it_judges(tmp_path: Path) -> None:
    base = tmp_path / "baseline"
    base.mkdir()
    (base / "runner.py").write_text(RUNNER)
    (base / "grader.py").write_text(GRADER)
    harness = tmp_path / "candidate"
    harness.mkdir()
    (harness / "forged.py").write_text(FORGED_GRADER)
    fixture = tmp_path / "fixture.json"
    fixture.write_text("{}")
    spec = TrialSpec(
        side="candidate",
        fixture_id="kb",
        role="known_bad",
        trial=1,
        runner=CommandSpec(
            (sys.executable, "runner.py"),
            str(base),
            20.0,
            ((str(base / "runner.py"), sha256_digest(RUNNER.encode())),),
        ),
        grader=CommandSpec(
            (sys.executable, "grader.py"),
            str(base),
            20.0,
            ((str(base / "grader.py"), sha256_digest(GRADER.encode())),),
        ),
        harness_dir=str(harness),
        fixture_source=str(fixture),
        fixture_digest=sha256_digest(b"{}"),
        work_dir=str(tmp_path / "t"),
    )

    outcome = execute_trial(spec)

    assert not outcome.completed, outcome
    assert outcome.judgement != "stopped"
    assert outcome.status is TrialStatus.FIXTURE_MISMATCH
    assert outcome.error_code == "EVAL_HARNESS_FILE_MUTATION"


def test_fixture_copy_rewritten_during_the_runner_is_caught_before_grading(
    tmp_path: Path,
) -> None:
    # The private fixture copy handed to the grader must still be the checked bytes.
    runner = (
        RUNNER.replace(
            'grader = pathlib.Path(__file__).with_name("grader.py")',
            'fx = pathlib.Path(a.fixture); fx.chmod(0o644); fx.write_text("forged")\n'
            'grader = pathlib.Path(a.harness_dir, "unused.py")',
        )
        .replace("original = grader.read_text()", "original = ''")
        .replace('grader.write_text("ORIGINAL = " + repr(original) + "\\n" + forged)', "del forged")
    )
    base = tmp_path / "baseline"
    base.mkdir()
    (base / "runner.py").write_text(runner)
    (base / "grader.py").write_text(GRADER)
    harness = tmp_path / "candidate"
    harness.mkdir()
    (harness / "forged.py").write_text("")
    fixture = tmp_path / "fixture.json"
    fixture.write_text("{}")
    spec = TrialSpec(
        side="candidate",
        fixture_id="kb",
        role="known_bad",
        trial=1,
        runner=CommandSpec((sys.executable, "runner.py"), str(base), 20.0, ()),
        grader=CommandSpec((sys.executable, "grader.py"), str(base), 20.0, ()),
        harness_dir=str(harness),
        fixture_source=str(fixture),
        fixture_digest=sha256_digest(b"{}"),
        work_dir=str(tmp_path / "t"),
    )

    outcome = execute_trial(spec)

    assert not outcome.completed, outcome
    assert outcome.error_code == "SEALED_FIXTURE_MUTATION"


def test_ignored_file_planted_in_the_baseline_worktree_is_refused_by_the_box(
    run_cli: RunCli, tmp_path: Path
) -> None:
    # The baseline's .gitignore hides `__pycache__/`, and `git status` does not list ignored
    # files: a forged bytecode cache for a module the baseline's grader imports would be
    # used by Python. In a box the baseline tree is read-only: the plant fails, the trials
    # crash, and nothing appears in the baseline tree.
    harness = build_harness_repo(tmp_path)
    digest, commit = harness.candidate("plant", {VERIFIER: PLANTING_VERIFIER})
    review = harness.review("candidate:plant:v1", commit)
    assert run_cli(harness.repo, "eval", "review", "add", digest, str(review)).code == 0

    result = run_cli(harness.repo, "eval", "run", digest, "--json")
    body = json.loads(result.out)

    assert result.code == 4, body["reasons"]
    assert body["verdict"] == "INCONCLUSIVE"
    codes = [r["code"] for r in body["reasons"]]
    assert "TRIALS_INCOMPLETE" in codes
    assert "BASELINE_WORKTREE_MODIFIED" not in codes
