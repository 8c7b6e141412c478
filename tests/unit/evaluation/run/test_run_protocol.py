"""``plangate-trial/2`` result documents and ``plangate-grade/1`` grades are parsed strictly."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.evaluation.run.protocol import (
    CommandSpec,
    ResultRejectedError,
    TrialSpec,
    activation_rank,
    parse_grade,
    parse_result,
    substitute,
)
from support.evaldocs import ASK, RESULT_ASK, TRIAL_ID, grade_doc, result_doc


def parse(doc: Any) -> Any:
    return parse_result(json.dumps(doc).encode(), **RESULT_ASK)


def test_a_valid_result_parses() -> None:
    report = parse(result_doc())
    assert report.outcome == "BLOCKED"
    assert report.metrics == {"duration_ms": 12.0, "cost": 0.5}
    assert report.activation["verifier:completion-evidence"].level == "influenced_decision"
    assert report.to_json()["detections"] == {"verifier:completion-evidence": "detected"}
    # The evaluator attributes the report; the runner never knew the trial's identity.
    assert (report.side, report.fixture_id, report.role, report.trial) == (
        "candidate", "kb", "known_bad", 2)


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"extra": 1}, "TRIAL_RESULT_UNKNOWN_KEY"),
        ({"protocol": "plangate-trial/1"}, "TRIAL_PROTOCOL_UNSUPPORTED"),
        ({"trial_id": TRIAL_ID.upper()}, "TRIAL_RESULT_MISMATCH"),
        ({"trial_id": "other"}, "TRIAL_RESULT_MISMATCH"),
        ({"trial_id": 2}, "TRIAL_RESULT_MISMATCH"),
        ({"side": "candidate"}, "TRIAL_RESULT_UNKNOWN_KEY"),
        ({"fixture_id": "kb"}, "TRIAL_RESULT_UNKNOWN_KEY"),
        ({"role": "known_bad"}, "TRIAL_RESULT_UNKNOWN_KEY"),
        ({"trial": 2}, "TRIAL_RESULT_UNKNOWN_KEY"),
        ({"outcome": "PASS"}, "TRIAL_RESULT_INVALID"),
        ({"outcome": "MERGE_READY"}, "TRIAL_RESULT_INVALID"),  # with a stop reason
        ({"stop_reasons": []}, "TRIAL_RESULT_INVALID"),  # BLOCKED without one
        ({"stop_reasons": ["MADE_UP"]}, "TRIAL_RESULT_INVALID"),
        ({"stop_reasons": ["NO_PROGRESS", "NO_PROGRESS"]}, "TRIAL_RESULT_INVALID"),
        ({"metrics": {"ok": True}}, "TRIAL_RESULT_INVALID"),
        ({"metrics": {"token": 1}}, "TRIAL_RESULT_INVALID"),
        ({"metrics": {"Bad-Name": 1}}, "TRIAL_RESULT_INVALID"),
        ({"metrics": [1]}, "TRIAL_RESULT_INVALID"),
        ({"activation": {"v": {"level": "super", "evidence_refs": []}}}, "TRIAL_RESULT_INVALID"),
        ({"activation": {"v": {"level": "fired", "evidence_refs": []}}}, "TRIAL_RESULT_INVALID"),
        ({"activation": {"v": {"level": "fired"}}}, "TRIAL_RESULT_INVALID"),
        (
            {"activation": {"bad id!": {"level": "installed", "evidence_refs": []}}},
            "TRIAL_RESULT_INVALID",
        ),
        ({"detections": {"v": "maybe"}}, "TRIAL_RESULT_INVALID"),
    ],
)
def test_defective_results_are_refused(change: dict[str, Any], code: str) -> None:
    with pytest.raises(ResultRejectedError) as info:
        parse(result_doc(**change))
    assert info.value.code == code


@pytest.mark.parametrize("key", ["outcome", "metrics", "activation", "detections", "trial_id"])
def test_missing_keys_are_refused(key: str) -> None:
    doc = result_doc()
    del doc[key]
    with pytest.raises(ResultRejectedError):
        parse(doc)


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"[]", b'{"protocol": 1, "protocol": 2}', b"\xef\xbb\xbf{}", b'{"a": NaN}'],
)
def test_non_documents_are_refused(raw: bytes) -> None:
    with pytest.raises(ResultRejectedError) as info:
        parse_result(raw, **RESULT_ASK)
    assert info.value.code == "TRIAL_RESULT_INVALID"


def test_grades_parse_strictly() -> None:
    assert parse_grade(json.dumps(grade_doc()).encode(), **ASK) == "stopped"
    for change, code in (
        ({"judgement": "pass"}, "GRADE_INVALID"),
        ({"trial": 1}, "GRADE_MISMATCH"),
        ({"x": 1}, "GRADE_UNKNOWN_KEY"),
        ({"protocol": "plangate-trial/1"}, "GRADE_PROTOCOL_UNSUPPORTED"),
    ):
        with pytest.raises(ResultRejectedError) as info:
            parse_grade(json.dumps(grade_doc(**change)).encode(), **ASK)
        assert info.value.code == code


def test_activation_ranks_are_ordered_and_unknown_is_zero() -> None:
    levels = [
        "installed",
        "registered",
        "selected",
        "fired",
        "produced_evidence",
        "influenced_decision",
    ]
    assert [activation_rank(lv) for lv in levels] == [1, 2, 3, 4, 5, 6]
    assert activation_rank("unknown") == 0
    assert activation_rank(None) == 0


def test_argument_list_appends_the_protocol_flags(tmp_path: Path) -> None:
    command = CommandSpec(("python3", "eval/runner.py", "{trial_id}"), str(tmp_path), 5.0, ())
    spec = TrialSpec(
        side="baseline",
        fixture_id="kb",
        role="known_bad",
        trial=1,
        runner=command,
        grader=command,
        harness_dir="/h",
        fixture_source="/f",
        fixture_digest="sha256:x",
        work_dir=str(tmp_path),
    )
    argv = spec.runner_argv("/w/fixture", "/w/out", "opaque")
    assert argv == [
        "python3",
        "eval/runner.py",
        "opaque",
        "--trial-id",
        "opaque",
        "--harness-dir",
        "/h",
        "--fixture",
        "/w/fixture",
        "--out",
        "/w/out",
    ]
    for secret in ("kb", "known_bad", "baseline"):
        assert secret not in argv


@pytest.mark.parametrize("placeholder", ["{role}", "{fixture_id}", "{side}", "{trial}"])
def test_the_runner_cannot_ask_for_what_is_measured(tmp_path: Path, placeholder: str) -> None:
    command = CommandSpec(("python3", "runner.py", placeholder), str(tmp_path), 5.0, ())
    spec = TrialSpec("candidate", "mutant-2", "known_mutant", 1, command, command, "/h", "/f",
                     "sha256:x", str(tmp_path))
    with pytest.raises(ResultRejectedError) as info:
        spec.runner_argv("/w/fixture", "/w/out", "opaque")
    assert info.value.code == "TRIAL_COMMAND_INVALID"
    # The grader, the baseline's judge, may be told.
    assert "mutant-2" in spec.grader_argv("/w/fixture", "/w/r", "/w/g")
    assert spec.grader_argv("/w/fixture", "/w/out/result.json", "/w/grade")[-2:] == [
        "--out",
        "/w/grade",
    ]


def test_unknown_placeholder_is_refused() -> None:
    with pytest.raises(ResultRejectedError) as info:
        substitute(("run", "{secret}"), {"fixture": "x"})
    assert info.value.code == "TRIAL_COMMAND_INVALID"


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(key=st.sampled_from(sorted(result_doc())), value=JSONISH)
def test_any_field_value_parses_or_is_refused_with_a_code(key: str, value: Any) -> None:
    doc = copy.deepcopy(result_doc())
    doc[key] = value
    try:
        report = parse(doc)
    except ResultRejectedError as exc:
        code = exc.code
    else:
        code = ""
        assert report.outcome in ("MERGE_READY", "BLOCKED", "HUMAN_ESCALATED")
    assert code == "" or code.isupper()


@settings(max_examples=100, deadline=None)
@given(raw=st.binary(max_size=64))
def test_arbitrary_bytes_never_crash(raw: bytes) -> None:
    with pytest.raises(ResultRejectedError):
        parse_result(raw, **RESULT_ASK)


# -- attacks: claims that must not decide --------------------------------------


def test_a_metric_too_large_for_a_float_is_refused_not_raised() -> None:
    doc = {
        "protocol": "plangate-trial/2",
        "trial_id": "t",
        "outcome": "MERGE_READY",
        "stop_reasons": [],
        "metrics": {"m": "X"},
        "activation": {},
        "detections": {},
    }
    raw = json.dumps(doc).replace('"X"', "1" + "0" * 400).encode()
    with pytest.raises(ResultRejectedError) as info:
        parse_result(raw, trial_id="t", side="candidate", fixture_id="kb", role="known_bad",
                     trial=1)
    assert info.value.code == "TRIAL_RESULT_INVALID"


NON_STRINGS: list[Any] = [["detected"], {"detected": 1}, 1, 1.5, True, None]


@pytest.mark.parametrize("value", NON_STRINGS)
def test_a_non_string_detection_status_is_refused_with_a_code(value: Any) -> None:
    doc = copy.deepcopy(result_doc())
    doc["detections"] = {"verifier:tests": value}
    with pytest.raises(ResultRejectedError) as info:
        parse(doc)
    assert info.value.code == "TRIAL_RESULT_INVALID"


@pytest.mark.parametrize("value", NON_STRINGS)
def test_a_non_string_outcome_or_activation_level_is_refused_with_a_code(value: Any) -> None:
    doc = copy.deepcopy(result_doc())
    doc["outcome"] = value
    with pytest.raises(ResultRejectedError) as info:
        parse(doc)
    assert info.value.code == "TRIAL_RESULT_INVALID"
    doc = copy.deepcopy(result_doc())
    doc["activation"] = {"verifier:x": {"level": value, "evidence_refs": ["r"]}}
    with pytest.raises(ResultRejectedError) as info:
        parse(doc)
    assert info.value.code == "TRIAL_RESULT_INVALID"


@pytest.mark.parametrize("value", NON_STRINGS)
def test_a_non_string_judgement_is_refused_with_a_code(value: Any) -> None:
    with pytest.raises(ResultRejectedError) as info:
        parse_grade(json.dumps(grade_doc(judgement=value)).encode(), **ASK)
    assert info.value.code == "GRADE_INVALID"
