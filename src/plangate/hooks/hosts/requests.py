"""One tool call to one hook request, by the tool's kind in its host's vocabulary.

Every agent host's ``PreToolUse``-like event arrives as a tool name and an input
object. :func:`tool_request` reads it with the host's vocabulary
(:mod:`plangate.hooks.hosts.tools`), as an ordered table of small rules per kind:

- a tool on no list is unknown (``HOOK_TOOL_UNKNOWN``); an MCP tool goes to the
  repository's tool policy;
- the input fields that could carry the same thing (a path: :data:`PATH_FIELDS`; a
  command, patch or typed text: :data:`COMMAND_FIELDS`; a working directory: the
  host's directory keys) must appear at most once (``HOOK_PAYLOAD_AMBIGUOUS``), in a
  field the tool has, holding text (``HOOK_PAYLOAD_INVALID``);
- then the kind decides: writers write their path, shells run their command (a
  command that feeds ``apply_patch`` is read as the patch where the host intercepts
  it), patches write every
  header path, agents and readers write nothing, worktree tools write git's
  internal directory, schedules write the durable schedule file, typed text is
  allowed only when empty.

Returns the :class:`HookRequest`, or the deny :class:`Result` of an unusable input.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from plangate.hooks.hosts.protocol import (
    ambiguous,
    command_text,
    payload_error,
    tool_call,
    under,
    unknown_tool_request,
    unreadable_patch_request,
)
from plangate.hooks.hosts.tools import (
    COMMAND_FIELDS,
    PATH_FIELDS,
    SCHEDULE_FILE,
    WORKTREE_TARGET,
    Tool,
    ToolKind,
    is_mcp_tool,
)
from plangate.records import NamedTuple
from plangate.verdict import Result

if TYPE_CHECKING:
    from plangate.hooks.service import HookRequest

SANDBOX_BYPASS_KEY = "dangerouslyDisableSandbox"
"""Claude Code's request to run a shell call outside its sandbox."""


class Call(NamedTuple):
    """One tool call being read: who sent it, where, and what it names."""

    host: str
    event: str
    cwd: str
    work_cwd: str
    tool: str
    spec: Tool
    tool_input: Mapping[str, Any]


def carrier(
    tool: str, tool_input: Mapping[str, Any], family: tuple[str, ...], accepted: tuple[str, ...],
    what: str,
) -> tuple[str, Any] | Result | None:
    """``(field, value)`` of the one field of ``family`` present, None when none is, or the
    deny when several are (ambiguous) or the one present is not a field of the tool."""
    present = [key for key in family if key in tool_input]
    if len(present) > 1:
        return ambiguous(f"{tool} carries more than one {what} field ({', '.join(present)}): "
                         f"which one it acts on is ambiguous")
    if not present:
        return None
    if present[0] not in accepted:
        return payload_error(f"{tool} carries its {what} in {present[0]!r}, a field it does "
                             f"not have (it has {', '.join(accepted) or 'none'})")
    return present[0], tool_input[present[0]]


def working_directory(
    tool: str, tool_input: Mapping[str, Any], cwd: str, keys: tuple[str, ...]
) -> str | Result:
    """The directory the call runs in: ``cwd``, or the one directory key present below it."""
    found = carrier(tool, tool_input, keys, keys, "working directory")
    if found is None or isinstance(found, Result):
        return cwd if found is None else found
    value = found[1]
    if not isinstance(value, str) or not value:
        return payload_error(f"{tool}'s {found[0]} is not a non-empty text")
    return under(cwd, value)


def _in_both(paths: list[str], cwd: str, work_cwd: str) -> tuple[str, ...]:
    """Relative paths judged in ``cwd`` and, when the call names another, in that one too:
    whether the tool applies them against its working directory is not known here."""
    if work_cwd == cwd:
        return tuple(paths)
    return (*paths, *(under(work_cwd, p) for p in paths if not p.startswith("/")))


def _writer(call: Call) -> HookRequest | Result:
    from plangate.hooks.service import HookRequest

    host, event, cwd, work_cwd, tool, spec, tool_input = call
    found = carrier(tool, tool_input, PATH_FIELDS, spec.keys, "path")
    if isinstance(found, Result):
        return found
    if found is None:
        return payload_error(f"{tool} names no file path")
    key, path = found
    if not isinstance(path, str) or not path:
        return payload_error(f"{tool} has a {key} that is not a non-empty text")
    return HookRequest(host, event, cwd, tool, file_targets=_in_both([path], cwd, work_cwd))


def _patch(call: Call) -> HookRequest | Result:
    from plangate.hooks.hosts.patch import patch_targets
    from plangate.hooks.service import HookRequest

    host, event, cwd, work_cwd, tool, spec, tool_input = call
    carried = _carried_text(tool, spec, tool_input, "patch", argv=False)
    if isinstance(carried, Result):
        return carried
    patch = carried[1]
    paths, problems = patch_targets(patch)
    if problems:
        return unreadable_patch_request(host, event, cwd, tool, problems)
    return HookRequest(host, event, cwd, tool, file_targets=_in_both(paths, cwd, work_cwd))


def _carried_text(tool: str, spec: Tool, tool_input: Mapping[str, Any], what: str,
                  *, argv: bool) -> tuple[Any, str] | Result:
    """``(raw value, text)`` of the command, patch or typed text the tool carries."""
    found = carrier(tool, tool_input, COMMAND_FIELDS, spec.keys, what)
    if isinstance(found, Result):
        return found
    if found is None:
        return payload_error(f"{tool} has no {what}")
    raw = found[1]
    text = command_text(raw) if argv else (raw if isinstance(raw, str) else None)
    if text is None:
        shape = "a text or a list of texts" if argv else "a text"
        return payload_error(f"{tool}'s {found[0]} is not {shape}")
    return raw, text


def _shell(call: Call, *, sandbox_checked: bool, shell_patches: bool) -> HookRequest | Result:
    from plangate.hooks.hosts.patch import carries_patch, patch_targets, shell_patch
    from plangate.hooks.service import HookRequest

    host, event, cwd, work_cwd, tool, spec, tool_input = call
    carried = _carried_text(tool, spec, tool_input, "command", argv=True)
    if isinstance(carried, Result):
        return carried
    raw, command = carried
    if shell_patches and carries_patch(command):
        patch, patch_cwd, problem = shell_patch(raw, work_cwd)
        paths, problems = patch_targets(patch) if patch is not None else ([], [problem])
        if problems:
            return unreadable_patch_request(host, event, cwd, tool, problems)
        return HookRequest(host, event, patch_cwd, tool, file_targets=tuple(paths))
    bypass = tool_input.get(SANDBOX_BYPASS_KEY, False) is not False
    return HookRequest(host, event, work_cwd, tool, shell_command=command,
                       host_sandbox=sandbox_checked, sandbox_bypass=bypass)


def _repository_file(cwd: str, rel: str) -> str:
    from plangate.hooks.service import find_worktree_root

    root = find_worktree_root(cwd) or cwd
    return f"{root.rstrip('/')}/{rel}"


def _schedule(call: Call) -> HookRequest | Result:
    from plangate.hooks.service import HookRequest

    host, event, cwd, _work_cwd, tool, spec, tool_input = call
    target = _repository_file(cwd, SCHEDULE_FILE)
    if spec.keys:
        durable = tool_input.get(spec.keys[0], False)
        if not isinstance(durable, bool):
            return payload_error(f"{tool}'s {spec.keys[0]} is not true or false")
        writes = durable
    else:
        # Removing a job may rewrite the durable schedule: judged so while it exists.
        writes = os.path.lexists(target)
    if writes:
        return HookRequest(host, event, cwd, tool, file_targets=(target,))
    return HookRequest(host, event, cwd, tool, read_only=True)


def _stdin(call: Call) -> HookRequest | Result:
    from plangate.hooks.service import HookRequest

    host, event, cwd, _work_cwd, tool, spec, tool_input = call
    carried = _carried_text(tool, spec, tool_input, "text", argv=False)
    if isinstance(carried, Result):
        return carried
    if carried[1] == "":
        return HookRequest(host, event, cwd, tool, read_only=True)  # a poll for output
    return HookRequest(
        host, event, cwd, tool,
        unclassifiable=(f"{tool} types text into a running program; what that program "
                        "does with it cannot be judged",),
        unclassifiable_code="HOOK_STDIN_UNJUDGEABLE",
    )


def _agent(call: Call) -> HookRequest | Result:
    from plangate.hooks.service import HookRequest

    host, event, cwd, _work_cwd, tool, _spec, tool_input = call
    isolation = tool_input.get("isolation")
    if isolation is None:
        return HookRequest(host, event, cwd, tool, read_only=True)
    if isolation == "worktree":
        return HookRequest(host, event, cwd, tool,
                           file_targets=(_repository_file(cwd, WORKTREE_TARGET),))
    return HookRequest(
        host, event, cwd, tool,
        unclassifiable=(f"{tool} with isolation {isolation!r} runs an agent whose calls "
                        "this repository's hooks do not judge",),
        unclassifiable_code="HOOK_AGENT_UNHOOKED",
    )


_READERS = {
    ToolKind.WRITER: _writer,
    ToolKind.PATCH: _patch,
    ToolKind.STDIN: _stdin,
    ToolKind.SCHEDULE: _schedule,
    ToolKind.AGENT: _agent,
}
"""The kinds read from their input (shells and worktrees are read inline)."""


def tool_request(
    host: str,
    payload: Mapping[str, Any],
    cwd: str,
    event: str,
    vocabulary: Mapping[str, Tool],
    *,
    directory_keys: tuple[str, ...] = (),
    sandbox_checked: bool = False,
    shell_patches: bool = False,
) -> HookRequest | Result:
    """The request of one tool call (see the module docstring).

    ``directory_keys``: input fields the host may name the call's working directory in;
    ``sandbox_checked``: the host may run shell calls in a sandbox PlanGate can check;
    ``shell_patches``: the host intercepts ``apply_patch <<'EOF'`` in a shell command and
    applies the patch itself (elsewhere ``apply_patch`` is just a program the shell
    classifier judges, since whatever bears that name would run).
    """
    from plangate.hooks.service import HookRequest

    found = tool_call(payload)
    if isinstance(found, Result):
        return found
    tool, tool_input = found
    spec = vocabulary.get(tool)
    if spec is None:
        if is_mcp_tool(tool):
            from plangate.hooks.hosts.tool_policy import mcp_request

            return mcp_request(host, event, cwd, tool)
        return unknown_tool_request(host, event, cwd, tool)
    work_cwd = working_directory(tool, tool_input, cwd, directory_keys)
    if isinstance(work_cwd, Result):
        return work_cwd
    call = Call(host, event, cwd, work_cwd, tool, spec, tool_input)
    kind = spec.kind
    if kind is ToolKind.SHELL:
        return _shell(call, sandbox_checked=sandbox_checked, shell_patches=shell_patches)
    if kind is ToolKind.WORKTREE:
        return HookRequest(host, event, cwd, tool,
                           file_targets=(_repository_file(cwd, WORKTREE_TARGET),))
    reader = _READERS.get(kind)
    if reader is not None:
        return reader(call)
    return HookRequest(host, event, cwd, tool, read_only=True)

