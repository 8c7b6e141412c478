"""Cursor's hook protocol (``.cursor/hooks.json``, version 1).

Input: ``hook_event_name``, ``conversation_id``, ``generation_id``,
``workspace_roots`` and per-event fields. Handled events:

- ``beforeShellExecution`` (``command``, ``cwd``): the conservative shell classifier;
- ``preToolUse`` (``tool_name``, ``tool_input``): read with Cursor's vocabulary
  (:data:`plangate.hooks.hosts.tools.CURSOR_TOOLS`) by
  :func:`plangate.hooks.hosts.requests.tool_request`: file tools by their one path
  key (``file_path``, ``path``, ``target_file``, ``filePath``; two are ambiguous),
  shell tools by ``command`` in the directory one directory key names, known
  read-only tools, ``Task`` (a subagent, whose own calls reach the same hooks);
  anything else is denied as unknown;
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

Cursor also runs the hooks of ``.claude/settings.json`` (it is Claude Code's guest
in :data:`plangate.hooks.hosts.table.HOSTS`, which recognises its payloads there):
:func:`answer_as_guest` answers its own events, with exit 2 on a deny.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.hooks.hosts.protocol import (
    HookOutput,
    command_text,
    dumps,
    fail_closed,
    parse_payload,
    payload_error,
    reason_text,
)
from plangate.hooks.hosts.table import CURSOR
from plangate.verdict import Result

if TYPE_CHECKING:
    import subprocess

BEFORE_SHELL = "beforeShellExecution"
PRE_TOOL = "preToolUse"
BEFORE_MCP = "beforeMCPExecution"
BEFORE_READ = "beforeReadFile"
AFTER_EDIT = "afterFileEdit"
STOP = "stop"
EVENTS = (BEFORE_SHELL, PRE_TOOL, BEFORE_MCP, BEFORE_READ, AFTER_EDIT, STOP)

DIRECTORY_KEYS = ("cwd", "working_directory", "workdir", "workingDirectory")
"""Keys a tool may carry its directory in (at most one); the command is judged there."""
MAX_STOP_FOLLOWUPS = 2
GUEST_DENY_EXIT = 2
"""Exit code of a deny given through Claude Code's hook (Cursor reads exit 2 as a deny)."""


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


def _tool_request(payload: Mapping[str, Any], cwd: str) -> Any:
    from plangate.hooks.hosts.requests import tool_request
    from plangate.hooks.service import HookEvent

    return tool_request(CURSOR.name, payload, cwd, HookEvent.PRE, CURSOR.vocabulary,
                        directory_keys=DIRECTORY_KEYS, sandbox_checked=CURSOR.sandbox_checked)


def _event_request(event: str, payload: Mapping[str, Any], cwd: str) -> Any:
    """The request of one Cursor event, or the deny :class:`Result` of an unusable payload."""
    from plangate.hooks.service import HookEvent, HookRequest

    if event == BEFORE_READ:
        return HookRequest(CURSOR.name, HookEvent.PRE, cwd, "read", read_only=True)
    if event == BEFORE_MCP:
        from plangate.hooks.hosts.tool_policy import mcp_request

        tool = payload.get("tool_name")
        if not isinstance(tool, str) or not tool:
            return payload_error("beforeMCPExecution has no tool_name")
        return mcp_request(CURSOR.name, HookEvent.PRE, cwd, tool)
    if event == BEFORE_SHELL:
        command = command_text(payload.get("command"))
        if command is None:
            return payload_error("beforeShellExecution has no command text")
        return HookRequest(CURSOR.name, HookEvent.PRE, cwd, "shell", shell_command=command)
    if event == PRE_TOOL:
        return _tool_request(payload, cwd)
    return HookRequest(
        CURSOR.name,
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


def answer(entry: str, data: bytes, cwd: Path, env: Mapping[str, str]) -> HookOutput:
    """The table's entry point (``plangate hook cursor``)."""
    del entry, cwd  # one entry point; the payload names its directory
    return handle(data, env)


def answer_as_guest(payload: Mapping[str, Any], env: Mapping[str, str]) -> HookOutput:
    """Cursor's own event received through Claude Code's hook: Cursor's answer, exit 2
    on a deny."""
    return handle_parsed(payload, env, deny_exit=GUEST_DENY_EXIT)


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


# -- what install and doctor need ------------------------------------------------------


def not_found_answer(message: str) -> str:
    """Shell text denying when PlanGate is not on PATH: Cursor's JSON deny and exit 2."""
    import shlex

    body = json.dumps(
        {"permission": "deny", "user_message": message, "agent_message": message,
         "continue": False},
        sort_keys=True, separators=(",", ":"),
    )
    return f"printf '%s\\n' {shlex.quote(body)}; echo {shlex.quote(message)} >&2; exit 2"


def _payload(root: str, event: str, **fields: Any) -> bytes:
    return json.dumps({"conversation_id": "plangate-doctor", "generation_id": "doctor",
                       "workspace_roots": [root], "hook_event_name": event,
                       **fields}).encode()


def canaries(root: str, target: str, shell: str) -> list[tuple[str, str, bytes]]:
    """Doctor's payloads that must be denied, each for the event that carries it."""
    return [
        (PRE_TOOL, "guarded-write",
         _payload(root, PRE_TOOL, tool_name="Write", tool_input={"file_path": target})),
        (BEFORE_SHELL, "shell-write", _payload(root, BEFORE_SHELL, command=shell, cwd=root)),
        (PRE_TOOL, "malformed", b"{not json"),
        (BEFORE_SHELL, "malformed", b"{not json"),
    ]


def allow_canary(root: str, target: str) -> tuple[str, bytes]:
    """Doctor's write that must be allowed."""
    return PRE_TOOL, _payload(root, PRE_TOOL, tool_name="Write", tool_input={"file_path": target})


def judge_deny(proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did PlanGate deny? ``permission: deny`` with its reason."""
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    ours = "PlanGate denied" in out or "PlanGate denied" in err
    first_err = err.splitlines()[0][:160] if err else ""
    try:
        body = json.loads(out) if out else {}
    except ValueError:
        return False, f"exit {proc.returncode} with non-JSON output {first_err}".strip()
    if isinstance(body, dict) and body.get("permission") == "deny" and ours:
        return True, "permission deny"
    return False, f"exit {proc.returncode} without PlanGate's permission deny"


def judge_allow(proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did Cursor get ``permission: allow``? ``(denied, detail)``."""
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    first_err = err.splitlines()[0][:200] if err else ""
    try:
        body = json.loads(out) if out else {}
    except ValueError:
        return True, f"exit {proc.returncode} with non-JSON output {first_err}".strip()
    if isinstance(body, dict) and body.get("permission") == "allow":
        return False, "permission allow"
    message = body.get("agent_message", first_err) if isinstance(body, dict) else first_err
    return True, f"not allowed: {str(message)[:200]}"
