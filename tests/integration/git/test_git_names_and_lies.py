"""Names cannot be redirected and git cannot be made to lie or run code, in real repositories:
a tag carrying a branch's name, index bits that hide a change, a clean filter that makes a
changed file look committed (and would run a program)."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from plangate.git import Git, GitError
from support.delivery import define_surfaces
from support.hooks import approved_repo
from support.repo import commit_all, git

C3 = "docs/working/TASK-0001/approvals/c3.json"


def _ci(repo: Path, run_cli, base: str) -> tuple[int, dict]:
    result = run_cli(repo, "ci", "check", "--base", base, "--head", "HEAD", "--json")
    return result.code, json.loads(result.out) if result.out else {}


def _codes(body: dict) -> list[str]:
    return [r["code"] for r in body.get("reasons", [])]


# --- names -----------------------------------------------------------------------------


def test_a_tag_named_like_the_branch_makes_the_name_ambiguous(git_repo: Path) -> None:
    first = git(git_repo, "rev-parse", "HEAD")
    (git_repo / "x.txt").write_text("x\n")
    commit_all(git_repo, "x")
    git(git_repo, "tag", "main", first)
    with pytest.raises(GitError) as caught:
        Git(git_repo).resolve_commit("main")
    assert caught.value.code == "GIT_REF_AMBIGUOUS"
    assert "refs/tags/main" in caught.value.message
    # The full ref name is never redirected.
    assert Git(git_repo).resolve_commit("refs/heads/main") == git(git_repo, "rev-parse", "HEAD")


def test_a_tag_named_like_the_remote_branch_makes_it_ambiguous(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    git(git_repo, "update-ref", "refs/remotes/origin/main", head)
    assert Git(git_repo).resolve_commit("origin/main") == head
    git(git_repo, "tag", "origin/main", head)
    with pytest.raises(GitError) as caught:
        Git(git_repo).resolve_commit("origin/main")
    assert caught.value.code == "GIT_REF_AMBIGUOUS"


def test_a_bare_tag_name_is_not_a_branch(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    git(git_repo, "tag", "release")
    with pytest.raises(GitError) as caught:
        Git(git_repo).resolve_commit("release")
    assert caught.value.code == "GIT_REF_NOT_A_BRANCH"
    assert Git(git_repo).resolve_commit("refs/tags/release") == head


@pytest.mark.parametrize("rev", ["main@{1}", "HEAD:src", ":/initial", "main..HEAD", "-x", ""])
def test_git_revision_syntax_beyond_names_is_refused(git_repo: Path, rev: str) -> None:
    with pytest.raises(GitError) as caught:
        Git(git_repo).resolve_commit(rev)
    assert caught.value.code == "GIT_BAD_REVISION"


def test_ci_check_refuses_a_base_name_a_tag_redirects(git_repo: Path, run_cli) -> None:
    define_surfaces(git_repo)
    (git_repo / "feature.py").write_text("x\n")
    commit_all(git_repo, "work without a task")
    git(git_repo, "branch", "-f", "base-branch", "HEAD~1")
    assert _codes(_ci(git_repo, run_cli, "base-branch")[1]) == ["CI_NO_TASK"]
    # A tag of the same name at the head would empty the diff: the name is refused.
    git(git_repo, "tag", "base-branch", "HEAD")
    result = run_cli(git_repo, "ci", "check", "--base", "base-branch", "--head", "HEAD")
    assert result.code == 1, result.out
    assert "GIT_REF_AMBIGUOUS" in result.err
    assert "ACCEPTED" not in result.out


# --- index bits and filters ---------------------------------------------------------------


def _repo_with_hidden_bad_record(git_repo: Path) -> tuple[Path, str, bytes]:
    """An approved task whose committed record is broken while the working tree keeps
    the good one; returns the repo, the base and the good bytes."""
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    good = (repo / C3).read_bytes()
    broken = good.replace(b'"', b"'", 1)  # same length, not JSON any more
    assert len(broken) == len(good)
    (repo / C3).write_bytes(broken)
    commit_all(repo, "break the committed record")
    (repo / C3).write_bytes(good)
    return repo, base, good


@pytest.mark.parametrize("bit", ["--skip-worktree", "--assume-unchanged"])
def test_ci_check_judges_no_record_an_index_bit_hides(git_repo: Path, run_cli, bit: str) -> None:
    repo, base, _good = _repo_with_hidden_bad_record(git_repo)
    # Without the bit the changed record is seen and the check refuses to read it.
    code, body = _ci(repo, run_cli, base)
    assert code == 1 and _codes(body) == ["CI_HEAD_NOT_CHECKED_OUT"], body
    git(repo, "update-index", bit, C3)
    assert Git(repo).hidden_paths(("docs/working",)) == [C3]
    code, body = _ci(repo, run_cli, base)
    assert code == 1, body
    assert _codes(body) == ["CI_HEAD_NOT_CHECKED_OUT"]
    assert C3 in body["reasons"][0]["evidence"]


def _filter_program(tmp_path: Path, committed: bytes) -> tuple[Path, Path]:
    """A clean filter that prints the committed bytes and leaves a marker when it runs."""
    marker = tmp_path / "filter.ran"
    blob = tmp_path / "committed.bin"
    blob.write_bytes(committed)
    script = tmp_path / "clean.sh"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat > /dev/null\ncat '{blob}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, marker


def test_a_clean_filter_never_runs_and_cannot_hide_a_changed_record(
    git_repo: Path, run_cli, tmp_path: Path
) -> None:
    repo, base, _good = _repo_with_hidden_bad_record(git_repo)
    committed = subprocess.run(["git", "cat-file", "blob", f"HEAD:{C3}"], cwd=repo,
                               capture_output=True, check=True).stdout
    script, marker = _filter_program(tmp_path, committed)
    info = repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("*.json filter=lie\n")
    git(repo, "config", "filter.lie.clean", str(script))
    git(repo, "config", "filter.lie.required", "true")
    # Plain git believes the filter: the changed record looks committed.
    assert git(repo, "status", "--porcelain", "--", C3) == ""
    assert marker.exists()
    marker.unlink()
    code, body = _ci(repo, run_cli, base)
    assert code == 1, body
    assert _codes(body) == ["CI_HEAD_NOT_CHECKED_OUT"]
    assert not marker.exists(), "a filter program configured by the repository ran"


def test_a_process_filter_never_runs_in_any_worktree_command(
    git_repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "process.ran"
    (git_repo / ".gitattributes").write_text("*.txt filter=proc\n")
    (git_repo / "a.txt").write_text("one\n")
    commit_all(git_repo, "attributes")
    git(git_repo, "config", "filter.proc.process", f"sh -c 'touch {marker}; exit 1'")
    git(git_repo, "config", "filter.proc.smudge", f"sh -c 'touch {marker}; cat'")
    (git_repo / "a.txt").write_text("two\n")
    door = Git(git_repo)
    assert door.worktree_changes() == ["a.txt"]
    door.add_worktree(tmp_path / "copy", git(git_repo, "rev-parse", "HEAD"))
    assert (tmp_path / "copy" / "a.txt").read_text() == "one\n"
    # Listing worktrees reads no file's content (it runs without the filter query).
    assert str(tmp_path / "copy").encode() in door.run(["worktree", "list", "--porcelain", "-z"]).stdout
    assert not marker.exists()


def test_a_filter_configured_between_two_calls_is_off_in_the_second(
    git_repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "late.ran"
    (git_repo / ".gitattributes").write_text("*.txt filter=late\n")
    (git_repo / "a.txt").write_text("one\n")
    commit_all(git_repo, "attributes")
    door = Git(git_repo)
    assert door.worktree_changes() == []
    # A driver configured after the first call (by something that ran in between).
    git(git_repo, "config", "filter.late.clean", f"sh -c 'touch {marker}; cat'")
    git(git_repo, "config", "filter.late.required", "true")
    (git_repo / "a.txt").write_text("two\n")
    assert door.worktree_changes() == ["a.txt"]
    assert not marker.exists(), "a filter configured between two calls ran"
