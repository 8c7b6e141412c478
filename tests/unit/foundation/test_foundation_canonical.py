"""RFC 8785 canonical JSON and sha256 digests, pinned with literal vectors."""

from __future__ import annotations

import hashlib
import json
import struct

import pytest

from plangate.canonical import (
    StrictJSONError,
    canonical_bytes,
    canonical_text,
    digest,
    is_digest,
    pretty_bytes,
    sha256_digest,
    sha256_hex,
    strict_loads,
)

# RFC 8785 Appendix B: IEEE-754 bit patterns and their canonical text.
RFC8785_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),  # minus zero
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "text"), RFC8785_NUMBERS)
def test_rfc8785_number_vectors(bits: str, text: str) -> None:
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert canonical_text(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (100, "100"),
        (-7, "-7"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (0.5, "0.5"),
        (-1.5e-9, "-1.5e-9"),
        (123.456, "123.456"),
        (2**53 - 1, "9007199254740991"),
    ],
)
def test_number_formatting(value: float, text: str) -> None:
    assert canonical_text(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2**53, "9007199254740992"),
        (-(2**53), "-9007199254740992"),
        (10**30, "1e+30"),
        (47365196181950570, "47365196181950570"),  # the canonical text of a double
    ],
)
def test_large_integers_that_a_double_holds_exactly(value: int, text: str) -> None:
    assert canonical_text(value) == text
    assert canonical_bytes(strict_loads(text.encode())) == text.encode()


@pytest.mark.parametrize("value", [2**53 + 1, -(2**53 + 1), 10**30 + 1, 10**400])
def test_unsafe_integers_are_refused(value: int) -> None:
    with pytest.raises(StrictJSONError) as info:
        canonical_bytes(value)
    assert info.value.code == "JSON_NUMBER_RANGE"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_refused(value: float) -> None:
    with pytest.raises(StrictJSONError) as info:
        canonical_bytes([value])
    assert info.value.code == "JSON_NON_FINITE"


def test_rfc8785_section_3_2_2_example() -> None:
    source = (
        b'{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n'
        b'  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n'
        b'  "literals": [null, true, false]\n}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_text(strict_loads(source)) == expected
    assert canonical_bytes(strict_loads(source)) == expected.encode("utf-8")


def test_rfc8785_section_3_2_3_sorting_by_utf16_code_units() -> None:
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    text = canonical_text(value)
    keys = list(json.loads(text).keys())
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    # Code-point order would put the emoji (U+1F600) last; UTF-16 puts it before U+FB33.
    assert sorted(value) != keys


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'),
        ("\x00\x01\x1f", '"\\u0000\\u0001\\u001f"'),
        ("\x7f", '"\x7f"'),  # DEL is not escaped (Python's json.dumps writes \u007f)
        ('quote " backslash \\', '"quote \\" backslash \\\\"'),
        ("/", '"/"'),  # solidus is not escaped
        ("\u00e9\u20ac\U0001f600", '"\u00e9\u20ac\U0001f600"'),  # non-ASCII written as UTF-8
        ("\u2028", '"\u2028"'),
    ],
)
def test_string_escaping(value: str, text: str) -> None:
    assert canonical_text(value) == text


def test_lone_surrogate_refused_when_serialising() -> None:
    with pytest.raises(StrictJSONError) as info:
        canonical_bytes({"k": "\ud800"})
    assert info.value.code == "JSON_LONE_SURROGATE"


def test_literals_and_containers() -> None:
    assert canonical_text([None, True, False, [], {}]) == "[null,true,false,[],{}]"
    assert canonical_text((1, 2)) == "[1,2]"
    assert canonical_text({"b": {"d": 1, "c": 2}, "a": []}) == '{"a":[],"b":{"c":2,"d":1}}'


@pytest.mark.parametrize("value", [{1: "x"}, {"a": {1, 2}}, object(), b"bytes"])
def test_non_json_values_are_type_errors(value: object) -> None:
    with pytest.raises(TypeError):
        canonical_bytes(value)


def test_too_deep_value_refused() -> None:
    value: list[object] = []
    for _ in range(100):
        value = [value]
    with pytest.raises(StrictJSONError) as info:
        canonical_bytes(value)
    assert info.value.code == "JSON_TOO_DEEP"


# DECISIONS 1: for the c3-prime artifact_hashes map the canonical form equals upstream's
# json.dumps(sort_keys=True, separators=(",", ":")) bytes, so upstream records verify here.
UPSTREAM_ARTIFACT_HASHES = {
    "review-external.md": "sha256:" + "6" * 64,
    "plan.md": "sha256:" + "2" * 64,
    "todo.md": "sha256:" + "3" * 64,
    "pbi-input.md": "sha256:" + "1" * 64,
    "test-cases.md": "sha256:" + "4" * 64,
    "review-self.md": "sha256:" + "5" * 64,
}
UPSTREAM_CANONICAL = (
    '{"pbi-input.md":"sha256:' + "1" * 64 + '","plan.md":"sha256:' + "2" * 64
    + '","review-external.md":"sha256:' + "6" * 64 + '","review-self.md":"sha256:' + "5" * 64
    + '","test-cases.md":"sha256:' + "4" * 64 + '","todo.md":"sha256:' + "3" * 64 + '"}'
)


def test_artifact_hashes_canonical_equals_upstream_literal() -> None:
    upstream = json.dumps(UPSTREAM_ARTIFACT_HASHES, sort_keys=True, separators=(",", ":"))
    assert upstream == UPSTREAM_CANONICAL
    assert canonical_text(UPSTREAM_ARTIFACT_HASHES) == UPSTREAM_CANONICAL
    expected = "sha256:" + hashlib.sha256(UPSTREAM_CANONICAL.encode()).hexdigest()
    assert digest(UPSTREAM_ARTIFACT_HASHES) == expected


def test_upstream_canonical_hash_examples() -> None:
    # upstream tests: key order does not matter; canonical_hash({}) is sha256 of "{}".
    assert digest({"a": 1, "b": 2}) == digest({"b": 2, "a": 1})
    assert digest({}) == "sha256:" + hashlib.sha256(b"{}").hexdigest()


def test_sha256_digest_is_over_raw_bytes() -> None:
    lf, crlf = b"line\n", b"line\r\n"
    assert sha256_digest(lf) != sha256_digest(crlf)  # DECISIONS 3: no normalisation
    assert sha256_digest(b"") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert len(sha256_digest(b"x")) == 71
    assert sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("sha256:" + "a" * 64, True),
        ("sha256:" + "0123456789abcdef" * 4, True),
        ("sha256:" + "A" * 64, False),  # no case folding (DECISIONS 2)
        ("SHA256:" + "a" * 64, False),
        ("a" * 64, False),  # no prefix repair
        ("sha256:" + "a" * 63, False),
        ("sha256:" + "a" * 65, False),
        ("sha256:" + "a" * 64 + "\n", False),
        (" sha256:" + "a" * 64, False),
        ("sha256:" + "g" * 64, False),
        (None, False),
        (b"sha256:" + b"a" * 64, False),
    ],
)
def test_is_digest(value: object, ok: bool) -> None:
    assert is_digest(value) is ok


def test_pretty_bytes_is_the_record_form() -> None:
    out = pretty_bytes({"b": "\u00e9", "a": [1]})
    assert out == b'{\n  "a": [\n    1\n  ],\n  "b": "\xc3\xa9"\n}\n'
    assert strict_loads(out) == {"a": [1], "b": "\u00e9"}


def test_the_one_documented_difference_from_python_json_dumps() -> None:
    # Python escapes DEL even though it is ASCII; RFC 8785 writes it raw. No artifact name or
    # digest contains DEL, so DECISIONS 1 equality holds for artifact_hashes maps.
    assert json.dumps({"\x7f": ""}, sort_keys=True, separators=(",", ":")) == '{"\\u007f":""}'
    assert canonical_text({"\x7f": ""}) == '{"\x7f":""}'
