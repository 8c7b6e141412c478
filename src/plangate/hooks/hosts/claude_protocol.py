"""Claude Code's hook protocol, which Codex speaks too: JSON on stdin, the answer on
stdout, stderr and the exit code.

Input: ``session_id``, ``cwd``, ``hook_event_name`` and, for tool events,
``tool_name`` and ``tool_input``. Handled events:

- ``PreToolUse``: the tool call, read with the host's vocabulary
  (:func:`plangate.hooks.hosts.requests.tool_request`);
- ``PostToolUse``, ``PostToolUseFailure`` (Claude Code sends it instead of
  ``PostToolUse`` when the call failed, e.g. a command that exits non-zero),
  ``Stop``, ``SubagentStop``: effect-based. The working tree's changes are compared
  with what may be written; a change outside scope blocks.

Any other event is denied (``HOOK_EVENT_UNKNOWN``).

Deny form (every event, every failure): exit code 2, the reason on stderr
(the host feeds it to the model), and on stdout the JSON a host reads on
exit 0 (``hookSpecificOutput.permissionDecision: "deny"`` with
``permissionDecisionReason`` for PreToolUse, ``decision: "block"`` with
``reason`` otherwise), so either channel denies. Allow: exit 0 and no output,
which leaves the host's own permission rules in charge (an explicit ``"allow"``
would skip the user's prompts; Codex rejects a bare one). Never exit 1: Claude Code
treats it as a non-blocking error and runs the tool.

``Stop`` with ``stop_hook_active: true`` (the agent is already continuing because
of a Stop hook) reports instead of blocking again, to avoid an endless loop;
the decision is still a deny in the ledger, and the git hooks and CI still stop
the change.

A payload another host sent through this hook (a guest of the host in
:data:`plangate.hooks.hosts.table.HOSTS`: Cursor runs ``.claude/settings.json``
hooks) is answered as that host expects: its own event names by its adapter, a
Claude Code event name with the guest's tool names read as well.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from plangate.hooks.hosts.protocol import (
    HookOutput,
    dumps,
    fail_closed,
    parse_payload,
    payload_error,
    reason_text,
)
from plangate.verdict import Result

if TYPE_CHECKING:
    import subprocess

    from plangate.hooks.hosts.table import Host

PRE = "PreToolUse"
POST = "PostToolUse"
POST_FAILURE = "PostToolUseFailure"
EFFECT_EVENTS = (POST, POST_FAILURE)
"""Events after a tool call (it succeeded or failed): the working tree is checked."""
STOP_EVENTS = ("Stop", "SubagentStop")
EVENTS = (PRE, *EFFECT_EVENTS, *STOP_EVENTS)
MakeRequest = Callable[[str, Mapping[str, Any], str, str], Any]


def deny_output(result: Result, event: str, label: str = "") -> HookOutput:
    """The deny form for ``event`` (see the module docstring)."""
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


def _guest(host: Host, payload: Mapping[str, Any]) -> Host | None:
    """The guest host that sent ``payload``, if any."""
    from plangate.hooks.hosts.table import HOSTS

    for name in host.guests:
        recognises = HOSTS[name].sent
        if recognises is not None and recognises(payload):
            return HOSTS[name]
    return None


def handle(host: Host, data: bytes, env: Mapping[str, str], make_request: MakeRequest,
           guest_request: Callable[[Host], MakeRequest] | None = None) -> HookOutput:
    """Run the hook of ``host`` on raw stdin bytes; never raises.

    ``make_request`` reads a PreToolUse payload; ``guest_request(guest)`` the one a
    guest host sent with a Claude Code event name.
    """
    event_seen = {"event": PRE, "label": ""}

    def deny(result: Result) -> HookOutput:
        return deny_output(result, event_seen["event"], event_seen["label"])

    def run() -> HookOutput:
        payload = parse_payload(data)
        if isinstance(payload, Result):
            return deny(payload)
        maker = make_request
        guest = _guest(host, payload)
        if guest is not None:
            if payload.get("hook_event_name") not in EVENTS:
                # The guest's own event: its own answer (exit 2 on a deny, which it
                # reads as a deny too).
                return guest.load_guest().answer_as_guest(payload, env)
            if guest_request is not None:
                maker = guest_request(guest)
        event = payload.get("hook_event_name")
        if event not in EVENTS:
            return deny(payload_error(f"unknown hook event {event!r}", "HOOK_EVENT_UNKNOWN"))
        event_seen["event"] = str(event)
        cwd = payload.get("cwd")
        roots = payload.get("workspace_roots")
        if guest is not None and not cwd and isinstance(roots, list) and roots:
            cwd = roots[0]
        if not isinstance(cwd, str) or not cwd:
            return deny(payload_error("cwd is missing"))
        return dispatch(host.name, payload, cwd, str(event), env=env, deny=deny,
                        make_request=maker, event_seen=event_seen)

    return fail_closed(run, deny)


def dispatch(
    host: str,
    payload: Mapping[str, Any],
    cwd: str,
    event: str,
    *,
    env: Mapping[str, str],
    deny: Callable[[Result], HookOutput],
    make_request: MakeRequest,
    event_seen: dict[str, str],
) -> HookOutput:
    """The decision of one event of the protocol, in the host's answer form."""
    from plangate.hooks.service import HookEvent, HookRequest, evaluate

    if event == PRE:
        request = make_request(host, payload, cwd, HookEvent.PRE)
        if isinstance(request, Result):
            return deny(request)
        event_seen["label"] = str(request.label)
    else:
        label = str(payload.get("tool_name", event)) if event in EFFECT_EVENTS else event
        event_seen["label"] = label
        kind = HookEvent.POST if event in EFFECT_EVENTS else HookEvent.STOP
        request = HookRequest(host, kind, cwd, label)
    result = evaluate(request, env)
    if result.accepted:
        return HookOutput("", "", 0)
    if event in STOP_EVENTS and payload.get("stop_hook_active") is True:
        text = reason_text(result, event_seen["label"])
        return HookOutput(dumps({"systemMessage": text}), "", 0)
    return deny(result)


# -- what install and doctor need of this protocol ----------------------------------------


def not_found_answer(message: str) -> str:
    """Shell text denying when PlanGate is not on PATH: the message on stderr, exit 2."""
    import shlex

    return f"echo {shlex.quote(message)} >&2; exit 2"


def judge_deny(proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did PlanGate deny? Exit 2 with its reason, or exit 0 with ``permissionDecision`` deny.

    A block that does not carry PlanGate's reason (the interpreter is missing, the
    package cannot be imported) is not a pass: it locks every tool call.
    """
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    ours = "PlanGate denied" in out or "PlanGate denied" in err
    first_err = err.splitlines()[0][:160] if err else ""
    if proc.returncode == 2:
        if ours:
            return True, "exit 2 (blocking)"
        return False, f"exit 2 but not from PlanGate (broken install?): {first_err}"
    if proc.returncode == 0 and out:
        try:
            body = json.loads(out)
        except ValueError:
            return False, "exit 0 with non-JSON output: the tool would run"
        hso = body.get("hookSpecificOutput", {}) if isinstance(body, dict) else {}
        if isinstance(hso, dict) and hso.get("permissionDecision") == "deny":
            return True, "exit 0 with permissionDecision deny"
    return False, f"exit {proc.returncode}: the tool would run {first_err}".strip()


def judge_allow(proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did the host get an allow? ``(denied, detail)``."""
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    first_err = err.splitlines()[0][:200] if err else ""
    if proc.returncode == 2:
        return True, f"exit 2: {first_err}"
    if '"permissionDecision":"deny"' in out.replace(" ", ""):
        return True, f"exit {proc.returncode} with permissionDecision deny"
    return False, f"exit {proc.returncode} (allowed)"


def pre_tool_payload(root: str, tool: str, tool_input: Mapping[str, Any]) -> bytes:
    """A doctor PreToolUse payload."""
    return json.dumps({"session_id": "plangate-doctor", "cwd": root,
                       "hook_event_name": PRE, "tool_name": tool,
                       "tool_input": dict(tool_input)}).encode()
