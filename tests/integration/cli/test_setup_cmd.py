"""``plangate setup`` in real repositories, typed at a real pseudo-terminal: what it
shows, what it writes, that a second run changes nothing, and who may run it."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.surfaces import TEMPLATE_MARKER, resolve_surfaces
from support.keys import make_key
from support.repo import git
from support.terminal import at_terminal, person_env


def _tree(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file()
        and ".git" not in p.relative_to(repo).parts
        and not p.name.startswith("ledger.sqlite3")
    }


def test_setup_shows_the_surfaces_then_writes_everything(git_repo: Path) -> None:
    proc = at_terminal(git_repo, "setup", "--claude", "--cursor", "--git", typed="SETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    shown = proc.stdout.index("**/CLAUDE.md")
    assert shown < proc.stdout.index("Type SETUP")
    surfaces = (git_repo / ".plangate" / "protected-surfaces.toml").read_bytes()
    assert TEMPLATE_MARKER.encode() not in surfaces
    resolved = resolve_surfaces(git_repo)
    assert resolved.problem is None and resolved.provenance != "bundled_template"
    ignore = (git_repo / ".gitignore").read_text()
    for line in (
        "/.plangate/ledger.sqlite3*",
        "/.plangate/locks/",
        "/.plangate/session/",
        "/docs/working/*/run.ndjson",
        "/.claude/settings.local.json",
    ):
        assert line in ignore.splitlines()
    assert (git_repo / ".claude" / "settings.json").is_file()
    assert (git_repo / ".cursor" / "hooks.json").is_file()
    assert (git_repo / ".plangate" / "ledger.sqlite3").is_file()
    assert (git_repo / ".git" / "hooks" / "pre-commit").is_file()
    # The order of the first commits, naming this repository's files.
    assert "The first commits, in this order:" in proc.stdout
    assert "git add .plangate/protected-surfaces.toml .plangate/.gitignore .gitignore" in (
        proc.stdout
    )
    assert "CI_ADOPTS_PLANGATE" in proc.stdout
    # Local state is ignored by git: the ledger is not a change to commit.
    status = git(git_repo, "status", "--porcelain", "--untracked-files=all")
    assert "ledger.sqlite3" not in status


def test_setup_with_codex_but_no_codex_program_does_not_report_success(git_repo: Path) -> None:
    """Codex skips untrusted hooks without a word: without Codex to record the trust,
    setup says so, with the command to run later, and does not exit 0."""
    proc = at_terminal(git_repo, "setup", "--codex", typed="SETUP\n")
    assert proc.returncode != 0, proc.stdout
    assert "CODEX_TRUST_CODEX_NOT_FOUND" in proc.stderr
    assert "plangate hooks trust --codex" in proc.stderr
    assert (git_repo / ".codex" / "hooks.json").is_file()  # written, and said to be untrusted


def test_a_second_run_asks_nothing_and_changes_nothing(git_repo: Path) -> None:
    first = at_terminal(git_repo, "setup", "--claude", "--cursor", typed="SETUP\n")
    assert first.returncode == 0, first.stderr
    before = _tree(git_repo)
    again = at_terminal(git_repo, "setup", "--claude", "--cursor")  # nothing typed
    assert again.returncode == 0, again.stderr
    assert "Type SETUP" not in again.stdout
    assert _tree(git_repo) == before
    assert "written" not in again.stdout.replace("written by", "")


def test_setup_keeps_existing_gitignore_lines(git_repo: Path) -> None:
    (git_repo / ".gitignore").write_text("node_modules/\n/.plangate/locks/")
    proc = at_terminal(git_repo, "setup", typed="SETUP\n")
    assert proc.returncode == 0, proc.stderr
    lines = (git_repo / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["node_modules/", "/.plangate/locks/"]
    assert lines.count("/.plangate/locks/") == 1


def test_nothing_is_written_unless_confirmed(git_repo: Path) -> None:
    proc = at_terminal(git_repo, "setup", "--claude", typed="yes\n")
    assert proc.returncode == 2
    assert "SETUP_NOT_CONFIRMED" in proc.stderr
    assert not (git_repo / ".plangate").exists()
    assert not (git_repo / ".claude").exists()


def test_setup_refuses_without_a_terminal(git_repo: Path) -> None:
    proc = at_terminal(git_repo, "setup", "--claude", typed="SETUP\n", tty=False)
    assert proc.returncode == 3
    assert "SETUP_NOT_INTERACTIVE" in proc.stderr
    assert not (git_repo / ".plangate").exists()


@pytest.mark.parametrize("marker", ["CLAUDECODE", "CURSOR_TRACE_ID", "CODEX_HOME", "PLANGATE_TASK"])
def test_setup_refuses_under_agent_markers(git_repo: Path, marker: str) -> None:
    proc = at_terminal(
        git_repo, "setup", "--claude", typed="SETUP\n", env=person_env(**{marker: "1"})
    )
    assert proc.returncode == 3
    assert "SETUP_AGENT_ENVIRONMENT" in proc.stderr
    assert not (git_repo / ".plangate").exists()


def test_keys_given_write_the_trust_root(git_repo: Path, tmp_path: Path) -> None:
    alice = make_key(tmp_path / "keys", "alice")
    bob = make_key(tmp_path / "keys", "bob")
    proc = at_terminal(
        git_repo,
        "setup",
        "--approver",
        f"alice={alice.pub_path}",
        "--reviewer",
        f"bob={bob.pub_path}",
        typed="SETUP\n",
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "alice becomes a human approver" in proc.stdout
    trust = (git_repo / ".plangate" / "trust.toml").read_text()
    assert "alice" in trust and "bob" in trust
    signers = (git_repo / ".plangate" / "allowed_signers").read_text()
    assert alice.public in signers and bob.public in signers
    assert ".plangate/trust.toml .plangate/allowed_signers" in proc.stdout
    again = at_terminal(git_repo, "setup", "--approver", f"alice={alice.pub_path}")
    assert again.returncode == 0 and "Type SETUP" not in again.stdout


def test_a_key_argument_without_a_name_is_a_usage_error(git_repo: Path) -> None:
    proc = at_terminal(git_repo, "setup", "--approver", "just-a-path.pub")
    assert proc.returncode == 2 and "SETUP_KEY_INVALID" in proc.stderr


def test_a_broken_surfaces_file_is_never_overwritten(git_repo: Path) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate" / "protected-surfaces.toml").write_text("not = = toml\n")
    proc = at_terminal(git_repo, "setup", typed="SETUP\n")
    assert proc.returncode == 1 and "SETUP_SURFACES_INVALID" in proc.stderr
    assert (git_repo / ".plangate" / "protected-surfaces.toml").read_text() == "not = = toml\n"
