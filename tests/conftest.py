"""Shared fixtures: real git repositories in temporary directories, the CLI
driven in-process, and the throwaway PostgreSQL server started by scripts/test.sh."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.cli import RunCli, run_cli_in
from support.repo import commit_all, git


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
    from plangate.agents import AGENT_MARKER_PREFIXES, AGENT_MARKERS

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


@pytest.fixture
def run_cli() -> RunCli:
    """Run ``plangate`` in-process: ``run_cli(repo, "c3", "verify", "TASK-0001")``."""
    return run_cli_in


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
