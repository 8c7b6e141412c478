"""The compiled pattern set against the pattern-by-pattern matcher (a differential test).

:class:`plangate.paths.PatternSet` runs every pattern of a set as one automaton over
path segments, built lazily and remembered across paths. Its answer for a path must
be exactly the first pattern, in order, that :func:`plangate.paths.glob_match`
accepts, with and without case folding, for ASCII and non-ASCII text, for one path or
for many paths meeting the same (remembered) automaton, and with its memory bounds
forcing it to start afresh. Each property counts the branches it claims to cover.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate import paths as paths_module
from plangate.paths import (
    PathRejected,
    PatternSet,
    canonical_path,
    first_match_of,
    glob_match,
    match_any,
)
from support.branches import Branches

# Few letters, so that generated paths and patterns meet; '\u017f' folds to an ASCII
# letter, '\u00df' and '\u0130' fold to two characters (all of them stay NFC).
ASCII = "abAB.-_"
LETTERS = ASCII + "\u00df\u00e9\u0130\u017f"


def _segment(alphabet: str) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=1, max_size=4).filter(
        lambda s: s not in (".", "..") and s.strip() == s
    )


def _wild_segment(alphabet: str) -> st.SearchStrategy[str]:
    # '*.b', 'a*', 'a?b', '*a*', '?': literal tails, literal heads, neither.
    return st.text(alphabet=alphabet + "*?", min_size=1, max_size=4).filter(
        lambda s: "**" not in s and s not in (".", "..") and ("*" in s or "?" in s)
    )


def _pattern(alphabet: str) -> st.SearchStrategy[str]:
    part = st.one_of(_segment(alphabet), _wild_segment(alphabet), st.just("*"), st.just("**"))
    return st.lists(part, min_size=1, max_size=4).map("/".join)


def _path(alphabet: str) -> st.SearchStrategy[str]:
    return st.lists(_segment(alphabet), min_size=1, max_size=5).map("/".join)


def _nfc(text: str) -> bool:
    return unicodedata.normalize("NFC", text) == text


def _generalised(data: st.DataObject, path: str) -> str:
    """A pattern that matches ``path``: some of its segments made wildcards."""
    out: list[str] = []
    for seg in path.split("/"):
        choice = data.draw(st.sampled_from(["keep", "star", "tail", "head", "qmark", "dstar"]))
        if choice == "star":
            out.append("*")
        elif choice == "tail":
            out.append("*" + seg[-1:])
        elif choice == "head":
            out.append(seg[:1] + "*")
        elif choice == "qmark":
            out.append("?" + seg[1:])
        elif choice == "dstar" and (not out or out[-1] != "**"):
            out.append("**")
        else:
            out.append(seg)
    return "/".join(out)


def _case_changed(data: st.DataObject, pattern: str) -> str:
    return data.draw(st.sampled_from([pattern, pattern.upper(), pattern.lower()]))


def _expected(patterns: list[str], path: str, casefold: bool) -> str | None:
    """The reference: every pattern tried in order with glob_match."""
    return next((p for p in patterns if glob_match(p, path, casefold=casefold)), None)


def _expected_in_prefixes(patterns: list[str], path: str, casefold: bool) -> str | None:
    """The reference for a path or a directory above it: the longest prefix first."""
    parts = path.split("/")
    for end in range(len(parts), 0, -1):
        hit = _expected(patterns, "/".join(parts[:end]), casefold)
        if hit is not None:
            return hit
    return None


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[str], list[str], bool]:
    alphabet = draw(st.sampled_from([LETTERS, ASCII, LETTERS]))
    paths = draw(st.lists(_path(alphabet), min_size=1, max_size=6))
    data = draw(st.data())
    patterns = draw(st.lists(_pattern(alphabet), max_size=8))
    for path in paths[: draw(st.integers(min_value=0, max_value=3))]:
        # Patterns built from the paths (in any case), placed anywhere: matches occur,
        # and more than one pattern can match a path (the order decides).
        spot = draw(st.integers(min_value=0, max_value=len(patterns)))
        patterns.insert(spot, _case_changed(data, _generalised(data, path)))
    if alphabet == LETTERS:
        # Text that folds character by character, in the patterns and in the paths.
        spot = draw(st.integers(min_value=0, max_value=len(patterns)))
        patterns.insert(spot, draw(st.sampled_from(FOLDING_PATTERNS)))
        paths.append(draw(st.sampled_from(FOLDING_PATHS)))
    # Paths under the generated ones: a directory above them is matched more often.
    paths += [f"{p}/{draw(_segment(alphabet))}" for p in paths[:2]]
    return patterns, paths, draw(st.booleans())


FOLDING_PATTERNS = ("\u017f*", "*\u0130", "\u00df/**", "**/\u00e9?", "A/\u017f", "**/*s")
FOLDING_PATHS = ("s/a", "STRASSE/k", "\u00df/x", "a/\u00e9b", "A/S", "b/\u0130")


def _assume_nfc(patterns: list[str], paths: list[str]) -> bool:
    return all(_nfc(text) for text in (*patterns, *paths))


def _check_set(compiled: PatternSet, patterns: list[str], paths: list[str], casefold: bool,
               seen: Branches) -> None:
    """Every path against the set and the reference; each branch counted once per example."""
    reached: set[str] = set()
    assert compiled.matching_canonical([canonical_path(p) for p in paths]) == [
        p for p in paths if _expected(patterns, p, casefold) is not None]
    for path in paths:
        expected = _expected(patterns, path, casefold)
        assert compiled.first(path) == expected, (patterns, path, casefold)
        assert compiled.first_canonical(canonical_path(path)) == expected
        assert compiled.first_in_prefixes(canonical_path(path)) == _expected_in_prefixes(
            patterns, path, casefold
        )
        found = {
            "a pattern matches": expected is not None,
            "no pattern matches": expected is None,
            "a later pattern also matches": expected is not None
            and sum(glob_match(p, path, casefold=casefold) for p in patterns) > 1,
            "folding a path that is not ASCII": casefold and not path.isascii(),
            "only a directory above the path matches": expected is None
            and _expected_in_prefixes(patterns, path, casefold) is not None,
        }
        reached.update(name for name, hit in found.items() if hit)
    for name in PATH_BRANCHES:
        seen.reached(name, name in reached)


PATH_BRANCHES = ("a pattern matches", "no pattern matches", "a later pattern also matches",
                 "folding a path that is not ASCII", "only a directory above the path matches")


def test_a_pattern_set_answers_the_first_pattern_in_order() -> None:
    seen = Branches()

    @settings(max_examples=500, deadline=None)
    @given(_cases())
    def check(case: tuple[list[str], list[str], bool]) -> None:
        patterns, paths, casefold = case
        if not _assume_nfc(patterns, paths):
            return
        seen.example()
        compiled = PatternSet(patterns, casefold=casefold)
        # The same set meets every path twice: the second time through remembered steps.
        _check_set(compiled, patterns, paths + paths, casefold, seen)
        seen.reached(
            "a wildcard part was compared",
            compiled.comparisons > 0,
        )
        seen.reached(
            "a pattern that is not ASCII, folded",
            casefold and any(not p.isascii() for p in patterns),
        )

    check()
    for branch in (*PATH_BRANCHES, "a wildcard part was compared",
                   "a pattern that is not ASCII, folded"):
        seen.assert_share(branch)


def test_a_pattern_set_with_tiny_memory_bounds_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Bounds of a few nodes and steps make the automaton forget and start afresh while
    # paths are being matched; the answers must not change.
    monkeypatch.setattr(paths_module, "_NODE_LIMIT", 3)
    monkeypatch.setattr(paths_module, "_STEP_MEMO_LIMIT", 2)
    seen = Branches()

    @settings(max_examples=200, deadline=None)
    @given(_cases())
    def check(case: tuple[list[str], list[str], bool]) -> None:
        patterns, paths, casefold = case
        if not _assume_nfc(patterns, paths):
            return
        seen.example()
        compiled = PatternSet(patterns, casefold=casefold)
        _check_set(compiled, patterns, paths + paths, casefold, seen)
        seen.reached("the automaton started afresh",
                     len(compiled._automaton.nodes) < 3 and len(patterns) > 1
                     and len(paths) > 2)

    check()
    seen.assert_share("a pattern matches")
    seen.assert_share("the automaton started afresh")


def test_match_any_and_a_prepared_matcher_refuse_as_before() -> None:
    seen = Branches()

    @settings(max_examples=300, deadline=None)
    @given(
        st.lists(_pattern(LETTERS), min_size=2, max_size=6),
        st.one_of(_path(LETTERS), st.text(alphabet=LETTERS + "/.*?\\ \t", max_size=8)),
        st.booleans(),
    )
    def check(patterns: list[str], path: str, casefold: bool) -> None:
        if not _assume_nfc(patterns, []):
            return
        seen.example()
        try:
            expected: object = _expected(patterns, canonical_path(path), casefold)
        except PathRejected as exc:
            expected = exc.code
        seen.reached("the path is refused", isinstance(expected, str)
                     and expected.startswith("PATH_"))
        for matcher in (lambda p: match_any(patterns, p, casefold=casefold),
                        first_match_of(patterns, casefold=casefold),
                        PatternSet(patterns, casefold=casefold).first):
            try:
                got: object = matcher(path)
            except PathRejected as exc:
                got = exc.code
            assert got == expected

    check()
    seen.assert_share("the path is refused")


# -- a list of paths validated at once -------------------------------------------------

AWKWARD = (
    "", ".", "..", "a/.", "./a", "a/../b", "a//b", "a/", "/a", "a\\b", "a*b", "a?", " a", "a ",
    "a/ b", "a b", "a\tb", "a\nb", "a\x00b", "a\x7f", "e\u0301", "\u00e9", "a\u2028b",
    "a\x85", "\u3000a", "...", ".a/..b", "a/.b", "\u0301a", "a/..", "../a", "a\r",
)
_AWKWARD = st.sampled_from(AWKWARD)


def _each(texts: list[object]) -> tuple[list[object], list[tuple[object, str]]]:
    valid: list[object] = []
    rejected: list[tuple[object, str]] = []
    for text in texts:
        try:
            valid.append(canonical_path(text))
        except PathRejected as exc:
            rejected.append((text, exc.code))
    return valid, rejected


@pytest.mark.parametrize("awkward", AWKWARD)
@pytest.mark.parametrize("where", [0, 1, 2])
def test_one_awkward_path_among_plain_ones_is_validated_as_alone(awkward: str, where: int) -> None:
    from plangate.paths import canonical_paths

    texts: list[object] = ["src/a.py", ".github/x.yml"]
    texts.insert(where, awkward)
    assert canonical_paths(texts) == _each(texts)
    assert canonical_paths([awkward]) == _each([awkward])


def test_a_list_of_paths_is_validated_as_each_path_alone() -> None:
    from plangate.paths import canonical_paths

    seen = Branches()

    @settings(max_examples=500, deadline=None)
    @given(st.lists(st.one_of(_path(LETTERS), _path(ASCII), _AWKWARD,
                              st.text(alphabet=LETTERS + "/. \t\n*", max_size=6)),
                    max_size=6))
    def check(texts: list[str]) -> None:
        seen.example()
        expected_valid, expected_rejected = _each(list(texts))
        valid, rejected = canonical_paths(texts)
        assert valid == expected_valid
        assert rejected == expected_rejected
        seen.reached("every path is canonical", bool(texts) and not expected_rejected)
        seen.reached("a path is refused", bool(expected_rejected))

    check()
    seen.assert_share("every path is canonical")
    seen.assert_share("a path is refused")


# -- the scope and the surfaces over validated paths -----------------------------------


def test_a_scope_and_the_surfaces_answer_validated_paths_as_any_path() -> None:
    from plangate.plan.scope import TaskScope
    from plangate.surfaces import ProtectedPattern, ResolvedSurfaces

    seen = Branches()

    @settings(max_examples=300, deadline=None)
    @given(_cases(), st.data())
    def check(case: tuple[list[str], list[str], bool], data: st.DataObject) -> None:
        patterns, paths, _casefold = case
        if not _assume_nfc(patterns, paths) or not patterns:
            return
        seen.example()
        cut = data.draw(st.integers(min_value=0, max_value=len(patterns)))
        scope = TaskScope(tuple(patterns[:cut]) or None, None, tuple(patterns[cut:]))
        entries = tuple(ProtectedPattern(p, "human-owned", "r")
                        for p in dict.fromkeys(patterns))
        surfaces = ResolvedSurfaces("explicit", "x", None, entries)
        protect = surfaces.canonical_protector()
        assert surfaces.protected_among([canonical_path(p) for p in paths]) == [
            p for p in paths if surfaces.protecting(p) is not None]
        reached: set[str] = set()
        for path in paths:
            valid = canonical_path(path)
            allowed = scope.allows(path)
            assert scope.allows_canonical(valid) is allowed
            assert scope.denies_canonical(valid) == scope.denies(path)
            assert protect(valid) == surfaces.protecting(path) == surfaces.match(path)
            if allowed:
                reached.add("allowed")
            if scope.denies(path) is not None:
                reached.add("denied")
            if surfaces.protecting(path) is not None:
                reached.add("protected")
        for name in ("allowed", "denied", "protected"):
            seen.reached(name, name in reached)

    check()
    for name in ("allowed", "denied", "protected"):
        seen.assert_share(name)
