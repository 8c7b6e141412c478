"""Hook latency through the hook helper (``plangate hookd``) against the bare Python floor.

The subject is the command ``plangate hooks install --claude --local-python
--hookd`` writes: ``python -S -I .../plangate/hooks/hookd_launch.py claude``,
asking a running helper of the benchmark repository. The floor is a bare
JSON-reading interpreter, ``python -c "import json,sys; json.load(sys.stdin)"``.
Both are separate processes started with the interpreter binary itself, fed
the same payload, interleaved call by call. Goal: p50 <= 0.5x and p95 <= 0.8x
of the floor, on **wall time** (what the host waits for: the helper's work
happens in another process, so the client's own CPU time would flatter it).
The helper's CPU time per call (from ``/proc/PID/stat``) is reported next to
the client's, for information.

The floor depends on the interpreter's ``site`` start-up (``.pth`` files of
everything installed next to it), so the same figures are also taken with a
clean interpreter: a plain ``python -m venv --without-pip`` of the same
interpreter, for both the floor and the client.

The native client (``plangate/hooks/native/hookd_client.c``, what the install writes when
a C compiler is found) is measured the same way, against the same floor of each
interpreter, built into a private cache directory with that interpreter baked in as its
fallback.

Scenarios, each a full decision recorded in the ledger: ``task-write`` (an
active task, an in-scope Write: allowed), ``task-bash`` (``echo x >>
src/app.py``: allowed), ``no-task-protected`` (a Write to CLAUDE.md: denied).

Usage: ``python3 benchmarks/hookd_bench.py [--calls 100] [--json] [--no-clean]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import hook_bench
from _bench_common import REPO_ROOT, bench_env, real_python

LAUNCH = REPO_ROOT / "src" / "plangate" / "hooks" / "hookd_launch.py"
P50_GOAL = 0.5
P95_GOAL = 0.8


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a running process and of the children it waited for
    (git, when the helper runs it)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks


def start_helper(python: str, repo: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A real helper for ``repo``, ready to answer."""
    proc = subprocess.Popen(
        [python, "-P", "-m", "plangate", "hookd", "run", "--idle-seconds", "600"],
        cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith(b"ready "):
        proc.kill()
        raise SystemExit(f"the helper did not start: {line!r} {proc.stderr.read()!r}")
    return proc


def clean_python(base: Path, python: str) -> str | None:
    """``python -m venv --without-pip`` of the same interpreter (None if that fails)."""
    target = base / "clean-venv"
    proc = subprocess.run([python, "-m", "venv", "--without-pip", str(target)],
                          capture_output=True, check=False)
    candidate = target / "bin" / "python"
    return str(candidate) if proc.returncode == 0 and candidate.exists() else None


def build_native(python: str, repo: Path, cache: Path) -> str:
    """The native client built with the real compiler into ``cache`` (``python`` baked in
    as its fallback interpreter); exits when it cannot be built."""
    sys.path.insert(0, str(REPO_ROOT / "src"))
    from plangate.hooks.native_build import build

    built = build(str(repo), {"XDG_CACHE_HOME": str(cache), "PATH": os.environ.get("PATH", "")},
                  python=python)
    if built.path is None:
        raise SystemExit(f"the native client cannot be built: {built.code}: {built.detail}")
    return built.path


def measure(
    client_python: str, repo: Path, helper_pid: int, payload: bytes, env: dict[str, str],
    *, calls: int, expect: int, native: str | None = None,
) -> dict[str, float]:
    """Interleaved calls of the floor and the client (``native``: that binary instead of
    the Python client); medians, p95 and ratios."""
    floor = [client_python, "-c", "import json,sys; json.load(sys.stdin)"]
    client = ([native, "claude"] if native is not None
              else [client_python, "-S", "-I", str(LAUNCH), "claude"])
    bare = [client_python, "-S", "-I", "-c", "pass"]
    for _ in range(5):
        hook_bench._time(floor, payload, env, repo)
        hook_bench._time(client, payload, env, repo)
    base_wall: list[float] = []
    sub_wall: list[float] = []
    base_cpu: list[float] = []
    sub_cpu: list[float] = []
    helper_cpu = 0.0
    for _ in range(calls):
        wall, cpu, _rc = hook_bench._time(floor, payload, env, repo)
        base_wall.append(wall)
        base_cpu.append(cpu)
        helper_before = _cpu_of(helper_pid)
        wall, cpu, code = hook_bench._time(client, payload, env, repo)
        helper_cpu += _cpu_of(helper_pid) - helper_before
        if code != expect:
            raise SystemExit(f"client exited {code}, expected {expect}: "
                             f"{hook_bench._LAST_STDERR[0]}")
        sub_wall.append(wall)
        sub_cpu.append(cpu)
    helper_cpu /= calls
    # What the client cannot go below: its own interpreter start-up (-S -I), and the
    # helper's answer itself (decision + durable ledger append), asked from this process.
    startup = [hook_bench._time(bare, b"", env, repo)[0] for _ in range(max(calls // 3, 5))]
    round_trip = _round_trips(payload, env, repo, max(calls // 3, 5))
    row = {
        "floor_p50_ms": statistics.median(base_wall) * 1000,
        "floor_p95_ms": hook_bench._p95(base_wall) * 1000,
        "helper_p50_ms": statistics.median(sub_wall) * 1000,
        "helper_p95_ms": hook_bench._p95(sub_wall) * 1000,
        "floor_cpu_p50_ms": statistics.median(base_cpu) * 1000,
        "client_cpu_p50_ms": statistics.median(sub_cpu) * 1000,
        "helper_cpu_mean_ms": helper_cpu * 1000,
        "startup_p50_ms": statistics.median(startup) * 1000,
        "round_trip_p50_ms": statistics.median(round_trip) * 1000,
    }
    row["ratio_p50"] = row["helper_p50_ms"] / row["floor_p50_ms"]
    row["ratio_p95"] = row["helper_p95_ms"] / row["floor_p95_ms"]
    row["ratio_cpu_total"] = (row["client_cpu_p50_ms"] + row["helper_cpu_mean_ms"]) / row[
        "floor_cpu_p50_ms"]
    return row


def _round_trips(payload: bytes, env: dict[str, str], repo: Path, count: int) -> list[float]:
    """Seconds per answer of the running helper, asked from this process (no start-up)."""
    import time

    sys.path.insert(0, str(REPO_ROOT / "src"))
    from plangate.hooks.hookd_client import ask_helper, package_digest

    digest = package_digest()
    out: list[float] = []
    for _ in range(count):
        start = time.perf_counter()
        answer = ask_helper("claude", payload, env, str(repo), digest=digest)
        out.append(time.perf_counter() - start)
        if answer is None:
            raise SystemExit("the helper did not answer the in-process client")
    return out


def run(calls: int, *, clean: bool = True) -> dict[str, Any]:
    """Build the repository, start a helper, measure every scenario (and the clean venv)."""
    python = real_python()
    base_env = {k: v for k, v in bench_env().items()
                if not k.startswith(("CLAUDE", "CODEX", "CURSOR"))}
    report: dict[str, Any] = {"python": python, "calls": calls, "loadavg_before":
                              list(os.getloadavg()), "interpreters": {}}
    with tempfile.TemporaryDirectory(prefix="plangate-hookd-bench-") as tmp:
        runtime = Path(tmp) / "run"
        runtime.mkdir(mode=0o700)
        base_env["XDG_RUNTIME_DIR"] = str(runtime)
        repo = hook_bench.build_repo(Path(tmp))
        helper = start_helper(python, repo, base_env)
        interpreters = {"this interpreter": python}
        if clean:
            venv = clean_python(Path(tmp), python)
            if venv is not None:
                interpreters["clean venv"] = venv
        try:
            scenarios = [
                ("task-write", hook_bench._payload(
                    repo, "Write", {"file_path": str(repo / "src/app.py"), "content": "x"}),
                 "TASK-0001", 0),
                ("task-bash", hook_bench._payload(
                    repo, "Bash", {"command": "echo x >> src/app.py"}), "TASK-0001", 0),
                ("no-task-protected", hook_bench._payload(
                    repo, "Write", {"file_path": "CLAUDE.md"}), None, 2),
            ]
            for label, client_python in interpreters.items():
                native = build_native(client_python, repo, Path(tmp) / "cache")
                for kind, binary in (("python client", None), ("native client", native)):
                    rows: dict[str, Any] = {}
                    for name, payload, task, expect in scenarios:
                        env = dict(base_env)
                        if task:
                            env["PLANGATE_TASK"] = task
                        rows[name] = measure(client_python, repo, helper.pid, payload, env,
                                             calls=calls, expect=expect, native=binary)
                    report["interpreters"][f"{label}, {kind}"] = rows
        finally:
            helper.terminate()
            helper.wait(30)
    report["loadavg_after"] = list(os.getloadavg())
    return report


def main() -> int:
    """Run the benchmark and print the ratios against the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-clean", action="store_true", help="skip the clean venv")
    args = parser.parse_args()
    report = run(args.calls, clean=not args.no_clean)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"interpreter: {report['python']}; {args.calls} calls per side, interleaved; "
          f"load {report['loadavg_before'][0]:.2f} -> {report['loadavg_after'][0]:.2f}")
    for label, rows in report["interpreters"].items():
        print(f"-- {label}")
        for name, row in rows.items():
            met = row["ratio_p50"] <= P50_GOAL and row["ratio_p95"] <= P95_GOAL
            print(f"{name:18} p50 {row['helper_p50_ms']:6.1f} / {row['floor_p50_ms']:6.1f} ms "
                  f"= {row['ratio_p50']:.2f}x (goal <= {P50_GOAL})  "
                  f"p95 {row['helper_p95_ms']:6.1f} / {row['floor_p95_ms']:6.1f} ms "
                  f"= {row['ratio_p95']:.2f}x (goal <= {P95_GOAL})  "
                  f"{'met' if met else 'NOT met'}; CPU client {row['client_cpu_p50_ms']:.1f} "
                  f"+ helper {row['helper_cpu_mean_ms']:.1f} ms vs floor "
                  f"{row['floor_cpu_p50_ms']:.1f} ms; python -S -I start-up alone "
                  f"{row['startup_p50_ms']:.1f} ms, helper round trip "
                  f"{row['round_trip_p50_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
