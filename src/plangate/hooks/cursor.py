"""Cursor's hook protocol (``.cursor/hooks.json``, version 1).

Input: ``hook_event_name``, ``conversation_id``, ``generation_id``,
``workspace_roots`` and per-event fields. Handled events:

- ``beforeShellExecution`` (``command``, ``cwd``): the conservative shell classifier;
- ``preToolUse`` (``tool_name``, ``tool_input``): file tools by their path key
  (``file_path``, ``path``, ``target_file``), shell tools by ``command``, known
  read-only tools; anything else is denied as unknown;
- ``beforeMCPExecution``: denied (an MCP tool's writes cannot be judged);
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

from plangate.hooks.claude import parse_payload, payload_error
from plangate.hooks.protocol import HookOutput, command_text, dumps, fail_closed, reason_text
from plangate.verdict import Result

BEFORE_SHELL = "beforeShellExecution"
PRE_TOOL = "preToolUse"
BEFORE_MCP = "beforeMCPExecution"
BEFORE_READ = "beforeReadFile"
AFTER_EDIT = "afterFileEdit"
STOP = "stop"
EVENTS = (BEFORE_SHELL, PRE_TOOL, BEFORE_MCP, BEFORE_READ, AFTER_EDIT, STOP)

FILE_TOOLS = frozenset(
    {"Write", "Edit", "MultiEdit", "StrReplace", "search_replace", "edit_file", "Delete",
     "delete_file", "apply_patch", "write", "edit"}
)
SHELL_TOOLS = frozenset({"Shell", "run_terminal_cmd", "Bash", "terminal"})
READ_TOOLS = frozenset(
    {"Read", "read_file", "Grep", "grep_search", "Glob", "glob_file_search", "codebase_search",
     "list_dir", "LS", "file_search", "web_search", "todo_write", "TodoWrite", "read_lints"}
)
PATH_KEYS = ("file_path", "path", "target_file", "filePath")
DIRECTORY_KEYS = ("cwd", "working_directory", "workdir", "workingDirectory")
"""Keys a shell tool may carry its directory in; the command is judged there."""
MAX_STOP_FOLLOWUPS = 2


def deny_output(result: Result, label: str = "") -> HookOutput:
    """Cursor's deny form."""
    text = reason_text(result, label)
    body = {"permission": "deny", "user_message": text, "agent_message": text, "continue": False}
    return HookOutput(dumps(body), "", 0)


def _cwd(payload: Mapping[str, Any]) -> str | None:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    return None


def _tool_request(payload: Mapping[str, Any], cwd: str) -> Any:
    from plangate.hooks.service import HookEvent, HookRequest

    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not tool:
        return payload_error("tool_name is missing or not text")
    if not isinstance(tool_input, dict):
        return payload_error("tool_input is missing or not an object")
    if tool in FILE_TOOLS:
        if tool == "apply_patch" and isinstance(tool_input.get("command"), str):
            from plangate.hooks.codex import patch_targets

            paths, problems = patch_targets(tool_input["command"])
            if problems:
                return HookRequest("cursor", HookEvent.PRE, cwd, tool,
                                   unclassifiable=tuple(problems),
                                   unclassifiable_code="HOOK_PATCH_UNREADABLE")
            return HookRequest("cursor", HookEvent.PRE, cwd, tool, file_targets=tuple(paths))
        # Every path key present is a target: which one the tool uses is not ours to guess.
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
    if tool in SHELL_TOOLS:
        command = command_text(tool_input.get("command"))
        if command is None:
            return payload_error(f"{tool} has no command")
        directories = [tool_input[k] for k in DIRECTORY_KEYS if k in tool_input]
        if len(directories) > 1 or any(not isinstance(d, str) or not d for d in directories):
            return payload_error(f"{tool} has an ambiguous or invalid working directory")
        if directories:
            directory = str(directories[0])
            cwd = directory if directory.startswith("/") else f"{cwd.rstrip('/')}/{directory}"
        return HookRequest("cursor", HookEvent.PRE, cwd, tool, shell_command=command)
    if tool in READ_TOOLS:
        return HookRequest("cursor", HookEvent.PRE, cwd, tool, read_only=True)
    return HookRequest("cursor", HookEvent.PRE, cwd, tool,
                       unclassifiable=(f"unknown tool {tool!r}: its writes cannot be judged",),
                       unclassifiable_code="HOOK_TOOL_UNKNOWN")


def handle(data: bytes, env: Mapping[str, str]) -> HookOutput:
    """Run the Cursor hook on raw stdin bytes; never raises."""
    seen = {"label": ""}

    def deny(result: Result) -> HookOutput:
        return deny_output(result, seen["label"])

    def run() -> HookOutput:
        from plangate.hooks.service import HookEvent, HookRequest, evaluate

        payload = parse_payload(data)
        if isinstance(payload, Result):
            return deny(payload)
        event = payload.get("hook_event_name")
        if event not in EVENTS:
            return deny(payload_error(f"unknown hook event {event!r}", "HOOK_EVENT_UNKNOWN"))
        cwd = _cwd(payload)
        if cwd is None:
            return deny(payload_error("neither cwd nor workspace_roots is given"))
        if event == BEFORE_READ:
            request: Any = HookRequest("cursor", HookEvent.PRE, cwd, "read", read_only=True)
        elif event == BEFORE_MCP:
            tool = str(payload.get("tool_name", "mcp"))
            request = HookRequest("cursor", HookEvent.PRE, cwd, tool, unclassifiable=(
                f"MCP tool {tool!r}: its writes cannot be judged",),
                unclassifiable_code="HOOK_TOOL_UNKNOWN")
        elif event == BEFORE_SHELL:
            command = command_text(payload.get("command"))
            if command is None:
                return deny(payload_error("beforeShellExecution has no command"))
            request = HookRequest("cursor", HookEvent.PRE, cwd, "shell", shell_command=command)
        elif event == PRE_TOOL:
            request = _tool_request(payload, cwd)
            if isinstance(request, Result):
                return deny(request)
        else:
            request = HookRequest(
                "cursor", HookEvent.POST if event == AFTER_EDIT else HookEvent.STOP, cwd,
                str(event),
            )
        seen["label"] = request.label
        result = evaluate(request, env)
        if event == AFTER_EDIT:
            if result.accepted:
                return HookOutput(dumps({}), "", 0)
            return HookOutput(dumps({}), reason_text(result, request.label) + "\n", 0)
        if event == STOP:
            if result.accepted:
                return HookOutput(dumps({}), "", 0)
            loops = payload.get("loop_count")
            text = reason_text(result, request.label)
            if isinstance(loops, int) and not isinstance(loops, bool) and (
                loops >= MAX_STOP_FOLLOWUPS
            ):
                return HookOutput(dumps({}), text + "\n", 0)
            return HookOutput(dumps({"followup_message": text}), "", 0)
        if result.accepted:
            return HookOutput(dumps({"permission": "allow"}), "", 0)
        return deny(result)

    return fail_closed(run, deny)
