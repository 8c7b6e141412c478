"""Property tests of canonical paths, the glob matcher and patterns_overlap."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from plangate.paths import (
    PathRejected,
    canonical_path,
    glob_match,
    is_canonical_path,
    patterns_overlap,
)
from support.branches import Branches

# A small alphabet makes collisions between generated paths and patterns likely, and
# includes characters whose case folding is not one-to-one.
LETTERS = "abAB.-_\u00df\u00e9\u212a\u017f"
segment = st.text(alphabet=LETTERS, min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))
paths = st.lists(segment, min_size=1, max_size=4).map("/".join)
pattern_segment = st.one_of(
    segment,
    st.just("*"),
    st.just("**"),
    st.text(alphabet=LETTERS + "*?", min_size=1, max_size=4).filter(
        lambda s: "**" not in s and s not in (".", "..")
    ),
)
patterns = st.lists(pattern_segment, min_size=1, max_size=4).map("/".join)


def _nfc(text: str) -> bool:
    return unicodedata.normalize("NFC", text) == text


@given(paths)
def test_generated_paths_are_canonical(path: str) -> None:
    assume(_nfc(path))
    assert canonical_path(path) == path


@given(paths, st.sampled_from(["/", "./", "../", "a//", "\\"]))
def test_prefixes_that_would_need_normalising_are_rejected(path: str, prefix: str) -> None:
    assume(_nfc(path))
    assert not is_canonical_path(prefix + path)
    assert not is_canonical_path(path + "/")


@given(st.text(max_size=12))
def test_canonical_path_never_crashes(text: str) -> None:
    try:
        canonical_path(text)
    except PathRejected as exc:
        assert re.fullmatch(r"PATH_[A-Z_]+", exc.code)  # noqa: PT017 -- either outcome is fine


def test_nfd_paths_are_rejected_not_normalised() -> None:
    seen = Branches()

    # "e" + U+0301 (the decomposed "é") as one piece, so that decomposed text is common.
    pieces = st.sampled_from(["a", "e", "\u0301", "\u00e9", "/", "e\u0301"])

    @given(st.lists(pieces, min_size=1, max_size=8).map("".join))
    def check(text: str) -> None:
        seen.example()
        if seen.reached("not NFC", not _nfc(text)):
            assert not is_canonical_path(text)

    check()
    seen.assert_share("not NFC")


@given(st.lists(segment, min_size=2, max_size=5))
def test_star_never_crosses_a_slash(segments: list[str]) -> None:
    path = "/".join(segments)
    assume(_nfc(path))
    assert not glob_match("*", path)
    assert glob_match("/".join("*" for _ in segments), path)
    assert not glob_match("/".join("*" for _ in segments[1:]), path)


@given(st.lists(segment, min_size=1, max_size=5))
def test_double_star_semantics(segments: list[str]) -> None:
    path = "/".join(segments)
    assume(_nfc(path))
    assert glob_match("**", path)
    assert glob_match("**/" + segments[-1], path)  # leading ** may match zero segments
    head = segments[0]
    assume("*" not in head and "?" not in head)
    # Trailing ** needs at least one more segment below the prefix.
    assert glob_match(head + "/**", path) is (len(segments) > 1)


@given(paths)
def test_question_mark_matches_exactly_one_character(path: str) -> None:
    assume(_nfc(path))
    pattern = "/".join("?" * len(s) for s in path.split("/"))
    assert glob_match(pattern, path)
    longer = "/".join("?" * (len(s) + 1) for s in path.split("/"))
    assert not glob_match(longer, path)


@given(paths)
def test_casefold_matches_any_case(path: str) -> None:
    assume(_nfc(path) and _nfc(path.upper()) and is_canonical_path(path.upper()))
    assert glob_match(path, path)
    assert glob_match(path.upper(), path, casefold=True) or len(path.upper()) != len(path)


def _pattern_from(data: st.DataObject, path: str) -> str:
    """A pattern that matches ``path`` exactly, built by generalising parts of it."""
    out: list[str] = []
    for seg in path.split("/"):
        choice = data.draw(st.sampled_from(["keep", "star", "qmark", "prefix_star", "dstar"]))
        if choice == "star":
            out.append("*")
        elif choice == "dstar" and (not out or out[-1] != "**"):
            out.append("**")
        elif choice == "qmark":
            index = data.draw(st.integers(min_value=0, max_value=len(seg) - 1))
            out.append(seg[:index] + "?" + seg[index + 1 :])
        elif choice == "prefix_star":
            out.append(seg[:1] + "*")
        else:
            out.append(seg)
    return "/".join(out)


def _any_or_matching(data: st.DataObject, path: str) -> str:
    """An arbitrary pattern, or one built to match ``path`` (so that matches occur)."""
    if data.draw(st.booleans()):
        return _pattern_from(data, path)
    return data.draw(patterns)


def test_patterns_overlap_is_sound() -> None:
    seen = Branches()

    @settings(max_examples=200)
    @given(paths, st.data())
    def check(path: str, data: st.DataObject) -> None:
        assume(_nfc(path))
        a = _any_or_matching(data, path)
        b = _any_or_matching(data, path)
        assume(_nfc(a) and _nfc(b))
        seen.example()
        if seen.reached("both match", glob_match(a, path) and glob_match(b, path)):
            assert patterns_overlap(a, b, casefold=False)
            assert patterns_overlap(a, b)
        if seen.reached(
            "both match folded",
            glob_match(a, path, casefold=True) and glob_match(b, path, casefold=True),
        ):
            assert patterns_overlap(a, b)
        else:
            seen.reached("not both match folded", True)

    check()
    seen.assert_share("both match")
    seen.assert_share("both match folded")
    seen.assert_share("not both match folded")


def test_a_pattern_overlaps_every_path_it_matches() -> None:
    seen = Branches()

    @settings(max_examples=200)
    @given(paths, st.data())
    def check(path: str, data: st.DataObject) -> None:
        pattern = _any_or_matching(data, path)
        assume(_nfc(pattern) and _nfc(path))
        seen.example()
        if seen.reached("matches", glob_match(pattern, path)):
            assert patterns_overlap(pattern, path, casefold=False)

    check()
    seen.assert_share("matches")


def test_patterns_built_to_share_a_path_overlap() -> None:
    seen = Branches()

    @settings(max_examples=300)
    @given(paths, st.data())
    def check(path: str, data: st.DataObject) -> None:
        assume(_nfc(path))
        a = _pattern_from(data, path)
        b = _pattern_from(data, path)
        assume(_nfc(a) and _nfc(b))
        seen.example()
        assert glob_match(a, path) and glob_match(b, path)
        assert patterns_overlap(a, b, casefold=False)
        assert patterns_overlap(a, b)
        upper = path.upper()
        if len(upper) == len(path) and is_canonical_path(upper) and _nfc(upper):
            c = _pattern_from(data, upper)
            if seen.reached("upper-case pattern matches", glob_match(c, path, casefold=True)):
                assert patterns_overlap(a, c)

    check()
    seen.assert_share("upper-case pattern matches")


ASCII_LETTERS = "abAB.-_"
ascii_segment = st.text(alphabet=ASCII_LETTERS, min_size=1, max_size=3).filter(
    lambda s: s not in (".", "..")
)
ascii_paths = st.lists(ascii_segment, min_size=1, max_size=4).map("/".join)
ascii_patterns = st.lists(
    st.one_of(ascii_segment, st.just("*"), st.just("**"), st.just("a?"), st.just("*b")),
    min_size=1,
    max_size=4,
).map("/".join)


def _first_in_order(pattern_list: list[str], path: str, casefold: bool) -> str | None:
    """The reference answer: every pattern tried in order, through glob_match."""
    for pattern in pattern_list:
        if glob_match(pattern, path, casefold=casefold):
            return pattern
    return None


@settings(max_examples=400)
@given(
    st.lists(st.one_of(ascii_patterns, patterns), min_size=1, max_size=12),
    st.one_of(ascii_paths, paths),
    st.booleans(),
)
def test_the_pattern_index_gives_the_first_match_in_order(
    pattern_list: list[str], path: str, casefold: bool
) -> None:
    from plangate.paths import match_any

    assume(all(_nfc(p) for p in pattern_list) and _nfc(path))
    expected = _first_in_order(pattern_list, path, casefold)
    assert match_any(pattern_list, path, casefold=casefold) == expected
    assert match_any(tuple(pattern_list), path, casefold=casefold) == expected
    assert match_any(iter(pattern_list), path, casefold=casefold) == expected
    assert match_any(pattern_list, path, casefold=casefold, counter=[0]) == expected


@settings(max_examples=400)
@given(
    st.lists(st.one_of(ascii_patterns, patterns), min_size=0, max_size=12),
    st.lists(st.one_of(ascii_paths, paths, st.text(max_size=6)), max_size=6),
    st.booleans(),
)
def test_a_prepared_matcher_answers_and_refuses_as_match_any(
    pattern_list: list[str], path_list: list[str], casefold: bool
) -> None:
    from plangate.paths import first_match_of, match_any

    first = first_match_of(pattern_list, casefold=casefold)
    for path in path_list:
        try:
            expected: object = match_any(pattern_list, path, casefold=casefold)
        except PathRejected as exc:
            expected = exc.code
        try:
            got: object = first(path)
        except PathRejected as exc:
            got = exc.code
        assert got == expected


def _oracle(pattern: str, path: str, casefold: bool) -> bool:
    """An independent reading of the glob semantics, for ASCII text: a regular expression
    over ``path + "/"``, each pattern segment with its own slash ('**' zero or more whole
    segments, a trailing '**' at least one, '*' and '?' inside one segment)."""
    parts = pattern.split("/")
    if parts[-1] == "**":
        parts = [*parts[:-1], "*", "**"]
    regex = ""
    for part in parts:
        if part == "**":
            regex += "(?:[^/]+/)*"
            continue
        body = "".join(
            "[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in part
        )
        regex += f"(?:{body})/" if part != "*" else "[^/]+/"
    flags = re.IGNORECASE if casefold else 0
    return re.fullmatch(regex, path + "/", flags) is not None


@settings(max_examples=1500)
@given(ascii_patterns, ascii_paths, st.booleans())
def test_glob_match_agrees_with_an_independent_reading(
    pattern: str, path: str, casefold: bool
) -> None:
    # Covers every shortcut of the matcher (the literal suffix, the literal first
    # segment, the required literal segments) against semantics written another way.
    assert glob_match(pattern, path, casefold=casefold) == _oracle(pattern, path, casefold)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/approvals/**", "docs/working/T/approvals/c3.json", True),
        ("**/approvals/**", "approvals/x", True),
        ("**/approvals/**", "docs/approvals", False),  # a trailing '**' needs a segment
        ("**/approvals/**", "lib/pkg/m.py", False),
        ("a/**/b/c", "a/x/b/c", True),
        ("a/**/b/c", "a/c/b", False),
        ("**/A/**", "x/a/y", False),
    ],
)
def test_required_literal_segments_decide_only_when_absent(
    pattern: str, path: str, expected: bool
) -> None:
    assert glob_match(pattern, path) is expected
    assert _oracle(pattern, path, False) is expected
