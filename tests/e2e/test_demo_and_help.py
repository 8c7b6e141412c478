"""The README's main command and every command's --help, as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from plangate.cli.main import COMMANDS


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "GIT_"))}
    return subprocess.run(
        [sys.executable, "-m", "plangate", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def test_plangate_demo_walks_every_journey() -> None:
    proc = _run("demo")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Demo complete" in proc.stdout
    assert "UNEXPECTED" not in proc.stdout
    assert "not available in this build" not in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("command", sorted(set(COMMANDS)))
def test_every_command_has_help(command: str) -> None:
    proc = _run(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout.lower()
    assert "Traceback" not in proc.stderr


def test_top_level_help_lists_every_command_and_exit_codes() -> None:
    proc = _run("--help")
    assert proc.returncode == 0
    for command in COMMANDS:
        assert command in proc.stdout
    assert "exit codes" in proc.stdout


def test_no_arguments_is_a_usage_error_and_unknown_command_too() -> None:
    assert _run().returncode == 2
    unknown = _run("frobnicate")
    assert unknown.returncode == 2 and "unknown command" in unknown.stderr
