"""Each host's tool vocabulary: every documented tool has a kind, and the kinds mean what
they say (a writer names its path keys, an unknown name is on no list)."""

from __future__ import annotations

import pytest

from plangate.hooks.hosts.tools import (
    CLAUDE_TOOLS,
    CODEX_TOOLS,
    COMMAND_FIELDS,
    CURSOR_TOOLS,
    PATH_FIELDS,
    ToolKind,
    is_mcp_tool,
)

CLAUDE_REFERENCE = [
    "Agent",
    "AskUserQuestion",
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "ListMcpResourcesTool",
    "LSP",
    "NotebookEdit",
    "Read",
    "ReadMcpResourceTool",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "TodoWrite",
    "ToolSearch",
    "WebFetch",
    "WebSearch",
    "Write",
]
"""Claude Code's tools reference, as listed on its documentation page."""


@pytest.mark.parametrize("name", CLAUDE_REFERENCE)
def test_every_claude_reference_tool_has_a_kind(name: str) -> None:
    assert name in CLAUDE_TOOLS


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("TaskCreate", ToolKind.READ),
        ("TaskUpdate", ToolKind.READ),
        ("ToolSearch", ToolKind.READ),
        ("LSP", ToolKind.READ),
        ("CronCreate", ToolKind.SCHEDULE),
        ("EnterPlanMode", ToolKind.READ),
        ("Agent", ToolKind.AGENT),
        ("EnterWorktree", ToolKind.WORKTREE),
        ("Write", ToolKind.WRITER),
        ("NotebookEdit", ToolKind.WRITER),
        ("Bash", ToolKind.SHELL),
    ],
)
def test_claude_tool_kinds(name: str, kind: ToolKind) -> None:
    assert CLAUDE_TOOLS[name].kind is kind


def test_codex_spawn_agent_is_agent_spawning_and_patch_is_patch() -> None:
    assert CODEX_TOOLS["spawn_agent"].kind is ToolKind.AGENT
    assert CODEX_TOOLS["apply_patch"].kind is ToolKind.PATCH


def test_cursor_task_is_agent_spawning_and_delete_is_a_writer() -> None:
    assert CURSOR_TOOLS["Task"].kind is ToolKind.AGENT
    assert CURSOR_TOOLS["Delete"].kind is ToolKind.WRITER


CARRYING = {ToolKind.WRITER: PATH_FIELDS, ToolKind.SHELL: COMMAND_FIELDS,
            ToolKind.PATCH: COMMAND_FIELDS, ToolKind.STDIN: COMMAND_FIELDS}


@pytest.mark.parametrize("table", [CLAUDE_TOOLS, CODEX_TOOLS, CURSOR_TOOLS])
def test_every_tool_that_carries_something_names_its_fields_from_their_family(
    table: dict,
) -> None:
    for name, tool in table.items():
        assert not is_mcp_tool(name)
        family = CARRYING.get(tool.kind)
        if family is not None:
            assert tool.keys, name
            assert set(tool.keys) <= set(family), name


@pytest.mark.parametrize(
    "name", ["Config", "RemoteTrigger", "PowerShell", "mcp__x__y", "write_file"]
)
def test_unlisted_tools_are_on_no_list(name: str) -> None:
    assert name not in CLAUDE_TOOLS and name not in CODEX_TOOLS and name not in CURSOR_TOOLS


CLAUDE_2_1_197_OFFERED = [
    "Agent", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree",
    "ExitWorktree", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage",
    "Skill", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate",
    "WebFetch", "WebSearch", "Workflow", "Write", "Task",
]
"""The tools Claude Code 2.1.197 offered its model (``Task`` is the init event's name)."""

CODEX_0_171_HOOK_NAMES = {
    "Bash": ToolKind.SHELL,
    "spawn_agent": ToolKind.AGENT,
    "multi_agent_v1send_input": ToolKind.AGENT,
    "multi_agent_v1resume_agent": ToolKind.AGENT,
    "multi_agent_v1wait_agent": ToolKind.AGENT,
    "multi_agent_v1close_agent": ToolKind.AGENT,
    "request_user_input": ToolKind.READ,
    "view_image": ToolKind.READ,
    "get_goal": ToolKind.READ,
    "create_goal": ToolKind.READ,
    "update_goal": ToolKind.READ,
}
"""The ``tool_name`` Codex 0.171's PreToolUse hook received for each tool it offered an
unknown model (one call each, recorded by a hook; ``write_stdin`` reached no hook)."""


@pytest.mark.parametrize("name", CLAUDE_2_1_197_OFFERED)
def test_every_tool_the_pinned_claude_code_offers_has_a_kind(name: str) -> None:
    assert name in CLAUDE_TOOLS


@pytest.mark.parametrize(("name", "kind"), sorted(CODEX_0_171_HOOK_NAMES.items()))
def test_every_name_the_pinned_codex_hooks_receive_has_its_kind(name: str, kind: ToolKind) -> None:
    assert CODEX_TOOLS[name].kind is kind


@pytest.mark.parametrize(
    ("name", "kind"),
    [("SendMessage", ToolKind.AGENT), ("Skill", ToolKind.READ), ("ReportFindings", ToolKind.READ),
     ("ScheduleWakeup", ToolKind.READ), ("Workflow", ToolKind.AGENT),
     ("CronDelete", ToolKind.SCHEDULE)],
)
def test_the_newer_claude_tools_have_their_kinds(name: str, kind: ToolKind) -> None:
    assert CLAUDE_TOOLS[name].kind is kind


def test_write_stdin_is_never_read_only() -> None:
    assert CODEX_TOOLS["write_stdin"].kind is ToolKind.STDIN
