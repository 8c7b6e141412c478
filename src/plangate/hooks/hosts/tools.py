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
  changes): judged as a write of ``.git/worktrees``, which no agent may make;
- ``schedule``: it schedules a prompt for later (the prompt's own calls reach the
  hooks when it runs). A durable schedule is kept in ``.claude/scheduled_tasks.json``:
  ``CronCreate`` with ``durable: true`` is judged as a write of that file, and
  ``CronDelete`` (which may remove a durable job) too while the file exists;
- ``stdin``: it types text into a program an earlier call started (Codex's
  ``write_stdin``). What that program does with the text (a shell runs it, an
  editor saves a file) cannot be judged, so only an empty write (a poll for
  output) is allowed.

Every tool names the input fields that carry what it does (``keys``: its path, its
command, its patch). A payload with more than one field of the same family
(:data:`PATH_FIELDS`, :data:`COMMAND_FIELDS`) is ambiguous and denied
(``HOOK_PAYLOAD_AMBIGUOUS``): which one the host acts on is not ours to guess.

A tool on no list is unknown and denied (``HOOK_TOOL_UNKNOWN``): a host that adds
a tool does not get it allowed by accident. MCP tools (``mcp__<server>__<tool>``)
are unknown unless the repository's tool policy declares them read-only
(:mod:`plangate.hooks.hosts.tool_policy`).

The names were read from the hosts' own documentation and from the tools the
pinned versions (``resources/pinned-hosts.toml``) offered their model;
docs/agents.md cites the pages.
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
    SCHEDULE = "schedule"
    STDIN = "stdin"


class Tool(NamedTuple):
    """One tool: its kind and the input keys that carry what it does (writers: the
    paths it writes; shells: the command; patches: the patch; ``stdin``: the text)."""

    kind: ToolKind
    keys: tuple[str, ...] = ()


PATH_FIELDS = (
    "file_path", "path", "notebook_path", "target_file", "filePath", "targetFile",
    "file", "filename", "target",
)
"""Fields a file tool could carry the path it writes in."""
COMMAND_FIELDS = ("command", "cmd", "commands", "script", "patch", "input", "argv", "chars")
"""Fields a shell, patch or stdin tool could carry its command, patch or text in."""

READ = Tool(ToolKind.READ)
SHELL = Tool(ToolKind.SHELL, ("command",))
AGENT = Tool(ToolKind.AGENT)
PATCH = Tool(ToolKind.PATCH, ("command", "patch", "input"))
WORKTREE = Tool(ToolKind.WORKTREE)
WORKTREE_TARGET = ".git/worktrees"
"""What a worktree tool is judged as writing (git's internal directory: always denied)."""
SCHEDULE_FILE = ".claude/scheduled_tasks.json"
"""Where Claude Code keeps durable scheduled prompts (in the repository)."""

CLAUDE_TOOLS: dict[str, Tool] = {
    # Writers with path arguments.
    "Write": Tool(ToolKind.WRITER, ("file_path",)),
    "Edit": Tool(ToolKind.WRITER, ("file_path",)),
    "MultiEdit": Tool(ToolKind.WRITER, ("file_path",)),
    "NotebookEdit": Tool(ToolKind.WRITER, ("notebook_path",)),
    # Shells.
    "Bash": SHELL,
    "Monitor": SHELL,
    # Agents: a spawned agent (``Task`` is the older name of ``Agent``), a workflow of
    # agents, a message to a running agent or teammate (acted on through its own,
    # hooked calls). An Agent call with ``isolation`` is judged apart (worktree, remote).
    "Agent": AGENT,
    "Task": AGENT,
    "Workflow": AGENT,
    "SendMessage": AGENT,
    # Worktrees.
    "EnterWorktree": WORKTREE,
    "ExitWorktree": WORKTREE,
    # Scheduled prompts (durable ones live in SCHEDULE_FILE).
    "CronCreate": Tool(ToolKind.SCHEDULE, ("durable",)),
    "CronDelete": Tool(ToolKind.SCHEDULE),
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
            "CronList",
            "ScheduleWakeup",
            "ReportFindings",
            "EnterPlanMode",
            "ExitPlanMode",
            "AskUserQuestion",
            "SlashCommand",
            "Skill",
            "ToolSearch",
            "ListMcpResourcesTool",
            "ReadMcpResourceTool",
        ),
        READ,
    ),
}
"""Claude Code's built-in tools (its tools reference and the tools 2.1.197 offers), by kind.

``Skill`` loads a skill's instructions, ``ReportFindings`` shows findings in the user
interface, ``ScheduleWakeup`` resumes the session later, the ``Task*`` tools keep the
session's task list and background tasks: none writes a file.
"""

CODEX_SHELL = Tool(ToolKind.SHELL, ("command", "cmd"))
CODEX_TOOLS: dict[str, Tool] = {
    # Its hooks name exec_command "Bash" (a command text); an apply_patch heredoc sent
    # through it arrives as "Bash" too and is judged by its patch headers.
    **dict.fromkeys(("Bash", "shell", "exec_command", "local_shell", "unified_exec"), CODEX_SHELL),
    "apply_patch": PATCH,
    "ApplyPatch": PATCH,
    "Write": Tool(ToolKind.WRITER, ("file_path",)),
    "Edit": Tool(ToolKind.WRITER, ("file_path",)),
    "write_stdin": Tool(ToolKind.STDIN, ("chars",)),
    # The multi_agent_v1 namespace: each agent's own calls reach the same hooks. Its hooks
    # name spawn_agent plainly and the others with the namespace glued on (measured with
    # 0.171: "multi_agent_v1send_input").
    **dict.fromkeys(
        (
            "spawn_agent",
            "Agent",
            *(
                prefix + name
                for prefix in ("", "multi_agent_v1")
                for name in ("send_input", "resume_agent", "wait_agent", "close_agent")
            ),
        ),
        AGENT,
    ),
    **dict.fromkeys(
        (
            "update_plan",
            "view_image",
            "web_search",
            "read_file",
            "list_dir",
            "request_user_input",
            "get_goal",
            "create_goal",
            "update_goal",
        ),
        READ,
    ),
}
"""Codex's tools (the names its hooks report, the names 0.171 offers its model, and their
matcher aliases), by kind."""

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
    "apply_patch": Tool(ToolKind.PATCH, ("command",)),
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
