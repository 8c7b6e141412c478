"""The exec box's policy and the isolation settings (pure parts of the workspace module)."""

from __future__ import annotations

import pytest

from plangate.errors import EnvironmentFailure
from plangate.execution.workspace import (
    DEFAULT_AGENT_DIRS,
    ExecBoxFacts,
    IsolationConfig,
    exec_policy,
    expand_home,
    new_run_id,
    parse_isolation_config,
)
from plangate.isolation.policy import Hidden, Mount, check_policy


def _facts(**changes: object) -> ExecBoxFacts:
    base = ExecBoxFacts(
        root="/home/u/repo",
        cwd="/home/u/repo/src",
        workspace="/home/u/repo/.plangate/runs/r/ws",
        home="/home/u",
        system=(Mount.same("/usr"),),
        read_only=("docs/working/TASK-0001", ".plangate"),
        writable_extra=("/home/u/.claude",),
        hidden=(Hidden("/home/u/.ssh", "dir"),),
        network=True,
        env={"PATH": "/usr/bin", "SSH_AUTH_SOCK": "/run/a", "ANTHROPIC_API_KEY": "k"},
        env_names=("ANTHROPIC_API_KEY",),
        task_id="TASK-0001",
        remaps=True,
    )
    return base._replace(**changes)


def test_remapping_backend_shows_the_workspace_at_the_repository_path() -> None:
    policy = exec_policy(_facts())
    assert policy.writable[0] == Mount("/home/u/repo/.plangate/runs/r/ws", "/home/u/repo")
    assert Mount.same("/home/u/.claude") in policy.writable
    assert policy.cwd == "/home/u/repo/src"
    assert Mount("/home/u/repo/.plangate/runs/r/ws/.plangate", "/home/u/repo/.plangate") in (
        policy.read_only
    )
    assert Hidden("/home/u/repo", "dir") not in policy.hidden
    assert check_policy(policy) == ()


def test_without_remapping_the_repository_is_hidden_and_the_workspace_keeps_its_path() -> None:
    policy = exec_policy(_facts(remaps=False, workspace="/tmp/ws", cwd="/home/u/repo"))
    assert policy.writable[0] == Mount.same("/tmp/ws")
    assert policy.cwd == "/tmp/ws"
    assert Hidden("/home/u/repo", "dir") in policy.hidden


def test_environment_is_the_allowlist_plus_named_and_the_task() -> None:
    env = exec_policy(_facts()).env_map
    assert env == {"PATH": "/usr/bin", "ANTHROPIC_API_KEY": "k", "PLANGATE_TASK": "TASK-0001"}


def test_network_follows_the_facts() -> None:
    assert exec_policy(_facts(network=False)).network is False


def test_home_is_visible_read_only_and_secrets_hidden() -> None:
    policy = exec_policy(_facts())
    assert Mount.same("/home/u") in policy.visible
    assert Hidden("/home/u/.ssh", "dir") in policy.hidden


def test_a_writable_agent_dir_over_a_secret_is_refused() -> None:
    policy = exec_policy(_facts(writable_extra=("/home/u",)))
    assert [r.code for r in check_policy(policy)] == ["ISOLATION_POLICY_INVALID"]


def test_config_defaults_and_values() -> None:
    assert parse_isolation_config(None) == IsolationConfig()
    config = parse_isolation_config(
        b'agent_dirs = ["~/.x"]\nhidden = ["/srv/k"]\nenv = ["TOKEN"]\nnetwork = false\n'
    )
    assert config.agent_dirs == ("~/.x",)
    assert config.hidden == ("/srv/k",)
    assert config.env == ("TOKEN",)
    assert config.network is False
    assert parse_isolation_config(b"network = true\n").agent_dirs == DEFAULT_AGENT_DIRS


@pytest.mark.parametrize(
    "text",
    [
        b"nope = 1\n",
        b"network = 'yes'\n",
        b"agent_dirs = 'x'\n",
        b'agent_dirs = ["rel/x"]\n',
        b'hidden = ["~/../etc"]\n',
        b'visible = [""]\n',
        b"\xff\xfe",
        b"agent_dirs = [\n",
        b"env = [1]\n",
    ],
)
def test_bad_config_is_refused(text: bytes) -> None:
    with pytest.raises(EnvironmentFailure) as info:
        parse_isolation_config(text)
    assert info.value.code == "ISOLATION_CONFIG_INVALID"


def test_expand_home_and_run_ids() -> None:
    assert expand_home("~/.claude", "/home/u") == "/home/u/.claude"
    assert expand_home("/etc/./x", "/home/u") == "/etc/x"
    one, two = new_run_id("TASK-0001", "2026-01-02T03:04:05Z"), new_run_id("TASK-0001", "x")
    assert one.startswith("TASK-0001-20260102T030405Z-")
    assert one != two
