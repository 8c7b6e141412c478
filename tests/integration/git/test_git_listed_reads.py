"""Reads of a few paths at one commit from one listing (``Git.listed_at``), in real
repositories: the same answers as one listing per read, and nothing taken from a listing git
could not make (a tree it cannot read, a blob it does not have)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.git import Git, GitError
from support.repo import commit_all, git

PATHS = [".plangate/a.toml", ".plangate/dir", ".plangate/link", ".plangate/absent.toml",
         ".plangate/big.toml"]


def _repo(repo: Path) -> str:
    folder = repo / ".plangate"
    (folder / "dir").mkdir(parents=True)
    (folder / "a.toml").write_text("a = 1\n")
    (folder / "big.toml").write_text("x" * 100)
    (folder / "dir" / "inner.toml").write_text("b = 2\n")
    os.symlink("a.toml", folder / "link")
    return commit_all(repo, "definitions")


def _drop_object(repo: Path, object_id: str) -> None:
    (repo / ".git" / "objects" / object_id[:2] / object_id[2:]).unlink()


def _outcome(call):  # the answer, or the failure's code
    try:
        return call()
    except GitError as exc:
        return exc.code


def test_the_listing_answers_as_one_listing_per_read(git_repo: Path) -> None:
    commit = _repo(git_repo)
    plain, listed = Git(git_repo), Git(git_repo).listed_at(commit, PATHS)
    for path in PATHS:
        assert listed.ls_tree(commit, [path]) == plain.ls_tree(commit, [path]), path
        for limit in (10, 1000):
            assert (_outcome(lambda p=path, n=limit: listed.read_blob(commit, p, n))
                    == _outcome(lambda p=path, n=limit: plain.read_blob(commit, p, n))), path
    assert listed.ls_tree(commit, PATHS[:2]) == plain.ls_tree(commit, PATHS[:2])
    assert listed.read_blob(commit, ".plangate/a.toml", 100) == b"a = 1\n"
    assert listed.ls_tree(commit, [".plangate/dir"])[0].path == ".plangate/dir/inner.toml"
    assert listed.ls_tree(commit, [".plangate/absent.toml"]) == []
    assert _outcome(lambda: listed.read_blob(commit, ".plangate/link", 100)) == (
        "GIT_PATH_NOT_A_FILE")
    assert _outcome(lambda: listed.read_blob(commit, ".plangate/big.toml", 10)) == (
        "GIT_BLOB_TOO_LARGE")


def test_one_listing_serves_every_listed_path(git_repo: Path) -> None:
    commit = _repo(git_repo)
    listed = Git(git_repo).listed_at(commit, PATHS)
    assert listed.ls_tree(commit, [".plangate/a.toml"])
    # Once listed, the tree is not read again for another listed path.
    _drop_object(git_repo, git(git_repo, "rev-parse", f"{commit}:.plangate"))
    assert [e.path for e in listed.ls_tree(commit, [".plangate/dir"])] == [
        ".plangate/dir/inner.toml"]
    # Another commit, or a path that was not listed, is asked of git.
    with pytest.raises(GitError):
        listed.ls_tree(commit, [".plangate/other.toml"])


def test_a_tree_git_cannot_read_is_a_failure_never_an_absence(git_repo: Path) -> None:
    commit = _repo(git_repo)
    _drop_object(git_repo, git(git_repo, "rev-parse", f"{commit}:.plangate"))
    listed = Git(git_repo).listed_at(commit, PATHS)
    for path in PATHS:
        with pytest.raises(GitError):
            listed.ls_tree(commit, [path])
        with pytest.raises(GitError):
            listed.read_blob(commit, path, 100)


def test_a_listing_of_a_tree_beside_an_unreadable_one_answers_as_alone(git_repo: Path) -> None:
    commit = _repo(git_repo)
    (git_repo / "other").mkdir()
    (git_repo / "other" / "x.txt").write_text("x\n")
    commit = commit_all(git_repo, "other")
    _drop_object(git_repo, git(git_repo, "rev-parse", f"{commit}:other"))
    listed = Git(git_repo).listed_at(commit, ["other/x.txt", ".plangate/a.toml"])
    # git cannot list both; the readable path is still answered exactly, the other fails.
    assert [e.path for e in listed.ls_tree(commit, [".plangate/a.toml"])] == [".plangate/a.toml"]
    assert listed.read_blob(commit, ".plangate/a.toml", 100) == b"a = 1\n"
    with pytest.raises(GitError):
        listed.ls_tree(commit, ["other/x.txt"])


def test_a_blob_git_does_not_have_is_a_failure_never_an_absence(git_repo: Path) -> None:
    commit = _repo(git_repo)
    _drop_object(git_repo, git(git_repo, "rev-parse", f"{commit}:.plangate/a.toml"))
    listed = Git(git_repo).listed_at(commit, PATHS)
    assert [e.path for e in listed.ls_tree(commit, [".plangate/a.toml"])] == [".plangate/a.toml"]
    with pytest.raises(GitError):
        listed.read_blob(commit, ".plangate/a.toml", 100)
