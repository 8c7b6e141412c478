"""Strict parsing of the harness definition, manifests, evaluation plans and candidates."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.canonical import digest
from plangate.errors import InputRejected
from plangate.evaluation.harness.definition import PROTECTED_SURFACES_PATH, parse_definition
from plangate.evaluation.harness.manifest import (
    HarnessManifest,
    ManifestRejected,
    build_manifest_from_tree,
    compute_harness_id,
    validate_manifest,
)
from plangate.evaluation.registry.candidate import (
    CANDIDATE_KEYS,
    candidate_digest,
    check_allowed_paths,
    parse_candidate,
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


# -- harness definition ----------------------------------------------------------


def test_definition_defaults_and_implicit_surfaces_policy_file() -> None:
    d = parse_definition(DEF)
    assert [c.id for c in d.components] == ["prompt:p", "verifier:v"]
    assert d.stages[0].blocking == "block"
    assert d.stages[0].on_unavailable == "block"
    assert d.stages[0].applies_to == ("**",)
    assert d.policy_files == (PROTECTED_SURFACES_PATH,)
    assert d.verifier_set_ids == ("verifier:v",)


@pytest.mark.parametrize(
    ("mutation", "code"),
    [
        (lambda t: t + b"\nsurprise = 1\n", "HARNESS_DEFINITION_UNKNOWN_KEY"),
        (
            lambda t: t.replace(b'type = "prompt"', b'type = "prompt"\nextra = 1'),
            "HARNESS_DEFINITION_UNKNOWN_KEY",
        ),
        (
            lambda t: t.replace(b'type = "prompt"', b'type = "wizard"'),
            "HARNESS_DEFINITION_BAD_TYPE",
        ),
        (
            lambda t: t.replace(b'id = "verifier:v"', b'id = "prompt:p"'),
            "HARNESS_DEFINITION_DUPLICATE_ID",
        ),
        (
            lambda t: t.replace(b'component = "verifier:v"', b'component = "prompt:p"'),
            "HARNESS_DEFINITION_BAD_STAGE",
        ),
        (
            lambda t: t.replace(
                b'component = "verifier:v"', b'component = "verifier:v"\nblocking = "maybe"'
            ),
            "HARNESS_DEFINITION_BAD_STAGE",
        ),
        (
            lambda t: t.replace(b'enabled = ["prompt:p"]', b'enabled = ["ghost"]'),
            "HARNESS_DEFINITION_UNKNOWN_COMPONENT",
        ),
        (lambda t: t.split(b"[verifier_set]")[0], "HARNESS_DEFINITION_NO_VERIFIER_SET"),
        (lambda t: t.replace(b'paths = ["h/p.md"]', b"paths = []"), "HARNESS_DEFINITION_INVALID"),
        (
            lambda t: t.replace(b'paths = ["h/p.md"]', b'paths = ["../p.md"]'),
            "HARNESS_DEFINITION_BAD_PATH",
        ),
        (
            lambda t: t.replace(b'paths = ["h/p.md"]', b'paths = ["h/**p.md"]'),
            "HARNESS_DEFINITION_BAD_PATH",
        ),
        (
            lambda t: t.replace(b'schema_version = "1"', b"schema_version = 1"),
            "HARNESS_DEFINITION_VERSION",
        ),
        (lambda t: t + b"[[", "HARNESS_DEFINITION_SYNTAX"),
        (lambda t: b"\xef\xbb\xbf" + t, "HARNESS_DEFINITION_BOM"),
        (lambda t: t + b"\xff", "HARNESS_DEFINITION_NOT_UTF8"),
    ],
)
def test_definition_refusals(mutation: Any, code: str) -> None:
    with pytest.raises(InputRejected) as info:
        parse_definition(mutation(DEF))
    assert _code(info) == code


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcdefgh_", min_size=1, max_size=8))
def test_definition_any_unknown_top_level_key_is_refused(key: str) -> None:
    allowed = {"schema_version", "name", "components", "registry", "verifier_set", "policy_profile"}
    if key in allowed:
        return
    with pytest.raises(InputRejected) as info:
        parse_definition(f"{key} = 1\n".encode() + DEF)
    assert _code(info) == "HARNESS_DEFINITION_UNKNOWN_KEY"


# -- manifest (pure builder) -------------------------------------------------------


def _tree(*paths: str, mode: str = "100644") -> list[TreeEntry]:
    return [TreeEntry(mode, "blob", digest(p)[7:47], p) for p in paths]


POLICY = {PROTECTED_SURFACES_PATH: ("100644", b"version = 1\n")}


def test_manifest_builder_is_deterministic_and_self_verifying() -> None:
    d = parse_definition(DEF)
    tree = _tree("h/p.md", "h/v/a.py", "h/v/b.py", "other.txt")
    m1 = build_manifest_from_tree(d, ".plangate/harness.toml", "a" * 40, tree, POLICY)
    m2 = build_manifest_from_tree(
        d, ".plangate/harness.toml", "a" * 40, list(reversed(tree)), POLICY
    )
    assert m1.to_bytes() == m2.to_bytes()
    assert compute_harness_id(m1.data) == m1.harness_id
    assert validate_manifest(json.loads(m1.to_bytes())).harness_id == m1.harness_id
    comp = m1.component("verifier:v")
    assert comp is not None
    assert comp["files"] == ["h/v/a.py", "h/v/b.py"]
    assert comp["registered"] is True
    assert m1.component("prompt:p") is not None


def test_manifest_builder_refusals() -> None:
    d = parse_definition(DEF)
    with pytest.raises(ManifestRejected) as info:
        build_manifest_from_tree(d, "d", "a" * 40, _tree("h/p.md"), POLICY)
    assert info.value.code == "HARNESS_COMPONENT_UNMATCHED"
    with pytest.raises(ManifestRejected) as info:
        build_manifest_from_tree(d, "d", "a" * 40, _tree("h/p.md", "h/v/a.py"), {})
    assert info.value.code == "HARNESS_POLICY_FILE_MISSING"
    with pytest.raises(ManifestRejected) as info:
        build_manifest_from_tree(d, "d", "abc", _tree("h/p.md", "h/v/a.py"), POLICY)
    assert info.value.code == "HARNESS_COMMIT_NOT_FULL"
    with pytest.raises(ManifestRejected) as info:
        build_manifest_from_tree(d, "d", "a" * 40, _tree("h/p.md", "h/v/a.py", "x//y"), POLICY)
    assert info.value.code == "HARNESS_TREE_PATH_NONCANONICAL"


def test_mode_and_symlink_changes_change_content_sha() -> None:
    d = parse_definition(DEF)
    tree = _tree("h/p.md", "h/v/a.py")
    base = build_manifest_from_tree(d, "d", "a" * 40, tree, POLICY)
    exe = build_manifest_from_tree(
        d,
        "d",
        "a" * 40,
        [tree[0], TreeEntry("100755", "blob", tree[1].object_id, "h/v/a.py")],
        POLICY,
    )
    link = build_manifest_from_tree(
        d,
        "d",
        "a" * 40,
        [tree[0], TreeEntry("120000", "blob", tree[1].object_id, "h/v/a.py")],
        POLICY,
    )
    shas = {m.component("verifier:v")["content_sha"] for m in (base, exe, link)}  # type: ignore[index]
    assert len(shas) == 3
    assert len({base.harness_id, exe.harness_id, link.harness_id}) == 3


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["installed", "registered", "files", "content_sha", "type", "paths"]))
def test_any_component_edit_breaks_harness_id(field_name: str) -> None:
    d = parse_definition(DEF)
    m = build_manifest_from_tree(d, "d", "a" * 40, _tree("h/p.md", "h/v/a.py"), POLICY)
    data: dict[str, Any] = copy.deepcopy(dict(m.data))
    comp = data["components"][0]
    comp[field_name] = {
        "installed": not comp["installed"],
        "registered": not comp["registered"],
        "files": ["h/x.md"],
        "content_sha": "sha256:" + "0" * 64,
        "type": "skill",
        "paths": ["h/x.md"],
    }[field_name]
    with pytest.raises(ManifestRejected) as info:
        validate_manifest(data)
    assert info.value.code == "HARNESS_ID_MISMATCH"


def test_manifest_refuses_unknown_and_missing_keys() -> None:
    d = parse_definition(DEF)
    m = build_manifest_from_tree(d, "d", "a" * 40, _tree("h/p.md", "h/v/a.py"), POLICY)
    for change in ({"extra": 1}, {"harness_id": None}):
        data = dict(m.data) | change
        data = {k: v for k, v in data.items() if v is not None}
        with pytest.raises(ManifestRejected) as info:
            validate_manifest(data)
        assert info.value.code == "HARNESS_MANIFEST_INVALID"


# -- evaluation plan ------------------------------------------------------------------


def plan_doc() -> dict[str, Any]:
    return {
        "schema_version": "1",
        "plan_id": "p",
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


def digest_bytes(data: bytes) -> str:
    from plangate.canonical import sha256_digest

    return sha256_digest(data)


def test_verifier_set_must_cover_the_baseline() -> None:
    d = parse_definition(DEF)
    m: HarnessManifest = build_manifest_from_tree(
        d, "d", "a" * 40, _tree("h/p.md", "h/v/a.py"), POLICY
    )
    check_verifier_set(["verifier:v"], m)
    with pytest.raises(InputRejected) as info:
        check_verifier_set(["prompt:p", "verifier:v"], m)
    assert _code(info) == "EVAL_PLAN_VERIFIER_SET_UNKNOWN"


# -- candidate ----------------------------------------------------------------------------


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


@pytest.mark.parametrize("key", CANDIDATE_KEYS)
def test_candidate_missing_key(key: str) -> None:
    doc = cand_doc()
    del doc[key]
    with pytest.raises(InputRejected) as info:
        parse_candidate(json.dumps(doc).encode())
    assert _code(info) in ("CANDIDATE_ITEM_MISSING",)


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


@settings(max_examples=40, deadline=None)
@given(st.permutations(["h/p.md", "h/v/a.py", "h/v/b.py", "h/v/c.py", "z.txt"]))
def test_manifest_bytes_do_not_depend_on_tree_order(order: list[str]) -> None:
    d = parse_definition(DEF)
    reference = build_manifest_from_tree(d, "d", "a" * 40, _tree(*sorted(order)), POLICY)
    shuffled = build_manifest_from_tree(d, "d", "a" * 40, _tree(*order), POLICY)
    assert shuffled.to_bytes() == reference.to_bytes()


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
    # Seed section 7: "trial count lowered after seeing results" -> a new plan (new digest);
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


def test_golden_harness_id_pins_the_manifest_format() -> None:
    # Changing any field name, digest input or the canonical form changes this id: such a
    # change is a new schema_version, never a silent one.
    d = parse_definition(DEF)
    m = build_manifest_from_tree(
        d, ".plangate/harness.toml", "a" * 40, _tree("h/p.md", "h/v/a.py"), POLICY
    )
    assert m.harness_id == (
        "sha256:4e16c164211fc4e7bd6948f78750e9782a5cead14b5ea5fc0e361c97f476875f"
    )


# -- attacks: claims that must not decide --------------------------------------


@pytest.mark.parametrize("as_yaml", [False, True])
def test_a_threshold_value_beyond_a_float_is_refused_with_a_code(as_yaml: bool) -> None:
    doc = plan_doc()
    doc["threshold"][0]["value"] = "HUGE"
    text = json.dumps(doc).replace('"HUGE"', "1" + "0" * 400)
    data = ("# yaml\n" + text if as_yaml else text).encode()
    with pytest.raises(InputRejected) as info:
        parse_plan(data)
    assert info.value.code == "EVAL_PLAN_INVALID"
