"""The adoption commit and push go through the git hooks (no hook skipped): their base has
no PlanGate and they change only the adoption files, ``ci check``'s own rule; anything
else, or any later change to those files, is judged as always."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plangate.git import scrubbed_env
from support.repo import git
from support.terminal import at_terminal


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = scrubbed_env() | {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    env.pop("PLANGATE_TASK", None)
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=False)


@pytest.fixture
def set_up(git_repo: Path, tmp_path: Path) -> Path:
    """``plangate setup --claude --git`` at a terminal, a bare remote holding ``main``."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(git_repo, "remote", "add", "origin", str(remote))
    assert _git(git_repo, "push", "-q", "origin", "main").returncode == 0
    proc = at_terminal(git_repo, "setup", "--claude", "--git", typed="SETUP\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git(git_repo, "switch", "-q", "-c", "adopt-plangate")
    return git_repo


def test_the_adoption_is_committed_and_pushed_through_the_hooks(set_up: Path) -> None:
    assert _git(set_up, "add", "-A").returncode == 0
    committed = _git(set_up, "commit", "-q", "-m", "Adopt PlanGate")
    assert committed.returncode == 0, committed.stderr
    pushed = _git(set_up, "push", "-q", "-u", "origin", "adopt-plangate")
    assert pushed.returncode == 0, pushed.stderr
    # Adopted: the same files change only through the usual rules from now on.
    settings = set_up / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace("30", "31", 1))
    git(set_up, "add", ".claude/settings.json")
    later = _git(set_up, "commit", "-q", "-m", "tweak the hooks")
    assert later.returncode == 1 and "HOOK_CONFIG_FILE" in later.stderr


def test_an_adoption_with_anything_else_is_an_ordinary_commit(set_up: Path) -> None:
    (set_up / "README.md").write_text("# changed with the adoption\n")
    assert _git(set_up, "add", "-A").returncode == 0
    refused = _git(set_up, "commit", "-q", "-m", "Adopt PlanGate and more")
    assert refused.returncode == 1
    assert "HOOK_PROTECTED_SURFACE" in refused.stderr
    assert "HOOK_NO_ACTIVE_TASK" in refused.stderr


def test_a_commit_without_the_surfaces_file_is_no_adoption(set_up: Path) -> None:
    assert _git(set_up, "add", ".claude/settings.json").returncode == 0
    refused = _git(set_up, "commit", "-q", "-m", "hooks only")
    assert refused.returncode == 1 and "HOOK_CONFIG_FILE" in refused.stderr
