"""A scripted model on 127.0.0.1 for driving the real hosts (Claude Code, Codex).

The server speaks the two streaming APIs the hosts call:

- the Anthropic Messages API (``POST /v1/messages``, SSE ``message_start`` ...
  ``message_stop``; non-streaming JSON when ``stream`` is false;
  ``POST /v1/messages/count_tokens``);
- the OpenAI Responses API (``POST /v1/responses``, SSE ``response.created``,
  ``response.output_item.added`` / ``.done``, ``response.completed``; ``GET /v1/models``).

A script is a list of turns. Each request that offers tools (a model turn of the
agent loop) takes the next turn; a turn answers with tool calls, text, or both. When
the script is used up the model says "done" and ends its turn, so a host never
waits on a model that has nothing left to say. Requests without tools (a host's side
questions: titles, summaries) get a short text answer and take no turn.

Every request is recorded with its path and parsed body, so a test can read what
the model was told: the tools offered, and each tool result (a hook's deny reason
arrives there). The server stands in for the model only; everything else in a
journey is the real program.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL_TEXT = "done"
"""What the model says once its script is used up."""

SIDE_TEXT = "ok"
"""What the model answers to a request that offers no tools."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a turn: the tool's name and its input: an object for a function
    tool, a text for a freeform tool (the Responses API's ``custom`` tools, such as the
    ``apply_patch`` Codex offers the models it knows)."""

    name: str
    input: dict[str, Any] | str


@dataclass(frozen=True)
class Turn:
    """One answer of the model: tool calls (run by the host, results sent back), then text."""

    tool_calls: tuple[ToolCall, ...] = ()
    text: str = ""


Step = Turn | Callable[[dict[str, Any]], Turn]
"""A turn, or a function from the request body to the turn (a model that reads its input)."""


def call(tool: str, /, **tool_input: Any) -> Turn:
    """A turn with one tool call: ``call("Write", file_path=..., content=...)`` (the tool's
    name is positional-only, so an input may itself be called ``name``)."""
    return Turn((ToolCall(tool, tool_input),))


def freeform(name: str, text: str) -> Turn:
    """A turn with one call of a freeform tool: ``freeform("apply_patch", patch_text)``."""
    return Turn((ToolCall(name, text),))


def say(text: str) -> Turn:
    """A turn with text only: the model ends its turn."""
    return Turn(text=text)


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    body: dict[str, Any]
    turn: int | None
    """Index of the script turn that answered it, ``None`` for side requests."""
    api_key: str = ""
    """The key the host sent (``x-api-key``, or a bearer token), for a test of who holds it."""


@dataclass
class _State:
    script: list[Step]
    then: Step | None = None
    requests: list[Recorded] = field(default_factory=list)
    next_turn: int = 0
    errors: list[BaseException] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: int = 0

    def new_id(self, prefix: str) -> str:
        with self.lock:
            self.ids += 1
            return f"{prefix}_{self.ids:04d}"


class ModelServer:
    """The scripted model: ``with ModelServer([call("Write", ...), say("ok")]) as model:``.

    ``model.base_url`` is the loopback root (``http://127.0.0.1:PORT``); Claude Code takes
    it as ``ANTHROPIC_BASE_URL``, Codex as a provider's ``base_url`` plus ``/v1``.
    """

    def __init__(self, script: Sequence[Step] = (), *, then: Step | None = None) -> None:
        """``then`` answers every turn once the script is used up (default: "done"); a
        function there makes a model that serves any number of sessions at once."""
        self._state = _State(list(script), then)
        state = self._state

        class Handler(_Handler):
            shared = state

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ModelServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._state.errors and exc[0] is None:
            # A scripted step that failed (an assertion about what the model was told)
            # fails the test here: in the server thread it could only log.
            raise self._state.errors[0]

    @property
    def requests(self) -> list[Recorded]:
        """Every request received so far, in order."""
        with self._state.lock:
            return list(self._state.requests)


@dataclass(frozen=True)
class ToolResult:
    """A tool result as the model received it: the text and whether it was an error
    (the Responses API has no such flag: always false there)."""

    text: str
    is_error: bool


def tool_names(body: dict[str, Any]) -> Iterator[str]:
    """Names of the tools a request offers (Anthropic ``name``; OpenAI function ``name``,
    namespaces expanded as ``namespace.name``)."""
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        name = tool.get("name")
        inner = tool.get("tools")
        if isinstance(inner, list) and isinstance(name, str):
            for sub in inner:
                if isinstance(sub, dict) and isinstance(sub.get("name"), str):
                    yield f"{name}.{sub['name']}"
        elif isinstance(name, str):
            yield name
        elif isinstance(tool.get("type"), str):
            yield str(tool["type"])


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        )
    return ""


def tool_results(body: dict[str, Any]) -> Iterator[ToolResult]:
    """Tool results in a request: Anthropic ``tool_result`` blocks of user messages,
    OpenAI ``function_call_output`` / ``custom_tool_call_output`` input items."""
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                yield ToolResult(_text_of(block.get("content")), bool(block.get("is_error")))
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            output = item.get("output")
            if isinstance(output, dict):
                output = output.get("content") or output.get("body") or ""
            yield ToolResult(_text_of(output), False)


class _Handler(BaseHTTPRequestHandler):
    shared: _State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the recorded requests are the log."""

    # -- plumbing -------------------------------------------------------------------

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}
        return parsed if isinstance(parsed, dict) else {"_value": parsed}

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        data = b"".join(
            f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in events
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body: dict[str, Any], takes_turn: bool) -> Turn:
        state = self.shared
        with state.lock:
            if not takes_turn:
                state.requests.append(Recorded(self.command, self.path, body, None))
                return say(SIDE_TEXT)
            index = state.next_turn
            state.next_turn += 1
            key = self.headers.get("x-api-key") or self.headers.get("Authorization", "")
            state.requests.append(
                Recorded(self.command, self.path, body, index, key.removeprefix("Bearer "))
            )
            after = state.then if state.then is not None else say(FINAL_TEXT)
            step: Step = state.script[index] if index < len(state.script) else after
        if not callable(step):
            return step
        try:
            return step(body)
        except Exception as error:  # noqa: BLE001 (kept, raised again when the server stops)
            with state.lock:
                state.errors.append(error)
            # The host sees a failed model call; the test sees the error when the server stops.
            return say(f"scripted step failed: {error!r}")

    # -- routes ---------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        with self.shared.lock:
            self.shared.requests.append(Recorded("GET", self.path, {}, None))
        if path.endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"type": "not_found", "message": path}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        body = self._body()
        if path.endswith("/messages/count_tokens"):
            with self.shared.lock:
                self.shared.requests.append(Recorded("POST", self.path, body, None))
            self._json(200, {"input_tokens": 10})
        elif path.endswith("/messages"):
            turn = self._record(body, takes_turn=bool(body.get("tools")))
            self._anthropic(body, turn)
        elif path.endswith("/responses"):
            turn = self._record(body, takes_turn=bool(body.get("tools")))
            self._responses(body, turn)
        else:
            with self.shared.lock:
                self.shared.requests.append(Recorded("POST", self.path, body, None))
            self._json(404, {"error": {"type": "not_found", "message": path}})

    # -- Anthropic Messages API -----------------------------------------------------

    def _anthropic(self, body: dict[str, Any], turn: Turn) -> None:
        model = str(body.get("model") or "claude-scripted")
        message_id = self.shared.new_id("msg")
        blocks: list[dict[str, Any]] = []
        if turn.text or not turn.tool_calls:
            blocks.append({"type": "text", "text": turn.text or FINAL_TEXT})
        for tool_call in turn.tool_calls:
            # The Messages API has no freeform tools: every input is an object.
            assert isinstance(tool_call.input, dict), tool_call
            blocks.append(
                {
                    "type": "tool_use",
                    "id": self.shared.new_id("toolu"),
                    "name": tool_call.name,
                    "input": tool_call.input,
                }
            )
        stop_reason = "tool_use" if turn.tool_calls else "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 10}
        if not body.get("stream"):
            self._json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 1},
                    },
                },
            )
        ]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                ),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(events)

    # -- OpenAI Responses API -------------------------------------------------------

    def _responses(self, body: dict[str, Any], turn: Turn) -> None:
        response_id = self.shared.new_id("resp")
        items: list[dict[str, Any]] = []
        for tool_call in turn.tool_calls:
            if isinstance(tool_call.input, str):
                items.append(
                    {
                        "type": "custom_tool_call",
                        "id": self.shared.new_id("ctc"),
                        "call_id": self.shared.new_id("call"),
                        "name": tool_call.name,
                        "input": tool_call.input,
                        "status": "completed",
                    }
                )
                continue
            item: dict[str, Any] = {
                "type": "function_call",
                "id": self.shared.new_id("fc"),
                "call_id": self.shared.new_id("call"),
                "name": tool_call.name,
                "arguments": json.dumps(tool_call.input),
                "status": "completed",
            }
            # A tool of a namespace (offered as {"type": "namespace", "tools": [...]}) is
            # written "namespace.tool" in a script and called with both fields.
            namespace, dot, name = tool_call.name.rpartition(".")
            if dot:
                item |= {"name": name, "namespace": namespace}
            items.append(item)
        if turn.text or not turn.tool_calls:
            items.append(
                {
                    "type": "message",
                    "id": self.shared.new_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": turn.text or FINAL_TEXT, "annotations": []}
                    ],
                }
            )
        base = {
            "id": response_id,
            "object": "response",
            "model": str(body.get("model") or "scripted"),
            "status": "in_progress",
            "output": [],
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": base}),
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": item},
                )
            )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        done = base | {
            "status": "completed",
            "output": items,
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 10,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 20,
            },
        }
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        self._sse(events)


# -- a model that follows the harness it is given ----------------------------------------

TASK_ADD = re.compile(
    r"Add a function (\w+)\(([\w, ]*)\) to ([\w./-]+) that returns ([^.\n]+)\."
)
"""The task of adding a function: ``Add a function add(a, b) to calc.py that returns a + b.``"""

TASK_DELETE = re.compile(r"Delete the file ([\w./-]+)\.")
"""The task of deleting a file: ``Delete the file tests/test_calc.py.``"""

RULE_TYPE_HINTS = "always add type hints"
RULE_TEST_FIRST = "write the test first"
RULE_KEEP_TESTS = "never delete tests"
HARNESS_RULES = (RULE_TYPE_HINTS, RULE_TEST_FIRST, RULE_KEEP_TESTS)
"""The rules :func:`harness_worker` obeys when its instructions (CLAUDE.md, the system
prompt, a skill) contain them; without them it does the plainer work."""


def request_text(body: dict[str, Any]) -> str:
    """Everything a request tells the model: system prompt, instructions and messages."""
    parts = [_text_of(body.get("system")), str(body.get("instructions") or "")]
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            parts.append(_text_of(message.get("content")))
    for item in body.get("input") or []:
        if isinstance(item, dict):
            parts.append(_text_of(item.get("content")))
    return "\n".join(parts)


def working_directory(body: dict[str, Any]) -> str:
    """The working directory the host names in its system prompt (``""`` when none)."""
    text = request_text(body)
    match = re.search(r"[Ww]orking directory: (/\S+)", text) or re.search(
        r"<cwd>(/[^<]+)</cwd>", text
    )
    return match.group(1) if match else ""


def obeyed_rules(body: dict[str, Any]) -> tuple[str, ...]:
    """The :data:`HARNESS_RULES` the request's instructions contain."""
    text = request_text(body).lower()
    return tuple(rule for rule in HARNESS_RULES if rule in text)


def _shell(body: dict[str, Any], command: str) -> ToolCall:
    """``command`` through the host's shell tool: Codex's ``exec_command``, else Claude
    Code's ``Bash``."""
    if "exec_command" in set(tool_names(body)):
        return ToolCall("exec_command", {"cmd": command})
    return ToolCall("Bash", {"command": command, "description": "run a command"})


def _write(body: dict[str, Any], path: str, content: str) -> ToolCall:
    # Through the shell: Claude Code's Write refuses to replace a file it has not read.
    return _shell(body, f"mkdir -p \"$(dirname {path})\" && cat > {path} <<'PLANGATE_EOF'\n"
                        f"{content}PLANGATE_EOF")


def harness_worker(body: dict[str, Any]) -> Turn:
    """A model turn that does the task of the request as its instructions say.

    It reads the task from the request (:data:`TASK_ADD`, :data:`TASK_DELETE`) and the
    rules from everything the host sent (CLAUDE.md arrives in the messages, appended
    prompts in the system prompt): with ``always add type hints`` it annotates the
    function, with ``write the test first`` it writes a test before the code, with
    ``never delete tests`` it refuses to delete a file under ``tests/``. So a better
    harness really produces better work. It answers through the host's shell tool
    (Claude Code's ``Bash``, Codex's ``exec_command``) at absolute paths under the host's
    working directory.
    """
    if any(True for _ in tool_results(body)):
        return say(FINAL_TEXT)  # the work is done: its tool results came back
    text = request_text(body)
    rules = obeyed_rules(body)
    cwd = working_directory(body)
    add = TASK_ADD.search(text)
    if add is not None:
        name, params, target, expression = add.groups()
        names = [p.strip() for p in params.split(",") if p.strip()]
        if RULE_TYPE_HINTS in rules:
            signature = ", ".join(f"{p}: int" for p in names) + ") -> int:"
        else:
            signature = ", ".join(names) + "):"
        calls = []
        if RULE_TEST_FIRST in rules:
            module = target.rsplit("/", 1)[-1].removesuffix(".py")
            args = ", ".join("2" for _ in names)
            test = (f"from {module} import {name}\n\n\ndef test_{name}():\n"
                    f"    assert {name}({args}) == {name}({args})\n")
            calls.append(_write(body, f"{cwd}/tests/test_{name}.py", test))
        calls.append(
            _write(body, f"{cwd}/{target}", f"def {name}({signature}\n    return {expression}\n")
        )
        return Turn(tuple(calls))
    delete = TASK_DELETE.search(text)
    if delete is not None:
        target = delete.group(1)
        if RULE_KEEP_TESTS in rules and target.startswith("tests/"):
            return say("I will not delete a test: the instructions say never to.")
        return Turn((_shell(body, f"rm -f {cwd}/{target}"),))
    return say(FINAL_TEXT)
