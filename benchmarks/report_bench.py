"""Report benchmark: ``plangate report`` at n and 10n ledger entries, time as a ratio of
``ledger verify`` on the same ledger, and the report's peak memory.

Usage::

    python3 benchmarks/report_bench.py [--entries 100000] [--repeats 3] [--no-10n]

A SQLite ledger of mixed kinds (hook decisions, half of them denials, exec runs, C3
issues) spread over 30 days is built with the ledger's own hash function (streamed
into the database, never held whole) in a fresh repository. For n and 10n entries,
``plangate report`` (HTML) and ``plangate ledger verify`` each run in their own child
process, interleaved ``--repeats`` times; each child reports its own wall time and
its peak resident memory (``VmHWM``, read inside the child: a forked child's
``ru_maxrss`` can count the parent's pages). The best time of each is kept.

Goals (printed as met / not met; a missed goal is reported, not failed):

- time: report / ledger verify <= 2.0 at each size (the report verifies the chain in
  the same pass it folds the figures, then reads the tasks and draws the page);
- memory: the report's peak <= 100 MiB at 10n (1,000,000 entries by default).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plangate.canonical import canonical_text
from plangate.ledger.chain import GENESIS_PREV_HASH, entry_hash_from_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ledger_bench import load_sqlite_stream  # the sibling benchmark's loader

TIME_RATIO_MAX = 2.0
"""report / ledger verify, wall time, at every size."""
PEAK_MIB_MAX = 100.0
"""The report's peak resident memory at the larger size."""

_CHILD = (
    "import sys, time\n"
    "start = time.perf_counter()\n"
    "from plangate.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "took = time.perf_counter() - start\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    "sys.stderr.write(f'BENCH {took} ' + (hwm[0].split()[1] if hwm else '0') + '\\n')\n"
    "sys.exit(code)\n"
)
"""One ``plangate`` command; its wall time (imports included) and ``VmHWM`` on stderr."""


def _payload(seq: int) -> tuple[str, str, dict[str, Any]]:
    task = f"TASK-{seq % 50:04d}"
    if seq % 10 < 6:
        deny = seq % 2 == 0
        return (
            "hook_decision",
            task,
            {
                "host": "claude",
                "event": "pre",
                "tool": "Write",
                "action": "write",
                "verdict": "DENY" if deny else "ALLOW",
                "codes": ["HOOK_OUTSIDE_SCOPE"] if deny else [],
                "targets": [f"src/module_{seq % 97}.py"],
                "task_id": task,
            },
        )
    if seq % 10 < 8:
        return "exec_started", task, {"program": "claude", "head": "a" * 40, "task_id": task}
    if seq % 10 == 8:
        return (
            "exec_ended",
            task,
            {"exit_code": 0, "post_verdict": "ACCEPTED", "drift": [], "task_id": task},
        )
    return "c3_issue", task, {"verdict": "ACCEPTED", "facts": {"task_id": task}}


def chain_rows(count: int) -> Iterator[tuple[Any, ...]]:
    """``count`` chained rows of mixed kinds over 30 days, one at a time."""
    prev = GENESIS_PREV_HASH
    for seq in range(1, count + 1):
        kind, subject, payload = _payload(seq)
        text = canonical_text(payload)
        day = 1 + (seq * 30) // (count + 1)
        at = f"2026-11-{day:02d}T10:00:00Z"
        entry_hash = entry_hash_from_text(
            seq=seq, kind=kind, subject=subject, payload_text=text, at=at, prev_hash=prev
        )
        yield (seq, kind, subject, text, at, prev, entry_hash)
        prev = entry_hash


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(base: Path, count: int) -> Path:
    """A fresh repository with one commit and a ledger of ``count`` entries."""
    repo = base / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(
        repo,
        "-c",
        "user.name=b",
        "-c",
        "user.email=b@example.invalid",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "initial",
    )
    load_sqlite_stream(repo, chain_rows(count))
    return repo


def run_child(repo: Path, *argv: str) -> tuple[float, float]:
    """(wall seconds, peak MiB) of one ``plangate ARGV`` in a child process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGATE_")}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], cwd=repo, env=env, capture_output=True, check=False
    )
    lines = [x for x in proc.stderr.decode().splitlines() if x.startswith("BENCH ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"plangate {' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    _tag, took, hwm = lines[-1].split()
    return float(took), int(hwm) / 1024


def measure(count: int, repeats: int) -> dict[str, float]:
    """Best wall times of verify and report, and the report's peak memory, at ``count``."""
    with tempfile.TemporaryDirectory(prefix="plangate-report-bench-") as tmp:
        repo = make_repo(Path(tmp), count)
        out = Path(tmp) / "report.html"
        verify, report, peak, verify_peak = [], [], [], []
        run_child(repo, "ledger", "verify")  # warm the page cache and .pyc files
        for _ in range(repeats):
            seconds, mib = run_child(repo, "ledger", "verify")
            verify.append(seconds)
            verify_peak.append(mib)
            seconds, mib = run_child(repo, "report", "-o", str(out))
            report.append(seconds)
            peak.append(mib)
        size = out.stat().st_size
    return {
        "entries": count,
        "verify_s": min(verify),
        "report_s": min(report),
        "ratio": min(report) / min(verify),
        "report_peak_mib": max(peak),
        "verify_peak_mib": max(verify_peak),
        "page_kib": size / 1024,
    }


def _verdict(met: bool) -> str:
    return "goal met" if met else "goal NOT MET"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000, help="n (10n is measured too)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-10n", action="store_true", help="measure n only")
    args = parser.parse_args()
    sizes = [args.entries] if args.no_10n else [args.entries, 10 * args.entries]
    results = []
    for count in sizes:
        row = measure(count, args.repeats)
        results.append(row)
        print(
            f"entries {count:>9,}: ledger verify {row['verify_s']:.2f} s "
            f"({row['verify_peak_mib']:.0f} MiB)   report (html) {row['report_s']:.2f} s "
            f"({row['report_peak_mib']:.0f} MiB)   ratio report/verify {row['ratio']:.2f}   "
            f"page {row['page_kib']:.0f} KiB",
            flush=True,
        )
    print()
    for row in results:
        print(
            f"time, {row['entries']:,} entries: report/verify {row['ratio']:.2f} "
            f"(<= {TIME_RATIO_MAX}): {_verdict(row['ratio'] <= TIME_RATIO_MAX)}"
        )
    largest = results[-1]
    print(
        f"memory, {largest['entries']:,} entries: report peak {largest['report_peak_mib']:.0f} MiB "
        f"(<= {PEAK_MIB_MAX:.0f} MiB): {_verdict(largest['report_peak_mib'] <= PEAK_MIB_MAX)}"
    )
    if len(results) == 2:
        growth = results[1]["report_peak_mib"] / results[0]["report_peak_mib"]
        print(f"memory growth n -> 10n: x{growth:.2f} (flat is about 1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
