"""When the hook may rely on the operating system's confinement (pure rules and real mounts)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plangate.hooks.confinement import SANDBOX_DENY_REQUIRED, sandbox_problem
from plangate.isolation.contract import (
    BOX_DIR,
    box_ledger_path,
    exec_box,
    read_box_facts,
    run_id_matches,
)

GOOD = {
    "sandbox": {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {"denyWrite": [*SANDBOX_DENY_REQUIRED, "CLAUDE.md"]},
    }
}


def _problem(*layers, bypass: bool = False, protected=("CLAUDE.md",)) -> str:
    return sandbox_problem(list(layers), root="/r", protected=list(protected), bypass=bypass)


def test_a_complete_sandbox_is_established() -> None:
    assert _problem(GOOD) == ""


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"enabled": False}, "enabled"),
        ({"enabled": "true"}, "enabled"),
        ({"failIfUnavailable": False}, "failIfUnavailable"),
        ({"allowUnsandboxedCommands": True}, "allowUnsandboxedCommands"),
        ({"excludedCommands": ["git"]}, "excludedCommands"),
        ({"filesystem": {"denyWrite": [".git"]}}, "denyWrite"),
        ({"filesystem": {"denyWrite": "x"}}, "denyWrite"),
    ],
)
def test_any_missing_or_weaker_setting_establishes_nothing(change, why) -> None:
    layer = {"sandbox": {**GOOD["sandbox"], **change}}
    assert why in _problem(layer)


def test_a_higher_layer_overrides_a_lower_one() -> None:
    assert "enabled" in _problem(GOOD, {"sandbox": {"enabled": False}})
    assert _problem({"sandbox": {"enabled": False}}, GOOD) == ""


def test_excluded_commands_in_any_layer_break_it() -> None:
    assert "excludedCommands" in _problem({"sandbox": {"excludedCommands": ["make"]}}, GOOD)


def test_unreadable_layer_bypass_and_unprotected_surface_establish_nothing() -> None:
    assert _problem(GOOD, None)
    assert "dangerouslyDisableSandbox" in _problem(GOOD, bypass=True)
    assert "AGENTS.md" in _problem(GOOD, protected=("AGENTS.md",))
    assert _problem() != ""


def test_paths_may_be_spelled_relative_absolute_or_as_directories() -> None:
    deny = [
        "./.plangate/",
        "//r/.git",
        ".claude/**",
        ".codex",
        ".cursor",
        "docs/working",
        "CLAUDE.md",
    ]
    layer = {"sandbox": {**GOOD["sandbox"], "filesystem": {"denyWrite": deny}}}
    assert _problem(layer) == ""


def _without_git(extra: str) -> dict:
    deny = [p for p in SANDBOX_DENY_REQUIRED if p != ".git"] + ["CLAUDE.md", extra]
    return {"sandbox": {**GOOD["sandbox"], "filesystem": {"denyWrite": deny}}}


@pytest.mark.parametrize("entry", ["/r/.git", "/.git", "~/.git", "~other/r/.git", "//elsewhere/.git"])
def test_an_entry_that_does_not_certainly_name_the_repository_path_counts_for_nothing(
    entry: str,
) -> None:
    # A single leading '/' was "relative to the settings file" in some versions and
    # absolute in others; '~/' is the home directory; another root is another path.
    assert ".git" in sandbox_problem(
        [_without_git(entry)], root="/r", protected=["CLAUDE.md"], bypass=False, home="/h"
    )


def test_a_home_relative_entry_counts_when_the_repository_is_under_home() -> None:
    assert sandbox_problem(
        [_without_git("~/r/.git")], root="/h/r", protected=["CLAUDE.md"], bypass=False, home="/h"
    ) == ""


def test_a_relative_entry_in_the_user_layer_is_not_a_repository_path() -> None:
    # Claude Code resolves a relative entry of ~/.claude/settings.json against ~/.claude.
    required = {p for p in SANDBOX_DENY_REQUIRED if p != ".git"}
    project = {"sandbox": {"filesystem": {"denyWrite": [*sorted(required), "CLAUDE.md"]}}}
    layers = [{"sandbox": {"filesystem": {"denyWrite": [".git"]}}},
              {"sandbox": {**GOOD["sandbox"], **project["sandbox"]}}]
    as_user = sandbox_problem(layers, root="/r", protected=["CLAUDE.md"], bypass=False,
                              project_layers=[False, True])
    as_project = sandbox_problem(layers, root="/r", protected=["CLAUDE.md"], bypass=False,
                                 project_layers=[True, True])
    assert ".git" in as_user
    assert as_project == ""


def test_layer_kinds_must_match_the_layers() -> None:
    assert sandbox_problem([GOOD], root="/r", protected=["CLAUDE.md"], bypass=False,
                           project_layers=[True, False]) != ""


RUN_ID = "TASK-0001-20261203T093100Z-4bf50be3"
BOX_ENV = {"PLANGATE_TASK": "TASK-0001", "PLANGATE_BOX": RUN_ID}


def _facts_json(**changes: str) -> str:
    body = {
        "run_id": RUN_ID,
        "task_id": "TASK-0001",
        "approved": "a" * 40,
        "plan_hash": "sha256:" + "0" * 64,
        "backend": "bubblewrap",
        **changes,
    }
    return json.dumps(body)


def test_exec_box_needs_the_variables_and_observed_mounts(tmp_path: Path) -> None:
    (tmp_path / ".plangate").mkdir()
    (tmp_path / ".git").mkdir()
    assert exec_box(str(tmp_path), BOX_ENV) == ""  # writable mounts: no box, whatever the variables say
    assert exec_box(str(tmp_path), {"PLANGATE_BOX": RUN_ID}) == ""


def test_run_ids_and_box_facts_are_read_strictly() -> None:
    assert run_id_matches(RUN_ID, "TASK-0001")
    assert not run_id_matches(RUN_ID, "TASK-0002")
    assert not run_id_matches("bwrap", "TASK-0001")
    assert not run_id_matches(RUN_ID + "0", "TASK-0001")
    assert read_box_facts(_facts_json().encode()) is not None
    assert read_box_facts(_facts_json(extra="x").encode()) is None
    assert read_box_facts(_facts_json(backend="").encode()) is None
    assert read_box_facts(b"[]") is None
    assert read_box_facts(b"\xff") is None


def test_box_ledger_path_must_be_a_file_in_the_box_directory() -> None:
    assert box_ledger_path({"PLANGATE_BOX_LEDGER": f"{BOX_DIR}/ledger.sqlite3"})
    for bad in ("/tmp/ledger.sqlite3", f"{BOX_DIR}/", f"{BOX_DIR}/..", f"{BOX_DIR}/a/b", ""):
        assert box_ledger_path({"PLANGATE_BOX_LEDGER": bad}) is None, bad


def _observe_in_bwrap(
    tmp_path: Path, *, ro: tuple[str, ...], box_dir: bool | str, facts_ro: bool, facts: str
) -> str:
    (tmp_path / ".plangate").mkdir(exist_ok=True)
    (tmp_path / ".git").mkdir(exist_ok=True)
    box = tmp_path / "box"
    box.mkdir(exist_ok=True)
    (box / "run.json").write_text(facts)
    code = (
        "import sys; from plangate.isolation.contract import exec_box; "
        f"print(exec_box({str(tmp_path)!r}, {BOX_ENV!r}))"
    )
    # /run is a fresh tmpfs: the box directory's mount point is never made on the host.
    argv = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
    for rel in ro:
        argv += ["--ro-bind", str(tmp_path / rel), str(tmp_path / rel)]
    if box_dir == "plain":  # a directory made in the box's /run, not a mount of its own
        argv += ["--dir", BOX_DIR]
    elif box_dir:
        argv += ["--bind", str(box), BOX_DIR]
    if box_dir and facts_ro:
        argv += ["--ro-bind", str(box / "run.json"), f"{BOX_DIR}/run.json"]
    argv += [sys.executable, "-c", code]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3] / "src"))
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0 and "namespace" in proc.stderr:
        pytest.skip("user namespaces are not available")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_exec_box_is_seen_only_when_every_mount_is_observed(tmp_path: Path) -> None:
    both = (".plangate", ".git")
    good = {"ro": both, "box_dir": True, "facts_ro": True, "facts": _facts_json()}
    assert _observe_in_bwrap(tmp_path, **good) == "exec:bubblewrap"
    assert _observe_in_bwrap(tmp_path, **{**good, "ro": (".plangate",)}) == ""
    assert _observe_in_bwrap(tmp_path, **{**good, "ro": (".git",)}) == ""
    assert _observe_in_bwrap(tmp_path, **{**good, "box_dir": False}) == ""
    assert _observe_in_bwrap(tmp_path, **{**good, "box_dir": "plain"}) == ""
    assert _observe_in_bwrap(tmp_path, **{**good, "facts_ro": False}) == ""
    other = _facts_json(run_id="TASK-0001-20261203T093100Z-00000000")
    assert _observe_in_bwrap(tmp_path, **{**good, "facts": other}) == ""


# The required paths written out here, not taken from the constant: dropping one from
# SANDBOX_DENY_REQUIRED must turn a test red.
REQUIRED_LITERAL = [".plangate", ".git", ".claude", ".codex", ".cursor", "docs/working"]


def _literal_layer(deny: list[str], **settings: object) -> dict:
    sandbox = {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {"denyWrite": deny},
    }
    return {"sandbox": {**sandbox, **settings}}


def test_the_required_paths_are_the_documented_ones() -> None:
    assert _problem(_literal_layer([*REQUIRED_LITERAL, "CLAUDE.md"])) == ""
    for path in REQUIRED_LITERAL:
        deny = [p for p in REQUIRED_LITERAL if p != path]
        assert _problem(_literal_layer([*deny, "CLAUDE.md"])) == (
            f"sandbox.filesystem.denyWrite does not name {path!r}"
        ), path


def test_a_sandbox_that_does_not_deny_docs_working_is_not_relied_on() -> None:
    deny = [".plangate", ".git", ".claude", ".codex", ".cursor", "CLAUDE.md"]
    assert "docs/working" in _problem(_literal_layer(deny))
    assert _problem(_literal_layer([*deny, "//r/docs/working/**"])) == ""


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("enabled", 1),
        ("enabled", 1.0),
        ("failIfUnavailable", 1),
        ("allowUnsandboxedCommands", 0),
        ("allowUnsandboxedCommands", 0.0),
        ("allowUnsandboxedCommands", None),
    ],
)
def test_only_the_json_booleans_count(key: str, value: object) -> None:
    """``1 == True`` in Python; only the JSON boolean itself establishes the setting."""
    layer = _literal_layer([*REQUIRED_LITERAL, "CLAUDE.md"], **{key: value})
    assert _problem(layer).startswith(f"sandbox.{key} is not ")
    parsed = json.loads(json.dumps(layer))  # the same settings as a settings file holds them
    assert _problem(parsed).startswith(f"sandbox.{key} is not ")


def test_a_directory_that_cannot_be_listed_refuses_the_deny_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.errors import EnvironmentFailure
    from plangate.hooks.confinement import path_facts

    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{}\n")
    assert "settings.json" in path_facts(str(tmp_path), [".claude"]).children[".claude"]

    def unlistable(path: object) -> list[str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "listdir", unlistable)
    with pytest.raises(EnvironmentFailure) as raised:
        path_facts(str(tmp_path), [".claude"])
    assert raised.value.code == "SANDBOX_PATHS_UNREADABLE"
