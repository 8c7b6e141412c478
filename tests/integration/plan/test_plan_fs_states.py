"""``init`` and ``review mark`` on ordinary file-system states: links, read-only directories and
a task directory swapped while they run are clear rejections with a code, never exit 5."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from plangate.plan import service
from support.cli import RunCli
from support.privileges import run_plangate
from support.swap import tree_files
from support.taskkit import make_task, task_dir

TASK = "TASK-0001"


def _clean(code: int, err: str) -> None:
    assert code not in (0, 5), err
    assert "INTERNAL_ERROR" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize("link", ["docs", "docs/working"])
def test_init_never_writes_through_a_linked_parent(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, link: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (git_repo / link).parent.mkdir(parents=True, exist_ok=True)
    (git_repo / link).symlink_to(outside, target_is_directory=True)
    res = run_cli(git_repo, "init", TASK)
    _clean(res.code, res.err)
    assert "PATH_COMPONENT_LINK" in res.err
    assert tree_files(outside) == []


def test_init_refuses_a_linked_task_directory(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (git_repo / "docs" / "working").mkdir(parents=True)
    task_dir(git_repo).symlink_to(outside)
    res = run_cli(git_repo, "init", TASK)
    _clean(res.code, res.err)
    assert "TASK_EXISTS" in res.err
    assert tree_files(outside) == []


@pytest.mark.parametrize(
    ("read_only", "code"),
    [
        ("docs", "PATH_UNAVAILABLE"),
        ("docs/working", "PATH_UNAVAILABLE"),
        ("docs/working/TASK-0001", "PATH_NOT_WRITABLE"),
    ],
)
def test_init_in_a_read_only_directory_is_a_reason(
    git_repo: Path, read_only: str, code: str
) -> None:
    (git_repo / read_only).mkdir(parents=True)
    (git_repo / read_only).chmod(0o555)
    try:
        proc = run_plangate(git_repo, "init", TASK)
    finally:
        (git_repo / read_only).chmod(0o755)
    _clean(proc.returncode, proc.stderr)
    assert code in proc.stderr
    assert not (task_dir(git_repo) / "plan.md").exists()


def test_review_mark_in_a_read_only_task_directory_is_a_reason(git_repo: Path) -> None:
    make_task(git_repo)
    before = (task_dir(git_repo) / "review-self.md").read_bytes()
    task_dir(git_repo).chmod(0o555)
    try:
        proc = run_plangate(git_repo, "review", "mark", TASK, "--c1", "PASS")
    finally:
        task_dir(git_repo).chmod(0o755)
    _clean(proc.returncode, proc.stderr)
    assert "PATH_NOT_WRITABLE" in proc.stderr
    assert (task_dir(git_repo) / "review-self.md").read_bytes() == before


def test_review_mark_never_writes_through_a_task_directory_swapped_meanwhile(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_task(git_repo)
    outside = tmp_path / "outside"
    real = service.marked_evidence

    def judge_then_swap(*args: object, **kwargs: object) -> tuple[bytes, str, str]:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        tdir = task_dir(git_repo)
        shutil.copytree(tdir, outside)
        tdir.rename(tmp_path / "moved-away")
        tdir.symlink_to(outside)
        return result

    monkeypatch.setattr(service, "marked_evidence", judge_then_swap)
    res = run_cli(git_repo, "review", "mark", TASK, "--c1", "PASS")
    _clean(res.code, res.err)
    assert "PATH_COMPONENT_LINK" in res.err
    copy = {p.name: p.read_bytes() for p in (tmp_path / "moved-away").iterdir()}
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == copy


def test_review_mark_refuses_a_package_changed_meanwhile(
    run_cli: RunCli, git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_task(git_repo)
    before = (task_dir(git_repo) / "review-self.md").read_bytes()
    real = service.marked_evidence

    def judge_then_edit(*args: object, **kwargs: object) -> tuple[bytes, str, str]:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        with (task_dir(git_repo) / "plan.md").open("a") as handle:
            handle.write("\nedited after the marker was computed\n")
        return result

    monkeypatch.setattr(service, "marked_evidence", judge_then_edit)
    res = run_cli(git_repo, "review", "mark", TASK, "--c1", "PASS")
    _clean(res.code, res.err)
    assert "REVIEW_TASK_CHANGED" in res.err
    assert (task_dir(git_repo) / "review-self.md").read_bytes() == before


def test_init_under_a_concurrent_swapper_never_crashes_nor_writes_outside(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    """A thread swaps the task directory for a link and back while init runs, many times."""
    outside = tmp_path / "outside"
    outside.mkdir()
    working = git_repo / "docs" / "working"
    working.mkdir(parents=True)
    tdir = task_dir(git_repo)
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            try:
                if tdir.is_symlink():
                    tdir.unlink()
                else:
                    shutil.rmtree(tdir, ignore_errors=True)
                    tdir.symlink_to(outside)
            except OSError:
                continue

    thread = threading.Thread(target=swapper)
    thread.start()
    codes = set()
    try:
        for _ in range(40):
            res = run_cli(git_repo, "init", TASK)
            assert "INTERNAL_ERROR" not in res.err and "Traceback" not in res.err, res.err
            codes.add(res.code)
    finally:
        stop.set()
        thread.join()
    assert codes <= {0, 1}
    assert tree_files(outside) == []
