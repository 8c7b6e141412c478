"""The tier's own promises: missing hosts fail the tests with the way to install them;
install-hosts.sh reuses a complete cache entry and never trusts an incomplete one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.journey import (
    HOSTS_BIN_VARIABLE,
    INSTALL_SCRIPT,
    ROOT,
    find_hosts_bin,
    read_pins,
)


def test_missing_hosts_are_reported_with_the_install_script(tmp_path: Path) -> None:
    found, why = find_hosts_bin({HOSTS_BIN_VARIABLE: str(tmp_path), "HOME": str(tmp_path)})
    assert found is None
    assert INSTALL_SCRIPT in why and "claude" in why and "-m 'not journeys'" in why


def test_the_pin_file_names_both_hosts() -> None:
    pins = read_pins()
    assert pins["claude"]["package"] == "@anthropic-ai/claude-code"
    assert pins["codex"]["package"] == "@openai/codex"
    assert all(pins[h]["version"].count(".") == 2 for h in ("claude", "codex"))


def test_install_hosts_reuses_a_complete_cache_entry_without_npm(tmp_path: Path) -> None:
    """A complete entry (the stamp names the pinned packages, the three programs are
    there) is reused as is: the script prints its bin directory and runs no npm."""
    pins = read_pins()
    entry = tmp_path / "cache" / (
        f"claude-{pins['claude']['version']}_codex-{pins['codex']['version']}"
    )
    (entry / "bin").mkdir(parents=True)
    for name in ("claude", "codex", "codex-linux-sandbox"):
        program = entry / "bin" / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    stamp = " ".join(f"{pins[h]['package']}@{pins[h]['version']}" for h in ("claude", "codex"))
    (entry / ".complete").write_text(stamp + "\n")
    # npm and apt-get that leave a mark: reuse must call neither.
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("npm", "apt-get"):
        fake = tools / name
        fake.write_text(f"#!/bin/sh\ntouch {tmp_path}/called-{name}\nexit 1\n")
        fake.chmod(0o755)
    proc = subprocess.run(
        ["/bin/bash", str(ROOT / INSTALL_SCRIPT)],
        env={
            "PATH": f"{tools}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PLANGATE_HOSTS_CACHE": str(tmp_path / "cache"),
            "PYTHON": sys.executable,
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == str(entry / "bin")
    assert "already installed" in proc.stderr
    assert not list(tmp_path.glob("called-*"))


def test_install_hosts_installs_again_over_an_incomplete_entry(tmp_path: Path) -> None:
    """An entry without its stamp (an install that stopped half-way) is not trusted:
    the script installs again (here npm is a stand-in that records the call and fails,
    so the script must fail too, never print the half-made entry)."""
    pins = read_pins()
    entry = tmp_path / "cache" / (
        f"claude-{pins['claude']['version']}_codex-{pins['codex']['version']}"
    )
    (entry / "bin").mkdir(parents=True)
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("npm", "node"):
        fake = tools / name
        # node answers the version check (18+); npm records the call and fails.
        body = "echo 20" if name == "node" else f"touch {tmp_path}/called-npm; exit 1"
        fake.write_text(f"#!/bin/sh\n{body}\n")
        fake.chmod(0o755)
    proc = subprocess.run(
        ["/bin/bash", str(ROOT / INSTALL_SCRIPT)],
        env={
            "PATH": f"{tools}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PLANGATE_HOSTS_CACHE": str(tmp_path / "cache"),
            "PYTHON": sys.executable,
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert (tmp_path / "called-npm").exists()
    assert str(entry / "bin") not in proc.stdout
