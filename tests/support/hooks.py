"""Helpers shared by the hooks tests: payloads, in-process hook runs, approved repos."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

from plangate.cli.context import Context
from plangate.cli.main import main
from support.cli import CliResult
from support.repo import commit_all
from support.taskkit import approve_task, make_task


def claude_payload(
    event: str,
    cwd: Path | str,
    tool: str | None = None,
    tool_input: dict[str, Any] | None = None,
    **extra: Any,
) -> bytes:
    """A Claude Code hook payload."""
    body: dict[str, Any] = {
        "session_id": "s-1",
        "cwd": str(cwd),
        "hook_event_name": event,
        "transcript_path": "/dev/null",
    }
    if tool is not None:
        body["tool_name"] = tool
        body["tool_input"] = tool_input or {}
    body.update(extra)
    return json.dumps(body).encode()


def cursor_payload(event: str, root: Path | str, **fields: Any) -> bytes:
    """A Cursor hook payload."""
    body: dict[str, Any] = {
        "hook_event_name": event,
        "conversation_id": "c-1",
        "generation_id": "g-1",
        "workspace_roots": [str(root)],
    }
    body.update(fields)
    return json.dumps(body).encode()


def hook_env(task: str | None = None, **extra: str) -> dict[str, str]:
    """The process environment, with ``PLANGATE_TASK`` set when a task is given."""
    env = {k: v for k, v in os.environ.items() if k != "PLANGATE_TASK"}
    if task is not None:
        env["PLANGATE_TASK"] = task
    env.update(extra)
    return env


def run_hook(cwd: Path, host: str, stdin: bytes, env: dict[str, str] | None = None) -> CliResult:
    """Run ``plangate hook <host>`` in-process with ``stdin``."""
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(
        cwd=Path(cwd),
        stdout=out,
        stderr=err,
        stdin=io.BytesIO(stdin),
        env=hook_env() if env is None else env,
    )
    code = main(["hook", host], ctx)
    return CliResult(code, out.getvalue(), err.getvalue())


def approved_repo(repo: Path, task_id: str = "TASK-0001") -> Path:
    """``repo`` with ``src/app.py`` committed and ``task_id`` approved at HEAD."""
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    commit_all(repo, "app")
    make_task(repo, task_id)
    approve_task(repo, task_id)
    return repo


def init_ledger(repo: Path) -> Path:
    """Create the repository's ledger (as 'plangate hooks install' does); return ``repo``."""
    from plangate.ledger import open_ledger

    with open_ledger(repo, {}) as ledger:
        ledger.append("hooks_installed", "-", {"hosts": ["test"]})
    return repo


def ledger_decisions(repo: Path) -> list[dict[str, Any]]:
    """Payloads of every ``hook_decision`` entry in the repository's ledger."""
    from plangate.ledger import open_ledger

    with open_ledger(repo, {}, create=False) as ledger:
        return [dict(e.payload) for e in ledger.entries(kind="hook_decision")]


def developer_bin(directory: Path, *, light: bool = True) -> Path:
    """A developer's own PlanGate on PATH: ``directory`` holding ``plangate-hook`` (light)
    or ``plangate``, each a script that runs this checkout with this interpreter."""
    import stat
    import sys

    import plangate

    directory.mkdir(parents=True, exist_ok=True)
    src = str(Path(plangate.__file__).resolve().parents[1])
    if light:
        name, run = "plangate-hook", "-m plangate.hooks"
    else:
        name, run = "plangate", "-c 'import sys; from plangate.cli.main import entrypoint; entrypoint()'"
    script = directory / name
    script.write_text(
        f"#!/bin/sh\nPYTHONPATH={src} exec {sys.executable} -P {run} \"$@\"\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


def run_configured(command: str, cwd: Path, stdin: bytes, path: str, **env: str):
    """Run a configured hook command line as the host does (``/bin/sh -c``) with ``PATH``."""
    import subprocess

    base = {k: v for k, v in os.environ.items() if k not in ("PLANGATE_TASK", "PYTHONPATH")}
    base["PATH"] = path
    base.update(env)
    return subprocess.run(
        ["/bin/sh", "-c", command], cwd=cwd, input=stdin, capture_output=True, env=base,
        check=False,
    )


def claude_post_read(repo: Path) -> tuple[int, str]:
    """A Claude Code PostToolUse after a Read of README.md, no task in the environment:
    the exit code and everything the hook printed."""
    payload = claude_payload(
        "PostToolUse", repo, "Read", {"file_path": str(repo / "README.md")},
        tool_response={"type": "text"},
    )
    result = run_hook(repo, "claude", payload, hook_env(None))
    return result.code, result.err + result.out


def claude_stop(repo: Path) -> tuple[int, str]:
    """A Claude Code Stop, no task in the environment: the exit code and the output."""
    result = run_hook(repo, "claude", claude_payload("Stop", repo, stop_hook_active=False),
                      hook_env(None))
    return result.code, result.err + result.out
