"""doctor's setting checks on real files: the ledger, machine paths in committed hook
files, Claude Code's switches, Codex's switch and trust records, timeouts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.hooks import doctor_settings as ds
from plangate.hooks.install import apply, hook_command
from support.hooks import init_ledger


def codes(findings: list[ds.Finding]) -> list[str]:
    return [f.code for f in findings]


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return init_ledger(git_repo)


def test_a_present_verifying_ledger_is_fine(repo: Path) -> None:
    assert ds.ledger(repo) == []


def test_a_missing_ledger_fails(git_repo: Path) -> None:
    assert codes(ds.ledger(git_repo)) == ["DOCTOR_LEDGER_MISSING"]


def test_a_corrupt_ledger_fails(repo: Path) -> None:
    (repo / ".plangate" / "ledger.sqlite3").write_bytes(b"not sqlite" * 100)
    found = ds.ledger(repo)
    assert found and found[0].fails and found[0].code.startswith("DOCTOR_LEDGER")


def test_portable_committed_files_have_no_machine_path(repo: Path) -> None:
    apply(repo, ["claude", "codex", "cursor"], install=True)
    assert ds.machine_paths(repo) == []


def test_a_committed_interpreter_path_is_flagged(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    entry = {"type": "command", "command": hook_command("claude", "/home/alice/venv/bin/python")}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [entry]}]}}))
    found = ds.machine_paths(repo)
    assert codes(found) == ["DOCTOR_MACHINE_PATH"] and found[0].fails
    assert "/home/alice/venv/bin/python" in found[0].message


def test_the_local_file_may_name_this_machine(repo: Path) -> None:
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    apply(repo, ["claude"], install=True, python="/home/alice/venv/bin/python", local_python=True)
    assert ds.machine_paths(repo) == []


@pytest.mark.parametrize("key", ["allowManagedHooksOnly", "disableAllHooks"])
def test_managed_settings_that_drop_project_hooks_fail(repo: Path, tmp_path: Path, key: str):
    apply(repo, ["claude"], install=True)
    managed = tmp_path / "managed-settings.json"
    managed.write_text(json.dumps({key: True}))
    found = ds.claude_policy(repo, str(tmp_path / "home"), (str(managed),))
    assert codes(found) == ["DOCTOR_CLAUDE_HOOKS_DISABLED"] and found[0].fails


def test_a_users_disable_all_hooks_fails(repo: Path, tmp_path: Path) -> None:
    apply(repo, ["claude"], install=True)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"disableAllHooks": True}))
    assert codes(ds.claude_policy(repo, str(home), ())) == ["DOCTOR_CLAUDE_HOOKS_DISABLED"]
    (home / ".claude" / "settings.json").write_text(json.dumps({"disableAllHooks": False}))
    assert ds.claude_policy(repo, str(home), ()) == []


def _codex_home(tmp_path: Path, text: str) -> dict[str, str]:
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return {"CODEX_HOME": str(home)}


def test_codex_hooks_switched_off_fail(repo: Path, tmp_path: Path) -> None:
    apply(repo, ["codex"], install=True)
    env = _codex_home(tmp_path, "[features]\nhooks = false\n")
    found = ds.codex(repo, str(tmp_path), env)
    assert "DOCTOR_CODEX_HOOKS_OFF" in codes(found)


def test_codex_hooks_without_a_trust_record_warn(repo: Path, tmp_path: Path) -> None:
    apply(repo, ["codex"], install=True)
    found = ds.codex(repo, str(tmp_path), _codex_home(tmp_path, ""))
    assert codes(found) == ["DOCTOR_CODEX_UNTRUSTED"] and not found[0].fails


def test_codex_hooks_with_trust_records_are_fine(repo: Path, tmp_path: Path) -> None:
    apply(repo, ["codex"], install=True)
    hooks = os.path.realpath(repo / ".codex" / "hooks.json")
    lines = [
        f'[hooks.state."{hooks}:{event}:0:0"]\ntrusted_hash = "sha256:ab"\n'
        for event in ("pre_tool_use", "post_tool_use", "stop")
    ]
    found = ds.codex(repo, str(tmp_path), _codex_home(tmp_path, "\n".join(lines)))
    assert found == []


def test_cursor_entries_without_fail_closed_fail(repo: Path) -> None:
    apply(repo, ["cursor"], install=True)
    assert ds.timeouts(repo) == []
    path = repo / ".cursor" / "hooks.json"
    config = json.loads(path.read_text())
    del config["hooks"]["preToolUse"][0]["failClosed"]
    path.write_text(json.dumps(config))
    found = ds.timeouts(repo)
    assert codes(found) == ["DOCTOR_TIMEOUT_FAILS_OPEN"] and found[0].fails


def test_claude_without_on_failure_block_warns(repo: Path) -> None:
    apply(repo, ["claude"], install=True)
    found = ds.timeouts(repo)
    assert codes(found) == ["DOCTOR_TIMEOUT_FAILS_OPEN"] and not found[0].fails
