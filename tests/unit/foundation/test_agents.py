"""Agent and automation markers, and the one refusal of every human-only command."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.agents import HumanOnly, agent_markers_present, refuse_unless_human
from plangate.errors import HumanRequired


def test_agent_markers() -> None:
    assert agent_markers_present({"HOME": "/h"}) == []
    assert agent_markers_present({"CLAUDECODE": "1", "CODEX_HOME": "/x"}) == [
        "CLAUDECODE",
        "CODEX_HOME",
    ]
    assert agent_markers_present({"CI": ""}) == []


def test_ci_switches_count_only_with_a_value() -> None:
    assert agent_markers_present({"CI": "true", "GITHUB_ACTIONS": "true"}) == [
        "CI",
        "GITHUB_ACTIONS",
    ]
    assert agent_markers_present({"GITHUB_ACTIONS": ""}) == []


def test_an_agent_marker_blanked_to_the_empty_string_is_still_a_marker() -> None:
    assert agent_markers_present({"CLAUDECODE": ""}) == ["CLAUDECODE"]
    assert agent_markers_present({"CODEX_SANDBOX": ""}) == ["CODEX_SANDBOX"]


def test_no_marker_is_no_marker() -> None:
    assert agent_markers_present({"HOME": "/home/x", "TERM": "xterm"}) == []


COMMAND = HumanOnly("X_AGENT_ENVIRONMENT", "X_NOT_INTERACTIVE", "refused", "do it yourself")


def test_a_human_only_command_refuses_an_agent_even_at_a_terminal() -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "rb") as terminal, pytest.raises(HumanRequired) as info:
        refuse_unless_human({"CLAUDECODE": "1"}, terminal, COMMAND)
    os.close(leader)
    assert info.value.code == "X_AGENT_ENVIRONMENT"
    assert "CLAUDECODE" in info.value.message
    assert info.value.hint == "do it yourself"


def test_a_human_only_command_refuses_without_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "input").write_bytes(b"")
    with (tmp_path / "input").open("rb") as not_a_terminal, pytest.raises(HumanRequired) as info:
        refuse_unless_human({}, not_a_terminal, COMMAND)
    assert info.value.code == "X_NOT_INTERACTIVE"
    with pytest.raises(HumanRequired):
        refuse_unless_human({}, None, COMMAND)  # a closed standard input


def test_a_human_at_a_terminal_outside_any_agent_may_run_it() -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "rb") as terminal:
        refuse_unless_human({"HOME": "/home/x"}, terminal, COMMAND)
    os.close(leader)
