"""``eval run`` trial throughput: trials per second with 1 and 2 jobs, and the speed-up.

Builds the bundled demo harness in a temporary git repository, registers a plan
with ``--trials`` trials per fixture and side, materialises baseline and
candidate worktrees, and runs every trial (runner + grader, two processes each)
through :class:`plangate.evaluation.run.trials.LocalPoolExecutor` with ``jobs=1`` and
``jobs=2``, interleaved over ``--rounds`` rounds. Reports medians and the ratio
measured in the same run (no absolute goal: machines differ).

Usage: python3 benchmarks/eval_bench.py [--trials N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from plangate.cli.demo.harness import materialise
from plangate.cli.demo.improvement import ENFORCING_VERIFIER, VERIFIER_PATH
from plangate.evaluation.harness.service import build_manifest
from plangate.evaluation.registry.store import register_plan
from plangate.evaluation.run.service import build_trials
from plangate.evaluation.run.trials import LocalPoolExecutor
from plangate.git import Git, scrubbed_env
from plangate.ledger import open_ledger


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=scrubbed_env(), capture_output=True, check=True
    )
    return proc.stdout.decode().strip()


def _setup(root: Path, trials: int) -> tuple[dict[str, object], Path, Path]:
    from plangate.cli.demo.harness import render_plan

    repo = root / "repo"
    materialise(repo)
    _git(repo, "init", "-q", "-b", "main")
    for key, value in (
        ("user.name", "Bench"),
        ("user.email", "bench@example.invalid"),
        ("commit.gpgsign", "false"),
    ):
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
    git.add_worktree(base_dir, baseline)
    git.add_worktree(cand_dir, candidate)
    return plan, base_dir, cand_dir


def _measure(plan: dict[str, object], base: Path, cand: Path, work: Path, jobs: int) -> float:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    specs = build_trials(plan, base, cand, work)
    started = time.perf_counter()
    outcomes = LocalPoolExecutor(jobs).run(specs)
    elapsed = time.perf_counter() - started
    failed = [o.key for o in outcomes if not o.completed]
    if failed:
        raise SystemExit(f"benchmark trials failed: {failed[:3]}")
    return len(specs) / elapsed


def main() -> None:
    """Print trials/s for 1 and 2 jobs and the speed-up, as JSON and as a line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="trials per fixture and side")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="plangate-eval-bench-"))
    try:
        plan, base, cand = _setup(root, args.trials)
        rates: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.rounds):
            for jobs in (1, 2):
                rates[jobs].append(_measure(plan, base, cand, root / "work", jobs))
        one, two = statistics.median(rates[1]), statistics.median(rates[2])
        total = len(plan["fixtures"]) * args.trials * 2  # type: ignore[arg-type]
        report = {
            "trials_per_run": total,
            "processes_per_trial": 2,
            "trials_per_second_jobs1": round(one, 2),
            "trials_per_second_jobs2": round(two, 2),
            "speedup_2_vs_1": round(two / one, 2),
            "rounds": args.rounds,
        }
        print(json.dumps(report, indent=2))
        print(
            f"eval run: {one:.1f} trials/s with 1 job, {two:.1f} with 2 jobs "
            f"(speed-up x{two / one:.2f}, {total} trials per run)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
