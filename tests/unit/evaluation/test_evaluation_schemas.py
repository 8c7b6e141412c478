"""The shipped JSON Schemas agree with the strict parsers on literal documents."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest

from support.evaldocs import grade_doc, record, result_doc


def schema(name: str) -> dict[str, Any]:
    text = resources.files("plangate").joinpath("schemas", name).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def valid(name: str, doc: Any) -> bool:
    return jsonschema.Draft202012Validator(schema(name)).is_valid(doc)


def test_trial_result_schema() -> None:
    assert valid("trial-result.schema.json", result_doc())
    assert valid("trial-result.schema.json", result_doc(outcome="MERGE_READY", stop_reasons=[]))
    for bad in (
        result_doc(extra=1),
        result_doc(outcome="MERGE_READY"),
        result_doc(stop_reasons=[]),
        result_doc(stop_reasons=["MADE_UP"]),
        result_doc(metrics={"Bad": 1}),
        result_doc(detections={"v": "maybe"}),
    ):
        assert not valid("trial-result.schema.json", bad)


def test_grade_schema() -> None:
    assert valid("trial-grade.schema.json", grade_doc())
    assert not valid("trial-grade.schema.json", grade_doc(judgement="pass"))


@pytest.mark.parametrize(
    ("doc", "ok"),
    [
        (record(), True),
        (record(reviewer={"model": None, "human_identity": "alice"}), True),
        (record(level="I4"), False),
        (record(reviewer={"model": None}), False),
        (record(evidence=[{"kind": "oracle", "ref": "sha256:abc"}]), False),
    ],
)
def test_review_record_schema(doc: dict[str, Any], ok: bool) -> None:
    assert valid("review-record.schema.json", doc) is ok


def test_decision_and_experiment_schemas_are_valid_schemas() -> None:
    decision = schema("promotion-decision.schema.json")
    assert decision["properties"]["production_promotion_executed"] == {"const": False}
    schema("experiment-result.schema.json")
