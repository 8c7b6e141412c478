"""``plangate status`` reads and judges the usual task quickly, and answers exactly as the
strict path does for every kind of task, good or bad.

The quick paths: ``docs/working`` opened once as a verified handle and each task read
relative to it (:func:`plangate.snapshot.read_task_snapshot_in`), and the acceptor's
quick acceptance of the usual record (:func:`plangate.approval.acceptor.quick_accept`).
The strict path reads each task by path (:func:`plangate.snapshot.read_task_snapshot`)
and runs the whole rule table. Both run here over one repository holding a task of
each kind, and every row must be the same.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.approval import acceptor, status
from plangate.errors import PlanGateError
from plangate.snapshot import open_working_dir, read_task_snapshot, read_task_snapshot_in
from support.repo import commit_all, git
from support.taskkit import approve_task, load_record, make_task, save_record, task_dir

GOOD = "TASK-0001"


def _edit(repo: Path, task_id: str, **changes: object) -> None:
    record = load_record(repo, task_id)
    record.update(changes)
    save_record(repo, record, task_id)


def _zoo(repo: Path) -> list[str]:
    """One task of each kind; returns their ids."""
    kinds = [f"TASK-{n:04d}" for n in range(1, 21)]
    for task_id in kinds[:17]:
        make_task(repo, task_id, commit=False)
    commit_all(repo, "plan packages")
    first = git(repo, "rev-list", "--max-parents=0", "HEAD")
    for task_id in kinds[:17]:
        approve_task(repo, task_id)
    d = {task_id: task_dir(repo, task_id) for task_id in kinds}
    (d["TASK-0002"] / "todo.md").write_text("- [x] changed after the approval\n")  # stale
    _edit(repo, "TASK-0003", plan_package_hash="sha256:" + "0" * 64)  # wrong package hash
    (d["TASK-0004"] / "todo.md").unlink()  # missing artifact
    (d["TASK-0005"] / "pbi-input.md").unlink()
    (d["TASK-0005"] / "pbi-input.md").symlink_to(d["TASK-0001"] / "pbi-input.md")
    (d["TASK-0006"] / "todo.md").unlink()
    (d["TASK-0006"] / "todo.md").mkdir()  # a directory in a file's place
    (d["TASK-0007"] / "test-cases.md").unlink()
    os.mkfifo(d["TASK-0007"] / "test-cases.md")  # a FIFO never blocks the reader
    approvals = d["TASK-0008"] / "approvals"
    (approvals / "c3.json").unlink()
    approvals.rmdir()
    approvals.symlink_to(d["TASK-0001"] / "approvals")  # a linked approvals/
    approvals = d["TASK-0009"] / "approvals"
    (approvals / "c3.json").unlink()
    approvals.rmdir()
    approvals.write_text("not a directory\n")
    self_review = d["TASK-0010"] / "review-self.md"
    self_review.write_bytes(self_review.read_bytes().replace(b"\n", b"\r\n"))  # CRLF marker
    _edit(repo, "TASK-0011", source_sha="d" * 40)  # an unknown commit
    _edit(repo, "TASK-0012", source_sha=first)  # bound to another commit than HEAD
    (d["TASK-0013"] / "approvals" / "c3.json").write_bytes(b'{"task_id": "a", "task_id": "b"}')
    (d["TASK-0014"] / "approvals" / "c3.json").write_bytes(b" " * (300 * 1024))  # too large
    record = d["TASK-0015"] / "approvals" / "c3.json"
    record.unlink()
    record.symlink_to(d["TASK-0001"] / "approvals" / "c3.json")
    _edit(repo, "TASK-0016", decision="HUMAN_ESCALATED")
    self_review = d["TASK-0017"] / "review-self.md"
    self_review.write_text(self_review.read_text() + "\u200bC1-VERDICT: FAIL\n")  # hidden marker
    d["TASK-0018"].mkdir()  # an empty task directory
    d["TASK-0019"].symlink_to(d["TASK-0001"])  # a linked task directory
    d["TASK-0020"].write_text("a file, not a directory\n")
    return kinds


@pytest.fixture
def zoo(git_repo: Path) -> tuple[Path, list[str]]:
    return git_repo, _zoo(git_repo)


def _strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every task read by path and every record judged by the whole table."""
    monkeypatch.setattr(status, "open_working_dir", lambda _root: None)
    monkeypatch.setattr(acceptor, "_QUICK_COVERS_TABLE", False)


def test_each_task_reads_the_same_through_the_verified_handle(
    zoo: tuple[Path, list[str]],
) -> None:
    repo, kinds = zoo
    handle = open_working_dir(repo)
    assert handle is not None
    with handle:
        for task_id in kinds:
            path = task_dir(repo, task_id)
            try:
                strict: object = read_task_snapshot(path)
            except PlanGateError as exc:
                strict = (exc.code, exc.message, exc.hint)
            try:
                quick: object = read_task_snapshot_in(handle, path)
            except PlanGateError as exc:
                quick = (exc.code, exc.message, exc.hint)
            assert quick == strict, task_id


def test_every_row_is_the_strict_paths_row(
    zoo: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, kinds = zoo
    quick = status.status_report(repo, [])
    with monkeypatch.context() as patch:
        _strict(patch)
        strict = status.status_report(repo, [])
    assert [row["task"] for row in quick.rows] == kinds
    assert quick.rows == strict.rows
    assert quick.summary == strict.summary
    rows = {row["task"]: row for row in quick.rows}
    # The zoo holds what it claims: one good task, and each bad one with its own reason.
    assert rows[GOOD]["verdict"] == "ACCEPTED"
    assert rows["TASK-0002"]["first_reason"] == "C3_ARTIFACT_STALE"
    assert rows["TASK-0003"]["first_reason"] == "C3_PLAN_PACKAGE_HASH_MISMATCH"
    assert rows["TASK-0005"]["first_reason"] == "ARTIFACT_SYMLINK"
    assert rows["TASK-0007"]["first_reason"] == "ARTIFACT_NOT_REGULAR"
    assert rows["TASK-0008"]["record"] == "symlink"
    assert rows["TASK-0010"]["c1"] == "malformed"
    assert rows["TASK-0012"]["verdict"] == "REJECTED"
    assert rows["TASK-0013"]["first_reason"] == "C3_RECORD_MALFORMED"
    assert rows["TASK-0014"]["first_reason"] == "C3_RECORD_TOO_LARGE"
    assert rows["TASK-0016"]["verdict"] == "HUMAN_ESCALATED"
    assert rows["TASK-0017"]["c1"] == "duplicate"
    assert rows["TASK-0019"]["first_reason"] == "TASK_DIR_INVALID"
    assert sum(row["verdict"] == "ACCEPTED" for row in quick.rows) == 1


def test_named_tasks_give_the_strict_paths_rows(
    zoo: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _kinds = zoo
    named = ["TASK-0019", "TASK-0404", GOOD, "TASK-0020", "TASK-0008"]
    quick = status.status_report(repo, named)
    with monkeypatch.context() as patch:
        _strict(patch)
        strict = status.status_report(repo, named)
    assert quick.rows == strict.rows
    assert quick.missing == strict.missing


def test_a_linked_working_directory_is_read_by_path_and_refused_as_before(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_task(git_repo)
    approve_task(git_repo)
    working = git_repo / "docs" / "working"
    elsewhere = tmp_path / "elsewhere"
    working.rename(elsewhere)
    working.symlink_to(elsewhere)
    assert open_working_dir(git_repo) is None  # no link is followed
    quick = status.status_report(git_repo, [])
    with monkeypatch.context() as patch:
        _strict(patch)
        strict = status.status_report(git_repo, [])
    assert quick.rows == strict.rows
    assert [row["first_reason"] for row in quick.rows] == ["TASK_DIR_INVALID"]


def test_the_quick_acceptance_answers_for_the_usual_task(git_repo: Path) -> None:
    """The good task is accepted by the quick path itself (so the comparisons above
    compare two paths, not the table with itself)."""
    make_task(git_repo)
    approve_task(git_repo)
    snapshot = read_task_snapshot(task_dir(git_repo))
    record = json.loads(snapshot.record.data or b"")
    from plangate.approval.acceptor import SourceResolution
    from plangate.plan.package import compute_package

    head = git(git_repo, "rev-parse", "HEAD")
    quick = acceptor.quick_accept(
        record, snapshot, compute_package(snapshot), head, SourceResolution(head)
    )
    assert quick is not None and quick.verdict == "ACCEPTED"
