"""What the committed hook line costs as installed: the ``plangate-hook`` launcher against
the Python entry point it replaced, with and without a running helper, against the floor.

A wheel of this checkout is built and installed into a throwaway virtual environment (no
dependency downloaded: the benchmark interpreter's site packages are appended by a ``.pth``
after the environment's own), as a team installs PlanGate. In that environment, interleaved
call by call, on the same payload (an in-scope ``Write`` of an active task: a full decision,
recorded in the ledger durably):

- ``floor``: ``python -c "import json,sys; json.load(sys.stdin)"`` of the environment;
- ``python-entry``: ``plangate-hook-python claude``, the console script that ``plangate-hook``
  was before the launcher (a full interpreter with ``site``, then the plangate import);
- ``launcher``: ``plangate-hook claude`` (the sh launcher: ``-S -I``, the helper, else
  ``site`` and the in-process decision in the same process).

First with no helper, then with a real ``plangate hookd`` of the installed package running;
then both again with the native client linked beside the launcher (as ``plangate hookd
start`` links it; the phases named ``native, ...``).
Two environments: ``clean`` (``venv --without-pip``: ``site`` does almost nothing) and
``heavy-site`` (the same, plus a ``.pth`` that runs ``site.addsitedir`` on the base
interpreter's site packages, so ``site`` processes their ``.pth`` files as this machine's
plain interpreter does: the case where skipping ``site`` pays most).

Usage: ``python3 benchmarks/launcher_bench.py [--calls 40] [--only clean|heavy-site]
[--json]``. Prints medians (wall and CPU: user + system of the process and its children) and
p95 of each side, and their ratios to the floor of the same run, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from _bench_common import REPO_ROOT, load_average, real_python

sys.path.insert(0, str(REPO_ROOT / "src"))

WITHOUT_GOAL = 1.3
"""The committed line without the helper: median at most this times the floor."""
WITH_GOAL = 0.5
"""The committed line with the helper running: median at most this times the floor."""


def install(base: Path, python: str, name: str, *, heavy_site: bool) -> Path:
    """A virtual environment of ``python`` with this checkout's wheel installed."""
    dist = base / "dist"
    if not dist.exists():
        built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist),
                                str(REPO_ROOT)], capture_output=True, text=True, check=False)
        if built.returncode != 0:
            raise SystemExit(f"the wheel did not build: {built.stderr[-2000:]}")
    wheel = next(dist.glob("plangate-*.whl"))
    target = base / name
    subprocess.run([python, "-m", "venv", "--without-pip", str(target)], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(target / "bin" / "python"), "install",
         "-q", "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the wheel did not install: {done.stderr[-2000:]}")
    site = Path(subprocess.run(
        [str(target / "bin" / "python"), "-c",
         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz-bench-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    if heavy_site:
        base_site = subprocess.run(
            [python, "-c", "import site, sys; print(site.getsitepackages([sys.base_prefix])[0])"],
            capture_output=True, text=True, check=True).stdout.strip()
        (site / "zz-bench-heavy-site.pth").write_text(
            f"import site; site.addsitedir({base_site!r})\n")
    return target


def _run(argv: list[str], repo: Path, env: dict[str, str], payload: bytes
         ) -> tuple[float, float]:
    import resource
    import time

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=repo, env=env, input=payload, capture_output=True,
                          check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(venv: Path, repo: Path, env: dict[str, str], payload: bytes, calls: int
            ) -> dict[str, Any]:
    """The three sides, interleaved call by call; medians, p95 and ratios to the floor."""
    bin_dir = venv / "bin"
    sides = {
        "floor": [str(bin_dir / "python"), "-c", "import json,sys; json.load(sys.stdin)"],
        "python-entry": [str(bin_dir / "plangate-hook-python"), "claude"],
        "launcher": [str(bin_dir / "plangate-hook"), "claude"],
    }
    walls: dict[str, list[float]] = {k: [] for k in sides}
    cpus: dict[str, list[float]] = {k: [] for k in sides}
    for argv in sides.values():
        for _ in range(3):
            _run(argv, repo, env, payload)  # warm the page cache and the bytecode
    for _ in range(calls):
        for name, argv in sides.items():
            wall, cpu = _run(argv, repo, env, payload)
            walls[name].append(wall)
            cpus[name].append(cpu)
    floor_wall = statistics.median(walls["floor"])
    floor_cpu = statistics.median(cpus["floor"])
    floor_p95 = _p95(walls["floor"])
    out: dict[str, Any] = {}
    for name in sides:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        out[name] = {"wall_ms": round(wall * 1000, 1), "cpu_ms": round(cpu * 1000, 1),
                     "p95_ms": round(_p95(walls[name]) * 1000, 1),
                     "ratio_wall": round(wall / floor_wall, 2),
                     "ratio_cpu": round(cpu / max(floor_cpu, 1e-9), 2),
                     "ratio_p95": round(_p95(walls[name]) / floor_p95, 2)}
    return out


def start_helper(venv: Path, repo: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [str(venv / "bin" / "python"), "-P", "-m", "plangate", "hookd", "run",
         "--idle-seconds", "600"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith(b"ready "):
        proc.kill()
        raise SystemExit(f"the helper did not start: {line!r}")
    return proc


def link_native(venv: Path, repo: Path, env: dict[str, str], cache: Path) -> bool:
    """Link the native client beside the launcher, as ``plangate hookd start`` does (False
    when it cannot be built here: no compiler)."""
    cache.mkdir(mode=0o700)
    code = ("import sys; from plangate.hooks.native_build import link_beside_launcher; "
            "b = link_beside_launcher(sys.argv[1], {'XDG_CACHE_HOME': sys.argv[2], "
            "'PATH': '/usr/local/bin:/usr/bin:/bin'}); print(b.code, b.detail)")
    done = subprocess.run([str(venv / "bin" / "python"), "-P", "-c", code, str(repo),
                           str(cache)], capture_output=True, text=True, check=False, env=env)
    if not done.stdout.startswith("HOOKD_NATIVE_LINKED"):
        print(f"no native client: {done.stdout}{done.stderr}", file=sys.stderr)
        return False
    return True


def run(calls: int, only: str | None = None) -> dict[str, Any]:
    """Every environment, without and with the helper."""
    import hook_bench

    python = real_python()
    result: dict[str, Any] = {"calls": calls, "python": python,
                              "load_before": load_average()}
    with tempfile.TemporaryDirectory(prefix="plangate-launcher-bench-") as tmp:
        base = Path(tmp)
        repo = hook_bench.build_repo(base)
        payload = hook_bench._payload(repo, "Write", {"file_path": str(repo / "src/app.py"),
                                                      "content": "x"})
        runtime = base / "run"
        runtime.mkdir(mode=0o700)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(base), "LANG": "C.UTF-8",
               "XDG_RUNTIME_DIR": str(runtime), "PLANGATE_TASK": "TASK-0001"}
        for name, heavy in (("clean", False), ("heavy-site", True)):
            if only and name != only:
                continue
            venv = install(base, python, name, heavy_site=heavy)
            row: dict[str, Any] = {
                "without-helper": measure(venv, repo, env, payload, calls),
            }
            helper = start_helper(venv, repo, env)
            try:
                row["with-helper"] = measure(venv, repo, env, payload, calls)
            finally:
                helper.terminate()
                helper.wait(30)
            linked = link_native(venv, repo, env, base / f"cache-{name}")
            if linked:
                row["native, without-helper"] = measure(venv, repo, env, payload, calls)
                helper = start_helper(venv, repo, env)
                try:
                    row["native, with-helper"] = measure(venv, repo, env, payload, calls)
                finally:
                    helper.terminate()
                    helper.wait(30)
            result[name] = row
    result["load_after"] = load_average()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--only", choices=["clean", "heavy-site"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.calls, args.only)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"python {result['python']}, {args.calls} calls per side; load before "
          f"{result['load_before']}, after {result['load_after']}")
    for name in ("clean", "heavy-site"):
        if name not in result:
            continue
        for phase, goal in (("without-helper", WITHOUT_GOAL), ("with-helper", WITH_GOAL),
                            ("native, without-helper", WITHOUT_GOAL),
                            ("native, with-helper", WITH_GOAL)):
            if phase not in result[name]:
                continue
            rows = result[name][phase]
            print(f"{name} venv, {phase} (goal for the committed line: {goal}x the floor)")
            for side, row in rows.items():
                print(f"  {side:13} p50 {row['wall_ms']:6.1f} ms ({row['ratio_wall']:.2f}x) "
                      f"cpu {row['cpu_ms']:6.1f} ms ({row['ratio_cpu']:.2f}x) "
                      f"p95 {row['p95_ms']:6.1f} ms ({row['ratio_p95']:.2f}x)")
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
