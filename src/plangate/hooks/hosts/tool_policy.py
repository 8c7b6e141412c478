"""The repository's tool policy, ``.plangate/tools.toml``: MCP tools declared read-only.

Every MCP tool is denied unless this file names it read-only, by exact name or by a
glob (``*`` any run of characters, ``?`` one character)::

    [mcp]
    read_only = ["mcp__docs__search", "mcp__github__get_*"]

The name matched is the one the host sends: ``mcp__<server>__<tool>`` for Claude
Code and Codex, the tool's own name for Cursor's ``beforeMCPExecution``. The file
lives under ``.plangate/``, which no agent action may write; a human commits it.

A missing file declares nothing. A file that cannot be read, is not TOML, holds a
key this format does not have, or a pattern that is not a non-empty text without
``[``, declares nothing either and the reason says why (``HOOK_TOOL_POLICY_INVALID``):
an MCP call is never allowed on a policy PlanGate could not read.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from plangate.records import NamedTuple

if TYPE_CHECKING:
    from plangate.hooks.service import HookRequest

POLICY_PATH = ".plangate/tools.toml"
MAX_POLICY_BYTES = 64 * 1024


class ToolPolicy(NamedTuple):
    """The read-only MCP patterns, or the problem that made the policy unusable."""

    read_only: tuple[str, ...] = ()
    problem: str = ""

    def declares_read_only(self, name: str) -> bool:
        """True when ``name`` matches a read-only pattern (never when the policy is unusable)."""
        if self.problem:
            return False
        return any(fnmatchcase(name, pattern) for pattern in self.read_only)


def parse_policy(data: bytes) -> ToolPolicy:
    """The policy in ``data`` (the file's bytes); a problem for anything unexpected."""
    import tomllib

    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return ToolPolicy(problem=f"{POLICY_PATH} is not UTF-8 TOML: {exc}")
    extra = sorted(set(document) - {"mcp"})
    if extra:
        return ToolPolicy(problem=f"{POLICY_PATH} has unknown keys: {', '.join(extra)}")
    mcp = document.get("mcp", {})
    if not isinstance(mcp, dict):
        return ToolPolicy(problem=f"{POLICY_PATH}: 'mcp' is not a table")
    extra = sorted(set(mcp) - {"read_only"})
    if extra:
        return ToolPolicy(problem=f"{POLICY_PATH}: [mcp] has unknown keys: {', '.join(extra)}")
    patterns = mcp.get("read_only", [])
    if not isinstance(patterns, list):
        return ToolPolicy(problem=f"{POLICY_PATH}: mcp.read_only is not a list")
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip() or "[" in pattern:
            return ToolPolicy(
                problem=f"{POLICY_PATH}: {pattern!r} is not a tool name or a glob of '*' and '?'"
            )
    return ToolPolicy(tuple(patterns))


def load_policy(root: str) -> ToolPolicy:
    """The policy of the repository at ``root`` (see the module docstring)."""
    from plangate.fsutil import FileState, read_below

    read = read_below(root, POLICY_PATH, MAX_POLICY_BYTES)
    if read.state is FileState.MISSING:
        return ToolPolicy()
    if not read.ok or read.data is None:
        return ToolPolicy(problem=f"{POLICY_PATH} {read.detail}")
    return parse_policy(read.data)


def mcp_request(host: str, event: str, cwd: str, tool: str) -> HookRequest:
    """The request of an MCP tool call: read-only when the policy declares it, else denied."""
    from plangate.hooks.hosts.protocol import unknown_tool_request
    from plangate.hooks.service import HookRequest, find_worktree_root

    root = find_worktree_root(cwd)
    policy = load_policy(root) if root is not None else ToolPolicy()
    if policy.declares_read_only(tool):
        return HookRequest(host, event, cwd, tool, read_only=True)
    if policy.problem:
        return HookRequest(
            host,
            event,
            cwd,
            tool,
            unclassifiable=(policy.problem,),
            unclassifiable_code="HOOK_TOOL_POLICY_INVALID",
        )
    request = unknown_tool_request(host, event, cwd, tool)
    return request._replace(
        unclassifiable=(
            f"MCP tool {tool!r} is not declared read-only in {POLICY_PATH}, so its writes "
            "cannot be judged",
        )
    )
