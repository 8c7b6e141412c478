"""Extracted trees: raw bytes of a commit with no .git, and differences found by hashing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.isolation.trees import extract_commit, tree_differences
from support.repo import commit_all, git


@pytest.fixture
def commit(git_repo: Path, tmp_path: Path) -> str:
    marker = tmp_path / "filter-ran"
    git(git_repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(git_repo, "config", "filter.evil.smudge", f"touch {marker}; cat")
    (git_repo / ".gitattributes").write_text("*.txt text eol=crlf\n*.bin filter=evil\n")
    (git_repo / "a.txt").write_bytes(b"line one\nline two\n")
    (git_repo / "data.bin").write_bytes(b"\x00raw\xff")
    (git_repo / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (git_repo / "tool.sh").chmod(0o755)
    (git_repo / "dir").mkdir()
    (git_repo / "dir" / "deep.py").write_text("X = 1\n")
    os.symlink("dir/deep.py", git_repo / "link")
    (git_repo / ".gitignore").write_text("__pycache__/\n")
    head = commit_all(git_repo, "tree")
    if marker.exists():
        marker.unlink()
    return head


def test_extraction_is_the_commit_as_raw_bytes_without_git(
    git_repo: Path, tmp_path: Path, commit: str
) -> None:
    dest = tmp_path / "tree"
    extract_commit(git_repo, commit, dest)
    assert not (dest / ".git").exists()
    assert (dest / "a.txt").read_bytes() == git(
        git_repo, "cat-file", "blob", f"{commit}:a.txt"
    ).encode() + b"\n"
    assert b"\r\n" not in (dest / "a.txt").read_bytes()  # no end-of-line conversion
    assert (dest / "data.bin").read_bytes() == b"\x00raw\xff"
    assert not (tmp_path / "filter-ran").exists()  # no filter program ran
    assert os.access(dest / "tool.sh", os.X_OK)
    assert os.readlink(dest / "link") == "dir/deep.py"
    assert tree_differences(git_repo, commit, dest) == []
    assert git(git_repo, "status", "--porcelain") == ""  # the repository's index is untouched


@pytest.mark.parametrize(
    "change",
    ["modify", "add", "add_ignored", "delete", "chmod", "retarget", "replace_with_dir", "truncate"],
)
def test_every_kind_of_change_is_found(
    git_repo: Path, tmp_path: Path, commit: str, change: str
) -> None:
    dest = tmp_path / "tree"
    extract_commit(git_repo, commit, dest)
    expected = {
        "modify": "a.txt",
        "add": "new.py",
        "add_ignored": "__pycache__/deep.cpython-311.pyc",
        "delete": "dir/deep.py",
        "chmod": "tool.sh",
        "retarget": "link",
        "replace_with_dir": "data.bin",
        "truncate": "a.txt",
    }[change]
    target = dest / expected
    if change == "modify":
        target.write_bytes(target.read_bytes().replace(b"one", b"0ne"))
    elif change in ("add", "add_ignored"):
        target.parent.mkdir(exist_ok=True)
        target.write_text("forged")
    elif change == "delete":
        target.unlink()
    elif change == "chmod":
        target.chmod(0o644)
    elif change == "retarget":
        target.unlink()
        os.symlink("a.txt", target)
    elif change == "replace_with_dir":
        target.unlink()
        target.mkdir()
        (target / "x").write_text("x")
    else:
        target.write_bytes(b"")
    found = tree_differences(git_repo, commit, dest)
    assert found and found[0].startswith(expected), found
