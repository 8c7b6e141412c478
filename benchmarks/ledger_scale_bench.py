"""Ledger at scale: verify's memory and the hooks' lookups as the ledger grows tenfold.

Usage::

    python3 benchmarks/ledger_scale_bench.py [--entries 10000] [--pg-url postgresql://...]

For ``n`` and ``10 n`` entries (a realistic mix: hook decisions, an exec run every
50 entries, all ended, expired override grants, one entry every 30 seconds so the
larger ledger spans ten times the days), it prints, as ratios measured in the same run:

- peak RSS of a ``plangate ledger verify`` process at ``10 n`` over ``n`` (goal: flat,
  at most 1.5x; the rows are streamed, never held);
- verify time at ``10 n`` over ``n`` (linear: about 10x);
- the hooks' ledger lookups (the open exec run, the live override grants) at ``10 n``
  over ``n`` (goal: flat, at most 2x: they read recent history, not the whole ledger).

With ``--pg-url`` (or ``PLANGATE_TEST_PG_URL``) verify's memory is measured on
PostgreSQL too (a fresh database per size, dropped afterwards).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import bench_env, real_python
from ledger_bench import fresh_pg

from plangate.canonical import canonical_text
from plangate.clock import format_utc, utc_now
from plangate.ledger.chain import GENESIS_PREV_HASH, entry_hash_from_text

MEMORY_GOAL = 1.5
LOOKUP_GOAL = 2.0


def _entry(seq: int) -> tuple[str, str, dict[str, Any]]:
    if seq % 50 == 1:
        return "exec_started", "TASK-0001", {"run_id": f"r{seq}", "task_id": "TASK-0001"}
    if seq % 50 == 40:
        return "exec_ended", "TASK-0001", {"run_id": f"r{seq - 39}", "exit_code": 0}
    if seq % 997 == 0:
        return (
            "override_granted",
            f"ovr-{seq}",
            {
                "grant_id": f"ovr-{seq}",
                "patterns": ["src/**"],
                "one_shot": False,
                "expires_at": "2026-01-01T00:00:00Z",
                "reason": "old",
                "granted_by": "human",
            },
        )
    return "hook_decision", "TASK-0001", {"decision": "allow", "targets": [f"src/f{seq}.py"]}


def chain(count: int) -> list[tuple[Any, ...]]:
    """``count`` chained rows, one every 30 seconds up to now."""
    now = utc_now()
    rows: list[tuple[Any, ...]] = []
    prev = GENESIS_PREV_HASH
    for seq in range(1, count + 1):
        kind, subject, payload = _entry(seq)
        text = canonical_text(payload)
        at = format_utc(now - timedelta(seconds=30 * (count - seq)))
        entry_hash = entry_hash_from_text(
            seq=seq, kind=kind, subject=subject, payload_text=text, at=at, prev_hash=prev
        )
        rows.append((seq, kind, subject, text, at, prev, entry_hash))
        prev = entry_hash
    return rows


def load(env: dict[str, str], repo: Path, rows: list[tuple[Any, ...]]) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(repo, env):
        pass  # creates the schema
    head = (rows[-1][0], rows[-1][6])
    url = env.get("PLANGATE_LEDGER_URL")
    if url is None:
        conn = sqlite3.connect(repo / ".plangate" / "ledger.sqlite3", isolation_level=None)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO ledger_entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        conn.execute("UPDATE ledger_head SET seq = ?, entry_hash = ?", head)
        conn.execute("COMMIT")
        conn.close()
        return
    import psycopg

    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO plangate_ledger_entries VALUES (%s, %s, %s, %s, %s, %s, %s)", rows
        )
        cur.execute("UPDATE plangate_ledger_head SET seq = %s, entry_hash = %s", head)


_MEASURED = (
    "import sys\n"
    "from plangate.cli.main import main\n"
    "code = main(['ledger', 'verify'])\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    "sys.stderr.write('VMHWM ' + (hwm[0].split()[1] if hwm else '0') + '\\n')\n"
    "sys.exit(code)\n"
)


def verify_process(repo: Path, env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB, the process's own VmHWM) of one ``ledger verify``.

    The peak is read inside the measured process: a parent's resident pages
    survive ``fork`` and ``exec`` in the child's resource-usage maximum.
    """
    start = time.perf_counter()
    proc = subprocess.run(
        [real_python(), "-c", _MEASURED],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"ledger verify failed in {repo}: {proc.stderr.decode()}")
    marker = [line for line in proc.stderr.decode().splitlines() if line.startswith("VMHWM ")]
    return elapsed, int(marker[-1].split()[1]) if marker else 0


def lookup_seconds(repo: Path, env: dict[str, str], rounds: int = 20) -> float:
    """Median seconds of the hooks' two ledger lookups (open run, live grants)."""
    from plangate.hooks.override import verified_override_entries
    from plangate.ledger import open_ledger
    from plangate.session.openrun import open_run

    samples = []
    with open_ledger(repo, env, must_exist=True) as ledger:
        for _ in range(rounds):
            now = utc_now()
            start = time.perf_counter()
            open_run(ledger, now)
            verified_override_entries(ledger, now)
            samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2]


def measure(size: int, base_env: dict[str, str], pg_url: str | None) -> dict[str, float]:
    rows = chain(size)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        (repo / ".git").mkdir()  # a repository root for the CLI
        env = dict(base_env)
        load(env, repo, rows)
        wall, rss = verify_process(repo, env)
        out = {"verify_s": wall, "verify_rss_kib": rss, "lookup_s": lookup_seconds(repo, env)}
        if pg_url:
            pg_repo = Path(tmp) / "repo-pg"
            (pg_repo / ".git").mkdir(parents=True)
            with fresh_pg(pg_url) as url:
                pg_env = dict(env, PLANGATE_LEDGER_URL=url)
                load(pg_env, pg_repo, rows)
                pg_wall, pg_rss = verify_process(pg_repo, pg_env)
                out["pg_verify_s"], out["pg_verify_rss_kib"] = pg_wall, pg_rss
                out["pg_lookup_s"] = lookup_seconds(pg_repo, pg_env)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000, help="n (the large size is 10 n)")
    parser.add_argument("--pg-url", default=os.environ.get("PLANGATE_TEST_PG_URL"))
    args = parser.parse_args()
    env = bench_env()
    small, large = args.entries, args.entries * 10
    a, b = measure(small, env, args.pg_url), measure(large, env, args.pg_url)
    print(f"ledger at {small:,} and {large:,} entries (ratios {large:,} / {small:,})")
    checks = [
        ("sqlite verify peak RSS", "verify_rss_kib", MEMORY_GOAL, "KiB"),
        ("sqlite verify time (linear)", "verify_s", None, "s"),
        ("sqlite hook lookups", "lookup_s", LOOKUP_GOAL, "s"),
    ]
    if args.pg_url:
        checks += [
            ("postgresql verify peak RSS", "pg_verify_rss_kib", MEMORY_GOAL, "KiB"),
            ("postgresql verify time (linear)", "pg_verify_s", None, "s"),
            ("postgresql hook lookups", "pg_lookup_s", LOOKUP_GOAL, "s"),
        ]
    failed = False
    for label, key, goal, unit in checks:
        ratio = b[key] / a[key] if a[key] else float("inf")
        verdict = "" if goal is None else (" met" if ratio <= goal else " NOT met")
        failed |= goal is not None and ratio > goal
        target = "" if goal is None else f", goal <= {goal}x"
        print(
            f"  {label}: {a[key]:.4g} {unit} -> {b[key]:.4g} {unit}: {ratio:.2f}x{target}{verdict}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
