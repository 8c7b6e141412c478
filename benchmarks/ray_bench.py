"""Trials that wait on a model: the Ray executor against the local pool, and the overhead
of a real-agent trial beyond the agent's own run.

``--part ray`` (needs the ray extra): the demo harness with a runner that waits
``--delay`` seconds before it answers (a trial waits on its model as a real agent
does), every trial run through

- the local pool with one job (:class:`LocalPoolExecutor`),
- a Ray cluster on this machine with one worker process (``num_cpus=1``),
- the same with two worker processes (``num_cpus=2``),

and reports trials per second, the speed-up of two workers over one, and the
per-trial time of Ray over the local pool (ratios measured in the same run).

``--part agent`` (needs the pinned hosts: ``PLANGATE_HOSTS_BIN``): one Claude Code
trial against the scripted model of the journey tier that answers after ``--delay``
seconds; reports the whole trial's time, the host's own run in its box, and the
difference (what PlanGate adds: the version check, the workspace, the proxy, the
grader's checks).

Usage: python3 benchmarks/ray_bench.py [--part ray|agent] [--delay S] [--trials N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from plangate.cli.demo.harness import materialise, render_plan
from plangate.cli.demo.improvement import ENFORCING_VERIFIER, VERIFIER_PATH
from plangate.evaluation.harness.service import build_manifest
from plangate.evaluation.registry.store import register_plan
from plangate.evaluation.run.service import build_trials
from plangate.evaluation.run.trials import LocalPoolExecutor, TrialBox
from plangate.git import Git, scrubbed_env
from plangate.ledger import open_ledger


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=scrubbed_env(), capture_output=True, check=True
    )
    return proc.stdout.decode().strip()


def _setup(root: Path, trials: int, delay: float) -> tuple[dict[str, object], Path, Path]:
    repo = root / "repo"
    materialise(repo)
    runner = repo / "eval" / "runner.py"
    text = runner.read_text()
    runner.write_text(text.replace("def main() -> None:\n",
                                   "def main() -> None:\n    import time\n"
                                   f"    time.sleep({delay})\n", 1))
    _git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.invalid"),
                       ("commit.gpgsign", "false")):
        _git(repo, "config", key, value)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "baseline")
    baseline = _git(repo, "rev-parse", "HEAD")
    (repo / VERIFIER_PATH).write_text(ENFORCING_VERIFIER)
    _git(repo, "commit", "-q", "-am", "candidate")
    candidate = _git(repo, "rev-parse", "HEAD")
    git = Git(repo)
    text = render_plan(baseline, build_manifest(git, baseline).harness_id)
    text = text.replace("trials: 2\n", f"trials: {trials}\n")
    if trials == 1:
        text += 'trials_reason: "benchmark"\n'
    with open_ledger(repo, {}) as ledger:
        plan = dict(register_plan(git, ledger, text.encode(), "plan.yaml").plan)
    base_dir, cand_dir = root / "baseline", root / "candidate"
    from plangate.isolation.trees import extract_commit

    extract_commit(repo, baseline, base_dir)
    extract_commit(repo, candidate, cand_dir)
    return plan, base_dir, cand_dir


def _timed(executor: object, plan: dict[str, object], base: Path, cand: Path,
           work: Path) -> tuple[float, int]:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    specs = build_trials(plan, base, cand, work)
    started = time.perf_counter()
    outcomes = executor.run(specs)  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - started
    failed = [f"{o.key} {o.error_code} {o.detail[:100]}" for o in outcomes if not o.completed]
    if failed:
        raise SystemExit(f"benchmark trials failed: {failed[:3]}")
    return elapsed, len(specs)


def ray_part(args: argparse.Namespace) -> dict[str, object]:
    """Local pool (1 job) against Ray with one and two worker processes."""
    import ray

    from plangate.evaluation.run.distributed import RayExecutor

    root = Path(tempfile.mkdtemp(prefix="plangate-ray-bench-"))
    try:
        plan, base, cand = _setup(root, args.trials, args.delay)
        local, total = _timed(LocalPoolExecutor(1, box=TrialBox.here()), plan, base, cand,
                              root / "work")
        timings = {}
        for cpus in (1, 2):
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
            try:
                _timed(RayExecutor(), plan, base, cand, root / "work")  # warm the workers
                timings[cpus], _ = _timed(RayExecutor(), plan, base, cand, root / "work")
            finally:
                ray.shutdown()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "trials_per_run": total,
        "model_delay_seconds": args.delay,
        "local_1_job_trials_per_second": round(total / local, 2),
        "ray_1_worker_trials_per_second": round(total / timings[1], 2),
        "ray_2_workers_trials_per_second": round(total / timings[2], 2),
        "ray_speedup_2_vs_1": round(timings[1] / timings[2], 2),
        "ray_per_trial_vs_local": round(timings[1] / local, 2),
        "local_seconds_per_trial": round(local / total, 3),
        "ray_seconds_per_trial": round(timings[1] / total, 3),
    }


def agent_part(args: argparse.Namespace) -> dict[str, object]:
    """One Claude Code trial: its whole time against the host's own run in its box."""
    from plangate.evaluation.run import trials
    from support.agent_eval import BETTER_RULES, FIXTURES, KEY_ENV
    from support.model_server import ModelServer, harness_worker

    hosts = os.environ.get("PLANGATE_HOSTS_BIN", "")
    if not hosts:
        raise SystemExit("set PLANGATE_HOSTS_BIN to the pinned hosts' bin directory")
    os.environ["PATH"] = f"{hosts}:{os.environ['PATH']}"
    os.environ[KEY_ENV] = "sk-benchmark"
    host_runs: list[float] = []
    original = trials.run_in_box

    def timed_box(*a: object, **kw: object) -> object:
        started = time.perf_counter()
        try:
            return original(*a, **kw)  # type: ignore[arg-type]
        finally:
            if kw.get("capture") and any("claude" in str(x) for x in a[2]):  # type: ignore[union-attr]
                host_runs.append(time.perf_counter() - started)

    trials.run_in_box = timed_box  # type: ignore[assignment]

    def slow_worker(body: dict[str, object]) -> object:
        time.sleep(args.delay)
        return harness_worker(body)  # type: ignore[arg-type]

    box = TrialBox.here()
    wholes: list[float] = []
    with ModelServer(then=slow_worker) as model:  # type: ignore[arg-type]
        for _ in range(args.trials):
            work = Path(tempfile.mkdtemp(prefix="plangate-agent-bench-"))
            try:
                harness = work / "harness"
                harness.mkdir()
                (harness / "CLAUDE.md").write_text(BETTER_RULES)
                fixture = work / "fixture.json"
                fixture.write_text(FIXTURES["eval/fixtures/known-bad.json"])
                from plangate.canonical import sha256_digest
                from plangate.evaluation.run.protocol import CommandSpec, TrialSpec

                runner = CommandSpec((), str(harness), 120.0, (), "claude", (
                    ("api_key_env", KEY_ENV), ("endpoint", model.base_url), ("prompt_files", ())))
                grader = CommandSpec((), str(harness), 60.0, (), "fixture-checks", ())
                spec = TrialSpec("candidate", "known-bad-1", "known_bad", 1, runner, grader,
                                 str(harness), str(fixture),
                                 sha256_digest(fixture.read_bytes()), str(work / "t"))
                started = time.perf_counter()
                outcome = trials.execute_trial(spec, box)
                wholes.append(time.perf_counter() - started)
                if not outcome.completed:
                    raise SystemExit(f"agent trial failed: {outcome.error_code} {outcome.detail}")
            finally:
                shutil.rmtree(work, ignore_errors=True)
    whole, host = sorted(wholes)[len(wholes) // 2], sorted(host_runs)[len(host_runs) // 2]
    return {
        "model_delay_seconds": args.delay,
        "trials": args.trials,
        "trial_seconds_median": round(whole, 3),
        "host_run_seconds_median": round(host, 3),
        "overhead_seconds": round(whole - host, 3),
    }


def main() -> None:
    """Print the figures of one part as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("ray", "agent"), default="ray")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the model waits")
    parser.add_argument("--trials", type=int, default=1, help="trials per fixture and side "
                        "(ray) or agent trials (agent)")
    args = parser.parse_args()
    from plangate.evaluation.run.distributed import ray_available

    if args.part == "ray" and ray_available() is not None:
        print(f"ray_bench: skipped ({ray_available()}; pip install 'plangate[ray]')")
        return
    print(json.dumps(ray_part(args) if args.part == "ray" else agent_part(args), indent=2))


if __name__ == "__main__":
    main()
