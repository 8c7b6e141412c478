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
