"""Test support for the ledger: a fresh PostgreSQL database per test, and raw
storage access that bypasses the ledger API (to play the attacker)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from plangate.ledger import Ledger, open_ledger

Row = tuple[object, ...]  # (seq, kind, subject, payload, at, prev_hash, entry_hash)

@contextmanager
def fresh_pg_database(base_url: str) -> Iterator[str]:
    """Create an empty database on the test server; yield its URL; drop it afterwards."""
    import psycopg
    from psycopg import sql

    name = "plangate_t_" + uuid.uuid4().hex[:20]
    try:
        admin = psycopg.connect(base_url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        pytest.fail(f"the test PostgreSQL server at {base_url} is unreachable: {exc}")
    with admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = urlsplit(base_url)
    url = urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    try:
        yield url
    finally:
        with psycopg.connect(base_url, autocommit=True, connect_timeout=10) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@dataclass
class Backend:
    """One ledger backend under test: where it lives and raw access to its storage."""

    name: str  # "sqlite" or "postgresql"
    repo: Path
    env: dict[str, str]

    def open(self, **kwargs: object) -> Ledger:
        """Open the ledger through the public API."""
        return open_ledger(self.repo, self.env, **kwargs)  # type: ignore[arg-type]

    @property
    def sqlite_path(self) -> Path:
        return self.repo / ".plangate" / "ledger.sqlite3"

    # -- raw storage (the attacker's view) ----------------------------------

    def raw_rows(self) -> list[Row]:
        """Every stored row, as stored, in seq order."""
        if self.name == "sqlite":
            with sqlite3.connect(self.sqlite_path) as conn:
                return list(conn.execute("SELECT seq, kind, subject, payload, at, prev_hash, entry_hash FROM ledger_entries ORDER BY seq"))
        import psycopg

        with psycopg.connect(self.env["PLANGATE_LEDGER_URL"]) as conn:
            return list(
                conn.execute("SELECT seq, kind, subject, payload, at, prev_hash, entry_hash FROM plangate_ledger_entries ORDER BY seq")
            )

    def raw_head(self) -> tuple[object, object]:
        """(seq, entry_hash) of the head row."""
        if self.name == "sqlite":
            with sqlite3.connect(self.sqlite_path) as conn:
                row = conn.execute("SELECT seq, entry_hash FROM ledger_head").fetchone()
        else:
            import psycopg

            with psycopg.connect(self.env["PLANGATE_LEDGER_URL"]) as conn:
                row = conn.execute("SELECT seq, entry_hash FROM plangate_ledger_head").fetchone()
        assert row is not None
        return row[0], row[1]

    def rewrite(self, rows: Sequence[Row], head: tuple[object, object] | None = None) -> None:
        """Replace the stored rows (and optionally the head), bypassing the triggers."""
        if self.name == "sqlite":
            conn = sqlite3.connect(self.sqlite_path, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("DROP TRIGGER IF EXISTS ledger_entries_no_update")
                conn.execute("DROP TRIGGER IF EXISTS ledger_entries_no_delete")
                conn.execute("DELETE FROM ledger_entries")
                conn.executemany(
                    "INSERT INTO ledger_entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows
                )
                if head is not None:
                    conn.execute("UPDATE ledger_head SET seq = ?, entry_hash = ?", head)
                conn.execute("COMMIT")
            finally:
                conn.close()
            return
        import psycopg

        with psycopg.connect(self.env["PLANGATE_LEDGER_URL"]) as conn:
            # A superuser session may skip user triggers, as a database owner could.
            conn.execute("SET session_replication_role = replica")
            conn.execute("DELETE FROM plangate_ledger_entries")
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO plangate_ledger_entries VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    rows,
                )
            if head is not None:
                conn.execute("UPDATE plangate_ledger_head SET seq = %s, entry_hash = %s", head)


@contextmanager
def make_backend(name: str, tmp_path: Path, pg_base_url: str | None) -> Iterator[Backend]:
    """A fresh, empty ledger location of the named backend."""
    repo = tmp_path / f"repo-{name}"
    repo.mkdir(parents=True, exist_ok=True)
    if name == "sqlite":
        yield Backend(name, repo, {})
        return
    if not pg_base_url:
        pytest.fail(
            "PLANGATE_TEST_PG_URL is not set: run the suite through scripts/test.sh "
            "(it starts the PostgreSQL server)"
        )
    with fresh_pg_database(pg_base_url) as url:
        yield Backend(name, repo, {"PLANGATE_LEDGER_URL": url})


@pytest.fixture(
    name="backend",
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def backend_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh, empty ledger: SQLite in a temp repository, or a new PostgreSQL database.

    Imported by the test modules (not a conftest.py, so that the root
    ``conftest`` module name stays the suite's own).
    """
    pg_base_url: str | None = None
    if request.param == "postgresql":
        pg_base_url = request.getfixturevalue("pg_url")
    with make_backend(request.param, tmp_path, pg_base_url) as made:
        yield made
