"""Adversarial review: end-to-end attempts to write protected files past the hooks.

Each case ran through ``plangate hook <host>`` in an approved repository and was
allowed before the review. Each must now be the host's deny form with a reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.hooks import approved_repo, claude_payload, cursor_payload, hook_env, run_hook


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return approved_repo(git_repo)


def _assert_claude_deny(result, code: str | None = None) -> None:  # type: ignore[no-untyped-def]
    assert result.code == 2, (result.out, result.err)
    body = json.loads(result.out)
    assert body["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Traceback" not in result.err
    if code is not None:
        assert code in result.err, result.err


def _codex(repo: Path, tool: str, tool_input: dict[str, object]):  # type: ignore[no-untyped-def]
    payload = claude_payload("PreToolUse", repo, tool, tool_input)
    return run_hook(repo, "codex", payload, hook_env("TASK-0001"))


PATCH_OK = "*** Begin Patch\n*** Update File: src/app.py\n@@\n+x\n*** End Patch\n"


@pytest.mark.parametrize(
    "command",
    [
        # A shell command that carries a patch was judged by the patch alone.
        "rm CLAUDE.md; apply_patch <<'EOF'\n" + PATCH_OK + "EOF",
        "apply_patch <<'EOF'\n" + PATCH_OK + "EOF\ntouch CLAUDE.md",
        "apply_patch <<'EOF'\n" + PATCH_OK + "EOF\ntouch CLAUDE.md\nEOF",
        "apply_patch <<'EOF'\n" + PATCH_OK + "EOF\ntouch CLAUDE.md\nEOF\n",
        ["bash", "-lc", "touch CLAUDE.md; echo '" + PATCH_OK + "'"],
        ["bash", "-lc", "cd .claude && apply_patch <<'EOF'\n"
         "*** Begin Patch\n*** Add File: settings.json\n+{}\n*** End Patch\nEOF"],
    ],
)
def test_codex_shell_patch_with_other_commands_is_denied(
    repo: Path, command: str | list[str]
) -> None:
    _assert_claude_deny(_codex(repo, "shell", {"command": command}))


@pytest.mark.parametrize(
    "header",
    [
        " *** Update File: CLAUDE.md",
        "\t*** Delete File: CLAUDE.md",
        "***  Add File: CLAUDE.md",
        "*** Update file: CLAUDE.md",
    ],
)
def test_codex_patch_with_odd_header_is_denied(repo: Path, header: str) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n+x\n"
        f"{header}\n@@\n+x\n*** End Patch\n"
    )
    _assert_claude_deny(_codex(repo, "apply_patch", {"command": patch}))


def test_codex_heredoc_patch_alone_is_still_judged_by_its_paths(repo: Path) -> None:
    result = _codex(repo, "shell", {"command": "apply_patch <<'EOF'\n" + PATCH_OK + "EOF\n"})
    assert (result.code, result.out, result.err) == (0, "", "")
    argv = _codex(repo, "shell", {"command": ["apply_patch", PATCH_OK]})
    assert (argv.code, argv.out, argv.err) == (0, "", "")


@pytest.mark.parametrize(
    "command",
    [
        "command touch CLAUDE.md",
        "sort -o CLAUDE.md src/app.py",
        "git diff --output=CLAUDE.md",
        "GIT_EXTERNAL_DIFF='touch CLAUDE.md' git diff",
        "python3 -c \"getattr(__builtins__,'op'+'en')('CLAUDE.md','w')\"",
        "env -u ls rm CLAUDE.md",
        "sed 's/a/b/w .claude/settings.json' src/app.py",
    ],
)
def test_claude_bash_reader_bypasses_are_denied(repo: Path, command: str) -> None:
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": command})
    _assert_claude_deny(run_hook(repo, "claude", payload, hook_env("TASK-0001")))


def test_cursor_shell_reader_bypass_is_denied(repo: Path) -> None:
    payload = cursor_payload("beforeShellExecution", repo, command="uniq src/app.py CLAUDE.md",
                             cwd=str(repo))
    result = run_hook(repo, "cursor", payload, hook_env("TASK-0001"))
    assert result.code == 0
    assert json.loads(result.out)["permission"] == "deny"


def test_codex_shell_patch_is_judged_in_its_workdir(repo: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: settings.json\n+{}\n*** End Patch\n"
    result = _codex(repo, "shell", {"command": ["apply_patch", patch], "workdir": ".claude"})
    _assert_claude_deny(result, "HOOK_CONFIG_FILE")


def test_codex_apply_patch_tool_with_workdir_is_judged_in_both_directories(repo: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: settings.json\n+{}\n*** End Patch\n"
    result = _codex(repo, "apply_patch", {"command": patch, "workdir": str(repo / ".claude")})
    _assert_claude_deny(result, "HOOK_CONFIG_FILE")


def test_cursor_file_tool_with_two_path_keys_judges_both(repo: Path) -> None:
    payload = cursor_payload(
        "preToolUse", repo, tool_name="Write",
        tool_input={"file_path": "src/app.py", "target_file": "CLAUDE.md", "contents": "x"},
    )
    result = run_hook(repo, "cursor", payload, hook_env("TASK-0001"))
    assert result.code == 0
    body = json.loads(result.out)
    assert body["permission"] == "deny"
    assert "HOOK_PROTECTED_SURFACE" in body["agent_message"]


def test_cursor_shell_tool_working_directory_is_used(repo: Path) -> None:
    payload = cursor_payload(
        "preToolUse", repo, tool_name="Shell",
        tool_input={"command": "rm settings.json", "working_directory": str(repo / ".claude")},
    )
    result = run_hook(repo, "cursor", payload, hook_env("TASK-0001"))
    body = json.loads(result.out)
    assert body["permission"] == "deny"
    assert "HOOK_CONFIG_FILE" in body["agent_message"]


def _claude_write(repo: Path, path: str):  # type: ignore[no-untyped-def]
    payload = claude_payload("PreToolUse", repo, "Write", {"file_path": path, "content": "x"})
    return run_hook(repo, "claude", payload, hook_env("TASK-0001"))


def test_hard_link_to_a_protected_file_is_not_a_way_in(repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("rules\n")
    import os

    (repo / "tests").mkdir(exist_ok=True)
    os.link(repo / "CLAUDE.md", repo / "tests" / "test_app.py")
    # Writing the in-scope name would rewrite CLAUDE.md's bytes (same inode).
    _assert_claude_deny(_claude_write(repo, "tests/test_app.py"), "HOOK_TARGET_HARDLINK")


@pytest.mark.parametrize(
    "command", ["ln CLAUDE.md tests/test_app.py", "cp -l CLAUDE.md tests/test_app.py",
                "cp --link .claude/settings.json tests/test_app.py",
                "ln -P CLAUDE.md tests/test_app.py"],
)
def test_creating_a_hard_link_to_a_protected_file_is_denied(repo: Path, command: str) -> None:
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": command})
    _assert_claude_deny(run_hook(repo, "claude", payload, hook_env("TASK-0001")))


def _scoped_repo(git_repo: Path, scope: str) -> Path:
    from support.repo import commit_all
    from support.taskkit import PLAN_MD, approve_task, make_task

    (git_repo / "src").mkdir(exist_ok=True)
    (git_repo / "src" / "app.py").write_text("x = 1\n")
    commit_all(git_repo, "app")
    make_task(git_repo, "TASK-0001", plan_md=PLAN_MD.replace("- `src/app.py`", f"- `{scope}`"))
    approve_task(git_repo, "TASK-0001")
    return git_repo


@pytest.mark.parametrize("command", ["rm -rf docs/working", "mv docs/working old",
                                     "chmod -R 000 docs/working/TASK-0001"])
def test_directory_holding_protected_files_is_judged_by_its_contents(
    git_repo: Path, command: str
) -> None:
    repo = _scoped_repo(git_repo, "docs/**")
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": command})
    result = run_hook(repo, "claude", payload, hook_env("TASK-0001"))
    _assert_claude_deny(result)
    assert "approvals/c3.json" in result.err


def test_directory_inside_scope_may_still_be_removed(git_repo: Path) -> None:
    repo = _scoped_repo(git_repo, "src/**")
    (repo / "src" / "build").mkdir()
    (repo / "src" / "build" / "a.o").write_text("x")
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": "rm -rf src/build"})
    result = run_hook(repo, "claude", payload, hook_env("TASK-0001"))
    assert (result.code, result.err) == (0, "")
    mk = claude_payload("PreToolUse", repo, "Bash", {"command": "mkdir -p src/build"})
    assert run_hook(repo, "claude", mk, hook_env("TASK-0001")).code == 0
