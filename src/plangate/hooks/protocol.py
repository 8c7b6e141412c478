"""Shared pieces of the host adapters: the output triple and the fail-closed wrapper."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from plangate.errors import PlanGateError
from plangate.verdict import Reason, Result

MAX_PAYLOAD_BYTES = 8 * 1024 * 1024
"""Largest hook payload read from stdin; a bigger one is denied, not truncated."""


class HookOutput(NamedTuple):
    """Exactly what a hook process prints and how it exits."""

    stdout: str
    stderr: str
    exit_code: int


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
