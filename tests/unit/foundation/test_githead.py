"""HEAD read from the files under .git, without running git (and None rather than a guess)."""

from __future__ import annotations

import os
from pathlib import Path

from plangate.githead import git_dirs, read_head
from support.repo import commit_all, git


def test_read_head_matches_git(git_repo: Path, tmp_path: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    assert read_head(str(git_repo)) == head
    git(git_repo, "pack-refs", "--all")
    assert not (git_repo / ".git" / "refs" / "heads" / "main").exists()
    assert read_head(str(git_repo)) == head
    git(git_repo, "checkout", "-q", "--detach")
    assert read_head(str(git_repo)) == head
    git(git_repo, "checkout", "-q", "main")
    (git_repo / "a.txt").write_text("a\n")
    new = commit_all(git_repo, "a")
    assert read_head(str(git_repo)) == new
    wt = tmp_path / "wt"
    git(git_repo, "worktree", "add", "-q", "-b", "side", str(wt), head)
    assert read_head(str(wt)) == head
    assert git_dirs(str(wt)) is not None
    assert git_dirs(str(wt))[1] == os.path.realpath(git_repo / ".git")


def test_read_head_gives_up_rather_than_guessing(git_repo: Path, tmp_path: Path) -> None:
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    git(unborn, "init", "-q")
    assert read_head(str(unborn)) is None
    (git_repo / ".git" / "HEAD").write_text("ref: ../../escape\n")
    assert read_head(str(git_repo)) is None
    assert read_head(str(tmp_path)) is None
