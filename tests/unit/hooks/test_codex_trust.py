"""Codex hook trust: which hooks PlanGate trusts, how it edits Codex's config.toml, and
how it refuses a broken configuration or app-server (never a traceback, never a success).
The app-server stand-ins are real programs on PATH that answer like a broken one."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest

from plangate.errors import InputRejected
from plangate.hooks.codex_trust import (
    ListedHook,
    check_trust,
    list_hooks,
    parse_hooks_list,
    record_trust,
    select_hooks,
    trusted_toml,
)
from plangate.hooks.install import portable_command

ROOT = "/work/repo"
SOURCE = f"{ROOT}/.codex/hooks.json"
OURS = portable_command("codex")
HASH = "sha256:" + "a" * 64


def _hook(key: str = f"{SOURCE}:pre_tool_use:0:0", command: str = OURS,
          source: str = SOURCE, status: str = "untrusted") -> ListedHook:
    return ListedHook(key, command, source, HASH, status, False)


def test_only_this_clones_plangate_hooks_are_chosen() -> None:
    foreign = _hook("/home/u/.codex/hooks.json:pre_tool_use:0:0", "lint.sh", "/home/u/x")
    chosen = select_hooks([_hook(), foreign], [ROOT], [OURS])
    assert chosen == [_hook()]


@pytest.mark.parametrize(
    ("hook", "code"),
    [
        (_hook(command=OURS.replace("exit 2", "exit 0")), "CODEX_TRUST_COMMAND_CHANGED"),
        (_hook(key="/elsewhere/.codex/hooks.json:pre_tool_use:0:0"), "CODEX_TRUST_KEY_FOREIGN"),
        (_hook()._replace(current_hash="md5:x"), "CODEX_TRUST_APP_SERVER_GARBAGE"),
        (_hook()._replace(enabled=False), "CODEX_TRUST_HOOK_DISABLED"),
    ],
)
def test_a_suspicious_plangate_hook_is_refused(hook: ListedHook, code: str) -> None:
    with pytest.raises(InputRejected) as caught:
        select_hooks([hook], [ROOT], [OURS])
    assert caught.value.code == code


def test_hooks_codex_does_not_list_are_a_refusal() -> None:
    with pytest.raises(InputRejected) as caught:
        select_hooks([], [ROOT], [OURS, OURS, OURS])
    assert caught.value.code == "CODEX_TRUST_HOOKS_NOT_LISTED"
    assert "plangate hooks trust --codex" in caught.value.hint
    with pytest.raises(InputRejected) as caught:  # two of three listed: still a refusal
        select_hooks([_hook(), _hook(key=f"{SOURCE}:stop:0:0")], [ROOT], [OURS, OURS, OURS])
    assert caught.value.code == "CODEX_TRUST_HOOKS_NOT_LISTED"
    with pytest.raises(InputRejected) as caught:
        select_hooks([_hook()], [ROOT], [])
    assert caught.value.code == "CODEX_TRUST_NOTHING_INSTALLED"


def test_the_resolved_path_of_the_clone_is_the_clone_too() -> None:
    chosen = select_hooks([_hook()], ["/link/to/repo", ROOT], [OURS])
    assert chosen == [_hook()]


@pytest.mark.parametrize(
    "answer",
    [None, [], {"error": {"code": -32601}}, {"result": {}}, {"result": {"data": [{}]}},
     {"result": {"data": [{"hooks": [{"key": 1}]}]}}, "not json"],
)
def test_a_garbled_answer_is_refused(answer: object) -> None:
    with pytest.raises(InputRejected) as caught:
        parse_hooks_list(answer)
    assert caught.value.code == "CODEX_TRUST_APP_SERVER_GARBAGE"


USER_CONFIGS = [
    "",
    'model = "o4"\n# my comment\n[projects."/work/repo"]\ntrust_level = "trusted"\n',
    '[hooks]\n[hooks.state."/other/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:b"\n',
    "[features]\nhooks = true",  # no final newline
]


@pytest.mark.parametrize("text", USER_CONFIGS)
def test_trust_is_added_and_everything_else_kept(text: str) -> None:
    key = f"{SOURCE}:pre_tool_use:0:0"
    new = trusted_toml(text, {key: HASH})
    assert new.startswith(text)  # the user's bytes, unchanged
    parsed = tomllib.loads(new)
    assert parsed["hooks"]["state"][key] == {"trusted_hash": HASH}
    assert trusted_toml(new, {key: HASH}) == new  # already trusted: untouched


def test_a_stale_hash_is_replaced_in_place() -> None:
    key = f"{SOURCE}:stop:0:0"
    text = f'a = 1\n[hooks.state."{key}"]\ntrusted_hash = "sha256:old"\n[b]\nc = 2\n'
    new = trusted_toml(text, {key: HASH})
    assert new == text.replace("sha256:old", HASH)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("model = [\n", "CODEX_TRUST_CONFIG_INVALID"),
        ("hooks = 3\n", "CODEX_TRUST_CONFIG_INVALID"),
        # Inline or dotted forms are valid TOML this edit does not rewrite.
        ('hooks = {state = {}}\n', "CODEX_TRUST_CONFIG_UNEDITABLE"),
        (f'hooks.state."{SOURCE}:stop:0:0".trusted_hash = "sha256:old"\n',
         "CODEX_TRUST_CONFIG_UNEDITABLE"),
    ],
)
def test_a_config_that_cannot_be_edited_safely_is_refused(text: str, code: str) -> None:
    with pytest.raises(InputRejected) as caught:
        trusted_toml(text, {f"{SOURCE}:stop:0:0": HASH})
    assert caught.value.code == code


# -- the IO with broken app-servers (real programs) ---------------------------------------


def _fake_codex(tmp_path: Path, body: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "codex"
    program.write_text("#!/bin/sh\n" + body + "\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path / "home"),
            "CODEX_HOME": str(tmp_path / "codex")}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("exit 3", "CODEX_TRUST_APP_SERVER_FAILED"),
        ("echo 'hello, not json'; sleep 5", "CODEX_TRUST_APP_SERVER_GARBAGE"),
        ('echo \'{"id":2,"result":{"data":"x"}}\'', "CODEX_TRUST_APP_SERVER_GARBAGE"),
        ("sleep 30", "CODEX_TRUST_APP_SERVER_TIMEOUT"),
    ],
)
def test_a_broken_app_server_is_a_refusal(tmp_path: Path, body: str, code: str) -> None:
    env = _fake_codex(tmp_path, body)
    with pytest.raises(InputRejected) as caught:
        list_hooks(str(tmp_path / "bin" / "codex"), tmp_path, env, timeout=1.0)
    assert caught.value.code == code


def test_no_codex_is_a_refusal_naming_the_command(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    with pytest.raises(InputRejected) as caught:
        record_trust(tmp_path, env)
    assert caught.value.code == "CODEX_TRUST_CODEX_NOT_FOUND"
    assert "plangate hooks trust --codex" in caught.value.hint
    check = check_trust(tmp_path, env)
    assert check.code == "CODEX_TRUST_CODEX_NOT_FOUND"


def test_a_config_link_is_left_alone(tmp_path: Path) -> None:
    from support.repo import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".codex").mkdir()
    from plangate.hooks.install import apply

    apply(repo, ["codex"], install=True, env={"HOME": str(tmp_path)})
    key = f"{repo}/.codex/hooks.json:pre_tool_use:0:0"
    hooks = [
        {"key": key.replace("pre_tool_use", event), "command": OURS,
         "sourcePath": f"{repo}/.codex/hooks.json", "currentHash": HASH,
         "trustStatus": "untrusted"}
        for event in ("pre_tool_use", "post_tool_use", "stop")
    ]
    answer = json.dumps({"id": 2, "result": {"data": [{"hooks": hooks}]}})
    (tmp_path / "answer.json").write_text(answer + "\n")
    env = _fake_codex(tmp_path, f"cat {tmp_path}/answer.json; sleep 5")
    real = tmp_path / "real.toml"
    real.write_text("model = 'x'\n")
    os.makedirs(env["CODEX_HOME"])
    os.symlink(real, Path(env["CODEX_HOME"]) / "config.toml")
    with pytest.raises(InputRejected) as caught:
        record_trust(repo, env)
    assert caught.value.code == "CODEX_TRUST_CONFIG_INVALID"
    assert real.read_text() == "model = 'x'\n"


def test_every_trust_reason_code_is_documented() -> None:
    import re

    import plangate.hooks.codex_trust as module

    root = Path(__file__).resolve().parents[3]
    doc = (root / "docs" / "reason-codes.md").read_text()
    codes = set(re.findall(r'"(CODEX_[A-Z_]+)"', Path(module.__file__).read_text())) - {"CODEX_HOME"}
    assert len(codes) >= 10
    assert sorted(c for c in codes if f"`{c}`" not in doc) == []


def test_the_cli_refuses_to_report_an_untrusted_install(tmp_path: Path) -> None:
    """``hooks install --codex`` without Codex: the file is written, the exit is not 0,
    and the message names the command to run later. ``trust`` is for Codex only."""
    from support.cli import run_cli_in
    from support.repo import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = run_cli_in(repo, "hooks", "install", "--codex", env=env)
    assert result.code != 0
    assert "CODEX_TRUST_CODEX_NOT_FOUND" in result.err
    assert "plangate hooks trust --codex" in result.err
    assert (repo / ".codex" / "hooks.json").is_file()
    refused = run_cli_in(repo, "hooks", "trust", "--claude", env=env)
    assert refused.code == 2 and "HOOKS_TRUST_CODEX_ONLY" in refused.err
