"""Agent and automation markers: which environment variables say an agent is running us."""

from __future__ import annotations

from plangate.agents import agent_markers_present


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
