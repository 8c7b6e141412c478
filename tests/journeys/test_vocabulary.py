"""The pinned hosts' tool vocabularies against PlanGate's (plangate.hooks.hosts.tools).

A pinned host that offers a tool PlanGate does not classify makes every call of it a
``HOOK_TOOL_UNKNOWN`` deny, or worse, a tool nobody judged: these tests fail when a
pin is bumped to a host version with tools PlanGate has not been taught, naming them.
Claude Code's hooks receive the tool's API name; Codex's hooks receive a name of their
own (``exec_command`` arrives as ``Bash``), so for Codex each offered tool is called
once under a recording hook and the name the hook received is checked.
"""

from __future__ import annotations

from plangate.hooks.hosts.tools import CLAUDE_TOOLS, CODEX_TOOLS, is_mcp_tool
from support.journey import CODEX_KNOWN_MODEL, Journey, codex_hook_names, offered_tools


def test_every_tool_claude_code_offers_is_classified(switched_on: Journey) -> None:
    offered = offered_tools(switched_on, "claude")
    assert "Write" in offered and "Bash" in offered, offered  # the probe saw the real list
    unknown = [name for name in offered if name not in CLAUDE_TOOLS and not is_mcp_tool(name)]
    assert unknown == [], f"Claude Code offers tools PlanGate does not classify: {unknown}"


def test_every_tool_name_codex_sends_its_hooks_is_classified(switched_on: Journey) -> None:
    names = codex_hook_names(switched_on)
    assert names.get("exec_command") == "Bash", names  # the probe reached the hook
    unknown = sorted(
        f"{hook} (offered as {offered})"
        for offered, hook in names.items()
        if hook is not None and hook not in CODEX_TOOLS and not is_mcp_tool(hook)
    )
    assert unknown == [], f"Codex sends its hooks tool names PlanGate does not classify: {unknown}"


def test_every_tool_name_codex_sends_its_hooks_for_a_known_model_is_classified(
    switched_on: Journey,
) -> None:
    """A model Codex knows gets another tool set (``apply_patch`` as a freeform tool)."""
    names = codex_hook_names(switched_on, CODEX_KNOWN_MODEL)
    assert names.get("apply_patch") == "apply_patch", names  # the probe reached the hook
    unknown = sorted(
        f"{hook} (offered as {offered})"
        for offered, hook in names.items()
        if hook is not None and hook not in CODEX_TOOLS and not is_mcp_tool(hook)
    )
    assert unknown == [], f"Codex sends its hooks tool names PlanGate does not classify: {unknown}"
