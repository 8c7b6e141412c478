"""Trial progress: a self-overwriting line on a real terminal, plain lines elsewhere, and
a reader that goes away never stops the run."""

from __future__ import annotations

import io
import os
import pty
from typing import Any, NamedTuple

from plangate.evaluation.run.trials import ProgressLine


class _Outcome(NamedTuple):
    """All a progress line reads of a trial outcome."""

    completed: bool


def _outcome(completed: bool = True) -> Any:
    return _Outcome(completed)


def test_off_a_terminal_there_is_no_carriage_return_and_few_lines() -> None:
    log = io.StringIO()
    progress = ProgressLine(log, min_total=8)
    for done in range(1, 101):
        progress(done, 100, _outcome())
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert 10 <= len(lines) <= 11
    assert lines[-1].startswith("trials 100/100")


def test_on_a_terminal_one_line_overwrites_itself() -> None:
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w", closefd=False) as terminal:
            progress = ProgressLine(terminal, min_total=8)
            for done in range(1, 9):
                progress(done, 8, _outcome(completed=done != 3))
        written = os.read(master, 65536).decode()
    finally:
        os.close(slave)
        os.close(master)
    assert written.count("\r") >= 8
    assert "trials 8/8  failed 1" in written


def test_a_closed_stream_stops_the_output_not_the_run() -> None:
    stream = io.StringIO()
    stream.close()
    progress = ProgressLine(stream, min_total=1)
    progress(1, 2, _outcome())
    progress(2, 2, _outcome())
    assert progress.stream is None
