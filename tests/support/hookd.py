"""Real hook helpers for tests: start one for a repository, run the client, ask its state."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plangate

LAUNCH = str(Path(plangate.__file__).resolve().parent / "hooks" / "hookd_launch.py")
"""The client launcher of the plangate under test (the worktree's ``src``)."""


@dataclass
class Helper:
    """A running ``plangate hookd run`` process and where it listens."""

    proc: subprocess.Popen[bytes]
    socket: str
    env: dict[str, str]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def runtime_env(base: Mapping[str, str], runtime: Path) -> dict[str, str]:
    """``base`` with ``XDG_RUNTIME_DIR`` at ``runtime`` (created with mode 0700)."""
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    runtime.chmod(0o700)
    return {**base, "XDG_RUNTIME_DIR": str(runtime)}


def start_helper(repo: Path, env: Mapping[str, str], idle: float = 120.0) -> Helper:
    """Start a real helper for ``repo`` and wait for its ``ready`` line."""
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "plangate", "hookd", "run", "--idle-seconds", str(idle)],
        cwd=repo,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line.startswith("ready "):
        proc.kill()
        _out, err = proc.communicate(timeout=10)
        raise AssertionError(f"helper did not start: {line!r} {err.decode()!r}")
    return Helper(proc, line.split(" ", 2)[2].strip(), dict(env))


@contextmanager
def running_helper(repo: Path, env: Mapping[str, str], idle: float = 120.0) -> Iterator[Helper]:
    """A helper for ``repo`` for the duration of the block."""
    helper = start_helper(repo, env, idle)
    try:
        yield helper
    finally:
        helper.stop()


def run_client(
    repo: Path, host: str, stdin: bytes, env: Mapping[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """The installed fast hook command: ``python -S -I hookd_launch.py HOST``."""
    return subprocess.run(
        [sys.executable, "-S", "-I", LAUNCH, host],
        cwd=repo,
        input=stdin,
        env=dict(env),
        capture_output=True,
        check=False,
        timeout=timeout,
    )


def helper_state(repo: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """``plangate hookd status --json`` for ``repo``."""
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "plangate", "hookd", "status", "--json"],
        cwd=repo,
        env=dict(env),
        capture_output=True,
        check=False,
        timeout=60,
    )
    return dict(json.loads(proc.stdout))


def requests_served(repo: Path, env: Mapping[str, str]) -> int:
    """How many decisions the running helper of ``repo`` has answered."""
    state = helper_state(repo, env)
    assert state["running"], state
    return int(state["requests"])


def in_process(
    repo: Path, host: str, stdin: bytes, env: Mapping[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """Today's hook process, never asking a helper (``PLANGATE_HOOKD=off``)."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "plangate.hooks", host],
        cwd=repo,
        input=stdin,
        env={**env, "PLANGATE_HOOKD": "off"},
        capture_output=True,
        check=False,
        timeout=60,
    )



def deny_payload(repo: Path) -> bytes:
    """A Write the hooks deny (a protected surface): a fake helper's "allow" would show."""
    from support.hooks import claude_payload

    return claude_payload("PreToolUse", repo, "Write", {"file_path": "CLAUDE.md", "content": "x"})


def allow_payload(repo: Path) -> bytes:
    """A Write inside the approved task's scope."""
    from support.hooks import claude_payload

    return claude_payload(
        "PreToolUse", repo, "Write", {"file_path": str(repo / "src/app.py"), "content": "x"}
    )


def same(a: subprocess.CompletedProcess[bytes], b: subprocess.CompletedProcess[bytes]) -> None:
    """Two hook runs printed the same bytes and exited the same way."""
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
