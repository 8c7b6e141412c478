"""Hook latency: ``python -m plangate.hooks claude`` against a bare JSON-reading process.

``python -m plangate.hooks claude`` is the command ``plangate hooks install``
writes (``plangate hook claude`` gives the same bytes through the full CLI).

Both sides are separate processes started with the interpreter binary itself
(``_bench_common.real_python``: a version-manager shim would add tens of
milliseconds to both and hide the difference), fed the same payload, measured
in the same run, interleaved call by call so that machine noise hits both
alike. The baseline is ``python3 -c "import json,sys; json.load(sys.stdin)"``.

Scenarios (each a full decision, recorded in the ledger):

- ``task-write``: an active task (``PLANGATE_TASK``) whose c3-prime record
  verifies against HEAD; an in-scope ``Write`` (allowed);
- ``task-bash``: the same task; ``Bash`` ``echo x >> src/app.py`` (allowed);
- ``no-task-protected``: no task; a ``Write`` to ``CLAUDE.md`` (denied).

Usage: ``python3 benchmarks/hook_bench.py [--calls 200] [--json]``. Prints the
median and 95th percentile of each side and their ratios, and the load average
before and after the run (the ratios are only comparable at similar load).
The package is byte-compiled first (``_bench_common.precompile`` through
``bench_env``), as ``pip install`` does, so the run measures plangate and not
the compiler (this environment sets PYTHONDONTWRITEBYTECODE=1).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_common import REPO_ROOT, bench_env, real_python

sys.path.insert(0, str(REPO_ROOT / "src"))

PLAN_MD = """# Plan

## Goal
Add a greeting function to the app.

## Files / Components to Touch
- `src/app.py`
- `tests/test_app.py`

## Testing Strategy
Unit tests for the greeting.

Verification Automation: `python -m pytest -q`
"""


def _git(repo: Path, *args: str) -> str:
    from plangate.git import scrubbed_env

    env = scrubbed_env() | {
        "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True,
                          capture_output=True).stdout.decode().strip()


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def build_repo(base: Path) -> Path:
    """A repository with TASK-0001 approved (AUTO_APPROVED c3-prime record) at HEAD."""
    from plangate.approval.record import ReviewerEvidence
    from plangate.approval.service import IssueRequest, issue_record

    repo = base / "repo"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    task = repo / "docs" / "working" / "TASK-0001"
    task.mkdir(parents=True)
    (task / "pbi-input.md").write_text("# PBI\n\nWhy: users need a greeting.\n")
    (task / "plan.md").write_text(PLAN_MD)
    (task / "todo.md").write_text("- [ ] write greet()\n")
    (task / "test-cases.md").write_text("| AC | test |\n|---|---|\n| AC-1 | test_greet |\n")
    plan_hash = _sha(PLAN_MD.encode())
    (task / "review-self.md").write_text(f"# Self review\n\nC1-VERDICT: PASS plan={plan_hash}\n")
    (task / "review-external.md").write_text(
        f"# External review\n\nC2-VERDICT: approve plan={plan_hash}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "plan")
    head = _git(repo, "rev-parse", "HEAD")
    result = issue_record(repo, IssueRequest(
        task_id="TASK-0001", target_sha=head,
        reviewers={"model_a": ReviewerEvidence("approve", "reviews/a.md"),
                   "model_b": ReviewerEvidence("approve", "reviews/b.md")},
        decision="AUTO_APPROVED", policy_ref="plangate-arbiter@v1",
        issued_at="2026-12-01T09:00:00Z", issued_by="bench"), {})
    if result.verdict != "ACCEPTED":
        raise SystemExit(f"could not approve the bench task: {result.to_json()}")
    return repo


def _payload(repo: Path, tool: str, tool_input: dict[str, str]) -> bytes:
    return json.dumps({"session_id": "bench", "cwd": str(repo), "hook_event_name": "PreToolUse",
                       "tool_name": tool, "tool_input": tool_input}).encode()


def _time(
    argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path
) -> tuple[float, float, int]:
    """Wall time, CPU time (user + system of the child) and exit code of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 2):
        sys.stderr.write(proc.stderr.decode("utf-8", "replace"))
    _LAST_STDERR[0] = proc.stderr.decode("utf-8", "replace")
    return wall, cpu, proc.returncode


_LAST_STDERR = [""]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    """Run the benchmark and print ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    python = real_python()
    # bench_env() byte-compiles plangate first (as pip install does) and drops PLANGATE_*.
    base_env = {k: v for k, v in bench_env().items()
                if not k.startswith(("CLAUDE", "CODEX", "CURSOR"))}
    baseline_argv = [python, "-c", "import json,sys; json.load(sys.stdin)"]
    hook_argv = [python, "-m", "plangate.hooks", "claude"]
    report: dict[str, object] = {"python": python, "calls": args.calls, "scenarios": {},
                                 "loadavg_before": list(os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
        repo = build_repo(Path(tmp))
        scenarios = [
            ("task-write", _payload(repo, "Write", {"file_path": str(repo / "src/app.py"),
                                                    "content": "x"}), "TASK-0001", 0),
            ("task-bash", _payload(repo, "Bash", {"command": "echo x >> src/app.py"}),
             "TASK-0001", 0),
            ("no-task-protected", _payload(repo, "Write", {"file_path": "CLAUDE.md"}), None, 2),
        ]
        for name, payload, task, expected in scenarios:
            env = dict(base_env)
            if task:
                env["PLANGATE_TASK"] = task
            for _ in range(5):  # warm the page cache for both sides
                _time(baseline_argv, payload, env, repo)
                _time(hook_argv, payload, env, repo)
            hook_times: list[float] = []
            base_times: list[float] = []
            hook_cpu: list[float] = []
            base_cpu: list[float] = []
            for _ in range(args.calls):
                wall, cpu, _rc = _time(baseline_argv, payload, env, repo)
                base_times.append(wall)
                base_cpu.append(cpu)
                wall, cpu, code = _time(hook_argv, payload, env, repo)
                if code != expected:
                    raise SystemExit(f"{name}: hook exited {code}, expected {expected}: "
                                     f"{_LAST_STDERR[0]}")
                hook_times.append(wall)
                hook_cpu.append(cpu)
            row = {
                "baseline_median_ms": statistics.median(base_times) * 1000,
                "baseline_p95_ms": _p95(base_times) * 1000,
                "hook_median_ms": statistics.median(hook_times) * 1000,
                "hook_p95_ms": _p95(hook_times) * 1000,
                "baseline_cpu_median_ms": statistics.median(base_cpu) * 1000,
                "hook_cpu_median_ms": statistics.median(hook_cpu) * 1000,
            }
            row["ratio_median"] = row["hook_median_ms"] / row["baseline_median_ms"]
            row["ratio_p95"] = row["hook_p95_ms"] / row["baseline_p95_ms"]
            row["ratio_cpu_median"] = row["hook_cpu_median_ms"] / row["baseline_cpu_median_ms"]
            report["scenarios"][name] = row  # type: ignore[index]
    report["loadavg_after"] = list(os.getloadavg())
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"interpreter: {python}; {args.calls} calls per side, interleaved")
    load = ", ".join(
        f"{label} {' '.join(f'{v:.2f}' for v in report[key])}"  # type: ignore[attr-defined]
        for label, key in (("before", "loadavg_before"), ("after", "loadavg_after"))
    )
    print(f"load average (1/5/15 min): {load}")
    print(f"{'scenario':18} {'base p50':>9} {'hook p50':>9} {'ratio':>6} "
          f"{'base p95':>9} {'hook p95':>9} {'ratio':>6} {'cpu ratio p50':>14}")
    for name, row in report["scenarios"].items():  # type: ignore[attr-defined]
        print(f"{name:18} {row['baseline_median_ms']:7.1f}ms {row['hook_median_ms']:7.1f}ms "
              f"{row['ratio_median']:5.2f}x {row['baseline_p95_ms']:7.1f}ms "
              f"{row['hook_p95_ms']:7.1f}ms {row['ratio_p95']:5.2f}x "
              f"{row['ratio_cpu_median']:13.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
