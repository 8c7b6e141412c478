"""Adversarial review: a repository-local ``plangate`` package must not replace the gate.

The installed hook command runs with the repository as its working directory.
``python -m`` puts that directory first on ``sys.path``, so an in-scope write of
``plangate/hooks/__main__.py`` at the root would have become the hook itself.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from plangate.hooks.install import git_hook_script, hook_command


def _shadow(repo: Path) -> None:
    (repo / "plangate" / "hooks").mkdir(parents=True)
    (repo / "plangate" / "__init__.py").write_text("")
    (repo / "plangate" / "hooks" / "__init__.py").write_text("")
    (repo / "plangate" / "hooks" / "__main__.py").write_text("raise SystemExit(0)\n")


def test_installed_command_ignores_a_repository_plangate_package(git_repo: Path) -> None:
    _shadow(git_repo)
    payload = json.dumps({"hook_event_name": "Nope", "cwd": str(git_repo)}).encode()
    command = hook_command("claude").split(" #", 1)[0]
    result = subprocess.run(  # noqa: S602 -- the exact shell line the host runs
        command, shell=True, cwd=git_repo, input=payload, capture_output=True, check=False
    )
    assert result.returncode == 2, result
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_git_hook_script_ignores_a_repository_plangate_package(git_repo: Path) -> None:
    _shadow(git_repo)
    script = git_repo / "hook.sh"
    script.write_text(git_hook_script("git-pre-push"))
    result = subprocess.run(
        ["sh", str(script), "origin", "x"], cwd=git_repo, input=b"garbage line\n",
        capture_output=True, check=False,
    )
    assert result.returncode != 0, result
