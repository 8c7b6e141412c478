"""Real git repositories for tests: run git, commit everything."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
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


def git_as_person(
    repo: Path, *args: str, env_extra: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """git as a person runs it (an identity, no task in the environment), hooks on; the
    result unchecked: a hook's refusal is what the test looks at."""
    env = scrubbed_env() | {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    env.pop("PLANGATE_TASK", None)
    env.update(env_extra or {})
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)
