"""Doctor's version check: installed hosts newer than the pinned versions are reported."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import pytest

from plangate.hooks.doctor_versions import pinned_versions, version_finding, version_findings

REAL_HOSTS = Path("/root/.cache/plangate-hosts/test/node_modules/.bin")


def test_the_pin_file_names_both_hosts() -> None:
    text = resources.files("plangate").joinpath("resources", "pinned-hosts.toml").read_text()
    pins = pinned_versions(text)
    assert pins["claude"] == {"package": "@anthropic-ai/claude-code", "version": "2.1.197"}
    assert pins["codex"] == {"package": "@openai/codex", "version": "0.171.0"}


PIN = {"package": "@anthropic-ai/claude-code", "version": "2.1.197"}


@pytest.mark.parametrize("output", ["2.1.197 (Claude Code)", "2.1.9 (Claude Code)",
                                    "1.99.999", "codex-cli 2.1.197"])
def test_the_pinned_version_or_an_older_one_is_not_reported(output: str) -> None:
    assert version_finding("claude", "claude", PIN, output) is None


@pytest.mark.parametrize("output", ["2.1.198 (Claude Code)", "2.2.0", "10.0.0 (Claude Code)"])
def test_a_newer_host_is_reported_with_what_plangate_does_not_know(output: str) -> None:
    finding = version_finding("claude", "claude", PIN, output)
    assert finding is not None and finding.code == "DOCTOR_HOST_NEWER"
    assert not finding.fails
    assert "2.1.197" in finding.message and "HOOK_TOOL_UNKNOWN" in finding.message


def test_an_unreadable_version_is_reported() -> None:
    finding = version_finding("claude", "claude", PIN, "Claude Code (nightly)")
    assert finding is not None and finding.code == "DOCTOR_HOST_VERSION_UNKNOWN"


def _program(directory: Path, name: str, output: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\necho '{output}'\n")
    path.chmod(0o755)


def test_programs_on_path_are_asked_for_their_version(tmp_path: Path) -> None:
    _program(tmp_path, "claude", "2.3.0 (Claude Code)")
    _program(tmp_path, "codex", "codex-cli 0.171.0")
    findings = version_findings({"PATH": str(tmp_path)})
    assert [(f.code, f.message.split()[0]) for f in findings] == [("DOCTOR_HOST_NEWER", "claude")]


def test_no_host_on_path_no_finding(tmp_path: Path) -> None:
    assert version_findings({"PATH": str(tmp_path)}) == []


@pytest.mark.skipif(not (REAL_HOSTS / "claude").exists(), reason="the real hosts are not installed")
def test_the_real_pinned_hosts_are_not_reported() -> None:
    path = f"{REAL_HOSTS}:{os.environ.get('PATH', '')}"
    assert version_findings({**os.environ, "PATH": path, "DISABLE_AUTOUPDATER": "1"}) == []
