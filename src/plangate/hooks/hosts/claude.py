"""Claude Code's hook protocol: JSON on stdin, the answer on stdout/stderr/exit.

Input: ``session_id``, ``cwd``, ``hook_event_name`` and, for tool events,
``tool_name`` and ``tool_input``. Handled events:

- ``PreToolUse``: each tool by its kind in Claude Code's vocabulary
  (:data:`plangate.hooks.hosts.tools.CLAUDE_TOOLS`): writers by their path
  argument, shells (``Bash``, ``Monitor``) through the conservative classifier,
  readers, session-state tools and agent spawns allowed, worktree tools denied;
  an MCP tool only when ``.plangate/tools.toml`` declares it read-only; any other
  tool is denied as unknown: install the hook without a matcher and the decision
  happens here.
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

Cursor can run the hooks of ``.claude/settings.json`` too. A payload Cursor sent
(``cursor_version``, or ``conversation_id`` and ``workspace_roots`` without a
``session_id``) is answered as Cursor expects: a Cursor event name goes to the
Cursor adapter (its JSON answer, and exit 2 on a deny), a Claude Code event name
is read with Cursor's tool names as well (``Shell``, ``StrReplace``, ``Delete``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from plangate.hooks.hosts.protocol import (
    HookOutput,
    command_text,
    dumps,
    fail_closed,
    file_tool_path,
    parse_payload,
    payload_error,
    reason_text,
    tool_call,
    unknown_tool_request,
)
from plangate.hooks.hosts.tools import (
    CLAUDE_TOOLS,
    CURSOR_TOOLS,
    WORKTREE_TARGET,
    Tool,
    ToolKind,
    is_mcp_tool,
)
from plangate.verdict import Result

PRE = "PreToolUse"
POST = "PostToolUse"
STOP_EVENTS = ("Stop", "SubagentStop")


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
    return table_request(host, payload, cwd, event, CLAUDE_TOOLS)


def cursor_tool_request(host: str, payload: Mapping[str, Any], cwd: str, event: str) -> Any:
    """As :func:`tool_request`, for a Cursor payload sent to the Claude Code hook: Cursor's
    tool names (``Shell``, ``StrReplace``, ``Delete``...) are read with Cursor's table."""
    call = tool_call(payload)
    if isinstance(call, Result):
        return call
    tool = call[0]
    table = CLAUDE_TOOLS if tool in CLAUDE_TOOLS else CURSOR_TOOLS
    return table_request(host, payload, cwd, event, table)


def table_request(
    host: str, payload: Mapping[str, Any], cwd: str, event: str, table: Mapping[str, Tool]
) -> Any:
    """The request of one tool call, by the tool's kind in ``table``."""
    from plangate.hooks.service import HookRequest

    call = tool_call(payload)
    if isinstance(call, Result):
        return call
    tool, tool_input = call
    spec = table.get(tool)
    if spec is None:
        if is_mcp_tool(tool):
            from plangate.hooks.hosts.tool_policy import mcp_request

            return mcp_request(host, event, cwd, tool)
        return unknown_tool_request(host, event, cwd, tool)
    if spec.kind is ToolKind.WRITER:
        targets: list[str] = []
        for key in spec.keys:
            if key not in tool_input and len(spec.keys) > 1:
                continue
            path = file_tool_path(tool, tool_input, key)
            if isinstance(path, Result):
                return path
            targets.append(path)
        if not targets:
            return payload_error(f"{tool} names no file path")
        return HookRequest(host, event, cwd, tool, file_targets=tuple(targets))
    if spec.kind is ToolKind.SHELL:
        command = command_text(tool_input.get("command"))
        if command is None:
            return payload_error(f"{tool} has no command text")
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
    if spec.kind is ToolKind.WORKTREE:
        from plangate.hooks.service import find_worktree_root

        root = find_worktree_root(cwd) or cwd
        return HookRequest(
            host, event, cwd, tool, file_targets=(f"{root.rstrip('/')}/{WORKTREE_TARGET}",)
        )
    if spec.kind is ToolKind.PATCH:
        from plangate.hooks.hosts.codex import tool_request as codex_request

        return codex_request(host, payload, cwd, event)
    # READ and AGENT: the call writes nothing itself (an agent's own calls are hooked).
    return HookRequest(host, event, cwd, tool, read_only=True)


def is_cursor_payload(payload: Mapping[str, Any]) -> bool:
    """True for a payload Cursor sent (it loads ``.claude/settings.json`` hooks too)."""
    if "cursor_version" in payload:
        return True
    return (
        "conversation_id" in payload
        and "workspace_roots" in payload
        and ("session_id" not in payload)
    )


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
        maker = make_request
        cursor_sent = host == "claude" and is_cursor_payload(payload)
        if cursor_sent:
            from plangate.hooks.hosts.cursor import EVENTS as CURSOR_EVENTS
            from plangate.hooks.hosts.cursor import handle_parsed

            if payload.get("hook_event_name") in CURSOR_EVENTS:
                # Cursor running the Claude Code hook with its own event: Cursor's
                # answer, and exit 2 on a deny (Cursor reads exit 2 as a deny too).
                return handle_parsed(payload, env, deny_exit=2)
            maker = cursor_tool_request
        event = payload.get("hook_event_name")
        if event not in (PRE, POST, *STOP_EVENTS):
            return deny(payload_error(f"unknown hook event {event!r}", "HOOK_EVENT_UNKNOWN"))
        event_seen["event"] = str(event)
        cwd = payload.get("cwd")
        roots = payload.get("workspace_roots")
        if cursor_sent and not cwd and isinstance(roots, list) and roots:
            cwd = roots[0]
        if not isinstance(cwd, str) or not cwd:
            return deny(payload_error("cwd is missing"))
        return dispatch(
            host,
            payload,
            cwd,
            str(event),
            env=env,
            deny=deny,
            make_request=maker,
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
