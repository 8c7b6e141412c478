"""A missing or too-old ssh-keygen fails every consumer closed, with its code and a hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.fakessh import fake_path, use_fakes
from support.keys import Key
from support.signed import commit_trust_root, make_team, signed_task

T = "TASK-0001"


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    return make_team(tmp_path / "keys")


def _verify(repo: Path) -> tuple[int, dict]:
    result = run_cli_in(repo, "c3", "verify", T, "--json")
    return result.code, json.loads(result.out)


@pytest.mark.parametrize(
    ("programs", "code"),
    [
        ({}, "AUTH_SSH_KEYGEN_MISSING"),
        (
            {"ssh_version": "OpenSSH_8.2p1", "keygen": 'exec /usr/bin/ssh-keygen "$@"'},
            "AUTH_SSH_KEYGEN_TOO_OLD",
        ),
        ({"keygen": 'exec /usr/bin/ssh-keygen "$@"'}, "AUTH_SSH_KEYGEN_TOO_OLD"),
    ],
)
def test_a_signed_task_is_rejected_when_ssh_keygen_cannot_be_trusted(
    git_repo: Path,
    tmp_path: Path,
    team: dict[str, Key],
    monkeypatch: pytest.MonkeyPatch,
    programs: dict[str, str],
    code: str,
) -> None:
    commit_trust_root(git_repo, team)
    signed_task(git_repo, tmp_path, team)
    assert _verify(git_repo)[0] == 0
    use_fakes(monkeypatch, fake_path(tmp_path / "bin", **programs))
    exit_code, out = _verify(git_repo)
    assert exit_code == 1 and out["verdict"] == "REJECTED"
    reason = next(r for r in out["reasons"] if r["code"] == code)
    assert "OpenSSH 8.8" in reason["hint"]
    # Signing refuses too.
    signed = run_cli_in(
        git_repo, "review", "mark", T, "--c1", "PASS", "--sign", str(team["alice"].path)
    )
    assert signed.code != 0 and code in signed.err
    assert "hint" in signed.err


def test_without_required_signatures_ssh_keygen_is_not_needed(
    git_repo: Path, tmp_path: Path, team: dict[str, Key], monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_trust_root(git_repo, team, require=False)
    signed_task(git_repo, tmp_path, team, reviewers=None, approver=None)
    use_fakes(monkeypatch, fake_path(tmp_path / "bin"))
    exit_code, out = _verify(git_repo)
    assert exit_code == 0 and out["facts"]["authority"] == "unauthenticated"
