"""When the hook may rely on the operating system's confinement (pure rules and real mounts)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plangate.hooks.confinement import SANDBOX_DENY_REQUIRED, exec_box, sandbox_problem

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
        "/r/.git",
        ".claude/**",
        ".codex",
        ".cursor",
        "docs/working",
        "CLAUDE.md",
    ]
    layer = {"sandbox": {**GOOD["sandbox"], "filesystem": {"denyWrite": deny}}}
    assert _problem(layer) == ""


def test_exec_box_needs_the_marker_and_observed_read_only_mounts(tmp_path: Path) -> None:
    (tmp_path / ".plangate").mkdir()
    (tmp_path / ".git").mkdir()
    env = {"PLANGATE_TASK": "TASK-0001", "PLANGATE_BOX": "bwrap"}
    assert exec_box(str(tmp_path), env) == ""  # writable mounts: no box, whatever the variables say
    assert exec_box(str(tmp_path), {"PLANGATE_BOX": "bwrap"}) == ""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_exec_box_is_seen_inside_a_real_read_only_mount(tmp_path: Path) -> None:
    (tmp_path / ".plangate").mkdir()
    (tmp_path / ".git").mkdir()
    code = (
        "import sys; from plangate.hooks.confinement import exec_box; "
        f"print(exec_box({str(tmp_path)!r}, {{'PLANGATE_TASK': 'TASK-0001', 'PLANGATE_BOX': 'bwrap'}}))"
    )
    argv = [
        "bwrap",
        "--bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--ro-bind",
        str(tmp_path / ".plangate"),
        str(tmp_path / ".plangate"),
        "--ro-bind",
        str(tmp_path / ".git"),
        str(tmp_path / ".git"),
        sys.executable,
        "-c",
        code,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=dict(os.environ))
    if proc.returncode != 0 and "namespace" in proc.stderr:
        pytest.skip("user namespaces are not available")
    assert proc.stdout.strip() == "exec:bwrap", proc.stderr
