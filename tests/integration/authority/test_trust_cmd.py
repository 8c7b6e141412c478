"""plangate trust init|add|require|show: human-only writes, strict results, show reads the branch."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from plangate.authority.root import build_root
from plangate.cli.context import Context
from plangate.cli.main import main
from support.cli import CliResult
from support.keys import Key, make_key
from support.repo import commit_all


class _Terminal(io.BytesIO):
    """A stdin that is an interactive terminal (what a human's shell gives)."""

    def isatty(self) -> bool:
        return True


def _trust(
    repo: Path, *argv: str, tty: bool = True, env: dict[str, str] | None = None
) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    stdin = _Terminal(b"") if tty else io.BytesIO(b"")
    ctx = Context(
        cwd=repo, stdout=out, stderr=err, stdin=stdin, env=env or {"PATH": "/usr/bin:/bin"}
    )
    code = main(["trust", *argv], ctx)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    d = tmp_path / "keys"
    return {
        "alice": make_key(d, "alice@example.com"),
        "bob": make_key(d, "bob@example.com", "ecdsa"),
        "carol": make_key(d, "carol@example.com"),
        "bot": make_key(d, "bot@example.com"),
    }


def _setup(repo: Path, team: dict[str, Key]) -> None:
    assert _trust(repo, "init").code == 0
    for name, role in (("alice", "reviewer"), ("bob", "reviewer"), ("carol", "approver")):
        result = _trust(
            repo,
            "add",
            team[name].principal,
            "--key",
            str(team[name].pub_path),
            "--role",
            role,
            "--human",
        )
        assert result.code == 0, result.err
    assert (
        _trust(repo, "add", "bot@example.com", "--key", str(team["bot"].path), "--agent").code == 0
    )


def test_init_add_require_write_a_root_a_reader_accepts(
    git_repo: Path, team: dict[str, Key]
) -> None:
    _setup(git_repo, team)
    assert _trust(git_repo, "require", "on").code == 0
    trust = (git_repo / ".plangate/trust.toml").read_bytes()
    signers = (git_repo / ".plangate/allowed_signers").read_bytes()
    root = build_root(trust, signers, None, "0" * 40)
    assert root.require_signatures
    assert root.config.holders("reviewer") == ("alice@example.com", "bob@example.com")
    assert root.config.agents == ("bot@example.com",)
    assert root.entry_of("bob@example.com").key_type == "ecdsa-sha2-nistp256"  # type: ignore[union-attr]


def test_writes_are_human_only(git_repo: Path) -> None:
    no_tty = _trust(git_repo, "init", tty=False)
    assert no_tty.code == 3 and "TRUST_NOT_INTERACTIVE" in no_tty.err
    agent = _trust(git_repo, "init", env={"CLAUDECODE": "1"})
    assert agent.code == 3 and "TRUST_AGENT_ENVIRONMENT" in agent.err
    ci = _trust(git_repo, "init", env={"CI": "true"})
    assert ci.code == 3
    assert not (git_repo / ".plangate/trust.toml").exists()


def test_refusals_leave_the_files_unchanged(git_repo: Path, team: dict[str, Key]) -> None:
    _setup(git_repo, team)
    before = (git_repo / ".plangate/trust.toml").read_bytes()
    both = _trust(
        git_repo,
        "add",
        "dave@example.com",
        "--key",
        str(team["bot"].pub_path),
        "--role",
        "reviewer",
        "--role",
        "approver",
    )
    assert both.code == 1 and "AUTH_TRUST_ROLE_CONFLICT" in both.err
    bad = _trust(
        git_repo,
        "add",
        "dave@example.com",
        "--key",
        str(team["alice"].pub_path),
        "--role",
        "reviewer",
    )
    assert bad.code == 1 and "AUTH_SIGNERS_DUPLICATE_KEY" in bad.err
    again = _trust(git_repo, "add", "alice@example.com", "--key", str(team["alice"].pub_path))
    assert again.code == 1 and "AUTH_SIGNERS_DUPLICATE_PRINCIPAL" in again.err
    assert _trust(git_repo, "init").code == 1  # FILE_EXISTS
    assert (git_repo / ".plangate/trust.toml").read_bytes() == before


def test_require_on_with_too_few_people_is_refused(git_repo: Path, team: dict[str, Key]) -> None:
    assert _trust(git_repo, "init").code == 0
    result = _trust(git_repo, "require", "on")
    assert result.code == 1 and "AUTH_TRUST_ROLES_INSUFFICIENT" in result.err


def test_show_reads_the_trust_branch(git_repo: Path, team: dict[str, Key]) -> None:
    _setup(git_repo, team)
    shown = _trust(git_repo, "show")
    assert "no trust root on main" in shown.out and "commit it" in shown.out
    commit_all(git_repo, "trust root")
    facts = json.loads(_trust(git_repo, "show", "--json").out)
    assert facts["root"]["roles"]["approver"] == ["carol@example.com"]
    assert "approver: carol@example.com" in _trust(git_repo, "show").out
