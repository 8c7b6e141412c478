"""Every wait a hook can enter ends before the deadline the installer gives the hook."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from plangate import deadlines
from plangate.hooks.install import apply
from plangate.ledger import sqlite as sqlite_backend


def test_every_ledger_wait_is_shorter_than_the_hook_deadline() -> None:
    hook = deadlines.HOOK_TIMEOUT_SECONDS
    assert hook > deadlines.LEDGER_LOCK_WAIT_SECONDS
    assert hook > deadlines.LEDGER_STATEMENT_TIMEOUT_SECONDS
    assert hook > deadlines.LEDGER_CONNECT_TIMEOUT_SECONDS
    # A PostgreSQL hook call connects, then waits for the head lock inside one statement.
    assert (
        hook > deadlines.LEDGER_CONNECT_TIMEOUT_SECONDS + deadlines.LEDGER_STATEMENT_TIMEOUT_SECONDS
    )
    assert hook > sqlite_backend.BUSY_TIMEOUT_SECONDS


def test_the_installed_hook_timeout_is_the_shared_deadline(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    apply(tmp_path, ["claude"], install=True, python="python3", env={})
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    timeouts = {
        hook["timeout"]
        for groups in settings["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    }
    assert timeouts == {deadlines.HOOK_TIMEOUT_SECONDS}
