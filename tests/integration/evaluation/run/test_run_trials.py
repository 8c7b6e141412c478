"""One trial end to end with tiny runner/grader scripts: every failure is a recorded trial."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from plangate.canonical import sha256_digest
from plangate.evaluation.run.protocol import CommandSpec, TrialSpec, TrialStatus
from plangate.evaluation.run.trials import LocalPoolExecutor, ProgressLine, execute_trial
from support.cli import RunCli
from support.evalrun import GOOD_VERIFIER, build_harness_repo

RUNNER = """
import argparse, json, pathlib, sys, time
p = argparse.ArgumentParser()
for n in ("--trial-id", "--harness-dir", "--fixture", "--out"):
    p.add_argument(n, required=True)
a = p.parse_args()
mode = pathlib.Path(a.harness_dir, "mode").read_text().strip()
if mode == "crash":
    sys.exit(3)
if mode == "sleep":
    time.sleep(30)
if mode == "tamper":
    pathlib.Path(a.harness_dir, "..", "fixture.json").write_text("changed")
doc = {"protocol": "plangate-trial/2", "trial_id": a.trial_id,
       "outcome": "MERGE_READY", "stop_reasons": [],
       "metrics": {}, "activation": {}, "detections": {}}
if mode == "malformed":
    doc["surprise"] = True
if mode != "silent":
    pathlib.Path(a.out, "result.json").write_text(json.dumps(doc))
"""

GRADER = """
import argparse, json, pathlib
p = argparse.ArgumentParser()
for n in ("--side", "--fixture", "--fixture-id", "--role", "--result", "--out"):
    p.add_argument(n, required=True)
p.add_argument("--trial", type=int, required=True)
a = p.parse_args()
result = json.loads(pathlib.Path(a.result).read_text())
judgement = "passed" if result["outcome"] == "MERGE_READY" else "stopped"
if pathlib.Path(a.fixture).read_text().strip() == "ungradable":
    judgement = "unavailable"
pathlib.Path(a.out, "grade.json").write_text(json.dumps({
    "protocol": "plangate-grade/1", "side": a.side, "fixture_id": a.fixture_id,
    "role": a.role, "trial": a.trial, "judgement": judgement}))
"""


def make_spec(
    tmp: Path,
    mode: str,
    *,
    fixture_text: str = "fixture",
    pin: str | None = None,
    timeout: float = 20.0,
    name: str = "t",
) -> TrialSpec:
    base = tmp / "baseline"
    base.mkdir(exist_ok=True)
    (base / "runner.py").write_text(RUNNER)
    (base / "grader.py").write_text(GRADER)
    harness = tmp / "harness"
    harness.mkdir(exist_ok=True)
    (harness / "mode").write_text(mode)
    fixture = tmp / "fixture.json"
    fixture.write_text(fixture_text)
    runner = CommandSpec(
        (sys.executable, "runner.py"),
        str(base),
        timeout,
        ((str(base / "runner.py"), sha256_digest(RUNNER.encode())),),
    )
    grader = CommandSpec((sys.executable, "grader.py"), str(base), timeout, ())
    return TrialSpec(
        side="candidate",
        fixture_id="kb",
        role="known_bad",
        trial=1,
        runner=runner,
        grader=grader,
        harness_dir=str(harness),
        fixture_source=str(fixture),
        fixture_digest=pin or sha256_digest(fixture_text.encode()),
        work_dir=str(tmp / name),
    )


def test_a_good_trial_completes_with_the_graders_judgement(tmp_path: Path) -> None:
    outcome = execute_trial(make_spec(tmp_path, "ok"))
    assert outcome.completed, outcome
    assert outcome.judgement == "passed"
    assert outcome.report is not None and outcome.report.outcome == "MERGE_READY"


@pytest.mark.parametrize(
    ("mode", "status", "code"),
    [
        ("crash", TrialStatus.CRASHED, "TRIAL_RUNNER_CRASHED"),
        ("silent", TrialStatus.MALFORMED, "TRIAL_RESULT_MISSING"),
        ("malformed", TrialStatus.MALFORMED, "TRIAL_RESULT_UNKNOWN_KEY"),
    ],
)
def test_runner_failures_are_failed_trials(
    tmp_path: Path, mode: str, status: TrialStatus, code: str
) -> None:
    outcome = execute_trial(make_spec(tmp_path, mode))
    assert not outcome.completed
    assert outcome.status is status
    assert outcome.error_code == code
    assert outcome.to_json()["error_code"] == code


def test_timeout_is_a_failed_trial(tmp_path: Path) -> None:
    outcome = execute_trial(make_spec(tmp_path, "sleep", timeout=0.5))
    assert outcome.status is TrialStatus.TIMEOUT
    assert outcome.error_code == "TRIAL_RUNNER_TIMEOUT"


def test_fixture_digest_is_rechecked_just_before_use(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, "ok", pin=sha256_digest(b"what was registered"))
    outcome = execute_trial(spec)
    assert outcome.status is TrialStatus.FIXTURE_MISMATCH
    assert outcome.error_code == "SEALED_FIXTURE_MUTATION"
    assert not (tmp_path / "t" / "out" / "result.json").exists()  # the runner never started


def test_missing_fixture_is_a_mutation(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, "ok")
    Path(spec.fixture_source).unlink()
    assert execute_trial(spec).error_code == "SEALED_FIXTURE_MUTATION"


def test_runner_file_changed_after_registration_is_detected(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, "ok")
    (tmp_path / "baseline" / "runner.py").write_text(RUNNER + "\n# lenient now\n")
    outcome = execute_trial(spec)
    assert outcome.error_code == "EVAL_HARNESS_FILE_MUTATION"


def test_runner_gets_a_private_copy_of_the_checked_bytes(tmp_path: Path) -> None:
    # The runner "tampers" with the original; the next trial sees the change.
    first = execute_trial(make_spec(tmp_path, "tamper", name="t1"))
    assert first.completed
    second_spec = make_spec(tmp_path, "ok", name="t2", pin=first.observed_fixture_digest)
    (tmp_path / "fixture.json").write_text("changed")
    assert execute_trial(second_spec).error_code == "SEALED_FIXTURE_MUTATION"


def test_grader_unavailable_is_recorded(tmp_path: Path) -> None:
    outcome = execute_trial(make_spec(tmp_path, "ok", fixture_text="ungradable"))
    assert outcome.status is TrialStatus.COMPLETED
    assert not outcome.completed
    assert outcome.error_code == "EVAL_GRADER_UNAVAILABLE"


def test_pool_keeps_order_and_reports_progress(tmp_path: Path) -> None:
    specs = []
    for index, mode in enumerate(["ok", "crash", "ok", "silent"]):
        sub = tmp_path / f"s{index}"
        sub.mkdir()
        specs.append(make_spec(sub, mode))
    seen: list[tuple[int, int]] = []
    outcomes = LocalPoolExecutor(2, lambda done, total, _o: seen.append((done, total))).run(specs)
    assert [o.status for o in outcomes] == [
        TrialStatus.COMPLETED,
        TrialStatus.CRASHED,
        TrialStatus.COMPLETED,
        TrialStatus.MALFORMED,
    ]
    assert sorted(seen) == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_executor_exception_becomes_a_failed_trial(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, "ok")
    broken = TrialSpec(**{**spec.__dict__, "work_dir": "\x00bad"})
    [outcome] = LocalPoolExecutor(1).run([broken])
    assert not outcome.completed
    assert outcome.error_code in ("TRIAL_EXECUTOR_ERROR", "TRIAL_WORKDIR_UNAVAILABLE")


def test_progress_line_only_for_long_runs(tmp_path: Path) -> None:
    import io

    outcome = execute_trial(make_spec(tmp_path, "ok"))
    short, long_ = io.StringIO(), io.StringIO()
    ProgressLine(short, min_total=8)(1, 2, outcome)
    ProgressLine(long_, min_total=8)(8, 8, outcome)
    assert short.getvalue() == ""
    assert "trials 8/8" in long_.getvalue()
    json.dumps(outcome.to_json())  # the record form is JSON


# -- attacks by the code under test ------------------------------


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


HONEST_GRADER = """
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


SWAPPING_RUNNER = """
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
    (base / "runner.py").write_text(SWAPPING_RUNNER)
    (base / "grader.py").write_text(HONEST_GRADER)
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
            ((str(base / "runner.py"), sha256_digest(SWAPPING_RUNNER.encode())),),
        ),
        grader=CommandSpec(
            (sys.executable, "grader.py"),
            str(base),
            20.0,
            ((str(base / "grader.py"), sha256_digest(HONEST_GRADER.encode())),),
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
        SWAPPING_RUNNER.replace(
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
    (base / "grader.py").write_text(HONEST_GRADER)
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
