"""Hooks inside exec's box: what a decision costs there, and what importing them costs after.

1. One Claude Code hook decision (an in-scope ``Write``), measured as a process
   (``python -m plangate.hooks claude``) inside a real ``plangate exec`` box
   (the box is observed, the task comes from the run, the decision is recorded in
   the box-local ledger) and in the working tree outside any box (the task's
   record verified against HEAD, recorded in the repository's ledger). Reports
   the medians and their ratio.
2. The import after the run: a box ledger of ``--entries`` hook decisions read
   as untrusted input (private copy, schema, chain) and appended to the
   repository's ledger, against appending the same number of entries directly.

No absolute goal: machines differ; the ratios are the figures to compare.

Usage: python3 benchmarks/box_hooks_bench.py [--calls N] [--entries N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")
sys.path.insert(0, SRC)
sys.path.insert(0, str(HERE))

from _bench_common import bench_env, real_python, run_cli_in_process  # noqa: E402
from isolation_bench import _approved_repo  # noqa: E402

from plangate.execution.boxledger import import_box_ledger, prepare_box_dir  # noqa: E402
from plangate.ledger import open_ledger  # noqa: E402
from plangate.ledger.sqlite import SQLiteLedger  # noqa: E402

PY = real_python()


def _payload(repo: Path) -> bytes:
    return json.dumps({
        "session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse",
        "transcript_path": "/dev/null", "tool_name": "Write",
        "tool_input": {"file_path": f"{repo}/src/greet.py", "content": "x"},
    }).encode()


def _timing_script(payload: bytes, calls: int) -> str:
    return textwrap.dedent(f"""
        import json, subprocess, sys, time
        times = []
        for _ in range({calls} + 1):
            start = time.perf_counter()
            proc = subprocess.run([{PY!r}, "-P", "-m", "plangate.hooks", "claude"],
                                  input={payload!r}, capture_output=True)
            times.append(time.perf_counter() - start)
            if proc.returncode != 0:
                sys.exit("hook denied: " + proc.stdout.decode() + proc.stderr.decode())
        print("TIMES " + json.dumps(times[1:]))
    """)


def _in_box(repo: Path, calls: int) -> list[float]:
    env = dict(bench_env())
    script = _timing_script(_payload(repo), calls)
    proc = subprocess.run(
        [PY, "-m", "plangate", "exec", "TASK-0001", "--no-network", "--", PY, "-c", script],
        cwd=repo, env=env, capture_output=True, check=False,
    )
    for line in proc.stdout.decode().splitlines():
        if line.startswith("TIMES "):
            return list(json.loads(line[6:]))
    raise SystemExit(f"the boxed run failed: {proc.stdout.decode()} {proc.stderr.decode()}")


def _outside(repo: Path, calls: int) -> list[float]:
    env = dict(bench_env(), PLANGATE_TASK="TASK-0001")
    times = []
    for _ in range(calls + 1):
        start = time.perf_counter()
        proc = subprocess.run([PY, "-P", "-m", "plangate.hooks", "claude"], cwd=repo,
                              input=_payload(repo), env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"hook denied outside: {proc.stdout.decode()}")
    return times[1:]


def _import_cost(root: Path, repo: Path, entries: int) -> tuple[float, float]:
    run_dir = root / "run"
    run_dir.mkdir()
    run_id = "TASK-0001-20261203T093100Z-4bf50be3"
    box = prepare_box_dir(run_dir, run_id=run_id, task_id="TASK-0001", approved="a" * 40,
                          plan_hash="sha256:" + "0" * 64, backend="bubblewrap")
    payload = {"host": "claude", "event": "pre", "tool": "Write", "verdict": "ALLOW",
               "codes": [], "targets": ["src/greet.py"], "task_id": "TASK-0001"}
    with SQLiteLedger(box / "ledger.sqlite3") as ledger:
        for _ in range(entries):
            ledger.append("hook_decision", "TASK-0001", payload)
    start = time.perf_counter()
    summary = import_box_ledger(repo, {}, box, run_id=run_id, task_id="TASK-0001")
    imported = time.perf_counter() - start
    if summary.get("imported") != entries:
        raise SystemExit(f"import failed: {summary}")
    start = time.perf_counter()
    with open_ledger(repo, {}) as ledger:
        for _ in range(entries):
            ledger.append("exec_box_entry", "TASK-0001", {"entry": payload})
    direct = time.perf_counter() - start
    return imported, direct


def main() -> None:
    """Print the medians and ratios as JSON and as lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--entries", type=int, default=500)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="plangate-box-hooks-bench-"))
    root.chmod(0o755)
    try:
        iso = f'visible = ["{SRC}"]\nenv = ["PYTHONPATH"]\n'
        repo = _approved_repo(root, {".plangate/isolation.toml": iso})
        code, out, err = run_cli_in_process(repo, "ledger", "verify")
        if code != 0:
            raise SystemExit(f"ledger: {out} {err}")
        boxed = statistics.median(_in_box(repo, args.calls))
        outside = statistics.median(_outside(repo, args.calls))
        imported, direct = _import_cost(root, repo, args.entries)
        report = {
            "hook_in_box_ms": round(boxed * 1000, 1),
            "hook_outside_ms": round(outside * 1000, 1),
            "hook_ratio_box_vs_outside": round(boxed / outside, 2),
            "import_ms": round(imported * 1000, 1),
            "import_ms_per_entry": round(imported * 1000 / args.entries, 3),
            "direct_append_ms": round(direct * 1000, 1),
            "import_ratio_vs_direct_appends": round(imported / direct, 2),
            "calls": args.calls,
            "entries": args.entries,
        }
        print(json.dumps(report, indent=2))
        print(f"hook decision: {boxed * 1000:.0f} ms in the box vs {outside * 1000:.0f} ms "
              f"outside (x{boxed / outside:.2f}); import of {args.entries} entries "
              f"{imported * 1000:.0f} ms (x{imported / direct:.2f} of direct appends)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        os.environ.pop("PLANGATE_TASK", None)


if __name__ == "__main__":
    main()
