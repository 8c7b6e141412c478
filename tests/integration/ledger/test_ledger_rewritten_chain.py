"""A real SQLite ledger rewritten behind the API: a re-hashed last entry or a chain that
does not start at the genesis never verifies, in a full verify or in a segment read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from plangate.ledger import LedgerError, open_ledger
from plangate.ledger.chain import GENESIS_PREV_HASH, compute_entry_hash

Row = tuple[object, ...]  # (seq, kind, subject, payload, at, prev_hash, entry_hash)


def _ledger(tmp_path: Path, count: int) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    with open_ledger(repo, {}) as ledger:
        for i in range(count):
            ledger.append("hook_decision", "TASK-0001", {"i": i})
    return repo, repo / ".plangate" / "ledger.sqlite3"


def _rows(db: Path) -> list[Row]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(
            "SELECT seq, kind, subject, payload, at, prev_hash, entry_hash "
            "FROM ledger_entries ORDER BY seq"
        ))


def _rehashed(row: Row, *, payload: dict[str, object] | None = None,
              prev_hash: str | None = None) -> Row:
    """``row`` with a new payload or link, its entry hash recomputed as an attacker would."""
    seq, kind, subject, text, at, prev, _ = row
    body = json.loads(str(text)) if payload is None else payload
    link = str(prev) if prev_hash is None else prev_hash
    entry_hash = compute_entry_hash(
        seq=int(str(seq)), kind=str(kind), subject=str(subject), payload=body, at=str(at),
        prev_hash=link,
    )
    stored = text if payload is None else json.dumps(body, separators=(",", ":"), sort_keys=True)
    return (seq, kind, subject, stored, at, link, entry_hash)


def _store(db: Path, rows: list[Row], head: tuple[object, object] | None = None) -> None:
    """Replace the stored rows (and the head, when given), bypassing the triggers."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DROP TRIGGER IF EXISTS ledger_entries_no_update")
        conn.execute("DROP TRIGGER IF EXISTS ledger_entries_no_delete")
        conn.execute("DELETE FROM ledger_entries")
        conn.executemany("INSERT INTO ledger_entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        if head is not None:
            conn.execute("UPDATE ledger_head SET seq = ?, entry_hash = ?", head)
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_a_rehashed_last_entry_disagrees_with_the_head(tmp_path: Path) -> None:
    repo, db = _ledger(tmp_path, 4)
    rows = _rows(db)
    forged = _rehashed(rows[-1], payload={"i": 999})
    assert forged[6] != rows[-1][6]
    _store(db, [*rows[:-1], forged])  # the head still records the original last hash
    with open_ledger(repo, {}, create=False) as ledger:
        result = ledger.verify()
        assert result.verdict == "TAMPERED"
        assert result.codes == ("LEDGER_HEAD_MISMATCH",)
        assert result.facts["entries"] == 4  # every row on its own is well formed and linked
        with pytest.raises(LedgerError) as info:
            ledger.verified_since(4)
    assert info.value.code == "LEDGER_TAMPERED"
    assert "LEDGER_HEAD_MISMATCH" in info.value.message


def test_the_untouched_ledger_verifies_in_full_and_in_segments(tmp_path: Path) -> None:
    repo, _db = _ledger(tmp_path, 4)
    with open_ledger(repo, {}, create=False) as ledger:
        assert ledger.verify().verdict == "INTACT"
        assert [e.seq for e in ledger.verified_since(1)] == [1, 2, 3, 4]
        assert [e.seq for e in ledger.verified_since(4)] == [3, 4]


def test_a_segment_read_from_the_start_must_link_to_the_genesis(tmp_path: Path) -> None:
    repo, db = _ledger(tmp_path, 3)
    rows = _rows(db)
    assert rows[0][5] == GENESIS_PREV_HASH
    # A whole chain re-hashed onto another starting link, its head updated to match:
    # every row links to the one before and hashes right, only the first link is wrong.
    forged: list[Row] = []
    link = "sha256:" + "1" * 64
    for row in rows:
        forged.append(_rehashed(row, prev_hash=link))
        link = str(forged[-1][6])
    _store(db, forged, head=(3, link))
    with open_ledger(repo, {}, create=False) as ledger:
        for start in (1, 2):  # both read the segment from seq 1
            with pytest.raises(LedgerError) as info:
                ledger.verified_since(start)
            assert info.value.code == "LEDGER_TAMPERED"
            assert "LEDGER_PREV_HASH_MISMATCH" in info.value.message
        result = ledger.verify()
    assert result.verdict == "TAMPERED"
    assert result.codes == ("LEDGER_PREV_HASH_MISMATCH",)
    assert result.facts["first_bad_seq"] == 1
