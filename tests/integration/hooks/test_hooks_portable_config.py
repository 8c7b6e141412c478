"""Committed hook configuration holds no machine path: each developer's PlanGate is found
on PATH when the hook runs, a missing one is the host's deny form with a clear message,
and a developer's own interpreter goes only into the git-ignored local file."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from plangate.hooks.install import MARKER, apply, portable_command
from support.hooks import (
    approved_repo,
    claude_payload,
    cursor_payload,
    developer_bin,
    run_configured,
)
from support.repo import git

SYSTEM_PATH = "/usr/bin:/bin"
MACHINE_PATH = re.compile(r"(?:^|[\s'\"=])(?:/(?!dev/null)[\w.+-]+)+/?")


def _commands(path: Path) -> list[str]:
    config = json.loads(path.read_text())
    out = []
    for groups in config.get("hooks", {}).values():
        for group in groups:
            out += [h["command"] for h in group.get("hooks", [group]) if "command" in h]
    return out


@pytest.fixture
def repo(git_repo: Path) -> Path:
    repo = approved_repo(git_repo)
    apply(repo, ["claude", "codex", "cursor"], install=True)
    return repo


@pytest.mark.parametrize(
    "rel", [".claude/settings.json", ".codex/hooks.json", ".cursor/hooks.json"]
)
def test_committed_files_name_no_machine_path(repo: Path, rel: str) -> None:
    commands = _commands(repo / rel)
    assert commands
    for command in commands:
        assert sys.executable not in command
        assert MACHINE_PATH.search(command.split(f" # {MARKER}")[0]) is None, command


def test_two_developers_share_one_committed_file(repo: Path, tmp_path: Path) -> None:
    """Two homes, two virtual environments: the same bytes work for both."""
    command = _commands(repo / ".claude/settings.json")[0]
    write = claude_payload("PreToolUse", repo, "Write", {"file_path": "src/app.py"})
    for who in ("alice", "bob"):
        venv_bin = developer_bin(tmp_path / who / "venv" / "bin", light=who == "alice")
        proc = run_configured(
            command, repo, write, f"{venv_bin}:{SYSTEM_PATH}",
            HOME=str(tmp_path / who), PLANGATE_TASK="TASK-0001",
        )
        assert proc.returncode == 0, proc.stderr
    outside = claude_payload("PreToolUse", repo, "Write", {"file_path": "lib/x.py"})
    proc = run_configured(command, repo, outside, f"{venv_bin}:{SYSTEM_PATH}",
                          PLANGATE_TASK="TASK-0001")
    assert proc.returncode == 2 and b"HOOK_OUTSIDE_SCOPE" in proc.stderr


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_plangate_missing_is_a_clear_deny_for_claude_and_codex(repo: Path, host: str) -> None:
    proc = run_configured(portable_command(host), repo, b"{}", SYSTEM_PATH)
    assert proc.returncode == 2
    assert b"HOOK_PLANGATE_NOT_FOUND" in proc.stderr
    assert b"not found" not in proc.stderr  # the shell's own message never shows


def test_plangate_missing_is_cursors_deny_form(repo: Path) -> None:
    payload = cursor_payload("beforeShellExecution", repo, command="ls", cwd=str(repo))
    proc = run_configured(portable_command("cursor"), repo, payload, SYSTEM_PATH)
    body = json.loads(proc.stdout)
    assert body["permission"] == "deny"
    assert "HOOK_PLANGATE_NOT_FOUND" in body["agent_message"]
    assert proc.returncode == 2


def test_the_full_cli_on_path_is_used_when_the_light_entry_is_missing(
    repo: Path, tmp_path: Path
) -> None:
    venv_bin = developer_bin(tmp_path / "venv" / "bin", light=False)
    write = claude_payload("PreToolUse", repo, "Write", {"file_path": "CLAUDE.md"})
    proc = run_configured(portable_command("claude"), repo, write, f"{venv_bin}:{SYSTEM_PATH}",
                          PLANGATE_TASK="TASK-0001")
    assert proc.returncode == 2 and b"HOOK_PROTECTED_SURFACE" in proc.stderr


def test_local_python_goes_only_into_the_local_file(repo: Path, tmp_path: Path) -> None:
    apply(repo, ["claude"], install=True, python=sys.executable, local_python=True)
    local = repo / ".claude" / "settings.local.json"
    assert any(sys.executable in c for c in _commands(local))
    assert all(sys.executable not in c for c in _commands(repo / ".claude/settings.json"))
    # Without PlanGate on PATH the committed entry leaves the decision to the local one.
    committed = _commands(repo / ".claude/settings.json")[0]
    write = claude_payload("PreToolUse", repo, "Write", {"file_path": "src/app.py"})
    assert run_configured(committed, repo, write, SYSTEM_PATH).returncode == 0
    local_cmd = _commands(local)[0]
    denied = claude_payload("PreToolUse", repo, "Write", {"file_path": "CLAUDE.md"})
    proc = run_configured(local_cmd, repo, denied, SYSTEM_PATH,
                          PYTHONPATH=str(Path(__import__("plangate").__file__).parents[1]))
    assert proc.returncode == 2 and b"HOOK_PROTECTED_SURFACE" in proc.stderr
    # Uninstalling Claude Code removes PlanGate's entries from both files.
    apply(repo, ["claude"], install=False)
    assert not local.exists()


def test_install_is_idempotent_and_stable_across_machines(repo: Path) -> None:
    before = (repo / ".claude/settings.json").read_bytes()
    changes = apply(repo, ["claude"], install=True, python="/elsewhere/python3")
    assert [c.action for c in changes] == ["unchanged"]
    assert (repo / ".claude/settings.json").read_bytes() == before


def test_a_pre_commit_framework_hook_is_explained_before_anything_is_written(
    git_repo: Path,
) -> None:
    from plangate.errors import InputRejected

    hooks = git_repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text(
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
    )
    with pytest.raises(InputRejected) as caught:
        apply(git_repo, ["claude", "git"], install=True)
    assert caught.value.code == "HOOKS_PRE_COMMIT_FRAMEWORK"
    assert "plangate-pre-commit" in caught.value.hint
    assert not (git_repo / ".plangate" / "ledger.sqlite3").exists()
    assert not (git_repo / ".claude" / "settings.json").exists()
    assert git(git_repo, "status", "--porcelain") == ""
