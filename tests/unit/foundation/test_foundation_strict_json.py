"""Strict JSON loading: every rejection of plangate.canonical.strict_loads, with literals."""

from __future__ import annotations

import pytest

from plangate.canonical import MAX_DEPTH, StrictJSONError, strict_loads, strict_loads_object
from plangate.errors import InputRejected
from plangate.verdict import ExitCode


def _code(data: bytes) -> str:
    with pytest.raises(StrictJSONError) as info:
        strict_loads(data)
    return info.value.code


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b'{"a": 1, "a": 2}', "JSON_DUPLICATE_KEY"),
        (b'{"a": 1, "a": 1}', "JSON_DUPLICATE_KEY"),  # same value is still a duplicate
        (b'{"x": {"k": 1, "k": 2}}', "JSON_DUPLICATE_KEY"),  # nested object
        (b'[{"k": 1, "k": 2}]', "JSON_DUPLICATE_KEY"),  # inside a list
        (b'{"\\u0061": 1, "a": 2}', "JSON_DUPLICATE_KEY"),  # escaped spelling of the same key
        (b"NaN", "JSON_NON_FINITE"),
        (b"[Infinity]", "JSON_NON_FINITE"),
        (b'{"n": -Infinity}', "JSON_NON_FINITE"),
        (b"1e400", "JSON_NON_FINITE"),  # overflows to inf: Infinity in disguise
        (b"[-1E999]", "JSON_NON_FINITE"),
        (b"\xef\xbb\xbf{}", "JSON_BOM"),
        (b'{"a": "\xff"}', "JSON_NOT_UTF8"),
        (b'{"a": "\xc3"}', "JSON_NOT_UTF8"),  # truncated sequence
        (b'"\xed\xa0\x80"', "JSON_NOT_UTF8"),  # a surrogate encoded as UTF-8 bytes
        (b"\xfe\xff\x00{\x00}", "JSON_NOT_UTF8"),  # UTF-16 with its BOM
        (b'"\\ud800"', "JSON_LONE_SURROGATE"),
        (b'"\\udc00x"', "JSON_LONE_SURROGATE"),
        (b'{"\\ud83d": 1}', "JSON_LONE_SURROGATE"),  # in a key
        (b'["ok", "\\ud83dx"]', "JSON_LONE_SURROGATE"),  # high surrogate without its low half
        (b"{} {}", "JSON_SYNTAX"),  # trailing data
        (b'{"a": 1} x', "JSON_SYNTAX"),
        (b"{}\x00", "JSON_SYNTAX"),
        (b"", "JSON_SYNTAX"),
        (b"   ", "JSON_SYNTAX"),
        (b"{'a': 1}", "JSON_SYNTAX"),
        (b'{"a": 1,}', "JSON_SYNTAX"),
        (b'{"a": "line\nbreak"}', "JSON_SYNTAX"),  # raw control character inside a string
        (b"[1, 2", "JSON_SYNTAX"),
        (b"[" * (MAX_DEPTH + 2) + b"]" * (MAX_DEPTH + 2), "JSON_TOO_DEEP"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON_TOO_DEEP"),  # recursion limit, not a crash
    ],
)
def test_rejections_carry_their_code(data: bytes, code: str) -> None:
    assert _code(data) == code


def test_rejection_is_an_input_rejection_with_hint() -> None:
    with pytest.raises(InputRejected) as info:
        strict_loads(b'{"a":1,"a":2}')
    assert info.value.exit_code == ExitCode.REJECTED
    assert info.value.hint
    assert "'a'" in info.value.message


def test_depth_limit_is_inclusive() -> None:
    # MAX_DEPTH levels of nesting below the top are fine; one more is not.
    ok = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    assert isinstance(strict_loads(ok), list)


@pytest.mark.parametrize(
    ("data", "value"),
    [
        (b"{}", {}),
        (b' {"a": [1, 2.5, "x", true, false, null]} \n', {"a": [1, 2.5, "x", True, False, None]}),
        (b'"\\ud83d\\ude00"', "\U0001f600"),  # a valid surrogate pair
        ('"caf\u00e9"'.encode(), "caf\u00e9"),
        (b"1e308", 1e308),
        (b"-0", 0),
        (b"12345678901234567890", 12345678901234567890),  # parses; canonical form refuses it
    ],
)
def test_accepts_valid_json(data: bytes, value: object) -> None:
    assert strict_loads(data) == value


def test_bytes_only() -> None:
    with pytest.raises(TypeError):
        strict_loads('{"a": 1}')  # type: ignore[arg-type]
    assert strict_loads(bytearray(b"[1]")) == [1]
    assert strict_loads(memoryview(b"[1]")) == [1]


@pytest.mark.parametrize("data", [b"[]", b'"text"', b"1", b"null", b"true", b"[{}]"])
def test_object_required(data: bytes) -> None:
    with pytest.raises(StrictJSONError) as info:
        strict_loads_object(data, "approvals/c3.json")
    assert info.value.code == "JSON_NOT_OBJECT"
    assert "approvals/c3.json" in info.value.message


def test_object_passes_through_strictness() -> None:
    assert strict_loads_object(b'{"a": {"b": 1}}') == {"a": {"b": 1}}
    with pytest.raises(StrictJSONError) as info:
        strict_loads_object(b'{"a": 1, "a": 1}')
    assert info.value.code == "JSON_DUPLICATE_KEY"
