"""Canonical repository-relative paths and the one glob matcher.

A *canonical path* is a repository-relative POSIX path such as ``src/a.py``.
Anything else is rejected before matching and never silently normalised into a
match: empty, absolute, ``..`` or ``.`` segments (so ``./a``), empty segments
(``a//b``, trailing ``/``), backslashes, control characters, segments with
leading or trailing whitespace, and text that is not in Unicode NFC form.

Glob syntax (the same everywhere: arbiter, LoopSpec scope, delivery, hooks,
policy gate):

- ``*`` matches any characters within one path segment (at least one when it
  is the whole segment);
- ``?`` matches exactly one character within a segment;
- ``**`` as a whole segment matches zero or more whole segments; a trailing
  ``**`` must match at least one segment (``dir/**`` matches ``dir/x`` but not
  ``dir``);
- every other character is literal; matching is anchored to the whole path.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache

from plangate.errors import InputRejected
from plangate.records import NamedTuple


class PathRejected(InputRejected):
    """A path or glob pattern is not canonical."""


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def _check_common(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise PathRejected("PATH_NOT_STRING", f"{what} must be a string", "give a path string")
    if text == "":
        raise PathRejected("PATH_EMPTY", f"{what} is empty", "give a repository-relative path")
    if _CONTROL_RE.search(text):
        raise PathRejected(
            "PATH_CONTROL_CHAR", f"{what} {text!r} contains a control character", "rename the path"
        )
    if "\\" in text:
        raise PathRejected(
            "PATH_BACKSLASH",
            f"{what} {text!r} contains a backslash",
            "use forward slashes: paths are POSIX and repository-relative",
        )
    if text.startswith("/"):
        raise PathRejected(
            "PATH_ABSOLUTE",
            f"{what} {text!r} is absolute",
            "give the path relative to the repository root",
        )
    if unicodedata.normalize("NFC", text) != text:
        raise PathRejected(
            "PATH_NOT_NFC",
            f"{what} {text!r} is not in Unicode NFC form",
            "rename the path using composed (NFC) characters",
        )
    segments = text.split("/")
    for segment in segments:
        if segment == "":
            raise PathRejected(
                "PATH_EMPTY_SEGMENT",
                f"{what} {text!r} has an empty segment ('//' or a trailing '/')",
                "remove the doubled or trailing slash",
            )
        if segment == "..":
            raise PathRejected(
                "PATH_DOTDOT", f"{what} {text!r} contains a '..' segment", "give the direct path"
            )
        if segment == ".":
            raise PathRejected(
                "PATH_DOT", f"{what} {text!r} contains a '.' segment", "drop the './' segments"
            )
        if segment != segment.strip():
            raise PathRejected(
                "PATH_WHITESPACE",
                f"{what} {text!r} has a segment with leading or trailing whitespace",
                "rename the path or fix the quoting",
            )
    return text


def canonical_path(text: object) -> str:
    """Return ``text`` if it is a canonical repository-relative path, else raise.

    Glob metacharacters ``*`` and ``?`` are refused in paths: a path names one
    file, a pattern names a set.
    """
    path = _check_common(text, "path")
    if "*" in path or "?" in path:
        raise PathRejected(
            "PATH_HAS_WILDCARD", f"path {path!r} contains a glob character", "give a concrete path"
        )
    return path


def is_canonical_path(text: object) -> bool:
    """True when :func:`canonical_path` would accept ``text``."""
    try:
        canonical_path(text)
    except PathRejected:
        return False
    return True


def validate_pattern(text: object) -> str:
    """Return ``text`` if it is a well-formed glob pattern, else raise."""
    pattern = _check_common(text, "pattern")
    for segment in pattern.split("/"):
        if "**" in segment and segment != "**":
            raise PathRejected(
                "PATTERN_BAD_DOUBLESTAR",
                f"pattern {pattern!r}: '**' must be a whole segment",
                "write 'dir/**/x' or 'dir/*x', not 'dir/**x'",
            )
    return pattern


# -- the glob matcher ------------------------------------------------------------------
#
# Linear work on untrusted text: patterns and paths come from repositories and
# payloads, so the matcher never backtracks. A pattern is compiled once into its
# segments; a path is matched segment by segment while a set of pattern
# positions is carried along (an NFA simulation), so the work is at most
# (pattern segments) x (path segments) segment comparisons. Inside one segment
# '*' and '?' are matched with the two-pointer wildcard algorithm, whose work is
# bounded by (pattern segment length) x (path segment length) and in practice
# linear. A trailing '**' is "one more segment, then any number".

_ANY_ONE = "\x00any-one"  # internal marker: exactly one (non-empty) segment
_ANY_MANY = "**"  # zero or more whole segments

MatchCounter = list[int]
"""A one-element list the matcher adds its segment comparisons to (tests count work)."""


class _Compiled(NamedTuple):
    parts: tuple[str, ...]
    # closures[i]: the positions reachable from i by letting each '**' match zero
    # segments (computed once per pattern).
    closures: tuple[frozenset[int], ...]
    has_doublestar: bool
    # The first segment when it is literal (no '*', '?', '**'): a path whose first
    # segment differs cannot match (exact comparison only).
    first_literal: str | None
    # For '**' followed only by literal segments ('**/CLAUDE.md'): those segments. Such
    # a pattern matches exactly the paths that end with them.
    literal_suffix: tuple[str, ...] | None
    # The literal segments of a pattern with '**' (no '*' or '?' in them): each consumes
    # exactly one path segment equal to it, so a path lacking one cannot match.
    required: frozenset[str]


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> _Compiled:
    segments = pattern.split("/")
    if segments[-1] == _ANY_MANY:
        segments = [*segments[:-1], _ANY_ONE, _ANY_MANY]
    parts = tuple(segments)
    closures: list[frozenset[int]] = []
    for start in range(len(parts) + 1):
        position = start
        reach = {position}
        while position < len(parts) and parts[position] == _ANY_MANY:
            position += 1
            reach.add(position)
        closures.append(frozenset(reach))
    literal, required = _literal_keys(parts)
    suffix = None
    if parts[0] == _ANY_MANY and len(parts) > 1 and all(
        "*" not in part and "?" not in part and part != _ANY_ONE for part in parts[1:]
    ):
        suffix = parts[1:]
    return _Compiled(parts, tuple(closures), _ANY_MANY in parts, literal, suffix, required)


def _literal_keys(parts: Sequence[str]) -> tuple[str | None, frozenset[str]]:
    """The first segment when literal (else None), and every literal segment: what a
    path must hold for the pattern of ``parts`` to match it (exact comparison)."""
    first = parts[0]
    literal = None if "*" in first or "?" in first or first == _ANY_ONE else first
    required = frozenset(
        part for part in parts
        if part not in (_ANY_MANY, _ANY_ONE) and "*" not in part and "?" not in part
    )
    return literal, required


def _chars_equal(a: str, b: str, casefold: bool) -> bool:
    if a == b:
        return True
    if not casefold:
        return False
    # Over-matching is the safe side for case-insensitive (protected-surface)
    # checks: any of the usual case mappings making the two equal counts.
    return a.lower() == b.lower() or a.upper() == b.upper() or a.casefold() == b.casefold()


def _segment_match(pattern: str, segment: str, casefold: bool) -> bool:
    """``pattern`` ('*' and '?' inside one segment) against one path segment."""
    if pattern in ("*", _ANY_ONE):
        return segment != ""
    if "*" not in pattern and "?" not in pattern:
        if not casefold:
            return pattern == segment
        return len(pattern) == len(segment) and all(
            _chars_equal(a, b, True) for a, b in zip(pattern, segment, strict=True)
        )
    p = s = 0
    star = -1
    mark = 0
    while s < len(segment):
        if p < len(pattern) and (
            pattern[p] == "?"
            or (pattern[p] != "*" and _chars_equal(pattern[p], segment[s], casefold))
        ):
            p += 1
            s += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, s
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            s = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def _nfa_match(
    compiled: _Compiled, path: str, casefold: bool, counter: MatchCounter | None
) -> bool:
    return _nfa_match_segments(compiled, path.split("/"), casefold, counter)


def _nfa_match_segments(
    compiled: _Compiled, segments: list[str], casefold: bool, counter: MatchCounter | None
) -> bool:
    parts = compiled.parts
    suffix = compiled.literal_suffix
    if suffix is not None and not casefold:
        if counter is not None:
            counter[0] += len(suffix)
        width = len(suffix)
        return len(segments) >= width and tuple(segments[len(segments) - width :]) == suffix
    if not compiled.has_doublestar:
        # No '**': one pattern segment per path segment, in order.
        if len(segments) != len(parts):
            return False
        if counter is not None:
            counter[0] += len(segments)
        return all(
            _segment_match(part, segment, casefold)
            for part, segment in zip(parts, segments, strict=True)
        )
    if not casefold and not compiled.required.issubset(segments):
        # Exact comparison: a literal segment of the pattern is not in the path.
        return False
    closures = compiled.closures
    end = len(parts)
    states: frozenset[int] | set[int] = closures[0]
    for segment in segments:
        following: set[int] = set()
        for index in states:
            if index == end:
                continue
            part = parts[index]
            if counter is not None:
                counter[0] += 1
            if part == _ANY_MANY:
                following.update(closures[index])
            elif _segment_match(part, segment, casefold):
                following.update(closures[index + 1])
        if not following:
            return False
        states = following
    return end in states


def glob_match(
    pattern: str, path: str, *, casefold: bool = False, counter: MatchCounter | None = None
) -> bool:
    """True when canonical ``path`` matches ``pattern``; raises on bad input.

    ``casefold=True`` matches regardless of case; protected-surface checks use
    it so that ``claude.md`` on a case-insensitive file system is still caught.
    ``counter`` (a one-element list) receives the number of segment
    comparisons made, so tests can bound the work.
    """
    if isinstance(pattern, str):
        _validated_pattern(pattern)
    else:
        validate_pattern(pattern)  # raises: not a string
    canonical_path(path)
    if casefold and pattern.isascii() and path.isascii():
        # ASCII folds one way only: compare lower-cased text exactly (faster).
        return _nfa_match(_compile_lower(pattern), path.lower(), False, counter)
    return _nfa_match(_compile(pattern), path, casefold, counter)


@lru_cache(maxsize=4096)
def _compile_lower(pattern: str) -> _Compiled:
    # The lower-cased form of an ASCII pattern, compiled once per process.
    return _compile(pattern.lower())


@lru_cache(maxsize=4096)
def _validated_pattern(pattern: str) -> str:
    # Patterns repeat across every path they are matched against: validate once.
    return validate_pattern(pattern)


def match_any(
    patterns: Iterable[str],
    path: str,
    *,
    casefold: bool = False,
    counter: MatchCounter | None = None,
) -> str | None:
    """First pattern of ``patterns`` that matches ``path``, or None; raises on bad input.

    The path is validated once for all the patterns (each pattern once per
    process), so matching n paths against m patterns validates n paths, not
    n x m pairs. No pattern, no validation: the answer is None. ``counter`` is
    :func:`glob_match`'s.

    A tuple or list of patterns is compiled once per process into an index by
    first segment, so a path is compared only with the patterns that can match
    it: those whose first segment is the path's own (when literal) or a
    wildcard. The answer is the same as trying every pattern in order.
    """
    if (
        counter is None
        and isinstance(patterns, (tuple, list))
        and len(patterns) > 1  # one pattern: nothing to index (and no cache churn)
        and isinstance(path, str)
    ):
        try:
            indexed, found = _match_indexed(tuple(patterns), path, casefold)
        except TypeError:  # an unhashable pattern: refused below, in order
            indexed, found = False, None
        if indexed:
            return found
    return _match_each(patterns, path, casefold=casefold, counter=counter)


class _PatternIndex(NamedTuple):
    """A tuple of patterns compiled once for matching many paths against them.

    A path is compared only with the patterns that can match it, in their order:
    those whose first segment is the path's first segment (when literal), those
    keyed by a literal segment the path contains (a pattern such as ``**/.envrc``
    or ``**/approvals/**`` needs that segment somewhere in the path), and those
    with no literal segment at all.
    """

    # The patterns as compared (lower-cased for case-folded matching); each is compiled
    # (once per process) only when a path meets it.
    sources: tuple[str, ...]
    by_first: dict[str, tuple[int, ...]]
    # Patterns whose first segment is not literal, keyed by one literal segment each
    # must meet in the path (the longest: the rarest, as a rule).
    by_segment: dict[str, tuple[int, ...]]
    unkeyed: tuple[int, ...]


@lru_cache(maxsize=256)
def _pattern_index(patterns: tuple[str, ...], lower: bool) -> _PatternIndex | None:
    """The index of ``patterns``, lower-cased when ``lower``; None when ``lower`` and a
    pattern is not ASCII (such a pattern folds per character). Every pattern is
    validated first: an invalid one raises (and nothing is cached)."""
    for pattern in patterns:
        _validated_pattern(pattern)
    sources: list[str] = []
    by_first: dict[str, list[int]] = {}
    by_segment: dict[str, list[int]] = {}
    unkeyed: list[int] = []
    for position, pattern in enumerate(patterns):
        if lower and not pattern.isascii():
            return None
        source = pattern.lower() if lower else pattern
        sources.append(source)
        first_literal, required = _literal_keys(source.split("/"))
        if first_literal is not None:
            by_first.setdefault(first_literal, []).append(position)
        elif required:
            key = max(sorted(required), key=len)
            by_segment.setdefault(key, []).append(position)
        else:
            unkeyed.append(position)
    return _PatternIndex(
        tuple(sources),
        {key: tuple(hits) for key, hits in by_first.items()},
        {key: tuple(hits) for key, hits in by_segment.items()},
        tuple(unkeyed),
    )


def _candidates(index: _PatternIndex, segments: list[str]) -> tuple[int, ...] | list[int]:
    """The positions of the patterns that can match a path of ``segments``, in order."""
    found: list[tuple[int, ...]] = []
    first = index.by_first.get(segments[0])
    if first:
        found.append(first)
    if index.by_segment:
        for segment in segments:
            keyed = index.by_segment.get(segment)
            if keyed:
                found.append(keyed)
    if index.unkeyed:
        found.append(index.unkeyed)
    if not found:
        return ()
    if len(found) == 1:
        return found[0]
    return sorted({position for positions in found for position in positions})


def _match_indexed(
    patterns: tuple[str, ...], path: str, casefold: bool
) -> tuple[bool, str | None]:
    """``(True, answer)`` through the index, or ``(False, None)`` when the patterns or the
    path need per-character case folding (then every pattern is tried in order)."""
    if casefold and not path.isascii():
        return False, None
    try:
        index = _pattern_index(patterns, casefold)
    except PathRejected:
        _validate_all(patterns, path)  # raises, in the documented order
        raise
    if index is None:
        return False, None
    return True, _first_indexed(index, patterns, path, casefold)


def _first_indexed(
    index: _PatternIndex, patterns: tuple[str, ...], path: str, casefold: bool
) -> str | None:
    """The first of ``patterns`` (compiled as ``index``) matching ``path``; raises when the
    path is not canonical. With ``casefold`` the path is ASCII (the caller checked)."""
    canonical_path(path)
    if casefold:
        path = path.lower()  # ASCII folds one way only: compare lower-cased text exactly
    segments = path.split("/")
    sources = index.sources
    for position in _candidates(index, segments):
        if _nfa_match_segments(_compile(sources[position]), segments, False, None):
            return patterns[position]
    return None


def first_match_of(
    patterns: Iterable[str], *, casefold: bool = False
) -> Callable[[str], str | None]:
    """A function giving :func:`match_any` ``(patterns, path, casefold=casefold)`` for any
    ``path``, the same answer and the same errors, with the pattern work done once.

    For matching many paths against one set of patterns (a pull request's
    changed files against the protected surfaces): no per-path copy, hash or
    lookup of the pattern tuple. A path the index cannot take (not a string, or
    not ASCII when case-folding) and patterns that do not validate go through
    :func:`match_any` itself, which answers or raises in its documented order.
    """
    items = tuple(patterns)

    def each(path: str) -> str | None:
        return match_any(items, path, casefold=casefold)

    if len(items) <= 1:
        return each
    try:
        index = _pattern_index(items, casefold)
    except (PathRejected, TypeError):
        return each
    if index is None:
        return each

    def indexed(path: str) -> str | None:
        if type(path) is not str or (casefold and not path.isascii()):
            return each(path)
        return _first_indexed(index, items, path, casefold)

    return indexed


def _match_each(
    patterns: Iterable[str],
    path: str,
    *,
    casefold: bool,
    counter: MatchCounter | None,
) -> str | None:
    """:func:`match_any` trying every pattern in order (any iterable, work counted)."""
    items = list(patterns)
    if not items:
        return None
    _validate_all(items, path)
    ascii_fold = casefold and path.isascii()
    segments = (path.lower() if ascii_fold else path).split("/")
    for pattern in items:
        if ascii_fold and pattern.isascii():
            # ASCII folds one way only: compare lower-cased text exactly (faster).
            compiled = _compile_lower(pattern)
        elif casefold:
            if _nfa_match(_compile(pattern), path, True, counter):
                return pattern
            continue
        else:
            compiled = _compile(pattern)
        if compiled.first_literal is not None and compiled.first_literal != segments[0]:
            continue  # exact comparison: the first segment already differs
        if _nfa_match_segments(compiled, segments, False, counter):
            return pattern
    return None


def _validate_all(patterns: Sequence[object], path: str) -> None:
    """Every pattern and the path, in this order: the first pattern, the path, the rest.
    An invalid pattern is refused wherever it stands, even after one that matches."""
    for position, pattern in enumerate(patterns):
        if isinstance(pattern, str):
            _validated_pattern(pattern)
        else:
            validate_pattern(pattern)  # raises: not a string
        if position == 0:
            canonical_path(path)


def _segment_chars_overlap(a: str, b: str) -> bool:
    @cache
    def overlap(i: int, j: int) -> bool:
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == "*":
            if overlap(i + 1, j):
                return True
            return j < len(b) and overlap(i, j + 1)
        if j < len(b) and b[j] == "*":
            return overlap(i, j + 1) or (i < len(a) and overlap(i + 1, j))
        if i == len(a) or j == len(b):
            return False
        if a[i] == "?" or b[j] == "?" or a[i] == b[j]:
            return overlap(i + 1, j + 1)
        return False

    return overlap(0, 0)


def _fold_char(ch: str) -> str:
    folded = ch.casefold()
    if len(folded) == 1:
        return folded
    lowered = ch.lower()
    return lowered if len(lowered) == 1 else ch


def _fold_per_char(text: str) -> str:
    # Fold one character to one character. A whole-string casefold() can change
    # the length ('ß' -> 'ss'), after which '?' no longer lines up with the
    # character it matched, and the overlap test would under-report.
    return "".join(_fold_char(ch) for ch in text)


def patterns_overlap(a: str, b: str, *, casefold: bool = True) -> bool:
    """Conservative test: can some canonical path match both patterns?

    Used to intersect a declared scope with protected surfaces. It never
    under-reports: when unsure it answers True. Case is folded by default.
    """
    validate_pattern(a)
    validate_pattern(b)
    if casefold:
        a, b = _fold_per_char(a), _fold_per_char(b)
    sa, sb = tuple(a.split("/")), tuple(b.split("/"))

    @cache
    def overlap(i: int, j: int) -> bool:
        if i == len(sa) and j == len(sb):
            return True
        if i < len(sa) and sa[i] == "**":
            if overlap(i + 1, j):
                return True
            return j < len(sb) and overlap(i, j + 1)
        if j < len(sb) and sb[j] == "**":
            return overlap(i, j + 1) or (i < len(sa) and overlap(i + 1, j))
        if i == len(sa) or j == len(sb):
            return False
        return _segment_chars_overlap(sa[i], sb[j]) and overlap(i + 1, j + 1)

    return overlap(0, 0)


class PathMatch(NamedTuple):
    """Which pattern matched which path."""

    path: str
    pattern: str


def paths_outside(allowed: Sequence[str], paths: Iterable[str]) -> list[str]:
    """Paths that match none of ``allowed`` (case-sensitive, so never over-allowing).

    An empty ``allowed`` list allows nothing: every path is outside.
    """
    return [p for p in paths if match_any(allowed, p) is None]
