"""A damaged SQLite index never changes a hook's decision, and 'ledger verify' reports it.

The damage is real: bytes of the kind index's page in the database file are rewritten so
that the index files an entry under another kind, while the table keeps the truth.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from plangate.clock import format_utc, utc_now
from plangate.hooks.override import active_grants, grant_states, verified_override_entries
from plangate.ledger import LedgerError, open_ledger
from plangate.session.openrun import open_run
from support.cli import RunCli


def _corrupt_kind_index(db: Path, kind: bytes, replacement: bytes) -> None:
    """Rewrite ``kind`` to ``replacement`` (same length) inside the kind index's pages only."""
    assert len(kind) == len(replacement)
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    (root,) = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'ledger_entries_kind'"
    ).fetchone()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * page_size
    page = bytes(data[start : start + page_size])
    assert kind in page, "the index page does not hold the kind"
    data[start : start + page_size] = page.replace(kind, replacement)
    db.write_bytes(bytes(data))


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    return repo, repo / ".plangate" / "ledger.sqlite3"


def _grant_then_revoke(repo: Path) -> None:
    now = utc_now()
    with open_ledger(repo, {}) as ledger:
        for i in range(30):
            ledger.append("hook_decision", "-", {"i": i})
        ledger.append(
            "override_granted",
            "ovr-1",
            {
                "grant_id": "ovr-1",
                "patterns": ["src/**"],
                "expires_at": format_utc(now + timedelta(hours=1)),
                "granted_at": format_utc(now),
                "one_shot": False,
                "reason": "unblock",
                "granted_by": "human",
            },
        )
        ledger.append("hook_decision", "-", {"i": 99})
        ledger.append("override_revoked", "ovr-1", {"grant_id": "ovr-1", "revoked_by": "human"})
        ledger.append("hook_decision", "-", {"i": 100})


def test_a_damaged_kind_index_does_not_bring_a_revoked_override_back(tmp_path: Path) -> None:
    repo, db = _repo(tmp_path)
    _grant_then_revoke(repo)
    now = utc_now()
    with open_ledger(repo, {}) as ledger:
        assert active_grants(grant_states(verified_override_entries(ledger, now)), now) == ()
    _corrupt_kind_index(db, b"override_revoked", b"override_revokee")
    with open_ledger(repo, {}) as ledger:
        # The damage is effective: a lookup through the index no longer sees the revocation.
        assert ledger.entries(kind="override_revoked") == []
        entries = verified_override_entries(ledger, now)
        assert active_grants(grant_states(entries), now) == ()
        assert ("override_revoked", "ovr-1") in [(k, s) for k, s, _p in entries]


def test_verify_reports_the_damaged_index(tmp_path: Path, run_cli: RunCli) -> None:
    repo, db = _repo(tmp_path)
    _grant_then_revoke(repo)
    assert run_cli(repo, "ledger", "verify").code == 0
    _corrupt_kind_index(db, b"override_revoked", b"override_revokee")
    res = run_cli(repo, "ledger", "verify", "--json")
    assert res.code == 1
    assert "LEDGER_INTEGRITY_FAILED" in res.out


def test_a_damaged_kind_index_does_not_reopen_an_ended_exec_run(tmp_path: Path) -> None:
    repo, db = _repo(tmp_path)
    with open_ledger(repo, {}) as ledger:
        ledger.append("exec_started", "TASK-0001", {"run_id": "r1", "task_id": "TASK-0001"})
        for i in range(20):
            ledger.append("hook_decision", "TASK-0001", {"i": i})
        ledger.append("exec_ended", "TASK-0001", {"run_id": "r1", "exit_code": 0})
    now = utc_now()
    with open_ledger(repo, {}) as ledger:
        assert open_run(ledger, now) is None
    _corrupt_kind_index(db, b"exec_ended", b"exec_endex")
    with open_ledger(repo, {}) as ledger:
        assert ledger.entries(kind="exec_ended") == []  # the index lost the end
        assert open_run(ledger, now) is None


def test_an_open_run_is_found_and_a_tampered_segment_is_refused(tmp_path: Path) -> None:
    repo, db = _repo(tmp_path)
    with open_ledger(repo, {}) as ledger:
        for i in range(10):
            ledger.append("hook_decision", "-", {"i": i})
        ledger.append("exec_started", "TASK-0002", {"run_id": "r2", "task_id": "TASK-0002"})
        ledger.append("hook_decision", "TASK-0002", {"i": 11})
    with open_ledger(repo, {}) as ledger:
        found = open_run(ledger, utc_now())
        assert found is not None
        assert found.payload["task_id"] == "TASK-0002"
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER ledger_entries_no_update")
    conn.execute("UPDATE ledger_entries SET subject = 'TASK-0003' WHERE seq = 12")
    conn.commit()
    conn.close()
    with open_ledger(repo, {}, create=False) as ledger, pytest.raises(LedgerError) as info:
        open_run(ledger, utc_now())
    assert info.value.code == "LEDGER_TAMPERED"


def test_damage_seen_by_a_read_of_a_file_rewritten_meanwhile_is_read_again(
    tmp_path: Path,
) -> None:
    """A reader that opened the file while it was mid-rewrite (here: a damaged copy, as a
    half-finished checkpoint leaves it) and sees it replaced by the finished file reads
    again: the finished ledger is judged, never the torn one."""
    from plangate.ledger.sqlite import SQLiteLedger

    repo, db = _repo(tmp_path)
    _grant_then_revoke(repo)
    whole = db.read_bytes()
    _corrupt_kind_index(db, b"override_revoked", b"override_revokee")
    reader = SQLiteLedger(db, read_only=True)  # opens the torn file
    try:
        finished = db.with_name("finished.sqlite3")
        finished.write_bytes(whole)
        finished.replace(db)  # the writer finishes: the whole file takes its place
        result = reader.verify()
    finally:
        reader.close()
    assert result.verdict == "INTACT", result.reasons
    # A damaged file nobody rewrote is still reported.
    _corrupt_kind_index(db, b"override_revoked", b"override_revokee")
    with SQLiteLedger(db, read_only=True) as damaged:
        assert [r.code for r in damaged.verify().reasons] == ["LEDGER_INTEGRITY_FAILED"]
