"""``plangate status`` reads tasks in bounded batches and reports exactly what one pass would."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.approval import status
from support.repo import commit_all
from support.taskkit import approve_task, make_task

TASKS = [f"TASK-{n:04d}" for n in range(1, 8)]


@pytest.fixture
def repo(git_repo: Path) -> Path:
    for task_id in TASKS:
        make_task(git_repo, task_id, commit=False)
    commit_all(git_repo, "plan packages")
    for task_id in TASKS[::2]:
        approve_task(git_repo, task_id)
    # One task a snapshot cannot be read for (its directory is a file), one named twice.
    (git_repo / "docs" / "working" / "TASK-0100").write_text("not a directory\n")
    return git_repo


def _report(repo: Path, named: list[str], batch: int, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    held: list[int] = []
    real = status._resolve_sources

    def counting(root, snapshots, parsed=None, known=None):  # type: ignore[no-untyped-def]
        held.append(len(snapshots))
        return real(root, snapshots, parsed, known)

    monkeypatch.setattr(status, "SNAPSHOT_BATCH", batch)
    monkeypatch.setattr(status, "_resolve_sources", counting)
    return status.status_report(repo, named), held


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 512])
def test_any_batch_size_gives_the_same_report(
    repo: Path, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, _ = _report(repo, [], 10_000, monkeypatch)
    report, held = _report(repo, [], batch, monkeypatch)
    assert report.rows == whole.rows
    assert report.summary == whole.summary
    assert [row["task"] for row in report.rows] == sorted([*TASKS, "TASK-0100"])
    assert whole.summary == {"ACCEPTED": 4, "REJECTED": 4}
    # No more snapshots held at once than the batch, and every readable task judged once.
    assert max(held) <= batch
    assert sum(held) == len(TASKS)


def test_named_and_missing_tasks_keep_their_order_across_batches(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = ["TASK-0007", "TASK-0404", "TASK-0001", "TASK-0100", "TASK-0003"]
    report, held = _report(repo, named, 2, monkeypatch)
    assert [row["task"] for row in report.rows] == ["TASK-0007", "TASK-0001", "TASK-0100",
                                                       "TASK-0003"]
    assert [reason.code for reason in report.missing] == ["TASK_NOT_FOUND"]
    assert "TASK-0404" in report.missing[0].message
    assert max(held) <= 2


def test_a_full_source_id_is_asked_of_git_once_per_report(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plangate.git import Git

    asked: list[list[str]] = []
    real = Git.resolve_commits

    def counting(self: Git, revs: list[str]):  # type: ignore[no-untyped-def]
        asked.append(list(revs))
        return real(self, revs)

    whole, _ = _report(repo, [], 10_000, monkeypatch)
    monkeypatch.setattr(Git, "resolve_commits", counting)
    report, _ = _report(repo, [], 1, monkeypatch)
    assert report.rows == whole.rows
    # Every approved task binds HEAD: the first batch with a record asks, the others reuse.
    assert len(asked) == 1
    # An abbreviated id is not remembered: each batch that holds one asks again.
    for task_id in TASKS[::2]:
        record_path = repo / "docs" / "working" / task_id / "approvals" / "c3.json"
        record = record_path.read_text()
        full = record.split('"source_sha": "')[1][:40]
        record_path.write_text(record.replace(f'"source_sha": "{full}"', f'"source_sha": "{full[:12]}"'))
    asked.clear()
    short, _ = _report(repo, [], 1, monkeypatch)
    assert len(asked) == len(TASKS[::2])
    assert [row["verdict"] for row in short.rows] == [row["verdict"] for row in whole.rows]
