"""The command of a prepared run: PLANGATE_TASK set, exit codes as a shell reports them."""

from __future__ import annotations

import sys
from pathlib import Path

from plangate.execution.command import run_verified
from plangate.execution.preflight import prepare
from plangate.verdict import Result

ACCEPTED = Result("ACCEPTED", (), {})


def _run(tmp_path: Path, *command: str) -> tuple[int, str | None]:
    run = prepare("TASK-0007", "a" * 40, command, ACCEPTED)
    outcome = run_verified(run, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    return outcome.exit_code, outcome.error


def test_the_task_is_in_the_environment_and_the_code_is_the_commands(tmp_path: Path) -> None:
    script = "import os, sys; sys.exit(0 if os.environ['PLANGATE_TASK'] == 'TASK-0007' else 9)"
    assert _run(tmp_path, sys.executable, "-c", script) == (0, None)
    assert _run(tmp_path, sys.executable, "-c", "raise SystemExit(5)") == (5, None)


def test_not_found_not_executable_and_signals(tmp_path: Path) -> None:
    code, error = _run(tmp_path, str(tmp_path / "missing"))
    assert code == 127 and error is not None and "not found" in error
    plain = tmp_path / "plain"
    plain.write_text("x")
    assert _run(tmp_path, str(plain))[0] == 126
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    assert _run(tmp_path, sys.executable, "-c", killed) == (128 + 15, None)
