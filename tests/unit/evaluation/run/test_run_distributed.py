"""What a cluster worker and the evaluator check of each other (no cluster needed: the
worker's task is a plain function, the evaluator's acceptance a pure reading)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plangate import __version__
from plangate.canonical import sha256_digest
from plangate.errors import PlanGateError
from plangate.evaluation.run.distributed import (
    EXECUTORS,
    RayExecutor,
    ShippedTrial,
    TrialReport,
    accept_report,
    choose_executor,
    run_shipped_trial,
)
from plangate.evaluation.run.protocol import CommandSpec, TrialSpec, TrialStatus
from plangate.isolation.trees import TreeMismatch, TreePack, pack_tree, unpack_tree

TRIAL_ID = "ab" * 16


def _spec(tmp: Path) -> TrialSpec:
    command = CommandSpec(("python3", "x.py"), str(tmp / "base"), 5.0, ())
    return TrialSpec("candidate", "known-bad-1", "known_bad", 1, command, command,
                     str(tmp / "cand"), str(tmp / "fx"), "sha256:" + "0" * 64, str(tmp / "w"))


def _result() -> bytes:
    return json.dumps({"protocol": "plangate-trial/2", "trial_id": TRIAL_ID,
                       "outcome": "BLOCKED", "stop_reasons": ["VERIFIER_UNAVAILABLE"],
                       "metrics": {}, "activation": {}, "detections": {}}).encode()


def _grade(judgement: str = "stopped", side: str = "candidate") -> bytes:
    return json.dumps({"protocol": "plangate-grade/1", "side": side, "fixture_id": "known-bad-1",
                       "role": "known_bad", "trial": 1, "judgement": judgement}).encode()


def _report(result: bytes | None = None, grade: bytes | None = None, **kw: object) -> TrialReport:
    result = _result() if result is None else result
    grade = _grade() if grade is None else grade
    fields: dict[str, object] = {
        "key": "candidate/known-bad-1/1", "status": "completed", "trial_id": TRIAL_ID,
        "result": result, "result_digest": sha256_digest(result), "grade": grade,
        "grade_digest": sha256_digest(grade), "error_code": "", "detail": "", "exit_code": 0,
        "duration_seconds": 0.1, "observed_fixture_digest": None, "agent": None,
        "plangate_version": __version__,
    }
    fields.update(kw)
    return TrialReport(**fields)  # type: ignore[arg-type]


def test_a_verified_report_is_parsed_by_the_evaluator(tmp_path: Path) -> None:
    outcome = accept_report(_spec(tmp_path), _report())
    assert outcome.completed and outcome.judgement == "stopped"
    assert outcome.report is not None and outcome.report.outcome == "BLOCKED"


def test_bytes_that_do_not_hash_to_what_the_worker_claims_are_refused(tmp_path: Path) -> None:
    swapped = _report(grade=_grade("passed"), grade_digest=sha256_digest(_grade("stopped")))
    outcome = accept_report(_spec(tmp_path), swapped)
    assert not outcome.completed and outcome.error_code == "TRIAL_RESULT_DIGEST_MISMATCH"


def test_the_workers_reading_is_never_the_judgement(tmp_path: Path) -> None:
    # A grade for another side, however the worker labels it, is not this trial's grade.
    outcome = accept_report(_spec(tmp_path), _report(grade=_grade(side="baseline")))
    assert outcome.judgement == "unavailable" and not outcome.completed
    # A result that does not echo the trial id the worker says it gave is refused.
    other = _report(trial_id="cd" * 16)
    assert accept_report(_spec(tmp_path), other).error_code == "TRIAL_RESULT_MISMATCH"
    # A completed status without documents is not a completed trial.
    empty = _report(result=b"", grade=b"")
    assert not accept_report(_spec(tmp_path), empty._replace(result=None)).completed


def test_a_report_for_another_trial_or_plangate_is_refused(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    assert accept_report(spec, _report(key="baseline/known-bad-1/1")).error_code == (
        "TRIAL_REPORT_INVALID")
    assert accept_report(spec, _report(status="passed")).error_code == "TRIAL_REPORT_INVALID"
    assert accept_report(spec, _report(plangate_version="0.0.1")).error_code == (
        "TRIAL_WORKER_VERSION")


def test_a_failed_trial_keeps_the_workers_code(tmp_path: Path) -> None:
    failed = _report(status=TrialStatus.TIMEOUT.value, error_code="TRIAL_RUNNER_TIMEOUT",
                     result=b"", grade=b"")
    outcome = accept_report(_spec(tmp_path), failed._replace(result=None, grade=None))
    assert outcome.status is TrialStatus.TIMEOUT and outcome.error_code == "TRIAL_RUNNER_TIMEOUT"


def test_a_tree_is_unpacked_only_when_it_hashes_to_its_digest(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "eval").mkdir(parents=True)
    (source / "eval" / "runner.py").write_text("print('ok')\n")
    pack = pack_tree(source)
    unpack_tree(pack, pack.digest, tmp_path / "good")
    assert (tmp_path / "good" / "eval" / "runner.py").read_text() == "print('ok')\n"
    tampered = TreePack(pack.digest, (("eval/runner.py", "100644", b"print('evil')\n"),))
    with pytest.raises(TreeMismatch):
        unpack_tree(tampered, pack.digest, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()
    escaping = (("../escape.py", "100644", b"x"),)
    from plangate.isolation.trees import tree_digest

    with pytest.raises(TreeMismatch):
        unpack_tree(TreePack(tree_digest(escaping), escaping), tree_digest(escaping),
                    tmp_path / "esc")
    through = (("a", "120000", str(tmp_path / "victim").encode()), ("a/x", "100644", b"x"))
    (tmp_path / "victim").mkdir()
    with pytest.raises(TreeMismatch):
        unpack_tree(TreePack(tree_digest(through), through), tree_digest(through),
                    tmp_path / "through")
    assert not (tmp_path / "victim" / "x").exists()


def test_the_worker_refuses_a_tree_that_does_not_hash_to_its_digest(tmp_path: Path) -> None:
    source = tmp_path / "base"
    source.mkdir()
    (source / "runner.py").write_text("print('ok')\n")
    pack = pack_tree(source)
    tampered = TreePack(pack.digest, (("runner.py", "100644", b"print('evil')\n"),))
    spec = _spec(tmp_path)
    shipped = ShippedTrial(spec, ((str(source), pack.digest),), b"{}")
    report = run_shipped_trial(shipped, tampered)
    assert report.status == "not_started" and report.error_code == "TRIAL_TREE_DIGEST_MISMATCH"
    assert not accept_report(spec, report).completed


def test_executors_are_one_table() -> None:
    assert [k.name for k in EXECUTORS] == ["local", "ray"]
    assert choose_executor("local", 2, None) is None
    chosen = RayExecutor("10.0.0.5:6379")
    assert chosen.runs_here is False and chosen.retries >= 1
    for text in ("k8s", "local:10.0.0.5", "rayx"):
        with pytest.raises(PlanGateError) as refused:
            choose_executor(text, 1, None)
        assert refused.value.code == "EVAL_EXECUTOR_UNKNOWN"


def test_without_ray_the_ray_executor_is_refused_with_a_hint(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['ray'] = None\n"
        "from plangate.cli.main import main\n"
        "sys.exit(main(['eval', 'run', 'sha256:' + '0' * 64, '--executor', 'ray']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "EVAL_EXECUTOR_UNAVAILABLE" in output and "plangate[ray]" in output, output
