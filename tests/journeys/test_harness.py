"""The tier's own promise: missing hosts fail the tests with the way to install them."""

from __future__ import annotations

from pathlib import Path

from support.journey import HOSTS_BIN_VARIABLE, INSTALL_SCRIPT, find_hosts_bin, read_pins


def test_missing_hosts_are_reported_with_the_install_script(tmp_path: Path) -> None:
    found, why = find_hosts_bin({HOSTS_BIN_VARIABLE: str(tmp_path), "HOME": str(tmp_path)})
    assert found is None
    assert INSTALL_SCRIPT in why and "claude" in why and "-m 'not journeys'" in why


def test_the_pin_file_names_both_hosts() -> None:
    pins = read_pins()
    assert pins["claude"]["package"] == "@anthropic-ai/claude-code"
    assert pins["codex"]["package"] == "@openai/codex"
    assert all(pins[h]["version"].count(".") == 2 for h in ("claude", "codex"))
