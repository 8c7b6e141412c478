"""``plangate task start`` writes the host sandbox the hooks rely on; ``task stop`` takes
it back out. Real repositories, the real CLI, the real hook reading the real files."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from support.cli import CliResult, run_cli_in
from support.hooks import approved_repo, claude_payload, hook_env, init_ledger, run_hook
from support.repo import git

LOCAL = ".claude/settings.local.json"
CODEX = ".codex/config.toml"


def human_env() -> dict[str, str]:
    """A person's terminal: no agent or automation marker."""
    markers = ("CLAUDE", "CURSOR", "CODEX", "PLANGATE_TASK", "CI", "GITHUB_ACTIONS")
    return {k: v for k, v in os.environ.items() if not k.startswith(markers)}


@pytest.fixture
def repo(git_repo: Path) -> Path:
    repo = approved_repo(git_repo)
    init_ledger(repo)
    # Local ignores (not a commit: HEAD stays the approved commit).
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.write_text(f"/{LOCAL}\n/{CODEX}\n")
    return repo


def _start(repo: Path, *extra: str) -> CliResult:
    return run_cli_in(repo, "task", "start", "TASK-0001", *extra, env=human_env())


def _stop(repo: Path) -> CliResult:
    return run_cli_in(repo, "task", "stop", env=human_env())


def _pytest_hook(repo: Path, home: Path, **tool: object) -> CliResult:
    payload = claude_payload("PreToolUse", repo, "Bash", {"command": "pytest -q", **tool})
    return run_hook(repo, "claude", payload, hook_env(None, HOME=str(home)))


def _codes(err: str) -> list[str]:
    return [line.split(":")[0].lstrip("- ") for line in err.splitlines() if line.startswith("- ")]


def _local(repo: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((repo / LOCAL).read_text())
    return loaded


def test_start_writes_the_sandbox_the_hook_relies_on_and_stop_removes_it(
    repo: Path, tmp_path: Path
) -> None:
    assert _pytest_hook(repo, tmp_path).code == 2  # no session, no sandbox
    (repo / "lib").mkdir()
    (repo / "lib" / "CLAUDE.md").write_text("rules\n")  # untracked, matches **/CLAUDE.md
    started = _start(repo, "--sandbox", "claude")
    assert started.code == 0, started.err + started.out
    assert "the hooks rely on it" in started.out
    sandbox = _local(repo)["sandbox"]
    assert isinstance(sandbox, dict)
    assert sandbox["enabled"] is True and sandbox["failIfUnavailable"] is True
    assert sandbox["allowUnsandboxedCommands"] is False
    root = str(repo)
    assert sandbox["filesystem"]["allowWrite"] == [f"/{root}/src", f"/{root}/tests"]
    deny = sandbox["filesystem"]["denyWrite"]
    for path in (".plangate", ".git", ".claude/settings.local.json", "docs/working"):
        assert f"/{root}/{path}" in deny
    # .claude/ is named by its entries: Claude Code mounts its own missing paths there
    # (.claude/commands, .claude/agents) after these, which a read-only .claude/ stops.
    assert f"/{root}/.claude" not in deny
    assert f"/{root}/docs/working/TASK-0001" not in deny  # docs/working holds it
    assert f"/{root}/**/CLAUDE.md" in deny  # a protected-surface pattern
    assert f"/{root}/lib/CLAUDE.md" in deny  # and the file it matches (Linux skips globs)
    shown = json.loads(run_cli_in(repo, "task", "show", "--json", env=human_env()).out)
    assert shown["host_sandbox"] == ["claude"] and shown["claude_sandbox_relied_on"] is True
    # The hook now allows project code (the Claude payload, the sandbox on).
    allowed = _pytest_hook(repo, tmp_path)
    assert allowed.code == 0, allowed.err
    # ...but not a call that asks to leave the sandbox.
    bypass = _pytest_hook(repo, tmp_path, dangerouslyDisableSandbox=True)
    assert _codes(bypass.err) == ["HOOK_SHELL_RUNS_CODE"]
    stopped = _stop(repo)
    assert stopped.code == 0, stopped.err
    assert "taken back out: claude" in stopped.out
    assert not (repo / LOCAL).exists()  # start created it; stop removes it
    assert not (repo / ".plangate" / "session" / "host-sandbox.json").exists()
    assert _codes(_pytest_hook(repo, tmp_path).err) == ["HOOK_SHELL_RUNS_CODE"]


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("enabled", False),
        ("failIfUnavailable", None),
        ("allowUnsandboxedCommands", True),
        ("excludedCommands", ["pytest"]),
        ("denyWrite", "drop .git"),
    ],
)
def test_a_field_removed_or_weakened_after_start_is_not_relied_on(
    repo: Path, tmp_path: Path, field: str, change: object
) -> None:
    assert _start(repo, "--sandbox", "claude").code == 0
    assert _pytest_hook(repo, tmp_path).code == 0
    settings = _local(repo)
    sandbox = settings["sandbox"]
    assert isinstance(sandbox, dict)
    if field == "denyWrite":
        deny = sandbox["filesystem"]["denyWrite"]
        sandbox["filesystem"]["denyWrite"] = [p for p in deny if not p.endswith("/.git")]
    elif change is None:
        del sandbox[field]
    else:
        sandbox[field] = change
    (repo / LOCAL).write_text(json.dumps(settings))
    assert _codes(_pytest_hook(repo, tmp_path).err) == ["HOOK_SHELL_RUNS_CODE"]


def test_a_user_layer_that_weakens_the_sandbox_is_reported_at_start(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # the test's own HOME (tests/conftest.py)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"sandbox": {"excludedCommands": ["docker"]}})
    )
    env = human_env() | {"HOME": str(home)}
    started = run_cli_in(repo, "task", "start", "TASK-0001", "--sandbox", "claude", env=env)
    assert started.code == 0, started.err
    assert "do NOT rely on it" in started.out and "excludedCommands" in started.out
    assert _pytest_hook(repo, home).code == 2


def test_user_keys_survive_start_and_stop(repo: Path, tmp_path: Path) -> None:
    mine = {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "sandbox": {
            "enabled": False,
            "excludedCommands": ["docker"],
            "network": {"allowLocalBinding": True},
            "filesystem": {"denyWrite": ["~/.ssh"]},
        },
        "model": "opus",
    }
    original = json.dumps(mine, indent=4) + "\n"
    (repo / ".claude").mkdir()
    (repo / LOCAL).write_text(original)
    assert _start(repo, "--sandbox", "claude").code == 0
    during = _local(repo)
    assert during["permissions"] == mine["permissions"] and during["model"] == "opus"
    sandbox = during["sandbox"]
    assert isinstance(sandbox, dict)
    assert sandbox["network"] == {"allowLocalBinding": True}
    assert "excludedCommands" not in sandbox
    assert sandbox["filesystem"]["denyWrite"][0] == "~/.ssh"
    assert _pytest_hook(repo, tmp_path).code == 0
    assert _stop(repo).code == 0
    assert (repo / LOCAL).read_text() == original  # unchanged since start: its bytes back


def test_stop_restores_only_what_start_set_when_the_file_changed_meanwhile(repo: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / LOCAL).write_text(json.dumps({"sandbox": {"enabled": False, "excludedCommands": ["x"]}}))
    assert _start(repo, "--sandbox", "claude").code == 0
    settings = _local(repo)
    settings["permissions"] = {"allow": ["Bash(make:*)"]}  # Claude Code adds a rule
    sandbox = settings["sandbox"]
    assert isinstance(sandbox, dict)
    sandbox["filesystem"]["denyWrite"].append("~/.aws")  # and the user a path
    (repo / LOCAL).write_text(json.dumps(settings))
    assert _stop(repo).code == 0
    assert _local(repo) == {
        "sandbox": {
            "enabled": False,
            "excludedCommands": ["x"],
            "filesystem": {"denyWrite": ["~/.aws"]},
        },
        "permissions": {"allow": ["Bash(make:*)"]},
    }


@pytest.mark.parametrize(
    "content", [b"{not json", b"[1, 2]", b'{"a": 1, "a": 2}', b'{"sandbox": []}']
)
def test_a_malformed_local_settings_file_is_refused_and_untouched(
    repo: Path, content: bytes
) -> None:
    (repo / ".claude").mkdir()
    (repo / LOCAL).write_bytes(content)
    result = _start(repo, "--sandbox", "claude")
    assert result.code == 1
    assert "TASK_SANDBOX_SETTINGS_INVALID" in result.err + result.out
    assert (repo / LOCAL).read_bytes() == content
    assert "no task session" in run_cli_in(repo, "task", "show", env=human_env()).out


def test_a_link_in_place_of_the_local_settings_is_refused(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (repo / ".claude").mkdir()
    (repo / LOCAL).symlink_to(target)
    result = _start(repo, "--sandbox", "claude")
    assert result.code == 1 and "TASK_SANDBOX_SETTINGS_INVALID" in result.err + result.out
    assert target.read_text() == "{}" and (repo / LOCAL).is_symlink()


def test_a_file_git_does_not_ignore_is_never_written(repo: Path) -> None:
    (repo / ".git" / "info" / "exclude").write_text("")
    result = _start(repo, "--sandbox", "claude")
    assert result.code == 1 and "TASK_SANDBOX_NOT_IGNORED" in result.err + result.out
    assert not (repo / LOCAL).exists()
    assert "no task session" in run_cli_in(repo, "task", "show", env=human_env()).out


def test_codex_config_is_written_and_removed(repo: Path) -> None:
    (repo / ".codex").mkdir()
    original = 'model = "o4-mini"\n\n[profiles.fast]\nmodel = "o4-mini"\n'
    (repo / CODEX).write_text(original)
    started = _start(repo, "--sandbox", "codex")
    assert started.code == 0, started.err + started.out
    assert "never rely on it" in started.out
    config = tomllib.loads((repo / CODEX).read_text())
    assert config["sandbox_mode"] == "workspace-write"
    assert config["sandbox_workspace_write"] == {
        # tests/ does not exist: a missing root would stop Codex's bubblewrap.
        "writable_roots": [str(repo / "src")],
        "network_access": False,
    }
    assert config["profiles"] == {"fast": {"model": "o4-mini"}}
    assert not (repo / LOCAL).exists()  # only the host asked for
    assert _stop(repo).code == 0
    assert (repo / CODEX).read_text() == original


def test_a_codex_config_that_already_sets_the_sandbox_is_refused(repo: Path) -> None:
    (repo / ".codex").mkdir()
    (repo / CODEX).write_text('sandbox_mode = "danger-full-access"\n')
    result = _start(repo, "--sandbox", "claude,codex")
    assert result.code == 1 and "TASK_SANDBOX_CODEX_CONFLICT" in result.err + result.out
    assert (repo / CODEX).read_text() == 'sandbox_mode = "danger-full-access"\n'
    assert not (repo / LOCAL).exists()  # nothing is written before every host is checked


def test_auto_configures_the_hosts_whose_hooks_are_installed(repo: Path) -> None:
    from plangate.hooks.install import apply

    apply(repo, ["claude", "codex"], install=True)
    git(repo, "status")  # the hook files are untracked: HEAD is still approved
    started = _start(repo)
    assert started.code == 0, started.err + started.out
    assert (repo / LOCAL).exists() and (repo / CODEX).exists()
    stopped = run_cli_in(repo, "task", "stop", "--json", env=human_env())
    assert json.loads(stopped.out)["host_sandbox_restored"] == ["claude", "codex"]
    assert not (repo / CODEX).exists()


def test_a_start_refused_before_writing_writes_nothing(repo: Path) -> None:
    assert _start(repo, "--sandbox", "none").code == 0
    again = _start(repo, "--sandbox", "claude")
    assert again.code == 1 and "TASK_ALREADY_ACTIVE" in again.err + again.out
    assert not (repo / LOCAL).exists()


def test_a_start_that_fails_after_writing_takes_the_sandbox_back_out(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.execution import session as sessions

    (repo / ".claude").mkdir()
    (repo / LOCAL).write_text('{"model": "opus"}\n')
    monkeypatch.setattr(sessions, "MAX_BASELINE_FILES", 0)  # the baseline, taken after
    result = _start(repo, "--sandbox", "claude")
    assert result.code == 1 and "TASK_BASELINE_TOO_LARGE" in result.err + result.out
    assert (repo / LOCAL).read_text() == '{"model": "opus"}\n'
    assert not (repo / ".plangate" / "session" / "host-sandbox.json").exists()


def test_stop_refuses_a_state_file_the_ledger_did_not_record(repo: Path) -> None:
    assert _start(repo, "--sandbox", "claude").code == 0
    state = repo / ".plangate" / "session" / "host-sandbox.json"
    state.write_text(state.read_text().replace('"task_id"', '"task_id" ', 1))
    result = _stop(repo)
    assert result.code == 1 and "TASK_SANDBOX_STATE_CHANGED" in result.err + result.out
    assert (repo / LOCAL).exists()
    assert "active" in run_cli_in(repo, "task", "show", env=human_env()).out
    # The hint's way out: the person restores the settings and removes the state file.
    state.unlink()
    stopped = _stop(repo)
    assert stopped.code == 0, stopped.err
    assert "left as they are" in stopped.out and (repo / LOCAL).exists()


def test_a_session_that_expired_without_stop_is_restored_by_the_next_start(repo: Path) -> None:
    from datetime import timedelta

    from plangate.clock import utc_now
    from plangate.execution import session as sessions
    from plangate.hooks.host_sandbox import HostSandbox

    (repo / ".claude").mkdir()
    (repo / LOCAL).write_text('{"model": "opus"}\n')
    hosts = HostSandbox(repo, human_env(), ("claude",))
    sessions.start(
        repo, human_env(), "TASK-0001", hours=1, now=utc_now() - timedelta(hours=2),
        host_sandbox=hosts,
    )
    assert "sandbox" in _local(repo)
    # The next start takes the old settings back out before it writes its own.
    assert _start(repo, "--sandbox", "none").code == 0
    assert (repo / LOCAL).read_text() == '{"model": "opus"}\n'
    assert not (repo / ".plangate" / "session" / "host-sandbox.json").exists()
    assert _stop(repo).code == 0
    assert (repo / LOCAL).read_text() == '{"model": "opus"}\n'


def test_auto_skips_a_host_whose_file_git_would_carry_and_says_so(repo: Path) -> None:
    from plangate.hooks.install import apply

    apply(repo, ["claude", "codex"], install=True)
    (repo / ".git" / "info" / "exclude").write_text(f"/{LOCAL}\n")  # Codex's file not ignored
    started = _start(repo)
    assert started.code == 0, started.err + started.out
    assert "host sandbox skipped for codex" in started.out
    assert "TASK_SANDBOX_NOT_IGNORED" in started.out
    assert (repo / LOCAL).exists() and not (repo / CODEX).exists()
    named = run_cli_in(repo, "task", "stop", env=human_env())
    assert named.code == 0
    explicit = _start(repo, "--sandbox", "codex")  # a host named explicitly is refused
    assert explicit.code == 1 and "TASK_SANDBOX_NOT_IGNORED" in explicit.err + explicit.out
