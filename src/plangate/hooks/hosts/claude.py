"""Claude Code's hook protocol: JSON on stdin, the answer on stdout/stderr/exit.

Input: ``session_id``, ``cwd``, ``hook_event_name`` and, for tool events,
``tool_name`` and ``tool_input``. Handled events:

- ``PreToolUse``: ``Write``/``Edit``/``MultiEdit`` (``file_path``),
  ``NotebookEdit`` (``notebook_path``), ``Bash`` (``command``, through the
  conservative classifier), known read-only tools; any other tool (including
  ``mcp__*`` tools) is denied as unknown: install the hook without a matcher
  and the decision happens here.
- ``PostToolUse``, ``Stop``, ``SubagentStop``: effect-based. The working tree's
  changes are compared with what may be written; a change outside scope blocks.

Deny form (every event, every failure): exit code 2, the reason on stderr
(Claude Code feeds it to the model), and on stdout the JSON a host reads on
exit 0 (``hookSpecificOutput.permissionDecision: "deny"`` with
``permissionDecisionReason`` for PreToolUse, ``decision: "block"`` with
``reason`` otherwise), so either channel denies. Allow: exit 0 and no output,
which leaves Claude Code's own permission rules in charge (an explicit
``"allow"`` would skip the user's prompts). Never exit 1: Claude Code treats
it as a non-blocking error and runs the tool.

``Stop`` with ``stop_hook_active: true`` (Claude is already continuing because
of a Stop hook) reports instead of blocking again, to avoid an endless loop;
the decision is still a deny in the ledger, and the git hooks and CI still stop
the change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from plangate.hooks.hosts.protocol import (
    HookOutput,
    dumps,
    fail_closed,
    file_tool_path,
    parse_payload,
    payload_error,
    reason_text,
    tool_call,
    unknown_tool_request,
)
from plangate.verdict import Result

PRE = "PreToolUse"
POST = "PostToolUse"
STOP_EVENTS = ("Stop", "SubagentStop")

FILE_TOOLS: dict[str, str] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
SHELL_TOOLS = frozenset({"Bash"})
READ_TOOLS = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "WebFetch",
        "WebSearch",
        "TodoWrite",
        "Task",
        "Agent",
        "BashOutput",
        "KillShell",
        "KillBash",
        "ExitPlanMode",
        "NotebookRead",
        "AskUserQuestion",
        "SlashCommand",
        "Skill",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "TaskOutput",
    }
)


def deny_output(result: Result, event: str, label: str = "") -> HookOutput:
    """Claude Code's deny form for ``event`` (see the module docstring)."""
    text = reason_text(result, label)
    if event == PRE:
        body: dict[str, Any] = {
            "hookSpecificOutput": {
                "hookEventName": PRE,
                "permissionDecision": "deny",
                "permissionDecisionReason": text,
            }
        }
    else:
        body = {"decision": "block", "reason": text}
    return HookOutput(dumps(body), text + "\n", 2)


def tool_request(host: str, payload: Mapping[str, Any], cwd: str, event: str) -> Any:
    """A :class:`HookRequest` for a PreToolUse payload (Claude Code tool names)."""
    from plangate.hooks.service import HookRequest

    call = tool_call(payload)
    if isinstance(call, Result):
        return call
    tool, tool_input = call
    if tool in FILE_TOOLS:
        path = file_tool_path(tool, tool_input, FILE_TOOLS[tool])
        if isinstance(path, Result):
            return path
        return HookRequest(host, event, cwd, tool, file_targets=(path,))
    if tool in SHELL_TOOLS:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return payload_error("Bash has no command text")
        bypass = tool_input.get("dangerouslyDisableSandbox", False) is not False
        return HookRequest(
            host,
            event,
            cwd,
            tool,
            shell_command=command,
            host_sandbox=host == "claude",
            sandbox_bypass=bypass,
        )
    if tool in READ_TOOLS:
        return HookRequest(host, event, cwd, tool, read_only=True)
    return unknown_tool_request(host, event, cwd, tool)


def handle(data: bytes, env: Mapping[str, str]) -> HookOutput:
    """Run the Claude Code hook on raw stdin bytes; never raises."""
    return handle_claude_protocol("claude", data, env, tool_request)


def handle_claude_protocol(
    host: str,
    data: bytes,
    env: Mapping[str, str],
    make_request: Callable[[str, Mapping[str, Any], str, str], Any],
) -> HookOutput:
    """The Claude Code hook protocol (also spoken by Codex), for ``host``; never raises."""
    event_seen = {"event": PRE, "label": ""}

    def deny(result: Result) -> HookOutput:
        return deny_output(result, event_seen["event"], event_seen["label"])

    def run() -> HookOutput:
        payload = parse_payload(data)
        if isinstance(payload, Result):
            return deny(payload)
        event = payload.get("hook_event_name")
        if event not in (PRE, POST, *STOP_EVENTS):
            return deny(payload_error(f"unknown hook event {event!r}", "HOOK_EVENT_UNKNOWN"))
        event_seen["event"] = str(event)
        cwd = payload.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            return deny(payload_error("cwd is missing"))
        return dispatch(
            host,
            payload,
            cwd,
            str(event),
            env=env,
            deny=deny,
            make_request=make_request,
            event_seen=event_seen,
        )

    return fail_closed(run, deny)


def dispatch(
    host: str,
    payload: Mapping[str, Any],
    cwd: str,
    event: str,
    *,
    env: Mapping[str, str],
    deny: Callable[[Result], HookOutput],
    make_request: Callable[[str, Mapping[str, Any], str, str], Any],
    event_seen: dict[str, str],
) -> HookOutput:
    """Shared flow of the Claude-compatible hosts (Claude Code, Codex)."""
    from plangate.hooks.service import HookEvent, HookRequest, evaluate

    if event == PRE:
        request = make_request(host, payload, cwd, HookEvent.PRE)
        if isinstance(request, Result):
            return deny(request)
        event_seen["label"] = str(request.label)
    else:
        label = str(payload.get("tool_name", event)) if event == POST else event
        event_seen["label"] = label
        request = HookRequest(host, HookEvent.POST if event == POST else HookEvent.STOP, cwd, label)
    result = evaluate(request, env)
    if result.accepted:
        return HookOutput("", "", 0)
    if event in STOP_EVENTS and payload.get("stop_hook_active") is True:
        text = reason_text(result, event_seen["label"])
        return HookOutput(dumps({"systemMessage": text}), "", 0)
    return deny(result)
