"""What every host adapter shares: the output triple, payload parsing, the tool-call
envelope, deny texts and the fail-closed wrapper.

Every adapter reads its payload with :func:`parse_payload` (strict JSON, one
object, at most :data:`MAX_PAYLOAD_BYTES`), turns an unusable payload into a
deny with :func:`payload_error`, and runs inside :func:`fail_closed`, so any
exception becomes the host's deny form, never an allow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from plangate.errors import PlanGateError
from plangate.records import NamedTuple
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.hooks.service import HookRequest

MAX_PAYLOAD_BYTES = 8 * 1024 * 1024
"""Largest hook payload read from stdin; a bigger one is denied, not truncated."""


class HookOutput(NamedTuple):
    """Exactly what a hook process prints and how it exits."""

    stdout: str
    stderr: str
    exit_code: int


def payload_error(message: str, code: str = "HOOK_PAYLOAD_INVALID") -> Result:
    """A deny for a payload that cannot be read."""
    return Result("DENY", (Reason(code, message, "check the host version and hook wiring"),), {})


def ambiguous(message: str) -> Result:
    """A deny for a payload that carries the same thing in more than one field."""
    return Result("DENY", (Reason(
        "HOOK_PAYLOAD_AMBIGUOUS", message,
        "send the value in one field only; check the host version and hook wiring",
    ),), {})


def parse_payload(data: bytes) -> dict[str, Any] | Result:
    """The payload object, or a deny :class:`Result` saying why it is unusable."""
    from plangate.canonical import StrictJSONError, strict_loads_object

    if len(data) > MAX_PAYLOAD_BYTES:
        return payload_error(f"the hook payload is larger than {MAX_PAYLOAD_BYTES} bytes")
    try:
        return strict_loads_object(data, "hook payload")
    except StrictJSONError as exc:
        return payload_error(f"{exc.code}: {exc.message}")


INPUT_FIELDS = ("tool_input", "input", "arguments", "args", "tool_args", "params", "parameters")
"""Payload fields that could carry a tool's input: only ``tool_input`` is read, so a
payload with another one beside it is ambiguous."""


def tool_call(payload: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | Result:
    """``(tool_name, tool_input)`` of a tool event, or the deny saying which is unusable."""
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not tool:
        return payload_error("tool_name is missing or not text")
    present = [key for key in INPUT_FIELDS if key in payload]
    if len(present) > 1:
        return ambiguous(f"the payload carries the tool's input in more than one field "
                         f"({', '.join(present)}): which one the host acts on is ambiguous")
    if not isinstance(tool_input, dict):
        return payload_error("tool_input is missing or not an object")
    return tool, tool_input


def file_tool_path(tool: str, tool_input: Mapping[str, Any], key: str) -> str | Result:
    """The path a file tool writes (``tool_input[key]``), or the deny when it has none."""
    path = tool_input.get(key)
    if not isinstance(path, str) or not path:
        return payload_error(f"{tool} has no {key}")
    return path


def unknown_tool_request(host: str, event: str, cwd: str, tool: str) -> HookRequest:
    """The request for a tool whose writes cannot be judged: always denied."""
    from plangate.hooks.service import HookRequest

    return HookRequest(
        host, event, cwd, tool,
        unclassifiable=(f"unknown tool {tool!r}: its writes cannot be judged",),
        unclassifiable_code="HOOK_TOOL_UNKNOWN",
    )


def unreadable_patch_request(
    host: str, event: str, cwd: str, tool: str, problems: list[str]
) -> HookRequest:
    """The request for a patch whose file headers cannot be read: always denied."""
    from plangate.hooks.service import HookRequest

    return HookRequest(host, event, cwd, tool, unclassifiable=tuple(problems),
                       unclassifiable_code="HOOK_PATCH_UNREADABLE")


def under(cwd: str, directory: str) -> str:
    """``directory`` as an absolute text path: itself when absolute, else below ``cwd``."""
    return directory if directory.startswith("/") else f"{cwd.rstrip('/')}/{directory}"


def dumps(value: Mapping[str, Any]) -> str:
    """Compact, key-sorted JSON plus a newline: one stable line for the host."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def reason_text(result: Result, label: str = "") -> str:
    """One readable text for a deny: every reason with its code and hint."""
    if result.facts.get("action") == "effect":
        head = "PlanGate denied: the working tree has changes that may not be made" + (
            f" (checked at {label})" if label else "")
    else:
        head = f"PlanGate denied {label}" if label else "PlanGate denied this action"
    lines = [head + ":"]
    for reason in result.reasons or (Reason("HOOK_DENIED", "denied"),):
        line = f"- {reason.code}: {reason.message}"
        if reason.hint:
            line += f" (hint: {reason.hint})"
        lines.append(line)
    return "\n".join(lines)


def command_text(value: object) -> str | None:
    """A host's command value as one string (Codex may send an argv list)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        import shlex

        return shlex.join(value)
    return None


def internal_error_result(exc: BaseException) -> Result:
    """The deny produced when anything inside a hook raises."""
    if isinstance(exc, PlanGateError):
        return Result("DENY", (Reason(exc.code, exc.message, exc.hint),), {})
    return Result(
        "DENY",
        (Reason(
            "HOOK_INTERNAL_ERROR",
            f"the hook failed ({type(exc).__name__}: {str(exc)[:200]}), so the action is denied",
            "run 'plangate doctor'; report the bug if it persists",
        ),),
        {},
    )


def fail_closed(
    run: Callable[[], HookOutput], deny: Callable[[Result], HookOutput]
) -> HookOutput:
    """Run an adapter; any exception becomes the host's deny form, never an allow."""
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 -- the fail-closed boundary of every hook
        return deny(internal_error_result(exc))
