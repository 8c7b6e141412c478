"""Claude Code's adapter: its hook protocol (:mod:`plangate.hooks.hosts.claude_protocol`)
with its tool vocabulary (:data:`plangate.hooks.hosts.tools.CLAUDE_TOOLS`).

``PreToolUse``: each tool by its kind: writers by their path argument, shells
(``Bash``, ``Monitor``) through the conservative classifier (Claude Code may run them
in a sandbox the hook checks), readers, session-state tools and agent spawns
allowed, worktree tools denied, a durable scheduled prompt judged as a write of
its file; an MCP tool only when ``.plangate/tools.toml`` declares it read-only; any
other tool is denied as unknown: install the hook without a matcher and the
decision happens here. ``PostToolUse``, ``PostToolUseFailure``, ``Stop`` and
``SubagentStop`` check the working tree's effects.

Cursor can run the hooks of ``.claude/settings.json`` too (it is Claude Code's
guest in :data:`plangate.hooks.hosts.table.HOSTS`): a Cursor event name gets
Cursor's answer, a Claude Code event name is read with Cursor's tool names as well
(``Shell``, ``StrReplace``, ``Delete``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.hooks.hosts import claude_protocol
from plangate.hooks.hosts.claude_protocol import (
    PRE,
    deny_output,
    judge_allow,
    judge_deny,
    not_found_answer,
    pre_tool_payload,
)
from plangate.hooks.hosts.protocol import HookOutput
from plangate.hooks.hosts.table import CLAUDE, Host

__all__ = ["PRE", "allow_canary", "answer", "canaries", "deny_output", "handle",
           "judge_allow", "judge_deny", "not_found_answer", "tool_request"]


def tool_request(host: str, payload: Mapping[str, Any], cwd: str, event: str) -> Any:
    """A :class:`HookRequest` for a PreToolUse payload (Claude Code tool names)."""
    from plangate.hooks.hosts.requests import tool_request as request

    return request(host, payload, cwd, event, CLAUDE.vocabulary,
                   sandbox_checked=CLAUDE.sandbox_checked)


def _guest_request(guest: Host) -> claude_protocol.MakeRequest:
    """A guest's payload with a Claude Code event: its tool names are read as well."""
    vocabulary = {**guest.vocabulary, **CLAUDE.vocabulary}

    def make(host: str, payload: Mapping[str, Any], cwd: str, event: str) -> Any:
        from plangate.hooks.hosts.requests import tool_request as request

        return request(host, payload, cwd, event, vocabulary)

    return make


def handle(data: bytes, env: Mapping[str, str]) -> HookOutput:
    """Run the Claude Code hook on raw stdin bytes; never raises."""
    return claude_protocol.handle(CLAUDE, data, env, tool_request, _guest_request)


def answer(entry: str, data: bytes, cwd: Path, env: Mapping[str, str]) -> HookOutput:
    """The table's entry point (``plangate hook claude``)."""
    del entry, cwd  # one entry point; the payload names its directory
    return handle(data, env)


def canaries(root: str, target: str, shell: str) -> list[tuple[str, str, bytes]]:
    """Doctor's payloads that must be denied: a guarded write, a shell write, bad JSON."""
    return [
        (PRE, "guarded-write",
         pre_tool_payload(root, "Write", {"file_path": target, "content": "canary"})),
        (PRE, "shell-write", pre_tool_payload(root, "Bash", {"command": shell})),
        (PRE, "malformed", b"{not json"),
    ]


def allow_canary(root: str, target: str) -> tuple[str, bytes]:
    """Doctor's write that must be allowed."""
    return PRE, pre_tool_payload(root, "Write", {"file_path": target, "content": "canary"})
