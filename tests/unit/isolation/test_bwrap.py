"""The bubblewrap argument list (pure): namespaces, mount order, hidden paths, network."""

from __future__ import annotations

from plangate.isolation.bwrap import NAMESPACE_ARGS, bwrap_argv
from plangate.isolation.policy import Hidden, Limits, Mount, ProxyAccess, SandboxPolicy
from plangate.isolation.proxy import BOX_PROXY_PORT, BOX_PROXY_SOCKET


def _policy(**changes: object) -> SandboxPolicy:
    base = SandboxPolicy(
        visible=(Mount.same("/usr"), Mount.same("/home/u")),
        writable=(Mount("/runs/1/ws", "/home/u/repo"),),
        read_only=(Mount("/runs/1/ws/.plangate", "/home/u/repo/.plangate"),),
        hidden=(
            Hidden("/home/u/.ssh", "dir"),
            Hidden("/home/u/key", "file"),
            Hidden("/home/u/gone", "missing"),
            Hidden("/var/secret", "dir"),
        ),
        network=False,
        limits=Limits(),
        env=(("SECRET_TOKEN", "do-not-leak"),),
        cwd="/home/u/repo/src",
    )
    return base._replace(**changes)


def _pairs(argv: list[str], option: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == option]


def test_every_box_drops_privileges_and_dies_with_plangate() -> None:
    argv = bwrap_argv("/usr/bin/bwrap", _policy(), ["cmd"])
    assert argv[0] == "/usr/bin/bwrap"
    for option in (
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-pid",
        "--disable-userns",
    ):
        assert option in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert tuple(argv[1 : 1 + len(NAMESPACE_ARGS)]) == NAMESPACE_ARGS


def test_every_box_has_its_own_network_namespace_with_or_without_network() -> None:
    proxy = ProxyAccess("/runs/1/proxy/proxy.sock", BOX_PROXY_PORT, "/usr/bin/python3")
    assert "--unshare-net" in bwrap_argv("b", _policy(network=False), ["c"])
    assert "--unshare-net" in bwrap_argv("b", _policy(network=True, proxy=proxy), ["c"])


def test_network_access_binds_only_the_proxy_socket_and_starts_the_bridge_first() -> None:
    proxy = ProxyAccess("/runs/1/proxy/proxy.sock", BOX_PROXY_PORT, "/usr/bin/python3")
    argv = bwrap_argv("b", _policy(network=True, proxy=proxy), ["/usr/bin/c", "x"])
    assert ("/runs/1/proxy/proxy.sock", BOX_PROXY_SOCKET) in _pairs(argv, "--ro-bind")
    command = argv[argv.index("--", argv.index("--chdir")) + 1 :]
    assert command[:3] == ["/usr/bin/python3", "-I", "-S"]
    assert command[-3:] == ["--", "/usr/bin/c", "x"]
    off = bwrap_argv("b", _policy(network=False), ["/usr/bin/c"])
    assert BOX_PROXY_SOCKET not in off
    assert off[off.index("--", off.index("--chdir")) + 1 :] == ["/usr/bin/c"]


def test_a_read_only_grant_inside_the_private_home_is_mounted_after_the_home() -> None:
    policy = _policy(
        visible=(Mount.same("/usr"), Mount.same("/home/u/.cargo")),
        writable=(Mount("/runs/1/home", "/home/u"), Mount("/runs/1/ws", "/home/u/repo")),
    )
    argv = bwrap_argv("b", policy, ["c"])
    assert argv.index("/runs/1/home") < argv.index("/home/u/.cargo")
    assert argv.index("/runs/1/home") < argv.index("/runs/1/ws")


def test_mount_order_visible_then_writable_then_read_only_then_hidden() -> None:
    argv = bwrap_argv("b", _policy(), ["c"])
    ro = _pairs(argv, "--ro-bind")
    assert ("/usr", "/usr") in ro
    assert ("/runs/1/ws/.plangate", "/home/u/repo/.plangate") in ro
    assert _pairs(argv, "--bind") == [("/runs/1/ws", "/home/u/repo")]
    visible_at = argv.index("/home/u")
    writable_at = argv.index("--bind")
    read_only_at = argv.index("/runs/1/ws/.plangate")
    hidden_at = argv.index("/home/u/.ssh")
    assert visible_at < writable_at < read_only_at < hidden_at


def test_hidden_directories_become_empty_read_only_and_files_unopenable() -> None:
    argv = bwrap_argv("b", _policy(), ["c"])
    i = argv.index("/home/u/.ssh")
    assert argv[i - 1] == "--tmpfs"
    assert argv[i + 1 : i + 3] == ["--remount-ro", "/home/u/.ssh"]
    assert ("/dev/null", "/home/u/key") in _pairs(argv, "--ro-bind")


def test_hidden_paths_no_mount_shows_or_that_do_not_exist_are_left_out() -> None:
    argv = bwrap_argv("b", _policy(), ["c"])
    assert "/var/secret" not in argv
    assert "/home/u/gone" not in argv


def test_the_environment_never_reaches_the_command_line() -> None:
    argv = bwrap_argv("b", _policy(), ["c"])
    assert not any("do-not-leak" in a or "SECRET_TOKEN" in a for a in argv)
    assert "--setenv" not in argv


def test_command_follows_the_separator_and_cwd_is_set() -> None:
    argv = bwrap_argv("b", _policy(), ["/bin/sh", "-c", "--bind / /"])
    sep = argv.index("--")
    assert argv[sep + 1 :] == ["/bin/sh", "-c", "--bind / /"]
    assert argv[argv.index("--chdir") + 1] == "/home/u/repo/src"
    assert argv.index("--chdir") < sep
