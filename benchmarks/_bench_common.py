"""Shared helpers of the benchmark scripts (not a benchmark itself: no ``_bench`` suffix)."""

from __future__ import annotations

import io
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def real_python() -> str:
    """The interpreter binary itself, never a version-manager shim.

    Outside a virtual environment this is ``realpath(sys.executable)`` (a pyenv
    shim is a shell script that would add its own start-up to every sample).
    Inside one, the venv's ``python`` is a direct symlink to the base binary and
    must be kept so that the venv's packages are importable.
    """
    if sys.prefix != sys.base_prefix:
        candidate = sys.executable
    else:
        candidate = os.path.realpath(sys.executable)
    with open(os.path.realpath(candidate), "rb") as handle:
        magic = handle.read(4)
    if magic.startswith(b"#!"):
        raise SystemExit(f"{candidate} is a script (a shim?), not the interpreter binary")
    return candidate


def precompile() -> None:
    """Byte-compile the package first, as ``pip install`` does for an installed package.

    Without this, an environment with PYTHONDONTWRITEBYTECODE=1 (this one has it)
    would make every measured run compile plangate's sources from scratch, which
    measures the compiler rather than plangate.
    """
    import compileall

    compileall.compile_dir(str(REPO_ROOT / "src" / "plangate"), quiet=1)


def bench_env() -> dict[str, str]:
    """The environment for measured processes: inherited, minus PLANGATE_* and GIT_*."""
    precompile()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "GIT_"))}
    src = str(REPO_ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def time_once(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, child CPU seconds (user+sys) and exit code of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def compare(
    name: str,
    subject: Sequence[str],
    baseline: Sequence[str],
    *,
    cwd: Path,
    runs: int,
    env: dict[str, str],
    expect_subject: int = 0,
    baseline_cwd: Path | None = None,
    expect_baseline: int = 0,
) -> dict[str, float]:
    """Run subject and baseline interleaved ``runs`` times; print and return the medians.

    The baseline runs in ``baseline_cwd`` when given (another repository), else in ``cwd``.
    """
    where = cwd if baseline_cwd is None else baseline_cwd
    time_once(subject, cwd, env)  # warm the page cache and .pyc files
    time_once(baseline, where, env)
    sw, sc, bw, bc = [], [], [], []
    for _ in range(runs):
        wall, cpu, code = time_once(subject, cwd, env)
        if code != expect_subject:
            raise SystemExit(f"{name}: subject exited {code}, expected {expect_subject}")
        sw.append(wall)
        sc.append(cpu)
        wall, cpu, code = time_once(baseline, where, env)
        if code != expect_baseline:
            raise SystemExit(f"{name}: baseline exited {code}, expected {expect_baseline}")
        bw.append(wall)
        bc.append(cpu)
    out = {
        "subject_wall_ms": statistics.median(sw) * 1000,
        "baseline_wall_ms": statistics.median(bw) * 1000,
        "subject_cpu_ms": statistics.median(sc) * 1000,
        "baseline_cpu_ms": statistics.median(bc) * 1000,
    }
    out["ratio_wall"] = out["subject_wall_ms"] / out["baseline_wall_ms"]
    out["ratio_cpu"] = out["subject_cpu_ms"] / max(out["baseline_cpu_ms"], 1e-9)
    return out


def load_average() -> str:
    """The 1/5/15-minute load averages and the core count, for the record of a run."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def run_cli_in_process(cwd: Path, *argv: str) -> tuple[int, str, str]:
    """Run ``plangate`` in-process (for building fixtures quickly)."""
    sys.path.insert(0, str(REPO_ROOT / "src"))
    from plangate.cli.context import Context
    from plangate.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGATE_")}
    ctx = Context(cwd=cwd, stdout=out, stderr=err, stdin=io.BytesIO(b""), env=env)
    code = main(list(argv), ctx)
    return code, out.getvalue(), err.getvalue()


def git(repo: Path, *args: str) -> str:
    """git for fixture setup, with a scrubbed environment and a fixed identity."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return proc.stdout.decode().strip()


def importtime_report(argv: Sequence[str], cwd: Path, env: dict[str, str], top: int = 15) -> None:
    """Print the ``-X importtime`` entries with the largest cumulative cost."""
    proc = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=env,
        capture_output=True, text=True, check=False,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3:
            continue
        self_us, cumulative_us, module = int(parts[0]), int(parts[1]), parts[2].rstrip()
        rows.append((cumulative_us, self_us, module))
    # Nesting shows as indentation after the first space; top level has exactly one.
    total = sum(c for c, _s, m in rows if len(m) - len(m.lstrip()) == 1)
    print(f"  top-level imports total {total / 1000:.1f} ms; largest cumulative:")
    for cumulative_us, self_us, module in sorted(rows, reverse=True)[:top]:
        print(f"    {cumulative_us / 1000:7.2f} ms cum {self_us / 1000:6.2f} ms self  {module}")
