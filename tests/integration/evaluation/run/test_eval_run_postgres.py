"""``eval run`` with the ledger on PostgreSQL (real server started by scripts/test.sh)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from plangate.ledger import open_ledger
from support.cli import RunCli
from support.evalrun import GOOD_VERIFIER, build_harness_repo

pytestmark = pytest.mark.postgres

VERIFIER = "harness/verifiers/completion_evidence.py"
CRASHING_VERIFIER = GOOD_VERIFIER.replace(
    "def check(fixture):\n",
    "def check(fixture):\n    if fixture.get('tests_pass') is False:\n"
    "        raise RuntimeError('boom')\n",
)


@pytest.fixture
def pg_ledger_url(pg_url: str) -> Iterator[str]:
    """A fresh database on the test server, dropped afterwards."""
    import psycopg
    from psycopg import sql

    name = "plangate_evalrun_" + uuid.uuid4().hex[:16]
    with psycopg.connect(pg_url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = urlsplit(pg_url)
    yield urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    with psycopg.connect(pg_url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def test_pass_then_a_rerunnable_preflight_and_a_final_inconclusive_on_postgresql(
    tmp_path: Path, run_cli: RunCli, pg_ledger_url: str
) -> None:
    env = {**os.environ, "PLANGATE_LEDGER_URL": pg_ledger_url}
    harness = build_harness_repo(tmp_path, env={"PLANGATE_LEDGER_URL": pg_ledger_url})
    good, commit = harness.candidate("good", {VERIFIER: GOOD_VERIFIER})
    review = harness.review("candidate:good:v1", commit)
    assert run_cli(harness.repo, "eval", "review", "add", good, str(review), env=env).code == 0
    result = run_cli(harness.repo, "eval", "run", good, "--jobs", "2", "--json", env=env)
    assert result.code == 0, result.err
    assert json.loads(result.out)["verdict"] == "PASS"

    # A missing review stops the run before any trial: INCONCLUSIVE, not final.
    unreviewed, unreviewed_commit = harness.candidate("unreviewed", {VERIFIER: CRASHING_VERIFIER})
    first = run_cli(harness.repo, "eval", "run", unreviewed, "--json", env=env)
    assert first.code == 4
    assert [r["code"] for r in json.loads(first.out)["reasons"]] == ["INDEPENDENCE_INSUFFICIENT"]
    # Trial evidence is final: crashing trials end INCONCLUSIVE and a later run cannot
    # overturn it.
    review = harness.review("candidate:unreviewed:v1", unreviewed_commit)
    assert run_cli(harness.repo, "eval", "review", "add", unreviewed, str(review), env=env).code == 0
    crashed = run_cli(harness.repo, "eval", "run", unreviewed, "--json", env=env)
    assert crashed.code == 4
    assert "TRIALS_INCOMPLETE" in [r["code"] for r in json.loads(crashed.out)["reasons"]]
    again = run_cli(harness.repo, "eval", "run", unreviewed, "--json", env=env)
    assert again.code == 4
    assert [r["code"] for r in json.loads(again.out)["reasons"]] == [
        "EVALUATION_ALREADY_INCONCLUSIVE"
    ]
    assert not (harness.repo / ".plangate" / "ledger.sqlite3").exists()
    with open_ledger(harness.repo, {"PLANGATE_LEDGER_URL": pg_ledger_url}) as ledger:
        assert ledger.verify().verdict == "INTACT"
        kinds = [e.kind for e in ledger.entries()]
    assert kinds.count("eval_promotion_decision") == 4
    assert kinds.count("eval_experiment_result") == 4
    assert kinds.count("eval_review_added") == 2
