"""The Seatbelt profile generated for macOS (pure): deny by default, paths as parameters."""

from __future__ import annotations

import pytest

from plangate.errors import EnvironmentFailure
from plangate.isolation.policy import Hidden, Limits, Mount, ProxyAccess, SandboxPolicy
from plangate.isolation.seatbelt import SANDBOX_EXEC, seatbelt_argv, seatbelt_profile


def _policy(**changes: object) -> SandboxPolicy:
    base = SandboxPolicy(
        visible=(Mount.same("/usr"), Mount.same('/Users/u/odd "name")) (allow default)')),
        writable=(Mount.same("/Users/u/ws"),),
        read_only=(Mount.same("/Users/u/ws/.plangate"),),
        hidden=(
            Hidden("/Users/u/.ssh", "dir"),
            Hidden("/Users/u/key", "file"),
            Hidden("/Users/u/gone", "missing"),
        ),
        network=False,
        limits=Limits(),
        env=(),
        cwd="/Users/u/ws",
    )
    return base._replace(**changes)


def test_profile_denies_by_default_and_lists_rules_in_order() -> None:
    profile, params = seatbelt_profile(_policy())
    lines = profile.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    rules = [line for line in lines if "(param " in line]
    assert rules == [
        '(allow file-read* (subpath (param "V0")))',
        '(allow file-read* (subpath (param "V1")))',
        '(allow file-read* file-write* (subpath (param "W0")))',
        '(deny file-write* (subpath (param "R0")))',
        '(deny file-read* file-write* (subpath (param "H0")))',
        '(deny file-read* file-write* (literal (param "H1")))',
    ]
    assert dict(params) == {
        "V0": "/usr",
        "V1": '/Users/u/odd "name")) (allow default)',
        "W0": "/Users/u/ws",
        "R0": "/Users/u/ws/.plangate",
        "H0": "/Users/u/.ssh",
        "H1": "/Users/u/key",
    }


def test_no_path_ever_appears_in_the_profile_text() -> None:
    profile, params = seatbelt_profile(_policy())
    for _, path in params:
        assert path not in profile
    assert "(allow default)" not in profile


def test_network_rule_follows_the_policy() -> None:
    off, _ = seatbelt_profile(_policy(network=False))
    on, _ = seatbelt_profile(_policy(network=True, proxy=ProxyAccess("", 40123)))
    assert off.splitlines()[-1] == "(deny network*)"
    assert on.splitlines()[-2:] == [
        "(deny network*)",
        '(allow network-outbound (remote ip "localhost:40123"))',
    ]
    assert "(allow network" not in off
    assert "(allow network*)" not in on


def test_hidden_rules_come_after_every_allow() -> None:
    lines = seatbelt_profile(_policy())[0].splitlines()
    last_allow = max(i for i, line in enumerate(lines) if '(param "W' in line or '"V' in line)
    first_hidden = min(i for i, line in enumerate(lines) if '"H' in line)
    assert last_allow < first_hidden


def test_a_remapped_mount_is_refused() -> None:
    with pytest.raises(EnvironmentFailure) as info:
        seatbelt_profile(_policy(writable=(Mount("/Users/u/ws", "/Users/u/repo"),)))
    assert info.value.code == "ISOLATION_POLICY_INVALID"


def test_argv_passes_parameters_then_the_command() -> None:
    argv = seatbelt_argv(_policy(), ["/bin/echo", "-D", "x"])
    assert argv[0] == SANDBOX_EXEC
    assert argv[1] == "-p"
    assert argv[-3:] == ["/bin/echo", "-D", "x"]
    assert "-D" in argv[3:-3]
    assert "W0=/Users/u/ws" in argv
