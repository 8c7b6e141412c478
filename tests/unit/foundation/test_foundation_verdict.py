"""Verdict words, results, error families and the exit-code mapping."""

from __future__ import annotations

import pytest

from plangate.errors import (
    EnvironmentFailure,
    HumanRequired,
    Inconclusive,
    InputRejected,
    PlanGateError,
    UsageError,
)
from plangate.verdict import ExitCode, Reason, Result, exit_code_for


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("ACCEPTED", 0), ("AUTO_APPROVED", 0), ("PASS", 0), ("MERGE_READY", 0),
        ("REJECTED", 1), ("BLOCKED", 1), ("FAIL", 1), ("DENIED", 1),
        ("HUMAN_ESCALATED", 3), ("HUMAN_REQUIRED", 3),
        ("INCONCLUSIVE", 4),
        ("", 1), ("accepted", 1), ("APPROVED", 1), ("anything else", 1),  # unknown: reject
    ],
)
def test_exit_code_for(word: str, code: int) -> None:
    assert exit_code_for(word) == code


def test_result_json_and_properties() -> None:
    result = Result(
        "REJECTED",
        (Reason("A_CODE", "first", hint="do x"), Reason("B_CODE", "second", evidence=("e",))),
        {"task_id": "TASK-0001"},
    )
    assert result.exit_code == ExitCode.REJECTED
    assert not result.accepted
    assert result.codes == ("A_CODE", "B_CODE")
    assert result.to_json() == {
        "verdict": "REJECTED",
        "reasons": [
            {"code": "A_CODE", "message": "first", "hint": "do x"},
            {"code": "B_CODE", "message": "second", "evidence": ["e"]},
        ],
        "facts": {"task_id": "TASK-0001"},
    }
    assert Result("ACCEPTED").accepted


@pytest.mark.parametrize(
    ("family", "code"),
    [(UsageError, 2), (InputRejected, 1), (EnvironmentFailure, 1), (HumanRequired, 3),
     (Inconclusive, 4)],
)
def test_error_families(family: type[PlanGateError], code: int) -> None:
    err = family("SOME_CODE", "message", "hint")
    assert err.exit_code == code
    assert str(err) == "SOME_CODE: message"
    assert err.hint == "hint"
