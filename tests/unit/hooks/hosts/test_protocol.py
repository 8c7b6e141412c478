"""What every host adapter shares: payload parsing, the tool-call envelope, the fail-closed wrapper."""

from __future__ import annotations

from plangate.errors import InputRejected
from plangate.hooks.hosts.protocol import (
    MAX_PAYLOAD_BYTES,
    HookOutput,
    command_text,
    fail_closed,
    file_tool_path,
    parse_payload,
    reason_text,
    tool_call,
    under,
    unknown_tool_request,
)
from plangate.verdict import Reason, Result


def test_command_text_joins_argv() -> None:
    assert command_text(["bash", "-lc", "echo a > b"]) == "bash -lc 'echo a > b'"
    assert command_text("ls") == "ls"
    assert command_text([1]) is None
    assert command_text([]) is None


def test_parse_payload_refuses_oversized_duplicate_keys_and_non_objects() -> None:
    too_big = parse_payload(b" " * (MAX_PAYLOAD_BYTES + 1))
    assert isinstance(too_big, Result) and too_big.codes == ("HOOK_PAYLOAD_INVALID",)
    for data in (b'{"a":1,"a":2}', b"[]", b"NaN", b"\xff"):
        refused = parse_payload(data)
        assert isinstance(refused, Result), data
        assert refused.verdict == "DENY"
    assert parse_payload(b'{"a":1}') == {"a": 1}


def test_tool_call_needs_a_name_and_an_input_object() -> None:
    assert tool_call({"tool_name": "Write", "tool_input": {}}) == ("Write", {})
    for payload in ({"tool_input": {}}, {"tool_name": "", "tool_input": {}},
                    {"tool_name": "Write", "tool_input": []}):
        refused = tool_call(payload)
        assert isinstance(refused, Result) and refused.codes == ("HOOK_PAYLOAD_INVALID",)


def test_file_tool_path_and_unknown_tools() -> None:
    assert file_tool_path("Write", {"file_path": "a.py"}, "file_path") == "a.py"
    assert isinstance(file_tool_path("Write", {"file_path": ""}, "file_path"), Result)
    request = unknown_tool_request("claude", "pre", "/repo", "mcp__x")
    assert request.unclassifiable_code == "HOOK_TOOL_UNKNOWN"
    assert request.unclassifiable == ("unknown tool 'mcp__x': its writes cannot be judged",)


def test_under_keeps_absolute_directories() -> None:
    assert under("/repo/", "sub") == "/repo/sub"
    assert under("/repo", "/abs") == "/abs"


def test_any_exception_becomes_the_deny_form() -> None:
    def deny(result: Result) -> HookOutput:
        return HookOutput("", ",".join(result.codes), 2)

    def crash() -> HookOutput:
        raise RuntimeError("boom")

    def refuse() -> HookOutput:
        raise InputRejected("SOME_CODE", "refused", "")

    assert fail_closed(crash, deny) == HookOutput("", "HOOK_INTERNAL_ERROR", 2)
    assert fail_closed(refuse, deny) == HookOutput("", "SOME_CODE", 2)


def test_reason_text_lists_every_reason_with_its_hint() -> None:
    result = Result("DENY", (Reason("A", "first", "do x"), Reason("B", "second")), {})
    assert reason_text(result, "Write") == (
        "PlanGate denied Write:\n- A: first (hint: do x)\n- B: second"
    )
