"""``plangate exec`` never writes through a link: a linked ``.plangate/`` or ``.plangate/locks``,
a hard-linked ``run.ndjson``, a task directory swapped during the ledger's wait, and an approval
changed during that wait all refuse the run with a code, the command never started."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from support.cli import RunCli
from support.delivery import define_surfaces
from support.plan_tasks import approve_task, task_dir
from support.privileges import run_plangate
from support.swap import (
    finish,
    ledger_path,
    ledger_write_lock,
    spawn_plangate,
    tree_files,
    wait_until_open,
)

TASK = "TASK-0001"


def _marker(repo: Path) -> Path:
    """Where the command proves it ran: the file the plan allows, written in exec's workspace
    and applied to the repository after the run (nothing else in the box reaches the host)."""
    return repo / "src" / "greet.py"


def _approve(repo: Path, run_cli: RunCli) -> None:
    """An approved task with the repository's own surfaces: a run that happens is judged
    ACCEPTED and its marker applied, so an absent marker means the command never ran."""
    define_surfaces(repo)
    approve_task(repo, run_cli)


def _command(marker: Path) -> list[str]:
    return [
        sys.executable, "-c",
        f"import os; os.makedirs({str(marker.parent)!r}, exist_ok=True); "
        f"open({str(marker)!r}, 'w').write('ran')",
    ]


@pytest.mark.parametrize("linked", [".plangate", ".plangate/locks"])
def test_a_linked_plangate_directory_refuses_the_run(
    git_repo: Path, tmp_path: Path, run_cli: RunCli, linked: str
) -> None:
    _approve(git_repo, run_cli)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = git_repo / linked
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside)
    marker = _marker(git_repo)
    res = run_cli(git_repo, "exec", TASK, "--", *_command(marker))
    assert res.code == 1, res.err
    assert "PATH_COMPONENT_LINK" in res.err
    assert not marker.exists()
    assert tree_files(outside) == []  # no lock file, no .gitignore, no ledger


def test_a_hard_linked_run_log_is_never_appended_to(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _approve(git_repo, run_cli)
    other = tmp_path / "someone-elses.ndjson"
    other.write_text("theirs\n")
    os.link(other, task_dir(git_repo) / "run.ndjson")
    marker = _marker(git_repo)
    res = run_cli(git_repo, "exec", TASK, "--", *_command(marker))
    assert res.code == 1, res.err
    assert "EXEC_RUNLOG_UNWRITABLE" in res.err
    assert "WRITE_TARGET_HARD_LINKED" in res.err
    assert not marker.exists()
    assert other.read_text() == "theirs\n"


def _during_wait(repo: Path, marker: Path, swap: object) -> tuple[int, str, str]:
    assert callable(swap)
    with ledger_write_lock(repo):
        proc = spawn_plangate(repo, "exec", TASK, "--", *_command(marker))
        wait_until_open(proc, ledger_path(repo))
        swap()
    return finish(proc)


def test_the_harness_lets_an_undisturbed_run_through(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _approve(git_repo, run_cli)
    marker = _marker(git_repo)
    code, _out, err = _during_wait(git_repo, marker, lambda: None)
    assert code == 0, err
    assert marker.exists()
    assert (task_dir(git_repo) / "run.ndjson").is_file()


def test_a_task_directory_swapped_during_the_wait_is_never_written_through(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _approve(git_repo, run_cli)
    outside = tmp_path / "outside"
    marker = _marker(git_repo)

    def swap() -> None:
        tdir = task_dir(git_repo)
        shutil.copytree(tdir, outside)
        tdir.rename(tmp_path / "moved-away")
        tdir.symlink_to(outside)

    code, out, err = _during_wait(git_repo, marker, swap)
    assert code == 1, err + out
    assert "PATH_COMPONENT_LINK" in err
    assert not marker.exists()
    assert not (outside / "run.ndjson").exists()
    assert not (tmp_path / "moved-away" / "run.ndjson").exists()


def test_an_approval_changed_during_the_wait_does_not_start(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _approve(git_repo, run_cli)
    marker = _marker(git_repo)

    def swap() -> None:
        with (task_dir(git_repo) / "todo.md").open("a") as handle:
            handle.write("- [ ] added while exec waited\n")

    code, out, err = _during_wait(git_repo, marker, swap)
    assert code == 1, err + out
    assert "EXEC_APPROVAL_CHANGED" in err
    assert not marker.exists()
    assert not (task_dir(git_repo) / "run.ndjson").exists()


def test_a_read_only_task_directory_refuses_the_run(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _approve(git_repo, run_cli)
    marker = _marker(git_repo)
    tdir = task_dir(git_repo)
    tdir.chmod(0o555)
    try:
        proc = run_plangate(git_repo, "exec", TASK, "--", *_command(marker))
    finally:
        tdir.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "INTERNAL_ERROR" not in proc.stderr
    assert "EXEC_RUNLOG_UNWRITABLE" in proc.stderr
    assert "PATH_NOT_WRITABLE" in proc.stderr
    assert not marker.exists()


def test_a_read_only_plangate_directory_refuses_the_run(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _approve(git_repo, run_cli)
    marker = _marker(git_repo)
    plangate = git_repo / ".plangate"
    shutil.rmtree(plangate / "locks", ignore_errors=True)
    plangate.chmod(0o555)
    try:
        proc = run_plangate(git_repo, "exec", TASK, "--", *_command(marker))
    finally:
        plangate.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "INTERNAL_ERROR" not in proc.stderr
    assert "PATH_UNAVAILABLE" in proc.stderr
    assert not marker.exists()


def test_a_run_log_swapped_for_a_link_during_the_wait_is_not_written_through(
    git_repo: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _approve(git_repo, run_cli)
    victim = tmp_path / "victim.ndjson"
    victim.write_text("")
    marker = _marker(git_repo)

    def swap() -> None:
        (task_dir(git_repo) / "run.ndjson").symlink_to(victim)

    code, out, err = _during_wait(git_repo, marker, swap)
    assert code == 1, err + out
    assert "FILE_IS_SYMLINK" in err
    assert not marker.exists()
    assert victim.read_text() == ""
