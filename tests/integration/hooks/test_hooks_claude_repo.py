"""The Claude Code hook against real repositories, records, ledgers and symlinks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.hooks import (
    approved_repo,
    claude_payload,
    cursor_payload,
    hook_env,
    init_ledger,
    ledger_decisions,
    run_hook,
)
from support.repo import commit_all, git


def _codes(stderr: str) -> list[str]:
    return [
        line.split(":")[0].lstrip("- ") for line in stderr.splitlines() if line.startswith("- ")
    ]


def _write(repo: Path, path: str, task: str | None = "TASK-0001", tool: str = "Write"):
    payload = claude_payload("PreToolUse", repo, tool, {"file_path": path, "content": "x"})
    return run_hook(repo, "claude", payload, hook_env(task))


def _bash(repo: Path, command: str, task: str | None = "TASK-0001"):
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": command})
    return run_hook(repo, "claude", payload, hook_env(task))


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return approved_repo(git_repo)


def test_in_scope_write_is_allowed_silently(repo: Path) -> None:
    result = _write(repo, str(repo / "src" / "app.py"))
    assert (result.code, result.out, result.err) == (0, "", "")


def test_relative_in_scope_write_is_allowed(repo: Path) -> None:
    assert _write(repo, "tests/test_app.py").code == 0


def test_out_of_scope_write_is_denied(repo: Path) -> None:
    result = _write(repo, str(repo / "src" / "other.py"))
    assert result.code == 2
    assert _codes(result.err) == ["HOOK_OUTSIDE_SCOPE"]
    body = json.loads(result.out)
    assert body["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "src/other.py" in body["hookSpecificOutput"]["permissionDecisionReason"]


def test_scope_match_is_case_sensitive(repo: Path) -> None:
    assert _codes(_write(repo, "SRC/app.py").err) == ["HOOK_OUTSIDE_SCOPE"]


def test_protected_surface_is_denied_even_with_a_task(repo: Path) -> None:
    result = _write(repo, "CLAUDE.md")
    assert result.code == 2
    assert "HOOK_PROTECTED_SURFACE" in _codes(result.err)


def test_protected_surface_match_is_case_folded(repo: Path) -> None:
    assert "HOOK_PROTECTED_SURFACE" in _codes(_write(repo, "claude.md").err)


def test_plan_package_of_the_active_task_is_locked(repo: Path) -> None:
    result = _write(repo, "docs/working/TASK-0001/plan.md")
    assert "HOOK_PLAN_PACKAGE_LOCKED" in _codes(result.err)


def test_approvals_file_is_denied(repo: Path) -> None:
    result = _write(repo, "docs/working/TASK-0001/approvals/c3.json")
    assert "HOOK_APPROVAL_FILE" in _codes(result.err)


def test_no_task_allows_planning_files_only(git_repo: Path) -> None:
    init_ledger(git_repo)
    assert _write(git_repo, "docs/working/TASK-0002/plan.md", task=None).code == 0
    denied = _write(git_repo, "src/app.py", task=None)
    assert _codes(denied.err) == ["HOOK_NO_ACTIVE_TASK"]
    notes = _write(git_repo, "docs/working/TASK-0002/notes.md", task=None)
    assert _codes(notes.err) == ["HOOK_NO_ACTIVE_TASK"]


def test_stale_record_denies_every_write(repo: Path) -> None:
    (repo / "README.md").write_text("moved on\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "HEAD moves past the approved commit")
    result = _write(repo, "src/app.py")
    assert result.code == 2
    assert _codes(result.err) == ["HOOK_TASK_NOT_VERIFIED"]


def test_tampered_plan_denies(repo: Path) -> None:
    plan = repo / "docs" / "working" / "TASK-0001" / "plan.md"
    plan.write_text(plan.read_text().replace("`src/app.py`", "`src/**`"))
    result = _write(repo, "src/app.py")
    assert "HOOK_TASK_NOT_VERIFIED" in _codes(result.err)


def test_unreadable_record_denies(repo: Path) -> None:
    record = repo / "docs" / "working" / "TASK-0001" / "approvals" / "c3.json"
    data = record.read_bytes()
    record.unlink()
    elsewhere = repo.parent / "c3.json"
    elsewhere.write_bytes(data)
    record.symlink_to(elsewhere)  # a symlink in the record's place is not read
    result = _write(repo, "src/app.py")
    assert result.code == 2
    assert "HOOK_TASK_NOT_VERIFIED" in _codes(result.err)


def test_invalid_task_id_in_env_denies(repo: Path) -> None:
    result = _write(repo, "src/app.py", task="TASK-1")
    assert "HOOK_TASK_INVALID" in _codes(result.err)


def test_symlink_into_a_protected_file_is_resolved(repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("rules\n")
    os.symlink(repo / "CLAUDE.md", repo / "src" / "notes.md")
    result = _write(repo, "src/notes.md")
    assert "HOOK_PROTECTED_SURFACE" in _codes(result.err)


def test_symlinked_directory_pointing_outside_is_denied(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "src" / "link")
    result = _write(repo, "src/link/x.py")
    assert _codes(result.err) == ["HOOK_TARGET_OUTSIDE_REPO"]


def test_dotdot_and_dot_segments_are_resolved_before_matching(repo: Path) -> None:
    assert _write(repo, "./src/../src/app.py").code == 0
    escaped = _write(repo, "src/../../elsewhere.py")
    assert _codes(escaped.err) == ["HOOK_TARGET_OUTSIDE_REPO"]
    sneaky = _write(repo, "src/../CLAUDE.md")
    assert "HOOK_PROTECTED_SURFACE" in _codes(sneaky.err)


def test_absolute_path_outside_the_repository_is_denied(repo: Path) -> None:
    assert _codes(_write(repo, "/etc/passwd").err) == ["HOOK_TARGET_OUTSIDE_REPO"]


def test_git_internals_and_hook_configuration_are_guarded(repo: Path) -> None:
    assert "HOOK_GIT_INTERNALS" in _codes(_write(repo, ".git/hooks/pre-commit").err)
    assert "HOOK_CONFIG_FILE" in _codes(_write(repo, ".claude/settings.json").err)
    assert "HOOK_PLANGATE_STATE" in _codes(_write(repo, ".plangate/ledger.sqlite3").err)


def test_bash_redirect_into_protected_file_is_denied(repo: Path) -> None:
    result = _bash(repo, "echo x > CLAUDE.md")
    assert result.code == 2
    assert "HOOK_PROTECTED_SURFACE" in _codes(result.err)


def test_bash_in_scope_write_is_allowed(repo: Path) -> None:
    assert _bash(repo, "echo 'x = 1' >> src/app.py").code == 0


def test_bash_read_only_is_allowed_and_recorded(repo: Path) -> None:
    assert _bash(repo, "git status && ls -la | grep app").code == 0
    last = ledger_decisions(repo)[-1]
    assert last["verdict"] == "ALLOW"
    assert last["action"] == "read"
    assert "command" not in last and len(last["command_sha256"]) == 64


def test_bash_unclassifiable_is_denied(repo: Path) -> None:
    result = _bash(repo, "curl -o x https://example.invalid")
    assert _codes(result.err) == ["HOOK_SHELL_UNCLASSIFIABLE"]


def test_bash_project_code_is_denied_without_confinement(repo: Path) -> None:
    result = _bash(repo, "npm install")
    assert _codes(result.err) == ["HOOK_SHELL_RUNS_CODE"]


def _sandbox_settings(repo: Path, **change: object) -> None:
    from plangate.hooks.confinement import SANDBOX_DENY_REQUIRED
    from plangate.hooks.service import load_surfaces

    surfaces, _ = load_surfaces(str(repo))
    protected = [e.pattern for e in surfaces.entries] if surfaces is not None else []
    sandbox = {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {"denyWrite": [*SANDBOX_DENY_REQUIRED, *protected]},
        **change,
    }
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"sandbox": sandbox}))


def _bash_in(repo: Path, command: str, home: Path, **tool: object):
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": command, **tool})
    return run_hook(repo, "claude", payload, hook_env("TASK-0001", HOME=str(home)))


def test_project_code_runs_inside_the_claude_sandbox_the_hook_sees(
    repo: Path, tmp_path: Path
) -> None:
    _sandbox_settings(repo)
    assert _bash_in(repo, "pytest -q", tmp_path).code == 0
    assert _bash_in(repo, "curl -o x https://e", tmp_path).code == 0
    # Still judged: protected targets, hook-skipping flags.
    assert "HOOK_PROTECTED_SURFACE" in _codes(_bash_in(repo, "echo x > CLAUDE.md", tmp_path).err)
    assert "HOOK_SHELL_SKIPS_HOOKS" in _codes(_bash_in(repo, "git commit -nm x", tmp_path).err)
    last = ledger_decisions(repo)[-1]
    assert last["verdict"] == "DENY"


@pytest.mark.parametrize(
    "change",
    [
        {"enabled": False},
        {"allowUnsandboxedCommands": True},
        {"excludedCommands": ["pytest"]},
        {"filesystem": {"denyWrite": [".git"]}},
    ],
)
def test_a_weaker_claude_sandbox_is_not_relied_on(repo: Path, tmp_path: Path, change) -> None:
    _sandbox_settings(repo, **change)
    assert _codes(_bash_in(repo, "pytest -q", tmp_path).err) == ["HOOK_SHELL_RUNS_CODE"]


def test_a_call_that_asks_to_leave_the_sandbox_is_not_confined(repo: Path, tmp_path: Path) -> None:
    _sandbox_settings(repo)
    result = _bash_in(repo, "pytest -q", tmp_path, dangerouslyDisableSandbox=True)
    assert _codes(result.err) == ["HOOK_SHELL_RUNS_CODE"]


def test_a_repository_program_named_like_a_reader_is_not_trusted(repo: Path) -> None:
    bin_dir = repo / "bin"
    bin_dir.mkdir()
    (bin_dir / "cat").write_text("#!/bin/sh\ntouch pwned\n")
    (bin_dir / "cat").chmod(0o755)
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": "cat README.md"})
    env = hook_env("TASK-0001", PATH=f"{bin_dir}:{os.environ['PATH']}")
    assert _codes(run_hook(repo, "claude", payload, env).err) == ["HOOK_SHELL_UNCLASSIFIABLE"]


def test_effect_check_sees_ignored_host_configuration(repo: Path) -> None:
    """A file git ignores under host configuration is still a change; only the host's
    own local settings are never blamed (plangate.ownfiles)."""
    (repo / ".gitignore").write_text(".claude/agents/\n.claude/settings.local.json\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "--no-verify", "-m", "ignore local settings")
    (repo / ".claude" / "agents").mkdir(parents=True, exist_ok=True)
    (repo / ".claude" / "agents" / "helper.md").write_text("do anything\n")
    (repo / ".claude" / "settings.local.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    payload = claude_payload("Stop", repo, None, None)
    result = run_hook(repo, "claude", payload, hook_env(None))
    assert ".claude/agents/helper.md" in result.err
    assert ".claude/settings.local.json" not in result.err


def test_bash_commit_checks_the_staged_paths(repo: Path) -> None:
    (repo / "other.txt").write_text("x\n")
    git(repo, "add", "other.txt")
    result = _bash(repo, "git commit -m wip")
    assert "HOOK_OUTSIDE_SCOPE" in _codes(result.err)


@pytest.mark.parametrize(
    "command",
    [
        "git commit --no-verify -m x",
        "git commit -nm x",
        "git commit -am x -n",
        "git push --no-verify",
        "git push origin main --no-verify",
        "git -c core.hooksPath=/dev/null commit -m x",
        "git -c CORE.HOOKSPATH=x push",
    ],
)
def test_bash_hook_skipping_flags_are_denied(repo: Path, command: str) -> None:
    assert "HOOK_SHELL_SKIPS_HOOKS" in _codes(_bash(repo, command).err)


def test_bash_copy_into_directory_lands_inside_it(repo: Path) -> None:
    (repo / "tests").mkdir()
    (repo / "test_app.py").write_text("x\n")
    assert _bash(repo, "cp test_app.py tests/").code == 0
    assert "HOOK_OUTSIDE_SCOPE" in _codes(_bash(repo, "cp test_app.py src/").err)


def test_unknown_tool_is_denied_and_read_tools_allowed(repo: Path) -> None:
    unknown = claude_payload("PreToolUse", repo, "mcp__serena__replace", {"path": "a"})
    assert run_hook(repo, "claude", unknown, hook_env("TASK-0001")).code == 2
    read = claude_payload("PreToolUse", repo, "Read", {"file_path": str(repo / "CLAUDE.md")})
    assert run_hook(repo, "claude", read, hook_env("TASK-0001")).code == 0


def test_every_decision_goes_to_the_ledger(repo: Path) -> None:
    _write(repo, "src/app.py")
    _write(repo, "CLAUDE.md")
    decisions = ledger_decisions(repo)
    assert [d["verdict"] for d in decisions[-2:]] == ["ALLOW", "DENY"]
    assert decisions[-1]["codes"][0] == "HOOK_PROTECTED_SURFACE"
    assert decisions[-1]["task_id"] == "TASK-0001"
    assert decisions[-1]["targets"] == ["CLAUDE.md"]


def test_corrupted_ledger_denies(repo: Path) -> None:
    _write(repo, "src/app.py")
    (repo / ".plangate" / "ledger.sqlite3").write_bytes(b"this is not a database" * 100)
    result = _write(repo, "src/app.py")
    assert result.code == 2
    assert _codes(result.err) == ["HOOK_LEDGER_UNAVAILABLE"]


def test_ledger_url_that_cannot_be_used_denies(repo: Path) -> None:
    payload = claude_payload("PreToolUse", repo, "Write", {"file_path": "src/app.py"})
    env = hook_env("TASK-0001", PLANGATE_LEDGER_URL="mysql://nope")
    result = run_hook(repo, "claude", payload, env)
    assert result.code == 2
    assert _codes(result.err) == ["HOOK_LEDGER_UNAVAILABLE"]


def test_exception_inside_the_decision_denies(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plangate.hooks import service

    def explode(*_args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(service, "decide", explode)
    result = _write(repo, "src/app.py")
    assert result.code == 2
    assert _codes(result.err) == ["HOOK_INTERNAL_ERROR"]
    assert "boom" in json.loads(result.out)["hookSpecificOutput"]["permissionDecisionReason"]


def test_task_recorded_by_exec_in_the_ledger_is_active(repo: Path) -> None:
    import fcntl

    from plangate.ledger import open_ledger

    with open_ledger(repo, {}) as ledger:
        ledger.append("exec_started", "TASK-0001", {"task_id": "TASK-0001", "head": "x"})
    # The run is live while its exec process holds the task's lock.
    lock = repo / ".plangate" / "locks" / "TASK-0001.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert _write(repo, "src/app.py", task=None).code == 0
        assert _codes(_write(repo, "src/other.py", task=None).err) == ["HOOK_OUTSIDE_SCOPE"]
        with open_ledger(repo, {}) as ledger:
            ledger.append("exec_ended", "TASK-0001", {"exit_code": 0})
        assert _codes(_write(repo, "src/app.py", task=None).err) == ["HOOK_NO_ACTIVE_TASK"]
    finally:
        os.close(fd)


def test_post_tool_use_blocks_changes_outside_scope(repo: Path) -> None:
    post = claude_payload(
        "PostToolUse", repo, "Bash", {"command": "make"}, tool_response={"stdout": ""}
    )
    assert run_hook(repo, "claude", post, hook_env("TASK-0001")).code == 0
    (repo / "src" / "app.py").write_text("changed\n")
    assert run_hook(repo, "claude", post, hook_env("TASK-0001")).code == 0
    (repo / "stray.txt").write_text("slipped past the matcher\n")
    result = run_hook(repo, "claude", post, hook_env("TASK-0001"))
    assert result.code == 2
    body = json.loads(result.out)
    assert body["decision"] == "block"
    assert "stray.txt" in body["reason"]


def test_stop_blocks_once_then_reports(repo: Path) -> None:
    (repo / "stray.txt").write_text("x\n")
    stop = claude_payload("Stop", repo, stop_hook_active=False)
    first = run_hook(repo, "claude", stop, hook_env("TASK-0001"))
    assert first.code == 2
    assert json.loads(first.out)["decision"] == "block"
    again = claude_payload("Stop", repo, stop_hook_active=True)
    second = run_hook(repo, "claude", again, hook_env("TASK-0001"))
    assert second.code == 0
    assert "stray.txt" in json.loads(second.out)["systemMessage"]


def test_stop_without_changes_allows(repo: Path) -> None:
    commit_all(repo, "record committed")
    stop = claude_payload("Stop", repo, stop_hook_active=False)
    # The record is now committed, HEAD moved: nothing changed, but the task is stale.
    result = run_hook(repo, "claude", stop, hook_env(None))
    assert (result.code, result.out) == (0, "")


def test_linked_worktree_uses_its_own_root(repo: Path, tmp_path: Path) -> None:
    commit_all(repo, "record")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(wt))
    # Each working tree keeps its own (untracked) ledger: the committed records speak of
    # the main checkout's, so this tree's own is simply created (no --force).
    from support.cli import run_cli_in

    assert run_cli_in(wt, "ledger", "init").code == 0
    inside = claude_payload(
        "PreToolUse", wt, "Write", {"file_path": str(wt / "docs/working/TASK-0009/plan.md")}
    )
    assert run_hook(wt, "claude", inside, hook_env(None)).code == 0
    # A write from the worktree into the main checkout is outside this worktree.
    across = claude_payload(
        "PreToolUse", wt, "Write", {"file_path": str(repo / "docs/working/TASK-0009/plan.md")}
    )
    result = run_hook(wt, "claude", across, hook_env(None))
    assert _codes(result.err) == ["HOOK_TARGET_OUTSIDE_REPO"]
    # The worktree's git directory lives in the main repository's .git: outside too.
    gitdir = claude_payload(
        "PreToolUse", wt, "Write", {"file_path": str(repo / ".git" / "worktrees" / "wt" / "HEAD")}
    )
    assert run_hook(wt, "claude", gitdir, hook_env(None)).code == 2


def test_cwd_outside_any_repository_denies(tmp_path: Path) -> None:
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    payload = claude_payload("PreToolUse", lonely, "Write", {"file_path": "a.txt"})
    result = run_hook(lonely, "claude", payload)
    assert _codes(result.err) == ["HOOK_NOT_IN_REPOSITORY"]


def test_missing_ledger_denies_and_is_not_recreated(git_repo: Path) -> None:
    result = _write(git_repo, "docs/working/TASK-0002/plan.md", task=None)
    assert result.code == 2
    assert _codes(result.err) == ["HOOK_LEDGER_MISSING"]
    assert not (git_repo / ".plangate" / "ledger.sqlite3").exists()
    init_ledger(git_repo)
    assert _write(git_repo, "docs/working/TASK-0002/plan.md", task=None).code == 0


def test_hook_without_a_known_host_blocks(git_repo: Path, run_cli) -> None:
    for argv in (("hook",), ("hook", "vim"), ("hook", "claude", "extra")):
        result = run_cli(git_repo, *argv)
        assert result.code == 2
        assert "HOOK_USAGE" in result.err


def test_module_entry_point_prints_the_same_bytes(repo: Path) -> None:
    import subprocess
    import sys

    payload = claude_payload("PreToolUse", repo, "Write", {"file_path": "CLAUDE.md"})
    in_process = run_hook(repo, "claude", payload, hook_env("TASK-0001"))
    proc = subprocess.run(
        [sys.executable, "-m", "plangate.hooks", "claude"],
        input=payload,
        cwd=repo,
        env=hook_env("TASK-0001"),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == in_process.code == 2
    assert proc.stdout.decode() == in_process.out
    assert proc.stderr.decode() == in_process.err


# -- Adversarial review: end-to-end attempts to write protected files past the hooks.
# Each case ran through ``plangate hook <host>`` in an approved repository and was
# allowed before the review. Each must now be the host's deny form with a reason.


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
        [
            "bash",
            "-lc",
            "cd .claude && apply_patch <<'EOF'\n"
            "*** Begin Patch\n*** Add File: settings.json\n+{}\n*** End Patch\nEOF",
        ],
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
        f"*** Begin Patch\n*** Update File: src/app.py\n@@\n+x\n{header}\n@@\n+x\n*** End Patch\n"
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
    payload = cursor_payload(
        "beforeShellExecution", repo, command="uniq src/app.py CLAUDE.md", cwd=str(repo)
    )
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


def test_cursor_file_tool_with_two_path_keys_is_ambiguous(repo: Path) -> None:
    payload = cursor_payload(
        "preToolUse",
        repo,
        tool_name="Write",
        tool_input={"file_path": "src/app.py", "target_file": "CLAUDE.md", "contents": "x"},
    )
    result = run_hook(repo, "cursor", payload, hook_env("TASK-0001"))
    assert result.code == 0
    body = json.loads(result.out)
    assert body["permission"] == "deny"
    assert "HOOK_PAYLOAD_AMBIGUOUS" in body["agent_message"]


def test_cursor_shell_tool_working_directory_is_used(repo: Path) -> None:
    payload = cursor_payload(
        "preToolUse",
        repo,
        tool_name="Shell",
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
    "command",
    [
        "ln CLAUDE.md tests/test_app.py",
        "cp -l CLAUDE.md tests/test_app.py",
        "cp --link .claude/settings.json tests/test_app.py",
        "ln -P CLAUDE.md tests/test_app.py",
    ],
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


@pytest.mark.parametrize(
    "command", ["rm -rf docs/working", "mv docs/working old", "chmod -R 000 docs/working/TASK-0001"]
)
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


def test_nohup_is_judged_for_the_home_file_it_may_write(repo: Path) -> None:
    # On a terminal nohup writes ./nohup.out, or $HOME/nohup.out when it cannot: the home
    # file lies outside the repository, so the line is refused even with ./nohup.out free.
    result = _bash(repo, "nohup ls")
    assert result.code == 2
    assert "HOOK_TARGET_OUTSIDE_REPO" in _codes(result.err), result.err
    assert "nohup.out" in result.err
