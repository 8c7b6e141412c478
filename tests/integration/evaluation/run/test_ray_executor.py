"""``plangate eval run --executor ray:ADDRESS`` on a real cluster: a head and a worker node
started by ``ray start`` as separate processes on loopback (support.raycluster), one
cluster for the module, always stopped.

Each trial is a Ray task that runs in its own box on a node; the evaluator decides from
the reports it verified. A Ray worker killed in the middle of a trial loses that trial:
the evaluation is INCONCLUSIVE, never PASS.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.evaluation.run.distributed import RayExecutor
from plangate.evaluation.run.service import run_evaluation
from support.evalrun import GOOD_VERIFIER, HarnessRepo, build_harness_repo
from support.raycluster import Cluster, kill, ray_cluster, ray_worker_running

pytestmark = pytest.mark.ray

# A candidate verifier that hangs on the forged-evidence mutant (one trial of the run),
# after leaving a mark in its output directory where the test can see the trial started.
HANGING_VERIFIER = GOOD_VERIFIER.replace(
    "def check(fixture):\n",
    "def check(fixture):\n"
    "    if fixture.get('evidence_forged'):\n"
    "        import pathlib, sys, time\n"
    "        out = pathlib.Path(sys.argv[sys.argv.index('--out') + 1])\n"
    "        (out / 'started').write_text('1')\n"
    "        time.sleep(SECONDS)\n",
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with ray_cluster() as running, pytest.MonkeyPatch.context() as patch:
        for name, value in running.auth.items():  # this process drives the cluster too
            patch.setenv(name, value)
        yield running


def _candidate(harness: HarnessRepo, name: str, verifier: str) -> str:
    digest, commit = harness.candidate(
        name, {"harness/verifiers/completion_evidence.py": verifier}
    )
    review = harness.review(f"candidate:{name}:v1", commit)
    added = subprocess.run(["plangate", "eval", "review", "add", digest, str(review)],
                           cwd=harness.repo, capture_output=True, text=True, check=False)
    assert added.returncode == 0, added.stdout + added.stderr
    return digest


def test_trials_run_on_the_cluster_and_the_evaluator_decides(
    tmp_path: Path, cluster: Cluster
) -> None:
    harness = build_harness_repo(tmp_path)
    digest = _candidate(harness, "good", GOOD_VERIFIER)
    run = subprocess.run(
        ["plangate", "eval", "run", digest, "--executor", f"ray:{cluster.address}", "--json"],
        cwd=harness.repo, capture_output=True, text=True, check=False,
        env=os.environ | cluster.auth,
    )
    report = json.loads(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert report["decision"]["decision"] == "PASS"
    assert report["facts"]["trials_completed"] == report["facts"]["trials_total"] == 14


def _kill_once(cluster: Cluster, killed: list[int]) -> threading.Thread:
    """Kill the Ray worker of the first hanging trial that starts (in a thread)."""

    def kill_the_hanging_trial() -> None:
        # Wait (bounded) for the hanging trial to start on a node, then kill its Ray worker.
        for _ in range(6000):
            for trial in cluster.trial_dirs():
                marker = trial / "out" / "started"
                worker = ray_worker_running(marker) if marker.exists() else None
                if worker is not None:
                    kill(worker)
                    killed.append(worker)
                    return
            threading.Event().wait(0.05)

    watcher = threading.Thread(target=kill_the_hanging_trial, daemon=True)
    watcher.start()
    return watcher


def test_a_worker_killed_mid_trial_makes_the_evaluation_inconclusive(
    tmp_path: Path, cluster: Cluster
) -> None:
    harness = build_harness_repo(tmp_path)
    digest = _candidate(harness, "hangs", HANGING_VERIFIER.replace("SECONDS", "600"))
    killed: list[int] = []
    watcher = _kill_once(cluster, killed)
    outcome = run_evaluation(
        harness.repo, {}, digest, executor=RayExecutor(cluster.address, retries=0)
    )
    watcher.join(timeout=5)
    assert killed, "the hanging trial never started"
    assert outcome.result.verdict == "INCONCLUSIVE", outcome.result.to_json()
    assert "TRIALS_INCOMPLETE" in [r.code for r in outcome.result.reasons]
    lost = [t for t in outcome.experiment["trials"] if t.get("error_code") == "TRIAL_WORKER_LOST"]
    assert [(t["side"], t["fixture_id"]) for t in lost] == [("candidate", "mutant-2")], lost


def test_a_trial_whose_worker_was_killed_is_run_again(tmp_path: Path, cluster: Cluster) -> None:
    harness = build_harness_repo(tmp_path)
    digest = _candidate(harness, "pauses", HANGING_VERIFIER.replace("SECONDS", "5"))
    killed: list[int] = []
    watcher = _kill_once(cluster, killed)
    outcome = run_evaluation(
        harness.repo, {}, digest, executor=RayExecutor(cluster.address, retries=1)
    )
    watcher.join(timeout=5)
    assert killed, "the pausing trial never started"
    # Ray ran the lost trial again on a live worker; the evaluator judged its report.
    assert outcome.result.verdict == "PASS", outcome.result.to_json()
    assert all(t["status"] == "completed" for t in outcome.experiment["trials"])
