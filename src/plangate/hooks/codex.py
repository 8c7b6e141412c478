"""Codex's hook protocol (Claude-compatible JSON, Codex tool names).

Codex sends the same envelope as Claude Code (``session_id``, ``cwd``,
``hook_event_name``, ``tool_name``, ``tool_input``). Its edit tool is
``apply_patch``: the whole patch text arrives in ``tool_input.command``, and
the paths are in its headers::

    *** Begin Patch
    *** Update File: src/app.py
    *** Add File: src/new.py
    *** Delete File: old.py
    *** Move to: src/renamed.py
    *** End Patch

Every header path is a target (a move writes both its old and new path). A
patch with no recognisable header is unclassifiable and denied. Shell tools
(``Bash``, ``shell``, ``exec_command``, ``local_shell``) carry a command
string or an argv list; a shell command that pipes a patch into
``apply_patch`` is read as that patch.

Deny form: as Claude Code (exit 2, reason on stderr, ``permissionDecision:
"deny"`` JSON on stdout). Allow: exit 0 and no output; Codex rejects a bare
``"allow"`` without ``updatedInput``, so none is ever printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plangate.hooks.claude import (
    payload_error,
)
from plangate.hooks.protocol import HookOutput, command_text

PATCH_TOOLS = frozenset({"apply_patch", "ApplyPatch"})
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "local_shell", "unified_exec"})
READ_TOOLS = frozenset({"update_plan", "view_image", "web_search", "read_file", "list_dir"})
FILE_TOOLS = {"Write": "file_path", "Edit": "file_path"}

_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")


def patch_targets(patch: str) -> tuple[list[str], list[str]]:
    """``(paths, problems)`` named by the headers of an apply_patch text."""
    lines = patch.replace("\r\n", "\n").split("\n")
    if not any(line.strip() == "*** Begin Patch" for line in lines):
        return [], ["the patch has no '*** Begin Patch' line"]
    paths: list[str] = []
    for line in lines:
        for header in _HEADERS:
            if line.startswith(header):
                path = line[len(header):].strip()
                if not path:
                    return paths, [f"empty path in {header.strip()!r}"]
                paths.append(path)
    if not paths:
        return [], ["the patch names no file"]
    return paths, []


def tool_request(host: str, payload: Mapping[str, Any], cwd: str, event: str) -> Any:
    """A :class:`HookRequest` for a Codex PreToolUse payload."""
    from plangate.hooks.service import HookRequest

    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not tool:
        return payload_error("tool_name is missing or not text")
    if not isinstance(tool_input, dict):
        return payload_error("tool_input is missing or not an object")
    if tool in PATCH_TOOLS:
        patch = tool_input.get("command", tool_input.get("patch", tool_input.get("input")))
        if not isinstance(patch, str):
            return payload_error("apply_patch carries no patch text in tool_input.command")
        paths, problems = patch_targets(patch)
        if problems:
            return HookRequest(host, event, cwd, tool, unclassifiable=tuple(problems),
                                   unclassifiable_code="HOOK_PATCH_UNREADABLE")
        return HookRequest(host, event, cwd, tool, file_targets=tuple(paths))
    if tool in SHELL_TOOLS:
        command = command_text(tool_input.get("command"))
        if command is None:
            return payload_error(f"{tool} has no command")
        if "*** Begin Patch" in command:
            paths, problems = patch_targets(command)
            if problems:
                return HookRequest(host, event, cwd, tool, unclassifiable=tuple(problems),
                                   unclassifiable_code="HOOK_PATCH_UNREADABLE")
            return HookRequest(host, event, cwd, tool, file_targets=tuple(paths))
        workdir = tool_input.get("workdir")
        if isinstance(workdir, str) and workdir:
            cwd = workdir if workdir.startswith("/") else f"{cwd.rstrip('/')}/{workdir}"
        return HookRequest(host, event, cwd, tool, shell_command=command)
    if tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool])
        if not isinstance(path, str) or not path:
            return payload_error(f"{tool} has no {FILE_TOOLS[tool]}")
        return HookRequest(host, event, cwd, tool, file_targets=(path,))
    if tool in READ_TOOLS:
        return HookRequest(host, event, cwd, tool, read_only=True)
    return HookRequest(
        host, event, cwd, tool,
        unclassifiable=(f"unknown tool {tool!r}: its writes cannot be judged",),
        unclassifiable_code="HOOK_TOOL_UNKNOWN",
    )


def handle(data: bytes, env: Mapping[str, str]) -> HookOutput:
    """Run the Codex hook on raw stdin bytes; never raises.

    Codex speaks Claude Code's hook protocol; only the tool vocabulary differs
    (``apply_patch`` patches, argv shells), which :func:`tool_request` reads.
    """
    from plangate.hooks.claude import handle_claude_protocol

    return handle_claude_protocol("codex", data, env, tool_request)
