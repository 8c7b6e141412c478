"""Claude Code adapter: tool requests and the deny form (both channels deny, never exit 1)."""

from __future__ import annotations

import json

from plangate.hooks.hosts.claude import PRE, deny_output, handle, tool_request
from plangate.hooks.service import HookRequest
from plangate.verdict import Reason, Result

DENIED = Result("DENY", (Reason("HOOK_OUTSIDE_SCOPE", "outside"),), {})


def test_file_shell_read_and_unknown_tools() -> None:
    write = tool_request("claude", {"tool_name": "Write", "tool_input": {"file_path": "a"}},
                         "/r", "pre")
    assert isinstance(write, HookRequest) and write.file_targets == ("a",)
    shell = tool_request("claude", {"tool_name": "Bash", "tool_input": {"command": "ls"}},
                         "/r", "pre")
    assert isinstance(shell, HookRequest) and shell.shell_command == "ls"
    read = tool_request("claude", {"tool_name": "Read", "tool_input": {}}, "/r", "pre")
    assert isinstance(read, HookRequest) and read.read_only
    unknown = tool_request("claude", {"tool_name": "mcp__x", "tool_input": {}}, "/r", "pre")
    assert isinstance(unknown, HookRequest) and unknown.unclassifiable_code == "HOOK_TOOL_UNKNOWN"
    missing = tool_request("claude", {"tool_name": "Edit", "tool_input": {}}, "/r", "pre")
    assert isinstance(missing, Result) and missing.codes == ("HOOK_PAYLOAD_INVALID",)


def test_deny_form_per_event() -> None:
    pre = deny_output(DENIED, PRE, "Write")
    assert pre.exit_code == 2
    body = json.loads(pre.stdout)["hookSpecificOutput"]
    assert body["permissionDecision"] == "deny"
    assert "HOOK_OUTSIDE_SCOPE" in pre.stderr
    stop = deny_output(DENIED, "Stop")
    assert (json.loads(stop.stdout)["decision"], stop.exit_code) == ("block", 2)


def test_unreadable_payloads_are_denied_with_exit_2() -> None:
    for data in (b"", b"[]", b'{"hook_event_name": "Nope", "cwd": "/"}',
                 b'{"hook_event_name": "PreToolUse"}'):
        output = handle(data, {})
        assert output.exit_code == 2, data
        assert json.loads(output.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
