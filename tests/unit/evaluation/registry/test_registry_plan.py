"""Evaluation plans: strict parsing, pinning at the baseline, digests."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.canonical import digest
from plangate.errors import InputRejected
from plangate.evaluation.harness.definition import PROTECTED_SURFACES_PATH, parse_definition
from plangate.evaluation.harness.manifest import (
    HarnessManifest,
    build_manifest_from_tree,
)
from plangate.evaluation.registry.plan import (
    FIXTURE_ROLES,
    REQUIRED_ITEMS,
    check_verifier_set,
    load_document,
    parse_plan,
    pin_plan,
    plan_digest,
)
from plangate.git import TreeEntry

DEF = b"""
schema_version = "1"
[[components]]
id = "prompt:p"
type = "prompt"
paths = ["h/p.md"]
[[components]]
id = "verifier:v"
type = "verifier"
paths = ["h/v/*.py"]
[registry]
enabled = ["prompt:p"]
[verifier_set]
[[verifier_set.stages]]
component = "verifier:v"
"""


def _code(exc: pytest.ExceptionInfo[InputRejected]) -> str:
    return exc.value.code


def _tree(*paths: str, mode: str = "100644") -> list[TreeEntry]:
    return [TreeEntry(mode, "blob", digest(p)[7:47], p) for p in paths]


POLICY = {PROTECTED_SURFACES_PATH: ("100644", b"version = 1\n")}


def digest_bytes(data: bytes) -> str:
    from plangate.canonical import sha256_digest

    return sha256_digest(data)


def plan_doc() -> dict[str, Any]:
    return {
        "schema_version": "1",
        "plan_id": "p",
        "covers": ["harness/**"],
        "baseline_commit": "a" * 40,
        "baseline_manifest_ref": "sha256:" + "b" * 64,
        "task_profile": "routine_fix",
        "fixtures": [{"id": f"f-{r}", "role": r, "path": f"fx/{r}.json"} for r in FIXTURE_ROLES],
        "verifier_set": ["verifier:v"],
        "trials": 3,
        "metrics": ["m"],
        "threshold": [{"metric": "m", "op": ">=", "value": 1.0}],
        "critical_regression_conditions": ["known_bad_not_stopped"],
        "actual_diff_method": "git-diff-no-renames-v1",
        "required_activation": "fired",
        "runner": {"argv": ["python3", "r.py"], "files": ["r.py"], "timeout_seconds": 10},
        "grader": {"argv": ["python3", "g.py"], "files": ["g.py"], "timeout_seconds": 10},
    }


def _plan_bytes(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


@pytest.mark.parametrize("item", REQUIRED_ITEMS)
def test_plan_missing_item_is_named(item: str) -> None:
    doc = plan_doc()
    del doc[item]
    with pytest.raises(InputRejected) as info:
        parse_plan(_plan_bytes(doc))
    assert _code(info) == "EVAL_PLAN_ITEM_MISSING"
    assert item in info.value.message


@pytest.mark.parametrize("role", FIXTURE_ROLES)
def test_plan_missing_role_is_named(role: str) -> None:
    doc = plan_doc()
    doc["fixtures"] = [f for f in doc["fixtures"] if f["role"] != role]
    with pytest.raises(InputRejected) as info:
        parse_plan(_plan_bytes(doc))
    assert _code(info) == "EVAL_PLAN_ITEM_MISSING"
    assert role in info.value.message


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"trials": 1}, "EVAL_PLAN_SINGLE_TRIAL_UNJUSTIFIED"),
        ({"trials": 0}, "EVAL_PLAN_INVALID"),
        ({"trials": True}, "EVAL_PLAN_INVALID"),
        ({"surprise": 1}, "EVAL_PLAN_UNKNOWN_KEY"),
        ({"actual_diff_method": "candidate-reported"}, "EVAL_PLAN_UNKNOWN_DIFF_METHOD"),
        ({"required_activation": "hoped"}, "EVAL_PLAN_INVALID"),
        ({"threshold": [{"metric": "other", "op": ">=", "value": 1}]}, "EVAL_PLAN_INVALID"),
        ({"threshold": [{"metric": "m", "op": "~", "value": 1}]}, "EVAL_PLAN_INVALID"),
        ({"critical_regression_conditions": ["vibes"]}, "EVAL_PLAN_INVALID"),
        ({"critical_regression_conditions": []}, "EVAL_PLAN_INVALID"),
        ({"verifier_set": []}, "EVAL_PLAN_INVALID"),
        ({"baseline_commit": "abc1234"}, "EVAL_PLAN_INVALID"),
        ({"baseline_manifest_ref": "sha256:ABC"}, "EVAL_PLAN_INVALID"),
        ({"schema_version": 1}, "EVAL_PLAN_INVALID"),
        ({"runner": {"argv": [], "files": ["r.py"], "timeout_seconds": 1}}, "EVAL_PLAN_INVALID"),
        (
            {"grader": {"argv": ["g"], "files": ["../g.py"], "timeout_seconds": 1}},
            "EVAL_PLAN_INVALID",
        ),
        ({"grader": {"argv": ["g"], "files": ["g.py"]}}, "EVAL_PLAN_ITEM_MISSING"),
    ],
)
def test_plan_refusals(change: dict[str, Any], code: str) -> None:
    doc = plan_doc() | change
    with pytest.raises(InputRejected) as info:
        parse_plan(_plan_bytes(doc))
    assert _code(info) == code


def test_single_trial_with_reason_and_duplicate_fixture_ids() -> None:
    doc = plan_doc() | {"trials": 1, "trials_reason": "the harness is deterministic"}
    assert parse_plan(_plan_bytes(doc)).plan["trials"] == 1
    doc = plan_doc()
    doc["fixtures"].append(dict(doc["fixtures"][0]))
    with pytest.raises(InputRejected) as info:
        parse_plan(_plan_bytes(doc))
    assert _code(info) == "EVAL_PLAN_DUPLICATE_FIXTURE"


def test_yaml_and_json_give_the_same_plan_and_yaml_duplicates_are_refused() -> None:
    import yaml

    doc = plan_doc()
    from_json = parse_plan(_plan_bytes(doc)).plan
    from_yaml = parse_plan(yaml.safe_dump(doc).encode()).plan
    assert from_json == from_yaml
    with pytest.raises(InputRejected) as info:
        load_document(b"a: 1\na: 2\n", "plan")
    assert _code(info) == "DOCUMENT_DUPLICATE_KEY"
    with pytest.raises(InputRejected):
        load_document(b'{"a": 1, "a": 2}', "plan")
    with pytest.raises(InputRejected) as info:
        load_document(b"- a\n", "plan")
    assert _code(info) == "DOCUMENT_NOT_OBJECT"


def test_pinning_and_digest() -> None:
    draft = parse_plan(_plan_bytes(plan_doc())).plan
    blobs = {p: p.encode() for p in ["r.py", "g.py"] + [f"fx/{r}.json" for r in FIXTURE_ROLES]}
    pinned = pin_plan(draft, blobs)
    assert all(f["digest"].startswith("sha256:") for f in pinned["fixtures"])
    assert pinned["runner"]["files"] == [{"path": "r.py", "digest": digest_bytes(b"r.py")}]
    assert plan_digest(pinned) == digest(pinned)
    # A changed fixture byte changes the plan digest (sealed).
    blobs2 = dict(blobs, **{"fx/known_bad.json": b"changed"})
    assert plan_digest(pin_plan(draft, blobs2)) != plan_digest(pinned)
    with pytest.raises(InputRejected) as info:
        pin_plan(draft, {k: v for k, v in blobs.items() if k != "g.py"})
    assert _code(info) == "EVAL_PLAN_FILE_UNREADABLE"


def test_verifier_set_must_cover_the_baseline() -> None:
    d = parse_definition(DEF)
    m: HarnessManifest = build_manifest_from_tree(
        d, "d", "a" * 40, _tree("h/p.md", "h/v/a.py"), POLICY
    )
    check_verifier_set(["verifier:v"], m)
    with pytest.raises(InputRejected) as info:
        check_verifier_set(["prompt:p", "verifier:v"], m)
    assert _code(info) == "EVAL_PLAN_VERIFIER_SET_UNKNOWN"


@settings(max_examples=40, deadline=None)
@given(st.permutations(list(REQUIRED_ITEMS)))
def test_plan_digest_does_not_depend_on_key_order(order: list[str]) -> None:
    doc = plan_doc()
    reordered = {key: doc[key] for key in order}
    blobs = {p: p.encode() for p in ["r.py", "g.py"] + [f"fx/{r}.json" for r in FIXTURE_ROLES]}
    a = pin_plan(parse_plan(_plan_bytes(doc)).plan, blobs)
    b = pin_plan(parse_plan(_plan_bytes(reordered)).plan, blobs)
    assert plan_digest(a) == plan_digest(b)


def test_lowering_trials_after_the_fact_is_a_new_plan() -> None:
    # "trial count lowered after seeing results" -> a new plan (new digest);
    # a candidate bound to the old digest keeps the old, stricter plan.
    blobs = {p: p.encode() for p in ["r.py", "g.py"] + [f"fx/{r}.json" for r in FIXTURE_ROLES]}
    strict = pin_plan(parse_plan(_plan_bytes(plan_doc())).plan, blobs)
    lowered_doc = plan_doc() | {"trials": 2}
    lowered = pin_plan(parse_plan(_plan_bytes(lowered_doc)).plan, blobs)
    assert plan_digest(strict) != plan_digest(lowered)
    for change in (
        {"threshold": [{"metric": "m", "op": ">=", "value": 0.5}]},
        {"required_activation": "installed"},
        {"verifier_set": ["verifier:w"]},
    ):
        other = pin_plan(parse_plan(_plan_bytes(plan_doc() | change)).plan, blobs)
        assert plan_digest(other) != plan_digest(strict)


@pytest.mark.parametrize("as_yaml", [False, True])
def test_a_threshold_value_beyond_a_float_is_refused_with_a_code(as_yaml: bool) -> None:
    doc = plan_doc()
    doc["threshold"][0]["value"] = "HUGE"
    text = json.dumps(doc).replace('"HUGE"', "1" + "0" * 400)
    data = ("# yaml\n" + text if as_yaml else text).encode()
    with pytest.raises(InputRejected) as info:
        parse_plan(data)
    assert info.value.code == "EVAL_PLAN_INVALID"


def test_fixture_bytes_that_name_the_fixture_are_reported() -> None:
    from plangate.evaluation.registry.plan import fixture_tells, fixture_warnings

    kb = {"id": "known-bad-1", "role": "known_bad", "path": "eval/kb.json"}
    assert fixture_tells(kb, b'{"fixture_id": "known-bad-1"}') == [
        "fixture",
        "known-bad",
        "known-bad-1",
    ]
    assert fixture_tells(kb, b'{"note": "Known Bad: must be stopped"}') == ["known bad"]
    mutant = {"id": "m1", "role": "known_mutant", "path": "eval/m.json"}
    assert fixture_tells(mutant, b'{"note": "known mutant: evidence removed"}') == [
        "known mutant",
        "mutant",
    ]
    assert fixture_tells(kb, b'{"run": "r-8e07", "tests_pass": true}') == []
    plan = {"fixtures": [kb, mutant]}
    warnings = fixture_warnings(plan, {"eval/kb.json": b"{}", "eval/m.json": b'"mutant"'})
    assert [w.code for w in warnings] == ["EVAL_FIXTURE_SELF_NAMING"]
    assert "m1" in warnings[0].message and warnings[0].hint


def test_the_demo_fixtures_do_not_name_themselves() -> None:
    from importlib.resources import files

    from plangate.evaluation.registry.plan import fixture_tells

    root = files("plangate.resources").joinpath("demo-harness/repo/eval/fixtures")
    template = files("plangate.resources").joinpath("demo-harness/plan.yaml.tmpl").read_text()
    fixtures = re.findall(r"\{id: ([^,]+), role: ([^,]+), path: eval/fixtures/([^}]+)\}", template)
    assert len(fixtures) == 6
    for fid, role, name in fixtures:
        data = root.joinpath(name).read_bytes()
        assert fixture_tells({"id": fid, "role": role}, data) == [], name
