"""Verified directory handles: no link followed on the way, writes relative to the handle.

Real symlinks, hard links, FIFOs and read-only directories (the latter in a child
without the DAC capabilities when the tests run as root).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from plangate.errors import PlanGateError
from plangate.fsutil import (
    append_at,
    atomic_write_at,
    child_dir,
    create_if_absent_at,
    lock_at,
    mkdir_at,
    open_verified_dir,
    read_at,
    repo_lock,
)
from support.privileges import interpreter, run_unprivileged


def _code(call: object) -> str:
    assert callable(call)
    with pytest.raises(PlanGateError) as info:
        call()
    return info.value.code


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / "a" / "b" / "c").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    return root, outside


@pytest.mark.parametrize("component", ["a", "a/b", "a/b/c"])
def test_a_link_at_any_component_is_refused(tmp_path: Path, component: str) -> None:
    root, outside = _tree(tmp_path)
    target = root / component
    target.rename(tmp_path / "moved")
    target.symlink_to(outside)
    assert _code(lambda: open_verified_dir(root, "a/b/c")) == "PATH_COMPONENT_LINK"
    assert _code(lambda: open_verified_dir(root, "a/b/c", create=True)) == "PATH_COMPONENT_LINK"


def test_a_dangling_link_is_refused_not_created_through(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (root / "a" / "new").symlink_to(outside / "made")
    assert _code(lambda: open_verified_dir(root, "a/new/x", create=True)) == "PATH_COMPONENT_LINK"
    assert not (outside / "made").exists()


def test_a_link_to_a_file_is_a_link(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (outside / "f").write_text("x")
    (root / "a" / "lnk").symlink_to(outside / "f")
    assert _code(lambda: open_verified_dir(root, "a/lnk")) == "PATH_COMPONENT_LINK"


@pytest.mark.parametrize("create", [False, True])
def test_a_file_in_a_directory_place_is_not_a_directory(tmp_path: Path, create: bool) -> None:
    root, _ = _tree(tmp_path)
    (root / "a" / "file").write_text("x")
    code = _code(lambda: open_verified_dir(root, "a/file/deeper", create=create))
    assert code == "PATH_COMPONENT_NOT_DIRECTORY"


def test_missing_components_without_create(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    assert _code(lambda: open_verified_dir(root, "a/nope/x")) == "PATH_COMPONENT_MISSING"
    assert not (root / "a" / "nope").exists()


def test_create_makes_every_missing_component(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    with open_verified_dir(root, "a/x/y/z", create=True) as handle:
        assert handle.path == root / "a/x/y/z"
        assert (root / "a/x/y/z").is_dir()
        with mkdir_at(handle, "w") as child:
            assert child.rel == "a/x/y/z/w"
        with child_dir(handle, "w") as again:
            assert again.still_in_place()


def test_the_root_is_the_empty_path(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    with open_verified_dir(root) as handle:
        atomic_write_at(handle, "top", b"t")
    assert (root / "top").read_bytes() == b"t"


@pytest.mark.parametrize("bad", ["a/../b", "/a", "a//b", "./a"])
def test_malformed_relative_paths_are_a_programming_error(tmp_path: Path, bad: str) -> None:
    root, _ = _tree(tmp_path)
    with pytest.raises(ValueError):
        open_verified_dir(root, bad)


def test_write_lands_in_the_verified_directory_after_a_swap(tmp_path: Path) -> None:
    """The handle stays on the directory it verified; the link swapped in is never used."""
    root, outside = _tree(tmp_path)
    with open_verified_dir(root, "a/b") as handle:
        (root / "a" / "b").rename(root / "a" / "b.moved")
        (root / "a" / "b").symlink_to(outside)
        assert not handle.still_in_place()
        atomic_write_at(handle, "f.json", b"{}")
        append_at(handle, "log", b"line\n")
    assert list(outside.iterdir()) == []
    assert (root / "a" / "b.moved" / "f.json").read_bytes() == b"{}"
    assert (root / "a" / "b.moved" / "log").read_bytes() == b"line\n"


def test_atomic_write_replaces_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    (root / "a" / "f").write_bytes(b"old")
    with open_verified_dir(root, "a") as handle:
        atomic_write_at(handle, "f", b"new", mode=0o600)
        assert read_at(handle, "f", 10).data == b"new"
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b", "f"]
    assert (root / "a" / "f").stat().st_mode & 0o777 == 0o600


def test_atomic_write_refuses_a_link_in_the_target_place(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (outside / "victim").write_bytes(b"keep")
    (root / "a" / "f").symlink_to(outside / "victim")
    with open_verified_dir(root, "a") as handle:
        for overwrite in (True, False):
            code = _code(lambda ow=overwrite: atomic_write_at(handle, "f", b"x", overwrite=ow))
            assert code == "FILE_IS_SYMLINK"
    assert (outside / "victim").read_bytes() == b"keep"
    assert (root / "a" / "f").is_symlink()


def test_atomic_write_refuses_a_directory_in_the_target_place(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    with open_verified_dir(root, "a") as handle:
        assert _code(lambda: atomic_write_at(handle, "b", b"x")) == "WRITE_TARGET_NOT_REGULAR"


def test_atomic_write_without_overwrite_keeps_the_existing_file(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    (root / "a" / "f").write_bytes(b"theirs")
    with open_verified_dir(root, "a") as handle:
        assert _code(lambda: atomic_write_at(handle, "f", b"ours", overwrite=False)) == (
            "FILE_EXISTS"
        )
        atomic_write_at(handle, "g", b"ours", overwrite=False)
    assert (root / "a" / "f").read_bytes() == b"theirs"
    assert (root / "a" / "g").read_bytes() == b"ours"
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b", "f", "g"]


def test_append_refuses_a_hard_linked_file(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (outside / "other").write_bytes(b"other\n")
    os.link(outside / "other", root / "a" / "log")
    with open_verified_dir(root, "a") as handle:
        assert _code(lambda: append_at(handle, "log", b"x\n")) == "WRITE_TARGET_HARD_LINKED"
    assert (outside / "other").read_bytes() == b"other\n"


def test_append_refuses_a_link_and_a_fifo(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (outside / "victim").write_bytes(b"")
    (root / "a" / "log").symlink_to(outside / "victim")
    os.mkfifo(root / "a" / "fifo")
    with open_verified_dir(root, "a") as handle:
        assert _code(lambda: append_at(handle, "log", b"x\n")) == "FILE_IS_SYMLINK"
        # No reader: a blocking open would hang here.
        assert _code(lambda: append_at(handle, "fifo", b"x\n")) == "WRITE_TARGET_NOT_REGULAR"
        assert _code(lambda: append_at(handle, "b", b"x\n")) == "WRITE_TARGET_NOT_REGULAR"
    assert (outside / "victim").read_bytes() == b""


def test_append_creates_then_appends(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    with open_verified_dir(root, "a") as handle:
        append_at(handle, "log", b"1\n")
        append_at(handle, "log", b"2\n")
    assert (root / "a" / "log").read_bytes() == b"1\n2\n"


def test_lock_refuses_a_link_and_a_fifo_and_reports_a_held_lock(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (root / "a" / "l.lock").symlink_to(outside / "l.lock")
    os.mkfifo(root / "a" / "f.lock")
    with open_verified_dir(root, "a") as handle:
        for name in ("l.lock", "f.lock"):
            with pytest.raises(PlanGateError) as info, lock_at(handle, name):
                pass
            assert info.value.code == "LOCK_UNAVAILABLE"
        with lock_at(handle, "ok.lock"), pytest.raises(PlanGateError) as held:  # noqa: SIM117
            with lock_at(handle, "ok.lock"):
                pass
        assert held.value.code == "LOCK_HELD"
    assert not (outside / "l.lock").exists()


def test_repo_lock_refuses_a_linked_lock_directory(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    (root / ".plangate").symlink_to(outside)
    with pytest.raises(PlanGateError) as info, repo_lock(root, ".plangate/locks", "x.lock"):
        pass
    assert info.value.code == "PATH_COMPONENT_LINK"
    assert list(outside.iterdir()) == []


_SNIPPET = """
import json, sys
from pathlib import Path
from plangate.errors import PlanGateError
from plangate.fsutil import append_at, atomic_write_at, open_verified_dir
root, rel, action = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    with open_verified_dir(root, rel, create=(action == "create")) as handle:
        if action == "write":
            atomic_write_at(handle, "f", b"x")
        elif action == "append":
            append_at(handle, "f", b"x")
    print(json.dumps({"code": None}))
except PlanGateError as exc:
    print(json.dumps({"code": exc.code}))
"""


def _unprivileged(root: Path, rel: str, action: str) -> str | None:
    proc = run_unprivileged([interpreter(), "-c", _SNIPPET, str(root), rel, action], root)
    assert proc.returncode == 0, proc.stderr
    code: str | None = json.loads(proc.stdout)["code"]
    return code


@pytest.mark.skipif(sys.platform != "linux", reason="permission semantics checked on Linux")
@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("write", "PATH_NOT_WRITABLE"),
        ("append", "PATH_NOT_WRITABLE"),
        ("create", "PATH_UNAVAILABLE"),
    ],
)
def test_a_read_only_directory_is_a_reason(tmp_path: Path, action: str, expected: str) -> None:
    root, _ = _tree(tmp_path)
    (root / "a").chmod(0o555)
    try:
        rel = "a/new" if action == "create" else "a"
        assert _unprivileged(root, rel, action) == expected
    finally:
        (root / "a").chmod(0o755)
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b"]


@pytest.mark.skipif(sys.platform != "linux", reason="permission semantics checked on Linux")
def test_an_unsearchable_directory_is_a_reason(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    (root / "a").chmod(0o000)
    try:
        assert _unprivileged(root, "a/b", "open") == "PATH_UNAVAILABLE"
    finally:
        (root / "a").chmod(0o755)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_proc_path_reaches_the_verified_directory_after_a_swap(tmp_path: Path) -> None:
    """A library that takes a path (SQLite) writes where the handle is, not through the link."""
    import sqlite3

    root, outside = _tree(tmp_path)
    with open_verified_dir(root, "a/b") as handle:
        (root / "a" / "b").rename(root / "a" / "b.moved")
        (root / "a" / "b").symlink_to(outside)
        conn = sqlite3.connect(handle.proc_path("db.sqlite3"))
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
        conn.close()
    assert list(outside.iterdir()) == []
    assert (root / "a" / "b.moved" / "db.sqlite3").is_file()


def test_create_if_absent_tolerates_a_creator_that_wrote_the_same_bytes(tmp_path: Path) -> None:
    with open_verified_dir(tmp_path, "runs", create=True) as runs:
        assert create_if_absent_at(runs, ".gitignore", b"*\n") is True
        # A second creator (another process's first run) finds the same bytes: no failure.
        assert create_if_absent_at(runs, ".gitignore", b"*\n") is False
    assert (tmp_path / "runs" / ".gitignore").read_bytes() == b"*\n"


def test_create_if_absent_never_replaces_other_bytes_or_a_link(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "mine").write_bytes(b"my own\n")
    (tmp_path / "target").write_bytes(b"*\n")
    (tmp_path / "d" / "link").symlink_to(tmp_path / "target")
    with open_verified_dir(tmp_path, "d") as d:
        with pytest.raises(PlanGateError) as exc:
            create_if_absent_at(d, "mine", b"*\n")
        assert exc.value.code == "FILE_EXISTS"
        with pytest.raises(PlanGateError) as exc:
            create_if_absent_at(d, "link", b"*\n")
        assert exc.value.code == "FILE_IS_SYMLINK"
    assert (tmp_path / "d" / "mine").read_bytes() == b"my own\n"
