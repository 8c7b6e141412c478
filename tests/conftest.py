"""Shared fixtures: real git repositories in temporary directories, the CLI
driven in-process, and the throwaway PostgreSQL server started by scripts/test.sh."""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from plangate.cli.context import Context
from plangate.cli.main import main
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


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No inherited ledger URL, task or agent markers leak into a test."""
    for key in list(os.environ):
        if key.startswith(("PLANGATE_", "GIT_", "CLAUDE", "CODEX", "CURSOR")) and key not in (
            "PLANGATE_TEST_PG_URL",
        ):
            monkeypatch.delenv(key, raising=False)
    # CI itself sets agent/automation markers (CI=true, GITHUB_ACTIONS...); tests that
    # need them set them explicitly, so the suite behaves the same locally and in CI.
    from plangate.hooks.override import AGENT_MARKER_PREFIXES, AGENT_MARKERS

    for key in list(os.environ):
        if key in AGENT_MARKERS or key.startswith(AGENT_MARKER_PREFIXES):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "author@example.invalid")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A fresh git repository with one initial commit on branch ``main``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test Author")
    git(repo, "config", "user.email", "author@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / "README.md").write_text("# test repo\n")
    commit_all(repo, "initial")
    return repo


@dataclass
class CliResult:
    """What one in-process CLI run produced."""

    code: int
    out: str
    err: str


RunCli = Callable[..., CliResult]


@pytest.fixture
def run_cli() -> RunCli:
    """Run ``plangate`` in-process: ``run_cli(repo, "c3", "verify", "TASK-0001")``."""

    def _run(
        cwd: Path, *argv: str, stdin: bytes = b"", env: dict[str, str] | None = None
    ) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        ctx = Context(
            cwd=Path(cwd),
            stdout=out,
            stderr=err,
            stdin=io.BytesIO(stdin),
            env=dict(os.environ if env is None else env),
        )
        code = main(list(argv), ctx)
        return CliResult(code, out.getvalue(), err.getvalue())

    return _run


@pytest.fixture
def pg_url() -> str:
    """URL of the throwaway PostgreSQL server. Missing means the test fails, never skips."""
    url = os.environ.get("PLANGATE_TEST_PG_URL")
    if not url:
        pytest.fail(
            "PLANGATE_TEST_PG_URL is not set: run the suite through 'make test' "
            "(scripts/test.sh starts the PostgreSQL server)"
        )
    return url
