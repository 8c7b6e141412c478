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
