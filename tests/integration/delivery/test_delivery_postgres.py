"""Delivery transitions land in a PostgreSQL ledger exactly as in the SQLite default."""

from __future__ import annotations

import json
import os

import pytest

from plangate.ledger import open_ledger
from support.delivery import NOW, TASK, fresh_pg_database, make_approved


@pytest.mark.postgres
def test_transitions_go_to_the_postgresql_ledger(git_repo, run_cli, pg_url):
    with fresh_pg_database(pg_url) as url:
        env = {**os.environ, "PLANGATE_LEDGER_URL": url}
        task = make_approved(git_repo, lambda cwd, *argv, **kw: run_cli(cwd, *argv, env=env))
        head = task.pr_commit()
        path = task.write_snapshot(task.snapshot(head))
        argv = ["delivery", "assess", TASK, "--snapshot", str(path), "--now", NOW, "--json"]
        first = run_cli(task.repo, *argv, env=env)
        assert first.code == 0, first.err
        second = run_cli(task.repo, *argv, env=env)
        assert second.code == 0
        rows = [json.loads(line) for line in task.record_path.read_text().splitlines()]
        with open_ledger(task.repo, env) as ledger:
            entries = ledger.entries(kind="delivery_transition", subject=TASK)
            assert ledger.verify().verdict == "INTACT"
        assert [e.payload["entry_id"] for e in entries] == [r["entry_id"] for r in rows]
        # nothing went to a local SQLite file instead
        assert not (task.repo / ".plangate" / "ledger.sqlite3").exists()
