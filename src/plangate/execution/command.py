"""Run the command of a prepared, verified run: the one place exec spawns a process.

The seam for isolation: :func:`run_verified` receives a
:class:`~plangate.execution.preflight.PreparedRun` (built only after the
approval verified against HEAD and the start was recorded) and returns how the
command ended. A sandboxed backend replaces the spawn here and nothing else.

The command runs as an argument list (no shell), with inherited stdio, in
``cwd``, with the caller's environment plus ``PLANGATE_TASK``. Exit code: the
command's own; 127 when it cannot be found, 126 when it cannot be executed,
128+N when it died of signal N (as a shell reports it).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from plangate.execution.preflight import CommandResult, PreparedRun

TASK_ENV = "PLANGATE_TASK"
"""The variable naming the run's task; the agent's hooks read it."""


def run_verified(run: PreparedRun, *, cwd: Path, env: Mapping[str, str]) -> CommandResult:
    """Run ``run.command`` and report its exit code (see the module docstring)."""
    command = list(run.command)
    child_env = dict(env)
    child_env[TASK_ENV] = run.task_id
    try:
        proc = subprocess.run(command, cwd=cwd, env=child_env, check=False)
    except FileNotFoundError:
        return CommandResult(127, f"command not found: {command[0]}")
    except PermissionError:
        return CommandResult(126, f"command not executable: {command[0]}")
    except OSError as exc:
        return CommandResult(126, f"cannot run {command[0]}: {exc.strerror or exc}")
    code = proc.returncode
    if code < 0:  # killed by a signal: report it as a shell would
        code = 128 - code
    return CommandResult(code)
