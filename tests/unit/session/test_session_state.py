"""The session the ledger lends, read back: which one is open, its baseline, the live exec run."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from plangate.clock import format_utc
from plangate.ledger import open_ledger
from plangate.session.baseline import path_digest, unchanged_since_baseline
from plangate.session.openrun import exec_run_alive
from plangate.session.state import (
    KIND_STARTED,
    KIND_STOPPED,
    Session,
    active_session,
    open_session,
)

NOW = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)


def _started(session_id: str, *, hours: int = 8, baseline_sha256: str = "0" * 64) -> dict[str, str]:
    return {
        "session_id": session_id,
        "task_id": "TASK-0001",
        "started_at": format_utc(NOW),
        "expires_at": format_utc(NOW + timedelta(hours=hours)),
        "head": "a" * 40,
        "baseline": f".plangate/session/{session_id}.json",
        "baseline_sha256": baseline_sha256,
    }


def test_no_session_was_started(tmp_path: Path) -> None:
    with open_ledger(tmp_path, {}) as ledger:
        ledger.append("hook_decision", "-", {"i": 1})
        assert open_session(ledger) is None
        assert active_session(ledger, NOW) is None


def test_a_started_session_is_open_until_its_own_stop(tmp_path: Path) -> None:
    with open_ledger(tmp_path, {}) as ledger:
        ledger.append(KIND_STARTED, "TASK-0001", _started("s1"))
        opened = open_session(ledger)
        assert opened is not None
        assert (opened.session_id, opened.task_id) == ("s1", "TASK-0001")
        ledger.append(KIND_STOPPED, "TASK-0001", {"session_id": "other"})
        assert open_session(ledger) == opened  # another session's stop does not end it
        ledger.append(KIND_STOPPED, "TASK-0001", {"session_id": "s1"})
        assert open_session(ledger) is None


def test_the_newest_start_counts(tmp_path: Path) -> None:
    with open_ledger(tmp_path, {}) as ledger:
        ledger.append(KIND_STARTED, "TASK-0001", _started("s1"))
        ledger.append(KIND_STOPPED, "TASK-0001", {"session_id": "s1"})
        ledger.append(KIND_STARTED, "TASK-0001", _started("s2"))
        opened = open_session(ledger)
    assert opened is not None
    assert opened.session_id == "s2"


def test_a_start_missing_a_field_lends_no_task(tmp_path: Path) -> None:
    payload = _started("s1")
    del payload["head"]
    with open_ledger(tmp_path, {}) as ledger:
        ledger.append(KIND_STARTED, "TASK-0001", payload)
        assert open_session(ledger) is None


def test_an_expired_session_is_open_but_not_active(tmp_path: Path) -> None:
    with open_ledger(tmp_path, {}) as ledger:
        ledger.append(KIND_STARTED, "TASK-0001", _started("s1", hours=1))
        assert active_session(ledger, NOW + timedelta(minutes=59)) is not None
        assert active_session(ledger, NOW + timedelta(hours=1)) is None
        assert open_session(ledger) is not None


def test_an_unreadable_expiry_has_expired() -> None:
    session = Session("s1", "TASK-0001", "x", "tomorrow", "a" * 40, "b", "c", 1)
    assert session.expired(NOW)


def test_path_digest_names_what_the_path_is(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"data")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to("file")
    assert path_digest(str(tmp_path), "file") == "sha256:" + hashlib.sha256(b"data").hexdigest()
    assert path_digest(str(tmp_path), "link") == "link:" + hashlib.sha256(b"file").hexdigest()
    assert path_digest(str(tmp_path), "dir") == "dir"
    assert path_digest(str(tmp_path), "gone") == "missing"


def _baseline(root: Path, files: dict[str, str]) -> Session:
    data = json.dumps({"files": files}).encode()
    (root / ".plangate" / "session").mkdir(parents=True)
    (root / ".plangate" / "session" / "s1.json").write_bytes(data)
    return Session(
        "s1", "TASK-0001", "", "", "a" * 40, ".plangate/session/s1.json",
        hashlib.sha256(data).hexdigest(), 1,
    )


def test_only_files_the_baseline_holds_unchanged_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_bytes(b"mine")
    (tmp_path / "edited.md").write_bytes(b"before")
    session = _baseline(
        tmp_path,
        {
            "notes.md": path_digest(str(tmp_path), "notes.md"),
            "edited.md": path_digest(str(tmp_path), "edited.md"),
        },
    )
    (tmp_path / "edited.md").write_bytes(b"after")
    (tmp_path / "new.md").write_bytes(b"new")
    same = unchanged_since_baseline(str(tmp_path), session, ["notes.md", "edited.md", "new.md"])
    assert same == {"notes.md"}


def test_a_baseline_that_does_not_match_its_digest_counts_as_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_bytes(b"mine")
    session = _baseline(tmp_path, {"notes.md": path_digest(str(tmp_path), "notes.md")})
    (tmp_path / ".plangate" / "session" / "s1.json").write_bytes(b'{"files": {}}')
    assert unchanged_since_baseline(str(tmp_path), session, ["notes.md"]) == set()
    missing = session._replace(baseline=".plangate/session/none.json")
    assert unchanged_since_baseline(str(tmp_path), missing, ["notes.md"]) == set()


def test_an_exec_run_is_live_while_its_process_holds_the_task_lock(tmp_path: Path) -> None:
    locks = tmp_path / ".plangate" / "locks"
    locks.mkdir(parents=True)
    assert not exec_run_alive(str(tmp_path), "TASK-0001")  # no lock file
    (locks / "TASK-0001.lock").write_bytes(b"")
    assert not exec_run_alive(str(tmp_path), "TASK-0001")  # nobody holds it
    fd = os.open(locks / "TASK-0001.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert exec_run_alive(str(tmp_path), "TASK-0001")
    finally:
        os.close(fd)
    assert not exec_run_alive(str(tmp_path), "TASK-0001")


def test_a_lock_that_is_a_link_is_no_live_run(tmp_path: Path) -> None:
    locks = tmp_path / ".plangate" / "locks"
    locks.mkdir(parents=True)
    (tmp_path / "elsewhere").write_bytes(b"")
    (locks / "TASK-0001.lock").symlink_to(tmp_path / "elsewhere")
    fd = os.open(tmp_path / "elsewhere", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert not exec_run_alive(str(tmp_path), "TASK-0001")
    finally:
        os.close(fd)
