"""The task snapshot reader: read once, regular files only, bounded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.canonical import sha256_digest
from plangate.errors import InputRejected, UsageError
from plangate.fsutil import FileState
from plangate.layout import MAX_ARTIFACT_BYTES, MAX_RECORD_BYTES, RECORD_RELPATH
from plangate.snapshot import (
    ARTIFACTS,
    check_task_id,
    find_repo_root,
    read_task_snapshot,
    task_dir_for,
)


def _task(root: Path, task_id: str = "TASK-0001") -> Path:
    task = root / "docs" / "working" / task_id
    task.mkdir(parents=True)
    for name in ARTIFACTS:
        (task / name).write_bytes(f"# {name}\n".encode())
    (task / "approvals").mkdir()
    (task / RECORD_RELPATH).write_bytes(b"{}\n")
    return task


def test_artifact_order_is_the_contract_order() -> None:
    assert ARTIFACTS == (
        "pbi-input.md",
        "plan.md",
        "todo.md",
        "test-cases.md",
        "review-self.md",
        "review-external.md",
    )
    assert RECORD_RELPATH == "approvals/c3.json"


@pytest.mark.parametrize("task_id", ["TASK-0000", "TASK-9999", "TASK-0872"])
def test_valid_task_ids(task_id: str) -> None:
    assert check_task_id(task_id) == task_id


@pytest.mark.parametrize(
    "task_id",
    ["", None, "task-9999", "TASK-999", "TASK-08722", "TASK-0001\n", " TASK-0001", "TASK-\u0661234",
     "TASK-00a1", "free text", 1234],
)
def test_invalid_task_ids(task_id: object) -> None:
    with pytest.raises(UsageError) as info:
        check_task_id(task_id)
    assert info.value.code == "TASK_ID_INVALID"


def test_task_dir_for(tmp_path: Path) -> None:
    assert task_dir_for(tmp_path, "TASK-0001") == tmp_path / "docs" / "working" / "TASK-0001"
    with pytest.raises(UsageError):
        task_dir_for(tmp_path, "../TASK-0001")


def test_find_repo_root(git_repo: Path, tmp_path: Path) -> None:
    deep = git_repo / "a" / "b"
    deep.mkdir(parents=True)
    assert find_repo_root(deep) == git_repo.resolve()
    assert find_repo_root(git_repo) == git_repo.resolve()
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    assert find_repo_root(lonely) == lonely.resolve()


def test_reads_every_file_once(tmp_path: Path) -> None:
    task = _task(tmp_path)
    snap = read_task_snapshot(task)
    assert snap.task_id == "TASK-0001"
    assert list(snap.artifacts) == list(ARTIFACTS)
    assert all(read.ok for read in snap.artifacts.values())
    assert snap.record.ok and snap.record.data == b"{}\n"
    assert snap.artifact("plan.md") == b"# plan.md\n"
    assert snap.artifact_hashes() == {
        name: sha256_digest(f"# {name}\n".encode()) for name in ARTIFACTS
    }
    # Later changes on disk do not change the snapshot: it holds the bytes.
    (task / "plan.md").write_bytes(b"changed")
    assert snap.artifact("plan.md") == b"# plan.md\n"


def test_digest_is_deterministic_and_sensitive(tmp_path: Path) -> None:
    task = _task(tmp_path)
    first = read_task_snapshot(task).digest()
    assert first == read_task_snapshot(task).digest()
    (task / "todo.md").write_bytes(b"# todo.md\n ")
    second = read_task_snapshot(task).digest()
    assert second != first
    (task / RECORD_RELPATH).write_bytes(b"{ }\n")
    assert read_task_snapshot(task).digest() != second


def test_digest_distinguishes_empty_from_missing(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / "todo.md").write_bytes(b"")
    empty = read_task_snapshot(task)
    assert empty.artifacts["todo.md"].ok
    assert empty.artifact("todo.md") == b""
    (task / "todo.md").unlink()
    missing = read_task_snapshot(task)
    assert missing.artifacts["todo.md"].state is FileState.MISSING
    assert missing.artifact("todo.md") is None
    assert "todo.md" not in missing.artifact_hashes()
    assert empty.digest() != missing.digest()


def test_symlink_artifact_pointing_inside_the_task_is_refused(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / "todo.md").unlink()
    (task / "todo.md").symlink_to("plan.md")  # inside the task, still refused
    snap = read_task_snapshot(task)
    assert snap.artifacts["todo.md"].state is FileState.SYMLINK
    assert snap.artifact("todo.md") is None


def test_symlink_artifact_pointing_outside(tmp_path: Path) -> None:
    task = _task(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("x")
    (task / "plan.md").unlink()
    (task / "plan.md").symlink_to(outside)
    assert read_task_snapshot(task).artifacts["plan.md"].state is FileState.SYMLINK


def test_fifo_artifact_does_not_hang(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / "review-self.md").unlink()
    os.mkfifo(task / "review-self.md")
    assert read_task_snapshot(task).artifacts["review-self.md"].state is FileState.NOT_REGULAR


def test_directory_artifact(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / "pbi-input.md").unlink()
    (task / "pbi-input.md").mkdir()
    assert read_task_snapshot(task).artifacts["pbi-input.md"].state is FileState.NOT_REGULAR


def test_too_large_artifact_and_record(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / "test-cases.md").write_bytes(b"x" * (MAX_ARTIFACT_BYTES + 1))
    (task / RECORD_RELPATH).write_bytes(b" " * (MAX_RECORD_BYTES + 1))
    snap = read_task_snapshot(task)
    assert snap.artifacts["test-cases.md"].state is FileState.TOO_LARGE
    assert snap.record.state is FileState.TOO_LARGE


def test_artifact_at_the_bound_is_read(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / "test-cases.md").write_bytes(b"x" * MAX_ARTIFACT_BYTES)
    assert read_task_snapshot(task).artifacts["test-cases.md"].ok


def test_missing_record(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / RECORD_RELPATH).unlink()
    assert read_task_snapshot(task).record.state is FileState.MISSING


def test_symlinked_record(tmp_path: Path) -> None:
    task = _task(tmp_path)
    real = tmp_path / "forged.json"
    real.write_text("{}")
    (task / RECORD_RELPATH).unlink()
    (task / RECORD_RELPATH).symlink_to(real)
    assert read_task_snapshot(task).record.state is FileState.SYMLINK


def test_symlinked_approvals_dir(tmp_path: Path) -> None:
    task = _task(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c3.json").write_text("{}")
    (task / RECORD_RELPATH).unlink()
    (task / "approvals").rmdir()
    (task / "approvals").symlink_to(elsewhere)
    snap = read_task_snapshot(task)
    assert snap.record.state is FileState.SYMLINK
    assert snap.record.data is None


def test_approvals_is_a_file(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (task / RECORD_RELPATH).unlink()
    (task / "approvals").rmdir()
    (task / "approvals").write_text("not a dir")
    assert read_task_snapshot(task).record.state is FileState.MISSING


def test_symlinked_task_dir_is_refused(tmp_path: Path) -> None:
    real = _task(tmp_path, "TASK-0001")
    link = real.parent / "TASK-0002"
    link.symlink_to(real)
    with pytest.raises(InputRejected) as info:
        read_task_snapshot(link)
    assert info.value.code == "TASK_DIR_INVALID"
    assert "symbolic link" in info.value.message


def test_missing_task_dir(tmp_path: Path) -> None:
    with pytest.raises(InputRejected) as info:
        read_task_snapshot(tmp_path / "docs" / "working" / "TASK-0404")
    assert info.value.code == "TASK_DIR_INVALID"
    assert "plangate init" in info.value.hint


def test_task_dir_that_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "TASK-0001"
    path.write_text("x")
    with pytest.raises(InputRejected) as info:
        read_task_snapshot(path)
    assert info.value.code == "TASK_DIR_INVALID"
