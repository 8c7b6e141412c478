"""``plangate ledger verify`` beside processes that append (as ``exec`` does: open, append,
close) reads one consistent snapshot: an intact ledger is never reported damaged or tampered.

Real processes on both sides: the appenders are forked, each verification is its own
``plangate`` process. Without the snapshot rule about one verification in eight saw a
half-written file and said ``LEDGER_INTEGRITY_FAILED``; forty in a row make that visible.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.ledger import Backend, backend_fixture  # noqa: F401 -- the fixture

VERIFICATIONS = 40
PRELOAD = 800


def _appending_exec(repo: str, env: dict[str, str], stop: Any) -> None:
    """Each run opens the ledger, appends its start and end, and closes it, like ``exec``."""
    from plangate.ledger import open_ledger

    i = 0
    while not stop.is_set():
        with open_ledger(Path(repo), env) as ledger:
            ledger.append("exec_started", "BESIDE", {"i": i})
            ledger.append("exec_ended", "BESIDE", {"i": i, "blob": "x" * 20_000})
        i += 1


def _verify(backend: Backend) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "plangate", "ledger", "verify", "--json"],
        cwd=backend.repo, env=_base_env() | backend.env, capture_output=True, check=False,
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else {"stderr": proc.stderr}


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("PLANGATE_LEDGER_URL",)}


def test_verify_beside_appending_processes_never_reports_damage(backend: Backend) -> None:
    with backend.open() as ledger:
        # A ledger of some size, so that each verification overlaps several appends.
        for i in range(PRELOAD):
            ledger.append("exec_started", "BESIDE", {"i": -1 - i, "blob": "y" * 4_000})
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    writers = [
        ctx.Process(target=_appending_exec, args=(str(backend.repo), backend.env, stop))
        for _ in range(2)
    ]
    for proc in writers:
        proc.start()
    seen: list[tuple[int, str, list[str], int]] = []
    try:
        for _ in range(VERIFICATIONS):
            code, body = _verify(backend)
            seen.append((code, body.get("verdict", ""),
                         [r["code"] for r in body.get("reasons", [])],
                         int(body.get("facts", {}).get("entries", 0) or 0)))
    finally:
        stop.set()
        for proc in writers:
            proc.join(timeout=300)
    assert all(proc.exitcode == 0 for proc in writers)
    bad = [s for s in seen if s[:2] != (0, "INTACT")]
    assert bad == [], bad
    # The verifications really overlapped the appends: they saw different lengths.
    assert len({s[3] for s in seen}) > 1
    with backend.open(create=False) as reader:
        assert reader.verify().verdict == "INTACT"
