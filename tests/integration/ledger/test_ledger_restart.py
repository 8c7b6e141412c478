"""A ledger the repository says existed is never re-created silently: deleted or emptied
SQLite files and dropped PostgreSQL tables are refusals; 'ledger init --force' starts over
explicitly and the new chain's first entry records it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from plangate.ledger import LedgerError, open_ledger
from plangate.ledger.traces import IGNORE_FILE_HEADER
from support.cli import RunCli
from support.hooks import claude_payload, hook_env, run_hook
from support.ledger import Backend, backend_fixture  # noqa: F401 -- the fixture


def _task(repo: Path, name: str = "TASK-0001") -> Path:
    task = repo / "docs" / "working" / name
    task.mkdir(parents=True, exist_ok=True)
    return task


def _run_log(repo: Path) -> None:
    (_task(repo) / "run.ndjson").write_text('{"event":"exec_started"}\n')


def _issued_record(repo: Path) -> None:
    approvals = _task(repo) / "approvals"
    approvals.mkdir(exist_ok=True)
    (approvals / "c3.json").write_text(json.dumps({"approval_kind": "c3-prime"}))


def _delivery_log(repo: Path) -> None:
    delivery = _task(repo) / "delivery"
    delivery.mkdir(exist_ok=True)
    (delivery / "record.jsonl").write_text("{}\n")


def _configured(repo: Path) -> None:
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate" / "config.toml").write_text('[ledger]\nurl = "sqlite:.plangate/x.db"\n')


def _ignore_file(repo: Path) -> None:
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate" / ".gitignore").write_bytes(IGNORE_FILE_HEADER + b"/ledger.sqlite3\n")


TRACES = {
    "run_log": _run_log,
    "issued_record": _issued_record,
    "delivery_log": _delivery_log,
    "ignore_file": _ignore_file,
}


def _ledger_absent(backend: Backend) -> bool:
    if backend.name == "sqlite":
        return not backend.sqlite_path.exists()
    import psycopg

    with psycopg.connect(backend.env["PLANGATE_LEDGER_URL"]) as conn:
        row = conn.execute("SELECT to_regclass('plangate_ledger_entries') IS NULL").fetchone()
    return bool(row and row[0])


def _lose(backend: Backend) -> None:
    """Delete the SQLite file, or drop the PostgreSQL tables."""
    if backend.name == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{backend.sqlite_path}{suffix}").unlink(missing_ok=True)
        return
    import psycopg

    with psycopg.connect(backend.env["PLANGATE_LEDGER_URL"]) as conn:
        conn.execute("DROP TABLE plangate_ledger_entries, plangate_ledger_head")


def _fill_ledger(backend: Backend) -> tuple[int, str]:
    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"decision": "AUTO_APPROVED"})
        entry = ledger.append("exec_started", "TASK-0001", {"run_id": "r1", "task_id": "TASK-0001"})
    return entry.seq, entry.entry_hash


@pytest.mark.parametrize("trace", sorted(TRACES))
def test_a_lost_ledger_is_refused_by_writers_and_readers_when_a_trace_says_it_existed(
    backend: Backend, trace: str
) -> None:
    if trace == "ignore_file" and backend.name != "sqlite":
        pytest.skip("the ignore file is a trace of the default SQLite ledger only")
    _fill_ledger(backend)
    TRACES[trace](backend.repo)
    _lose(backend)
    for create in (True, False):
        with pytest.raises(LedgerError) as info:
            open_ledger(backend.repo, backend.env, create=create)
        assert info.value.code == "LEDGER_MISSING"
        assert "init --force" in info.value.hint
    assert _ledger_absent(backend)  # nothing was re-created


def test_a_configured_ledger_is_never_created_implicitly(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _configured(repo)
    with pytest.raises(LedgerError) as info:
        open_ledger(repo, {})
    assert info.value.code == "LEDGER_MISSING"
    assert "config.toml" in info.value.message
    assert not (repo / ".plangate" / "x.db").exists()


def test_the_ignore_file_speaks_only_for_the_default_ledger(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _ignore_file(repo)
    elsewhere = tmp_path / "elsewhere.sqlite3"
    with open_ledger(repo, {"PLANGATE_LEDGER_URL": f"sqlite:///{elsewhere}"}) as ledger:
        assert ledger.head().seq == 0  # a new ledger at a configured place: created
    with pytest.raises(LedgerError) as info:
        open_ledger(repo, {})  # the default ledger: the ignore file says it existed
    assert info.value.code == "LEDGER_MISSING"


def test_sqlite_journal_files_alone_say_the_ledger_existed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".plangate").mkdir(parents=True)
    (repo / ".plangate" / "ledger.sqlite3-wal").write_bytes(b"")
    with pytest.raises(LedgerError) as info:
        open_ledger(repo, {})
    assert info.value.code == "LEDGER_MISSING"
    assert not (repo / ".plangate" / "ledger.sqlite3").exists()


def test_legacy_records_and_other_files_do_not_count(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    approvals = _task(repo) / "approvals"
    approvals.mkdir()
    (approvals / "c3.json").write_text(json.dumps({"c3_status": "approved"}))
    (_task(repo) / "plan.md").write_text("# plan\n")
    with open_ledger(repo, {}) as ledger:  # a new repository: created
        assert ledger.head().seq == 0
    assert (repo / ".plangate" / "ledger.sqlite3").stat().st_size > 0


def test_a_new_repository_gets_its_ledger_on_first_write(backend: Backend) -> None:
    assert _ledger_absent(backend)
    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    assert not _ledger_absent(backend)


def test_readers_of_a_never_created_ledger_see_it_empty_and_create_nothing(
    backend: Backend,
) -> None:
    with backend.open(create=False) as ledger:
        assert ledger.entries() == []
        assert ledger.verify().verdict == "INTACT"
    assert _ledger_absent(backend)


@pytest.mark.parametrize("content", [b"", b"SQLite format 3\x00" + b"\x00" * 84])
def test_an_emptied_sqlite_file_is_refused_by_everyone(tmp_path: Path, content: bytes) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with open_ledger(repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    path = repo / ".plangate" / "ledger.sqlite3"
    path.write_bytes(content)
    for create in (True, False):
        with pytest.raises(LedgerError) as info:
            open_ledger(repo, {}, create=create)
        assert info.value.code in ("LEDGER_MISSING", "LEDGER_UNAVAILABLE")
    assert path.read_bytes() == content  # never initialised in place


def test_a_database_without_the_ledger_tables_is_missing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".plangate").mkdir(parents=True)
    conn = sqlite3.connect(repo / ".plangate" / "ledger.sqlite3")
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError) as info:
        open_ledger(repo, {})
    assert info.value.code == "LEDGER_MISSING"


def test_a_half_schema_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with open_ledger(repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    conn = sqlite3.connect(repo / ".plangate" / "ledger.sqlite3")
    conn.execute("DROP TABLE ledger_head")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError) as info:
        open_ledger(repo, {})
    assert info.value.code == "LEDGER_SCHEMA_INCOMPLETE"


def test_hooks_never_create_a_ledger(backend: Backend) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(backend.repo)], check=True)
    payload = claude_payload(
        "PreToolUse",
        backend.repo,
        "Write",
        {"file_path": str(backend.repo / "docs/working/TASK-0009/plan.md"), "content": "x"},
    )
    result = run_hook(backend.repo, "claude", payload, hook_env(None, **backend.env))
    assert result.code == 2
    assert "HOOK_LEDGER_MISSING" in result.err
    assert _ledger_absent(backend)
    # Once a ledger existed and was lost, the same holds.
    _fill_ledger(backend)
    _lose(backend)
    result = run_hook(backend.repo, "claude", payload, hook_env(None, **backend.env))
    assert "HOOK_LEDGER_MISSING" in result.err
    assert _ledger_absent(backend)


def test_init_force_starts_over_and_records_the_restart(backend: Backend, run_cli: RunCli) -> None:
    seq, head_hash = _fill_ledger(backend)
    _run_log(backend.repo)
    res = run_cli(backend.repo, "ledger", "init", env=backend.env)
    assert res.code == 0
    assert "already initialised" in res.out
    res = run_cli(backend.repo, "ledger", "init", "--force", "--json", env=backend.env)
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["action"] == "reinitialised"
    assert doc["previous_head"] == {"seq": seq, "hash": head_hash}
    with backend.open(create=False) as ledger:
        entries = ledger.entries()
        assert ledger.verify().verdict == "INTACT"
    assert [e.kind for e in entries] == ["ledger_reinitialised"]
    first = entries[0]
    assert first.seq == 1
    assert first.payload["previous_head_seq"] == seq
    assert first.payload["previous_head_hash"] == head_hash
    assert first.payload["previous_state"] == "present"
    assert any("run logs" in t for t in first.payload["repository_traces"])
    if backend.name == "sqlite":
        # The old ledger was moved aside, whole, never deleted.
        aside = backend.sqlite_path.parent / first.payload["moved_aside_to"]
        with open_ledger(backend.repo, {"PLANGATE_LEDGER_URL": f"sqlite:///{aside}"}) as old:
            assert old.head().seq == seq
            assert old.verify().verdict == "INTACT"


def test_init_force_after_a_loss_records_an_unknown_previous_head(
    backend: Backend, run_cli: RunCli
) -> None:
    _fill_ledger(backend)
    _run_log(backend.repo)
    _lose(backend)
    res = run_cli(backend.repo, "ledger", "init", env=backend.env)
    assert res.code == 1
    assert "LEDGER_MISSING" in res.err
    assert _ledger_absent(backend)
    res = run_cli(backend.repo, "ledger", "init", "--force", env=backend.env)
    assert res.code == 0, res.err
    with backend.open() as ledger:
        (entry,) = ledger.entries()
    assert entry.kind == "ledger_reinitialised"
    assert entry.payload["previous_state"] == "absent"
    assert entry.payload["previous_head_seq"] is None


def test_exec_refuses_when_the_ledger_was_deleted(git_repo: Path, run_cli: RunCli) -> None:
    from support.hooks import approved_repo

    repo = approved_repo(git_repo)
    ledger_file = repo / ".plangate" / "ledger.sqlite3"
    assert ledger_file.exists()
    ledger_file.unlink()
    res = run_cli(repo, "exec", "TASK-0001", "--", "true", env={})
    assert res.code == 1
    assert "LEDGER_MISSING" in res.out + res.err
    assert not ledger_file.exists()


def test_a_symlinked_plangate_directory_is_never_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".plangate").symlink_to(outside, target_is_directory=True)
    for create in (True, False):
        with pytest.raises(LedgerError) as info:
            open_ledger(repo, {}, create=create)
        # Its configuration is the first file PlanGate would read through the link.
        assert info.value.code == "LEDGER_CONFIG_INVALID"
        assert ".plangate is a symbolic link" in info.value.message
    assert list(outside.iterdir()) == []  # nothing written through the link


def test_a_symlinked_ignore_file_is_never_written_through(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".plangate").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (repo / ".plangate" / ".gitignore").symlink_to(victim)
    with open_ledger(repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    assert victim.read_text() == "keep me\n"
    assert (repo / ".plangate" / ".gitignore").is_symlink()


def test_no_temporary_file_is_left_after_creation(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with open_ledger(repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    names = sorted(p.name for p in (repo / ".plangate").iterdir())
    assert names in (
        [".gitignore", "ledger.sqlite3"],
        [".gitignore", "ledger.sqlite3", "ledger.sqlite3-shm", "ledger.sqlite3-wal"],
    )


@pytest.mark.postgres
def test_a_schema_half_seen_while_another_process_creates_it_is_read_again(
    backend: Backend,
) -> None:
    """Catalog lookups take no lock: a creator committing between them looks like half a
    schema. Opening waits for the schema lock and reads again instead of refusing."""
    if backend.name != "postgresql":
        pytest.skip("PostgreSQL only")
    import threading

    import psycopg

    from plangate.ledger.postgres import SCHEMA_LOCK_KEY

    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    url = backend.env["PLANGATE_LEDGER_URL"]
    with psycopg.connect(url, autocommit=True) as setter:
        setter.execute("ALTER TABLE plangate_ledger_head RENAME TO plangate_ledger_head_aside")
    creator = psycopg.connect(url)
    outcome: list[object] = []

    def open_it() -> None:
        try:
            with backend.open() as opened:
                outcome.append([e.payload["n"] for e in opened.entries()])
        except LedgerError as exc:
            outcome.append(exc.code)

    try:
        # A creator in the middle of its transaction: it holds the schema lock and
        # the half schema is what everyone else sees until it commits.
        creator.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
        creator.execute("ALTER TABLE plangate_ledger_head_aside RENAME TO plangate_ledger_head")
        opener = threading.Thread(target=open_it)
        opener.start()
        opener.join(timeout=1.0)
        assert opener.is_alive(), f"opened without waiting for the creator: {outcome}"
        creator.commit()
        opener.join(timeout=30)
    finally:
        creator.close()
    assert outcome == [[1]]


@pytest.mark.postgres
def test_a_half_postgres_schema_nobody_is_creating_is_refused(backend: Backend) -> None:
    if backend.name != "postgresql":
        pytest.skip("PostgreSQL only")
    import psycopg

    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    with psycopg.connect(backend.env["PLANGATE_LEDGER_URL"], autocommit=True) as setter:
        setter.execute("ALTER TABLE plangate_ledger_head RENAME TO plangate_ledger_head_aside")
    with pytest.raises(LedgerError) as info:
        backend.open()
    assert info.value.code == "LEDGER_SCHEMA_INCOMPLETE"
    assert "plangate_ledger_head" in str(info.value)
