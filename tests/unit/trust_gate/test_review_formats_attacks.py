"""Adversarial review of the plan format: numbers beyond a float are refused, not raised."""

from __future__ import annotations

import json

import pytest
from test_trust_gate_formats import plan_doc

from plangate.errors import InputRejected
from plangate.trust.evalplan import parse_plan


@pytest.mark.parametrize("as_yaml", [False, True])
def test_a_threshold_value_beyond_a_float_is_refused_with_a_code(as_yaml: bool) -> None:
    doc = plan_doc()
    doc["threshold"][0]["value"] = "HUGE"
    text = json.dumps(doc).replace('"HUGE"', "1" + "0" * 400)
    data = ("# yaml\n" + text if as_yaml else text).encode()
    with pytest.raises(InputRejected) as info:
        parse_plan(data)
    assert info.value.code == "EVAL_PLAN_INVALID"
