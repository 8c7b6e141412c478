"""Reading tool calls: bad input of every shape denies with a reason code and a hint; every
kind reads what it must (ambiguous carriers, typed text, schedules, isolated agents)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plangate.hooks.hosts import claude, codex, cursor
from plangate.hooks.hosts.requests import tool_request
from plangate.hooks.hosts.tools import CLAUDE_TOOLS, SCHEDULE_FILE
from plangate.hooks.service import HookRequest
from plangate.verdict import Result

MAKERS = {
    "claude": claude.tool_request,
    "codex": codex.tool_request,
    "cursor": lambda host, payload, cwd, event: cursor._event_request("preToolUse", payload, cwd),
}


def _read(host: str, tool: str, tool_input: Any) -> Any:
    return MAKERS[host](host, {"tool_name": tool, "tool_input": tool_input}, "/r", "pre")


def _denied(result: Any, code: str) -> None:
    assert isinstance(result, Result), result
    assert result.codes == (code,)
    assert all(reason.hint for reason in result.reasons)


HANDLERS = {"claude": claude.handle, "codex": codex.handle}
SHELLS = {"claude": "Bash", "codex": "Bash", "cursor": "Shell"}
WRITERS = {"claude": "Write", "codex": "Write", "cursor": "Write"}


@pytest.mark.parametrize("host", sorted(MAKERS))
@pytest.mark.parametrize(
    ("tool_input", "code"),
    [
        (None, "HOOK_PAYLOAD_INVALID"),
        ("ls", "HOOK_PAYLOAD_INVALID"),
        (["ls"], "HOOK_PAYLOAD_INVALID"),
        ({}, "HOOK_PAYLOAD_INVALID"),
        ({"command": 3}, "HOOK_PAYLOAD_INVALID"),
        ({"command": None}, "HOOK_PAYLOAD_INVALID"),
        ({"command": {"text": "ls"}}, "HOOK_PAYLOAD_INVALID"),
        ({"command": ["rm", 3]}, "HOOK_PAYLOAD_INVALID"),
        ({"command": []}, "HOOK_PAYLOAD_INVALID"),
        ({"command": "ls", "script": "rm -rf src"}, "HOOK_PAYLOAD_AMBIGUOUS"),
        ({"command": "ls", "input": "rm -rf src"}, "HOOK_PAYLOAD_AMBIGUOUS"),
        ({"command": "ls", "patch": "*** Begin Patch"}, "HOOK_PAYLOAD_AMBIGUOUS"),
        ({"command": "ls", "argv": ["rm", "x"]}, "HOOK_PAYLOAD_AMBIGUOUS"),
        ({"script": "rm -rf src"}, "HOOK_PAYLOAD_INVALID"),
    ],
)
def test_bad_shell_inputs_deny(host: str, tool_input: Any, code: str) -> None:
    _denied(_read(host, SHELLS[host], tool_input), code)


@pytest.mark.parametrize("host", sorted(MAKERS))
@pytest.mark.parametrize(
    ("tool_input", "code"),
    [
        ({}, "HOOK_PAYLOAD_INVALID"),
        ({"file_path": ""}, "HOOK_PAYLOAD_INVALID"),
        ({"file_path": ["a"]}, "HOOK_PAYLOAD_INVALID"),
        ({"file_path": "a", "path": "b"}, "HOOK_PAYLOAD_AMBIGUOUS"),
        ({"file_path": "a", "notebook_path": "b"}, "HOOK_PAYLOAD_AMBIGUOUS"),
        ({"file_path": "a", "target": "b"}, "HOOK_PAYLOAD_AMBIGUOUS"),
    ],
)
def test_bad_writer_inputs_deny(host: str, tool_input: Any, code: str) -> None:
    _denied(_read(host, WRITERS[host], tool_input), code)


def test_one_field_of_each_family_is_read() -> None:
    shell = _read("codex", "Bash", {"cmd": "ls", "workdir": "sub"})
    assert isinstance(shell, HookRequest)
    assert (shell.shell_command, shell.cwd) == ("ls", "/r/sub")
    write = _read("claude", "Write", {"file_path": "a.py", "content": "x"})
    assert isinstance(write, HookRequest) and write.file_targets == ("a.py",)


@pytest.mark.parametrize("fields", [("command", "input"), ("patch", "input"), ("command", "patch"),
                                    ("command", "patch", "input")])
def test_a_codex_patch_in_more_than_one_field_is_ambiguous(fields: tuple[str, ...]) -> None:
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\n"
    _denied(_read("codex", "apply_patch", dict.fromkeys(fields, patch)), "HOOK_PAYLOAD_AMBIGUOUS")


@pytest.mark.parametrize("field", ["command", "patch", "input"])
def test_a_codex_patch_in_any_one_field_is_read(field: str) -> None:
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\n"
    request = _read("codex", "apply_patch", {field: patch})
    assert isinstance(request, HookRequest) and request.file_targets == ("a.py",)


def test_a_codex_heredoc_patch_through_bash_is_judged_by_its_headers() -> None:
    command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: AGENTS.md\n+x\n*** End Patch\nEOF"
    request = _read("codex", "Bash", {"command": command})
    assert isinstance(request, HookRequest)
    assert request.file_targets == ("AGENTS.md",) and request.shell_command is None
    trailing = _read("codex", "Bash", {"command": command + "\ntouch CLAUDE.md"})
    assert isinstance(trailing, HookRequest)
    assert trailing.unclassifiable_code == "HOOK_PATCH_UNREADABLE"


def test_write_stdin_is_allowed_only_as_a_poll() -> None:
    poll = _read("codex", "write_stdin", {"session_id": 1, "chars": ""})
    assert isinstance(poll, HookRequest) and poll.read_only
    typed = _read("codex", "write_stdin", {"session_id": 1, "chars": ":wq\n"})
    assert isinstance(typed, HookRequest) and not typed.read_only
    assert typed.unclassifiable_code == "HOOK_STDIN_UNJUDGEABLE"
    _denied(_read("codex", "write_stdin", {"session_id": 1}), "HOOK_PAYLOAD_INVALID")
    _denied(_read("codex", "write_stdin", {"chars": 5}), "HOOK_PAYLOAD_INVALID")


def test_agents_with_isolation_are_judged_apart() -> None:
    plain = _read("claude", "Agent", {"prompt": "x", "description": "d"})
    assert isinstance(plain, HookRequest) and plain.read_only
    worktree = _read("claude", "Agent", {"prompt": "x", "isolation": "worktree"})
    assert isinstance(worktree, HookRequest)
    assert worktree.file_targets == ("/r/.git/worktrees",)
    remote = _read("claude", "Agent", {"prompt": "x", "isolation": "remote"})
    assert isinstance(remote, HookRequest) and remote.unclassifiable_code == "HOOK_AGENT_UNHOOKED"


def test_durable_schedules_are_writes_of_the_schedule_file(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    root = str(tmp_path.resolve())

    def read(tool: str, tool_input: dict[str, Any]) -> Any:
        payload = {"tool_name": tool, "tool_input": tool_input}
        return tool_request("claude", payload, root, "pre", CLAUDE_TOOLS)

    session = read("CronCreate", {"cron": "* * * * *", "prompt": "x"})
    assert isinstance(session, HookRequest) and session.read_only
    durable = read("CronCreate", {"cron": "* * * * *", "prompt": "x", "durable": True})
    assert isinstance(durable, HookRequest)
    assert durable.file_targets == (f"{root}/{SCHEDULE_FILE}",)
    _denied(read("CronCreate", {"cron": "*", "prompt": "x", "durable": "yes"}),
            "HOOK_PAYLOAD_INVALID")
    delete = read("CronDelete", {"id": "1"})
    assert isinstance(delete, HookRequest) and delete.read_only
    (tmp_path / ".claude").mkdir()
    (tmp_path / SCHEDULE_FILE).write_text("[]")
    delete = read("CronDelete", {"id": "1"})
    assert isinstance(delete, HookRequest)
    assert delete.file_targets == (f"{root}/{SCHEDULE_FILE}",)


@pytest.mark.parametrize("host", sorted(MAKERS))
def test_unknown_tools_are_unclassifiable_and_name_the_tool(host: str) -> None:
    request = _read(host, "Teleport", {"to": "x"})
    assert isinstance(request, HookRequest)
    assert request.unclassifiable_code == "HOOK_TOOL_UNKNOWN"
    assert "Teleport" in request.unclassifiable[0]


@pytest.mark.parametrize(
    "payload",
    [
        {"hook_event_name": "PreToolUse", "cwd": "/r", "tool_name": "Bash"},
        {"hook_event_name": "PreToolUse", "cwd": "/r", "tool_name": "Bash", "tool_input": "ls"},
        {"hook_event_name": "PreToolUse", "cwd": "/r", "tool_name": 7, "tool_input": {}},
        {"hook_event_name": "PreToolUse", "cwd": "/r", "tool_input": {"command": "ls"}},
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}},
        {"hook_event_name": "PreToolUse", "cwd": 3, "tool_name": "Bash",
         "tool_input": {"command": "ls"}},
        {"hook_event_name": "Teleport", "cwd": "/r"},
        {"hook_event_name": None, "cwd": "/r"},
        {"cwd": "/r"},
    ],
)
@pytest.mark.parametrize("host", ["claude", "codex"])
def test_bad_payload_shapes_deny_in_the_hosts_form(host: str, payload: dict[str, Any]) -> None:
    output = HANDLERS[host](json.dumps(payload).encode(), {})
    assert output.exit_code == 2
    assert "PlanGate denied" in output.stderr and "hint:" in output.stderr


def test_a_heredoc_patch_is_a_patch_only_where_the_host_intercepts_it() -> None:
    command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.py\n+x\n*** End Patch\nEOF"
    codex_read = _read("codex", "Bash", {"command": command})
    assert isinstance(codex_read, HookRequest) and codex_read.file_targets == ("a.py",)
    # In Claude Code's shell, whatever bears the name apply_patch would run: the shell
    # classifier judges the command.
    claude_read = _read("claude", "Bash", {"command": command})
    assert isinstance(claude_read, HookRequest)
    assert claude_read.shell_command == command and not claude_read.file_targets


@pytest.mark.parametrize("host", sorted(MAKERS))
@pytest.mark.parametrize("extra", ["input", "arguments", "args", "parameters"])
def test_a_second_input_object_beside_tool_input_is_ambiguous(host: str, extra: str) -> None:
    payload = {"tool_name": SHELLS[host], "tool_input": {"command": "ls"},
               extra: {"command": "rm -rf src"}}
    _denied(MAKERS[host](host, payload, "/r", "pre"), "HOOK_PAYLOAD_AMBIGUOUS")
