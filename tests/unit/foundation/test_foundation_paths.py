"""Canonical repository-relative paths and the one glob matcher, with literals."""

from __future__ import annotations

import itertools
import re

import pytest

from plangate.errors import InputRejected
from plangate.paths import (
    PathRejected,
    canonical_path,
    glob_match,
    is_canonical_path,
    match_any,
    paths_outside,
    patterns_overlap,
    validate_pattern,
)

NFD_E_ACUTE = "e\u0301"  # 'e' + combining acute accent
NFC_E_ACUTE = "\u00e9"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("", "PATH_EMPTY"),
        ("/etc/passwd", "PATH_ABSOLUTE"),
        ("/", "PATH_ABSOLUTE"),
        ("..", "PATH_DOTDOT"),
        ("a/../b", "PATH_DOTDOT"),
        ("a/..", "PATH_DOTDOT"),
        (".", "PATH_DOT"),
        ("./a", "PATH_DOT"),
        ("a/./b", "PATH_DOT"),
        ("a//b", "PATH_EMPTY_SEGMENT"),
        ("a/", "PATH_EMPTY_SEGMENT"),
        ("src/dir/", "PATH_EMPTY_SEGMENT"),
        ("a\\b", "PATH_BACKSLASH"),
        ("..\\x", "PATH_BACKSLASH"),
        ("C:\\x", "PATH_BACKSLASH"),
        (f"caf{NFD_E_ACUTE}.md", "PATH_NOT_NFC"),
        (" a.md", "PATH_WHITESPACE"),
        ("a.md ", "PATH_WHITESPACE"),
        ("dir /a", "PATH_WHITESPACE"),
        ("a\u3000/b", "PATH_WHITESPACE"),  # ideographic space counts as whitespace
        ("a\nb", "PATH_CONTROL_CHAR"),
        ("a\x00b", "PATH_CONTROL_CHAR"),
        ("a\x7f", "PATH_CONTROL_CHAR"),
        ("a\tb", "PATH_CONTROL_CHAR"),
        ("src/*.py", "PATH_HAS_WILDCARD"),
        ("a?", "PATH_HAS_WILDCARD"),
        (None, "PATH_NOT_STRING"),
        (b"a", "PATH_NOT_STRING"),
    ],
)
def test_canonical_path_rejections(path: object, code: str) -> None:
    with pytest.raises(PathRejected) as info:
        canonical_path(path)
    assert info.value.code == code
    assert info.value.hint
    assert isinstance(info.value, InputRejected)
    assert is_canonical_path(path) is False


@pytest.mark.parametrize(
    "path",
    [
        "a",
        "src/plangate/cli/main.py",
        ".github/workflows/ci.yml",  # dot files are fine; only '.' segments are not
        "a..b/c",
        "...",
        f"caf{NFC_E_ACUTE}.md",
        "dir with space/x.md",
        "CLAUDE.md",
        "\u65e5\u672c\u8a9e/\u30d5\u30a1\u30a4\u30eb.md",
    ],
)
def test_canonical_paths_accepted(path: str) -> None:
    assert canonical_path(path) == path
    assert is_canonical_path(path)


def test_case_is_preserved_not_normalised() -> None:
    assert canonical_path("Docs/README.md") == "Docs/README.md"
    assert not glob_match("docs/readme.md", "Docs/README.md")
    assert glob_match("docs/readme.md", "Docs/README.md", casefold=True)


@pytest.mark.parametrize(
    ("pattern", "code"),
    [
        ("a/**b", "PATTERN_BAD_DOUBLESTAR"),
        ("**x", "PATTERN_BAD_DOUBLESTAR"),
        ("a/***", "PATTERN_BAD_DOUBLESTAR"),
        ("a//b", "PATH_EMPTY_SEGMENT"),
        ("a/**/", "PATH_EMPTY_SEGMENT"),
        ("/a/*", "PATH_ABSOLUTE"),
        ("../*", "PATH_DOTDOT"),
        ("./*", "PATH_DOT"),
        ("a\\*", "PATH_BACKSLASH"),
        ("", "PATH_EMPTY"),
    ],
)
def test_pattern_rejections(pattern: str, code: str) -> None:
    with pytest.raises(PathRejected) as info:
        validate_pattern(pattern)
    assert info.value.code == code


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),  # '*' never crosses '/'
        ("src/*", "src/a", True),
        ("src/*", "src", False),
        ("*", "a", True),
        ("*", "a/b", False),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),  # '?' never matches '/'
        ("a?c", "ac", False),
        ("**", "a", True),
        ("**", "a/b/c", True),
        ("docs/**", "docs/x.md", True),
        ("docs/**", "docs/a/b/x.md", True),
        ("docs/**", "docs", False),  # trailing '**' needs at least one segment
        ("**/x.md", "x.md", True),  # leading '**' may be zero segments
        ("**/x.md", "a/b/x.md", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("a/**/b", "ab", False),
        ("**/approvals/*.json", "docs/working/TASK-0001/approvals/c3.json", True),
        ("**/approvals/*.json", "approvals/c3.json", True),
        ("**/approvals/*.json", "approvals/sub/c3.json", False),
        ("src/a.py", "src/a.py", True),
        ("src/a.py", "src/a.pyc", False),  # anchored at the end
        ("src/a.py", "x/src/a.py", False),  # anchored at the start
        ("a.b", "axb", False),  # '.' is literal
        ("a+b", "a+b", True),
        ("[ab]", "a", False),  # brackets are literal, not a class
        ("[ab]", "[ab]", True),
        ("CLAUDE.md", "claude.md", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


def test_casefold_matching() -> None:
    assert glob_match("CLAUDE.md", "claude.md", casefold=True)
    assert glob_match(".claude/**", ".Claude/settings.json", casefold=True)
    assert not glob_match(".claude/**", ".Claude/settings.json")


def test_glob_match_rejects_bad_paths_before_matching() -> None:
    # A non-canonical path is never normalised into a match.
    for bad in ("./src/a.py", "src//a.py", "src/a.py/", "/src/a.py", "src\\a.py", "src/../a.py"):
        with pytest.raises(PathRejected):
            glob_match("**", bad)
    with pytest.raises(PathRejected):
        glob_match("src/**x", "src/a")


def test_match_any_and_paths_outside() -> None:
    patterns = ["src/**", "docs/*.md"]
    assert match_any(patterns, "src/a/b.py") == "src/**"
    assert match_any(patterns, "docs/x.md") == "docs/*.md"
    assert match_any(patterns, "docs/a/x.md") is None
    assert match_any([], "a") is None
    assert paths_outside(patterns, ["src/a.py", "README.md", "docs/x.md"]) == ["README.md"]
    # An empty allow-list allows nothing (deny by default).
    assert paths_outside([], ["a", "b"]) == ["a", "b"]
    # Scope matching is case-sensitive: under-allowing is the safe side.
    assert paths_outside(["src/**"], ["SRC/a.py"]) == ["SRC/a.py"]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("src/**", "src/a.py", True),
        ("src/*.py", "src/*.md", False),
        ("src/*.py", "*/a.*", True),
        ("docs/**", "src/**", False),
        ("**", "anything/at/all", True),
        ("a/**/b", "a/c/d/b", True),
        ("a/*", "a/b/c", False),
        (".claude/**", ".CLAUDE/settings.json", True),  # case folded by default
        ("?", "\u00df", True),  # 'ß' is one character; folding must not make it two
        ("x/?/y", "X/\u00df/Y", True),
        # Characters whose case folding differs from lower-casing still fold to
        # one character: long s folds to 's', capital sharp s to sharp s.
        ("\u017f.md", "S.md", True),
        ("\u1e9e.md", "\u00df.md", True),
        # A leading '**' still has to line up the segments after it.
        ("**/x", "a/y", False),
        ("**/x", "y", False),
        ("a/**/x", "a", False),
    ],
)
def test_patterns_overlap(a: str, b: str, expected: bool) -> None:
    assert patterns_overlap(a, b) is expected
    assert patterns_overlap(b, a) is expected


def test_patterns_overlap_case_sensitive_mode() -> None:
    assert not patterns_overlap("A/*", "a/*", casefold=False)
    assert patterns_overlap("A/*", "a/*")


def test_patterns_overlap_agrees_with_casefold_matching() -> None:
    # The overlap test never under-reports: whatever glob_match(casefold=True)
    # matches, patterns_overlap says overlaps.
    for pattern, path in (("\u017f.md", "s.md"), ("\u1e9e.md", "\u00df.md")):
        assert glob_match(pattern, path, casefold=True)
        assert patterns_overlap(pattern, path)


def test_patterns_overlap_validates_both_patterns() -> None:
    for a, b in (("src/**x", "src/a"), ("src/a", "src/**x"), ("/abs", "a"), ("a", "a//b")):
        with pytest.raises(PathRejected):
            patterns_overlap(a, b)


def test_validators_return_their_input_and_name_what_was_wrong() -> None:
    assert validate_pattern("src/**/x.py") == "src/**/x.py"
    assert canonical_path("src/x.py") == "src/x.py"
    with pytest.raises(PathRejected) as as_path:
        canonical_path("a//b")
    assert as_path.value.message.startswith("path ")
    with pytest.raises(PathRejected) as as_pattern:
        validate_pattern("a//b")
    assert as_pattern.value.message.startswith("pattern ")


# -- the matcher against an independent reference, exhaustively over a small alphabet ------


def _reference(pattern: str, casefold: bool) -> re.Pattern[str]:
    """The glob semantics written as a (backtracking) regular expression."""
    segments = pattern.split("/")
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append("[^/]+(?:/[^/]+)*" if last else "(?:[^/]+/)*")
            continue
        if segment == "*":
            parts.append("[^/]+")
        else:
            parts.append(
                "".join(
                    "[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch)
                    for ch in segment
                )
            )
        if not last:
            parts.append("/")
    return re.compile("".join(parts), re.IGNORECASE if casefold else 0)


SEGMENT_PATTERNS = ("*", "**", "a", "B", "?b", "a*")
PATH_SEGMENTS = ("a", "ab", "B", "bab")
SMALL_PATTERNS = [
    "/".join(parts)
    for size in (1, 2, 3)
    for parts in itertools.product(SEGMENT_PATTERNS, repeat=size)
]
SMALL_PATHS = [
    "/".join(parts) for size in (1, 2, 3) for parts in itertools.product(PATH_SEGMENTS, repeat=size)
]


@pytest.mark.parametrize("casefold", [False, True])
def test_the_matcher_agrees_with_the_reference_on_every_small_case(casefold: bool) -> None:
    disagreements = []
    for pattern in SMALL_PATTERNS:
        reference = _reference(pattern, casefold)
        for path in SMALL_PATHS:
            expected = reference.fullmatch(path) is not None
            if glob_match(pattern, path, casefold=casefold) is not expected:
                disagreements.append((pattern, path))
    assert disagreements == []


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("\u0131", "I"),  # dotless i and I: equal only once both are upper-cased
        ("\u03d1", "\u03f4"),  # theta symbol and capital theta symbol: equal only casefolded
        ("x\u0131*", "XI.md"),
        ("?\u03d1", "a\u03f4"),
    ],
)
def test_case_insensitive_matching_uses_every_usual_case_mapping(pattern: str, path: str) -> None:
    assert glob_match(pattern, path, casefold=True) is True
    assert glob_match(pattern, path) is False


def test_case_insensitive_literal_segments_must_have_the_same_length() -> None:
    assert glob_match("\u00df", "ss", casefold=True) is False
    assert glob_match("a\u00e9", "A\u00c9", casefold=True) is True
    assert glob_match("a\u00e9", "A\u00c9x", casefold=True) is False


def test_a_pattern_that_is_not_a_string_is_rejected() -> None:
    with pytest.raises(PathRejected) as info:
        glob_match(3, "a")  # type: ignore[arg-type]
    assert info.value.code == "PATH_NOT_STRING"


def test_match_any_returns_the_first_matching_pattern_and_can_fold_case() -> None:
    assert match_any(["src/*.py", "src/**", "**"], "src/a.py") == "src/*.py"
    assert match_any(["SRC/**"], "src/a.py") is None
    assert match_any(["SRC/**"], "src/a.py", casefold=True) == "SRC/**"


def _work(pattern: str, path: str, casefold: bool = False) -> int:
    counter = [0]
    glob_match(pattern, path, casefold=casefold, counter=counter)
    return counter[0]


def test_the_work_counter_counts_segment_comparisons() -> None:
    assert _work("a/b/c", "a/b/c") == 3
    assert _work("a/b", "a/b/c") == 0  # different lengths: nothing compared
    assert _work("**", "a/b") == 2  # the one-segment state, then the '**' state
    assert _work("x/**", "x/y") == 2
    assert _work("A/**", "a/b", casefold=True) == _work("a/**", "a/b")
    stop = _work("a/**/z", "b/a/z")
    assert stop == 1  # no state survives the first segment: the walk stops
    # A literal segment of the pattern missing from the path: no walk at all.
    assert _work("a/**/z", "b/c/d/e") == 0
    assert _work("**/approvals/**", "lib/pkg/m.py") == 0
    assert _work("**/approvals/**", "docs/approvals/x") > 0


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("\u03d1", "\u03f4", True),  # fold to the same one character
        ("\u0130", "?", True),  # dotted capital I folds to two characters: kept as it is
        ("\u00df", "?", True),
        ("\u00df", "ss", False),  # one character never overlaps two
        ("a*", "*b", True),
        ("a*c", "ab", False),
        ("*", "a", True),
        ("a", "*", True),
        ("ab*", "a", False),
        ("a?", "a", False),
        ("?", "ab", False),
        ("**/a", "b/**", True),
        ("a/b", "a/**/b", True),
        ("a/b/c", "a/**", True),
        ("a/b", "a/c", False),
        ("a/b", "a", False),
        ("a", "a/b", False),
    ],
)
def test_patterns_overlap_edges(a: str, b: str, expected: bool) -> None:
    assert patterns_overlap(a, b) is expected
    assert patterns_overlap(b, a) is expected


def test_a_whole_segment_star_needs_a_character() -> None:
    assert glob_match("a/*/b", "a/x/b") is True
    assert glob_match("*/b", "b") is False
    assert glob_match("a*", "a") is True
    assert glob_match("*a", "a") is True
    assert glob_match("**/*", "a") is True


@pytest.mark.parametrize("segment", ["x", "a", "X", "\u00df", "-"])
def test_a_whole_segment_star_and_a_trailing_doublestar_match_any_segment(segment: str) -> None:
    assert glob_match("*", segment) is True
    assert glob_match("d/*/e", f"d/{segment}/e") is True
    assert glob_match("d/**", f"d/{segment}") is True
    assert glob_match("d/**", f"d/{segment}/{segment}") is True


SUFFIX_CASES = [
    ("**/CLAUDE.md", "CLAUDE.md", True),
    ("**/CLAUDE.md", "a/b/CLAUDE.md", True),
    ("**/CLAUDE.md", "a/CLAUDE.md/b", False),
    ("**/CLAUDE.md", "a/XCLAUDE.md", False),
    ("**/a/b", "b", False),
    ("**/a/b", "a/b", True),
    ("**/a/b", "x/a/b", True),
    ("**/a/b", "a/x/b", False),
    ("**/a/b", "x/b/b", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), SUFFIX_CASES)
def test_a_doublestar_then_literal_pattern_matches_the_paths_ending_so(
    pattern: str, path: str, expected: bool
) -> None:
    assert glob_match(pattern, path) is expected
    assert (match_any(["zzz/**", pattern], path) == pattern) is expected
    # Case folding, ASCII and not: the suffix compares folded segments too.
    assert glob_match(pattern.lower(), path.upper(), casefold=True) is expected
    assert glob_match(pattern, path + "\u00e9", casefold=True) is False


@pytest.mark.parametrize(
    ("patterns", "path", "expected"),
    [
        # A wildcard-first pattern listed before a literal-first one wins, and after it loses.
        (["*/a.py", "src/a.py"], "src/a.py", "*/a.py"),
        (["src/a.py", "*/a.py"], "src/a.py", "src/a.py"),
        (["src/b.py", "**", "src/a.py"], "src/a.py", "**"),
        (["docs/**", "src/**"], "src/a.py", "src/**"),
        (["docs/**", "tests/**"], "src/a.py", None),
        (["docs/**", "?rc/**"], "src/a.py", "?rc/**"),
        (["src", "src/**"], "src", "src"),
    ],
)
def test_the_pattern_index_answers_the_first_pattern_in_order(
    patterns: list[str], path: str, expected: str | None
) -> None:
    assert match_any(patterns, path) == expected
    assert match_any(tuple(patterns), path) == expected
    assert match_any(iter(patterns), path) == expected
    assert match_any(patterns, path, counter=[0]) == expected


def test_case_folding_through_the_index_and_beside_it() -> None:
    assert match_any(["docs/**", "SRC/**"], "src/a.py", casefold=True) == "SRC/**"
    assert match_any(["docs/**", "SRC/**"], "src/a.py") is None
    # A non-ASCII pattern or path folds character by character (not through the index).
    assert match_any(["docs/**", "\u00c9/**"], "\u00e9/a", casefold=True) == "\u00c9/**"
    assert match_any(["docs/**", "STRASSE/**"], "stra\u00dfe/a", casefold=True) is None
    assert match_any(["docs/**", "\u017f/**"], "s/a", casefold=True) == "\u017f/**"


def test_an_invalid_pattern_is_refused_wherever_it_stands() -> None:
    # Even after a pattern that matches: the answer never depends on the path.
    for patterns in (["src/**", "../x"], ("src/**", "a//b"), iter(["src/**", "/abs"])):
        with pytest.raises(PathRejected):
            match_any(patterns, "src/a.py")
    with pytest.raises(PathRejected) as caught:
        match_any(["src/**", ["not", "a", "string"]], "src/a.py")  # type: ignore[list-item]
    assert caught.value.code == "PATH_NOT_STRING"


def test_the_first_pattern_then_the_path_then_the_rest_are_validated() -> None:
    with pytest.raises(PathRejected) as caught:
        match_any(["src/**", "../x"], "/abs")
    assert caught.value.code == "PATH_ABSOLUTE"
    with pytest.raises(PathRejected) as caught:
        match_any(["../x", "src/**"], "/abs")
    assert caught.value.code == "PATH_DOTDOT"
    for casefold in (False, True):
        with pytest.raises(PathRejected) as caught:
            match_any(["src/**", "docs/**"], None, casefold=casefold)  # type: ignore[arg-type]
        assert caught.value.code == "PATH_NOT_STRING"
