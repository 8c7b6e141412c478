"""The Codex and Cursor adapters against a real repository with an approved task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.hooks import approved_repo, claude_payload, cursor_payload, hook_env, run_hook


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return approved_repo(git_repo)


def _patch(*headers: str) -> str:
    return "*** Begin Patch\n" + "".join(f"{h}\n@@\n+x\n" for h in headers) + "*** End Patch\n"


def _codex(repo: Path, tool: str, tool_input: dict[str, object], task: str | None = "TASK-0001"):
    return run_hook(
        repo, "codex", claude_payload("PreToolUse", repo, tool, tool_input), hook_env(task)
    )


def test_codex_apply_patch_in_scope_is_allowed_without_output(repo: Path) -> None:
    result = _codex(repo, "apply_patch", {"command": _patch("*** Update File: src/app.py")})
    assert (result.code, result.out, result.err) == (0, "", "")


def test_codex_apply_patch_touching_a_protected_file_is_denied(repo: Path) -> None:
    patch = _patch("*** Update File: src/app.py", f"*** Add File: {repo}/AGENTS.md")
    result = _codex(repo, "apply_patch", {"command": patch})
    assert result.code == 2
    body = json.loads(result.out)
    assert body["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "HOOK_PROTECTED_SURFACE" in result.err


def test_codex_move_checks_both_paths(repo: Path) -> None:
    patch = _patch("*** Update File: src/app.py\n*** Move to: src/moved.py")
    result = _codex(repo, "apply_patch", {"command": patch})
    assert "HOOK_OUTSIDE_SCOPE" in result.err
    assert "src/moved.py" in result.err


def test_codex_delete_outside_scope_is_denied(repo: Path) -> None:
    result = _codex(repo, "apply_patch", {"command": _patch("*** Delete File: README.md")})
    assert "HOOK_OUTSIDE_SCOPE" in result.err


def test_codex_patch_without_headers_is_denied(repo: Path) -> None:
    result = _codex(repo, "apply_patch", {"command": "*** Begin Patch\n*** End Patch\n"})
    assert result.code == 2
    assert "HOOK_PATCH_UNREADABLE" in result.err


def test_codex_shell_argv_list_is_classified(repo: Path) -> None:
    result = _codex(repo, "shell", {"command": ["bash", "-lc", "echo x > CLAUDE.md"]})
    assert "HOOK_PROTECTED_SURFACE" in result.err
    assert _codex(repo, "shell", {"command": ["ls", "-la"]}).code == 0


def test_codex_patch_through_the_shell_is_read_as_a_patch(repo: Path) -> None:
    command = "apply_patch <<'EOF'\n" + _patch("*** Update File: CLAUDE.md") + "EOF\n"
    result = _codex(repo, "Bash", {"command": command})
    assert "HOOK_PROTECTED_SURFACE" in result.err


def test_cursor_shell_deny_form(repo: Path) -> None:
    payload = cursor_payload(
        "beforeShellExecution", repo, command="echo x > CLAUDE.md", cwd=str(repo)
    )
    result = run_hook(repo, "cursor", payload, hook_env("TASK-0001"))
    assert result.code == 0
    body = json.loads(result.out)
    assert body["permission"] == "deny"
    assert "HOOK_PROTECTED_SURFACE" in body["agent_message"]
    assert body["user_message"] == body["agent_message"]


def test_cursor_allow_form(repo: Path) -> None:
    payload = cursor_payload(
        "preToolUse",
        repo,
        tool_name="Write",
        tool_input={"file_path": str(repo / "src" / "app.py")},
    )
    result = run_hook(repo, "cursor", payload, hook_env("TASK-0001"))
    assert (result.code, json.loads(result.out)) == (0, {"permission": "allow"})


def test_cursor_mcp_is_denied(repo: Path) -> None:
    payload = cursor_payload("beforeMCPExecution", repo, tool_name="db_write", tool_input="{}")
    body = json.loads(run_hook(repo, "cursor", payload, hook_env("TASK-0001")).out)
    assert body["permission"] == "deny"
    assert "HOOK_TOOL_UNKNOWN" in body["agent_message"]


def test_cursor_stop_asks_for_a_followup_then_gives_up(repo: Path) -> None:
    (repo / "stray.txt").write_text("x\n")
    first = run_hook(
        repo,
        "cursor",
        cursor_payload("stop", repo, status="completed", loop_count=0),
        hook_env("TASK-0001"),
    )
    assert "stray.txt" in json.loads(first.out)["followup_message"]
    later = run_hook(
        repo,
        "cursor",
        cursor_payload("stop", repo, status="completed", loop_count=2),
        hook_env("TASK-0001"),
    )
    assert json.loads(later.out) == {}
    assert "stray.txt" in later.err


def test_cursor_after_file_edit_reports(repo: Path) -> None:
    (repo / "stray.txt").write_text("x\n")
    payload = cursor_payload("afterFileEdit", repo, file_path=str(repo / "stray.txt"), edits=[])
    result = run_hook(repo, "cursor", payload, hook_env("TASK-0001"))
    assert (result.code, json.loads(result.out)) == (0, {})
    assert "HOOK_OUTSIDE_SCOPE" in result.err


def test_cursor_unknown_event_denies(repo: Path) -> None:
    payload = cursor_payload("beforeSomethingNew", repo)
    body = json.loads(run_hook(repo, "cursor", payload, hook_env("TASK-0001")).out)
    assert body["permission"] == "deny"
    assert body["continue"] is False
