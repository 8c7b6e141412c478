"""Canonical repository-relative paths and the one glob matcher (DECISIONS 11).

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
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from typing import NamedTuple

from plangate.errors import InputRejected


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


def _segment_regex(segment: str) -> str:
    if segment == "*":
        return "[^/]+"
    out = []
    for ch in segment:
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(ch))
    return "".join(out)


@lru_cache(maxsize=4096)
def _compile(pattern: str, casefold: bool) -> re.Pattern[str]:
    segments = pattern.split("/")
    parts: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            if index == last:
                # Trailing '**': one or more whole segments.
                parts.append("[^/]+(?:/[^/]+)*")
            else:
                # Zero or more whole segments, each followed by '/'.
                parts.append("(?:[^/]+/)*")
            continue
        parts.append(_segment_regex(segment))
        if index != last:
            parts.append("/")
    flags = re.IGNORECASE if casefold else 0
    return re.compile("".join(parts), flags)


def glob_match(pattern: str, path: str, *, casefold: bool = False) -> bool:
    """True when canonical ``path`` matches ``pattern``; raises on bad input.

    ``casefold=True`` matches regardless of case; protected-surface checks use
    it so that ``claude.md`` on a case-insensitive file system is still caught.
    """
    validate_pattern(pattern)
    canonical_path(path)
    return _compile(pattern, casefold).fullmatch(path) is not None


def match_any(patterns: Iterable[str], path: str, *, casefold: bool = False) -> str | None:
    """First pattern of ``patterns`` that matches ``path``, or None."""
    for pattern in patterns:
        if glob_match(pattern, path, casefold=casefold):
            return pattern
    return None


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
