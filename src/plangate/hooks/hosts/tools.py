"""Each host's tool vocabulary: every tool name it sends, and what the tool can do.

A tool is one of:

- ``read``: it reads, or changes only the host's own session state (its task list,
  plan mode, scheduled prompts, tool search), never a file of the repository;
- ``writer``: it writes the files its path arguments name (``keys``: every key
  present is a target);
- ``shell``: it runs a command line (judged by the shell classifier);
- ``patch``: it applies an ``apply_patch`` text (every header path is a target);
- ``agent``: it starts another agent. The new agent's own tool calls reach the
  same hooks and are judged one by one; the spawn itself writes nothing;
- ``worktree``: it creates or removes a git worktree (git's internal directory
  changes): judged as a write of ``.git/worktrees``, which no agent may make.

A tool on no list is unknown and denied (``HOOK_TOOL_UNKNOWN``): a host that adds
a tool does not get it allowed by accident. MCP tools (``mcp__<server>__<tool>``)
are unknown unless the repository's tool policy declares them read-only
(:mod:`plangate.hooks.hosts.tool_policy`).

The names were read from the hosts' own documentation; docs/agents.md cites the
pages.
"""

from __future__ import annotations

from enum import StrEnum

from plangate.records import NamedTuple


class ToolKind(StrEnum):
    """What a tool can do (see the module docstring)."""

    READ = "read"
    WRITER = "writer"
    SHELL = "shell"
    PATCH = "patch"
    AGENT = "agent"
    WORKTREE = "worktree"


class Tool(NamedTuple):
    """One tool: its kind and, for writers, the input keys holding the paths it writes."""

    kind: ToolKind
    keys: tuple[str, ...] = ()


READ = Tool(ToolKind.READ)
SHELL = Tool(ToolKind.SHELL)
AGENT = Tool(ToolKind.AGENT)
PATCH = Tool(ToolKind.PATCH)
WORKTREE = Tool(ToolKind.WORKTREE)
WORKTREE_TARGET = ".git/worktrees"
"""What a worktree tool is judged as writing (git's internal directory: always denied)."""

CLAUDE_TOOLS: dict[str, Tool] = {
    # Writers with path arguments.
    "Write": Tool(ToolKind.WRITER, ("file_path",)),
    "Edit": Tool(ToolKind.WRITER, ("file_path",)),
    "MultiEdit": Tool(ToolKind.WRITER, ("file_path",)),
    "NotebookEdit": Tool(ToolKind.WRITER, ("notebook_path",)),
    # Shells.
    "Bash": SHELL,
    "Monitor": SHELL,
    # Agents.
    "Agent": AGENT,
    "Task": AGENT,
    "Workflow": AGENT,
    # Worktrees.
    "EnterWorktree": WORKTREE,
    "ExitWorktree": WORKTREE,
    # Readers and session state.
    **dict.fromkeys(
        (
            "Read",
            "Glob",
            "Grep",
            "LS",
            "LSP",
            "NotebookRead",
            "WebFetch",
            "WebSearch",
            "TodoWrite",
            "TaskCreate",
            "TaskGet",
            "TaskList",
            "TaskUpdate",
            "TaskStop",
            "TaskOutput",
            "BashOutput",
            "KillShell",
            "KillBash",
            "CronCreate",
            "CronDelete",
            "CronList",
            "EnterPlanMode",
            "ExitPlanMode",
            "AskUserQuestion",
            "SlashCommand",
            "Skill",
            "ToolSearch",
            "ListMcpResourcesTool",
            "ReadMcpResourceTool",
            "SendMessage",
        ),
        READ,
    ),
}
"""Claude Code's built-in tools (its tools reference), by kind."""

CODEX_TOOLS: dict[str, Tool] = {
    "apply_patch": PATCH,
    "ApplyPatch": PATCH,
    "Write": Tool(ToolKind.WRITER, ("file_path",)),
    "Edit": Tool(ToolKind.WRITER, ("file_path",)),
    **dict.fromkeys(("Bash", "shell", "exec_command", "local_shell", "unified_exec"), SHELL),
    "spawn_agent": AGENT,
    "Agent": AGENT,
    **dict.fromkeys(("update_plan", "view_image", "web_search", "read_file", "list_dir"), READ),
}
"""Codex's tools (its hook tool names, with their matcher aliases), by kind."""

CURSOR_PATH_KEYS = ("file_path", "path", "target_file", "filePath")
"""Keys a Cursor file tool may carry its path in: every key present is a target."""

CURSOR_TOOLS: dict[str, Tool] = {
    **dict.fromkeys(
        (
            "Write",
            "Edit",
            "MultiEdit",
            "StrReplace",
            "search_replace",
            "edit_file",
            "Delete",
            "delete_file",
            "write",
            "edit",
        ),
        Tool(ToolKind.WRITER, CURSOR_PATH_KEYS),
    ),
    "apply_patch": PATCH,
    **dict.fromkeys(("Shell", "run_terminal_cmd", "Bash", "terminal"), SHELL),
    "Task": AGENT,
    **dict.fromkeys(
        (
            "Read",
            "read_file",
            "Grep",
            "grep_search",
            "Glob",
            "glob_file_search",
            "codebase_search",
            "list_dir",
            "LS",
            "file_search",
            "web_search",
            "todo_write",
            "TodoWrite",
            "read_lints",
        ),
        READ,
    ),
}
"""Cursor's agent tools as its ``preToolUse`` hook names them, by kind."""

MCP_PREFIX = "mcp__"


def is_mcp_tool(name: str) -> bool:
    """True for an MCP tool name (``mcp__<server>__<tool>``)."""
    return name.startswith(MCP_PREFIX)
