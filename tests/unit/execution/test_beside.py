"""Work exec does beside the workspace's making: its value, or what it raised, reaches the
caller when it asks, never earlier and never lost."""

from __future__ import annotations

import threading

import pytest

from plangate.errors import EnvironmentFailure
from plangate.execution.isolated import _Beside


def test_the_value_arrives_when_asked_after_the_work_ran_in_another_thread() -> None:
    started = threading.Event()
    release = threading.Event()
    threads: list[str] = []

    def work() -> tuple[str, ...]:
        threads.append(threading.current_thread().name)
        started.set()
        release.wait(10)
        return ("~/.ssh", "/repo/.git")

    beside = _Beside(work)
    assert started.wait(10)
    release.set()
    assert beside.result() == ("~/.ssh", "/repo/.git")
    assert threads == ["plangate-beside"]


def test_what_the_work_raised_is_raised_by_result_not_by_wait() -> None:
    def work() -> None:
        raise EnvironmentFailure("EXEC_WORKSPACE_FAILED", "cannot read the surfaces", "retry")

    beside = _Beside(work)
    beside.wait()  # waits, raises nothing: the caller's own failure is the one reported
    with pytest.raises(EnvironmentFailure) as info:
        beside.result()
    assert info.value.code == "EXEC_WORKSPACE_FAILED"
