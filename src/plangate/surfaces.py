"""Protected surfaces: one machine-readable definition, resolved with provenance.

The definition is a TOML file (``.plangate/protected-surfaces.toml`` in a
repository)::

    version = 1

    [[surface]]
    pattern = "**/CLAUDE.md"
    class = "rules"
    reason = "agent instructions are human-owned"

Top-level keys other than ``version`` and ``surface`` and entry keys other than
``pattern``, ``class`` and ``reason`` are refused. Patterns use the one glob
semantics of :mod:`plangate.paths` and are matched with ``casefold=True``
(over-matching is the safe side). ``class`` is one of :data:`SURFACE_CLASSES`.

Resolution order (:func:`resolve_surfaces`):

1. an explicit file (``--surfaces FILE``): if given, nothing else is tried;
2. the repository's own file :data:`REPO_SURFACES_RELPATH` (``downstream``);
3. the bundled template shipped in ``plangate/resources`` (``bundled_template``).

A definition that resolves only to the bundled template, or whose bytes carry
the template marker (:data:`TEMPLATE_MARKER`, i.e. a verbatim copy of the
template), carries the problem ``HO_BOUNDARY_UNDEFINED``. An unreadable, empty
or invalid definition carries its own problem. Every consumer must treat a
definition with a ``problem`` as unresolved and escalate: nothing is ever
"clean" by default.

This module is on the hook hot path: standard library and plangate core only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from plangate.canonical import sha256_digest
from plangate.fsutil import FileState, read_regular_file
from plangate.layout import MAX_SURFACES_BYTES, SURFACES_RELPATH
from plangate.paths import (
    CanonicalPath,
    PathRejected,
    PatternSet,
    canonical_path,
    glob_match,
    validate_pattern,
)
from plangate.records import NamedTuple
from plangate.verdict import Reason

REPO_SURFACES_RELPATH = SURFACES_RELPATH
"""Where a repository keeps its own protected-surface definition."""

TEMPLATE_RESOURCE = "resources/protected-surfaces.template.toml"
"""The bundled template, relative to the ``plangate`` package."""

TEMPLATE_MARKER = "PLANGATE-BUNDLED-TEMPLATE"
"""Token on the template's marker line. A file containing it anywhere is a copy of
the template and resolves as ``bundled_template`` (the marker only ever pushes
toward escalation: its absence proves nothing)."""

PROVENANCE_EXPLICIT = "explicit"
PROVENANCE_DOWNSTREAM = "downstream"
PROVENANCE_BUNDLED_TEMPLATE = "bundled_template"
PROVENANCES = (PROVENANCE_EXPLICIT, PROVENANCE_DOWNSTREAM, PROVENANCE_BUNDLED_TEMPLATE)

# class -> family. Families group the classes for reports and for consumers that
# apply different minimum independence levels.
SURFACE_CLASSES: Mapping[str, str] = {
    # Hardening Override families: what steers or ships the agent and the gate
    "core-cli": "hardening-override",
    "hook": "hardening-override",
    "schema": "hardening-override",
    "rules": "hardening-override",
    "settings": "hardening-override",
    "contract": "hardening-override",
    "ci": "hardening-override",
    "approval": "hardening-override",
    "plugin-dist": "hardening-override",
    # The arbiter's own judgement base: its decision code, policy and execution skill
    "decision-code": "judgement-base",
    "policy-spec": "judgement-base",
    "execution-skill": "judgement-base",
    # The evaluation harness: the authority a candidate must never touch
    "evaluator": "evaluation-harness",
    "grader": "evaluation-harness",
    "sealed-fixture": "evaluation-harness",
    "manifest": "evaluation-harness",
    "surfaces-definition": "evaluation-harness",
    "ledger": "evaluation-harness",
    # C-4 / merge / permission / first principles
    "human-owned": "human-owned-boundary",
}
"""Every valid ``class`` value and the family it belongs to."""

_TOP_KEYS = frozenset({"version", "surface"})
_ENTRY_KEYS = ("pattern", "class", "reason")


# NamedTuple rather than dataclasses: importing dataclasses (inspect, ast, dis)
# costs every hook process several milliseconds.
class ProtectedPattern(NamedTuple):
    """One protected pattern: the glob, its class and why it is protected.

    The one type for a protected pattern: the arbiter, the hooks, CI, delivery and
    the evaluation gate all match paths against these.
    """

    pattern: str
    cls: str
    reason: str

    @property
    def family(self) -> str:
        """The class family (``hardening-override``, ``judgement-base``...)."""
        return SURFACE_CLASSES.get(self.cls, "unknown")

    def to_json(self) -> dict[str, str]:
        """JSON form (``class`` spelled out)."""
        return {"pattern": self.pattern, "class": self.cls, "family": self.family,
                "reason": self.reason}


UNMATCHABLE_PATH = ProtectedPattern(
    pattern="<unmatchable path>",
    cls="human-owned",
    reason="the path is not a canonical repository path, so no pattern can be matched "
    "against it: it counts as protected",
)
"""The answer of :meth:`ResolvedSurfaces.protecting` for a path that cannot be matched."""


class ResolvedSurfaces(NamedTuple):
    """A protected-surface definition and where it came from.

    ``problem`` is None only for a usable definition (``explicit`` or
    ``downstream``, parsed, at least one entry). Any problem means unresolved:
    callers escalate.
    """

    provenance: str
    path: str | None
    digest: str | None
    entries: tuple[ProtectedPattern, ...] = ()
    problem: Reason | None = None
    template_marker: bool = False

    @property
    def pattern_count(self) -> int:
        """Number of parsed patterns."""
        return len(self.entries)

    @property
    def resolved(self) -> bool:
        """True only when the definition is usable without escalation."""
        return self.problem is None

    def match(self, path: str) -> ProtectedPattern | None:
        """First entry whose pattern matches canonical ``path`` (case-folded), or None.

        A non-canonical path raises :class:`plangate.paths.PathRejected`: callers
        validate paths first, and an exception on this path is a deny, never an
        allow. Callers that must give an answer for every path use
        :meth:`protecting`.
        """
        if not self.entries:
            canonical_path(path)
            return None
        compiled, by_pattern = _compiled_entries(self.entries)
        hit = compiled.first(path)
        return None if hit is None else by_pattern[hit]

    def protecting(self, path: str) -> ProtectedPattern | None:
        """The entry protecting ``path``, or None; a path that cannot be matched is protected.

        The one answer for a path that is not canonical (``..``, a backslash, a
        control character...): it counts as protected, and the answer is
        :data:`UNMATCHABLE_PATH` so reports say why.
        """
        try:
            return self.match(path)
        except PathRejected:
            return UNMATCHABLE_PATH

    def protector(self) -> Callable[[str], ProtectedPattern | None]:
        """:meth:`protecting` as a function, the pattern work done once: for judging
        many paths (every changed file of a pull request) against one definition."""
        if not self.entries:
            return self.protecting
        try:
            check = self.canonical_protector()
        except PathRejected:  # an entry that does not validate: every path is refused
            return self.protecting

        def protecting(path: str) -> ProtectedPattern | None:
            try:
                valid = canonical_path(path)
            except PathRejected:
                return UNMATCHABLE_PATH
            return check(valid)

        return protecting

    def canonical_protector(self) -> Callable[[CanonicalPath], ProtectedPattern | None]:
        """:meth:`match` as a function over paths :func:`plangate.paths.canonical_path`
        already accepted: a check that validated every path once matches them without
        validating again. Raises :class:`plangate.paths.PathRejected` when an entry's
        pattern does not validate."""
        if not self.entries:
            return lambda _path: None
        compiled, by_pattern = _compiled_entries(self.entries)
        first = compiled.first_canonical

        def protecting(path: CanonicalPath) -> ProtectedPattern | None:
            hit = first(path)
            return None if hit is None else by_pattern[hit]

        return protecting

    def protected_among(self, paths: Iterable[CanonicalPath]) -> list[CanonicalPath]:
        """The paths of ``paths`` (each one :func:`plangate.paths.canonical_path` accepted)
        that an entry protects, in order: :meth:`canonical_protector` over the list in one
        loop. Raises :class:`plangate.paths.PathRejected` when an entry's pattern does not
        validate."""
        if not self.entries:
            return []
        compiled, _by_pattern = _compiled_entries(self.entries)
        return compiled.matching_canonical(paths)

    def explain(self, path: str) -> tuple[ProtectedPattern, ...]:
        """Every entry that protects canonical ``path`` (case-folded), in file order."""
        canonical_path(path)
        return tuple(e for e in self.entries if glob_match(e.pattern, path, casefold=True))

    def provenance_json(self) -> dict[str, Any]:
        """The provenance block recorded by every decision that used this definition."""
        return {
            "provenance": self.provenance,
            "path": self.path,
            "digest": self.digest,
            "pattern_count": self.pattern_count,
            "template_marker": self.template_marker,
            "problem": self.problem.code if self.problem else None,
        }

    def to_json(self) -> dict[str, Any]:
        """Full JSON form: provenance, entries and problem."""
        out = self.provenance_json()
        out["entries"] = [e.to_json() for e in self.entries]
        out["problem"] = self.problem.to_json() if self.problem else None
        return out


@lru_cache(maxsize=16)
def _compiled_entries(
    entries: tuple[ProtectedPattern, ...],
) -> tuple[PatternSet, dict[str, ProtectedPattern]]:
    """The entries' patterns as one case-folded :class:`PatternSet` (built once per
    definition), and the first entry of each pattern (the entry :meth:`match` names)."""
    compiled = PatternSet([e.pattern for e in entries], casefold=True)
    by_pattern: dict[str, ProtectedPattern] = {}
    for entry in entries:
        by_pattern.setdefault(entry.pattern, entry)
    return compiled, by_pattern


class _InvalidDefinitionError(Exception):
    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.message)
        self.reason = reason


def _bad(code: str, message: str, hint: str) -> _InvalidDefinitionError:
    return _InvalidDefinitionError(Reason(code, message, hint))


# -- the plain-form reader --------------------------------------------------------
#
# Every hook call reads the definition, and tomllib costs a short-lived process
# its import plus a few milliseconds of parsing. Definitions are almost always
# written in one plain form, which this reader parses directly: one item per
# line, each a ``[[surface]]`` header, a bare key with a basic string free of
# escapes, or a bare key with an unsigned decimal integer, with optional
# whitespace and comments. Whenever a document holds anything else (another
# TOML construct, a duplicate key, a control character, a CR), the reader
# declines and tomllib parses the whole document, so the answer is always
# exactly tomllib's (tests/unit/hooks/test_hooks_fast_toml.py checks this with
# generated documents).

# The plain form, line by line (read by hand: compiling the equivalent regular expression
# costs most of a millisecond in every process):
#   [ \t]* ( "[[surface]]" | KEY [ \t]* "=" [ \t]* ( '"' STRING '"' | INT ) )? [ \t]* ("#" ...)?
# KEY is [A-Za-z0-9_-]+, STRING holds no '"' and no backslash, INT is 0 or [1-9][0-9]*.
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ASCII_DIGITS = frozenset("0123456789")
_TABLE_HEADER = "[[surface]]"
# Characters TOML refuses in comments and basic strings (tab and LF aside), and CR.
_CONTROL = frozenset([chr(c) for c in range(0x20) if c not in (0x09, 0x0A)] + ["\x7f"])
_BLANK = ("", None)
_TABLE = ("table", None)


def _plain_line(line: str) -> tuple[str, str | int | None] | None:
    """``("table", None)``, ``("", None)`` (blank or comment), ``(key, value)``, or None
    when ``line`` is not in the plain form."""
    rest = line.lstrip(" \t")
    if not rest or rest[0] == "#":
        return _BLANK  # most lines of a commented definition
    item: tuple[str, str | int | None]
    if rest.startswith(_TABLE_HEADER):
        item, rest = _TABLE, rest[len(_TABLE_HEADER):]
    else:
        key, equals, rest = rest.partition("=")
        key = key.rstrip(" \t")
        if not equals or not key or not _KEY_CHARS.issuperset(key):
            return None
        rest = rest.lstrip(" \t")
        if rest.startswith('"'):
            close = rest.find('"', 1)
            if close < 0 or "\\" in rest[1:close]:
                return None
            item, rest = (key, rest[1:close]), rest[close + 1:]
        else:
            end = 0
            while end < len(rest) and rest[end] in _ASCII_DIGITS:
                end += 1
            digits = rest[:end]
            if not digits or (digits[0] == "0" and len(digits) > 1):
                return None
            item, rest = (key, int(digits)), rest[end:]
    rest = rest.lstrip(" \t")
    if rest and not rest.startswith("#"):
        return None
    return item


def plain_toml(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` for a definition in the plain form, else None (see above)."""
    if not _CONTROL.isdisjoint(text):
        return None
    doc: dict[str, Any] = {}
    table = doc
    surfaces: list[dict[str, Any]] = []
    for line in text.split("\n"):
        item = _plain_line(line)
        if item is None:
            return None
        if item is _TABLE:
            table = {}
            surfaces.append(table)
            continue
        key, value = item
        if item is _BLANK:
            continue  # blank or comment
        if key in table or (table is doc and key == "surface"):
            return None  # tomllib reports the duplicate
        table[key] = value
    if surfaces:
        doc["surface"] = surfaces
    return doc


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    plain = plain_toml(text)
    if plain is not None:
        return plain
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _bad("SURFACES_INVALID_TOML", f"{where} is not valid TOML: {exc}",
                   "fix the TOML syntax") from None


def parse_surfaces_text(text: str, where: str) -> tuple[ProtectedPattern, ...]:
    """Parse and validate a definition; raise on the first error."""
    if not text.strip():
        raise _bad("SURFACES_EMPTY", f"{where} is empty",
                   "list at least one [[surface]] entry; an empty definition protects nothing")
    doc = _parse_toml(text, where)
    if not doc:
        raise _bad("SURFACES_EMPTY", f"{where} holds only comments",
                   "list at least one [[surface]] entry; an empty definition protects nothing")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise _bad("SURFACES_UNKNOWN_KEY", f"{where}: unknown top-level key(s) {unknown}",
                   "only 'version' and [[surface]] tables are allowed")
    version = doc.get("version")
    if type(version) is not int or version != 1:
        raise _bad("SURFACES_VERSION", f"{where}: 'version' must be the integer 1, got {version!r}",
                   "write 'version = 1' at the top")
    raw_entries = doc.get("surface")
    if raw_entries is None or raw_entries == []:
        raise _bad("SURFACES_EMPTY", f"{where} has no [[surface]] entries",
                   "list at least one [[surface]] entry; an empty definition protects nothing")
    if not isinstance(raw_entries, list):
        raise _bad("SURFACES_BAD_ENTRY", f"{where}: 'surface' must be an array of tables",
                   "write each entry as a [[surface]] table")
    entries: list[ProtectedPattern] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_entries, start=1):
        label = f"{where}: surface #{index}"
        if not isinstance(raw, dict):
            raise _bad("SURFACES_BAD_ENTRY", f"{label} is not a table",
                       "write each entry as a [[surface]] table")
        extra = sorted(set(raw) - set(_ENTRY_KEYS))
        if extra:
            raise _bad("SURFACES_UNKNOWN_KEY", f"{label}: unknown key(s) {extra}",
                       "an entry has exactly 'pattern', 'class' and 'reason'")
        for key in _ENTRY_KEYS:
            value = raw.get(key)
            if not isinstance(value, str) or not value.strip():
                raise _bad("SURFACES_BAD_ENTRY", f"{label}: '{key}' must be a non-empty string",
                           "give pattern, class and reason for every entry")
        pattern, cls, reason = raw["pattern"], raw["class"], raw["reason"]
        try:
            validate_pattern(pattern)
        except PathRejected as exc:
            raise _bad("SURFACES_BAD_PATTERN", f"{label}: {exc.code}: {exc.message}",
                       exc.hint or "write a canonical repository-relative glob") from None
        if cls not in SURFACE_CLASSES:
            raise _bad("SURFACES_UNKNOWN_CLASS", f"{label}: unknown class {cls!r}",
                       f"use one of: {', '.join(SURFACE_CLASSES)}")
        # Patterns are compared case-folded because matching is case-folded.
        folded = pattern.casefold()
        if folded in seen:
            raise _bad("SURFACES_DUPLICATE_PATTERN",
                       f"{label}: pattern {pattern!r} repeats surface #{seen[folded]}",
                       "list each pattern once (one class and one reason per pattern)")
        seen[folded] = index
        entries.append(ProtectedPattern(pattern=pattern, cls=cls, reason=reason))
    return tuple(entries)


def has_template_marker(data: bytes) -> bool:
    """True when ``data`` carries the bundled template's marker token."""
    return TEMPLATE_MARKER.encode("ascii") in data


def load_surfaces_bytes(data: bytes, provenance: str, path: str | None) -> ResolvedSurfaces:
    """Parse one definition from already-read bytes (pure; usable for git blobs).

    A template marker turns the provenance into ``bundled_template`` whatever
    ``provenance`` says, and every ``bundled_template`` definition carries
    ``HO_BOUNDARY_UNDEFINED`` (unless a worse problem was found first).
    """
    if provenance not in PROVENANCES:
        raise ValueError(f"unknown provenance {provenance!r}")
    digest = sha256_digest(data)
    marker = has_template_marker(data)
    if marker:
        provenance = PROVENANCE_BUNDLED_TEMPLATE
    where = path or "protected-surface definition"
    try:
        if data.startswith(b"\xef\xbb\xbf"):
            raise _bad("SURFACES_NOT_UTF8", f"{where} starts with a byte-order mark",
                       "save the file as UTF-8 without BOM")
        try:
            text = data.decode("utf-8", errors="strict")
        except UnicodeDecodeError as exc:
            raise _bad("SURFACES_NOT_UTF8", f"{where} is not valid UTF-8 (byte {exc.start})",
                       "save the file as UTF-8") from None
        entries = parse_surfaces_text(text, where)
    except _InvalidDefinitionError as exc:
        return ResolvedSurfaces(provenance, path, digest, (), exc.reason, marker)
    problem = None
    if provenance == PROVENANCE_BUNDLED_TEMPLATE:
        why = ("is a verbatim copy of the bundled template (it still carries the "
               f"{TEMPLATE_MARKER} marker line)" if marker and path != bundled_template_path()
               else "is the bundled template")
        problem = Reason(
            "HO_BOUNDARY_UNDEFINED",
            f"the protected-surface definition {why}: this repository has not defined "
            "its own protected surfaces",
            f"write {REPO_SURFACES_RELPATH} for this repository (start from "
            "'plangate surfaces --template', review every entry, then delete the marker line)",
        )
    return ResolvedSurfaces(provenance, path, digest, entries, problem, marker)


def _template_file() -> Path | None:
    """The template as a plain file beside the package, when the package is on disk.

    This is the path ``importlib.resources`` gives for such a package; that
    module (and zipfile with it) is imported only for other kinds of install.
    """
    import plangate

    origin = getattr(plangate, "__file__", None)
    if not origin:
        return None
    candidate = Path(origin).parent / TEMPLATE_RESOURCE
    return candidate if candidate.is_file() else None


def bundled_template_path() -> str:
    """Display path of the bundled template."""
    found = _template_file()
    if found is not None:
        return str(found)
    from importlib import resources

    return str(resources.files("plangate").joinpath(TEMPLATE_RESOURCE))


def bundled_template_bytes() -> bytes:
    """Bytes of the bundled template shipped with the package."""
    found = _template_file()
    if found is not None:
        return found.read_bytes()
    from importlib import resources

    return resources.files("plangate").joinpath(TEMPLATE_RESOURCE).read_bytes()


def _unreadable(provenance: str, path: str, detail: str) -> ResolvedSurfaces:
    return ResolvedSurfaces(
        provenance, path, None, (),
        Reason("SURFACES_UNREADABLE",
               f"protected-surface definition {path} cannot be used: {detail}",
               "make it a readable regular file (not a symlink) of at most "
               f"{MAX_SURFACES_BYTES} bytes"),
    )


def _load_file(path: Path, provenance: str) -> ResolvedSurfaces:
    read = read_regular_file(path, MAX_SURFACES_BYTES)
    if not read.ok or read.data is None:
        return _unreadable(provenance, str(path), read.detail or read.state.value)
    return load_surfaces_bytes(read.data, provenance, str(path))


def load_bundled_template() -> ResolvedSurfaces:
    """The bundled template as a resolved definition (always ``HO_BOUNDARY_UNDEFINED``)."""
    path = bundled_template_path()
    try:
        data = bundled_template_bytes()
    except OSError as exc:
        return _unreadable(PROVENANCE_BUNDLED_TEMPLATE, path, str(exc))
    return load_surfaces_bytes(data, PROVENANCE_BUNDLED_TEMPLATE, path)


class CommittedBlobReader(Protocol):
    """What :func:`surfaces_at_commit` needs from the git door."""

    def ls_tree(self, commit: str, paths: list[str]) -> Any: ...

    def read_blob(self, commit: str, path: str, max_bytes: int) -> bytes: ...


def joined_surfaces(
    first: ResolvedSurfaces, others: tuple[ResolvedSurfaces, ...]
) -> ResolvedSurfaces:
    """``first`` protecting every pattern of ``others`` as well (more, never less).

    Returns ``first`` itself when every other definition has its digest. Otherwise the
    patterns of ``others`` that ``first`` lacks follow its own, in order; the path names
    every definition and the digest is that of their digests, so a recorded decision
    says which definitions judged it.
    """
    if all(other.digest == first.digest for other in others):
        return first
    entries = list(first.entries)
    known = {entry.pattern for entry in entries}
    for other in others:
        for entry in other.entries:
            if entry.pattern not in known:
                known.add(entry.pattern)
                entries.append(entry)
    paths = [first.path or first.provenance, *(o.path or o.provenance for o in others)]
    digests = [first.digest or "-", *(o.digest or "-" for o in others)]
    return first._replace(
        path=" + ".join(paths),
        digest=sha256_digest("\n".join(digests).encode()),
        entries=tuple(entries),
    )


def surfaces_at_commit(
    git: CommittedBlobReader, commit: str, *, template_fallback: bool = True
) -> ResolvedSurfaces:
    """The repository's definition as committed at ``commit``.

    The one reader of a definition at a commit (the arbiter's base, a pull
    request's base, an evaluation baseline). Without a committed definition the
    answer is the bundled template (which carries ``HO_BOUNDARY_UNDEFINED``) when
    ``template_fallback`` is true, else a ``SURFACES_MISSING`` problem. A
    committed definition that cannot be read is ``SURFACES_UNREADABLE``; git's
    own failure propagates as :class:`plangate.git.GitError`, and every caller
    treats a problem as unresolved.
    """
    return surfaces_with_presence_at_commit(git, commit, template_fallback=template_fallback)[0]


def surfaces_with_presence_at_commit(
    git: CommittedBlobReader, commit: str, *, template_fallback: bool = True
) -> tuple[ResolvedSurfaces, bool]:
    """:func:`surfaces_at_commit`, and whether ``commit`` has an entry at the definition's
    path (of any kind, usable or not), from the same single listing."""
    from plangate.git import GitError

    where = f"{REPO_SURFACES_RELPATH}@{commit[:12]}"
    entries = [e for e in git.ls_tree(commit, [REPO_SURFACES_RELPATH])
               if e.path == REPO_SURFACES_RELPATH]
    if not entries:
        if template_fallback:
            return load_bundled_template(), False
        return ResolvedSurfaces(
            PROVENANCE_DOWNSTREAM, where, None, (),
            Reason("SURFACES_MISSING", f"{where} does not exist",
                   f"commit {REPO_SURFACES_RELPATH} at {commit[:12]}"),
        ), False
    try:
        data = git.read_blob(commit, REPO_SURFACES_RELPATH, MAX_SURFACES_BYTES)
    except GitError as exc:
        return ResolvedSurfaces(
            PROVENANCE_DOWNSTREAM, where, None, (),
            Reason("SURFACES_UNREADABLE", f"{where} cannot be used: {exc.message}",
                   "commit the definition as a regular file of at most "
                   f"{MAX_SURFACES_BYTES} bytes"),
        ), True
    return load_surfaces_bytes(data, PROVENANCE_DOWNSTREAM, where), True


def resolve_surfaces(repo_root: Path, explicit: Path | None = None) -> ResolvedSurfaces:
    """Resolve the protected surfaces for ``repo_root`` (see the module docstring).

    An explicit file that is missing, unreadable, empty or invalid is the
    answer (with its problem): there is never a fallback past an explicit file.
    A repository file that exists but cannot be used is likewise the answer;
    only a repository file that does not exist at all falls through to the
    bundled template.
    """
    if explicit is not None:
        return _load_file(explicit, PROVENANCE_EXPLICIT)
    downstream = repo_root / REPO_SURFACES_RELPATH
    read = read_regular_file(downstream, MAX_SURFACES_BYTES)
    if read.state is FileState.MISSING:
        return load_bundled_template()
    if not read.ok or read.data is None:
        return _unreadable(PROVENANCE_DOWNSTREAM, str(downstream), read.detail or read.state.value)
    return load_surfaces_bytes(read.data, PROVENANCE_DOWNSTREAM, str(downstream))
