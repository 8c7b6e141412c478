"""run.ndjson: canonical lines appended; anything but a regular file is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.execution.runlog import append_run_log


def test_lines_are_appended(tmp_path: Path) -> None:
    log = tmp_path / "run.ndjson"
    append_run_log(log, {"b": 1, "a": "x"})
    append_run_log(log, {"event": "e"})
    lines = log.read_bytes().splitlines()
    assert lines[0] == b'{"a":"x","b":1}'
    assert [json.loads(line) for line in lines][1] == {"event": "e"}


def test_a_symlink_or_fifo_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    link = tmp_path / "link.ndjson"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.ndjson"
    os.mkfifo(fifo)
    for path in (link, fifo):
        with pytest.raises(EnvironmentFailure) as info:
            append_run_log(path, {"a": 1})
        assert info.value.code == "EXEC_RUNLOG_UNWRITABLE"
    assert target.read_text() == ""
