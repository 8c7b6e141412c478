"""Candidates: strict parsing, digests only, a readable scope."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.errors import InputRejected
from plangate.evaluation.registry.candidate import (
    CANDIDATE_KEYS,
    candidate_digest,
    check_allowed_paths,
    parse_candidate,
    validate_candidate_object,
)


def _code(exc: pytest.ExceptionInfo[InputRejected]) -> str:
    return exc.value.code


def cand_doc() -> dict[str, Any]:
    return {
        "schema_version": "1",
        "candidate_id": "c",
        "hypothesis": "h",
        "operation": "UPDATE",
        "target_components": ["prompt:p"],
        "allowed_paths": ["h/**"],
        "candidate_commit": "c" * 40,
        "evaluation_plan_digest": "sha256:" + "d" * 64,
        "changes_evaluation_harness": False,
    }


@pytest.mark.parametrize("key", [k for k in CANDIDATE_KEYS if k != "evaluation_plan_digest"])
def test_candidate_missing_key(key: str) -> None:
    doc = cand_doc()
    del doc[key]
    with pytest.raises(InputRejected) as info:
        parse_candidate(json.dumps(doc).encode())
    assert _code(info) in ("CANDIDATE_ITEM_MISSING",)


def test_a_candidate_file_may_leave_the_plan_to_the_evaluator() -> None:
    doc = cand_doc()
    del doc["evaluation_plan_digest"]
    parsed = parse_candidate(json.dumps(doc).encode())
    assert "evaluation_plan_digest" not in parsed


def test_a_stored_candidate_must_name_its_plan() -> None:
    doc = cand_doc()
    del doc["evaluation_plan_digest"]
    with pytest.raises(InputRejected) as info:
        validate_candidate_object(doc)
    assert _code(info) == "CANDIDATE_ITEM_MISSING"


@pytest.mark.parametrize(
    "key", ["plan", "baseline_manifest_ref", "protected_surfaces", "observed_diff"]
)
def test_candidate_cannot_carry_authority(key: str) -> None:
    doc = cand_doc() | {key: "x"}
    with pytest.raises(InputRejected) as info:
        parse_candidate(json.dumps(doc).encode())
    assert _code(info) == "CANDIDATE_UNKNOWN_KEY"


@pytest.mark.parametrize(
    "change",
    [
        {"changes_evaluation_harness": "no"},
        {"operation": "REWRITE"},
        {"target_components": []},
        {"candidate_commit": "c" * 12},
        {"evaluation_plan_digest": "sha256:x"},
    ],
)
def test_candidate_invalid_values(change: dict[str, Any]) -> None:
    with pytest.raises(InputRejected) as info:
        parse_candidate(json.dumps(cand_doc() | change).encode())
    assert _code(info) == "CANDIDATE_INVALID"


def test_candidate_digest_is_canonical() -> None:
    doc = parse_candidate(json.dumps(cand_doc()).encode())
    reordered = parse_candidate(json.dumps(dict(reversed(list(cand_doc().items())))).encode())
    assert candidate_digest(doc) == candidate_digest(reordered)


bad_path = st.sampled_from(["", "/a", "a/../b", "./a", "a//b", "a/", "a\\b", "a/**b", " a"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["h/**", "x/*.md", "y"]), max_size=3, unique=True), bad_path)
def test_allowed_paths_with_any_bad_entry_are_refused(good: list[str], bad: str) -> None:
    with pytest.raises(InputRejected) as info:
        check_allowed_paths([*good, bad])
    assert _code(info) == "CANDIDATE_ALLOWED_PATHS_MALFORMED"


def test_allowed_paths_empty_or_not_a_list() -> None:
    for value in ([], None, "h/**", {"a": 1}):
        with pytest.raises(InputRejected) as info:
            check_allowed_paths(value)
        assert _code(info) == "CANDIDATE_ALLOWED_PATHS_EMPTY"


def test_allowed_paths_may_exclude_but_must_include_something() -> None:
    assert check_allowed_paths(["h/**", "!h/x/**", "!protected-anywhere"]) == [
        "h/**",
        "!h/x/**",
        "!protected-anywhere",
    ]
    with pytest.raises(InputRejected) as info:
        check_allowed_paths(["!h/**"])
    assert _code(info) == "CANDIDATE_ALLOWED_PATHS_EMPTY"
    for bad in (["h/**", "!"], ["h/**", "!../x"], ["h/**", "!/abs"]):
        with pytest.raises(InputRejected) as info:
            check_allowed_paths(bad)
        assert _code(info) == "CANDIDATE_ALLOWED_PATHS_MALFORMED"
