"""A SQLite ledger per clone: a fresh clone (or CI checkout, or linked worktree) of a
repository with recorded decisions starts its own ledger, while a ledger deleted on the
same clone is still refused. Real repositories: a bare remote, ``git clone``,
``git worktree add``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.ledger import LedgerError, open_ledger, resolve_location
from plangate.ledger.witness import read_witness, witness_path
from support.cli import RunCli
from support.repo import commit_all, git


def _issue_record(repo: Path, task: str = "TASK-0001") -> None:
    approvals = repo / "docs" / "working" / task / "approvals"
    approvals.mkdir(parents=True, exist_ok=True)
    (approvals / "c3.json").write_text(json.dumps({"approval_kind": "c3-prime"}))


def _adopted_remote(git_repo: Path, tmp_path: Path) -> Path:
    """The lead's repository with its ledger, an issued record and the ledger's ignore file
    committed, pushed to a bare remote; returns the remote."""
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"decision": "AUTO_APPROVED"})
    _issue_record(git_repo)
    commit_all(git_repo, "task approved")
    assert "ledger.sqlite3" not in git(git_repo, "ls-files")
    assert ".plangate/.gitignore" in git(git_repo, "ls-files")
    remote = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(git_repo), str(remote))
    return remote


def _clone(remote: Path, where: Path) -> Path:
    git(where.parent, "clone", "-q", str(remote), str(where))
    return where


def test_a_fresh_clone_starts_its_own_ledger_and_records_its_witness(
    git_repo: Path, tmp_path: Path
) -> None:
    clone = _clone(_adopted_remote(git_repo, tmp_path), tmp_path / "teammate")
    # Readers see an empty ledger; nothing is created by reading.
    with open_ledger(clone, {}, create=False) as ledger:
        assert ledger.entries() == []
    assert not (clone / ".plangate" / "ledger.sqlite3").exists()
    with open_ledger(clone, {}) as ledger:
        ledger.append("hooks_installed", "-", {"hosts": ["git"]})
        assert ledger.head().seq == 1
    where = witness_path(resolve_location(clone, {}))
    assert where is not None and where.is_file()
    assert where.is_relative_to(clone / ".git")
    assert "ledger.sqlite3" not in git(clone, "status", "--porcelain", "--untracked-files=all")


def test_a_ledger_deleted_on_the_same_clone_is_refused_and_says_so(
    git_repo: Path, tmp_path: Path
) -> None:
    clone = _clone(_adopted_remote(git_repo, tmp_path), tmp_path / "teammate")
    with open_ledger(clone, {}) as ledger:
        ledger.append("c3_issue", "TASK-0002", {"n": 1})
    ledger_file = clone / ".plangate" / "ledger.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{ledger_file}{suffix}").unlink(missing_ok=True)
    for create in (True, False):
        with pytest.raises(LedgerError) as info:
            open_ledger(clone, {}, create=create)
        assert info.value.code == "LEDGER_MISSING"
        assert "this clone created it" in info.value.message
        assert "deleted or moved" in info.value.message
        assert "init --force" in info.value.hint
    assert not ledger_file.exists()


def test_the_lead_s_own_clone_still_refuses_a_deleted_ledger(git_repo: Path) -> None:
    """Once its traces are committed, the witness is what still speaks for the ledger."""
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    _issue_record(git_repo)
    commit_all(git_repo, "approved")
    (git_repo / ".plangate" / "ledger.sqlite3").unlink()
    with pytest.raises(LedgerError) as info:
        open_ledger(git_repo, {})
    assert info.value.code == "LEDGER_MISSING"
    assert "this clone created it" in info.value.message


def test_a_truncated_ledger_on_the_same_clone_is_still_refused(
    git_repo: Path, tmp_path: Path
) -> None:
    clone = _clone(_adopted_remote(git_repo, tmp_path), tmp_path / "teammate")
    with open_ledger(clone, {}) as ledger:
        ledger.append("c3_issue", "TASK-0002", {"n": 1})
    ledger_file = clone / ".plangate" / "ledger.sqlite3"
    for suffix in ("-wal", "-shm"):
        Path(f"{ledger_file}{suffix}").unlink(missing_ok=True)
    ledger_file.write_bytes(b"")
    for create in (True, False):
        with pytest.raises(LedgerError) as info:
            open_ledger(clone, {}, create=create)
        assert info.value.code == "LEDGER_MISSING"
    assert ledger_file.read_bytes() == b""


def test_a_witness_replaced_by_a_link_is_not_followed_and_counts(
    git_repo: Path, tmp_path: Path
) -> None:
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    commit_all(git_repo, "ignore file committed")
    where = witness_path(resolve_location(git_repo, {}))
    assert where is not None
    elsewhere = tmp_path / "copy.json"
    elsewhere.write_bytes(where.read_bytes())
    where.unlink()
    where.symlink_to(elsewhere)
    (git_repo / ".plangate" / "ledger.sqlite3").unlink()
    with pytest.raises(LedgerError) as info:
        open_ledger(git_repo, {})
    assert info.value.code == "LEDGER_MISSING"
    assert "cannot be used" in info.value.message


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"not json", "not JSON"),
        (b'{"format": "something-else", "version": 1}', "not a plangate-ledger-witness"),
        (
            b'{"created": "2026-01-01T00:00:00Z", "format": "plangate-ledger-witness", '
            b'"ledger": "/elsewhere/ledger.sqlite3", "version": 1}',
            "names another ledger",
        ),
    ],
)
def test_a_tampered_witness_with_the_ledger_gone_is_refused(
    git_repo: Path, content: bytes, why: str
) -> None:
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    commit_all(git_repo, "ignore file committed")
    where = witness_path(resolve_location(git_repo, {}))
    assert where is not None
    where.write_bytes(content)
    (git_repo / ".plangate" / "ledger.sqlite3").unlink()
    with pytest.raises(LedgerError) as info:
        open_ledger(git_repo, {})
    assert info.value.code == "LEDGER_MISSING"
    assert why in info.value.message
    assert not (git_repo / ".plangate" / "ledger.sqlite3").exists()


def test_an_uncommitted_trace_on_the_clone_still_counts_without_a_witness(
    git_repo: Path, tmp_path: Path
) -> None:
    clone = _clone(_adopted_remote(git_repo, tmp_path), tmp_path / "teammate")
    _issue_record(clone, "TASK-0002")  # issued here, not committed yet
    with pytest.raises(LedgerError) as info:
        open_ledger(clone, {})
    assert info.value.code == "LEDGER_MISSING"
    assert "TASK-0002" in info.value.message
    assert "TASK-0001" not in info.value.message  # the committed one came with the clone


def test_a_ledger_made_before_witnesses_gets_one_from_its_next_writer(git_repo: Path) -> None:
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    location = resolve_location(git_repo, {})
    where = witness_path(location)
    assert where is not None
    where.unlink()
    with open_ledger(git_repo, {}, create=False) as ledger:  # readers write nothing
        ledger.entries()
    assert not where.exists()
    from support.hooks import claude_payload, hook_env, run_hook

    payload = claude_payload(
        "PreToolUse", git_repo, "Write",
        {"file_path": str(git_repo / "docs/working/TASK-0009/plan.md"), "content": "x"},
    )
    run_hook(git_repo, "claude", payload, hook_env(None))  # the hooks write none either
    assert not where.exists()
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0002", {"n": 2})
    witness = read_witness(location)
    assert witness is not None and witness.state == "present"


def test_a_linked_worktree_has_its_own_ledger_and_witness(git_repo: Path, tmp_path: Path) -> None:
    """Decision: the witness lives in the working tree's own git directory, so a linked
    worktree (its own ``.plangate/ledger.sqlite3``) starts its own ledger, and losing it is
    detected there without touching the main working tree's."""
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    _issue_record(git_repo)
    commit_all(git_repo, "approved")
    linked = tmp_path / "linked"
    git(git_repo, "worktree", "add", "-q", str(linked), "-b", "side")
    with open_ledger(linked, {}) as ledger:
        ledger.append("hooks_installed", "-", {"hosts": []})
    linked_witness = witness_path(resolve_location(linked, {}))
    main_witness = witness_path(resolve_location(git_repo, {}))
    assert linked_witness is not None and main_witness is not None
    assert linked_witness != main_witness
    assert linked_witness.is_relative_to(git_repo / ".git" / "worktrees")
    (linked / ".plangate" / "ledger.sqlite3").unlink()
    with pytest.raises(LedgerError) as info:
        open_ledger(linked, {})
    assert info.value.code == "LEDGER_MISSING"
    with open_ledger(git_repo, {}, create=False) as ledger:  # the main tree's is untouched
        assert ledger.head().seq == 1
    # Removing the worktree removes its witness with it: a new one there starts afresh.
    git(git_repo, "worktree", "remove", "--force", str(linked))
    git(git_repo, "worktree", "add", "-q", str(linked), "side")
    with open_ledger(linked, {}) as ledger:
        assert ledger.head().seq == 0


def test_ledger_init_on_a_fresh_clone_creates_without_force(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    clone = _clone(_adopted_remote(git_repo, tmp_path), tmp_path / "ci-checkout")
    res = run_cli(clone, "ledger", "init", env={})
    assert res.code == 0, res.err
    assert "created" in res.out
    assert "this clone's own ledger" in res.out
    (clone / ".plangate" / "ledger.sqlite3").unlink()
    res = run_cli(clone, "ledger", "init", env={})
    assert res.code == 1
    assert "LEDGER_MISSING" in res.err and "this clone created it" in res.err


@pytest.mark.postgres
def test_a_shared_postgres_ledger_still_counts_committed_traces(
    git_repo: Path, tmp_path: Path, pg_url: str
) -> None:
    """A PostgreSQL ledger is shared by URL: a committed record says the team's ledger
    existed, whichever clone looks; its tables gone is a refusal there too."""
    from support.ledger import fresh_pg_database

    with fresh_pg_database(pg_url) as url:
        _shared_ledger_case(git_repo, tmp_path, {"PLANGATE_LEDGER_URL": url})


def _shared_ledger_case(git_repo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    url = env["PLANGATE_LEDGER_URL"]
    with open_ledger(git_repo, env) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    _issue_record(git_repo)
    commit_all(git_repo, "approved")
    remote = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(git_repo), str(remote))
    clone = _clone(remote, tmp_path / "teammate")
    with open_ledger(clone, env, create=False) as ledger:
        assert ledger.head().seq == 1  # the same shared chain
    assert witness_path(resolve_location(clone, env)) is None
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("DROP TABLE plangate_ledger_entries, plangate_ledger_head")
    with pytest.raises(LedgerError) as info:
        open_ledger(clone, env)
    assert info.value.code == "LEDGER_MISSING"
    assert "c3-prime" in info.value.message


def test_no_witness_is_written_outside_a_git_working_tree(tmp_path: Path) -> None:
    repo = tmp_path / "plain"
    repo.mkdir()
    with open_ledger(repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    assert witness_path(resolve_location(repo, {})) is None
    assert sorted(os.listdir(repo)) == [".plangate"]


def test_doctor_warns_of_a_ledger_without_its_witness_and_ledger_init_records_it(
    git_repo: Path, run_cli: RunCli
) -> None:
    with open_ledger(git_repo, {}) as ledger:
        ledger.append("c3_issue", "TASK-0001", {"n": 1})
    where = witness_path(resolve_location(git_repo, {}))
    assert where is not None
    where.unlink()
    res = run_cli(git_repo, "doctor", "--json", env={})
    findings = {f["code"]: f for f in json.loads(res.out)["facts"]["findings"]}
    assert "DOCTOR_LEDGER_WITNESS" in findings
    assert findings["DOCTOR_LEDGER_WITNESS"]["fails"] is False
    res = run_cli(git_repo, "ledger", "init", env={})
    assert res.code == 0 and "already initialised" in res.out
    assert where.is_file()
    res = run_cli(git_repo, "doctor", "--json", env={})
    codes = {f["code"] for f in json.loads(res.out)["facts"]["findings"]}
    assert "DOCTOR_LEDGER_WITNESS" not in codes
