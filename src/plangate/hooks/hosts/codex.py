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
``apply_patch`` is read as that patch. ``spawn_agent`` starts an agent whose own
calls reach the same hooks; an MCP tool is allowed only when ``.plangate/tools.toml``
declares it read-only (:data:`plangate.hooks.hosts.tools.CODEX_TOOLS`).

Deny form: as Claude Code (exit 2, reason on stderr, ``permissionDecision:
"deny"`` JSON on stdout). Allow: exit 0 and no output; Codex rejects a bare
``"allow"`` without ``updatedInput``, so none is ever printed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from plangate.hooks.hosts.protocol import (
    HookOutput,
    command_text,
    file_tool_path,
    payload_error,
    tool_call,
    under,
    unknown_tool_request,
    unreadable_patch_request,
)
from plangate.hooks.hosts.tools import CODEX_TOOLS, ToolKind, is_mcp_tool
from plangate.verdict import Result

COMMAND_KEYS = ("command", "cmd")
"""Fields a Codex shell tool carries its command in (``exec_command`` uses ``cmd``);
a payload with more than one is denied as ambiguous."""

_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")
_MARKERS = ("*** Begin Patch", "*** End Patch", "*** End of File")
PATCH_PROGRAMS = ("apply_patch", "applypatch")
_HEREDOC_PATCH = re.compile(
    r"\s*(?:cd\s+(?P<dir>[^\s;&|<>'\"`$\\]+)\s*&&\s*)?(?:apply_patch|applypatch)\s*"
    r"<<\s*(?P<q>['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=q)[ \t]*\n"
    r"(?P<body>.*?)\n(?P=word)\s*",
    re.DOTALL,
)


def patch_targets(patch: str) -> tuple[list[str], list[str]]:
    """``(paths, problems)`` named by the headers of an apply_patch text.

    A line that looks like a header after leading whitespace, or a ``***`` line
    that is no known header (``***  Add File:``, ``*** Update file:``), is a
    problem: a patch tool may read it as a header, so it cannot be ignored.
    """
    lines = patch.replace("\r\n", "\n").split("\n")
    if not any(line.strip() == "*** Begin Patch" for line in lines):
        return [], ["the patch has no '*** Begin Patch' line"]
    paths: list[str] = []
    for line in lines:
        for header in _HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip()
                if not path:
                    return paths, [f"empty path in {header.strip()!r}"]
                paths.append(path)
                break
        else:
            bare = line.strip()
            if bare.startswith("***") and bare not in _MARKERS:
                return paths, [f"unrecognised patch header {bare[:80]!r}"]
    if not paths:
        return [], ["the patch names no file"]
    return paths, []


def shell_patch(command: object, cwd: str) -> tuple[str | None, str, str]:
    """``(patch, cwd, problem)`` for a shell command that carries an apply_patch text.

    Only two shapes are read: the argv ``["apply_patch", PATCH]`` (optionally
    inside ``bash -lc``) and the heredoc ``[cd DIR &&] apply_patch <<'EOF' ... EOF``.
    Anything else around a patch (other commands before or after it) cannot be
    judged by the patch's headers alone, so it is a problem.
    """
    import posixpath

    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        if len(command) == 2 and posixpath.basename(command[0]) in PATCH_PROGRAMS:
            return command[1], cwd, ""
        if (
            len(command) == 3
            and posixpath.basename(command[0]) in ("bash", "sh", "zsh")
            and (command[1] in ("-c", "-lc"))
        ):
            command = command[2]
    if isinstance(command, str):
        match = _HEREDOC_PATCH.fullmatch(command)
        # The shell ends the heredoc at the FIRST line equal to the word: a body
        # holding that line would hide the commands after it.
        if match is not None and match.group("word") not in match.group("body").split("\n"):
            directory = match.group("dir")
            if directory:
                cwd = directory if directory.startswith("/") else posixpath.join(cwd, directory)
            return match.group("body"), cwd, ""
    return (
        None,
        cwd,
        (
            "a shell command that carries a patch must be exactly "
            "'apply_patch <<'EOF' ... EOF' (nothing before or after it)"
        ),
    )


def _patch_request(host: str, event: str, cwd: str, tool: str, patch: str, *, work_cwd: str) -> Any:
    """The request of an apply_patch tool call: every header path is a target."""
    from plangate.hooks.service import HookRequest

    paths, problems = patch_targets(patch)
    if problems:
        return unreadable_patch_request(host, event, cwd, tool, problems)
    if work_cwd != cwd:
        # Whether the tool applies paths against workdir is not known here:
        # judge each path in both directories (both must pass).
        paths += [under(work_cwd, p) for p in paths]
    return HookRequest(host, event, cwd, tool, file_targets=tuple(paths))


def _shell_request(host: str, event: str, cwd: str, tool: str, raw_command: object) -> Any:
    """The request of a shell tool call; a command that carries a patch is read as the patch."""
    from plangate.hooks.service import HookRequest

    command = command_text(raw_command)
    if command is None:
        return payload_error(f"{tool} has no command")
    if "*** Begin Patch" in command:
        patch, patch_cwd, problem = shell_patch(raw_command, cwd)
        paths, problems = patch_targets(patch) if patch is not None else ([], [problem])
        if problems:
            return unreadable_patch_request(host, event, cwd, tool, problems)
        return HookRequest(host, event, patch_cwd, tool, file_targets=tuple(paths))
    return HookRequest(host, event, cwd, tool, shell_command=command)


def tool_request(host: str, payload: Mapping[str, Any], cwd: str, event: str) -> Any:
    """A :class:`HookRequest` for a Codex PreToolUse payload."""
    from plangate.hooks.service import HookRequest

    call = tool_call(payload)
    if isinstance(call, Result):
        return call
    tool, tool_input = call
    workdir = tool_input.get("workdir")
    if workdir is not None and (not isinstance(workdir, str) or workdir == ""):
        return payload_error("workdir is not a non-empty text")
    work_cwd = under(cwd, workdir) if isinstance(workdir, str) else cwd
    spec = CODEX_TOOLS.get(tool)
    kind = spec.kind if spec is not None else None
    if kind is ToolKind.PATCH:
        patch = tool_input.get("command", tool_input.get("patch", tool_input.get("input")))
        if not isinstance(patch, str):
            return payload_error("apply_patch carries no patch text in tool_input.command")
        return _patch_request(host, event, cwd, tool, patch, work_cwd=work_cwd)
    if kind is ToolKind.SHELL:
        present = [key for key in COMMAND_KEYS if key in tool_input]
        if len(present) > 1:
            return payload_error(
                f"{tool} carries more than one command field ({', '.join(present)}): "
                "which one runs is ambiguous",
                "HOOK_PAYLOAD_AMBIGUOUS",
            )
        value = tool_input.get(present[0]) if present else None
        return _shell_request(host, event, work_cwd, tool, value)
    if spec is not None and kind is ToolKind.WRITER:
        path = file_tool_path(tool, tool_input, spec.keys[0])
        if isinstance(path, Result):
            return path
        return HookRequest(host, event, cwd, tool, file_targets=(path,))
    if kind in (ToolKind.READ, ToolKind.AGENT):
        return HookRequest(host, event, cwd, tool, read_only=True)
    if is_mcp_tool(tool):
        from plangate.hooks.hosts.tool_policy import mcp_request

        return mcp_request(host, event, cwd, tool)
    return unknown_tool_request(host, event, cwd, tool)


def handle(data: bytes, env: Mapping[str, str]) -> HookOutput:
    """Run the Codex hook on raw stdin bytes; never raises.

    Codex speaks Claude Code's hook protocol; only the tool vocabulary differs
    (``apply_patch`` patches, argv shells), which :func:`tool_request` reads.
    """
    from plangate.hooks.hosts.claude import handle_claude_protocol

    return handle_claude_protocol("codex", data, env, tool_request)
