"""Property tests of the arbiter: path safety and fail-closed monotonicity.

Kept apart from the arbiter's unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.approval.arbiter import ArbiterInputError, decide, parse_input
from plangate.paths import is_canonical_path
from plangate.surfaces import load_surfaces_bytes

PROPERTY_SURFACES = load_surfaces_bytes(
    b'version = 1\n[[surface]]\npattern = "**/CLAUDE.md"\nclass = "rules"\nreason = "r"\n'
    b'[[surface]]\npattern = "ci/**"\nclass = "ci"\nreason = "r"\n',
    "downstream",
    "defs.toml",
)
BASE: dict[str, Any] = {
    "changed_files": ["src/a.py"],
    "allowed_paths": ["**"],
    "lite": {"size_ok": True, "no_new_design": True, "follows_pattern": True, "reversible": True},
    "class": "no-merge",
    "verdicts": {"model_a": "approve", "model_b": "approve"},
    "target_sha": "b" * 40,
    "gates": {"c1": "PASS", "breakdown": "pass"},
}
SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789_.-", min_size=1, max_size=6)
CANONICAL = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join).filter(is_canonical_path)


def doc_with(changed: list[str]) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc["changed_files"] = changed
    return doc


@settings(max_examples=300)
@given(st.text(max_size=30))
def test_changed_file_accepted_iff_canonical(path: str) -> None:
    try:
        parse_input(doc_with([path]))
    except ArbiterInputError:
        accepted = False
    else:
        accepted = True
    assert accepted == is_canonical_path(path)


@given(CANONICAL, st.sampled_from(["./", "/", "../", "x/../", "x//"]))
def test_unsafe_prefixes_are_always_refused(path: str, prefix: str) -> None:
    with pytest.raises(ArbiterInputError):
        parse_input(doc_with([prefix + path]))


@given(
    st.lists(CANONICAL, min_size=1, max_size=2),
    st.sampled_from(["CLAUDE.md", "x/claude.md", "ci/run", "CI/deploy.yml"]),
)
def test_a_protected_file_is_never_auto_approved(paths: list[str], protected: str) -> None:
    result = decide(
        parse_input(doc_with([*paths, protected])),
        PROPERTY_SURFACES,
        timestamp="2026-01-01T00:00:00Z",
    )
    assert result.verdict == "HUMAN_ESCALATED"
    assert "TOUCHES_PROTECTED_SURFACE" in result.codes


@given(st.lists(CANONICAL, min_size=1, max_size=3), st.sampled_from(["approve", "reject"]))
def test_model_a_reject_is_never_approved(paths: list[str], b: str) -> None:
    doc = doc_with(paths)
    doc["verdicts"] = {"model_a": "reject", "model_b": b}
    result = decide(parse_input(doc), PROPERTY_SURFACES, timestamp="2026-01-01T00:00:00Z")
    assert result.verdict != "AUTO_APPROVED"
