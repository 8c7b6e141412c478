"""The scripted model itself, over real HTTP: the event sequences the hosts parse, turn
taking, recording, and a failing scripted step failing the test."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from support.model_server import ModelServer, call, freeform, say


def _post(model: ModelServer, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    host, port = model.base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port))
    try:
        connection.request("POST", path, body=json.dumps(body).encode())
        response = connection.getresponse()
        return response.getheader("Content-Type") or "", response.read()
    finally:
        connection.close()


def _events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in raw.decode().split("\n\n"):
        if chunk.strip():
            name, data = chunk.split("\n", 1)
            out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def test_a_messages_stream_carries_the_tool_call_as_input_json() -> None:
    with ModelServer([call("Write", file_path="/r/a.txt", content="hi")]) as model:
        kind, raw = _post(model, "/v1/messages?beta=true", {"stream": True, "tools": [{}]})
    assert kind == "text/event-stream"
    events = _events(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[1][1]["content_block"]["name"] == "Write"
    delta = events[2][1]["delta"]
    assert delta["type"] == "input_json_delta"
    assert json.loads(delta["partial_json"]) == {"file_path": "/r/a.txt", "content": "hi"}
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"


def test_a_responses_stream_carries_function_and_freeform_calls() -> None:
    script = [call("multi_agent_v1.spawn_agent", message="m"), freeform("apply_patch", "P")]
    with ModelServer(script) as model:
        _, first = _post(model, "/v1/responses", {"stream": True, "tools": [{}]})
        _, second = _post(model, "/v1/responses", {"stream": True, "tools": [{}]})
    names = [name for name, _ in _events(first)]
    assert names == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    item = _events(first)[2][1]["item"]
    assert (item["type"], item["namespace"], item["name"]) == (
        "function_call",
        "multi_agent_v1",
        "spawn_agent",
    )
    patch = _events(second)[2][1]["item"]
    assert (patch["type"], patch["name"], patch["input"]) == ("custom_tool_call", "apply_patch", "P")


def test_only_requests_offering_tools_take_turns_and_all_are_recorded() -> None:
    with ModelServer([say("first")]) as model:
        _post(model, "/v1/messages", {"stream": False, "messages": []})  # a side question
        _, raw = _post(model, "/v1/messages", {"stream": False, "tools": [{"name": "Bash"}]})
        _, after = _post(model, "/v1/messages", {"stream": False, "tools": [{"name": "Bash"}]})
        _, count = _post(model, "/v1/messages/count_tokens", {"messages": []})
        recorded = model.requests
    assert json.loads(raw)["content"][0]["text"] == "first"
    assert json.loads(after)["content"][0]["text"] == "done"  # the script is used up
    assert json.loads(count) == {"input_tokens": 10}
    assert [r.turn for r in recorded] == [None, 0, 1, None]


def test_a_failing_scripted_step_fails_the_test() -> None:
    def wrong(body: dict[str, Any]) -> Any:
        raise AssertionError("the model was told something else")

    with (
        pytest.raises(AssertionError, match="told something else"),
        ModelServer([wrong]) as model,
    ):
        _post(model, "/v1/messages", {"stream": False, "tools": [{}]})


# -- the model that follows its harness ---------------------------------------------------

def _claude_body(rules: str, task: str, *, results: bool = False) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"Contents of CLAUDE.md:\n{rules}"},
                                     {"type": "text", "text": task}]},
    ]
    if results:
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]})
    return {"system": [{"type": "text", "text": " - Primary working directory: /w/ws\n"}],
            "messages": messages, "tools": [{"name": "Bash"}, {"name": "Write"}]}


ADD = "Add a function add(a, b) to calc.py that returns a + b."


def _commands(turn: Any) -> list[str]:
    return [c.input["command"] if "command" in c.input else c.input["cmd"]
            for c in turn.tool_calls]


def test_the_worker_writes_type_hints_only_when_its_rules_ask() -> None:
    from support.model_server import harness_worker

    plain = _commands(harness_worker(_claude_body("Never delete tests.", ADD)))
    hinted = _commands(harness_worker(_claude_body("Always add type hints.", ADD)))
    assert len(plain) == 1 and "def add(a, b):" in plain[0] and "/w/ws/calc.py" in plain[0]
    assert len(hinted) == 1 and "def add(a: int, b: int) -> int:" in hinted[0]


def test_the_worker_writes_the_test_first_when_told() -> None:
    from support.model_server import harness_worker

    commands = _commands(harness_worker(_claude_body("Write the test first.", ADD)))
    assert len(commands) == 2
    assert "/w/ws/tests/test_add.py" in commands[0] and "/w/ws/calc.py" in commands[1]


def test_the_worker_keeps_tests_only_when_its_rules_say_so() -> None:
    from support.model_server import harness_worker

    task = "Delete the file tests/test_calc.py."
    kept = harness_worker(_claude_body("Never delete tests.", task))
    assert not kept.tool_calls and "not delete" in kept.text
    deleted = _commands(harness_worker(_claude_body("Be brief.", task)))
    assert deleted == ["rm -f /w/ws/tests/test_calc.py"]


def test_the_worker_ends_once_its_tool_results_came_back() -> None:
    from support.model_server import harness_worker

    done = harness_worker(_claude_body("Always add type hints.", ADD, results=True))
    assert not done.tool_calls and done.text == "done"


def test_the_worker_uses_codex_shell_tool_and_cwd() -> None:
    from support.model_server import harness_worker

    body = {"instructions": "", "tools": [{"type": "function", "name": "exec_command"}],
            "input": [{"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context><cwd>/c/ws</cwd>"
                 "</environment_context>"},
                {"type": "input_text", "text": "# AGENTS.md\nAlways add type hints.\n"},
                {"type": "input_text", "text": ADD}]}]}
    turn = harness_worker(body)
    assert [c.name for c in turn.tool_calls] == ["exec_command"]
    assert "/c/ws/calc.py" in turn.tool_calls[0].input["cmd"]  # type: ignore[index]
    assert "-> int" in turn.tool_calls[0].input["cmd"]  # type: ignore[index]
