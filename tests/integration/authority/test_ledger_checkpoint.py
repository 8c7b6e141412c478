"""Signed ledger checkpoints catch truncation, deletion, rollback, rewriting and re-initialisation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plangate.ledger import open_ledger
from plangate.ledger.checkpoint import Checkpoint, checkpoint_bytes
from support.cli import run_cli_in
from support.keys import Key, sign_bytes
from support.repo import commit_all, git
from support.signed import commit_trust_root, make_team

CHECKPOINT = ".plangate/ledger-checkpoint.json"
DB = ".plangate/ledger.sqlite3"


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    return make_team(tmp_path / "keys")


def _append(repo: Path, count: int) -> None:
    with open_ledger(repo, {}) as ledger:
        for n in range(count):
            ledger.append("note", "test", {"n": n})


@pytest.fixture
def repo(git_repo: Path, team: dict[str, Key]) -> Path:
    commit_trust_root(git_repo, team, require=False)
    assert run_cli_in(git_repo, "ledger", "init").code == 0
    _append(git_repo, 5)
    return git_repo


def _checkpoint(repo: Path, key: Key) -> None:
    result = run_cli_in(repo, "ledger", "checkpoint", "--sign", str(key.path))
    assert result.code == 0, result.out + result.err


def _verify(repo: Path) -> tuple[int, list[str], dict]:
    result = run_cli_in(repo, "ledger", "verify", "--json")
    doc = json.loads(result.out) if result.out.strip() else {}
    return result.code, [r["code"] for r in doc.get("reasons", [])], doc


def test_a_signed_checkpoint_verifies_and_later_entries_extend_it(
    repo: Path, team: dict[str, Key]
) -> None:
    _checkpoint(repo, team["carol"])
    stored = json.loads((repo / CHECKPOINT).read_bytes())
    assert stored["seq"] == 5 and stored["principal"] == "carol@example.com"
    _append(repo, 3)
    code, codes, doc = _verify(repo)
    assert (code, codes) == (0, [])
    assert doc["facts"]["checkpoint"]["seq"] == 5
    text = run_cli_in(repo, "ledger", "verify")
    assert "checkpoint: seq 5 signed by carol@example.com" in text.out


def test_a_ledger_rolled_back_to_an_older_copy_is_behind(
    repo: Path, team: dict[str, Key], tmp_path: Path
) -> None:
    shutil.copy(repo / DB, tmp_path / "backup.sqlite")
    _append(repo, 4)
    _checkpoint(repo, team["carol"])
    shutil.copy(tmp_path / "backup.sqlite", repo / DB)
    assert run_cli_in(repo, "ledger", "verify", "--anchor", "sha256:" + "0" * 64).code == 1
    code, codes, _ = _verify(repo)
    assert code == 1 and codes == ["LEDGER_BEHIND_CHECKPOINT"]


def test_a_deleted_then_reinitialised_ledger_is_behind(repo: Path, team: dict[str, Key]) -> None:
    _checkpoint(repo, team["carol"])
    commit_all(repo, "checkpoint")
    (repo / DB).unlink()
    assert run_cli_in(repo, "ledger", "init", "--force").code == 0
    code, codes, doc = _verify(repo)
    assert code == 1 and codes == ["LEDGER_BEHIND_CHECKPOINT"]
    assert "re-initialised" in doc["reasons"][0]["message"]


def test_a_rewritten_history_that_grew_past_the_checkpoint_diverges(
    repo: Path, team: dict[str, Key]
) -> None:
    _checkpoint(repo, team["carol"])
    assert run_cli_in(repo, "ledger", "init", "--force").code == 0
    _append(repo, 10)
    code, codes, _ = _verify(repo)
    assert code == 1 and codes == ["LEDGER_CHECKPOINT_DIVERGED"]


def test_deleting_the_checkpoint_file_does_not_hide_the_committed_one(
    repo: Path, team: dict[str, Key]
) -> None:
    _checkpoint(repo, team["carol"])
    commit_all(repo, "checkpoint")
    git(repo, "rm", "-q", CHECKPOINT, CHECKPOINT + ".sig")
    commit_all(repo, "an agent removes the checkpoint on its branch")  # main still has it
    git(repo, "checkout", "-q", "-b", "agent")
    git(repo, "branch", "-f", "main", "HEAD~1")
    (repo / DB).unlink()
    assert run_cli_in(repo, "ledger", "init", "--force").code == 0
    code, codes, _ = _verify(repo)
    assert code == 1 and codes == ["LEDGER_BEHIND_CHECKPOINT"]


def test_a_new_checkpoint_signed_after_a_human_restart_supersedes_the_old(
    repo: Path, team: dict[str, Key]
) -> None:
    _checkpoint(repo, team["carol"])
    commit_all(repo, "checkpoint")
    assert run_cli_in(repo, "ledger", "init", "--force").code == 0
    assert _verify(repo)[0] == 1
    import time

    time.sleep(1.1)  # checkpoint times have second resolution
    _checkpoint(repo, team["alice"])
    commit_all(repo, "new checkpoint after the restart")
    code, codes, doc = _verify(repo)
    assert (code, codes) == (0, []), doc
    assert doc["facts"]["checkpoint"]["principal"] == "alice@example.com"


def _forge(repo: Path, key: Key | None, **change: object) -> None:
    with open_ledger(repo, {}) as ledger:
        head = ledger.head()
    fields = {
        "seq": head.seq,
        "head": head.entry_hash,
        "time": "2030-01-01T00:00:00Z",
        "principal": "carol@example.com",
        **change,
    }
    data = checkpoint_bytes(Checkpoint(**fields))
    (repo / CHECKPOINT).write_bytes(data)
    sig = repo / (CHECKPOINT + ".sig")
    if key is None:
        sig.unlink(missing_ok=True)
    else:
        sig.write_bytes(sign_bytes(key, "plangate-ledger", data))


@pytest.mark.parametrize(
    ("signer", "change", "code"),
    [
        ("mallory", {"principal": "mallory@example.com"}, "LEDGER_CHECKPOINT_SIGNER_UNKNOWN"),
        (None, {}, "LEDGER_CHECKPOINT_SIGNATURE_MISSING"),
        ("alice", {}, "LEDGER_CHECKPOINT_PRINCIPAL_MISMATCH"),
    ],
)
def test_a_forged_checkpoint_fails_verify(
    repo: Path, team: dict[str, Key], signer: str | None, change: dict, code: str
) -> None:
    _forge(repo, team[signer] if signer else None, **change)
    exit_code, codes, _ = _verify(repo)
    assert exit_code == 1 and code in codes


def test_an_edited_checkpoint_no_longer_verifies(repo: Path, team: dict[str, Key]) -> None:
    _checkpoint(repo, team["carol"])
    path = repo / CHECKPOINT
    path.write_bytes(path.read_bytes().replace(b'"seq":5', b'"seq":1'))
    assert "LEDGER_CHECKPOINT_SIGNATURE_INVALID" in _verify(repo)[1]
    path.write_bytes(b"{not json")
    assert "LEDGER_CHECKPOINT_MALFORMED" in _verify(repo)[1]


def test_a_checkpoint_in_the_wrong_namespace_is_refused(repo: Path, team: dict[str, Key]) -> None:
    _checkpoint(repo, team["carol"])
    data = (repo / CHECKPOINT).read_bytes()
    (repo / (CHECKPOINT + ".sig")).write_bytes(sign_bytes(team["carol"], "plangate-c3", data))
    assert "LEDGER_CHECKPOINT_SIGNATURE_NAMESPACE" in _verify(repo)[1]


def test_only_a_listed_key_can_checkpoint_and_only_a_verified_ledger(
    repo: Path, team: dict[str, Key]
) -> None:
    refused = run_cli_in(repo, "ledger", "checkpoint", "--sign", str(team["mallory"].path))
    assert refused.code != 0 and "AUTH_SIGNER_NOT_LISTED" in refused.err
    assert not (repo / CHECKPOINT).exists()


def test_without_a_checkpoint_verify_is_the_chain_alone(repo: Path) -> None:
    code, codes, doc = _verify(repo)
    assert (code, codes) == (0, []) and doc["facts"]["checkpoint"] is None


def test_an_empty_or_tampered_ledger_is_never_checkpointed(
    git_repo: Path, team: dict[str, Key]
) -> None:
    import sqlite3

    commit_trust_root(git_repo, team, require=False)
    assert run_cli_in(git_repo, "ledger", "init").code == 0
    empty = run_cli_in(git_repo, "ledger", "checkpoint", "--sign", str(team["carol"].path))
    assert empty.code == 1 and "LEDGER_EMPTY" in empty.err
    _append(git_repo, 3)
    with sqlite3.connect(git_repo / DB) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        table = next(t for t in tables if "entr" in t)
        db.execute(f"drop trigger if exists {table}_no_update")
        try:
            db.execute(f"update {table} set subject = 'forged' where seq = 2")  # noqa: S608
        except sqlite3.DatabaseError:
            pytest.skip("the backend refuses updates (triggers): nothing to tamper with here")
    tampered = run_cli_in(git_repo, "ledger", "checkpoint", "--sign", str(team["carol"].path))
    assert tampered.code == 1 and "LEDGER_TAMPERED" in tampered.err
    assert not (git_repo / CHECKPOINT).exists()
