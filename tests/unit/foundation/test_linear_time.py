"""Linear work on untrusted text: the glob matcher and the plan heading parser.

The matcher's work is counted (segment comparisons); the heading parser, which
uses only string scans, is checked by a size-scaled ratio (doubling the input
may at most about double the work) and against the regular expression it
replaced, as an independent reference.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.paths import PathRejected, glob_match, match_any
from plangate.plan.loopspec import _heading, extract_section

# -- the glob matcher ----------------------------------------------------------------


def _reference_regex(pattern: str, casefold: bool) -> re.Pattern[str]:
    """The glob semantics as a (backtracking) regular expression: the reference."""
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


_SEGMENT_PATTERNS = st.sampled_from(
    ["*", "**", "a", "b", "a*", "*b", "?", "a?b", "*a*", "ab", "B", "ß", "SS", "x*y*z"]
)
_SEGMENTS = st.sampled_from(
    ["a", "b", "ab", "aab", "ba", "B", "A", "ß", "ss", "SS", "xyz", "xaybz", "c"]
)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(_SEGMENT_PATTERNS, min_size=1, max_size=5), st.lists(_SEGMENTS, min_size=1, max_size=6)
)
def test_glob_matcher_agrees_with_the_reference_semantics(pattern_parts, path_parts) -> None:
    pattern = "/".join(pattern_parts)
    path = "/".join(path_parts)
    expected = _reference_regex(pattern, False).fullmatch(path) is not None
    assert glob_match(pattern, path) is expected


@settings(max_examples=600, deadline=None)
@given(
    st.lists(_SEGMENT_PATTERNS, min_size=1, max_size=5), st.lists(_SEGMENTS, min_size=1, max_size=6)
)
def test_case_insensitive_matching_never_matches_less_than_the_reference(
    pattern_parts, path_parts
) -> None:
    # Over-matching is the safe side for protected surfaces; under-matching is not.
    pattern = "/".join(pattern_parts)
    path = "/".join(path_parts)
    if _reference_regex(pattern, True).fullmatch(path) is not None:
        assert glob_match(pattern, path, casefold=True) is True


def _work(pattern: str, path: str) -> int:
    counter = [0]
    glob_match(pattern, path, casefold=True, counter=counter)
    return counter[0]


def test_many_doublestars_against_a_long_path_do_linear_work() -> None:
    # Ten '**' segments against a 30-segment path made the backtracking matcher
    # take tens of seconds; the work here grows with the path, never explodes.
    pattern = "/".join(["**"] * 10 + ["never"])
    small = "/".join(["a"] * 30)
    large = "/".join(["a"] * 60)
    assert glob_match(pattern, small) is False
    work_small, work_large = _work(pattern, small), _work(pattern, large)
    assert work_large <= 2 * work_small + 20
    assert work_small <= 11 * 31  # at most (pattern positions) x (path segments)


def test_stars_inside_one_segment_do_bounded_work() -> None:
    pattern = "*a*a*a*a*a*a*a*a*b"
    assert glob_match(pattern, "a" * 2000) is False
    assert glob_match(pattern, "a" * 2000 + "b") is True


def test_work_doubles_at_most_when_the_path_doubles() -> None:
    pattern = "src/**/x/**/y/**/*.py"
    for size in (16, 32, 64, 128):
        path = "src/" + "/".join(["d"] * size) + "/z.txt"
        bigger = "src/" + "/".join(["d"] * (2 * size)) + "/z.txt"
        assert _work(pattern, bigger) <= 2 * _work(pattern, path) + 8


# -- the plan heading parser ----------------------------------------------------------

_OLD_HEADING = re.compile(r"^(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")


def _old_heading(line: str) -> tuple[int, str] | None:
    match = _OLD_HEADING.match(line.rstrip())
    return None if match is None else (len(match.group(1)), (match.group(2) or "").strip())


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="# \tab\u3000\x0c\xa0C", max_size=14))
def test_heading_parser_agrees_with_the_regular_expression_it_replaced(line: str) -> None:
    assert _heading(line) == _old_heading(line)


def _best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_a_long_adversarial_heading_line_costs_what_a_normal_line_costs() -> None:
    # '## ' followed by '#a' repeated: the lazy group of the old expression tried
    # every split point (quadratic: a 32 KiB line took seconds). Same size, same
    # work: the adversarial plan costs about what a plain one costs.
    def plan(line: str) -> str:
        return (line + "\n") * 16 + "## Files / Components to Touch\n\n- `src/a.py`\n"

    size = 32 * 1024
    adversarial = plan("## " + "#a" * size)
    normal = plan("## " + "ab" * size)
    assert len(adversarial) == len(normal)
    assert extract_section(adversarial, "Files / Components to Touch") == "- `src/a.py`"
    ratio = _best_of(lambda: extract_section(adversarial, "x"), 7) / max(
        _best_of(lambda: extract_section(normal, "x"), 7), 1e-6
    )
    # about 1 when linear; the quadratic parser was thousands of times slower
    assert ratio < 10


# -- matching many paths against many patterns -----------------------------------------


def _count_calls(monkeypatch, name: str) -> list[int]:
    """Count the calls of ``plangate.paths.<name>`` (the real function still runs)."""
    import plangate.paths as paths_module

    real = getattr(paths_module, name)
    calls = [0]

    def counting(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(paths_module, name, counting)
    return calls


def test_match_any_validates_the_path_once_whatever_the_number_of_patterns(monkeypatch) -> None:
    calls = _count_calls(monkeypatch, "canonical_path")
    for count in (1, 50, 100):
        patterns = [f"src/mod{i}/**" for i in range(count)]
        for casefold in (False, True):
            calls[0] = 0
            assert match_any(patterns, "lib/x.py", casefold=casefold) is None
            assert calls[0] == 1


def test_match_any_validates_each_pattern_once_per_process(monkeypatch) -> None:
    calls = _count_calls(monkeypatch, "validate_pattern")
    patterns = [f"linear-once-{i}/**" for i in range(20)]
    for path in (f"lib/{i}.py" for i in range(200)):
        assert match_any(patterns, path) is None
        assert match_any(patterns, path, casefold=True) is None
    assert calls[0] == len(patterns)


def test_match_any_still_rejects_a_bad_path_and_a_bad_pattern() -> None:
    with pytest.raises(PathRejected) as bad_path:
        match_any(["src/**"], "src/../x")
    assert bad_path.value.code == "PATH_DOTDOT"
    with pytest.raises(PathRejected) as bad_pattern:
        match_any(["src/**x"], "src/a")
    assert bad_pattern.value.code == "PATTERN_BAD_DOUBLESTAR"
    with pytest.raises(PathRejected):
        match_any(["ok/**", "src/**x"], "src/a")
    assert match_any([], "src/../x") is None  # no pattern: nothing matches


def test_match_any_agrees_with_glob_match_on_every_pair() -> None:
    patterns = ["src/**", "*.MD", "docs/*/x?.py", "ß/**", "Straße/*", "**/SS"]
    paths = ["src/a.py", "README.md", "docs/a/x1.py", "SS/x", "strasse/y", "a/b/ss", "q"]
    for casefold in (False, True):
        for path in paths:
            expected = next((p for p in patterns if glob_match(p, path, casefold=casefold)), None)
            assert match_any(patterns, path, casefold=casefold) == expected


def test_matching_work_doubles_at_most_when_paths_or_patterns_double() -> None:
    def work(n_paths: int, n_patterns: int) -> int:
        counter = [0]
        patterns = [f"src/mod{i}/**/*.py" for i in range(n_patterns)]
        for i in range(n_paths):
            match_any(patterns, f"src/mod{i % 7}/f{i}.py", casefold=bool(i % 2), counter=counter)
        return counter[0]

    base = work(100, 10)
    assert base > 0
    assert work(200, 10) <= 2 * base
    assert work(100, 20) <= 2 * base


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.lists(_SEGMENT_PATTERNS, min_size=1, max_size=4).map("/".join), max_size=5),
    st.lists(_SEGMENTS, min_size=1, max_size=5).map("/".join),
    st.booleans(),
)
def test_match_any_is_the_first_pattern_glob_match_accepts(patterns, path, casefold) -> None:
    expected = next((p for p in patterns if glob_match(p, path, casefold=casefold)), None)
    assert match_any(patterns, path, casefold=casefold) == expected


def test_a_path_meets_only_the_wildcard_parts_whose_literal_tail_it_holds() -> None:
    from plangate.paths import PatternSet

    patterns = (*(f"**/name{i}/**" for i in range(500)), "**/*.pem", "src/**", "**/x?")
    compiled = PatternSet(patterns)
    assert compiled.first("lib/app.py") is None
    # '*.pem' is compared only with a segment ending in '.pem'; 'x?' (no literal tail,
    # the head 'x') only with one starting with 'x': no other segment is compared.
    assert compiled.comparisons == 0
    assert compiled.first("lib/key.pem") == "**/*.pem"
    assert compiled.comparisons == 1
    assert compiled.first("src/a/name7/b") == "**/name7/**"
    assert compiled.first("a/name499/b") == "**/name499/**"
    assert compiled.first("a/name499") is None  # a trailing '**' needs a segment
    assert compiled.first("a/xy") == "**/x?"


def _work_for(pattern_count: int) -> int:
    """Wildcard parts compared while 900 paths meet a set with ``pattern_count`` patterns
    that have no literal segment: each its own extension, or its own inner word."""
    from plangate.paths import PatternSet

    compiled = PatternSet(
        ["src/**", *(f"**/*.ext{i}" for i in range(pattern_count)),
         *(f"**/*secret{i}*" for i in range(pattern_count)), "**/id_rsa*"],
        casefold=True,
    )
    for i in range(300):
        assert compiled.first(f"lib/pkg{i % 7}/m{i}.py") is None
        assert compiled.first(f"keys/k{i}.ext{i % 3}") == f"**/*.ext{i % 3}"
        assert compiled.first(f"conf/a-secret{i % 5}-{i}") == f"**/*secret{i % 5}*"
    return compiled.comparisons


def test_matching_work_does_not_grow_with_patterns_without_a_literal_segment() -> None:
    # 'keys/kN.extM' is compared with the one part whose tail it carries ('*.extM'),
    # 'conf/a-secretM-N' with the one whose inner word it holds ('*secretM*'): ten times
    # more such patterns give the same comparisons, not ten times more.
    assert _work_for(20) == _work_for(200) == 600
