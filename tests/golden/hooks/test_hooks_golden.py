"""Golden tests per host: stdin payload in, exact stdout / stderr / exit code out.

Each case builds a real repository, optionally approves TASK-0001, applies one fault or state change,
feeds one payload through ``plangate hook <host>`` and compares the three
outputs byte for byte with ``expected/<case>.json``. Temporary paths are
written as ``{root}``.

Regenerate after a deliberate change with ``HOOKS_UPDATE_GOLDEN=1`` and
review the diff: every line of these files is part of the host contract.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration" / "hooks"))

from support.hooks import hook_env, init_ledger, run_hook
from support.repo import commit_all, git
from support.taskkit import approve_task, make_task

EXPECTED = Path(__file__).parent / "expected"
SHA_RE = re.compile(r"\b[0-9a-f]{40}\b|\b[0-9a-f]{12}\b")


@dataclass(frozen=True)
class Case:
    name: str
    host: str
    payload: dict[str, Any] | str
    approved: bool = True
    task: str | None = "TASK-0001"
    setup: Callable[[Path, pytest.MonkeyPatch], None] | None = None
    extra_env: dict[str, str] = field(default_factory=dict)


def pre(tool: str, **tool_input: Any) -> dict[str, Any]:
    return {
        "session_id": "s",
        "cwd": "{root}",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def cursor(event: str, **fields: Any) -> dict[str, Any]:
    return {
        "hook_event_name": event,
        "conversation_id": "c",
        "generation_id": "g",
        "workspace_roots": ["{root}"],
        **fields,
    }


def patch(*headers: str) -> str:
    return "*** Begin Patch\n" + "".join(f"{h}\n+x\n" for h in headers) + "*** End Patch\n"


def stale(repo: Path, _mp: pytest.MonkeyPatch) -> None:
    (repo / "README.md").write_text("moved\n")
    commit_all(repo, "HEAD moves on")


def unreadable_record(repo: Path, _mp: pytest.MonkeyPatch) -> None:
    record = repo / "docs/working/TASK-0001/approvals/c3.json"
    record.unlink()
    record.mkdir()  # a directory where the record should be: not a regular file


def corrupt_ledger(repo: Path, _mp: pytest.MonkeyPatch) -> None:
    ledger = repo / ".plangate" / "ledger.sqlite3"
    ledger.parent.mkdir(exist_ok=True)
    ledger.write_bytes(b"garbage, not SQLite\n" * 64)


def missing_ledger(repo: Path, _mp: pytest.MonkeyPatch) -> None:
    for name in ("ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm"):
        (repo / ".plangate" / name).unlink(missing_ok=True)


def decision_raises(_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from plangate.hooks import service

    def explode(*_args: object) -> None:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(service, "decide", explode)


def stray_file(repo: Path, _mp: pytest.MonkeyPatch) -> None:
    (repo / "stray.txt").write_text("x\n")


def bad_surfaces(repo: Path, _mp: pytest.MonkeyPatch) -> None:
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate" / "protected-surfaces.toml").write_text("this is = = not toml\n")


def no_scope(repo: Path, _mp: pytest.MonkeyPatch) -> None:
    plan = repo / "docs/working/TASK-0001/plan.md"
    plan.write_text(plan.read_text().replace("- `src/app.py`\n- `tests/test_app.py`\n", "- app\n"))


def tool_policy(text: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def write(repo: Path, _mp: pytest.MonkeyPatch) -> None:
        (repo / ".plangate").mkdir(exist_ok=True)
        (repo / ".plangate" / "tools.toml").write_text(text)

    return write


READ_ONLY_MCP = tool_policy('[mcp]\nread_only = ["mcp__docs__*", "lookup_?"]\n')


def cursor_via_claude(event: str, **fields: Any) -> dict[str, Any]:
    """A payload Cursor sends when it runs the hooks of .claude/settings.json."""
    return {**cursor(event, **fields), "cursor_version": "2.0.77"}


CASES: list[Case] = [
    # Claude Code
    Case("claude_allow_in_scope", "claude", pre("Write", file_path="{root}/src/app.py")),
    Case("claude_deny_protected_surface", "claude", pre("Edit", file_path="CLAUDE.md")),
    Case("claude_deny_bash_protected", "claude", pre("Bash", command="echo x > CLAUDE.md")),
    Case("claude_deny_outside_scope", "claude", pre("Write", file_path="src/other.py")),
    Case(
        "claude_deny_no_active_task",
        "claude",
        pre("Write", file_path="src/app.py"),
        approved=False,
        task=None,
    ),
    Case(
        "claude_allow_planning_file_without_task",
        "claude",
        pre("Write", file_path="docs/working/TASK-0002/plan.md"),
        approved=False,
        task=None,
    ),
    Case("claude_deny_stale_record", "claude", pre("Write", file_path="src/app.py"), setup=stale),
    Case(
        "claude_deny_unreadable_record",
        "claude",
        pre("Write", file_path="src/app.py"),
        setup=unreadable_record,
    ),
    Case(
        "claude_deny_plan_package_locked",
        "claude",
        pre("Write", file_path="docs/working/TASK-0001/plan.md"),
    ),
    Case(
        "claude_deny_approval_file",
        "claude",
        pre("Write", file_path="docs/working/TASK-0002/approvals/c3.json"),
        approved=False,
        task=None,
    ),
    Case("claude_deny_unclassifiable", "claude", pre("Bash", command="curl -o x https://e")),
    Case("claude_deny_runs_code", "claude", pre("Bash", command="pytest -q")),
    Case("claude_deny_no_verify", "claude", pre("Bash", command="git commit -nm wip")),
    Case(
        "claude_deny_link_then_write",
        "claude",
        pre("Bash", command="ln -s ../CLAUDE.md src/app.py && echo x > src/app.py"),
    ),
    Case(
        "claude_allow_heredoc_commit",
        "claude",
        pre("Bash", command="git commit -m \"$(cat <<'EOF'\nfix `x`\nEOF\n)\""),
    ),
    Case("claude_deny_unknown_tool", "claude", pre("mcp__fs__write", path="a")),
    Case("claude_deny_outside_repo", "claude", pre("Write", file_path="/etc/hosts")),
    Case("claude_deny_git_internals", "claude", pre("Write", file_path=".git/config")),
    Case("claude_deny_hook_config", "claude", pre("Write", file_path=".codex/hooks.json")),
    Case(
        "claude_deny_task_invalid", "claude", pre("Write", file_path="src/app.py"), task="TASK-12"
    ),
    Case(
        "claude_deny_scope_undefined",
        "claude",
        pre("Write", file_path="src/app.py"),
        setup=no_scope,
    ),
    Case(
        "claude_deny_surfaces_unavailable",
        "claude",
        pre("Write", file_path="src/app.py"),
        setup=bad_surfaces,
    ),
    Case("claude_deny_malformed_json", "claude", '{"hook_event_name": "PreToolUse",'),
    Case(
        "claude_deny_duplicate_keys",
        "claude",
        '{"hook_event_name":"PreToolUse","cwd":"{root}","cwd":"/"}',
    ),
    Case(
        "claude_deny_unknown_event",
        "claude",
        {"session_id": "s", "cwd": "{root}", "hook_event_name": "Notification"},
    ),
    Case(
        "claude_deny_missing_cwd",
        "claude",
        {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {}},
    ),
    Case(
        "claude_deny_corrupted_ledger",
        "claude",
        pre("Write", file_path="src/app.py"),
        setup=corrupt_ledger,
    ),
    Case(
        "claude_deny_missing_ledger",
        "claude",
        pre("Write", file_path="src/app.py"),
        setup=missing_ledger,
    ),
    Case(
        "claude_deny_exception_in_decision",
        "claude",
        pre("Write", file_path="src/app.py"),
        setup=decision_raises,
    ),
    Case(
        "claude_post_block_out_of_scope",
        "claude",
        {
            "session_id": "s",
            "cwd": "{root}",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "tool_response": {},
        },
        setup=stray_file,
    ),
    Case(
        "claude_post_failure_block_out_of_scope",
        "claude",
        {
            "session_id": "s",
            "cwd": "{root}",
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "error": "Exit code 2",
        },
        setup=stray_file,
    ),
    Case(
        "claude_stop_block",
        "claude",
        {"session_id": "s", "cwd": "{root}", "hook_event_name": "Stop", "stop_hook_active": False},
        setup=stray_file,
    ),
    Case(
        "claude_stop_allow_clean",
        "claude",
        {"session_id": "s", "cwd": "{root}", "hook_event_name": "Stop", "stop_hook_active": False},
    ),
    # Codex
    Case(
        "codex_allow_patch_in_scope",
        "codex",
        pre("apply_patch", command=patch("*** Update File: src/app.py")),
    ),
    Case(
        "codex_deny_patch_protected",
        "codex",
        pre("apply_patch", command=patch("*** Add File: AGENTS.md")),
    ),
    Case(
        "codex_deny_patch_move_out_of_scope",
        "codex",
        pre("apply_patch", command=patch("*** Update File: src/app.py", "*** Move to: lib/app.py")),
    ),
    Case("codex_deny_patch_without_files", "codex", pre("apply_patch", command="hello")),
    Case(
        "codex_deny_shell_argv", "codex", pre("shell", command=["bash", "-lc", "rm -rf .git/hooks"])
    ),
    Case(
        "codex_deny_push_no_verify", "codex", pre("shell", command=["git", "push", "--no-verify"])
    ),
    Case(
        "codex_deny_two_command_fields",
        "codex",
        pre("exec_command", command="ls", cmd="rm -rf src"),
    ),
    Case(
        "codex_deny_two_patch_fields",
        "codex",
        pre("apply_patch", patch=patch("*** Update File: src/app.py"),
            input=patch("*** Add File: AGENTS.md")),
    ),
    Case(
        "codex_allow_heredoc_patch_in_scope",
        "codex",
        pre("Bash", command="apply_patch <<'EOF'\n" + patch("*** Update File: src/app.py") + "EOF"),
    ),
    Case(
        "codex_deny_heredoc_patch_protected",
        "codex",
        pre("Bash", command="apply_patch <<'EOF'\n" + patch("*** Add File: AGENTS.md") + "EOF"),
    ),
    Case("codex_deny_write_stdin", "codex", pre("write_stdin", session_id=1, chars="rm -rf src\n")),
    Case("codex_allow_spawn_agent", "codex", pre("spawn_agent", message="look")),
    Case(
        "cursor_deny_runs_code",
        "cursor",
        cursor("beforeShellExecution", command="make test", cwd="{root}"),
    ),
    Case(
        "codex_deny_stale_record",
        "codex",
        pre("apply_patch", command=patch("*** Update File: src/app.py")),
        setup=stale,
    ),
    Case(
        "codex_deny_corrupted_ledger",
        "codex",
        pre("Bash", command="touch src/app.py"),
        setup=corrupt_ledger,
    ),
    Case("codex_deny_malformed_json", "codex", "not json"),
    # Cursor
    Case(
        "cursor_allow_shell_in_scope",
        "cursor",
        cursor("beforeShellExecution", command="touch src/app.py", cwd="{root}"),
    ),
    Case(
        "cursor_deny_shell_protected",
        "cursor",
        cursor("beforeShellExecution", command="echo x >> AGENTS.md", cwd="{root}"),
    ),
    Case(
        "cursor_deny_tool_outside_scope",
        "cursor",
        cursor("preToolUse", tool_name="Write", tool_input={"file_path": "{root}/lib/x.py"}),
    ),
    Case(
        "cursor_deny_no_task",
        "cursor",
        cursor("preToolUse", tool_name="Write", tool_input={"file_path": "src/app.py"}),
        approved=False,
        task=None,
    ),
    Case(
        "cursor_deny_mcp", "cursor", cursor("beforeMCPExecution", tool_name="db", tool_input="{}")
    ),
    Case("cursor_allow_read", "cursor", cursor("beforeReadFile", file_path="{root}/CLAUDE.md")),
    Case(
        "cursor_stop_followup",
        "cursor",
        cursor("stop", status="completed", loop_count=0),
        setup=stray_file,
    ),
    Case(
        "cursor_deny_unreadable_record",
        "cursor",
        cursor("beforeShellExecution", command="touch src/app.py", cwd="{root}"),
        setup=unreadable_record,
    ),
    Case(
        "cursor_deny_exception_in_decision",
        "cursor",
        cursor("beforeShellExecution", command="touch src/app.py", cwd="{root}"),
        setup=decision_raises,
    ),
    Case("cursor_deny_unknown_event", "cursor", cursor("beforeTeleport")),
    # Tool vocabularies: each host's tools by kind (read-only, writer, agent-spawning).
    Case("claude_allow_task_create", "claude", pre("TaskCreate", subject="x", description="y")),
    Case("claude_allow_task_update", "claude", pre("TaskUpdate", taskId="1", status="completed")),
    Case("claude_allow_tool_search", "claude", pre("ToolSearch", query="select:Read")),
    Case("claude_allow_lsp", "claude", pre("LSP", operation="hover", filePath="src/app.py")),
    Case("claude_allow_cron_create", "claude", pre("CronCreate", cron="*/5 * * * *", prompt="x")),
    Case("claude_allow_enter_plan_mode", "claude", pre("EnterPlanMode")),
    Case("claude_allow_agent_spawn", "claude", pre("Agent", prompt="look", subagent_type="x")),
    Case("claude_deny_enter_worktree", "claude", pre("EnterWorktree", name="wt")),
    Case("claude_allow_report_findings", "claude", pre("ReportFindings", findings=[])),
    Case("claude_allow_send_message", "claude", pre("SendMessage", to="helper", message="x")),
    Case(
        "claude_deny_agent_in_worktree",
        "claude",
        pre("Agent", prompt="look", description="d", isolation="worktree"),
    ),
    Case(
        "claude_deny_durable_cron",
        "claude",
        pre("CronCreate", cron="*/5 * * * *", prompt="x", durable=True),
    ),
    Case(
        "claude_deny_two_command_fields",
        "claude",
        pre("Bash", command="ls", cmd="rm -rf src"),
    ),
    Case(
        "claude_deny_notebook_outside_scope",
        "claude",
        pre("NotebookEdit", notebook_path="lib/n.ipynb", new_source="x"),
    ),
    Case("claude_allow_plangate_verify", "claude", pre("Bash", command="plangate c3 verify TASK-0001")),
    Case("claude_allow_plangate_status", "claude", pre("Bash", command="plangate status --json")),
    Case(
        "claude_deny_plangate_issue",
        "claude",
        pre("Bash", command="plangate c3 issue TASK-0001 --target-sha HEAD"),
    ),
    Case(
        "claude_allow_mcp_declared",
        "claude",
        pre("mcp__docs__search", query="x"),
        setup=READ_ONLY_MCP,
    ),
    Case(
        "claude_deny_mcp_undeclared",
        "claude",
        pre("mcp__github__create_pr", title="x"),
        setup=READ_ONLY_MCP,
    ),
    Case(
        "claude_deny_tool_policy_invalid",
        "claude",
        pre("mcp__docs__search", query="x"),
        setup=tool_policy('[mcp]\nread_only = ["mcp__docs__*"]\nwrite = ["*"]\n'),
    ),
    Case("codex_allow_spawn_agent", "codex", pre("spawn_agent", message="look")),
    Case("codex_deny_mcp_undeclared", "codex", pre("mcp__fs__write", path="a")),
    Case(
        "codex_allow_mcp_declared",
        "codex",
        pre("mcp__docs__fetch", url="x"),
        setup=READ_ONLY_MCP,
    ),
    Case(
        "cursor_allow_task",
        "cursor",
        cursor("preToolUse", tool_name="Task", tool_input={"prompt": "look"}),
    ),
    Case(
        "cursor_allow_mcp_declared",
        "cursor",
        cursor("beforeMCPExecution", tool_name="lookup_1", tool_input="{}"),
        setup=READ_ONLY_MCP,
    ),
    Case(
        "cursor_deny_mcp_prefix_not_glob",
        "cursor",
        cursor("beforeMCPExecution", tool_name="lookup_12", tool_input="{}"),
        setup=READ_ONLY_MCP,
    ),
    # Cursor running the Claude Code hook (.claude/settings.json).
    Case(
        "claude_cursor_shell_in_scope",
        "claude",
        cursor_via_claude("beforeShellExecution", command="touch src/app.py", cwd="{root}"),
    ),
    Case(
        "claude_cursor_shell_protected",
        "claude",
        cursor_via_claude("beforeShellExecution", command="echo x >> AGENTS.md", cwd="{root}"),
    ),
    Case(
        "claude_cursor_pre_tool_shell",
        "claude",
        {
            **cursor_via_claude("PreToolUse"),
            "tool_name": "Shell",
            "tool_input": {"command": "touch src/app.py"},
        },
    ),
    Case(
        "claude_cursor_pre_tool_delete_outside_scope",
        "claude",
        {
            **cursor_via_claude("PreToolUse"),
            "tool_name": "Delete",
            "tool_input": {"path": "{root}/README.md"},
        },
    ),
    Case("cursor_deny_malformed_json", "cursor", "[1, 2"),
]


def _build_repo(base: Path, approved: bool) -> Path:
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Golden")
    git(repo, "config", "user.email", "golden@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / "README.md").write_text("# golden\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    commit_all(repo, "initial")
    if approved:
        make_task(repo, "TASK-0001")
        approve_task(repo, "TASK-0001")
    else:
        init_ledger(repo)  # what 'plangate hooks install' does
    return repo


def _normalise(text: str, root: str) -> str:
    # Commit ids depend on the clock (git's environment is scrubbed), paths on tmp_path.
    return SHA_RE.sub("{sha}", text.replace(root, "{root}"))


def _fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [_fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    return value


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _build_repo(tmp_path, case.approved)
    root = os.path.realpath(repo)
    if case.setup is not None:
        case.setup(repo, monkeypatch)
    stdin = (
        _fill(case.payload, root)
        if isinstance(case.payload, str)
        else json.dumps(_fill(case.payload, root))
    )
    result = run_hook(repo, case.host, stdin.encode(), hook_env(case.task, **case.extra_env))
    actual = {
        "exit": result.code,
        "stdout": _normalise(result.out, root),
        "stderr": _normalise(result.err, root),
    }
    path = EXPECTED / f"{case.name}.json"
    if os.environ.get("HOOKS_UPDATE_GOLDEN") == "1":
        EXPECTED.mkdir(exist_ok=True)
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    expected = json.loads(path.read_text())
    assert actual == expected
    # Fail closed by construction: no host ever sees exit 1, and a deny is never silent.
    assert actual["exit"] in (0, 2)
    if "allow" not in case.name and case.host in ("claude", "codex") and (
        "in_scope" not in case.name and case.name != "claude_cursor_pre_tool_shell"
    ):
        assert actual["exit"] == 2 or "systemMessage" in actual["stdout"]
    if "deny" in case.name and case.host == "cursor":
        assert json.loads(actual["stdout"])["permission"] == "deny"


IN_PROCESS_ONLY = {"decision_raises"}
"""Setups that patch this test process: a helper process cannot see them."""


HELPER_CASES = [c for c in CASES if c.setup is None or c.setup.__name__ not in IN_PROCESS_ONLY]


@pytest.fixture(scope="session")
def native_client(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The native client, built once with the real compiler."""
    from support.native import native_binary_fixture

    return native_binary_fixture(tmp_path_factory)


@pytest.mark.parametrize("client", ["python", "native"])
@pytest.mark.parametrize("case", HELPER_CASES, ids=lambda c: c.name)
def test_golden_through_helper(
    case: Case, client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """The same payloads through a real helper (``plangate hookd``) and each client: the
    small Python one (``python -S -I hookd_launch.py HOST``) and the native one
    (``hooks/native/hookd_client.c``). Byte for byte the in-process answers, and every one
    of them really answered by the helper."""
    from support.hookd import requests_served, run_client, running_helper, runtime_env
    from support.native import run_native

    if client == "native" and not sys.platform.startswith("linux"):
        pytest.skip("the native client is Linux only")
    binary = request.getfixturevalue("native_client") if client == "native" else ""
    repo = _build_repo(tmp_path, case.approved)
    root = os.path.realpath(repo)
    env = runtime_env(hook_env(case.task, **case.extra_env), tmp_path / "run")
    with running_helper(repo, env) as _helper:
        if case.setup is not None:
            case.setup(repo, monkeypatch)
        stdin = (
            _fill(case.payload, root)
            if isinstance(case.payload, str)
            else json.dumps(_fill(case.payload, root))
        )
        before = requests_served(repo, env)
        if client == "native":
            result = run_native(binary, repo, case.host, stdin.encode(), env)
        else:
            result = run_client(repo, case.host, stdin.encode(), env)
        assert requests_served(repo, env) == before + 1, "the helper did not answer"
    actual = {
        "exit": result.returncode,
        "stdout": _normalise(result.stdout.decode(), root),
        "stderr": _normalise(result.stderr.decode(), root),
    }
    expected = json.loads((EXPECTED / f"{case.name}.json").read_text())
    assert actual == expected
