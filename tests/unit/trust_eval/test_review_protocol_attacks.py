"""Adversarial review of the trial protocol parser: malformed runner output is a refusal."""

from __future__ import annotations

import json

import pytest

from plangate.trust.runner_protocol import ResultRejectedError, parse_result


def test_a_metric_too_large_for_a_float_is_refused_not_raised() -> None:
    doc = {
        "protocol": "plangate-trial/1", "side": "candidate", "fixture_id": "kb",
        "role": "known_bad", "trial": 1, "outcome": "MERGE_READY", "stop_reasons": [],
        "metrics": {"m": "X"}, "activation": {}, "detections": {},
    }
    raw = json.dumps(doc).replace('"X"', "1" + "0" * 400).encode()
    with pytest.raises(ResultRejectedError) as info:
        parse_result(raw, side="candidate", fixture_id="kb", role="known_bad", trial=1)
    assert info.value.code == "TRIAL_RESULT_INVALID"
