"""``.plangate/isolation.toml`` (pure): strict keys, defaults, grants that name secrets, egress."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.isolation.config import (
    AGENT_PROFILES,
    DEFAULT_AGENTS,
    EgressRule,
    IsolationConfig,
    check_grants,
    grant_problem,
    home_relative,
    parse_egress,
    parse_isolation_config,
)


def _code(text: bytes) -> str:
    with pytest.raises(EnvironmentFailure) as info:
        parse_isolation_config(text)
    return info.value.code


def test_an_absent_file_gives_the_documented_defaults() -> None:
    config = parse_isolation_config(None)
    assert config == IsolationConfig()
    assert config.agents == DEFAULT_AGENTS == ("claude", "codex")
    assert "~/.claude/settings.json" in config.copied()
    assert "~/.claude.json" in config.copied()
    assert "~/.codex/config.toml" in config.copied()
    assert not any(p.endswith(("/projects", "/sessions")) for p in config.copied())
    assert config.read_only == ()
    assert config.network is True
    assert "ANTHROPIC_API_KEY" in config.env_names()
    assert "OPENAI_API_KEY" in config.env_names()
    rules = config.egress_rules({})
    assert EgressRule("api.anthropic.com", 443) in rules
    assert EgressRule("api.openai.com", 443) in rules
    assert all(r.port == 443 for r in rules)


def test_values_are_read() -> None:
    config = parse_isolation_config(
        b'agents = ["claude"]\ncopy = ["~/.config/tool"]\nread_only = ["~/.cargo", "/srv/t"]\n'
        b'pass_env = ["GITHUB_TOKEN"]\nnetwork = false\negress = ["pypi.org:443"]\n'
    )
    assert config.copied()[0] == "~/.claude.json"
    assert config.copied()[-1] == "~/.config/tool"
    assert not any(p.startswith("~/.codex") for p in config.copied())
    assert config.read_only == ("~/.cargo", "/srv/t")
    assert config.env_names()[-1] == "GITHUB_TOKEN"
    assert config.network is False
    assert config.egress_rules({})[-1] == EgressRule("pypi.org", 443)
    assert EgressRule("api.openai.com", 443) not in config.egress_rules({})


def test_claude_code_keeps_the_users_opt_outs_of_traffic_besides_the_model() -> None:
    """Without them Claude Code in the box calls api.anthropic.com (an allowed endpoint)
    although the host's environment told it not to."""
    switches = ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY",
                "DISABLE_ERROR_REPORTING", "DISABLE_AUTOUPDATER")
    claude = parse_isolation_config(b'agents = ["claude"]\n').env_names()
    codex = parse_isolation_config(b'agents = ["codex"]\n').env_names()
    assert all(name in claude for name in switches), claude
    assert not any(name in codex for name in switches), codex


def test_no_agent_grants_nothing() -> None:
    config = parse_isolation_config(b"agents = []\n")
    assert config.copied() == ()
    assert config.env_names() == ()
    assert config.egress_rules({}) == ()


def test_an_agents_base_url_replaces_its_default_endpoints() -> None:
    """Told to use another endpoint, the agent gets that endpoint and not its vendor's hosts;
    the other agents keep theirs, and ``egress`` still adds what it names."""
    config = parse_isolation_config(b'agents = ["claude", "codex"]\negress = ["claude.ai:443"]\n')
    rules = config.egress_rules({"ANTHROPIC_BASE_URL": "http://gateway.internal:8080/v1"})
    assert rules == (
        EgressRule("gateway.internal", 8080),
        EgressRule("api.openai.com", 443),
        EgressRule("chatgpt.com", 443),
        EgressRule("auth.openai.com", 443),
        EgressRule("claude.ai", 443),
    )
    assert EgressRule("api.anthropic.com", 443) not in rules
    assert EgressRule("statsig.anthropic.com", 443) not in rules
    openai = config.egress_rules({"OPENAI_BASE_URL": "https://llm.example.com/v1"})
    assert EgressRule("llm.example.com", 443) in openai
    assert EgressRule("api.openai.com", 443) not in openai
    assert EgressRule("api.anthropic.com", 443) in openai


@pytest.mark.parametrize("value", ["", "file:///etc/passwd", "not a url", "http://", "http://h:0x/"])
def test_an_unusable_base_url_leaves_the_default_endpoints(value: str) -> None:
    config = parse_isolation_config(b'agents = ["claude"]\n')
    assert config.egress_rules({"ANTHROPIC_BASE_URL": value}) == config.egress_rules({})
    assert EgressRule("api.anthropic.com", 443) in config.egress_rules({})


@pytest.mark.parametrize(
    "text",
    [
        b"nope = 1\n",
        b"network = 'yes'\n",
        b"copy = 'x'\n",
        b'copy = ["rel/x"]\n',
        b'copy = ["/etc/x"]\n',
        b'read_only = ["~/../etc"]\n',
        b'read_only = ["~/a/*"]\n',
        b'copy = [""]\n',
        b"\xff\xfe",
        b"copy = [\n",
        b"pass_env = [1]\n",
        b'pass_env = ["A=B"]\n',
        b'agents = ["cursor-secret"]\n',
        b'egress = ["example.com"]\n',
        b'egress = ["example.com:0"]\n',
        b'egress = ["exa mple.com:443"]\n',
        b'agent_dirs = ["~/.claude"]\n',
        b'visible = ["/srv"]\n',
        b'env = ["X"]\n',
        b'hidden = ["~/.x"]\n',
    ],
)
def test_bad_files_are_refused(text: bytes) -> None:
    assert _code(text) == "ISOLATION_CONFIG_INVALID"


def test_an_old_key_names_its_replacement() -> None:
    with pytest.raises(EnvironmentFailure) as info:
        parse_isolation_config(b'visible = ["/srv"]\n')
    assert "read_only" in info.value.hint


@pytest.mark.parametrize(
    "path",
    [
        "~/.ssh",
        "~/.ssh/id_ed25519",
        "~/.config",
        "~",
        "/",
        "~/.config/gh/hosts.yml",
        "~/.kube",
        "~/.npmrc",
        "~/.pypirc",
        "~/.bash_history",
        "~/.mozilla",
        "~/.config/gcloud",
        "~/.cache",
        "~/.cache/plangate/hookd",
        "~/.cache/plangate",
        "~/work/deploy.pem",
        "~/work/id_rsa",
        "~/proj/.env",
        "~/proj/.env.local",
        "~/x/credentials.json",
        "~/run/agent.sock",
    ],
)
@pytest.mark.parametrize("key", ["copy", "read_only"])
def test_a_grant_of_a_secret_is_refused(path: str, key: str) -> None:
    assert _code(f'{key} = ["{path}"]\n'.encode()) == "ISOLATION_GRANT_SECRET"


@pytest.mark.parametrize(
    "path", ["~/.cargo", "~/.rustup", "~/.local/share/uv", "/opt/tools", "~/.cache/plangate/hosts"]
)
def test_ordinary_toolchains_may_be_granted(path: str) -> None:
    assert grant_problem(path) == ""


def test_an_absolute_grant_inside_the_home_is_judged_as_the_home_path(tmp_path) -> None:
    home = str(tmp_path)
    assert home_relative(f"{home}/.ssh", home) == "~/.ssh"
    config = parse_isolation_config(f'read_only = ["{home}/.ssh"]\n'.encode())
    with pytest.raises(EnvironmentFailure) as info:
        check_grants(config, home)
    assert info.value.code == "ISOLATION_GRANT_SECRET"
    check_grants(parse_isolation_config(f'read_only = ["{home}/.cargo"]\n'.encode()), home)


@pytest.mark.parametrize(
    "entry", ["*", "*:443", "example.com:*", "*.com:443", "a*.example.com:443", "*.*:443"]
)
def test_wildcard_egress_is_refused(entry: str) -> None:
    assert _code(f'egress = ["{entry}"]\n'.encode()) == "ISOLATION_EGRESS_WILDCARD"


def test_egress_entries() -> None:
    assert parse_egress("Example.COM:443") == EgressRule("example.com", 443)
    assert parse_egress("*.example.com:443") == EgressRule("*.example.com", 443)
    assert parse_egress("127.0.0.1:8080") == EgressRule("127.0.0.1", 8080)
    assert parse_egress("[::1]:80") == EgressRule("[::1]", 80)


def test_every_agent_profile_grants_no_secret() -> None:
    for profile in AGENT_PROFILES.values():
        for path in profile.copy:
            assert grant_problem(path) == "", path


def test_the_agents_programs_are_shown_read_only_by_default() -> None:
    shown = parse_isolation_config(None).shown_read_only()
    assert "~/.cache/plangate/hosts" in shown
    assert "~/.local/share/claude" in shown
    assert parse_isolation_config(b"agents = []\n").shown_read_only() == ()


def _grant_code(toml: str, home: Path) -> str | None:
    try:
        check_grants(parse_isolation_config(toml.encode()), str(home))
    except EnvironmentFailure as exc:
        return exc.code
    return None


@pytest.mark.parametrize("key", ["copy", "read_only"])
@pytest.mark.parametrize(
    ("grant", "link", "target"),
    [
        ("~/tools", "tools", ".ssh"),
        ("~/tools", "tools", ""),  # the whole home
        ("~/lib/keys", "lib", ".aws"),  # a link on the way
        ("~/deploy", "deploy", "work/deploy.pem"),  # a key file by its resolved name
        ("~/c", "c", ".config"),  # a directory holding secrets
    ],
)
def test_a_grant_is_judged_as_the_path_it_resolves_to(
    tmp_path: Path, key: str, grant: str, link: str, target: str
) -> None:
    home = tmp_path / "home"
    for made in (".ssh", ".aws/keys", ".config/gh", "work"):
        (home / made).mkdir(parents=True, exist_ok=True)
    (home / "work" / "deploy.pem").write_text("k")
    (home / link).symlink_to(home / target if target else home)
    assert _grant_code(f'{key} = ["{grant}"]\n', home) == "ISOLATION_GRANT_SECRET"


def test_a_link_to_an_ordinary_directory_may_be_granted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tools = tmp_path / "opt" / "tools"
    tools.mkdir(parents=True)
    home.mkdir(exist_ok=True)
    (home / "tools").symlink_to(tools)
    assert _grant_code('read_only = ["~/tools"]\n', home) is None


def test_a_grant_holding_the_home_directory_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "users" / "bob"
    home.mkdir(parents=True)
    assert _grant_code(f'read_only = ["{tmp_path / "users"}"]\n', home) == (
        "ISOLATION_GRANT_SECRET"
    )
    (tmp_path / "alias").symlink_to(tmp_path / "users")
    assert _grant_code(f'read_only = ["{tmp_path / "alias"}"]\n', home) == (
        "ISOLATION_GRANT_SECRET"
    )
    assert _grant_code(f'read_only = ["{tmp_path / "elsewhere"}"]\n', home) is None
