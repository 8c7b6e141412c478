"""Property tests of the strict JSON loader."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.canonical import StrictJSONError, strict_loads

SAFE_INT = 2**53 - 1

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE_INT, max_value=SAFE_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


@given(json_values)
def test_loads_what_json_dumps_writes(value: object) -> None:
    assert strict_loads(json.dumps(value).encode()) == value
    assert strict_loads(json.dumps(value, ensure_ascii=False).encode()) == value


@given(st.text(min_size=1, max_size=8), json_scalars, json_scalars)
def test_any_duplicate_key_is_rejected(key: str, first: object, second: object) -> None:
    raw = "{" + json.dumps(key) + ":" + json.dumps(first) + "," + json.dumps(key) + ":"
    raw += json.dumps(second) + "}"
    with pytest.raises(StrictJSONError) as info:
        strict_loads(raw.encode())
    assert info.value.code == "JSON_DUPLICATE_KEY"


@given(json_values, st.sampled_from([b"x", b"{}", b"[]", b"1", b'"s"', b"\x00", b"//"]))
def test_trailing_data_is_rejected(value: object, tail: bytes) -> None:
    raw = json.dumps(value).encode() + b" " + tail
    with pytest.raises(StrictJSONError) as info:
        strict_loads(raw)
    assert info.value.code == "JSON_SYNTAX"


@given(json_values)
def test_bom_is_rejected(value: object) -> None:
    with pytest.raises(StrictJSONError) as info:
        strict_loads(b"\xef\xbb\xbf" + json.dumps(value).encode())
    assert info.value.code == "JSON_BOM"


@settings(max_examples=300)
@given(st.binary(max_size=40))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    # Either a value or a StrictJSONError with a code: never another exception.
    try:
        strict_loads(data)
    except StrictJSONError as exc:
        assert exc.code.startswith("JSON_")  # noqa: PT017 -- either outcome is fine, only codes


@given(st.integers(min_value=0xD800, max_value=0xDFFF))
def test_lone_surrogate_escapes_rejected(code_point: int) -> None:
    raw = f'["\\u{code_point:04x}"]'.encode()
    with pytest.raises(StrictJSONError) as info:
        strict_loads(raw)
    assert info.value.code == "JSON_LONE_SURROGATE"


def _outcome(decode, text: str) -> tuple[str, object]:  # type: ignore[no-untyped-def]
    try:
        return "value", decode(text)
    except (ValueError, RecursionError, StrictJSONError) as exc:
        return type(exc).__name__, str(exc)


json_space = st.text(st.sampled_from(" \t\n\r\x0b\x0c\u00a0"), max_size=3)
tails = st.sampled_from(["", " ", "\n", "x", "}", " 1", "{}", "\t\r\n", "\u3000"])


@given(space=json_space, value=json_values, tail=tails, cut=st.integers(0, 6))
def test_the_decoder_shortcut_answers_as_the_decoder(
    space: str, value: object, tail: str, cut: int
) -> None:
    from plangate.canonical import _STRICT_DECODER, _decode

    text = space + json.dumps(value) + tail
    for candidate in (text, text[: len(text) - cut], "", space, space + tail):
        assert _outcome(_decode, candidate) == _outcome(_STRICT_DECODER.decode, candidate)


@pytest.mark.parametrize(
    "text",
    ["", " ", "{", '{"a": 1} x', '{"a": 1}\n\n', '\n {"a": NaN}', '{"a": 1, "a": 2}', "[1e400]",
     "\u00a0{}", "{}\u00a0", '"\\ud800"', "[" * 70 + "]" * 70],
)
def test_the_decoder_shortcut_on_literal_documents(text: str) -> None:
    from plangate.canonical import _STRICT_DECODER, _decode

    assert _outcome(_decode, text) == _outcome(_STRICT_DECODER.decode, text)
