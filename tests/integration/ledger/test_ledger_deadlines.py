"""A ledger lock held by someone else ends in a clear refusal before the hook's deadline,
and connection passwords never reach what the user or the agent reads."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from plangate.ledger import LedgerError
from plangate.ledger import postgres as postgres_backend
from plangate.ledger import sqlite as sqlite_backend
from support.cli import RunCli
from support.hooks import claude_payload, hook_env, run_hook
from support.ledger import Backend, backend_fixture  # noqa: F401 -- the fixture

SECRET = "Sup3r-s3cret-pw"


def test_sqlite_lock_held_elsewhere_is_a_lock_timeout(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name != "sqlite":
        pytest.skip("the PostgreSQL lock is tested below")
    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_SECONDS", 0.3)
    holder = sqlite3.connect(backend.sqlite_path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with backend.open() as ledger:
            started = time.monotonic()
            with pytest.raises(LedgerError) as info:
                ledger.append("c3_issue", "TASK-0001", {"n": 2})
            waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert info.value.code == "LEDGER_LOCK_TIMEOUT"
    assert waited < 5  # the patched wait, not the 60 s of old
    with backend.open() as ledger:
        assert [e.payload["n"] for e in ledger.entries()] == [1]


@pytest.mark.postgres
def test_postgres_head_lock_held_by_an_idle_session_is_a_lock_timeout(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name != "postgresql":
        pytest.skip("PostgreSQL only")
    import psycopg

    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    monkeypatch.setattr(postgres_backend, "LEDGER_LOCK_WAIT_SECONDS", 1)
    holder = psycopg.connect(backend.env["PLANGATE_LEDGER_URL"])
    try:
        # An idle session inside a transaction that holds the head row.
        holder.execute("SELECT * FROM plangate_ledger_head WHERE id = 1 FOR UPDATE")
        with backend.open() as ledger, pytest.raises(LedgerError) as info:
            ledger.append("c3_issue", "TASK-0001", {"n": 2})
    finally:
        holder.rollback()
        holder.close()
    assert info.value.code == "LEDGER_LOCK_TIMEOUT"
    assert "pg_stat_activity" in info.value.hint
    with backend.open() as ledger:
        assert [e.payload["n"] for e in ledger.entries()] == [1]


@pytest.mark.postgres
def test_postgres_statement_timeout_is_its_own_code(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name != "postgresql":
        pytest.skip("PostgreSQL only")
    import psycopg

    with backend.open() as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    # A lock wait longer than the statement limit: the statement limit trips first.
    monkeypatch.setattr(postgres_backend, "LEDGER_LOCK_WAIT_SECONDS", 30)
    monkeypatch.setattr(postgres_backend, "LEDGER_STATEMENT_TIMEOUT_SECONDS", 1)
    holder = psycopg.connect(backend.env["PLANGATE_LEDGER_URL"])
    try:
        holder.execute("SELECT * FROM plangate_ledger_head WHERE id = 1 FOR UPDATE")
        with backend.open() as ledger, pytest.raises(LedgerError) as info:
            ledger.append("c3_issue", "TASK-0001", {"n": 2})
    finally:
        holder.rollback()
        holder.close()
    assert info.value.code == "LEDGER_STATEMENT_TIMEOUT"


def _unreachable(password_form: str) -> str:
    # Port 1 on loopback: connection refused at once, the error quotes the target.
    return password_form.replace("PW", SECRET)


PASSWORD_URLS = [
    "postgresql://alice:PW@127.0.0.1:1/plangate",
    "postgresql://alice@127.0.0.1:1/plangate?password=PW",
    "postgresql://alice@127.0.0.1:1/plangate?sslpassword=PW&sslmode=disable",
]


@pytest.mark.parametrize("url", PASSWORD_URLS)
def test_ledger_commands_never_print_the_password(
    git_repo: Path, run_cli: RunCli, url: str
) -> None:
    env = {"PLANGATE_LEDGER_URL": _unreachable(url)}
    for argv in (("ledger", "verify"), ("ledger", "log", "--json"), ("ledger", "verify", "--json")):
        res = run_cli(git_repo, *argv, env=env)
        assert res.code == 1, res
        assert SECRET not in res.out + res.err
        assert "LEDGER_UNAVAILABLE" in res.err


@pytest.mark.parametrize("url", PASSWORD_URLS)
def test_a_hook_deny_message_never_carries_the_password(git_repo: Path, url: str) -> None:
    env = hook_env(PLANGATE_LEDGER_URL=_unreachable(url))
    payload = claude_payload(
        "PreToolUse", git_repo, "Write", {"file_path": str(git_repo / "a.txt"), "content": "x"}
    )
    res = run_hook(git_repo, "claude", payload, env)
    text = res.out + res.err
    assert SECRET not in text
    assert "HOOK_LEDGER" in text
    decision = json.loads(res.out)
    assert "deny" in json.dumps(decision)
