"""Real git repositories for tests: run git, commit everything."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plangate.git import scrubbed_env


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` for test setup; return stripped stdout."""
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=scrubbed_env(), capture_output=True, check=True
    )
    return proc.stdout.decode().strip()


def commit_all(repo: Path, message: str = "commit") -> str:
    """Stage everything and commit; return the new HEAD."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")
