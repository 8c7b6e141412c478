"""Cursor's hook protocol (``.cursor/hooks.json``, version 1).

Input: ``hook_event_name``, ``conversation_id``, ``generation_id``,
``workspace_roots`` and per-event fields. Handled events:

- ``beforeShellExecution`` (``command``, ``cwd``): the conservative shell classifier;
- ``preToolUse`` (``tool_name``, ``tool_input``): file tools by their path key
  (``file_path``, ``path``, ``target_file``), shell tools by ``command``, known
  read-only tools, ``Task`` (a subagent, whose own calls reach the same hooks);
  anything else is denied as unknown (:data:`plangate.hooks.hosts.tools.CURSOR_TOOLS`);
- ``beforeMCPExecution``: denied unless ``.plangate/tools.toml`` declares the tool
  read-only (an MCP tool's writes cannot be judged);
- ``beforeReadFile``: allowed (reads change nothing);
- ``afterFileEdit`` and ``stop``: effect-based checks of the working tree.

Output: always one JSON object on stdout, exit 0. Deny:
``{"permission": "deny", "user_message": ..., "agent_message": ...}`` (plus
``"continue": false`` for events that only honour that). Allow on
``before*``/``preToolUse`` events: ``{"permission": "allow"}``. ``afterFileEdit``
cannot block: a change outside scope is reported on stderr and in the ledger.
``stop`` with a change outside scope answers ``{"followup_message": ...}`` so the
agent continues and fixes it (only while ``loop_count`` is below 2, so a stuck
session cannot loop for ever; the git hooks and CI still stop the change).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plangate.hooks.hosts.protocol import (
    HookOutput,
    command_text,
    dumps,
    fail_closed,
    parse_payload,
    payload_error,
    reason_text,
    tool_call,
    under,
    unknown_tool_request,
    unreadable_patch_request,
)
from plangate.hooks.hosts.tools import CURSOR_PATH_KEYS, CURSOR_TOOLS, ToolKind, is_mcp_tool
from plangate.verdict import Result

BEFORE_SHELL = "beforeShellExecution"
PRE_TOOL = "preToolUse"
BEFORE_MCP = "beforeMCPExecution"
BEFORE_READ = "beforeReadFile"
AFTER_EDIT = "afterFileEdit"
STOP = "stop"
EVENTS = (BEFORE_SHELL, PRE_TOOL, BEFORE_MCP, BEFORE_READ, AFTER_EDIT, STOP)

PATH_KEYS = CURSOR_PATH_KEYS
DIRECTORY_KEYS = ("cwd", "working_directory", "workdir", "workingDirectory")
"""Keys a shell tool may carry its directory in; the command is judged there."""
MAX_STOP_FOLLOWUPS = 2


def deny_output(result: Result, label: str = "", exit_code: int = 0) -> HookOutput:
    """Cursor's deny form (``exit_code`` 2 when answering through the Claude Code hook)."""
    text = reason_text(result, label)
    body = {"permission": "deny", "user_message": text, "agent_message": text, "continue": False}
    return HookOutput(dumps(body), text + "\n" if exit_code else "", exit_code)


def _cwd(payload: Mapping[str, Any]) -> str | None:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    return None


def _file_request(tool: str, tool_input: Mapping[str, Any], cwd: str) -> Any:
    """Every path key present is a target: which one the tool uses is not ours to guess."""
    from plangate.hooks.service import HookEvent, HookRequest

    if tool == "apply_patch" and isinstance(tool_input.get("command"), str):
        from plangate.hooks.hosts.codex import patch_targets

        paths, problems = patch_targets(tool_input["command"])
        if problems:
            return unreadable_patch_request("cursor", HookEvent.PRE, cwd, tool, problems)
        return HookRequest("cursor", HookEvent.PRE, cwd, tool, file_targets=tuple(paths))
    targets: list[str] = []
    for key in PATH_KEYS:
        if key not in tool_input:
            continue
        value = tool_input[key]
        if not isinstance(value, str) or not value:
            return payload_error(f"{tool} has a {key} that is not a non-empty text")
        targets.append(value)
    if not targets:
        return payload_error(f"{tool} names no file path")
    return HookRequest("cursor", HookEvent.PRE, cwd, tool, file_targets=tuple(targets))


def _shell_tool_request(tool: str, tool_input: Mapping[str, Any], cwd: str) -> Any:
    """A shell tool's command, judged in the directory it names (at most one key)."""
    from plangate.hooks.service import HookEvent, HookRequest

    command = command_text(tool_input.get("command"))
    if command is None:
        return payload_error(f"{tool} has no command")
    directories = [tool_input[k] for k in DIRECTORY_KEYS if k in tool_input]
    if len(directories) > 1 or any(not isinstance(d, str) or not d for d in directories):
        return payload_error(f"{tool} has an ambiguous or invalid working directory")
    if directories:
        cwd = under(cwd, str(directories[0]))
    return HookRequest("cursor", HookEvent.PRE, cwd, tool, shell_command=command)


def _tool_request(payload: Mapping[str, Any], cwd: str) -> Any:
    from plangate.hooks.service import HookEvent, HookRequest

    call = tool_call(payload)
    if isinstance(call, Result):
        return call
    tool, tool_input = call
    spec = CURSOR_TOOLS.get(tool)
    kind = spec.kind if spec is not None else None
    if kind in (ToolKind.WRITER, ToolKind.PATCH):
        return _file_request(tool, tool_input, cwd)
    if kind is ToolKind.SHELL:
        return _shell_tool_request(tool, tool_input, cwd)
    if kind in (ToolKind.READ, ToolKind.AGENT):
        return HookRequest("cursor", HookEvent.PRE, cwd, tool, read_only=True)
    if is_mcp_tool(tool):
        from plangate.hooks.hosts.tool_policy import mcp_request

        return mcp_request("cursor", HookEvent.PRE, cwd, tool)
    return unknown_tool_request("cursor", HookEvent.PRE, cwd, tool)


def _event_request(event: str, payload: Mapping[str, Any], cwd: str) -> Any:
    """The request of one Cursor event, or the deny :class:`Result` of an unusable payload."""
    from plangate.hooks.service import HookEvent, HookRequest

    if event == BEFORE_READ:
        return HookRequest("cursor", HookEvent.PRE, cwd, "read", read_only=True)
    if event == BEFORE_MCP:
        from plangate.hooks.hosts.tool_policy import mcp_request

        tool = payload.get("tool_name")
        if not isinstance(tool, str) or not tool:
            return payload_error("beforeMCPExecution has no tool_name")
        return mcp_request("cursor", HookEvent.PRE, cwd, tool)
    if event == BEFORE_SHELL:
        command = command_text(payload.get("command"))
        if command is None:
            return payload_error("beforeShellExecution has no command")
        return HookRequest("cursor", HookEvent.PRE, cwd, "shell", shell_command=command)
    if event == PRE_TOOL:
        return _tool_request(payload, cwd)
    return HookRequest(
        "cursor",
        HookEvent.POST if event == AFTER_EDIT else HookEvent.STOP,
        cwd,
        str(event),
    )


def _answer(
    event: str, payload: Mapping[str, Any], result: Result, label: str, deny_exit: int = 0
) -> HookOutput:
    """Cursor's answer to ``event`` for the decision ``result`` (see the module docstring)."""
    if event == AFTER_EDIT:
        if result.accepted:
            return HookOutput(dumps({}), "", 0)
        return HookOutput(dumps({}), reason_text(result, label) + "\n", 0)
    if event == STOP:
        if result.accepted:
            return HookOutput(dumps({}), "", 0)
        loops = payload.get("loop_count")
        text = reason_text(result, label)
        if isinstance(loops, int) and not isinstance(loops, bool) and (loops >= MAX_STOP_FOLLOWUPS):
            return HookOutput(dumps({}), text + "\n", 0)
        return HookOutput(dumps({"followup_message": text}), "", 0)
    if result.accepted:
        return HookOutput(dumps({"permission": "allow"}), "", 0)
    return deny_output(result, label, deny_exit)


def handle(data: bytes, env: Mapping[str, str]) -> HookOutput:
    """Run the Cursor hook on raw stdin bytes; never raises."""

    def deny(result: Result) -> HookOutput:
        return deny_output(result)

    def run() -> HookOutput:
        payload = parse_payload(data)
        if isinstance(payload, Result):
            return deny(payload)
        return handle_parsed(payload, env)

    return fail_closed(run, deny)


def handle_parsed(
    payload: Mapping[str, Any], env: Mapping[str, str], *, deny_exit: int = 0
) -> HookOutput:
    """Answer one parsed Cursor payload; never raises. ``deny_exit`` is the exit code of a
    deny (2 when Cursor runs the Claude Code hook, which it reads as a deny as well)."""
    seen = {"label": ""}

    def deny(result: Result) -> HookOutput:
        return deny_output(result, seen["label"], deny_exit)

    def run() -> HookOutput:
        from plangate.hooks.service import evaluate

        event = payload.get("hook_event_name")
        if event not in EVENTS:
            return deny(payload_error(f"unknown hook event {event!r}", "HOOK_EVENT_UNKNOWN"))
        cwd = _cwd(payload)
        if cwd is None:
            return deny(payload_error("neither cwd nor workspace_roots is given"))
        request = _event_request(str(event), payload, cwd)
        if isinstance(request, Result):
            return deny(request)
        seen["label"] = request.label
        return _answer(str(event), payload, evaluate(request, env), request.label, deny_exit)

    return fail_closed(run, deny)
