"""Cursor adapter: requests per event and tool, and the answer (always JSON, exit 0)."""

from __future__ import annotations

import json

from plangate.hooks.hosts.cursor import AFTER_EDIT, STOP, _answer, _event_request, handle
from plangate.hooks.service import HookRequest
from plangate.verdict import Reason, Result

DENIED = Result("DENY", (Reason("HOOK_OUTSIDE_SCOPE", "outside"),), {})
ALLOWED = Result("ALLOW", (), {})


def test_requests_per_event() -> None:
    read = _event_request("beforeReadFile", {}, "/r")
    assert isinstance(read, HookRequest) and read.read_only
    mcp = _event_request("beforeMCPExecution", {"tool_name": "x"}, "/r")
    assert isinstance(mcp, HookRequest) and mcp.unclassifiable_code == "HOOK_TOOL_UNKNOWN"
    shell = _event_request("beforeShellExecution", {"command": "ls"}, "/r")
    assert isinstance(shell, HookRequest) and shell.shell_command == "ls"
    assert isinstance(_event_request("beforeShellExecution", {}, "/r"), Result)


def test_two_path_keys_or_two_directories_are_ambiguous() -> None:
    payload = {"tool_name": "edit_file", "tool_input": {"path": "a", "target_file": "b"}}
    edit = _event_request("preToolUse", payload, "/r")
    assert isinstance(edit, Result) and edit.codes == ("HOOK_PAYLOAD_AMBIGUOUS",)
    one = {"tool_name": "edit_file", "tool_input": {"target_file": "b"}}
    single = _event_request("preToolUse", one, "/r")
    assert isinstance(single, HookRequest) and single.file_targets == ("b",)
    two_dirs = {"tool_name": "Shell", "tool_input": {"command": "ls", "cwd": "x", "workdir": "y"}}
    ambiguous = _event_request("preToolUse", two_dirs, "/r")
    assert isinstance(ambiguous, Result) and ambiguous.codes == ("HOOK_PAYLOAD_AMBIGUOUS",)
    one_dir = {"tool_name": "Shell", "tool_input": {"command": "ls", "cwd": "sub"}}
    request = _event_request("preToolUse", one_dir, "/r")
    assert isinstance(request, HookRequest) and request.cwd == "/r/sub"


def test_answers() -> None:
    assert json.loads(_answer("preToolUse", {}, ALLOWED, "x").stdout) == {"permission": "allow"}
    deny = _answer("preToolUse", {}, DENIED, "x")
    assert (json.loads(deny.stdout)["permission"], deny.exit_code) == ("deny", 0)
    after = _answer(AFTER_EDIT, {}, DENIED, "x")
    assert (after.stdout, after.exit_code) == ("{}\n", 0) and "HOOK_OUTSIDE_SCOPE" in after.stderr
    assert "followup_message" in json.loads(_answer(STOP, {"loop_count": 1}, DENIED, "s").stdout)
    assert json.loads(_answer(STOP, {"loop_count": 2}, DENIED, "s").stdout) == {}


def test_unreadable_payloads_are_denied() -> None:
    for data in (b"", b'{"hook_event_name": "nope"}', b'{"hook_event_name": "stop"}'):
        output = handle(data, {})
        assert output.exit_code == 0
        assert json.loads(output.stdout)["permission"] == "deny"
