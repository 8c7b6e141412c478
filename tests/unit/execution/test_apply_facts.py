"""The facts apply judges, gathered by PlanGate itself: the modes and link targets of the
result tree (a real git repository) and an ``lstat`` walk of a real workspace holding
FIFOs, sockets, device nodes, nested repositories and paths too long to read."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.execution.apply import (
    SPECIAL_KINDS,
    TreeFact,
    WorkspaceFact,
    tree_facts,
    workspace_facts,
)
from plangate.git import Git
from support.repo import commit_all


def _bare(tmp_path: Path) -> Git:
    """The run's own repository, bare as in the box: git reads the workspace through
    ``--work-tree`` only."""
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "state.git")], check=True)
    return Git(tmp_path / "state.git")


def test_tree_facts_give_each_changed_path_its_mode_and_each_link_its_target(
    git_repo: Path,
) -> None:
    src = git_repo / "src"
    src.mkdir()
    (src / "a.py").write_text("A = 1\n")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    os.symlink("a.py", src / "in")
    os.symlink("../../outside", src / "out")
    (git_repo / "unchanged.txt").write_text("kept\n")
    (git_repo / "gone.py").write_text("x\n")
    commit_all(git_repo, "files")
    (git_repo / "gone.py").unlink()
    head = commit_all(git_repo, "result")
    changed = ("gone.py", "src/a.py", "src/in", "src/out", "src/run.sh")
    assert tree_facts(Git(git_repo), head, changed) == (
        TreeFact("src/a.py", "100644", b""),
        TreeFact("src/in", "120000", b"a.py"),
        TreeFact("src/out", "120000", b"../../outside"),
        TreeFact("src/run.sh", "100755", b""),
    )


def test_tree_facts_of_a_result_without_links(git_repo: Path) -> None:
    (git_repo / "a.txt").write_text("a\n")
    head = commit_all(git_repo, "a")
    assert tree_facts(Git(git_repo), head, ("a.txt",)) == (TreeFact("a.txt", "100644", b""),)
    assert tree_facts(Git(git_repo), head, ()) == ()


def _fifo(path: Path | bytes) -> None:
    os.mkfifo(path)


def test_the_walk_reports_what_git_would_not_record_and_leaves_out_what_it_ignores(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "ws"
    (tree / ".git").mkdir(parents=True)
    _fifo(tree / ".git" / "pipe")  # the workspace's own repository is not walked
    (tree / ".gitignore").write_text("build/\n")
    (tree / "build").mkdir()
    _fifo(tree / "build" / "a")
    _fifo(tree / "build" / "b")
    _fifo(os.fsencode(tree / "build") + b"/\xff")  # a name that is not UTF-8, ignored
    _fifo(os.fsencode(tree) + b"/odd-\xfe")  # and one that is reported
    (tree / "src" / "deep").mkdir(parents=True)
    _fifo(tree / "src" / "deep" / "pipe")
    (tree / "vendor" / "lib" / ".git").mkdir(parents=True)
    _fifo(tree / "vendor" / "lib" / "inner")  # inside another repository: that one's
    (tree / "plain.txt").write_text("x")
    os.symlink("/dev/null", tree / "src" / "null-link")  # links are the tree's to judge
    os.symlink("deep", tree / "src" / "dir-link")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tree / "src" / "s"))
    try:
        found = workspace_facts(tree, _bare(tmp_path))
    finally:
        sock.close()
    assert sorted(found) == [
        WorkspaceFact("odd-\udcfe", "fifo"),
        WorkspaceFact("src/deep/pipe", "fifo"),
        WorkspaceFact("src/s", "socket"),
        WorkspaceFact("vendor/lib", "nested_repository"),
    ]
    assert {f.kind for f in found} <= set(SPECIAL_KINDS)


def test_a_walk_where_git_ignores_nothing_reports_everything(tmp_path: Path) -> None:
    tree = tmp_path / "ws"
    tree.mkdir()
    _fifo(tree / "pipe")
    assert workspace_facts(tree, _bare(tmp_path)) == (WorkspaceFact("pipe", "fifo"),)


def test_a_clean_workspace_needs_no_answer_from_git(tmp_path: Path) -> None:
    tree = tmp_path / "ws"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.py").write_text("a\n")
    not_a_repository = tmp_path / "plain"
    not_a_repository.mkdir()
    assert workspace_facts(tree, Git(not_a_repository)) == ()


def test_a_walk_git_cannot_filter_fails_closed(tmp_path: Path) -> None:
    tree = tmp_path / "ws"
    tree.mkdir()
    _fifo(tree / "pipe")
    not_a_repository = tmp_path / "plain"
    not_a_repository.mkdir()
    with pytest.raises(EnvironmentFailure) as caught:
        workspace_facts(tree, Git(not_a_repository))
    assert caught.value.code == "EXEC_APPLY_FAILED"


@pytest.mark.parametrize(
    ("kind", "device"),
    [(stat.S_IFCHR, os.makedev(1, 3)), (stat.S_IFBLK, os.makedev(7, 0))],
    ids=["character", "block"],
)
def test_the_walk_reports_device_nodes(tmp_path: Path, kind: int, device: int) -> None:
    tree = tmp_path / "ws"
    tree.mkdir()
    try:
        os.mknod(tree / "node", kind | 0o600, device)
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    assert workspace_facts(tree, _bare(tmp_path)) == (WorkspaceFact("node", "device"),)


def test_entries_whose_path_is_too_long_to_read_are_reported_unreadable(
    tmp_path: Path,
) -> None:
    """A directory PlanGate cannot list, and an entry it cannot ``lstat``, are facts
    it cannot judge: here both lie past the system's path length limit (which binds
    root too), below directories it can still list. A regular file and a link there
    need no ``lstat``: the listing says what they are."""
    tree = tmp_path / "ws"
    tree.mkdir()
    limit = os.pathconf(tree, "PC_PATH_MAX")
    parts: list[str] = []
    fd = os.open(tree, os.O_RDONLY)
    try:
        length = len(str(tree))
        while length < limit - 150:
            name = f"d{len(parts)}".ljust(min(200, limit - 140 - length), "x")
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
            parts.append(name)
            length += len(name) + 1
        os.mkfifo("f" * 250, dir_fd=fd)
        os.mkdir("g" * 250, dir_fd=fd)
        # a file and a link are known from the listing alone, however long their path
        os.close(os.open("h" * 250, os.O_CREAT | os.O_WRONLY, dir_fd=fd))
        os.symlink("/dev/null", "i" * 250, dir_fd=fd)
    finally:
        os.close(fd)
    deep = "/".join(parts)
    assert len(str(tree / deep)) < limit < len(str(tree / deep / ("f" * 250)))
    found = workspace_facts(tree, _bare(tmp_path))
    assert sorted(found) == [
        WorkspaceFact(f"{deep}/{'f' * 250}", "unreadable"),
        WorkspaceFact(f"{deep}/{'g' * 250}", "unreadable"),
    ]

