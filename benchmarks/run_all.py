"""Every speed goal with its figure, its baseline, the load and met / not met; growth curves.

Usage:
  python3 benchmarks/run_all.py [--full] [--json]
      the goals table and the growth curves (a few minutes on 2 shared cores; --full uses
      the sizes the goals name: 10,000 tasks, 100,000 ledger entries, more runs)
  python3 benchmarks/run_all.py --scripts [NAME ...]
      run every ``benchmarks/*_bench.py`` (or those whose file name contains a NAME), one
      after another, each with its own default settings

Every figure is a ratio against a baseline measured in the same run (interleaved runs,
medians of process CPU time: user + system of the measured process and its children),
never an absolute time. A growth curve measures the same thing at n and 10n: linear cost
gives a ratio of about 10 (fixed start-up costs make it lower), quadratic about 100; a
"flat" curve (the hook against the ledger's length) should stay near 1.
Exit code: 0 when everything ran (a missed goal is reported, not failed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _bench_common import REPO_ROOT, bench_env, compare, git, load_average, real_python

sys.path.insert(0, str(REPO_ROOT / "src"))

LINEAR_MAX = 15.0  # t(10n) / t(n) above this is reported as not linear
FLAT_MAX = 1.3  # t(10n) / t(n) above this is reported as not flat

VERIFY_BASELINE = """
import hashlib, sqlite3, sys
conn = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
h = hashlib.sha256()
for row in conn.execute(
        "SELECT seq, kind, subject, payload, at, prev_hash, entry_hash FROM ledger_entries"
        " ORDER BY seq"):
    h.update(repr(row).encode())
"""
"""The ledger verify floor: read every row and hash the same bytes, streaming."""

VERIFY_BASELINE_PG = """
import hashlib, sys
import psycopg
h = hashlib.sha256()
with psycopg.connect(sys.argv[1]) as conn, conn.cursor(name="rows") as cur:
    cur.itersize = 2000
    cur.execute(
        "SELECT seq, kind, subject, payload, at, prev_hash, entry_hash"
        " FROM plangate_ledger_entries ORDER BY seq")
    for row in cur:
        h.update(repr(row).encode())
"""
"""The same floor on PostgreSQL: the rows streamed through a server-side cursor."""


def run_scripts(wanted: Sequence[str]) -> int:
    """Run each benchmark script; return 1 if any of them failed to run."""
    here = Path(__file__).resolve().parent
    python = real_python()
    failed = []
    for script in sorted(here.glob("*_bench.py")):
        if wanted and not any(name in script.name for name in wanted):
            continue
        print(f"==> {script.name}", flush=True)
        proc = subprocess.run([python, str(script)], cwd=here, check=False)
        if proc.returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"benchmarks that failed to run: {', '.join(failed)}")
        return 1
    return 0


_COMMAND_PEAK = (
    "import sys\n"
    "from plangate.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    "sys.stderr.write('VMHWM ' + (hwm[0].split()[1] if hwm else '0') + '\\n')\n"
    "sys.exit(code)\n"
)


def command_peak_mib(
    python: str, args: Sequence[str], repo: Path, env: dict[str, str], *, expect: int = 0
) -> float:
    """Peak resident memory (MiB) of one ``plangate ARGS``, read inside the process.

    Not the child's ``ru_maxrss``: the benchmark's own pages (the rows it just
    built, a grown ledger) can count in a child's maximum before ``exec`` replaces them.
    """
    proc = subprocess.run(
        [python, "-c", _COMMAND_PEAK, *args], cwd=repo, env=env, capture_output=True,
        check=False,
    )
    lines = [x for x in proc.stderr.decode().splitlines() if x.startswith("VMHWM ")]
    if proc.returncode != expect or not lines:
        raise SystemExit(f"plangate {' '.join(args)} failed in {repo}: "
                         f"{proc.stderr.decode()[-500:]}")
    return int(lines[-1].split()[1]) / 1024


def verify_peak_mib(python: str, repo: Path, env: dict[str, str]) -> float:
    """Peak resident memory (MiB) of one ``ledger verify`` (:func:`command_peak_mib`)."""
    return command_peak_mib(python, ["ledger", "verify"], repo, env)


def exit_code(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> int:
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, check=False).returncode


class Report:
    """The goals and the growth curves of one run."""

    def __init__(self) -> None:
        self.goals: list[dict[str, Any]] = []
        self.curves: list[dict[str, Any]] = []
        self.load_before = os.getloadavg()

    def goal(
        self,
        name: str,
        figure: float | None,
        limit: float,
        baseline: str,
        *,
        unit: str = "x",
        note: str = "",
    ) -> None:
        load = _load()
        met = figure is not None and figure <= limit
        self.goals.append(
            {
                "goal": name,
                "figure": figure,
                "limit": limit,
                "unit": unit,
                "baseline": baseline,
                "load": load,
                "met": met,
                "note": note,
            }
        )
        shown = "-" if figure is None else f"{figure:.2f}{unit}"
        print(
            f"  goal {name}: {shown} (<= {limit}{unit}) vs {baseline} "
            f"[{load}] {'met' if met else 'NOT MET'}{' - ' + note if note else ''}",
            flush=True,
        )

    def curve(
        self, name: str, n: int, t_n: float, t_10n: float, unit: str, *, flat: bool = False
    ) -> None:
        ratio = t_10n / max(t_n, 1e-9)
        limit = FLAT_MAX if flat else LINEAR_MAX
        ok = ratio <= limit
        self.curves.append(
            {
                "curve": name,
                "n": n,
                "t_n": t_n,
                "t_10n": t_10n,
                "unit": unit,
                "ratio": ratio,
                "shape": "flat" if flat else "linear",
                "met": ok,
                "load": _load(),
            }
        )
        print(
            f"  curve {name}: n={n:,} {t_n:.2f} {unit}, 10n={10 * n:,} {t_10n:.2f} {unit}, "
            f"ratio {ratio:.2f} ({'flat' if flat else 'linear'}: "
            f"{'met' if ok else 'NOT MET'}) [{_load()}]",
            flush=True,
        )


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


# -- hook ----------------------------------------------------------------------------------


def extend_ledger(repo: Path, count: int) -> None:
    """Append ``count`` correctly chained hook-decision entries after the ledger's head."""
    from plangate.canonical import canonical_text
    from plangate.ledger.chain import compute_entry_hash

    path = repo / ".plangate" / "ledger.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    seq, prev = conn.execute("SELECT seq, entry_hash FROM ledger_head").fetchone()
    payload = {"verdict": "ALLOW", "tool": "Write", "paths": ["src/app.py"], "reasons": []}
    text = canonical_text(payload)
    at = "2026-12-02T10:00:00Z"
    rows = []
    for seq_next in range(seq + 1, seq + count + 1):
        entry_hash = compute_entry_hash(
            seq=seq_next,
            kind="hook_decision",
            subject="bench",
            payload=payload,
            at=at,
            prev_hash=prev,
        )
        rows.append((seq_next, "hook_decision", "bench", text, at, prev, entry_hash))
        prev = entry_hash
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO ledger_entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("UPDATE ledger_head SET seq = ?, entry_hash = ?", (rows[-1][0], prev))
    conn.execute("COMMIT")
    conn.close()


def bench_hook(report: Report, python: str, env: dict[str, str], full: bool) -> None:
    import hook_bench

    calls = 60 if full else 25
    baseline = [python, "-c", "import json,sys; json.load(sys.stdin)"]
    hook = [python, "-m", "plangate.hooks", "claude"]
    with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
        repo = hook_bench.build_repo(Path(tmp))
        write = hook_bench._payload(
            repo, "Write", {"file_path": str(repo / "src/app.py"), "content": "x"}
        )
        task_env = dict(env, PLANGATE_TASK="TASK-0001")
        rows = _interleave(hook, baseline, write, task_env, repo, calls=calls, expect=0)
        report.goal(
            "hook without a helper, allowed Write, p50",
            rows["p50"],
            1.3,
            f"bare JSON-reading interpreter ({rows['base_p50_ms']:.1f} ms)",
        )
        report.goal(
            "hook without a helper, allowed Write, CPU p50",
            rows["cpu_p50"],
            1.3,
            "bare JSON-reading interpreter",
        )
        bench_hookd(report, python, env, repo=repo, payload=write, task_env=task_env,
                    calls=calls)
        bench_launcher(report, calls)
        # The hook's time against the ledger's length: no PLANGATE_TASK, so the hook
        # looks the active task and the open run up in the ledger.
        protected = hook_bench._payload(repo, "Write", {"file_path": "CLAUDE.md"})
        sizes = (1_000, 10_000, 100_000) if full else (1_000, 10_000)
        figures = []
        have = 0
        for size in sizes:
            extend_ledger(repo, size - have)
            have = size
            rows = _interleave(hook, baseline, protected, env, repo, calls=calls, expect=2)
            figures.append(rows["cpu_p50_ms"])
            report.goal(
                f"hook, no task, {size:,} ledger entries, CPU p50",
                rows["cpu_p50"],
                1.3,
                f"bare interpreter ({rows['base_p50_ms']:.1f} ms)",
            )
        report.curve(
            "hook CPU vs ledger entries (p50)",
            sizes[-2],
            figures[-2],
            figures[-1],
            "ms",
            flat=True,
        )


def bench_launcher(report: Report, calls: int) -> None:
    """The committed line as installed (``plangate-hook``, the sh launcher, from a wheel in a
    throwaway virtual environment) without and with a helper, in both environments of
    ``benchmarks/launcher_bench.py``; its console script, the line before, as a note."""
    import launcher_bench

    result = launcher_bench.run(calls)
    for name in ("heavy-site", "clean"):
        for phase, goal in (("without-helper", launcher_bench.WITHOUT_GOAL),
                            ("with-helper", launcher_bench.WITH_GOAL),
                            ("native, with-helper", launcher_bench.WITH_GOAL)):
            if phase not in result[name]:
                continue
            rows = result[name][phase]
            floor, launcher, before = rows["floor"], rows["launcher"], rows["python-entry"]
            report.goal(
                f"committed line ({name} venv), {phase.replace('-', ' ')}, allowed Write, p50",
                launcher["ratio_wall"],
                goal,
                f"the venv's bare JSON-reading interpreter ({floor['wall_ms']:.1f} ms)",
                note=(f"launcher {launcher['wall_ms']:.1f} ms, p95 {launcher['ratio_p95']:.2f}x, "
                      f"CPU {launcher['ratio_cpu']:.2f}x; its console script "
                      f"{before['ratio_wall']:.2f}x"),
            )


def bench_hookd(
    report: Report,
    python: str,
    env: dict[str, str],
    *,
    repo: Path,
    payload: bytes,
    task_env: dict[str, str],
    calls: int,
) -> None:
    """The hook through a real helper (wall time: the helper works in another process),
    with this interpreter and with a clean ``python -m venv`` of it, through the Python
    client and through the native client (built here with the real compiler)."""
    import hookd_bench

    with tempfile.TemporaryDirectory(prefix="plangate-hookd-run-") as runtime:
        os.chmod(runtime, 0o700)
        helper_env = dict(env, XDG_RUNTIME_DIR=runtime)
        helper = hookd_bench.start_helper(python, repo, helper_env)
        try:
            interpreters = [("", python)]
            venv = hookd_bench.clean_python(Path(runtime), python)
            if venv is not None:
                interpreters.append((", clean venv", venv))
            cases = []
            for label, client in interpreters:
                native = hookd_bench.build_native(client, repo, Path(runtime) / "cache")
                cases += [(label, client, None), (f"{label}, native client", client, native)]
            for label, client, native in cases:
                rows = hookd_bench.measure(
                    client, repo, helper.pid, payload, dict(task_env, XDG_RUNTIME_DIR=runtime),
                    calls=calls * 2, expect=0, native=native,
                )
                figures = (f"{rows['helper_p50_ms']:.1f} / {rows['floor_p50_ms']:.1f} ms p50, "
                           f"{rows['helper_p95_ms']:.1f} / {rows['floor_p95_ms']:.1f} ms p95")
                cpu = (f"CPU: client {rows['client_cpu_p50_ms']:.1f} + helper "
                       f"{rows['helper_cpu_mean_ms']:.1f} ms vs floor "
                       f"{rows['floor_cpu_p50_ms']:.1f} ms")
                report.goal(
                    f"hook through the helper{label}, allowed Write, p50",
                    rows["ratio_p50"],
                    hookd_bench.P50_GOAL,
                    f"bare Python floor, wall time ({figures})",
                    note=cpu,
                )
                report.goal(
                    f"hook through the helper{label}, allowed Write, p95",
                    rows["ratio_p95"],
                    hookd_bench.P95_GOAL,
                    "bare Python floor, wall time",
                )
        finally:
            helper.terminate()
            helper.wait(30)


def _interleave(
    subject: list[str],
    baseline: list[str],
    stdin: bytes,
    env: dict[str, str],
    cwd: Path,
    *,
    calls: int,
    expect: int,
) -> dict[str, float]:
    import hook_bench

    for _ in range(3):
        hook_bench._time(baseline, stdin, env, cwd)
        hook_bench._time(subject, stdin, env, cwd)
    sub, base, sub_cpu, base_cpu = [], [], [], []
    for _ in range(calls):
        wall, cpu, _code = hook_bench._time(baseline, stdin, env, cwd)
        base.append(wall)
        base_cpu.append(cpu)
        wall, cpu, code = hook_bench._time(subject, stdin, env, cwd)
        if code != expect:
            raise SystemExit(f"hook exited {code}, expected {expect}: {hook_bench._LAST_STDERR[0]}")
        sub.append(wall)
        sub_cpu.append(cpu)
    p50, b50 = statistics.median(sub), statistics.median(base)
    return {
        "p50": p50 / b50,
        "cpu_p50": statistics.median(sub_cpu) / max(statistics.median(base_cpu), 1e-9),
        "cpu_p50_ms": statistics.median(sub_cpu) * 1000,
        "p95": hook_bench._p95(sub) / hook_bench._p95(base),
        "p50_ms": p50 * 1000,
        "base_p50_ms": b50 * 1000,
    }


# -- c3 verify and status ------------------------------------------------------------------


def bench_c3_status(report: Report, python: str, env: dict[str, str], full: bool) -> None:
    import c3_verify_bench
    import status_bench

    with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
        repo = c3_verify_bench.build_fixture(Path(tmp))
        result = compare(
            "c3 verify",
            [python, "-m", "plangate", "c3", "verify", "TASK-0001"],
            [python, "-c", "import json, hashlib"],
            cwd=repo,
            runs=30 if full else 12,
            env=env,
        )
        report.goal(
            "c3 verify (CPU)",
            result["ratio_cpu"],
            1.25,
            f"python -c 'import json, hashlib' ({result['baseline_cpu_ms']:.1f} ms)",
        )
    sha256sum = shutil.which("sha256sum")
    if sha256sum is None:
        print("  status: sha256sum not installed, not measured")
        return
    sizes = (1_000, 10_000) if full else (100, 1_000)
    cpu = []
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
            repo, files = status_bench.build_fixture(Path(tmp), count)
            argv = [python, "-m", "plangate", "status"]
            # 70,000 paths do not fit on one command line: xargs hands them over in
            # batches (its own CPU, a few milliseconds, counts as the baseline's).
            listing = Path(tmp) / "files.lst"
            listing.write_bytes(b"".join(os.fsencode(f) + b"\0" for f in files))
            baseline = ["xargs", "-0", "-a", str(listing), sha256sum]
            result = compare(
                "status", argv, baseline, cwd=repo, runs=5 if full else 4, env=env
            )
            cpu.append(result["subject_cpu_ms"])
            if count >= 1_000:
                report.goal(
                    f"status, {count:,} tasks (CPU)",
                    result["ratio_cpu"],
                    status_bench.GOAL,
                    f"sha256sum over the same files ({result['baseline_cpu_ms']:.0f} ms)",
                )
                rss = command_peak_mib(python, ["status"], repo, env,
                                       expect=exit_code(argv, repo, env))
                report.goal(
                    f"status, {count:,} tasks, peak memory", rss, 50.0, "fixed limit", unit=" MiB"
                )
    report.curve("status CPU vs tasks", sizes[0], cpu[0], cpu[1], "ms")


# -- ci check ------------------------------------------------------------------------------

CI_GOAL = 1.5  # ci check CPU against a Python process running the same git diff
PATTERNS_GOAL = 1.2  # ci check with more wildcard surface patterns against the template

DIFF_BASELINE = (
    "import subprocess, sys\n"
    "subprocess.run(['git', 'diff', '-z', '--name-status', sys.argv[1], sys.argv[2]],"
    " capture_output=True, check=True)\n"
)
"""The ci check floor: a Python process that runs the same diff and nothing else."""


def ci_repo(root: Path, count: int, extra_patterns: int | None = None) -> tuple[Path, str, str]:
    """A repository whose head commit adds ``count`` files (no task: every path is judged).

    With ``extra_patterns`` (0 or more) the base commit holds the bundled template as
    the repository's own definition (its marker line removed) plus that many surface
    patterns without a literal segment: half of them by extension ('**/*.extN'), half
    by a word inside the name ('**/*secretN*'). Without it the base has no definition
    and the bundled template judges (as a repository that has not adopted PlanGate).
    """
    from plangate.surfaces import TEMPLATE_MARKER, bundled_template_bytes

    repo = root / f"ci-{count}-{extra_patterns}"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "gc.auto", "0")  # no background gc writing while the run measures
    (repo / "README.md").write_text("bench\n")
    if extra_patterns is not None:
        text = bundled_template_bytes().decode()
        text = "\n".join(line for line in text.splitlines() if TEMPLATE_MARKER not in line)
        for index in range(extra_patterns):
            pattern = f"**/*.ext{index}" if index % 2 == 0 else f"**/*secret{index}*"
            text += (f'\n[[surface]]\npattern = "{pattern}"\nclass = "human-owned"\n'
                     'reason = "bench"\n')
        (repo / ".plangate").mkdir()
        (repo / ".plangate" / "protected-surfaces.toml").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for index in range(count):
        folder = repo / "lib" / f"pkg{index % 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{index}.py").write_text(f"x = {index}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return repo, base, git(repo, "rev-parse", "HEAD")


def _ci_argv(python: str, base: str, head: str) -> list[str]:
    return [python, "-m", "plangate", "ci", "check", "--base", base, "--head", head]


def bench_ci(report: Report, python: str, env: dict[str, str], full: bool) -> None:
    """``ci check`` against its floor at 1k, 10k and 100k changed files, and with 20 and
    200 more surface patterns without a literal segment against the bundled template."""
    sizes = (1_000, 10_000, 100_000)
    cpu = []
    with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
        for count in sizes:
            repo, base, head = ci_repo(Path(tmp), count)
            argv = _ci_argv(python, base, head)
            result = compare(
                "ci check",
                argv,
                [python, "-c", DIFF_BASELINE, base, head],
                cwd=repo,
                runs=(7 if full else 5) if count < 100_000 else 3,
                env=env,
                expect_subject=exit_code(argv, repo, env),
            )
            cpu.append(result["subject_cpu_ms"])
            report.goal(
                f"ci check, {count:,} changed files (CPU)",
                result["ratio_cpu"],
                CI_GOAL,
                f"python running git diff -z --name-status ({result['baseline_cpu_ms']:.0f} ms; "
                f"ci check {result['subject_cpu_ms']:.0f} ms)",
            )
            shutil.rmtree(repo)
        report.curve("ci check CPU vs changed files", sizes[0], cpu[0], cpu[1], "ms")
        report.curve("ci check CPU vs changed files", sizes[1], cpu[1], cpu[2], "ms")
        bench_ci_patterns(report, python, env, Path(tmp), full)


def bench_ci_patterns(
    report: Report, python: str, env: dict[str, str], tmp: Path, full: bool
) -> None:
    """The bundled template committed as the repository's definition, and the same with 20
    and 200 more patterns without a literal segment: the same changed files, read the same
    way, so the ratio is what the extra patterns cost."""
    count = 10_000
    repo, base, head = ci_repo(tmp, count, 0)
    template = _ci_argv(python, base, head)
    cpu = []
    for extra in (20, 200):
        more, more_base, more_head = ci_repo(tmp, count, extra)
        argv = _ci_argv(python, more_base, more_head)
        # Interleaved with the template run in the other repository (same changed files).
        result = compare(
            f"ci check +{extra} patterns",
            argv,
            template,
            cwd=more,
            runs=7 if full else 5,
            env=env,
            expect_subject=exit_code(argv, more, env),
            baseline_cwd=repo,
            expect_baseline=exit_code(template, repo, env),
        )
        cpu.append(result["subject_cpu_ms"])
        report.goal(
            f"ci check, {count:,} files, +{extra} patterns without a literal segment (CPU)",
            result["ratio_cpu"],
            PATTERNS_GOAL,
            f"ci check with the bundled template as the definition "
            f"({result['baseline_cpu_ms']:.0f} ms; +{extra}: {result['subject_cpu_ms']:.0f} ms)",
        )
    report.curve("ci check CPU vs surface patterns (+n)", 20, cpu[0], cpu[1], "ms", flat=True)


# -- ledger verify -------------------------------------------------------------------------


def bench_ledger(report: Report, python: str, env: dict[str, str], full: bool) -> None:
    import ledger_bench

    sizes = (10_000, 100_000) if full else (2_000, 20_000)
    cpu, rss = [], []
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
            repo = Path(tmp)
            git(repo, "init", "-q", "-b", "main")
            ledger_bench.load_sqlite(repo, ledger_bench.chain_rows(count))
            argv = [python, "-m", "plangate", "ledger", "verify"]
            base = [python, "-c", VERIFY_BASELINE, str(repo / ".plangate" / "ledger.sqlite3")]
            result = compare("ledger verify", argv, base, cwd=repo, runs=3, env=env)
            cpu.append(result["subject_cpu_ms"])
            peak = verify_peak_mib(python, repo, env)
            rss.append(peak)
            report.goal(
                f"ledger verify, {count:,} entries (CPU)",
                result["ratio_cpu"],
                2.5,
                f"read the rows and SHA-256 the same bytes ({result['baseline_cpu_ms']:.0f} ms)",
            )
    report.curve("ledger verify CPU vs entries", sizes[0], cpu[0], cpu[1], "ms")
    report.curve("ledger verify peak memory vs entries", sizes[0], rss[0], rss[1], "MiB", flat=True)
    pg_url = os.environ.get("PLANGATE_TEST_PG_URL")
    if not pg_url:
        print("  ledger verify on PostgreSQL: PLANGATE_TEST_PG_URL not set, not measured")
        return
    cpu, rss = [], []
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp, ledger_bench.fresh_pg(
            pg_url
        ) as url:
            repo = Path(tmp)
            git(repo, "init", "-q", "-b", "main")
            ledger_bench.load_pg(url, ledger_bench.chain_rows(count))
            pg_env = dict(env, PLANGATE_LEDGER_URL=url)
            argv = [python, "-m", "plangate", "ledger", "verify"]
            base = [python, "-c", VERIFY_BASELINE_PG, url]
            result = compare("ledger verify (pg)", argv, base, cwd=repo, runs=3, env=pg_env)
            cpu.append(result["subject_cpu_ms"])
            peak = verify_peak_mib(python, repo, pg_env)
            rss.append(peak)
            report.goal(
                f"ledger verify on PostgreSQL, {count:,} entries (CPU)",
                result["ratio_cpu"],
                2.5,
                f"stream the rows and SHA-256 the same bytes ({result['baseline_cpu_ms']:.0f} ms)",
            )
    report.curve("ledger verify (pg) CPU vs entries", sizes[0], cpu[0], cpu[1], "ms")
    report.curve(
        "ledger verify (pg) peak memory vs entries", sizes[0], rss[0], rss[1], "MiB", flat=True
    )


# -- report ----------------------------------------------------------------------------------


REPORT_PEAK_MIB_MAX = 100.0
"""The report's peak resident memory at any ledger size (it streams the ledger)."""


def bench_report(report: Report, python: str, env: dict[str, str], full: bool) -> None:
    import report_bench

    sizes = (10_000, 100_000) if full else (2_000, 20_000)
    cpu, rss = [], []
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix="plangate-bench-") as tmp:
            repo = report_bench.make_repo(Path(tmp), count)
            page = str(Path(tmp) / "report.html")
            argv = [python, "-m", "plangate", "report", "-o", page]
            base = [python, "-m", "plangate", "ledger", "verify"]
            result = compare("report", argv, base, cwd=repo, runs=3, env=env)
            cpu.append(result["subject_cpu_ms"])
            peak = command_peak_mib(python, ["report", "-o", page], repo, env)
            rss.append(peak)
            report.goal(
                f"report, {count:,} entries (CPU)",
                result["ratio_cpu"],
                report_bench.TIME_RATIO_MAX,
                f"ledger verify on the same ledger ({result['baseline_cpu_ms']:.0f} ms)",
            )
            report.goal(
                f"report peak memory, {count:,} entries",
                peak,
                REPORT_PEAK_MIB_MAX,
                "an absolute bound: the ledger is streamed",
                unit=" MiB",
            )
    report.curve("report CPU vs entries", sizes[0], cpu[0], cpu[1], "ms")
    report.curve("report peak memory vs entries", sizes[0], rss[0], rss[1], "MiB", flat=True)


# -- in-process curves: patterns and plan size ---------------------------------------------


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best * 1000


def bench_in_process(report: Report) -> None:
    from plangate.paths import match_any
    from plangate.plan.scope import derive_scope

    paths = [f"lib/pkg{i % 100}/m{i}.py" for i in range(2_000)]

    def patterns(count: int) -> list[str]:
        return [f"src/mod{i}/**/*.py" for i in range(count)]

    def match(count: int) -> Callable[[], object]:
        pats = patterns(count)
        return lambda: [match_any(pats, p, casefold=True) for p in paths]

    report.curve(
        "matching 2,000 paths vs patterns (CPU)", 5, _best(match(5)), _best(match(50)), "ms"
    )

    def plan(count: int) -> bytes:
        lines = "".join(f"- `src/pkg{i}/mod{i}.py`\n" for i in range(count))
        return (
            b"# Plan\n\n## Goal\n\nBench.\n\n## Files / Components to Touch\n\n"
            + lines.encode()
            + b"\n## Testing Strategy\n\nVerification Automation: `true`\n"
        )

    small, large = plan(200), plan(2_000)
    report.curve(
        "plan scope vs plan size (paths, CPU)",
        200,
        _best(lambda: derive_scope(small)),
        _best(lambda: derive_scope(large)),
        "ms",
    )


# -- output --------------------------------------------------------------------------------


def print_summary(report: Report, python: str) -> None:
    print()
    one, five, fifteen = report.load_before
    print(
        f"interpreter {python}; load average at the start {one:.2f} {five:.2f} {fifteen:.2f}, "
        f"at the end: {load_average()}"
    )
    print(f"{'goal':52} {'figure':>10} {'limit':>9}  {'result':8} baseline")
    for row in report.goals:
        shown = "-" if row["figure"] is None else f"{row['figure']:.2f}{row['unit']}"
        print(
            f"{row['goal']:52} {shown:>10} {row['limit']:>8}{row['unit'].strip() or 'x'}  "
            f"{'met' if row['met'] else 'NOT MET':8} {row['baseline']} [{row['load']}]"
        )
    print(f"{'growth curve':52} {'n':>8} {'t(n)':>10} {'t(10n)':>10} {'ratio':>6}  result")
    for row in report.curves:
        print(
            f"{row['curve']:52} {row['n']:>8,} {row['t_n']:>8.2f}{row['unit']:>2} "
            f"{row['t_10n']:>8.2f}{row['unit']:>2} {row['ratio']:>6.2f}  "
            f"{row['shape']} {'met' if row['met'] else 'NOT MET'}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the sizes the goals name (slow)")
    parser.add_argument("--json", action="store_true", help="also print the report as JSON")
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        choices=["hook", "c3", "ci", "ledger", "report", "inprocess"],
    )
    parser.add_argument(
        "--scripts",
        nargs="*",
        default=None,
        metavar="NAME",
        help="run the benchmark scripts instead",
    )
    args = parser.parse_args()
    if args.scripts is not None:
        return run_scripts(args.scripts)
    python = real_python()
    env = {k: v for k, v in bench_env().items() if not k.startswith(("CLAUDE", "CODEX", "CURSOR"))}
    report = Report()
    steps: dict[str, Callable[[], None]] = {
        "inprocess": lambda: bench_in_process(report),
        "hook": lambda: bench_hook(report, python, env, args.full),
        "c3": lambda: bench_c3_status(report, python, env, args.full),
        "ci": lambda: bench_ci(report, python, env, args.full),
        "ledger": lambda: bench_ledger(report, python, env, args.full),
        "report": lambda: bench_report(report, python, env, args.full),
    }
    for name, step in steps.items():
        if args.only is None or name in args.only:
            print(f"==> {name}", flush=True)
            step()
    print_summary(report, python)
    if args.json:
        print(json.dumps({"goals": report.goals, "curves": report.curves}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
