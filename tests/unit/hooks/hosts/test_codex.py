"""Codex adapter: apply_patch headers, patches carried by shell commands, the tool vocabulary."""

from __future__ import annotations

from plangate.hooks.hosts.codex import tool_request
from plangate.hooks.hosts.patch import patch_targets, shell_patch
from plangate.hooks.service import HookRequest
from plangate.verdict import Result


def test_patch_targets() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Move to: b.py\n"
        "*** Add File: c.py\n+z\n*** Delete File: d.py\n*** End Patch\n"
    )
    assert patch_targets(patch) == (["a.py", "b.py", "c.py", "d.py"], [])
    assert patch_targets("*** Update File: a.py") == (
        [],
        ["the patch has no '*** Begin Patch' line"],
    )
    assert patch_targets("*** Begin Patch\n*** End Patch")[1] == ["the patch names no file"]
    assert patch_targets("*** Begin Patch\n*** Add File: \n")[1]
    crlf = "*** Begin Patch\r\n*** Add File: e.py\r\n*** End Patch\r\n"
    assert patch_targets(crlf) == (["e.py"], [])


def test_a_heredoc_patch_is_read_in_its_directory() -> None:
    command = "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\nEOF"
    patch, cwd, problem = shell_patch(command, "/repo")
    assert problem == ""
    assert cwd == "/repo/sub"
    assert patch is not None and patch_targets(patch) == (["a.py"], [])


def test_a_heredoc_whose_body_holds_its_end_word_is_refused() -> None:
    command = "apply_patch <<'EOF'\n*** Begin Patch\nEOF\ntouch CLAUDE.md\n*** End Patch\nEOF"
    patch, _cwd, problem = shell_patch(command, "/repo")
    assert patch is None
    assert problem


def _pre(tool: str, tool_input: dict[str, object]) -> object:
    payload = {"tool_name": tool, "tool_input": tool_input}
    return tool_request("codex", payload, "/repo", "pre")


def test_a_patch_with_a_workdir_is_judged_in_both_directories() -> None:
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch"
    request = _pre("apply_patch", {"command": patch, "workdir": "sub"})
    assert isinstance(request, HookRequest)
    assert request.file_targets == ("a.py", "/repo/sub/a.py")


def test_a_shell_command_runs_in_its_workdir() -> None:
    request = _pre("shell", {"command": ["bash", "-lc", "ls"], "workdir": "/elsewhere"})
    assert isinstance(request, HookRequest)
    assert (request.cwd, request.shell_command) == ("/elsewhere", "bash -lc ls")


def test_an_unreadable_patch_and_an_unknown_tool_are_unclassifiable() -> None:
    bad = _pre("apply_patch", {"command": "*** Begin Patch\n*** Nonsense\n*** End Patch"})
    assert isinstance(bad, HookRequest)
    assert bad.unclassifiable_code == "HOOK_PATCH_UNREADABLE"
    unknown = _pre("mystery", {})
    assert isinstance(unknown, HookRequest)
    assert unknown.unclassifiable_code == "HOOK_TOOL_UNKNOWN"


def test_an_empty_workdir_is_a_payload_error() -> None:
    result = _pre("shell", {"command": "ls", "workdir": ""})
    assert isinstance(result, Result)
    assert result.codes == ("HOOK_PAYLOAD_INVALID",)
