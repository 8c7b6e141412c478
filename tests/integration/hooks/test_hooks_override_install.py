"""Overrides through the CLI and the ledger; install/uninstall merging in real repositories."""

from __future__ import annotations

import io
import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from plangate.cli.context import Context
from plangate.cli.main import main
from plangate.hooks.install import MARKER, apply, git_hook_script, hook_command
from support.cli import CliResult
from support.hooks import approved_repo, claude_payload, hook_env, init_ledger, run_hook


class _Terminal(io.BytesIO):
    """A stdin that claims to be an interactive terminal (what a human's shell gives)."""

    def isatty(self) -> bool:
        return True


def _override(
    repo: Path,
    *argv: str,
    stdin: bytes = b"GRANT\n",
    tty: bool = True,
    env: dict[str, str] | None = None,
) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    stream = _Terminal(stdin) if tty else io.BytesIO(stdin)
    ctx = Context(
        cwd=repo, stdout=out, stderr=err, stdin=stream, env=hook_env() if env is None else env
    )
    code = main(["override", *argv], ctx)
    return CliResult(code, out.getvalue(), err.getvalue())


def _write(repo: Path, path: str, task: str | None = "TASK-0001") -> CliResult:
    payload = claude_payload("PreToolUse", repo, "Write", {"file_path": path})
    return run_hook(repo, "claude", payload, hook_env(task))


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return approved_repo(git_repo)


def test_grant_refused_without_a_terminal(repo: Path) -> None:
    result = _override(
        repo, "grant", "--paths", "docs/**", "--minutes", "5", "--reason", "x", tty=False
    )
    assert result.code == 3
    assert "OVERRIDE_NOT_INTERACTIVE" in result.err


@pytest.mark.parametrize(
    "marker", ["CLAUDECODE", "CODEX_SANDBOX", "CURSOR_AGENT", "CI", "PLANGATE_TASK"]
)
def test_grant_refused_with_agent_markers(repo: Path, marker: str) -> None:
    env = hook_env() | {marker: "1"}
    result = _override(
        repo, "grant", "--paths", "docs/**", "--minutes", "5", "--reason", "x", env=env
    )
    assert result.code == 3
    assert "OVERRIDE_AGENT_ENVIRONMENT" in result.err


def test_grant_needs_the_confirmation_word(repo: Path) -> None:
    result = _override(
        repo, "grant", "--paths", "docs/**", "--minutes", "5", "--reason", "x", stdin=b"yes\n"
    )
    assert result.code == 2
    assert "OVERRIDE_NOT_CONFIRMED" in result.err


def test_grant_lifts_scope_but_never_protected_surfaces(repo: Path) -> None:
    assert "HOOK_OUTSIDE_SCOPE" in _write(repo, "docs/guide.md").err
    granted = _override(
        repo,
        "grant",
        "--paths",
        "docs/*.md",
        "AGENTS.md",
        "--minutes",
        "30",
        "--reason",
        "docs fix the plan forgot",
    )
    assert granted.code == 0, granted.err
    assert _write(repo, "docs/guide.md").code == 0
    still = _write(repo, "AGENTS.md")
    assert still.code == 2
    assert "HOOK_PROTECTED_SURFACE" in still.err
    listing = json.loads(_override(repo, "list", "--json").out)
    assert listing["grants"][0]["active"] is True


def test_one_shot_grant_is_spent_by_its_first_use(repo: Path) -> None:
    _override(
        repo, "grant", "--paths", "docs/*.md", "--minutes", "30", "--reason", "once", "--one-shot"
    )
    assert _write(repo, "docs/guide.md").code == 0
    assert "HOOK_OUTSIDE_SCOPE" in _write(repo, "docs/guide.md").err


def test_revoked_grant_no_longer_lifts(repo: Path) -> None:
    _override(repo, "grant", "--paths", "docs/*.md", "--minutes", "30", "--reason", "r")
    grant_id = json.loads(_override(repo, "list", "--json").out)["grants"][0]["grant_id"]
    assert _override(repo, "revoke", grant_id).code == 0
    assert _write(repo, "docs/guide.md").code == 2


def test_expired_grant_no_longer_lifts(repo: Path) -> None:
    from plangate.hooks.service import HookRequest, evaluate

    _override(repo, "grant", "--paths", "docs/*.md", "--minutes", "5", "--reason", "r")
    request = HookRequest("claude", "pre", str(repo), "Write", file_targets=("docs/guide.md",))
    later = datetime.now(UTC) + timedelta(minutes=6)
    assert evaluate(request, hook_env("TASK-0001"), now=later).codes == ("HOOK_OUTSIDE_SCOPE",)
    assert evaluate(request, hook_env("TASK-0001")).verdict == "ALLOW"


def test_grant_without_a_task_lifts_no_active_task(git_repo: Path) -> None:
    init_ledger(git_repo)
    assert "HOOK_NO_ACTIVE_TASK" in _write(git_repo, "notes/todo.txt", task=None).err
    _override(git_repo, "grant", "--paths", "notes/**", "--minutes", "5", "--reason", "notes")
    assert _write(git_repo, "notes/todo.txt", task=None).code == 0


def test_whole_repository_grant_is_refused(repo: Path) -> None:
    result = _override(repo, "grant", "--paths", "**", "--minutes", "5", "--reason", "all")
    assert result.code == 2
    assert "OVERRIDE_TOO_BROAD" in result.err


def _settings(repo: Path) -> dict:
    return json.loads((repo / ".claude" / "settings.json").read_text())


def test_install_merges_without_touching_other_entries(git_repo: Path) -> None:
    settings = git_repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "their-guard.sh"}]}
            ]
        },
    }
    settings.write_text(json.dumps(theirs))
    apply(git_repo, ["claude"], install=True)
    first = settings.read_bytes()
    apply(git_repo, ["claude"], install=True)
    assert settings.read_bytes() == first  # idempotent
    merged = _settings(git_repo)
    assert merged["permissions"] == theirs["permissions"]
    pre = merged["hooks"]["PreToolUse"]
    assert pre[0] == theirs["hooks"]["PreToolUse"][0]
    assert MARKER in pre[1]["hooks"][0]["command"]
    apply(git_repo, ["claude"], install=False)
    assert _settings(git_repo) == theirs
    apply(git_repo, ["claude"], install=False)
    assert _settings(git_repo) == theirs


def test_uninstall_removes_files_it_alone_created(git_repo: Path) -> None:
    changes = apply(git_repo, ["codex", "cursor"], install=True)
    assert [c.action for c in changes] == ["written", "written"]
    cursor = json.loads((git_repo / ".cursor" / "hooks.json").read_text())
    assert cursor["version"] == 1
    assert set(cursor["hooks"]) == {
        "beforeShellExecution",
        "preToolUse",
        "beforeMCPExecution",
        "afterFileEdit",
        "stop",
    }
    entries = [entry for group in cursor["hooks"].values() for entry in group]
    assert all(entry["failClosed"] is True for entry in entries)
    apply(git_repo, ["codex", "cursor"], install=False)
    assert not (git_repo / ".codex" / "hooks.json").exists()
    assert not (git_repo / ".cursor" / "hooks.json").exists()


def test_install_refuses_a_config_it_cannot_read(git_repo: Path, run_cli) -> None:
    settings = git_repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"a": 1, "a": 2}}')
    result = run_cli(git_repo, "hooks", "install", "--claude")
    assert result.code == 1
    assert "HOOKS_CONFIG_INVALID" in result.err
    assert settings.read_text() == '{"hooks": {"a": 1, "a": 2}}'


def test_git_install_never_overwrites_someone_elses_hook(git_repo: Path, run_cli) -> None:
    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho theirs\n")
    result = run_cli(git_repo, "hooks", "install", "--git")
    assert result.code == 1
    assert "HOOKS_GIT_HOOK_EXISTS" in result.err
    assert hook.read_text() == "#!/bin/sh\necho theirs\n"


def test_git_install_follows_core_hooks_path(git_repo: Path, run_cli) -> None:
    from support.repo import git

    git(git_repo, "config", "core.hooksPath", "githooks")
    assert run_cli(git_repo, "hooks", "install", "--git").code == 0
    script = git_repo / "githooks" / "pre-push"
    assert MARKER in script.read_text()
    assert os.access(script, os.X_OK)
    assert run_cli(git_repo, "hooks", "uninstall", "--git").code == 0
    assert not script.exists()


# -- Adversarial review: a repository-local ``plangate`` package must not replace the gate.
# The installed hook command runs with the repository as its working directory.
# ``python -m`` puts that directory first on ``sys.path``, so an in-scope write of
# ``plangate/hooks/__main__.py`` at the root would have become the hook itself.


def _shadow(repo: Path) -> None:
    (repo / "plangate" / "hooks").mkdir(parents=True)
    (repo / "plangate" / "__init__.py").write_text("")
    (repo / "plangate" / "hooks" / "__init__.py").write_text("")
    (repo / "plangate" / "hooks" / "__main__.py").write_text("raise SystemExit(0)\n")


def test_installed_command_ignores_a_repository_plangate_package(git_repo: Path) -> None:
    _shadow(git_repo)
    payload = json.dumps({"hook_event_name": "Nope", "cwd": str(git_repo)}).encode()
    command = hook_command("claude").split(" #", 1)[0]
    result = subprocess.run(  # noqa: S602 -- the exact shell line the host runs
        command, shell=True, cwd=git_repo, input=payload, capture_output=True, check=False
    )
    assert result.returncode == 2, result
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_git_hook_script_ignores_a_repository_plangate_package(git_repo: Path) -> None:
    _shadow(git_repo)
    script = git_repo / "hook.sh"
    script.write_text(git_hook_script("git-pre-push"))
    result = subprocess.run(
        ["sh", str(script), "origin", "x"], cwd=git_repo, input=b"garbage line\n",
        capture_output=True, check=False,
    )
    assert result.returncode == 1, result
