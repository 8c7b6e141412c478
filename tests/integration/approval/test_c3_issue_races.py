"""``c3 issue`` and ``arbiter --issue`` write only what they verified after their last wait.

Each test holds the ledger's write lock, starts the command, waits until it is
at its ledger write (its inputs already read and judged), changes the file
system, releases the lock and checks the outcome: no write outside the
repository, no record for bytes that changed, a reason code and a non-zero exit.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from support.privileges import run_plangate
from support.repo import commit_all, git
from support.swap import (
    finish,
    ledger_path,
    ledger_write_lock,
    spawn_plangate,
    tree_files,
    wait_until_open,
)
from support.taskkit import make_task, reviewers_file, task_dir

TASK = "TASK-0001"
AT = "2026-12-01T09:00:00Z"


def _issue_argv(repo: Path, tmp_path: Path) -> list[str]:
    rev = reviewers_file(tmp_path / "reviewers.json")
    head = git(repo, "rev-parse", "HEAD")
    return [
        "c3",
        "issue",
        TASK,
        "--target-sha",
        head,
        "--reviewers",
        str(rev),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "plangate-arbiter@v1",
        "--issued-at",
        AT,
    ]


def _arbiter_argv(repo: Path, tmp_path: Path) -> list[str]:
    rev = reviewers_file(tmp_path / "reviewers.json")
    head = git(repo, "rev-parse", "HEAD")
    base = git(repo, "rev-parse", "HEAD~1")
    return [
        "arbiter",
        TASK,
        "--target-sha",
        head,
        "--base",
        base,
        "--reviewers",
        str(rev),
        "--loopspec-actors",
        "impl,qa",
        "--class",
        "no-merge",
        "--lite",
        "all",
        "--breakdown",
        "pass",
        "--timestamp",
        AT,
        "--issue",
    ]


def test_the_harness_lets_an_undisturbed_arbiter_issue_through(
    git_repo: Path, tmp_path: Path
) -> None:
    _arbiter_repo(git_repo)
    code, out, err = _during_wait(git_repo, _arbiter_argv(git_repo, tmp_path), lambda: None)
    assert code == 0, err + out
    assert _record(git_repo).is_file()


def _during_wait(repo: Path, argv: list[str], swap: object) -> tuple[int, str, str]:
    assert callable(swap)
    with ledger_write_lock(repo):
        proc = spawn_plangate(repo, *argv)
        wait_until_open(proc, ledger_path(repo))
        swap()
    return finish(proc)


def _record(repo: Path) -> Path:
    return task_dir(repo) / "approvals" / "c3.json"


def test_the_harness_lets_an_undisturbed_issue_through(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    code, _out, err = _during_wait(git_repo, _issue_argv(git_repo, tmp_path), lambda: None)
    assert code == 0, err
    assert _record(git_repo).is_file()


def test_task_directory_swapped_for_a_link_during_the_wait(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    outside = tmp_path / "outside"

    def swap() -> None:
        tdir = task_dir(git_repo)
        shutil.copytree(tdir, outside)
        tdir.rename(tmp_path / "moved-away")
        tdir.symlink_to(outside)

    code, _out, err = _during_wait(git_repo, _issue_argv(git_repo, tmp_path), swap)
    assert code == 1, err + _out
    assert "PATH_COMPONENT_LINK" in err + _out
    assert not (outside / "approvals").exists()
    assert not (tmp_path / "moved-away" / "approvals").exists()


def test_approvals_swapped_for_a_link_during_the_wait(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "approvals").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()

    def swap() -> None:
        approvals = task_dir(git_repo) / "approvals"
        approvals.rmdir()
        approvals.symlink_to(outside)

    code, _out, err = _during_wait(git_repo, _issue_argv(git_repo, tmp_path), swap)
    assert code == 1, err + _out
    assert "PATH_COMPONENT_LINK" in err + _out
    assert tree_files(outside) == []


def test_docs_working_swapped_for_a_link_during_the_wait(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    outside = tmp_path / "outside"

    def swap() -> None:
        working = git_repo / "docs" / "working"
        shutil.copytree(working, outside)
        shutil.rmtree(working)
        working.symlink_to(outside)

    code, _out, err = _during_wait(git_repo, _issue_argv(git_repo, tmp_path), swap)
    assert code == 1, err + _out
    assert "PATH_COMPONENT_LINK" in err + _out
    assert not (outside / TASK / "approvals").exists()


def test_an_artifact_changed_during_the_wait_is_stale(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)

    def swap() -> None:
        with (task_dir(git_repo) / "plan.md").open("a") as handle:
            handle.write("\nOne more step, added while the issuer waited.\n")

    code, out, err = _during_wait(git_repo, _issue_argv(git_repo, tmp_path), swap)
    assert code == 1, err + out
    assert "C3_ISSUE_STALE" in err + out
    assert not _record(git_repo).exists()
    assert not (task_dir(git_repo) / "approvals").exists()


def test_an_artifact_removed_during_the_wait_is_stale(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    code, out, err = _during_wait(
        git_repo, _issue_argv(git_repo, tmp_path), (task_dir(git_repo) / "todo.md").unlink
    )
    assert code == 1, err + out
    assert "C3_ISSUE_STALE" in err + out
    assert not _record(git_repo).exists()


def test_a_record_appearing_during_the_wait_is_not_overwritten(
    git_repo: Path, tmp_path: Path
) -> None:
    make_task(git_repo)

    def swap() -> None:
        (task_dir(git_repo) / "approvals").mkdir()
        _record(git_repo).write_text("theirs")

    code, out, err = _during_wait(git_repo, _issue_argv(git_repo, tmp_path), swap)
    assert code == 1, err + out
    assert "FILE_EXISTS" in err + out or "C3_ISSUE_STALE" in err + out
    assert _record(git_repo).read_text() == "theirs"


SURFACES = b"""version = 1

[[surface]]
pattern = "**/approvals/**"
class = "approval"
reason = "approval records"

[[surface]]
pattern = ".plangate/**"
class = "settings"
reason = "plangate configuration"
"""


def _arbiter_repo(repo: Path) -> None:
    (repo / ".plangate").mkdir()
    (repo / ".plangate" / "protected-surfaces.toml").write_bytes(SURFACES)
    make_task(repo)
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    commit_all(repo, "change")


def test_the_arbiter_binds_only_the_package_it_judged(git_repo: Path, tmp_path: Path) -> None:
    _arbiter_repo(git_repo)

    def swap() -> None:
        with (task_dir(git_repo) / "plan.md").open("a") as handle:
            handle.write("\nChanged after the arbiter judged the package.\n")

    code, out, err = _during_wait(git_repo, _arbiter_argv(git_repo, tmp_path), swap)
    assert code != 0, err + out
    assert "C3_ISSUE_STALE" in err + out
    assert not _record(git_repo).exists()


def test_the_arbiter_never_writes_through_a_swapped_task_directory(
    git_repo: Path, tmp_path: Path
) -> None:
    _arbiter_repo(git_repo)
    outside = tmp_path / "outside"

    def swap() -> None:
        tdir = task_dir(git_repo)
        shutil.copytree(tdir, outside)
        tdir.rename(tmp_path / "moved-away")
        tdir.symlink_to(outside)

    code, out, err = _during_wait(git_repo, _arbiter_argv(git_repo, tmp_path), swap)
    assert code != 0, err + out
    assert "PATH_COMPONENT_LINK" in err + out
    assert not (outside / "approvals").exists()


def test_a_read_only_task_directory_is_a_reason(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    argv = _issue_argv(git_repo, tmp_path)
    # The ledger must be writable; only the task directory is read-only.
    from support.swap import create_ledger

    create_ledger(git_repo)
    tdir = task_dir(git_repo)
    tdir.chmod(0o555)
    try:
        proc = run_plangate(git_repo, *argv)
    finally:
        tdir.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "PATH_UNAVAILABLE" in proc.stdout + proc.stderr
    assert not (tdir / "approvals").exists()


def test_a_task_directory_moved_while_the_record_is_written_gets_it_back(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The move happens between the verified open and the write: the record is taken back."""
    from plangate import fsutil
    from support.cli import run_cli_in

    make_task(git_repo)
    real_write = fsutil.atomic_write_at
    moved = tmp_path / "moved-away"
    outside = tmp_path / "outside"
    outside.mkdir()

    def write_then_move(directory: Any, name: str, *args: Any, **kwargs: Any) -> None:
        real_write(directory, name, *args, **kwargs)
        if name == "c3.json":
            task_dir(git_repo).rename(moved)
            task_dir(git_repo).symlink_to(outside)

    monkeypatch.setattr(fsutil, "atomic_write_at", write_then_move)
    res = run_cli_in(git_repo, *_issue_argv(git_repo, tmp_path))
    assert res.code == 1, res.out + res.err
    assert "PATH_MOVED_DURING_WRITE" in res.out + res.err
    assert not (moved / "approvals" / "c3.json").exists()
    assert tree_files(outside) == []


def test_approvals_swapped_for_a_file_during_the_wait(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "approvals").mkdir()

    def swap() -> None:
        approvals = task_dir(git_repo) / "approvals"
        approvals.rmdir()
        approvals.write_text("a file now")

    code, out, err = _during_wait(git_repo, _issue_argv(git_repo, tmp_path), swap)
    assert code == 1, err + out
    assert "PATH_COMPONENT_NOT_DIRECTORY" in err + out
    assert (task_dir(git_repo) / "approvals").read_text() == "a file now"


def test_a_record_swapped_for_a_link_during_a_forced_issue(git_repo: Path, tmp_path: Path) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "approvals").mkdir()
    _record(git_repo).write_text("old record")
    victim = tmp_path / "victim.json"
    victim.write_text("keep")

    def swap() -> None:
        _record(git_repo).unlink()
        _record(git_repo).symlink_to(victim)

    argv = [*_issue_argv(git_repo, tmp_path), "--force"]
    code, out, err = _during_wait(git_repo, argv, swap)
    assert code == 1, err + out
    assert "FILE_IS_SYMLINK" in err + out
    assert victim.read_text() == "keep"
    assert _record(git_repo).is_symlink()
