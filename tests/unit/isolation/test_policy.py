"""Sandbox policy rules (pure): each rule refuses its class of bad policy, and only that."""

from __future__ import annotations

import pytest

from plangate.isolation.policy import (
    RULES,
    Hidden,
    Limits,
    Mount,
    ProxyAccess,
    SandboxPolicy,
    allowed_env,
    check_policy,
    path_within,
)


def _policy(**changes: object) -> SandboxPolicy:
    base = SandboxPolicy(
        visible=(Mount.same("/usr"), Mount.same("/home/u")),
        writable=(Mount("/srv/runs/1/workspace", "/home/u/repo"),),
        read_only=(Mount("/srv/runs/1/workspace/.plangate", "/home/u/repo/.plangate"),),
        hidden=(Hidden("/home/u/.ssh", "dir"), Hidden("/run/user/1/ssh.sock", "file")),
        network=True,
        proxy=ProxyAccess("/srv/runs/1/proxy/proxy.sock", 3128, "/usr/bin/python3"),
        limits=Limits(cpu_seconds=10, output_bytes=100),
        env=(("HOME", "/home/u"), ("PATH", "/usr/bin")),
        cwd="/home/u/repo",
    )
    return base._replace(**changes)


def test_a_sound_policy_has_no_problem() -> None:
    assert check_policy(_policy()) == ()


@pytest.mark.parametrize(
    "bad",
    [
        "relative/path",
        "/a/../b",
        "/a/./b",
        "//a",
        "/a//b",
        "/a/",
        "/a\nb",
        "/a\x00b",
        "/a\x7fb",
        "",
    ],
)
@pytest.mark.parametrize("where", ["visible", "writable", "read_only", "hidden", "cwd"])
def test_unclean_paths_are_refused_wherever_they_appear(bad: str, where: str) -> None:
    if where == "cwd":
        policy = _policy(cwd=bad)
    elif where == "hidden":
        policy = _policy(hidden=(Hidden(bad, "dir"),))
    elif where == "read_only":
        policy = _policy(read_only=(Mount(bad, bad),))
    else:
        policy = _policy(**{where: (Mount.same(bad),)})
    codes = [r.code for r in check_policy(policy)]
    assert "ISOLATION_POLICY_INVALID" in codes


def test_a_remapped_mount_is_checked_on_both_sides() -> None:
    assert check_policy(_policy(writable=(Mount("/ok", "rel"),)))
    assert check_policy(_policy(writable=(Mount("rel", "/ok"),)))


def test_unknown_hidden_kind_is_refused() -> None:
    assert check_policy(_policy(hidden=(Hidden("/x", "fifo"),)))


@pytest.mark.parametrize("writable", ["/", "/home/u", "/home"])
def test_writable_over_a_hidden_path_or_the_root_is_refused(writable: str) -> None:
    policy = _policy(writable=(Mount.same(writable),), read_only=())
    reasons = check_policy(policy)
    assert [r.code for r in reasons] == ["ISOLATION_POLICY_INVALID"]
    assert writable in reasons[0].message


def test_writable_beside_a_hidden_path_is_fine() -> None:
    # /home/u/.sshx is not inside /home/u/.ssh: prefix matching is by segment.
    policy = _policy(writable=(Mount.same("/home/u/.sshx"),), read_only=())
    assert check_policy(policy) == ()


def test_read_only_outside_every_writable_mount_is_refused() -> None:
    policy = _policy(read_only=(Mount.same("/etc/x"),))
    assert [r.code for r in check_policy(policy)] == ["ISOLATION_POLICY_INVALID"]


@pytest.mark.parametrize("field", list(Limits._fields))
@pytest.mark.parametrize("value", [0, -1, True])
def test_limits_must_be_positive_numbers(field: str, value: object) -> None:
    policy = _policy(limits=Limits(**{field: value}))
    reasons = check_policy(policy)
    assert reasons
    assert field in reasons[0].message


@pytest.mark.parametrize("entry", [("", "x"), ("A=B", "x"), ("A\x00", "x"), ("A", "x\x00")])
def test_bad_environment_entries_are_refused(entry: tuple[str, str]) -> None:
    assert check_policy(_policy(env=(entry,)))


def test_every_failing_rule_is_listed() -> None:
    policy = _policy(cwd="rel", limits=Limits(cpu_seconds=0), env=(("=", ""),))
    assert len(check_policy(policy)) == 3
    assert len(RULES) == 7


def test_path_within_is_by_segment() -> None:
    assert path_within("/a/b", "/a")
    assert path_within("/a", "/a")
    assert path_within("/anything", "/")
    assert not path_within("/ab", "/a")
    assert not path_within("/a", "/a/b")


def test_allowed_env_keeps_only_the_allowlist() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "XDG_CONFIG_HOME": "/h/.config",
        "XDG_RUNTIME_DIR": "/run/user/0",
        "SSL_CERT_FILE": "/h/certs.pem",
        "HTTPS_PROXY": "http://corp:3128",
        "SSH_AUTH_SOCK": "/tmp/agent",
        "GIT_DIR": "/elsewhere",
        "PLANGATE_LEDGER_URL": "postgresql://x",
        "AWS_SECRET": "s",
        "ANTHROPIC_API_KEY": "k",
    }
    out = dict(allowed_env(env))
    assert out == {"PATH": "/usr/bin", "LC_ALL": "C"}
    named = dict(allowed_env(env, ("ANTHROPIC_API_KEY",), {"PLANGATE_TASK": "TASK-0001"}))
    assert named["ANTHROPIC_API_KEY"] == "k"
    assert named["PLANGATE_TASK"] == "TASK-0001"
    assert "SSH_AUTH_SOCK" not in named


def test_network_access_only_through_the_proxy() -> None:
    assert [r.code for r in check_policy(_policy(proxy=None))] == ["ISOLATION_POLICY_INVALID"]
    assert check_policy(_policy(network=False))  # a proxy without network is a mistake too
    assert check_policy(_policy(network=False, proxy=None)) == ()
    bad_port = ProxyAccess("/s", 0, "/usr/bin/python3")
    assert check_policy(_policy(proxy=bad_port))


def test_a_hidden_path_missing_on_the_host_too_is_a_known_kind() -> None:
    policy = _policy(hidden=(Hidden("/home/u/.kube", "missing"),))
    assert check_policy(policy) == ()


def test_the_environment_map_is_the_policy_environment() -> None:
    assert _policy().env_map == {"HOME": "/home/u", "PATH": "/usr/bin"}


def test_a_proxy_access_names_no_bridge_until_one_is_given() -> None:
    access = ProxyAccess("/srv/p.sock", 3128)
    assert access.python == ""


@pytest.mark.parametrize("path", ["/home/u/my repo", "/home/u/~tilde", "/home/u/\u00e9"])
def test_printable_characters_including_space_are_clean(path: str) -> None:
    assert check_policy(_policy(visible=(Mount.same(path),))) == ()


@pytest.mark.parametrize("char", ["\x1f", "\x01", "\t", "\x7f"])
def test_every_control_character_is_unclean(char: str) -> None:
    assert check_policy(_policy(visible=(Mount.same(f"/home/u/a{char}b"),)))


@pytest.mark.parametrize("side", ["source", "target"])
def test_an_unclean_mount_side_is_named(side: str) -> None:
    mount = Mount("/ok", "/bad/../x") if side == "target" else Mount("/bad/../x", "/ok")
    (reason,) = check_policy(_policy(visible=(mount,)))
    assert "'/bad/../x'" in reason.message
    assert reason.message.startswith("1 path(s)")


def test_the_message_names_the_first_four_unclean_paths() -> None:
    bad = tuple(Mount.same(f"rel{i}") for i in range(5))
    (reason,) = check_policy(_policy(visible=bad))
    assert reason.message.startswith("10 path(s)")
    # each mount is listed twice (source and target): rel0, rel0, rel1, rel1
    assert reason.message.endswith("'rel0', 'rel0', 'rel1', 'rel1'")


def test_a_writable_root_is_refused_even_with_nothing_hidden() -> None:
    policy = _policy(writable=(Mount.same("/"),), read_only=(), hidden=())
    (reason,) = check_policy(policy)
    assert "writable path / is the root" in reason.message


@pytest.mark.parametrize("field", list(Limits._fields))
def test_a_limit_of_one_is_positive(field: str) -> None:
    assert check_policy(_policy(limits=Limits(**{field: 1}))) == ()


@pytest.mark.parametrize(("port", "valid"), [(0, False), (1, True), (65535, True), (65536, False)])
def test_the_proxy_port_is_a_tcp_port(port: int, valid: bool) -> None:
    access = ProxyAccess("/srv/p.sock", port, "/usr/bin/python3")
    assert (check_policy(_policy(proxy=access)) == ()) is valid


def test_the_rules_are_named_in_their_order() -> None:
    assert [name for name, _ in RULES] == [
        "paths_clean",
        "hidden_kinds_known",
        "writable_not_over_hidden",
        "read_only_inside_writable",
        "limits_positive",
        "env_names_valid",
        "network_only_through_proxy",
    ]


ALLOWED_BY_DEFAULT = [
    "PATH", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM", "TZ",
    "EDITOR", "VISUAL", "PAGER", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES",
]  # fmt: skip


@pytest.mark.parametrize("name", ALLOWED_BY_DEFAULT)
def test_each_harmless_variable_passes_by_default(name: str) -> None:
    assert dict(allowed_env({name: "v", "SECRET_TOKEN": "s"})) == {name: "v"}
