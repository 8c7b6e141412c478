"""The exec box's policy (pure part of the workspace module): private home, proxy, grants."""

from __future__ import annotations

from plangate.execution.workspace import (
    ExecBoxFacts,
    LeftOut,
    exec_policy,
    left_out_of_run,
    new_run_id,
)
from plangate.isolation.config import expand_home
from plangate.isolation.policy import Hidden, Mount, ProxyAccess, check_policy

PROXY = ProxyAccess("/tmp/plangate-egress-x/proxy.sock", 3128, "/usr/bin/python3")


def _facts(**changes: object) -> ExecBoxFacts:
    base = ExecBoxFacts(
        root="/home/u/repo",
        cwd="/home/u/repo/src",
        workspace="/home/u/repo/.plangate/runs/r/ws",
        home="/home/u",
        box_home="/home/u/repo/.plangate/runs/r/home",
        system=(Mount.same("/usr"), Mount.same("/home/u/.cargo")),
        read_only=("docs/working/TASK-0001", ".plangate"),
        hidden=(Hidden("/home/u/.ssh", "dir"), Hidden("/srv/other/.git", "dir")),
        env={
            "PATH": "/usr/bin",
            "SSH_AUTH_SOCK": "/run/a",
            "ANTHROPIC_API_KEY": "k",
            "XDG_CONFIG_HOME": "/home/u/.config",
            "HOME": "/home/u",
        },
        env_names=("ANTHROPIC_API_KEY",),
        task_id="TASK-0001",
        remaps=True,
        proxy=PROXY,
    )
    return base._replace(**changes)


def test_remapping_backend_shows_a_private_home_at_the_home_path_and_the_workspace() -> None:
    policy = exec_policy(_facts())
    assert policy.writable[0] == Mount("/home/u/repo/.plangate/runs/r/home", "/home/u")
    assert policy.writable[1] == Mount("/home/u/repo/.plangate/runs/r/ws", "/home/u/repo")
    assert Mount.same("/home/u") not in policy.visible
    assert policy.cwd == "/home/u/repo/src"
    assert Mount("/home/u/repo/.plangate/runs/r/ws/.plangate", "/home/u/repo/.plangate") in (
        policy.read_only
    )
    # Nothing of the host's home is there: its secrets need no mask; others still do.
    assert Hidden("/home/u/.ssh", "dir") not in policy.hidden
    assert Hidden("/srv/other/.git", "dir") in policy.hidden
    assert check_policy(policy) == ()


def test_without_remapping_home_names_the_private_directory_and_the_repository_is_hidden() -> None:
    policy = exec_policy(_facts(remaps=False, workspace="/tmp/ws", cwd="/home/u/repo"))
    assert policy.writable[1] == Mount.same("/tmp/ws")
    assert policy.cwd == "/tmp/ws"
    assert Hidden("/home/u/repo", "dir") in policy.hidden
    assert policy.env_map["HOME"] == "/home/u/repo/.plangate/runs/r/home"


def test_environment_is_the_allowlist_plus_named_the_task_and_the_proxy() -> None:
    env = exec_policy(_facts()).env_map
    assert env == {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": "k",
        "PLANGATE_TASK": "TASK-0001",
        "HOME": "/home/u",
        "HTTP_PROXY": "http://127.0.0.1:3128",
        "HTTPS_PROXY": "http://127.0.0.1:3128",
        "http_proxy": "http://127.0.0.1:3128",
        "https_proxy": "http://127.0.0.1:3128",
    }


def test_no_proxy_no_network_and_no_proxy_variables() -> None:
    policy = exec_policy(_facts(proxy=None))
    assert policy.network is False
    assert policy.proxy is None
    assert not any("PROXY" in k.upper() for k in policy.env_map)
    assert exec_policy(_facts()).network is True


def test_read_only_grants_inside_the_home_stay_visible() -> None:
    assert Mount.same("/home/u/.cargo") in exec_policy(_facts()).visible


def test_expand_home_and_run_ids() -> None:
    assert expand_home("~/.claude", "/home/u") == "/home/u/.claude"
    assert expand_home("/etc/./x", "/home/u") == "/etc/x"
    one, two = new_run_id("TASK-0001", "2026-01-02T03:04:05Z"), new_run_id("TASK-0001", "x")
    assert one.startswith("TASK-0001-20260102T030405Z-")
    assert one != two


def test_the_box_directory_is_writable_at_its_fixed_path_with_run_json_read_only() -> None:
    box = "/home/u/repo/.plangate/runs/r/box"
    policy = exec_policy(_facts(run_id="TASK-0001-20261203T093100Z-4bf50be3", box_dir=box))
    assert Mount(box, "/run/plangate-box") in policy.writable
    assert Mount(f"{box}/run.json", "/run/plangate-box/run.json") in policy.read_only
    env = policy.env_map
    assert env["PLANGATE_BOX"] == "TASK-0001-20261203T093100Z-4bf50be3"
    assert env["PLANGATE_BOX_LEDGER"] == "/run/plangate-box/ledger.sqlite3"
    assert check_policy(policy) == ()


def test_without_remapping_the_box_directory_is_not_shown_but_the_run_is_named() -> None:
    policy = exec_policy(
        _facts(remaps=False, workspace="/tmp/ws", run_id="TASK-0001-20261203T093100Z-4bf50be3",
               box_dir="/tmp/box")
    )
    assert all(m.target != "/run/plangate-box" for m in policy.writable)
    assert "PLANGATE_BOX_LEDGER" not in policy.env_map
    assert policy.env_map["PLANGATE_BOX"] == "TASK-0001-20261203T093100Z-4bf50be3"


def test_left_out_lists_the_callers_work_but_not_plangates_own() -> None:
    status = (b" M src/a.py\x00?? notes.txt\x00D  gone.py\x00MM both.py\x00"
              b"?? docs/working/TASK-0001/approvals/c3.json\x00?? .plangate/.gitignore\x00"
              b"?? docs/working/TASK-0002/plan.md\x00")
    got = left_out_of_run(status, own=("docs/working/TASK-0001", ".plangate"))
    assert got == [
        LeftOut("both.py", "modified"),
        LeftOut("docs/working/TASK-0002/plan.md", "untracked"),
        LeftOut("gone.py", "modified"),
        LeftOut("notes.txt", "untracked"),
        LeftOut("src/a.py", "modified"),
    ]
    assert left_out_of_run(b"") == []
