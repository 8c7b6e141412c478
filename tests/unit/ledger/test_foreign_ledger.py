"""A ledger file PlanGate did not keep (a box's), read as untrusted input: real SQLite files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from plangate.fsutil import open_verified_dir
from plangate.ledger.foreign import (
    INTACT,
    MALFORMED,
    MISSING,
    OVERSIZED,
    TAMPERED,
    read_foreign_sqlite,
)
from plangate.ledger.sqlite import SQLiteLedger, create_file

MAX = 4 * 1024 * 1024


def _ledger(directory: Path, entries: int = 3, name: str = "ledger.sqlite3") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    with open_verified_dir(directory) as handle:
        create_file(handle, name)
    with SQLiteLedger(directory / name) as ledger:
        for n in range(entries):
            ledger.append("hook_decision", "TASK-0001", {"verdict": "ALLOW", "n": n})
    return directory / name


def _read(directory: Path, pristine: str = "", **bounds: int):
    return read_foreign_sqlite(
        directory, "ledger.sqlite3", max_bytes=bounds.get("max_bytes", MAX),
        max_entries=bounds.get("max_entries", 100), pristine=pristine,
    )


def test_an_intact_ledger_gives_its_entries_and_digest(tmp_path: Path) -> None:
    _ledger(tmp_path)
    read = _read(tmp_path)
    assert read.status == INTACT, read.detail
    assert [e.payload["n"] for e in read.entries] == [0, 1, 2]
    assert read.digest.startswith("sha256:")
    assert read.size > 0


def test_entries_still_in_the_write_ahead_log_are_read_and_the_original_is_untouched(
    tmp_path: Path,
) -> None:
    box = tmp_path / "box"
    path = _ledger(box, entries=0)
    reader = sqlite3.connect(path)  # another open connection: closing the writer won't checkpoint
    reader.execute("SELECT count(*) FROM ledger_entries").fetchall()
    with SQLiteLedger(path) as ledger:
        ledger.append("hook_decision", "TASK-0001", {"verdict": "DENY"})
    assert Path(f"{path}-wal").stat().st_size > 0
    before = {p.name: p.read_bytes() for p in box.iterdir()}
    read = _read(box)
    after = {p.name: p.read_bytes() for p in box.iterdir()}
    reader.close()
    assert before == after  # only a private copy was opened
    assert read.status == INTACT, read.detail
    assert [e.payload["verdict"] for e in read.entries] == ["DENY"]


def test_missing_oversized_and_too_many_entries(tmp_path: Path) -> None:
    assert _read(tmp_path).status == MISSING
    _ledger(tmp_path, entries=5)
    assert _read(tmp_path, max_bytes=1024).status == OVERSIZED
    too_many = _read(tmp_path, max_entries=4)
    assert too_many.status == OVERSIZED
    assert too_many.entries == ()


def test_garbage_an_empty_file_a_link_and_a_directory_are_malformed(tmp_path: Path) -> None:
    real = _ledger(tmp_path / "real")
    real_bytes = real.read_bytes()
    cases = {
        "garbage": lambda p: p.write_bytes(b"not a ledger" * 100),
        "empty": lambda p: p.write_bytes(b""),
        "link": lambda p: p.symlink_to(real),
        "directory": lambda p: p.mkdir(),
    }
    for name, make in cases.items():
        directory = tmp_path / name
        directory.mkdir()
        make(directory / "ledger.sqlite3")
        read = _read(directory)
        assert read.status == MALFORMED, (name, read)
        assert read.entries == ()
    link_wal = tmp_path / "walink"
    _ledger(link_wal)
    os.symlink(real, link_wal / "ledger.sqlite3-wal")
    assert _read(link_wal).status == MALFORMED
    assert real.read_bytes() == real_bytes


def test_another_schema_is_malformed_even_with_a_valid_chain(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("CREATE VIEW extra AS SELECT 1")
    conn.commit()
    conn.close()
    read = _read(tmp_path)
    assert read.status == MALFORMED
    assert "schema" in read.detail


def test_an_edited_entry_breaks_the_chain_and_is_tampered(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    conn = sqlite3.connect(path)
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _sql in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute(
        "UPDATE ledger_entries SET payload = ? WHERE seq = 2",
        ('{"n":1,"verdict":"DENY"}',),
    )
    for _name, sql in triggers:
        conn.execute(sql)
    conn.commit()
    conn.close()
    read = _read(tmp_path)
    assert read.status == TAMPERED, read
    assert read.entries == ()


def test_a_box_ledger_made_without_waiting_for_the_disk_is_a_ledger_all_the_same(
    tmp_path: Path,
) -> None:
    """The box's ledger is created with ``durable=False`` (exec's run directory): the same
    schema, an intact empty chain, and the hooks' entries read back as from any other."""
    box = tmp_path / "box"
    box.mkdir()
    with open_verified_dir(box) as handle:
        assert create_file(handle, "ledger.sqlite3", durable=False)
    assert _read(box).status == INTACT and _read(box).entries == ()
    with SQLiteLedger(box / "ledger.sqlite3") as ledger:
        ledger.append("hook_decision", "TASK-0001", {"verdict": "ALLOW"})
    read = _read(box)
    assert read.status == INTACT, read.detail
    assert [e.payload["verdict"] for e in read.entries] == ["ALLOW"]


def test_an_untouched_box_ledger_is_known_by_its_digest_and_a_touched_one_is_judged(
    tmp_path: Path,
) -> None:
    """``pristine``: the digest of the empty ledger as made. Bytes that still hash to it are
    that ledger (intact, empty); anything else is read and judged as always."""
    from plangate.canonical import sha256_digest

    box = tmp_path / "box"
    path = _ledger(box, entries=0)
    pristine = sha256_digest(path.read_bytes())
    untouched = _read(box, pristine=pristine)
    assert (untouched.status, untouched.entries, untouched.digest) == (INTACT, (), pristine)
    with SQLiteLedger(path) as ledger:
        ledger.append("hook_decision", "TASK-0001", {"verdict": "DENY"})
    written = _read(box, pristine=pristine)
    assert written.status == INTACT and [e.payload["verdict"] for e in written.entries] == ["DENY"]
    path.write_bytes(b"not a database" * 100)
    assert _read(box, pristine=pristine).status == MALFORMED
