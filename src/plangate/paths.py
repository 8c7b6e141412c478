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

import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache
from typing import NewType, cast

from plangate.errors import InputRejected
from plangate.records import NamedTuple


class PathRejected(InputRejected):
    """A path or glob pattern is not canonical."""


CanonicalPath = NewType("CanonicalPath", str)
"""A path :func:`canonical_path` accepted: matched as it is, never checked again."""


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


def canonical_path(text: object) -> CanonicalPath:
    """Return ``text`` if it is a canonical repository-relative path, else raise.

    Glob metacharacters ``*`` and ``?`` are refused in paths: a path names one
    file, a pattern names a set.
    """
    path = _check_common(text, "path")
    if "*" in path or "?" in path:
        raise PathRejected(
            "PATH_HAS_WILDCARD", f"path {path!r} contains a glob character", "give a concrete path"
        )
    return CanonicalPath(path)


# What can make a path of a list not canonical, searched once over the list joined by
# newlines (each a single scan in C): a control character (the newline aside: counted),
# a backslash or a wildcard; a '.' or '..' segment; whitespace other than the newline
# anywhere (a path with a space is then checked on its own, with the rest). Compiled on
# first use: a hook process, which validates one path, never compiles them.
@cache
def _bulk_checks() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    return (re.compile(r"[\x00-\x09\x0b-\x1f\x7f\\*?]"),
            re.compile(r"[\n/]\.\.?(?:[\n/]|\Z)"),
            re.compile(r"[^\S\n]"))


def canonical_paths(
    texts: Sequence[object],
) -> tuple[list[CanonicalPath], list[tuple[object, str]]]:
    """The canonical paths of ``texts`` and the others with the code of their problem, each
    list in the order given: :func:`canonical_path` for every text, validated once.

    A list in which nothing can be wrong (the usual diff) is checked in a few scans of
    the whole list; otherwise every text is checked on its own, so the answers and the
    codes are always :func:`canonical_path`'s.
    """
    plain = _plainly_canonical(texts)
    if plain is not None:
        return cast("list[CanonicalPath]", plain), []
    valid: list[CanonicalPath] = []
    rejected: list[tuple[object, str]] = []
    for text in texts:
        try:
            valid.append(canonical_path(text))
        except PathRejected as exc:
            rejected.append((text, exc.code))
    return valid, rejected


def _plainly_canonical(texts: Sequence[object]) -> list[str] | None:
    """``texts`` when every one is a canonical path, else None (check them one by one)."""
    strings = [text for text in texts if isinstance(text, str)]
    if not strings or len(strings) != len(texts):
        return None
    joined = "\n".join(strings)
    bad_char, dot_segment, space = _bulk_checks()
    if (
        not joined
        or joined.count("\n") != len(strings) - 1  # a newline inside a path
        or "\n\n" in joined or "//" in joined  # an empty path, an empty segment
        or "\n/" in joined or "/\n" in joined  # absolute, trailing '/'
        or joined.startswith("/") or joined.endswith("/") or joined.startswith("\n")
        or joined.endswith("\n")
        or bad_char.search(joined)
        # A '.' or '..' segment starts with a '.' at the start of a segment: only when one
        # does is the list scanned for them.
        or (("/." in joined or "\n." in joined or joined.startswith("."))
            and dot_segment.search("\n" + joined))
        # ASCII whitespace other than the space is a control character (found above).
        or (" " in joined if joined.isascii() else space.search(joined))
        or not unicodedata.is_normalized("NFC", joined)  # newlines compose with nothing
    ):
        return None
    return strings


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

    A tuple or list of patterns is compiled once per process into one
    :class:`PatternSet` (an automaton over path segments), so the work for a
    path does not grow with the number of patterns. The answer is the same as
    trying every pattern in order.
    """
    if (
        counter is None
        and isinstance(patterns, (tuple, list))
        and len(patterns) > 1  # one pattern: nothing to share (and no cache churn)
    ):
        compiled = compiled_patterns(patterns, casefold=casefold)
        if compiled is not None:
            return compiled.first(path)
    return _match_each(patterns, path, casefold=casefold, counter=counter)


def compiled_patterns(patterns: Iterable[str], *, casefold: bool = False) -> PatternSet | None:
    """The :class:`PatternSet` of ``patterns``, compiled once per process; None when a
    pattern does not validate (or is not hashable): :func:`match_any` then refuses it
    in its documented order."""
    try:
        return _pattern_set(tuple(patterns), casefold)
    except (PathRejected, TypeError):
        return None


@lru_cache(maxsize=256)
def _pattern_set(patterns: tuple[str, ...], casefold: bool) -> PatternSet:
    return PatternSet(patterns, casefold=casefold)


# -- one automaton for a set of patterns -------------------------------------------------
#
# Every pattern of a set is one chain of states over path segments (the positions of
# its compiled parts); the set's automaton runs all chains at once. A *node* is a set
# of those states, built the first time a path reaches it (subset construction, done
# lazily), and remembers where each segment it has seen leads: a directory shared by
# many paths is decided once. For a segment seen for the first time a node needs only
# (a) the states any segment advances ('**' and '*'), (b) one dictionary lookup for the
# literal parts, and (c) the wildcard parts ('*.pem', 'id_rsa*', '*key*', 'a?c') whose
# literal tail (else head, else longest inner run) the segment carries, found by
# dictionary lookups per distinct length; only those are compared character by
# character. The result is looked up again by which of (b) and (c) matched, so a file
# name seen once costs a handful of dictionary lookups however many patterns the set
# holds. Only wildcard parts without any literal character ('?', '*?') are compared
# with every segment.

_KIND_END, _KIND_MANY, _KIND_ANY, _KIND_LITERAL, _KIND_WILD = range(5)
_STEP_MEMO_LIMIT = 200_000  # remembered (node, segment) steps before they are forgotten
_NODE_LIMIT = 20_000  # nodes before the automaton starts afresh (bounded memory)


class _Node:
    """One set of automaton states, with what a segment does to it (built once)."""

    __slots__ = ("always", "by_key", "dead", "first", "heads", "inner", "inner_any", "literal",
                 "loose", "plain", "steps", "tails", "unmatched", "wild")

    def __init__(self, states: frozenset[int], chains: _Chains) -> None:
        kinds, parts, advance, owner = chains.kinds, chains.parts, chains.advance, chains.owner
        self.dead = not states
        ends = [owner[s] for s in states if kinds[s] == _KIND_END]
        self.first: int | None = min(ends) if ends else None
        self.steps: dict[str, _Node] = {}
        # Where a segment leads that is none of the literal parts, when there is no wildcard
        # part to compare it with (then every such segment leads to the same node).
        self.plain: _Node | None = None
        # Where a segment leads that is none of the literal parts and that no wildcard part
        # can match (see could_match), once one such segment was seen.
        self.unmatched: _Node | None = None
        self.by_key: dict[tuple[str | None, tuple[int, ...]], _Node] = {}
        always: set[int] = set()
        literal: dict[str, set[int]] = {}
        wild: dict[str, set[int]] = {}
        for state in states:
            kind = kinds[state]
            if kind == _KIND_MANY:
                always.update(chains.stay[state])
            elif kind == _KIND_ANY:
                always.update(advance[state])
            elif kind == _KIND_LITERAL:
                literal.setdefault(parts[state], set()).update(advance[state])
            elif kind == _KIND_WILD:
                wild.setdefault(parts[state], set()).update(advance[state])
        self.always = frozenset(always)
        self.literal = {part: frozenset(targets) for part, targets in literal.items()}
        self.wild = tuple((part, frozenset(targets)) for part, targets in sorted(wild.items()))
        # Wildcard parts by their literal tail (what follows the last '*' or '?': the
        # segment must end with it), else their literal head (it must start with it), else
        # their longest literal run (it must hold it); 'loose' have no literal character.
        tails: dict[int, dict[str, list[int]]] = {}
        heads: dict[int, dict[str, list[int]]] = {}
        inner: dict[int, dict[str, list[int]]] = {}
        self.loose: list[int] = []
        for number, (part, _targets) in enumerate(self.wild):
            tail, head = _literal_tail(part), _literal_head(part)
            run = max(part.replace("?", "*").split("*"), key=len)
            if tail:
                tails.setdefault(len(tail), {}).setdefault(tail, []).append(number)
            elif head:
                heads.setdefault(len(head), {}).setdefault(head, []).append(number)
            elif run:
                inner.setdefault(len(run), {}).setdefault(run, []).append(number)
            else:
                self.loose.append(number)
        # (length, runs of that length) pairs: a segment is sliced once per length.
        self.tails = tuple((-width, runs) for width, runs in tails.items())
        self.heads = tuple(heads.items())
        self.inner = tuple(inner.items())
        # Whether a segment holds any inner run at all, in one scan in C (most do not):
        # only then is it sliced at every offset to find which ones.
        self.inner_any = (
            re.compile("|".join(re.escape(run) for _w, runs in self.inner for run in runs)).search
            if self.inner else None
        )

    def could_match(self, segment: str) -> bool:
        """Whether :meth:`wild_matches` has any candidate for ``segment`` (exactly: a tail it
        ends with, a head it starts with, an inner run it holds, or a part with no literal
        character); False means no wildcard part of this node matches it."""
        if self.loose:
            return True
        for start, runs in self.tails:  # one slice per tail length, not one test per tail
            if segment[start:] in runs:
                return True
        for width, runs in self.heads:
            if segment[:width] in runs:
                return True
        return self.inner_any is not None and self.inner_any(segment) is not None

    def wild_matches(self, segment: str, chains: _Chains) -> tuple[int, ...]:
        """The wildcard parts of this node that match ``segment``, by number."""
        candidates: list[int] = []
        for start, runs in self.tails:
            hit = runs.get(segment[start:])
            if hit:
                candidates += hit
        for width, runs in self.heads:
            hit = runs.get(segment[:width])
            if hit:
                candidates += hit
        if self.inner_any is not None and self.inner_any(segment) is not None:
            for width, runs in self.inner:
                for start in range(len(segment) - width + 1):
                    hit = runs.get(segment[start:start + width])
                    if hit:
                        candidates += hit
        candidates += self.loose
        if not candidates:
            return ()
        unique = set(candidates)  # a run can occur more than once in a segment
        chains.comparisons += len(unique)
        wild = self.wild
        return tuple(sorted(n for n in unique if _segment_match(wild[n][0], segment, False)))


def _literal_tail(part: str) -> str:
    cut = max(part.rfind("*"), part.rfind("?"))
    return part[cut + 1:]


def _literal_head(part: str) -> str:
    stars = [i for i in (part.find("*"), part.find("?")) if i >= 0]
    return part[: min(stars)] if stars else part


class _Chains:
    """The states of every pattern of a set, numbered one after another.

    A pattern of n parts is n + 1 states (the last: matched). Built without
    :func:`_compile`: a hook process builds one set for its single path.
    """

    def __init__(self, entries: Sequence[tuple[int, str]]) -> None:
        kinds: list[int] = []
        parts: list[str] = []
        owner: list[int] = []  # the pattern's position in the set
        advance: list[tuple[int, ...]] = []  # where matching this state's part leads
        stay: list[tuple[int, ...]] = []  # for '**': itself and what follows it
        starts: list[int] = []
        for position, source in entries:
            pieces = source.split("/")
            if pieces[-1] == _ANY_MANY:
                pieces[-1:] = [_ANY_ONE, _ANY_MANY]
            base = len(kinds)
            # reach[i]: the states reachable from i by letting each '**' match nothing.
            reach: list[tuple[int, ...]] = [(base + len(pieces),)]
            for index in range(len(pieces) - 1, -1, -1):
                here = (base + index,)
                reach.append(here + reach[-1] if pieces[index] == _ANY_MANY else here)
            reach.reverse()
            starts += reach[0]
            for index, part in enumerate(pieces):
                kind = _part_kind(part)
                kinds.append(kind)
                parts.append(part)
                owner.append(position)
                advance.append(reach[index + 1])
                stay.append(reach[index] if kind == _KIND_MANY else ())
            kinds.append(_KIND_END)
            parts.append("")
            owner.append(position)
            advance.append(())
            stay.append(())
        self.kinds, self.parts, self.owner = kinds, parts, owner
        self.advance, self.stay = advance, stay
        self.starts = frozenset(starts)
        self.comparisons = 0  # wildcard parts compared with a segment (tests count work)


def _part_kind(part: str) -> int:
    if part == _ANY_MANY:
        return _KIND_MANY
    if part in ("*", _ANY_ONE):
        return _KIND_ANY  # any one segment (a canonical segment is never empty)
    if "*" in part or "?" in part:
        return _KIND_WILD
    return _KIND_LITERAL


class _Automaton:
    """The automaton of a set of patterns (exact comparison), built as paths meet it."""

    def __init__(self, entries: Sequence[tuple[int, str]]) -> None:
        self.chains = _Chains(entries)
        self._restart()

    def _restart(self) -> None:
        self.nodes: dict[frozenset[int], _Node] = {}
        # Where each directory seen so far leads ('lib/pkg3' -> its node): the paths of a
        # check share directories, so each directory is walked once.
        self.directories: dict[str, _Node] = {}
        self.remembered = 0
        self.root = self._node(self.chains.starts)

    def _node(self, states: frozenset[int]) -> _Node:
        node = self.nodes.get(states)
        if node is None:
            node = self.nodes[states] = _Node(states, self.chains)
        return node

    def _advance(self, node: _Node, segment: str) -> _Node:
        """The node ``segment`` leads to from ``node``, by what of it the segment matches."""
        literal = segment if segment in node.literal else None
        matched = node.wild_matches(segment, self.chains) if node.wild else ()
        key = (literal, matched)
        following = node.by_key.get(key)
        if following is None:
            if len(self.nodes) >= _NODE_LIMIT:
                self._restart()  # bounded memory; the answer does not depend on it
            targets = set(node.always)
            if literal is not None:
                targets.update(node.literal[literal])
            for number in matched:
                targets.update(node.wild[number][1])
            following = self._node(frozenset(targets))
            node.by_key[key] = following
            if not node.wild and literal is None:
                node.plain = following
        if literal is None and not matched:
            node.unmatched = following
        return following

    def step(self, node: _Node, segment: str) -> _Node:
        """The node ``segment`` leads to from ``node`` (remembered)."""
        following = node.steps.get(segment)
        if following is not None:
            return following
        following = self._advance(node, segment)
        if self.remembered >= _STEP_MEMO_LIMIT:
            for known in self.nodes.values():
                known.steps.clear()
            self.directories.clear()
            self.remembered = 0
        node.steps[segment] = following
        self.remembered += 1
        return following

    def first_of(self, path: str) -> int | None:
        """:meth:`first` for the path text: its directory looked up (walked once), then its
        last segment (not remembered: file names rarely repeat)."""
        directory, slash, name = path.rpartition("/")
        if slash:
            node = self.directories.get(directory)
            if node is None:
                node = self.root
                for segment in directory.split("/"):
                    node = node.steps.get(segment) or self.step(node, segment)
                    if node.dead:
                        break
                if len(self.directories) >= _STEP_MEMO_LIMIT:
                    self.directories.clear()  # bounded memory
                self.directories[directory] = node
            if node.dead:
                return None
        else:
            node = self.root
        following = node.steps.get(name)
        if following is None:
            if name not in node.literal:
                following = node.plain
                if following is None:
                    # Most file names match no wildcard part: known from a few lookups,
                    # without the candidate search (the same node _advance would give).
                    unmatched = node.unmatched
                    if unmatched is not None and not node.could_match(name):
                        following = unmatched
            if following is None:
                following = self._advance(node, name)
        return following.first

    def first_in_prefixes(self, segments: Sequence[str]) -> int | None:
        """Position of the first pattern matching the longest matched prefix of the path."""
        node = self.root
        found = None
        for segment in segments:
            node = node.steps.get(segment) or self.step(node, segment)
            if node.dead:
                break
            if node.first is not None:
                found = node.first
        return found


class PatternSet:
    """A set of glob patterns compiled once into one automaton, for matching many paths.

    The one compiled matcher of PlanGate: protected surfaces, a task's allowed and
    denied paths, and every ``match_any`` over a list of patterns use it. The answer
    for a path is the first pattern of the set, in order, that matches it: exactly
    :func:`glob_match` tried pattern by pattern. The work for a path grows with its
    segments, not with the number of patterns (see the comment above ``_Node``).

    Patterns are validated when the set is built (an invalid one raises
    :class:`PathRejected`). :meth:`first` validates the path; the ``*_canonical``
    methods take a path :func:`canonical_path` already returned, so a check that
    validated its paths once never validates them again.

    With ``casefold`` an ASCII path is lower-cased and compared exactly with the
    lower-cased ASCII patterns (ASCII folds one way only); a pattern or a path that is
    not ASCII is compared character by character as :func:`glob_match` does.
    """

    def __init__(self, patterns: Iterable[str], *, casefold: bool = False) -> None:
        items = tuple(patterns)
        for pattern in items:
            if isinstance(pattern, str):
                _validated_pattern(pattern)
            else:
                validate_pattern(pattern)  # raises: not a string
        self.patterns = items
        self.casefold = casefold
        # Patterns that fold character by character (casefold and not ASCII), by position.
        self._folded = tuple(
            (position, _compile(pattern)) for position, pattern in enumerate(items)
            if casefold and not pattern.isascii()
        )
        self._automaton = _Automaton([
            (position, pattern.lower() if casefold else pattern)
            for position, pattern in enumerate(items)
            if not (casefold and not pattern.isascii())
        ])

    @property
    def comparisons(self) -> int:
        """Wildcard parts compared character by character with a segment so far."""
        return self._automaton.chains.comparisons

    def first(self, path: str) -> str | None:
        """The first pattern matching ``path``, or None; raises when the path is not canonical."""
        return self.first_canonical(canonical_path(path))

    def first_canonical(self, path: CanonicalPath) -> str | None:
        """:meth:`first` for a path :func:`canonical_path` already accepted (not re-checked)."""
        if not self.patterns:
            return None
        if self.casefold and not path.isascii():
            return _first_each(self.patterns, path, casefold=True, counter=None)
        found = self._automaton.first_of(path.lower() if self.casefold else path)
        for position, compiled in self._folded:
            if found is not None and position > found:
                break
            if _nfa_match(compiled, path, True, None):
                found = position
                break
        return None if found is None else self.patterns[found]

    def matching_canonical(self, paths: Iterable[CanonicalPath]) -> list[CanonicalPath]:
        """The paths of ``paths`` (each one :func:`canonical_path` accepted) that a pattern
        matches, in order: :meth:`first_canonical` of each, in one loop."""
        if not self.patterns:
            return []
        first_of = self._automaton.first_of
        if self.casefold and self._folded:
            first = self.first_canonical
            return [path for path in paths if first(path) is not None]
        if self.casefold:
            # an ASCII path is lower-cased and looked up, as first_canonical does
            first = self.first_canonical
            return [
                path for path in paths
                if (first_of(path.lower()) if path.isascii() else first(path)) is not None
            ]
        return [path for path in paths if first_of(path) is not None]

    def first_in_prefixes(self, path: CanonicalPath) -> str | None:
        """The first pattern matching ``path`` or the nearest directory above it that any
        pattern matches, or None (everything under a matched directory is matched with it).
        ``path`` is one :func:`canonical_path` accepted."""
        if not self.patterns:
            return None
        if self.casefold and (self._folded or not path.isascii()):
            parts = path.split("/")
            for end in range(len(parts), 0, -1):
                hit = self.first_canonical(CanonicalPath("/".join(parts[:end])))
                if hit is not None:
                    return hit
            return None
        segments = (path.lower() if self.casefold else path).split("/")
        found = self._automaton.first_in_prefixes(segments)
        return None if found is None else self.patterns[found]


def first_match_of(
    patterns: Iterable[str], *, casefold: bool = False
) -> Callable[[str], str | None]:
    """A function giving :func:`match_any` ``(patterns, path, casefold=casefold)`` for any
    ``path``, the same answer and the same errors, with the pattern work done once.

    For matching many paths against one set of patterns. Patterns that do not
    validate go through :func:`match_any` itself, which answers or raises in its
    documented order.
    """
    items = tuple(patterns)

    def each(path: str) -> str | None:
        return match_any(items, path, casefold=casefold)

    if len(items) <= 1:
        return each
    compiled = compiled_patterns(items, casefold=casefold)
    return each if compiled is None else compiled.first


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
    return _first_each(items, CanonicalPath(path), casefold=casefold, counter=counter)


def _first_each(
    items: Sequence[str], path: CanonicalPath, *, casefold: bool, counter: MatchCounter | None
) -> str | None:
    """The first of ``items`` (validated) matching ``path`` (canonical), pattern by pattern."""
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


def link_leaves_repository(path: str, target: bytes) -> bool:
    """Does a symbolic link at ``path`` (repository-relative) with ``target`` point
    outside the repository's files? Absolute, empty or NUL-holding targets do; so does
    a relative one that climbs above the top (judged as text, links never followed) or
    lands in the repository's own ``.git`` (what no commit holds: hooks, config)."""
    text = target.decode("utf-8", "surrogateescape")
    if not text or text.startswith("/") or "\x00" in text:
        return True
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), text))
    top = joined.split("/", 1)[0]
    return top == ".." or top.casefold() == ".git"
