"""Both backends, real databases: append, read, verify, refuse, survive concurrency and kills."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plangate.canonical import canonical_bytes, sha256_digest
from plangate.ledger import GENESIS_PREV_HASH, LedgerError, open_ledger
from plangate.ledger.chain import verify_export_bytes
from support.ledger import Backend, backend_fixture  # noqa: F401 -- the fixture


def fixed_clock() -> datetime:
    return datetime(2026, 12, 2, 10, 0, 0, 123456, tzinfo=UTC)


def test_append_returns_chained_entries_and_verify_is_intact(backend: Backend) -> None:
    with backend.open(clock=fixed_clock) as ledger:
        first = ledger.append("c3_issue", "TASK-0001", {"decision": "AUTO_APPROVED", "n": 1})
        second = ledger.append("exec_started", "TASK-0001", {"snapshot": "sha256:" + "a" * 64})
        assert (first.seq, second.seq) == (1, 2)
        assert first.prev_hash == GENESIS_PREV_HASH
        assert second.prev_hash == first.entry_hash
        assert first.at == "2026-12-02T10:00:00Z"
        # The hash is exactly the documented construction.
        assert first.entry_hash == sha256_digest(
            canonical_bytes(
                {
                    "v": 1,
                    "seq": 1,
                    "kind": "c3_issue",
                    "subject": "TASK-0001",
                    "payload": {"decision": "AUTO_APPROVED", "n": 1},
                    "at": "2026-12-02T10:00:00Z",
                    "prev_hash": GENESIS_PREV_HASH,
                }
            )
        )
        result = ledger.verify()
        assert result.verdict == "INTACT"
        assert result.exit_code == 0
        assert result.facts["entries"] == 2
        assert result.facts["head_hash"] == second.entry_hash
        assert result.facts["backend"] == backend.name
    # Reopened, the same entries come back, in order.
    with backend.open() as ledger:
        assert [e.entry_hash for e in ledger.entries()] == [first.entry_hash, second.entry_hash]
        assert ledger.head().seq == 2


def test_entries_filter_by_kind_and_subject(backend: Backend) -> None:
    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"i": 1})
        ledger.append("c3_issue", "TASK-0002", {"i": 2})
        ledger.append("exec_started", "TASK-0001", {"i": 3})
        assert [e.seq for e in ledger.entries(kind="c3_issue")] == [1, 2]
        assert [e.seq for e in ledger.entries(subject="TASK-0001")] == [1, 3]
        assert [e.seq for e in ledger.entries(kind="c3_issue", subject="TASK-0002")] == [2]
        assert ledger.entries(kind="arbiter_decision") == []
        assert ledger.entries(kind="c3_issue")[1].payload == {"i": 2}


@pytest.mark.parametrize(
    "payload",
    [
        {"api_key": "x"},
        {"outer": {"Token": "x"}},
        {"list": [{"ok": 1}, {"PASSWORD": "x"}]},
        {"deep": {"a": {"b": {"Authorization": "Bearer x"}}}},
        {"raw_transcript": "..."},
        {"Chain-Of-Thought": "..."},
        {"transcript": []},
        {"secret": None},
    ],
)
def test_forbidden_payload_keys_are_refused_and_nothing_is_written(
    backend: Backend, payload: dict[str, object]
) -> None:
    with backend.open() as ledger:
        with pytest.raises(LedgerError) as info:
            ledger.append("c3_issue", "TASK-0001", payload)
        assert info.value.code == "LEDGER_FORBIDDEN_KEY"
        assert ledger.entries() == []
        assert ledger.head().seq == 0


@pytest.mark.parametrize(
    ("kind", "subject", "payload", "code"),
    [
        ("C3Issue", "TASK-0001", {}, "LEDGER_KIND_INVALID"),
        ("", "TASK-0001", {}, "LEDGER_KIND_INVALID"),
        ("c3_issue", "", {}, "LEDGER_SUBJECT_INVALID"),
        ("c3_issue", "TASK\n0001", {}, "LEDGER_SUBJECT_INVALID"),
        ("c3_issue", "TASK-0001", {"n": float("nan")}, "LEDGER_PAYLOAD_INVALID"),
        ("c3_issue", "TASK-0001", {"obj": object()}, "LEDGER_PAYLOAD_INVALID"),
        ("c3_issue", "TASK-0001", ["not", "an", "object"], "LEDGER_PAYLOAD_INVALID"),
        ("c3_issue", "TASK-0001", {"n": 2**53 + 1}, "LEDGER_PAYLOAD_INVALID"),
    ],
)
def test_invalid_entries_are_refused(
    backend: Backend, kind: str, subject: str, payload: object, code: str
) -> None:
    with backend.open() as ledger:
        with pytest.raises(LedgerError) as info:
            ledger.append(kind, subject, payload)  # type: ignore[arg-type]
        assert info.value.code == code
        assert ledger.verify().facts["entries"] == 0


def test_stored_entries_cannot_be_updated_or_deleted_through_sql(backend: Backend) -> None:
    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"i": 1})
    if backend.name == "sqlite":
        conn = sqlite3.connect(backend.sqlite_path)
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE ledger_entries SET subject = 'TASK-0002'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("DELETE FROM ledger_entries")
        conn.close()
    else:
        import psycopg

        for statement in (
            "UPDATE plangate_ledger_entries SET subject = 'TASK-0002'",
            "DELETE FROM plangate_ledger_entries",
            "TRUNCATE plangate_ledger_entries",
        ):
            with (
                psycopg.connect(backend.env["PLANGATE_LEDGER_URL"]) as conn,
                pytest.raises(psycopg.errors.RaiseException, match="append-only"),
            ):
                conn.execute(statement)
    assert backend.raw_rows()[0][2] == "TASK-0001"


def test_a_ledger_that_cannot_be_opened_raises_ledger_error_with_a_hint(
    backend: Backend, tmp_path: Path
) -> None:
    if backend.name == "sqlite":
        (backend.repo / ".plangate").write_text("a file where the directory should be\n")
        env: dict[str, str] = {}
    else:
        # A port nothing listens on: the server is unreachable.
        import socket

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        env = {"PLANGATE_LEDGER_URL": f"postgresql://nobody:hunter2@127.0.0.1:{port}/x"}
    with pytest.raises(LedgerError) as info:
        open_ledger(backend.repo, env)
    assert info.value.code == "LEDGER_UNAVAILABLE"
    assert info.value.hint
    assert "hunter2" not in info.value.message


def test_sqlite_ledger_refuses_a_symlink_in_its_place(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".plangate").mkdir(parents=True)
    (tmp_path / "elsewhere.sqlite3").write_bytes(b"")
    (repo / ".plangate" / "ledger.sqlite3").symlink_to(tmp_path / "elsewhere.sqlite3")
    with pytest.raises(LedgerError) as info:
        open_ledger(repo, {})
    assert info.value.code == "LEDGER_UNAVAILABLE"


def test_sqlite_default_location_is_ignored_by_git_and_read_only_open_creates_nothing(
    git_repo: Path,
) -> None:
    from support.repo import git

    with open_ledger(git_repo, {}, create=False) as ledger:
        assert ledger.verify().facts["entries"] == 0
        with pytest.raises(LedgerError):
            ledger.append("c3_issue", "TASK-0001", {})
    assert not (git_repo / ".plangate").exists()
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {})
    assert (git_repo / ".plangate" / "ledger.sqlite3").is_file()
    status = git(git_repo, "status", "--porcelain", "--untracked-files=all")
    assert "ledger.sqlite3" not in status
    assert status == "?? .plangate/.gitignore"


def test_export_and_verify_round_trip(backend: Backend) -> None:
    from plangate.ledger.chain import export_bytes

    with backend.open() as ledger:
        for i in range(5):
            ledger.append("c3_verify", f"TASK-000{i}", {"i": i, "text": "é\u2028\x00"})
        rows, head = ledger.stored_rows()
        data = export_bytes(rows, head)
        result = verify_export_bytes(data, anchor=ledger.entries()[2].entry_hash)
        assert result.verdict == "INTACT"
        assert result.facts["entries"] == 5
        assert result.facts["head_hash"] == ledger.verify().facts["head_hash"]


def _writer(repo: str, env: dict[str, str], writer_id: int, count: int) -> None:
    with open_ledger(Path(repo), env) as ledger:
        for i in range(count):
            ledger.append("exec_started", f"W{writer_id}", {"writer": writer_id, "i": i})


def test_parallel_writer_processes_never_lose_an_entry_or_fork_the_chain(
    backend: Backend,
) -> None:
    writers, per_writer = 4, 50
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=_writer, args=(str(backend.repo), backend.env, w, per_writer))
        for w in range(writers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    with backend.open() as ledger:
        result = ledger.verify()
        assert result.verdict == "INTACT", result.reasons
        assert result.facts["entries"] == writers * per_writer
        entries = ledger.entries()
    assert [e.seq for e in entries] == list(range(1, writers * per_writer + 1))
    for w in range(writers):
        mine = [e.payload["i"] for e in entries if e.subject == f"W{w}"]
        assert mine == list(range(per_writer))  # each writer's entries, all there, in order


def _endless_writer(repo: str, env: dict[str, str]) -> None:
    blob = "x" * 200_000  # a large payload widens the window in which the kill lands
    with open_ledger(Path(repo), env) as ledger:
        i = 0
        while True:
            ledger.append("exec_ended", "KILLED", {"i": i, "blob": blob})
            i += 1


def test_a_writer_killed_mid_append_leaves_whole_entries_only(backend: Backend) -> None:
    ctx = multiprocessing.get_context("fork")
    killed_at: list[int] = []
    for round_no in range(3):
        proc = ctx.Process(target=_endless_writer, args=(str(backend.repo), backend.env))
        proc.start()
        target = (round_no + 1) * 5
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with backend.open() as ledger:
                if ledger.head().seq >= target:
                    break
            time.sleep(0.01)
        time.sleep(0.003 * round_no)  # vary where in an append the kill lands
        assert proc.pid is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=30)
        assert proc.exitcode == -signal.SIGKILL
        with backend.open() as ledger:
            killed_at.append(ledger.head().seq)
    with backend.open() as ledger:
        result = ledger.verify()
        assert result.verdict == "INTACT", result.reasons
        entries = ledger.entries()
        assert len(entries) == killed_at[-1] >= 15
        for entry in entries:
            assert entry.payload["blob"] == "x" * 200_000
        # Each round restarted its counter at 0; the entries are whole and contiguous.
        assert entries[0].payload["i"] == 0
        # The ledger still takes appends after the kills (no stale lock).
        ledger.append("exec_ended", "AFTER", {"ok": True})
        assert ledger.verify().facts["entries"] == len(entries) + 1


def test_verify_while_others_append_never_reports_a_false_break(backend: Backend) -> None:
    # Rows and head are read in one snapshot; otherwise an append landing between
    # the two reads would look like a deleted or forged tail.
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=_writer, args=(str(backend.repo), backend.env, w, 60)) for w in range(2)
    ]
    with backend.open() as ledger:
        ledger.append("c3_issue", "FIRST", {})
    for proc in procs:
        proc.start()
    verdicts: set[str] = set()
    with backend.open() as ledger:
        while any(proc.is_alive() for proc in procs):
            verdicts.add(ledger.verify().verdict)
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert verdicts <= {"INTACT"}
    with backend.open() as ledger:
        assert ledger.verify().facts["entries"] == 121


def test_log_of_an_undecodable_row_fails_closed(backend: Backend) -> None:
    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"a": 1})
    row = backend.raw_rows()[0]
    backend.rewrite([(*row[:3], "{not json", *row[4:])])
    with backend.open() as ledger:
        with pytest.raises(LedgerError) as info:
            ledger.entries()
        assert info.value.code == "LEDGER_CORRUPT"
        assert ledger.verify().codes == ("LEDGER_PAYLOAD_NOT_CANONICAL",)


def test_postgresql_without_psycopg_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    with pytest.raises(LedgerError) as info:
        open_ledger(tmp_path, {"PLANGATE_LEDGER_URL": "postgresql://u@127.0.0.1:1/x"})
    assert info.value.code == "LEDGER_BACKEND_MISSING"
    assert "plangate[postgres]" in info.value.hint


def test_a_deleted_head_is_reported_and_never_silently_recreated(backend: Backend) -> None:
    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {})
        ledger.append("c3_issue", "TASK-0002", {})
    if backend.name == "sqlite":
        with sqlite3.connect(backend.sqlite_path) as conn:
            conn.execute("DELETE FROM ledger_head")
    else:
        import psycopg

        with psycopg.connect(backend.env["PLANGATE_LEDGER_URL"]) as conn:
            conn.execute("DELETE FROM plangate_ledger_head")
    with backend.open() as ledger:
        result = ledger.verify()
        assert result.codes == ("LEDGER_HEAD_MISMATCH",)
        with pytest.raises(LedgerError) as info:
            ledger.append("c3_issue", "TASK-0003", {})
        assert info.value.code == "LEDGER_UNAVAILABLE"
        assert ledger.verify().facts["entries"] == 2


def test_sqlite_file_that_is_not_a_database_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / ".plangate").mkdir()
    (tmp_path / ".plangate" / "ledger.sqlite3").write_bytes(b"not a database" * 100)
    for create in (True, False):
        with pytest.raises(LedgerError) as info:
            open_ledger(tmp_path, {}, create=create)
        assert info.value.code == "LEDGER_UNAVAILABLE"
