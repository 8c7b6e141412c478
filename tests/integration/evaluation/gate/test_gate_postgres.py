"""The whole part-1 journey on a PostgreSQL ledger (real server started by scripts/test.sh)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from plangate.cli.demo.harness import render_plan
from plangate.ledger import open_ledger
from support.cli import RunCli
from support.gate import (  # noqa: F401 -- harness_template is a fixture
    HarnessRepo,
    commit_tracked,
    copy_template,
    harness_template,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_ledger_url(pg_url: str) -> Iterator[str]:
    """A fresh database on the test server, dropped afterwards."""
    import psycopg
    from psycopg import sql

    name = "plangate_gate_" + uuid.uuid4().hex[:16]
    with psycopg.connect(pg_url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = urlsplit(pg_url)
    yield urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    with psycopg.connect(pg_url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def test_journey_on_postgresql_ledger(
    tmp_path: Path,
    harness_template: Path,  # noqa: F811
    run_cli: RunCli,
    pg_ledger_url: str,
) -> None:
    hr: HarnessRepo = copy_template(harness_template, tmp_path, run_cli)
    hr.env = dict(os.environ, PLANGATE_LEDGER_URL=pg_ledger_url)
    # The template's plan lives in its SQLite ledger; register it again in PostgreSQL.
    res = hr.register_plan(render_plan(hr.baseline, hr.manifest_ref))
    assert res.code == 0, res.err
    hr.start_candidate("pg")
    grader = hr.repo / "eval" / "grader.py"
    grader.write_text(grader.read_text() + "# lenient\n")
    commit = commit_tracked(hr.repo, "grader")
    code, verdict = hr.gate(commit, ["harness/prompts/**"])
    assert code == 1
    assert verdict["verdict"] == "DENIED"
    with open_ledger(hr.repo, {"PLANGATE_LEDGER_URL": pg_ledger_url}) as ledger:
        kinds = [e.kind for e in ledger.entries()]
        assert ledger.verify().verdict == "INTACT"
    assert kinds == ["eval_plan_registered", "eval_candidate_registered", "eval_gate_verdict"]
    assert json.loads(hr.cli("ledger", "verify", "--json").out)["verdict"] == "INTACT"
