"""``.plangate/isolation.toml``: every table written out, every rule at its edges.

The tables are written out here (not read from the module): a row dropped from a table,
or a constant changed, must turn a test red. The committed file is read from a real
git repository at the approved commit.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.isolation import config as cfg
from plangate.isolation.config import (
    AgentProfile,
    EgressRule,
    IsolationConfig,
    check_grants,
    expand_home,
    grant_problem,
    home_relative,
    parse_egress,
    parse_isolation_config,
    read_isolation_config,
)
from support.repo import commit_all, git

PROFILES = {
    "claude": AgentProfile(
        copy=(
            "~/.claude.json",
            "~/.claude/.credentials.json",
            "~/.claude/settings.json",
            "~/.claude/CLAUDE.md",
            "~/.claude/agents",
            "~/.claude/commands",
            "~/.claude/skills",
        ),
        env=(
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_MODEL",
            "ANTHROPIC_SMALL_FAST_MODEL",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_TELEMETRY",
            "DISABLE_ERROR_REPORTING",
            "DISABLE_AUTOUPDATER",
            "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
        ),
        egress=("api.anthropic.com:443", "statsig.anthropic.com:443", "claude.ai:443"),
        base_url_env=("ANTHROPIC_BASE_URL",),
        read_only=("~/.cache/plangate/hosts", "~/.local/share/claude", "~/.local/bin/claude"),
    ),
    "codex": AgentProfile(
        copy=("~/.codex/auth.json", "~/.codex/config.toml", "~/.codex/AGENTS.md"),
        env=("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"),
        egress=("api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"),
        base_url_env=("OPENAI_BASE_URL",),
        read_only=("~/.cache/plangate/hosts",),
    ),
}

SECRETS = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube",
    "~/.docker",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/gcloud",
    "~/.config/git",
    "~/.git-credentials",
    "~/.gitconfig",
    "~/.netrc",
    "~/.pgpass",
    "~/.npmrc",
    "~/.pypirc",
    "~/.vault-token",
    "~/.terraform.d",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/Library/Keychains",
    "~/.cache/plangate/hookd",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.python_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.node_repl_history",
    "~/.lesshst",
    "~/.viminfo",
)


def _failure(text: str) -> EnvironmentFailure:
    with pytest.raises(EnvironmentFailure) as info:
        parse_isolation_config(text.encode())
    return info.value


# -- the tables ---------------------------------------------------------------------------


def test_the_agent_profiles_are_exactly_these() -> None:
    assert cfg.AGENT_PROFILES == PROFILES
    assert cfg.DEFAULT_AGENTS == ("claude", "codex")


@pytest.mark.parametrize("name", list(PROFILES))
def test_each_agent_gets_its_own_profile_and_nothing_of_the_other(name: str) -> None:
    config = parse_isolation_config(f'agents = ["{name}"]\n'.encode())
    profile = PROFILES[name]
    assert config.copied() == profile.copy
    assert config.env_names() == profile.env
    assert config.shown_read_only() == profile.read_only
    assert config.egress_rules({}) == tuple(parse_egress(e) for e in profile.egress)


def test_the_secret_paths_are_exactly_these() -> None:
    assert cfg.SECRET_PATHS == SECRETS


@pytest.mark.parametrize("secret", SECRETS)
def test_each_secret_path_is_refused_as_itself_inside_and_above(secret: str) -> None:
    assert "is or lies inside" in grant_problem(secret)
    assert "is or lies inside" in grant_problem(secret + "/x")
    parent = secret.rsplit("/", 1)[0]
    if parent != "~":
        assert grant_problem(parent).startswith("contains ~/")  # the first secret it holds


@pytest.mark.parametrize(
    "neighbour", ["~/.sshx", "~/.aws-tools", "~/.config/ghost", "~/.netrc.d2/x", "~/.kubex"]
)
def test_a_name_that_only_begins_like_a_secret_is_not_one(neighbour: str) -> None:
    assert grant_problem(neighbour) == ""


@pytest.mark.parametrize(
    "name",
    [
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ed25519_sk", "id_rsa.pub",
        "ID_RSA", "x.pem", "x.key", "x.p12", "x.pfx", "x.kdbx", "x.keystore", "x.jks",
        "X.PEM", ".env", ".env.prod", "credentials", "credentials.json", "foo_history",
        "agent.sock",
    ],
)
def test_key_credential_and_socket_names_are_refused(name: str) -> None:
    assert "names a key, credentials or socket file" in grant_problem(f"~/work/{name}")


@pytest.mark.parametrize(
    "name",
    ["id_rsa.txt", "key.txt", "envfile", "credentials.yaml", "sock", "history", "pem"],
)
def test_ordinary_names_are_not_keys(name: str) -> None:
    assert grant_problem(f"~/work/{name}") == ""


@pytest.mark.parametrize("path", ["~", "/", "/home"])
def test_the_whole_home_or_file_system_is_refused(path: str) -> None:
    assert grant_problem(path) == "is the whole home directory or file system"
    failure = _failure(f'read_only = ["{path}"]\n')
    assert failure.code == "ISOLATION_GRANT_SECRET"
    assert "whole home directory" in failure.message


def test_the_settings_file_and_its_bound() -> None:
    assert cfg.ISOLATION_CONFIG_RELPATH == ".plangate/isolation.toml"
    assert cfg.MAX_ISOLATION_CONFIG_BYTES == 65536


# -- keys, names and values -------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "new"),
    [("agent_dirs", "copy"), ("visible", "read_only"), ("env", "pass_env"),
     ("hidden", "nothing")],
)
def test_a_renamed_key_says_its_new_name(key: str, new: str) -> None:
    failure = _failure(f"{key} = []\n")
    assert failure.code == "ISOLATION_CONFIG_INVALID"
    assert f"{key} is now {new}" in failure.hint


def test_an_unknown_key_lists_the_known_ones() -> None:
    failure = _failure("colour = 1\n")
    assert failure.hint == "known keys: agents, copy, egress, network, pass_env, read_only"
    assert failure.message.startswith(".plangate/isolation.toml: unknown key(s) colour")


def test_network_is_on_unless_turned_off() -> None:
    assert parse_isolation_config(b"").network is True
    assert parse_isolation_config(b"network = false\n").network is False


@pytest.mark.parametrize("name", ["1A", "A-B", "A B", "A=B", "$A"])
def test_pass_env_takes_variable_names_only(name: str) -> None:
    assert "is not a variable name" in _failure(f'pass_env = ["{name}"]\n').message


def test_a_variable_name_may_begin_with_an_underscore() -> None:
    assert parse_isolation_config(b'pass_env = ["_A1"]\n').pass_env == ("_A1",)


@pytest.mark.parametrize("key", ["copy", "read_only"])
@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("tools", "must be absolute or start with '~/'"),
        ("./tools", "must be absolute or start with '~/'"),
        ("~tools", "must be absolute or start with '~/'"),
        ("~/a\\u0001b", "must be absolute or start with '~/'"),
        ("~/a\\u001fb", "must be absolute or start with '~/'"),
        ("~/a/../b", "may not hold '..' or '*'"),
        ("~/a/*", "may not hold '..' or '*'"),
    ],
)
def test_a_grant_must_be_a_plain_home_or_absolute_path(key: str, path: str, problem: str) -> None:
    if key == "copy" and not path.startswith("~/"):
        problem = "must start with '~/'"
    failure = _failure(f'{key} = ["{path}"]\n')
    assert failure.code == "ISOLATION_CONFIG_INVALID"
    assert problem in failure.message
    assert failure.message.startswith(f".plangate/isolation.toml: {key}: ")


def test_a_grant_may_hold_spaces_and_is_cleaned() -> None:
    config = parse_isolation_config(b'read_only = ["~/my tools/", "/opt//x/."]\n')
    assert config.read_only == ("~/my tools", "/opt/x")
    assert parse_isolation_config(b'copy = ["~/a/./b"]\n').copy == ("~/a/b",)


@pytest.mark.parametrize("key", ["copy", "read_only"])
def test_a_refused_grant_names_its_key_and_the_way_credentials_pass(key: str) -> None:
    failure = _failure(f'{key} = ["~/.ssh"]\n')
    assert failure.code == "ISOLATION_GRANT_SECRET"
    assert failure.message == f".plangate/isolation.toml: {key}: '~/.ssh' is or lies inside ~/.ssh"
    assert failure.hint == (
        f"remove it from {key}: credentials reach the box only as variables named in "
        "pass_env, keys and sockets never"
    )


# -- egress ---------------------------------------------------------------------------------


@pytest.mark.parametrize("port", ["0", "65536", "-1", "", "x", "443x"])
def test_an_egress_port_is_1_to_65535(port: str) -> None:
    with pytest.raises(EnvironmentFailure) as info:
        parse_egress(f"example.com:{port}")
    assert "is not host:port" in info.value.message


@pytest.mark.parametrize("port", [1, 65535])
def test_the_ends_of_the_port_range_are_allowed(port: int) -> None:
    assert parse_egress(f"example.com:{port}") == EgressRule("example.com", port)


def test_a_host_without_a_port_is_refused() -> None:
    with pytest.raises(EnvironmentFailure) as info:
        parse_egress("example.com")
    assert "is not host:port" in info.value.message


@pytest.mark.parametrize(
    "host", ["-a.com", "a-.com", "a..com", "a_b.com", "[zz]", "a" * 64 + ".com", "é.com"]
)
def test_a_malformed_egress_host_is_refused(host: str) -> None:
    with pytest.raises(EnvironmentFailure) as info:
        parse_egress(f"{host}:443")
    assert "bad host" in info.value.message


def test_a_63_character_label_is_a_host() -> None:
    host = "a" * 63 + ".com"
    assert parse_egress(f"{host}:443") == EgressRule(host, 443)


def test_an_egress_rule_prints_as_host_and_port() -> None:
    assert str(EgressRule("example.com", 443)) == "example.com:443"


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("http://gw.internal", EgressRule("gw.internal", 80)),
        ("https://gw.internal", EgressRule("gw.internal", 443)),
        ("http://GW.internal:8080/v1", EgressRule("gw.internal", 8080)),
        ("http://127.0.0.1:9", EgressRule("127.0.0.1", 9)),
    ],
)
def test_a_base_url_gives_its_host_and_port(url: str, rule: EgressRule) -> None:
    config = IsolationConfig(agents=("claude",))
    assert config.egress_rules({"ANTHROPIC_BASE_URL": url}) == (rule,)


@pytest.mark.parametrize(
    "url", ["", "ftp://gw.internal", "http://", "http://gw.internal:99999", "gw.internal:80",
            "http://bad_host"],
)
def test_an_unusable_base_url_keeps_the_defaults(url: str) -> None:
    config = IsolationConfig(agents=("claude",))
    defaults = tuple(parse_egress(e) for e in PROFILES["claude"].egress)
    assert config.egress_rules({"ANTHROPIC_BASE_URL": url}) == defaults


# -- the home and the machine ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "home", "expected"),
    [
        ("/h/u/x", "/h/u", "~/x"),
        ("/h/u", "/h/u", "~"),
        ("/h/ux", "/h/u", "/h/ux"),
        ("/h/u/x", "/h/u/", "~/x"),
        ("/h/u/x", "/", "/h/u/x"),
        ("/h/u/x", "", "/h/u/x"),
    ],
)
def test_home_relative(path: str, home: str, expected: str) -> None:
    assert home_relative(path, home) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [("~", "/h/u"), ("~/a/../b", "/h/u/b"), ("/opt//x", "/opt/x")],
)
def test_expand_home(path: str, expected: str) -> None:
    assert expand_home(path, "/h/u/") == expected


def _check(config: IsolationConfig, home: Path) -> EnvironmentFailure | None:
    try:
        check_grants(config, str(home))
    except EnvironmentFailure as exc:
        return exc
    return None


def test_check_grants_judges_each_kind_of_grant_by_its_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    copied = _check(IsolationConfig(agents=(), copy=("~/.ssh",)), home)
    shown = _check(IsolationConfig(agents=(), read_only=("~/.aws",)), home)
    assert copied is not None and copied.message.startswith(
        ".plangate/isolation.toml: copy: '~/.ssh' ")
    assert shown is not None and shown.message.startswith(
        ".plangate/isolation.toml: read_only: '~/.aws' ")
    assert _check(IsolationConfig(agents=(), read_only=("~/.cargo",)), home) is None


def test_a_secret_as_written_is_refused_wherever_it_leads(tmp_path: Path) -> None:
    home = tmp_path / "home"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "keys").mkdir(parents=True)
    (elsewhere / "settings.env").write_text("A=1\n")
    (home / "work").mkdir(parents=True, exist_ok=True)
    (home / ".ssh").symlink_to(elsewhere / "keys")
    (home / "work" / ".env").symlink_to(elsewhere / "settings.env")
    for grant in ("~/.ssh", "~/work/.env"):
        failure = _check(IsolationConfig(agents=(), read_only=(grant,)), home)
        assert failure is not None and failure.code == "ISOLATION_GRANT_SECRET", grant
        assert "leads to" not in failure.message


def test_a_link_is_named_with_what_it_leads_to(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / "tools").symlink_to(home / ".ssh")
    failure = _check(IsolationConfig(agents=(), read_only=("~/tools",)), home)
    assert failure is not None
    assert "'~/tools' leads to ~/.ssh, which is or lies inside ~/.ssh" in failure.message


def test_a_home_reached_through_a_link_is_judged_at_its_real_place(tmp_path: Path) -> None:
    real_home = tmp_path / "real-home"
    (real_home / ".ssh").mkdir(parents=True)
    (real_home / "tools").symlink_to(real_home / ".ssh")
    home = tmp_path / "home-link"
    home.symlink_to(real_home)
    failure = _check(IsolationConfig(agents=(), read_only=("~/tools",)), home)
    assert failure is not None and failure.code == "ISOLATION_GRANT_SECRET"
    above = _check(IsolationConfig(agents=(), read_only=(str(tmp_path),)), home)
    assert above is not None and "holds the home directory" in above.message


def test_a_socket_is_refused_and_a_missing_path_is_not(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "run").mkdir(parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(home / "run" / "agent"))
    try:
        failure = _check(IsolationConfig(agents=(), read_only=("~/run/agent",)), home)
    finally:
        listener.close()
    assert failure is not None and failure.message.endswith("'~/run/agent' is a socket")
    assert _check(IsolationConfig(agents=(), read_only=("~/not-there",)), home) is None


def test_with_no_home_only_the_paths_themselves_are_judged(tmp_path: Path) -> None:
    assert _check(IsolationConfig(agents=(), read_only=(str(tmp_path),)), Path("")) is None


# -- the committed file ---------------------------------------------------------------------


def _commit(repo: Path, data: bytes | None) -> str:
    settings = repo / ".plangate" / "isolation.toml"
    if data is not None:
        settings.parent.mkdir(exist_ok=True)
        settings.write_bytes(data)
    (repo / "change.txt").write_text(os.urandom(4).hex())
    commit_all(repo, "settings")
    return git(repo, "rev-parse", "HEAD").strip()


def test_the_file_is_read_at_the_approved_commit(git_repo: Path) -> None:
    approved = _commit(git_repo, b'agents = ["codex"]\nnetwork = false\n')
    (git_repo / ".plangate" / "isolation.toml").write_text('agents = ["claude"]\n')
    _commit(git_repo, None)
    assert read_isolation_config(git_repo, approved) == IsolationConfig(
        agents=("codex",), network=False)


def test_without_the_file_the_defaults_hold(git_repo: Path) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate" / "isolation.toml.bak").write_text('agents = ["codex"]\n')
    approved = _commit(git_repo, None)
    assert read_isolation_config(git_repo, approved) == IsolationConfig()


def test_a_bad_committed_file_is_refused(git_repo: Path) -> None:
    approved = _commit(git_repo, b"agents = [\n")
    with pytest.raises(EnvironmentFailure) as info:
        read_isolation_config(git_repo, approved)
    assert info.value.code == "ISOLATION_CONFIG_INVALID"


def test_a_file_past_the_bound_is_refused(git_repo: Path) -> None:
    fits = b"# " + b"x" * (65536 - 4) + b"\n\n"
    assert len(fits) == 65536
    assert read_isolation_config(git_repo, _commit(git_repo, fits)) == IsolationConfig()
    too_big = fits + b"\n"
    with pytest.raises(EnvironmentFailure) as info:
        read_isolation_config(git_repo, _commit(git_repo, too_big))
    assert info.value.code == "ISOLATION_CONFIG_INVALID"
