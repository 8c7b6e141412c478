"""``plangate exec`` with the PostgreSQL ledger (the server started by scripts/test.sh)."""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from plangate.ledger import open_ledger
from support.plan_tasks import approve_task

pytestmark = pytest.mark.postgres


@pytest.fixture
def exec_pg_url(pg_url: str) -> Iterator[str]:
    """A fresh database on the throwaway server, dropped afterwards."""
    import psycopg

    name = f"plangate_exec_{secrets.token_hex(6)}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(pg_url)
    yield urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_exec_records_in_postgres(
    git_repo: Path, tmp_path: Path, run_cli, exec_pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue and exec both see the same ledger configuration, as a user's shell would.
    monkeypatch.setenv("PLANGATE_LEDGER_URL", exec_pg_url)
    approve_task(git_repo, run_cli)
    marker = tmp_path / "ran"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('x')"]
    result = run_cli(git_repo, "exec", "TASK-0001", "--no-isolation", "--", *command, tty=True)
    assert result.code == 0, result.err
    assert marker.exists()
    with open_ledger(git_repo, {"PLANGATE_LEDGER_URL": exec_pg_url}) as ledger:
        kinds = [e.kind for e in ledger.entries(subject="TASK-0001")]
        assert kinds[-3:] == ["exec_started", "exec_unisolated", "exec_ended"]
        assert ledger.verify().accepted
    assert not (git_repo / ".plangate" / "ledger.sqlite3").exists()
