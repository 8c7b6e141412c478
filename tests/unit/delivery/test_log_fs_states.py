"""The delivery record is written only into the verified task directory: a task directory or
``delivery/`` swapped for a link after the record was judged, or a linked ``.plangate/``, is
refused with a code and nothing is written outside the repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plangate.delivery.log import append_entries, read_log, record_lock, seal_entries
from plangate.errors import PlanGateError
from support.swap import tree_files

NOW = "2026-12-02T10:00:00Z"
STATE = {
    "kind": "state",
    "state": "WAITING_FOR_CHECKS",
    "pr_number": 7,
    "head_sha": "a" * 40,
    "reasons": [{"code": "DELIVERY_NO_CHECKS_AT_HEAD", "message": "none"}],
}


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo = tmp_path / "repo"
    task = repo / "docs" / "working" / "TASK-0001"
    task.mkdir(parents=True)
    outside = tmp_path / "outside"
    return repo, task, outside


def test_a_task_directory_swapped_after_judging_is_not_written_through(tmp_path: Path) -> None:
    _repo, task, outside = _layout(tmp_path)
    judged = read_log(task)
    shutil.copytree(task, outside)
    task.rename(tmp_path / "moved-away")
    task.symlink_to(outside)
    with pytest.raises(PlanGateError) as info:
        append_entries(task, judged, seal_entries([STATE], prev=None, at=NOW))
    assert info.value.code == "PATH_COMPONENT_LINK"
    assert tree_files(outside) == []


def test_a_delivery_directory_swapped_for_a_link_is_refused(tmp_path: Path) -> None:
    _repo, task, outside = _layout(tmp_path)
    outside.mkdir()
    judged = read_log(task)
    (task / "delivery").symlink_to(outside)
    with pytest.raises(PlanGateError) as info:
        append_entries(task, judged, seal_entries([STATE], prev=None, at=NOW))
    assert info.value.code == "PATH_COMPONENT_LINK"
    assert tree_files(outside) == []


def test_the_record_is_written_in_the_layout(tmp_path: Path) -> None:
    _repo, task, _outside = _layout(tmp_path)
    append_entries(task, read_log(task), seal_entries([STATE], prev=None, at=NOW))
    assert len(read_log(task).entries) == 1


@pytest.mark.parametrize("linked", [".plangate", ".plangate/locks"])
def test_the_record_lock_refuses_a_linked_plangate_directory(tmp_path: Path, linked: str) -> None:
    repo, task, outside = _layout(tmp_path)
    outside.mkdir()
    (repo / linked).parent.mkdir(parents=True, exist_ok=True)
    (repo / linked).symlink_to(outside)
    with pytest.raises(PlanGateError) as info, record_lock(repo, task):
        pass
    assert info.value.code == "PATH_COMPONENT_LINK"
    assert tree_files(outside) == []
