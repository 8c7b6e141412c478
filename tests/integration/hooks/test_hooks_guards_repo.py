"""Guards against writes no target names, through the real hooks and repositories:
git directories at any depth, paths above guarded or protected paths, a link's own
path, and a CDPATH that moves 'cd'. Command strings are only handed to the hook."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.hooks import claude_payload, hook_env, run_hook
from support.repo import commit_all
from support.taskkit import PLAN_MD, approve_task, make_task

PLAN = PLAN_MD.replace(
    "- `src/app.py`\n- `tests/test_app.py`\n",
    "- `src/**`\n- `vendor/**`\n- `sub/**`\n- `tests/**`\n- `docs/agent-notes.md`\n",
)
"""A scope wide enough that only the guards can deny the writes below."""


@pytest.fixture
def repo(git_repo: Path) -> Path:
    (git_repo / "src" / "d").mkdir(parents=True)
    (git_repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    (git_repo / "src" / "d" / "m.py").write_text("x = 1\n")
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "agent-notes.md").write_text("agent notes\n")
    os.symlink("docs/agent-notes.md", git_repo / "CLAUDE.md")
    os.symlink("app.py", git_repo / "src" / "alias.py")
    commit_all(git_repo, "app")
    assert PLAN != PLAN_MD
    make_task(git_repo, "TASK-0001", plan_md=PLAN)
    approve_task(git_repo, "TASK-0001")
    return git_repo


def _codes(stderr: str) -> list[str]:
    return [
        line.split(":")[0].lstrip("- ") for line in stderr.splitlines() if line.startswith("- ")
    ]


def _tool(repo: Path, tool: str, tool_input: dict[str, object], **env: str) -> list[str]:
    payload = claude_payload("PreToolUse", repo, tool, tool_input)
    # CDPATH empty unless a test sets it: the runner's own environment must not decide.
    result = run_hook(repo, "claude", payload, hook_env("TASK-0001", **{"CDPATH": "", **env}))
    assert "Traceback" not in result.err
    assert (result.code == 0) == (result.err == ""), result.err
    return _codes(result.err) if result.code else []


def _bash(repo: Path, command: str, **env: str) -> list[str]:
    return _tool(repo, "Bash", {"command": command}, **env)


def _codex_patch(repo: Path, patch: str) -> list[str]:
    payload = claude_payload("PreToolUse", repo, "apply_patch", {"command": patch})
    result = run_hook(repo, "codex", payload, hook_env("TASK-0001"))
    assert "Traceback" not in result.err
    return [] if result.code == 0 and '"deny"' not in result.out else ["DENY", result.out]


# Nested git directories -------------------------------------------------------

NESTED_GIT = [
    "src/.git/config",
    "vendor/lib/.git/hooks/pre-commit",
    "sub/.git",
    "src/.GIT/config",
]


@pytest.mark.parametrize("path", NESTED_GIT)
@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit"])
def test_a_nested_git_directory_is_guarded_for_the_editor_tools(
    repo: Path, path: str, tool: str
) -> None:
    tool_input: dict[str, object] = {"file_path": path, "content": "x"}
    if tool == "MultiEdit":
        tool_input = {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}
    assert "HOOK_GIT_INTERNALS" in _tool(repo, tool, tool_input)


def test_a_nested_git_directory_is_guarded_for_notebook_edits(repo: Path) -> None:
    tool_input = {"notebook_path": "src/.git/config", "new_source": "x"}
    assert "HOOK_GIT_INTERNALS" in _tool(repo, "NotebookEdit", tool_input)


@pytest.mark.parametrize(
    "command",
    [
        "echo '[core]' > src/.git/config",
        "cp src/app.py vendor/lib/.git/hooks/pre-commit",
        "echo 'gitdir: /elsewhere' > sub/.git",
        "mkdir -p src/.git/hooks",
        "ln -s ../../elsewhere sub/.Git",
    ],
)
def test_a_nested_git_directory_is_guarded_for_shell_targets(repo: Path, command: str) -> None:
    assert "HOOK_GIT_INTERNALS" in _bash(repo, command)


def test_a_nested_git_directory_is_guarded_for_apply_patch(repo: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: vendor/lib/.git/config\n+[core]\n*** End Patch\n"
    denied = _codex_patch(repo, patch)
    assert denied and "HOOK_GIT_INTERNALS" in denied[1]


@pytest.mark.parametrize(
    "command",
    [
        "git init sub",
        "git -C sub init",
        "git clone https://example.invalid/x.git vendor/x",
        "git submodule add https://example.invalid/x.git vendor/x",
        "git worktree add src/wt",
    ],
)
def test_commands_that_create_a_git_directory_are_unknown_effects(
    repo: Path, command: str
) -> None:
    assert _bash(repo, command) == ["HOOK_SHELL_UNCLASSIFIABLE"]


# Paths above guarded or protected paths -----------------------------------------


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("mv src/d .claude", "HOOK_CONFIG_FILE"),
        ("cp -r src/d .claude", "HOOK_CONFIG_FILE"),
        ("ln -s src/d .claude", "HOOK_CONFIG_FILE"),
        ("ln -s /tmp .codex", "HOOK_CONFIG_FILE"),
        ("mv src/d .cursor", "HOOK_CONFIG_FILE"),
        ("mv src/d docs/working/TASK-0002", "HOOK_APPROVAL_FILE"),
        ("mv src/d .github", "HOOK_PROTECTED_SURFACE"),
        ("cp -r src/d src/.claude", "HOOK_PROTECTED_SURFACE"),
        ("ln -s ../src/d vendor/.claude", "HOOK_PROTECTED_SURFACE"),
    ],
)
def test_creating_a_path_above_a_guarded_path_is_denied(
    repo: Path, command: str, code: str
) -> None:
    assert code in _bash(repo, command)


def test_replacing_an_existing_directory_above_a_guarded_path_is_denied(repo: Path) -> None:
    (repo / ".claude").mkdir()
    assert "HOOK_CONFIG_FILE" in _bash(repo, "rm -r .claude")
    assert "HOOK_CONFIG_FILE" in _tool(repo, "Write", {"file_path": ".claude", "content": "x"})


def test_a_regular_file_removed_and_replaced_by_a_directory_in_one_line_is_denied(
    repo: Path,
) -> None:
    # The file is regular when the hook looks; the line removes it and puts a directory
    # (with whatever it holds) in its place.
    (repo / "src" / ".claude").write_text("a plain file for now\n")
    (repo / "src" / "approvals").write_text("a plain file for now\n")
    assert "HOOK_PROTECTED_SURFACE" in _bash(repo, "rm src/.claude && mv src/d src/.claude")
    assert "HOOK_PROTECTED_SURFACE" in _bash(repo, "rm src/approvals && mv src/d src/approvals")


@pytest.mark.parametrize(
    "command",
    [
        "mkdir src/newpkg",
        "mkdir -p src/a/b",
        "cp src/app.py src/b.py",
        "cp -r src/d src/newpkg",
        "mv src/d src/e",
        "ln -s app.py src/other.py",
        "rm -r src/d",
        "echo x > src/app.py",
    ],
)
def test_ordinary_writes_in_scope_stay_allowed(repo: Path, command: str) -> None:
    assert _bash(repo, command) == []


# A link's own path ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "rm CLAUDE.md",
        "mv src/app.py CLAUDE.md",
        "ln -sf src/app.py CLAUDE.md",
        "sed -i s/agent/x/ CLAUDE.md",
        "echo x > CLAUDE.md",
    ],
)
def test_a_shell_write_on_a_link_is_judged_at_the_link_too(repo: Path, command: str) -> None:
    assert "HOOK_PROTECTED_SURFACE" in _bash(repo, command)


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_an_editor_write_on_a_link_is_judged_at_the_link_too(repo: Path, tool: str) -> None:
    assert "HOOK_PROTECTED_SURFACE" in _tool(repo, tool, {"file_path": "CLAUDE.md"})


def test_apply_patch_on_a_link_is_judged_at_the_link_too(repo: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: CLAUDE.md\n@@\n+x\n*** End Patch\n"
    denied = _codex_patch(repo, patch)
    assert denied and "HOOK_PROTECTED_SURFACE" in denied[1]


def test_a_link_in_scope_to_a_file_in_scope_stays_writable(repo: Path) -> None:
    assert _tool(repo, "Write", {"file_path": "src/alias.py", "content": "x"}) == []
    assert _bash(repo, "sed -i s/hi/ho/ src/alias.py") == []


def test_a_link_through_a_linked_parent_is_judged_where_it_lies(repo: Path) -> None:
    os.symlink(".", repo / "here")
    assert "HOOK_PROTECTED_SURFACE" in _bash(repo, "rm here/CLAUDE.md")


def test_a_link_out_of_scope_to_a_file_in_scope_is_denied(repo: Path) -> None:
    os.symlink("src/app.py", repo / "top.py")
    assert _bash(repo, "rm top.py") == ["HOOK_OUTSIDE_SCOPE"]


# CDPATH ----------------------------------------------------------------------------


def test_an_inherited_cdpath_makes_a_relative_cd_unknown(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "src").mkdir(parents=True)
    command = "cd src && echo x > app.py"
    assert _bash(repo, command) == []
    assert _bash(repo, command, CDPATH=str(elsewhere)) == ["HOOK_SHELL_UNCLASSIFIABLE"]
    assert _bash(repo, command, CDPATH="") == []
    assert _bash(repo, "cd ./src && echo x > app.py", CDPATH=str(elsewhere)) == []


# Effect checks -------------------------------------------------------------------


def _stop(repo: Path) -> list[str]:
    payload = claude_payload("Stop", repo)
    result = run_hook(repo, "claude", payload, hook_env("TASK-0001", CDPATH=""))
    assert "Traceback" not in result.err
    return [] if result.code == 0 and '"block"' not in result.out else [result.out + result.err]


def test_an_effect_check_judges_a_new_link_above_a_guarded_path(repo: Path) -> None:
    assert _stop(repo) == []
    os.symlink("src/d", repo / ".claude")
    denied = _stop(repo)
    assert denied and "HOOK_CONFIG_FILE" in denied[0]


def test_an_effect_check_passes_a_regular_file_named_like_a_guarded_directory(
    repo: Path,
) -> None:
    (repo / "src" / "approvals").write_text("a plain file\n")
    assert _stop(repo) == []
