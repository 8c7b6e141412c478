"""HarnessManifest: built from tree facts, self-verifying, strict on read."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.canonical import digest
from plangate.evaluation.harness.definition import PROTECTED_SURFACES_PATH, parse_definition
from plangate.evaluation.harness.manifest import (
    ManifestRejected,
    build_manifest_from_tree,
    compute_harness_id,
    validate_manifest,
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


@settings(max_examples=40, deadline=None)
@given(st.permutations(["h/p.md", "h/v/a.py", "h/v/b.py", "h/v/c.py", "z.txt"]))
def test_manifest_bytes_do_not_depend_on_tree_order(order: list[str]) -> None:
    d = parse_definition(DEF)
    reference = build_manifest_from_tree(d, "d", "a" * 40, _tree(*sorted(order)), POLICY)
    shuffled = build_manifest_from_tree(d, "d", "a" * 40, _tree(*order), POLICY)
    assert shuffled.to_bytes() == reference.to_bytes()


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
