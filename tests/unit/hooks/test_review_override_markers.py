"""Adversarial review: an agent marker blanked to the empty string is still a marker."""

from __future__ import annotations

from plangate.hooks.override import agent_markers_present


def test_empty_marker_still_counts() -> None:
    assert agent_markers_present({"CLAUDECODE": ""}) == ["CLAUDECODE"]
    assert agent_markers_present({"CODEX_SANDBOX": ""}) == ["CODEX_SANDBOX"]


def test_no_marker_is_no_marker() -> None:
    assert agent_markers_present({"HOME": "/home/x", "TERM": "xterm"}) == []
