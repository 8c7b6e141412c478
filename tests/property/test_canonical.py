"""Property tests of the RFC 8785 canonical form."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.canonical import canonical_bytes, digest, strict_loads

SAFE_INT = 2**53 - 1
# Valid Unicode text only: JSON strings cannot carry lone surrogates here.
valid_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE_INT, max_value=SAFE_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | valid_text,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(valid_text, children, max_size=5)
    ),
    max_leaves=30,
)


def _same(a: object, b: object) -> bool:
    # 1 and 1.0 canonicalise identically; -0.0 becomes 0. Compare as JSON numbers.
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)  # RFC 8785 numbers are doubles
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@given(json_values)
def test_round_trip(value: object) -> None:
    assert _same(strict_loads(canonical_bytes(value)), value)


@given(json_values)
def test_idempotent(value: object) -> None:
    once = canonical_bytes(value)
    assert canonical_bytes(strict_loads(once)) == once


@given(json_values)
def test_parsing_any_serialisation_gives_the_same_canonical_bytes(value: object) -> None:
    pretty = json.dumps(value, indent=3, ensure_ascii=True).encode()
    assert canonical_bytes(strict_loads(pretty)) == canonical_bytes(value)


@settings(max_examples=50)
@given(st.dictionaries(valid_text, json_values, max_size=6), st.randoms())
def test_key_insertion_order_is_irrelevant(value: dict[str, object], rnd: object) -> None:
    items = list(value.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    assert digest(dict(items)) == digest(value)


# 0x00-0x7E: Python's json.dumps also escapes DEL (0x7F), RFC 8785 does not; no file name
# or digest contains DEL (test_foundation_canonical pins that one difference).
ascii_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x7E), max_size=16)


@given(st.dictionaries(ascii_text, ascii_text, max_size=8))
def test_ascii_string_maps_equal_upstream_json_dumps(value: dict[str, str]) -> None:
    # DECISIONS 1: byte-identical to json.dumps(sort_keys=True, separators=(",", ":")).
    upstream = json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    assert canonical_bytes(value) == upstream


@given(json_values)
def test_output_has_no_raw_control_characters(value: object) -> None:
    text = canonical_bytes(value).decode("utf-8")
    assert not any(ord(ch) < 0x20 for ch in text)


@given(json_values)
def test_fast_path_equals_the_reference_serialiser(value: object) -> None:
    from plangate.canonical import canonical_text, reference_canonical_text

    assert canonical_text(value) == reference_canonical_text(value)


@pytest.mark.parametrize(
    "value",
    [
        {"\U0001f600": 1, "\uffff": 2, "a": 3},  # astral vs BMP key order (UTF-16 differs)
        ["\u2028", "\x7f", "\x00", "\x1f"],
        {"n": 2**53, "f": 1.5, "t": (1, 2)},
    ],
)
def test_fast_path_edge_cases_equal_the_reference(value: object) -> None:
    from plangate.canonical import canonical_text, reference_canonical_text

    assert canonical_text(value) == reference_canonical_text(value)
