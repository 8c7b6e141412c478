"""Codex's adapter: Claude Code's hook protocol
(:mod:`plangate.hooks.hosts.claude_protocol`) with Codex's tool vocabulary
(:data:`plangate.hooks.hosts.tools.CODEX_TOOLS`).

Codex sends the same envelope as Claude Code (``session_id``, ``cwd``,
``hook_event_name``, ``tool_name``, ``tool_input``). Its hooks report
``exec_command`` as ``Bash`` with a command text (``cmd`` for the tool's own name,
an argv list in older versions); an ``apply_patch <<'EOF' ... EOF`` heredoc sent
through it arrives as ``Bash`` too and is judged by its patch headers
(:mod:`plangate.hooks.hosts.patch`), as is the ``apply_patch`` tool (its patch in
``command``, ``patch`` or ``input``: exactly one of them). A call may name its
directory in ``workdir``: a command runs there, a patch's relative paths are judged
in both directories. ``spawn_agent`` and the other ``multi_agent_v1`` tools act
through agents whose own calls reach the same hooks; ``write_stdin`` is allowed only
as a poll (no text); an MCP tool only when ``.plangate/tools.toml`` declares it
read-only.

Deny form: as Claude Code (exit 2, reason on stderr, ``permissionDecision:
"deny"`` JSON on stdout). Allow: exit 0 and no output; Codex rejects a bare
``"allow"`` without ``updatedInput``, so none is ever printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.hooks.hosts import claude_protocol
from plangate.hooks.hosts.claude_protocol import (
    PRE,
    judge_allow,
    judge_deny,
    not_found_answer,
    pre_tool_payload,
)
from plangate.hooks.hosts.protocol import HookOutput
from plangate.hooks.hosts.table import CODEX

__all__ = ["allow_canary", "answer", "canaries", "handle", "judge_allow", "judge_deny",
           "not_found_answer", "tool_request"]

DIRECTORY_KEYS = ("workdir",)
"""The field a Codex tool call names its working directory in."""


def tool_request(host: str, payload: Mapping[str, Any], cwd: str, event: str) -> Any:
    """A :class:`HookRequest` for a Codex PreToolUse payload."""
    from plangate.hooks.hosts.requests import tool_request as request

    return request(host, payload, cwd, event, CODEX.vocabulary, directory_keys=DIRECTORY_KEYS,
                   sandbox_checked=CODEX.sandbox_checked, shell_patches=CODEX.shell_patches)


def handle(data: bytes, env: Mapping[str, str]) -> HookOutput:
    """Run the Codex hook on raw stdin bytes; never raises."""
    return claude_protocol.handle(CODEX, data, env, tool_request)


def answer(entry: str, data: bytes, cwd: Path, env: Mapping[str, str]) -> HookOutput:
    """The table's entry point (``plangate hook codex``)."""
    del entry, cwd  # one entry point; the payload names its directory
    return handle(data, env)


def canaries(root: str, target: str, shell: str) -> list[tuple[str, str, bytes]]:
    """Doctor's payloads that must be denied: a guarded patch, a shell write, bad JSON."""
    patch = f"*** Begin Patch\n*** Add File: {target}\n+canary\n*** End Patch\n"
    return [
        (PRE, "guarded-write", pre_tool_payload(root, "apply_patch", {"command": patch})),
        (PRE, "shell-write", pre_tool_payload(root, "Bash", {"command": shell})),
        (PRE, "malformed", b"{not json"),
    ]


def allow_canary(root: str, target: str) -> tuple[str, bytes]:
    """Doctor's write that must be allowed (a patch updating ``target``)."""
    patch = f"*** Begin Patch\n*** Update File: {target}\n+canary\n*** End Patch\n"
    return PRE, pre_tool_payload(root, "apply_patch", {"command": patch})
