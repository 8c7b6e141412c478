"""Run ``plangate`` as a person does: a real pseudo-terminal on stdin, a clean environment."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import plangate

SRC = str(Path(plangate.__file__).resolve().parents[1])
AGENT_PREFIXES = ("CLAUDE", "CURSOR", "CODEX", "PLANGATE_TASK", "CI", "GITHUB_ACTIONS")


def person_env(**extra: str) -> dict[str, str]:
    """The environment of a person's terminal: no agent or automation marker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(AGENT_PREFIXES)}
    env["PYTHONPATH"] = SRC
    env.update(extra)
    return env


def at_terminal(
    cwd: Path,
    *args: str,
    typed: str = "",
    env: dict[str, str] | None = None,
    tty: bool = True,
    wrapper: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``plangate ARGS`` with a pseudo-terminal as stdin (``typed`` is what the person types);
    ``tty=False`` gives a plain pipe instead; ``wrapper`` is a command line it runs under
    (e.g. a bubblewrap mount)."""
    command = [*(wrapper or []), sys.executable, "-m", "plangate", *args]
    if not tty:
        return subprocess.run(
            command,
            cwd=cwd,
            input=typed,
            capture_output=True,
            text=True,
            env=env or person_env(),
            check=False,
            timeout=120,
        )
    master, slave = pty.openpty()
    try:
        if typed:
            os.write(master, typed.encode())
        return subprocess.run(
            command,
            cwd=cwd,
            stdin=slave,
            capture_output=True,
            text=True,
            env=env or person_env(),
            check=False,
            timeout=120,
        )
    finally:
        os.close(slave)
        os.close(master)


def adopt_at_terminal(repo: Path) -> Path:
    """``src/app.py`` committed, then ``plangate setup --claude --git`` typed at a terminal
    and the adoption committed through the hooks, as a person adopts PlanGate."""
    from support.repo import git, git_as_person

    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "app")
    proc = at_terminal(repo, "setup", "--claude", "--git", typed="SETUP\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git(repo, "add", "-A")
    adoption = git_as_person(repo, "commit", "-q", "-m", "Adopt PlanGate")
    assert adoption.returncode == 0, adoption.stderr
    return repo
