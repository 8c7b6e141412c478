"""``plangate setup`` and the hook helper: ``--hookd`` starts a real helper for the
repository (as ``plangate hookd start`` does); without it, setup says whether one runs
and offers the command when the hooks of an agent host were installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.hookd import runtime_env
from support.terminal import at_terminal, person_env


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A person's terminal whose helper socket lives in a private runtime directory."""
    return runtime_env(person_env(), tmp_path / "run")


def _hookd(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "plangate", "hookd", *args], cwd=repo,
                          env=env, capture_output=True, text=True, check=False, timeout=60)


def _json_of(stdout: str) -> dict[str, object]:
    """The JSON object setup prints after what it showed and asked at the terminal."""
    # The prompt ends without a newline ("Type SETUP to write them: "); the object is
    # printed indented, its first key on the next line.
    body: dict[str, object] = json.loads(stdout[stdout.index('{\n  "'):])
    return body


def _status(repo: Path, env: dict[str, str]) -> dict[str, object]:
    proc = _hookd(repo, env, "status", "--json")
    body: dict[str, object] = json.loads(proc.stdout)
    assert proc.returncode == (0 if body["running"] else 1), proc.stderr
    return body


def test_setup_with_hookd_starts_the_helper(git_repo: Path, env: dict[str, str]) -> None:
    proc = at_terminal(git_repo, "setup", "--claude", "--hookd", typed="SETUP\n", env=env)
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Hook helper: started for this repository" in proc.stdout
        state = _status(git_repo, env)
        assert state["running"] is True and state["same_package"] is True
        # A second setup finds it running and says so.
        again = at_terminal(git_repo, "setup", "--claude", typed="SETUP\n", env=env)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "Hook helper: already running for this repository." in again.stdout
    finally:
        _hookd(git_repo, env, "stop")
    assert _status(git_repo, env)["running"] is False


def test_setup_without_hookd_offers_it_and_starts_nothing(
    git_repo: Path, env: dict[str, str]
) -> None:
    proc = at_terminal(git_repo, "setup", "--claude", typed="SETUP\n", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Hook helper: not running." in proc.stdout
    assert "run 'plangate hookd start' in this repository" in proc.stdout
    assert _status(git_repo, env)["running"] is False


def test_setup_json_reports_the_helper(git_repo: Path, env: dict[str, str]) -> None:
    offered = at_terminal(git_repo, "setup", "--cursor", "--json", typed="SETUP\n", env=env)
    assert offered.returncode == 0, offered.stdout + offered.stderr
    assert _json_of(offered.stdout)["hookd"] == {
        "running": False, "started": False, "offer": "plangate hookd start"}
    started = at_terminal(git_repo, "setup", "--cursor", "--hookd", "--json",
                          typed="SETUP\n", env=env)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        helper = _json_of(started.stdout)["hookd"]
        assert isinstance(helper, dict)
        assert helper["running"] is True and helper["started"] is True
        assert helper["launcher_native"]["code"]  # linked, or why not (an editable install)
    finally:
        _hookd(git_repo, env, "stop")


def test_setup_of_git_hooks_alone_says_nothing_of_the_helper(
    git_repo: Path, env: dict[str, str]
) -> None:
    """git's hooks run once per commit or push: the helper is offered for agent hooks."""
    proc = at_terminal(git_repo, "setup", "--git", typed="SETUP\n", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Hook helper" not in proc.stdout
    body = at_terminal(git_repo, "setup", "--git", "--json", typed="SETUP\n", env=env)
    assert body.returncode == 0, body.stdout + body.stderr
    assert "hookd" not in _json_of(body.stdout)
