"""``plangate setup`` for a team, typed at a real pseudo-terminal in real repositories: a
teammate's clone of an adopted repository (a bare remote and ``git clone``), the question
about required signatures, and every precondition checked before the first write."""

from __future__ import annotations

import os
from pathlib import Path

from support.keys import make_key
from support.repo import commit_all, git
from support.terminal import at_terminal, person_env


def _files(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


def _adopt_and_push(lead: Path, tmp_path: Path) -> Path:
    """The lead's setup and adoption commit with an approved task's record, pushed to a
    bare remote; returns the remote."""
    proc = at_terminal(lead, "setup", "--claude", "--git", typed="SETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    approvals = lead / "docs" / "working" / "TASK-0001" / "approvals"
    approvals.mkdir(parents=True)
    (approvals / "c3.json").write_text('{"approval_kind": "c3-prime"}\n')
    git(lead, "add", "-A")
    git(lead, "commit", "-q", "--no-verify", "-m", "Adopt PlanGate")
    remote = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(lead), str(remote))
    return remote


def test_a_teammate_s_setup_on_a_fresh_clone_starts_without_a_recovery_command(
    git_repo: Path, tmp_path: Path
) -> None:
    remote = _adopt_and_push(git_repo, tmp_path)
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    proc = at_terminal(clone, "setup", "--claude", "--git")  # nothing typed: nothing asked
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Type SETUP" not in proc.stdout
    assert "LEDGER_MISSING" not in proc.stderr
    # A teammate's steps, not the adoption's.
    assert "PlanGate is already adopted here" in proc.stdout
    assert "adopt-plangate" not in proc.stdout
    assert "plangate doctor" in proc.stdout
    assert "this clone's own ledger" in proc.stdout
    assert (clone / ".plangate" / "ledger.sqlite3").is_file()
    assert "plangate-managed" in (clone / ".git" / "hooks" / "pre-commit").read_text()
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_teammate_whose_ledger_was_deleted_is_refused_and_told_why(
    git_repo: Path, tmp_path: Path
) -> None:
    remote = _adopt_and_push(git_repo, tmp_path)
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    assert at_terminal(clone, "setup", "--claude", "--git").returncode == 0
    for suffix in ("", "-wal", "-shm"):
        Path(f"{clone}/.plangate/ledger.sqlite3{suffix}").unlink(missing_ok=True)
    (clone / ".git" / "hooks" / "pre-commit").unlink()
    ignore = (clone / ".gitignore").read_text()
    (clone / ".gitignore").write_text(ignore.replace("/.plangate/locks/\n", ""))
    before = _files(clone)
    proc = at_terminal(clone, "setup", "--claude", "--git")
    assert proc.returncode == 1
    assert _files(clone) == before  # checked first: .gitignore was not completed either
    assert "LEDGER_MISSING" in proc.stderr
    assert "this clone created it" in proc.stderr
    assert "init --force" in proc.stderr
    assert not (clone / ".plangate" / "ledger.sqlite3").exists()
    assert not (clone / ".git" / "hooks" / "pre-commit").exists()  # nothing was written


def _signers(tmp_path: Path) -> list[str]:
    keys = tmp_path / "keys"
    carol, alice, bob = (make_key(keys, name) for name in ("carol", "alice", "bob"))
    return [
        "--approver", f"carol={carol.pub_path}",
        "--reviewer", f"alice={alice.pub_path}",
        "--reviewer", f"bob={bob.pub_path}",
    ]


def test_setup_with_signers_asks_and_requires_signatures_by_default(
    git_repo: Path, tmp_path: Path
) -> None:
    proc = at_terminal(git_repo, "setup", *_signers(tmp_path), typed="\nSETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "require_signatures = true)? [Y/n]" in proc.stdout
    assert proc.stdout.index("[Y/n]") < proc.stdout.index("Type SETUP")
    trust = (git_repo / ".plangate" / "trust.toml").read_text()
    assert "require_signatures = true" in trust


def test_a_person_may_answer_no_or_pass_the_flag(git_repo: Path, tmp_path: Path) -> None:
    proc = at_terminal(git_repo, "setup", *_signers(tmp_path), typed="n\nSETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "require_signatures = false" in (git_repo / ".plangate" / "trust.toml").read_text()
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    proc = at_terminal(other, "setup", *_signers(tmp_path / "k2"), "--require-signatures",
                       typed="SETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "[Y/n]" not in proc.stdout
    assert "require_signatures = true" in (other / ".plangate" / "trust.toml").read_text()


def test_an_answer_that_is_neither_yes_nor_no_writes_nothing(
    git_repo: Path, tmp_path: Path
) -> None:
    proc = at_terminal(git_repo, "setup", *_signers(tmp_path), typed="maybe\nSETUP\n")
    assert proc.returncode == 2
    assert "SETUP_NOT_CONFIRMED" in proc.stderr
    assert not (git_repo / ".plangate").exists()


def test_too_few_signers_are_told_and_not_asked(git_repo: Path, tmp_path: Path) -> None:
    carol = make_key(tmp_path / "keys", "carol")
    proc = at_terminal(git_repo, "setup", "--approver", f"carol={carol.pub_path}",
                       typed="SETUP\n")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "[Y/n]" not in proc.stdout
    assert "Signatures stay optional for now" in proc.stdout


def test_required_signatures_without_enough_signers_refuse_before_any_write(
    git_repo: Path, tmp_path: Path
) -> None:
    carol = make_key(tmp_path / "keys", "carol")
    before = _files(git_repo)
    proc = at_terminal(git_repo, "setup", "--claude", "--approver", f"carol={carol.pub_path}",
                       "--require-signatures", typed="SETUP\n")
    assert proc.returncode == 1
    assert "AUTH_TRUST_ROLES_INSUFFICIENT" in proc.stderr
    assert _files(git_repo) == before
    assert not (git_repo / ".git" / "plangate" / "trust-branch").exists()


def test_one_name_in_two_roles_refuses_before_any_write(git_repo: Path, tmp_path: Path) -> None:
    alice = make_key(tmp_path / "keys", "alice")
    before = _files(git_repo)
    proc = at_terminal(git_repo, "setup", "--claude", "--git",
                       "--approver", f"alice={alice.pub_path}",
                       "--reviewer", f"alice={alice.pub_path}",
                       "--no-require-signatures", typed="SETUP\n")
    assert proc.returncode == 1
    assert "AUTH_SIGNERS_DUPLICATE_PRINCIPAL" in proc.stderr
    assert _files(git_repo) == before
    assert not (git_repo / ".git" / "hooks" / "pre-commit").exists()


def test_a_hooks_directory_that_cannot_be_made_refuses_before_any_write(git_repo: Path) -> None:
    (git_repo / "not-a-dir").write_text("x\n")
    commit_all(git_repo, "a file")
    git(git_repo, "config", "core.hooksPath", "not-a-dir/hooks")
    before = _files(git_repo)
    proc = at_terminal(git_repo, "setup", "--git", typed="SETUP\n")
    assert proc.returncode == 1
    assert "HOOKS_GIT_HOOKS_DIR_UNUSABLE" in proc.stderr
    assert _files(git_repo) == before


def test_a_write_that_fails_after_the_checks_names_what_was_written(git_repo: Path) -> None:
    """``.claude`` on a read-only mount (a real bubblewrap bind): every check passes (the
    settings can be read), the surfaces and .gitignore are written, then Claude Code's
    settings cannot be: the message names what was written before."""
    from support.bashbox import bwrap_or_fail

    (git_repo / ".claude").mkdir()
    (git_repo / ".claude" / "settings.json").write_text("{}\n")
    claude = str(git_repo / ".claude")
    proc = at_terminal(
        git_repo, "setup", "--claude", typed="SETUP\n",
        wrapper=[bwrap_or_fail(), "--dev-bind", "/", "/", "--ro-bind", claude, claude],
    )
    assert proc.returncode != 0
    said = " ".join(proc.stderr.split())
    assert "written before it: .plangate/protected-surfaces.toml (protected surfaces)" in said
    assert ".gitignore (ignored local state)" in said
    assert "ledger.sqlite3 (this clone's own ledger)" in said
    assert (git_repo / ".plangate" / "protected-surfaces.toml").is_file()
    assert (git_repo / ".claude" / "settings.json").read_text() == "{}\n"


def test_setup_refuses_without_writing_when_a_host_file_cannot_be_read(git_repo: Path) -> None:
    (git_repo / ".claude").mkdir()
    (git_repo / ".claude" / "settings.json").write_text("{not json")
    before = _files(git_repo)
    proc = at_terminal(git_repo, "setup", "--claude", "--git", typed="SETUP\n")
    assert proc.returncode != 0
    assert _files(git_repo) == before
    assert not (git_repo / ".git" / "hooks" / "pre-commit").exists()


def test_help_describes_the_signature_question_and_the_pre_commit_entry() -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "plangate", "setup", "--help"],
                          capture_output=True, text=True, env=person_env(), check=False,
                          cwd=os.getcwd())
    text = " ".join(proc.stdout.split())
    assert "--require-signatures, --no-require-signatures" in text
    assert "setup asks when an approver is given (default yes)" in text
    assert "repo: local" in text
    assert "a refusal writes nothing" in text


def test_a_trust_root_with_one_file_missing_is_never_overwritten(
    git_repo: Path, tmp_path: Path
) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate" / "trust.toml").write_text("version = 1\n")
    before = _files(git_repo)
    proc = at_terminal(git_repo, "setup", *_signers(tmp_path), "--no-require-signatures",
                       typed="SETUP\n")
    assert proc.returncode == 1
    assert "AUTH_TRUST_INCOMPLETE" in proc.stderr
    assert _files(git_repo) == before
