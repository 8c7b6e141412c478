"""run.ndjson: canonical lines appended; anything but a regular file is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure, PlanGateError
from plangate.execution.runlog import append_run_log, open_task_dir

TASK = "TASK-0001"


def _task(tmp_path: Path) -> Path:
    task = tmp_path / "docs" / "working" / TASK
    task.mkdir(parents=True)
    return task


def _append(root: Path, entry: dict[str, object]) -> None:
    with open_task_dir(root, TASK) as task:
        append_run_log(task, entry)


def test_lines_are_appended(tmp_path: Path) -> None:
    log = _task(tmp_path) / "run.ndjson"
    _append(tmp_path, {"b": 1, "a": "x"})
    _append(tmp_path, {"event": "e"})
    lines = log.read_bytes().splitlines()
    assert lines[0] == b'{"a":"x","b":1}'
    assert [json.loads(line) for line in lines][1] == {"event": "e"}


def _refused(root: Path) -> str:
    with pytest.raises(EnvironmentFailure) as info:
        _append(root, {"a": 1})
    assert info.value.code == "EXEC_RUNLOG_UNWRITABLE"
    return info.value.message


def test_a_symlink_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    (_task(tmp_path) / "run.ndjson").symlink_to(target)
    assert "FILE_IS_SYMLINK" in _refused(tmp_path)
    assert target.read_text() == ""


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(_task(tmp_path) / "run.ndjson")
    assert "WRITE_TARGET_NOT_REGULAR" in _refused(tmp_path)


def test_a_hard_linked_log_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.ndjson"
    other.write_text("theirs\n")
    os.link(other, _task(tmp_path) / "run.ndjson")
    assert "WRITE_TARGET_HARD_LINKED" in _refused(tmp_path)
    assert other.read_text() == "theirs\n"


def test_a_linked_task_directory_is_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "docs" / "working").mkdir(parents=True)
    (tmp_path / "docs" / "working" / TASK).symlink_to(outside)
    with pytest.raises(PlanGateError) as info:
        _append(tmp_path, {"a": 1})
    assert info.value.code == "PATH_COMPONENT_LINK"
    assert list(outside.iterdir()) == []
