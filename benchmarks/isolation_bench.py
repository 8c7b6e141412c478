"""Isolation's cost: exec start-up with and without a box, trial throughput with and without.

1. ``exec``: the whole ``plangate exec`` service (lock, verification, ledger
   entries, run log) for the command ``true``, in a box on a workspace made
   from the approved commit (extract, private home, box, record, judge) with
   the network off and with the egress proxy (network on: proxy started, bridge
   in the box), and in the working tree (the recorded human opt-out's runner),
   interleaved over ``--rounds`` rounds. Reports the medians and their ratios.
2. download: 10 MB from a loopback HTTP server with ``curl``, directly and
   through the egress proxy (the bridge as the box runs it, which hands each
   connection to the proxy), over ``--rounds`` rounds. Reports the medians and
   the ratio.
3. trials: the bundled demo harness (as ``eval_bench.py``), every trial's
   runner and grader in a fresh box or as plain processes, with 1 and 2 jobs.
   Reports trials per second and the ratios measured in the same run.

No absolute goal: machines differ; the ratios are the figures to compare.

Usage: python3 benchmarks/isolation_bench.py [--rounds R] [--trials N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _bench_common import run_cli_in_process  # noqa: E402
from eval_bench import _setup as eval_setup  # noqa: E402

from plangate.canonical import sha256_digest  # noqa: E402
from plangate.evaluation.run.service import build_trials  # noqa: E402
from plangate.evaluation.run.trials import LocalPoolExecutor, TrialBox  # noqa: E402
from plangate.execution.command import run_verified  # noqa: E402
from plangate.execution.isolated import IsolatedRunner  # noqa: E402
from plangate.execution.service import Completion, execute  # noqa: E402
from plangate.git import scrubbed_env  # noqa: E402
from plangate.isolation.backend import select_backend  # noqa: E402
from plangate.isolation.config import EgressRule  # noqa: E402
from plangate.isolation.proxy import (  # noqa: E402
    BRIDGE_SOURCE,
    start_proxy,
)

PLAN = """# plan

## Goal

Benchmark.

## Files / Components to Touch

- `src/greet.py`

## Testing Strategy

Verification Automation: `true`
"""
ARTIFACTS = ("plan.md", "test-cases.md", "review-self.md", "review-external.md",
             "loopspec.yaml", "runbook.md")


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=scrubbed_env(), capture_output=True,
                          check=True)
    return proc.stdout.decode().strip()


def _approved_repo(root: Path, extra: dict[str, str] | None = None) -> Path:
    """An approved TASK-0001 (scope ``src/greet.py``), ``extra`` files in the approved commit."""
    from plangate.snapshot import ARTIFACTS as NAMES
    from plangate.surfaces import bundled_template_bytes

    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.invalid"),
                       ("commit.gpgsign", "false")):
        _git(repo, "config", key, value)
    (repo / ".plangate").mkdir()
    own = b"\n".join(line for line in bundled_template_bytes().splitlines()
                     if b"PLANGATE-BUNDLED-TEMPLATE" not in line)
    (repo / ".plangate" / "protected-surfaces.toml").write_bytes(own + b"\n")
    for rel, text in (extra or {}).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    task = repo / "docs" / "working" / "TASK-0001"
    task.mkdir(parents=True)
    plan_hash = sha256_digest(PLAN.encode())
    for name in NAMES:
        (task / name).write_text(PLAN if name == "plan.md" else f"# {name}\n\nbody\n")
    with (task / "review-self.md").open("a") as fh:
        fh.write(f"\nC1-VERDICT: PASS plan={plan_hash}\n")
    with (task / "review-external.md").open("a") as fh:
        fh.write(f"\nC2-VERDICT: approve plan={plan_hash}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "plan")
    head = _git(repo, "rev-parse", "HEAD")
    reviewers = root / "reviewers.json"
    reviewers.write_text(json.dumps({
        "model_a": {"verdict": "approve", "evidence_ref": "review-self.md#PASS"},
        "model_b": {"verdict": "approve", "evidence_ref": "review-external.md#approve"},
    }))
    code, out, err = run_cli_in_process(
        repo, "c3", "issue", "TASK-0001", "--target-sha", head, "--reviewers", str(reviewers),
        "--decision", "AUTO_APPROVED", "--policy-ref", "bench@v1", "--issued-at",
        "2026-01-02T03:04:05Z", "--issued-by", "bench")
    if code not in (0, 3):
        raise SystemExit(f"c3 issue failed: {out} {err}")
    return repo


class _Quiet:
    def note(self, text: str) -> None:
        """Notes are not measured."""

    def starting(self, run: object) -> None:
        """Nothing to show."""


def _exec_once(repo: Path, *, isolated: bool, network: bool = False) -> float:
    env = dict(scrubbed_env())
    runner = (IsolatedRunner(repo, select_backend(), network=network, note=lambda _t: None)
              if isolated else run_verified)
    started = time.perf_counter()
    outcome = execute(repo, "TASK-0001", ["true"], env, _Quiet(), runner=runner)
    elapsed = time.perf_counter() - started
    if not isinstance(outcome, Completion) or outcome.exit_code != 0:
        raise SystemExit(f"exec failed: {outcome}")
    return elapsed


DOWNLOAD_BYTES = 10 * 1024 * 1024


class _Payload(BaseHTTPRequestHandler):
    BODY = b"x" * DOWNLOAD_BYTES

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.BODY)))
        self.end_headers()
        self.wfile.write(self.BODY)

    def log_message(self, *_args: object) -> None:
        return


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii")
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _curl(url: str, *proxy: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download}",
                           *proxy, url], capture_output=True, check=True)
    elapsed = time.perf_counter() - started
    if int(proc.stdout) != DOWNLOAD_BYTES:
        raise SystemExit(f"download incomplete: {proc.stdout!r}")
    return elapsed


def _downloads(rounds: int) -> dict[str, float]:
    """Median seconds of a 10 MB download: direct, and through each bridge and the proxy."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Payload)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    proxy, access, directory = start_proxy((EgressRule("127.0.0.1", port),),
                                           private_network=True, python=sys.executable)
    # Each bridge as the box runs it, here on a free host port: it forwards to the proxy.
    bridges = {}
    python_port = _free_port()
    bridges["python"] = (python_port, subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", BRIDGE_SOURCE, str(python_port), access.socket,
         "--", "/bin/sleep", "3600"], start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL))
    try:
        time.sleep(0.5)
        url = f"http://127.0.0.1:{port}/payload"
        times: dict[str, list[float]] = {"direct": []}
        _curl(url)
        for name, (bridge_port, _proc) in bridges.items():
            _curl(url, "-x", f"http://127.0.0.1:{bridge_port}")  # warm
            times[name] = []
        for _ in range(rounds * 2):
            times["direct"].append(_curl(url))
            for name, (bridge_port, _proc) in bridges.items():
                times[name].append(_curl(url, "-x", f"http://127.0.0.1:{bridge_port}"))
        return {name: statistics.median(values) for name, values in times.items()}
    finally:
        for _port, proc in bridges.values():
            # The Python bridge's forwarder leaves the group (a box's pid namespace ends it;
            # here it is ended by its pid).
            for child in _children(proc.pid):
                os.kill(child, signal.SIGKILL)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proxy.stop()
        shutil.rmtree(directory, ignore_errors=True)
        server.shutdown()


def _trials(plan: dict[str, object], base: Path, cand: Path, work: Path, *, jobs: int,
            box: TrialBox | None) -> float:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    specs = build_trials(plan, base, cand, work)
    started = time.perf_counter()
    outcomes = LocalPoolExecutor(jobs, box=box).run(specs)
    elapsed = time.perf_counter() - started
    failed = [(o.key, o.error_code, o.detail[:200]) for o in outcomes if not o.completed]
    if failed:
        raise SystemExit(f"benchmark trials failed: {failed[:3]}")
    return len(specs) / elapsed


def main() -> None:
    """Print the medians and ratios as JSON and as lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=2, help="trials per fixture and side")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="plangate-isolation-bench-"))
    try:
        repo = _approved_repo(root)
        for isolated in (True, False):  # warm caches
            _exec_once(repo, isolated=isolated)
        boxed, proxied, plain = [], [], []
        for _ in range(args.rounds):
            boxed.append(_exec_once(repo, isolated=True))
            proxied.append(_exec_once(repo, isolated=True, network=True))
            plain.append(_exec_once(repo, isolated=False))
        exec_boxed, exec_plain = statistics.median(boxed), statistics.median(plain)
        exec_proxied = statistics.median(proxied)
        downloads = _downloads(args.rounds)
        direct_s = downloads["direct"]
        through_s = downloads["python"]

        plan, base, cand = eval_setup(root / "eval", args.trials)
        box = TrialBox.here()
        rates: dict[tuple[int, bool], list[float]] = {}
        for _ in range(max(1, args.rounds // 2)):
            for jobs in (1, 2):
                for use_box in (False, True):
                    rate = _trials(plan, base, cand, root / "work", jobs=jobs,
                                   box=box if use_box else None)
                    rates.setdefault((jobs, use_box), []).append(rate)
        med = {key: statistics.median(values) for key, values in rates.items()}
        report = {
            "exec_isolated_ms": round(exec_boxed * 1000, 1),
            "exec_unisolated_ms": round(exec_plain * 1000, 1),
            "exec_ratio_isolated_vs_not": round(exec_boxed / exec_plain, 2),
            "exec_isolated_proxy_ms": round(exec_proxied * 1000, 1),
            "exec_ratio_isolated_proxy_vs_not": round(exec_proxied / exec_plain, 2),
            "download_10mb_direct_ms": round(direct_s * 1000, 1),
            "download_10mb_proxy_ms": round(through_s * 1000, 1),
            "download_10mb_proxy_python_bridge_ms": round(downloads["python"] * 1000, 1),
            "download_ratio_proxy_vs_direct": round(through_s / direct_s, 2),
            "trials_per_second_jobs1_plain": round(med[(1, False)], 2),
            "trials_per_second_jobs1_boxed": round(med[(1, True)], 2),
            "trials_per_second_jobs2_plain": round(med[(2, False)], 2),
            "trials_per_second_jobs2_boxed": round(med[(2, True)], 2),
            "trial_ratio_boxed_vs_plain_jobs1": round(med[(1, True)] / med[(1, False)], 2),
            "trial_ratio_boxed_vs_plain_jobs2": round(med[(2, True)] / med[(2, False)], 2),
            "boxed_speedup_2_vs_1": round(med[(2, True)] / med[(1, True)], 2),
            "rounds": args.rounds,
        }
        print(json.dumps(report, indent=2))
        print(f"exec start-up: {exec_boxed * 1000:.0f} ms isolated vs {exec_plain * 1000:.0f} ms "
              f"not (x{exec_boxed / exec_plain:.2f}); with the egress proxy "
              f"{exec_proxied * 1000:.0f} ms (x{exec_proxied / exec_plain:.2f})")
        print(f"10 MB download: {through_s * 1000:.0f} ms through the proxy vs "
              f"{direct_s * 1000:.0f} ms direct (x{through_s / direct_s:.2f})")
        print(f"trials: boxed/plain x{report['trial_ratio_boxed_vs_plain_jobs1']} with 1 job, "
              f"x{report['trial_ratio_boxed_vs_plain_jobs2']} with 2 jobs; boxed 2-vs-1 "
              f"speed-up x{report['boxed_speedup_2_vs_1']}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
