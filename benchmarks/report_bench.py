"""Report benchmark: ``plangate report`` on 100,000 ledger entries, as a ratio of ``ledger verify``.

Usage::

    python3 benchmarks/report_bench.py [--entries 100000] [--repeats 3]

A SQLite ledger of mixed kinds (hook decisions, half of them denials, exec runs,
approvals) spread over 30 days is built with the ledger's own hash function in a
fresh repository with one approved task. Both commands run in-process on the same
ledger; the best of ``--repeats`` is printed, and the ratio is what to compare
between machines (the report verifies the chain itself, then reads the tasks and
draws the page, so it cannot be faster than ``verify``).
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from plangate.canonical import canonical_text
from plangate.ledger.chain import GENESIS_PREV_HASH, entry_hash_from_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ledger_bench import load_sqlite  # the sibling benchmark's loader


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


def chain_rows(count: int) -> list[tuple[Any, ...]]:
    """``count`` chained rows of mixed kinds over 30 days."""
    rows: list[tuple[Any, ...]] = []
    prev = GENESIS_PREV_HASH
    for seq in range(1, count + 1):
        kind, subject, payload = _payload(seq)
        text = canonical_text(payload)
        day = 1 + (seq * 30) // (count + 1)
        at = f"2026-11-{day:02d}T10:00:00Z"
        entry_hash = entry_hash_from_text(
            seq=seq, kind=kind, subject=subject, payload_text=text, at=at, prev_hash=prev
        )
        rows.append((seq, kind, subject, text, at, prev, entry_hash))
        prev = entry_hash
    return rows


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(base: Path, count: int) -> Path:
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
    from plangate.ledger import open_ledger

    with open_ledger(repo, {}) as ledger:  # creates the schema
        ledger.head()
    load_sqlite(repo, chain_rows(count))
    return repo


def run_cli(repo: Path, *argv: str) -> tuple[int, float]:
    from plangate.cli.context import Context
    from plangate.cli.main import main

    ctx = Context(
        cwd=repo, stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.BytesIO(b""), env={}
    )
    start = time.perf_counter()
    code = main(list(argv), ctx)
    return code, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plangate-report-bench-") as tmp:
        repo = make_repo(Path(tmp), args.entries)
        out = Path(tmp) / "report.html"
        verify, report = [], []
        for _ in range(args.repeats):
            code, seconds = run_cli(repo, "ledger", "verify")
            assert code == 0, "the benchmark ledger must verify"
            verify.append(seconds)
            code, seconds = run_cli(repo, "report", "-o", str(out))
            assert code == 0, "the report must be written"
            report.append(seconds)
        size = out.stat().st_size
    best_verify, best_report = min(verify), min(report)
    print(f"entries: {args.entries}")
    print(
        f"ledger verify: {best_verify:.2f} s   report (html): {best_report:.2f} s   "
        f"ratio report/verify: {best_report / best_verify:.2f}   page: {size / 1024:.0f} KiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
