"""C-1 / C-2 evidence markers: the one line a machine reads from a review file.

Machine judgement of review evidence reads only one line-anchored marker:

    C1-VERDICT: PASS plan=sha256:<64 hex> scope=sha256:<64 hex>     (review-self.md: PASS)
    C2-VERDICT: approve plan=sha256:<64 hex> scope=sha256:<64 hex>  (review-external.md: approve)

The marker must appear exactly once in full grammar, and no other line may
even look like a marker. Free text ("判定: PASS") is never parsed, so appended
prose cannot flip a verdict. ``plan=`` binds the verdict to the bytes of
plan.md at review time; a different current hash makes the marker *stale*.
``scope=`` (written by ``plangate review mark``; optional in the grammar so
markers written before it still read) binds the verdict to the digest of the
scope derived from those bytes (:func:`plangate.plan.scope.scope_digest`): a
marker whose scope digest differs from the scope derived now is
``EVIDENCE_<C>_SCOPE_CHANGED`` -- the reviewer approved another reading.
Stale is decided by the hash only, never by modification times.

Strict on purpose: lines are split on ``\\n`` only, so a CRLF line leaves a
``\\r`` that makes the marker malformed (and the message says so); a line that
starts with the prefix in any letter case, after leading whitespace, or with a
full-width colon counts as a malformed marker line instead of being ignored.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum

from plangate.records import NamedTuple
from plangate.text import INVISIBLE_CATEGORIES, INVISIBLE_FILLERS
from plangate.verdict import Reason


class MarkerKind(NamedTuple):
    """One of the two evidence markers."""

    name: str  # "C1" or "C2"
    filename: str
    accepted: str
    vocabulary: tuple[str, ...]

    @property
    def prefix(self) -> str:
        """The exact line prefix, e.g. ``C1-VERDICT:``."""
        return f"{self.name}-VERDICT:"


C1 = MarkerKind("C1", "review-self.md", "PASS", ("PASS", "FAIL"))
C2 = MarkerKind("C2", "review-external.md", "approve", ("approve", "reject"))
KINDS: tuple[MarkerKind, ...] = (C1, C2)


class MarkerState(StrEnum):
    """State of one evidence marker."""

    VALID = "valid"
    FILE_MISSING = "file_missing"
    MISSING = "missing"
    DUPLICATE = "duplicate"
    MALFORMED = "malformed"
    NOT_ACCEPTED = "not_accepted"
    STALE = "stale"
    UNDECIDABLE = "undecidable"


class MarkerResult(NamedTuple):
    """What was found for one marker, with the reason when it is not valid."""

    kind: MarkerKind
    state: MarkerState
    verdict: str | None = None
    plan_hash: str | None = None
    reason: Reason | None = None
    scope_digest: str | None = None

    @property
    def valid(self) -> bool:
        """True only for a single, well-formed, accepted, current marker."""
        return self.state is MarkerState.VALID

    def to_json(self) -> dict[str, object]:
        """JSON form for ``--json`` outputs."""
        out: dict[str, object] = {
            "file": self.kind.filename,
            "state": self.state.value,
            "verdict": self.verdict,
            "plan": self.plan_hash,
        }
        if self.reason is not None:
            out["reason"] = self.reason.to_json()
        return out


_HASH_PREFIX = "sha256:"
_HASH_LENGTH = len(_HASH_PREFIX) + 64
_LOWER_HEX = "0123456789abcdef"


def _is_hash(text: str) -> bool:
    # strip() removes every character of the set from both ends: nothing is left
    # exactly when every character is lowercase hex.
    return (
        len(text) == _HASH_LENGTH
        and text.startswith(_HASH_PREFIX)
        and not text[len(_HASH_PREFIX) :].strip(_LOWER_HEX)
    )


def full_grammar(line: str, kind: MarkerKind) -> tuple[str, str] | None:
    """``(verdict, plan hash)`` when ``line`` is exactly
    ``<NAME>-VERDICT: <verdict> plan=sha256:<64 lowercase hex>``, optionally followed by
    `` scope=sha256:<64 lowercase hex>`` (:func:`marker_scope`), else None.

    The verdict is one or more characters none of which is whitespace
    (``str.isspace``). Written without a regular expression: compiling one costs
    more at start-up than every marker of a task takes to read.
    """
    head = f"{kind.name}-VERDICT: "
    if not line.startswith(head):
        return None
    verdict, separator, plan_hash = line[len(head) :].partition(" plan=")
    if not separator or not verdict:
        return None
    # An ASCII letter or digit is never whitespace: only other verdicts are scanned.
    if not (verdict.isascii() and verdict.isalnum()) and any(ch.isspace() for ch in verdict):
        return None
    plan_hash, separator, scope = plan_hash.partition(" scope=")
    if not _is_hash(plan_hash) or (separator and not _is_hash(scope)):
        return None
    return verdict, plan_hash


def marker_scope(line: str) -> str | None:
    """The ``scope=`` digest of a marker line in full grammar, or None when it has none."""
    _, separator, scope = line.partition(" scope=")
    return scope if separator else None


_FOLDED_PREFIXES = {kind.name: f"{kind.name}-verdict".casefold() for kind in KINDS}


# Characters that hide nothing from a reader but would hide a marker from a
# plain lstrip(): ASCII controls (NUL, VT, FF...) and, for non-ASCII lines,
# format characters (zero-width space, BOM, bidi controls) and compatibility
# forms (full-width letters), folded with NFKC.

_ASCII_LEADING_JUNK = "".join(chr(c) for c in range(0x21)) + "\x7f"

# Separators str.splitlines() (and many viewers) treat as line breaks but the
# marker reader, which splits on LF only, does not.
_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _has_other_line_break(text: str) -> bool:
    return any(ch in text for ch in _OTHER_LINE_BREAKS)


def _marker_head(line: str, width: int) -> str:
    """The first ``width`` visible characters of ``line``, case-folded (may be longer)."""
    stripped = line.lstrip(_ASCII_LEADING_JUNK)
    head = stripped[:width]
    if head.isascii() and head.isprintable():
        # Later characters cannot turn a printable ASCII head into the prefix or
        # out of it. A control character (NUL, DEL...) inside the head is
        # invisible to a reader, so such a head takes the folding path below.
        return head.casefold()
    import unicodedata  # lazy: only lines opening with non-ASCII text need it

    def invisible(ch: str) -> bool:
        return (
            ch.isspace()
            or ch in INVISIBLE_FILLERS
            or unicodedata.category(ch) in INVISIBLE_CATEGORIES
        )

    start = 0
    while start < len(stripped) and invisible(stripped[start]):
        start += 1
    # NFKC of a bounded window: full-width and other compatibility forms fold
    # to ASCII; 4 * width leaves room for combining marks and ignorables.
    window = unicodedata.normalize("NFKC", stripped[start : start + 4 * width])
    visible = "".join(ch for ch in window if ch == " " or not invisible(ch))
    return visible[: 2 * width].casefold()


def _looks_like_marker(line: str, kind: MarkerKind) -> bool:
    # Any line that a human would read as a marker counts, so that near misses
    # (case, indentation, a full-width colon or letters, a zero-width prefix)
    # are ambiguities, not invisible.
    prefix = _FOLDED_PREFIXES.get(kind.name) or f"{kind.name}-verdict".casefold()
    # casefold() folds each character on its own into one or more characters,
    # so only the first len(prefix) characters can decide the prefix test.
    return _marker_head(line, len(prefix)).startswith(prefix)


def _hidden_marker_count(text: str, prefix: str) -> int:
    """Marker-like lines that only a CR/VT/FF/U+0085/U+2028/U+2029 break reveals."""
    if not _has_other_line_break(text):
        return 0
    width = len(prefix)
    hidden = 0
    for line in text.split("\n"):
        segments = line.splitlines()
        # The first segment starts the LF line: the ordinary reader sees it.
        hidden += sum(1 for seg in segments[1:] if _marker_head(seg, width).startswith(prefix))
    return hidden


def marker_candidates(text: str, prefix: str) -> list[str]:
    """The lines of ``text`` (split on LF) that look like a marker of folded ``prefix``."""
    width = len(prefix)
    # _looks_like_marker, inlined: this runs for every line of two files per task.
    return [ln for ln in text.split("\n") if _marker_head(ln, width).startswith(prefix)]


# Every byte a plain file may not hold for the quick candidate search: ASCII
# controls other than LF (TAB, CR, VT, FF, NUL, DEL...) and every non-ASCII byte.
_NOT_PLAIN = bytes((*range(0x0A), *range(0x0B, 0x20), *range(0x7F, 0x100)))


def _plain_candidates(data: bytes, text: str, prefix: str) -> list[str] | None:
    """:func:`marker_candidates` for a plain file (printable ASCII, spaces and LF), else None.

    In such a file a line's marker head is the line without its leading
    spaces, lower-cased, and no other line break can hide a marker. Every
    candidate line then holds the prefix, so only the prefix's occurrences are
    looked at (usually one) instead of every line. ``text`` is ``data`` decoded.
    None (not plain) sends the caller to the general search; a property test
    pins the two to each other.
    """
    if len(data.translate(None, _NOT_PLAIN)) != len(data):
        return None
    lowered = text.lower()
    found: list[str] = []
    at = lowered.find(prefix)
    while at >= 0:
        start = lowered.rfind("\n", 0, at) + 1
        if not lowered[start:at].strip(" "):
            end = text.find("\n", at)
            found.append(text[start:] if end < 0 else text[start:end])
        at = lowered.find(prefix, at + len(prefix))
    return found


def marker_line(
    kind: MarkerKind, verdict: str, plan_hash: str, scope_digest: str | None = None
) -> str:
    """The exact marker line (without newline) for ``verdict`` bound to ``plan_hash`` and,
    when given, to the digest of the scope derived from that plan."""
    if verdict not in kind.vocabulary:
        raise ValueError(f"{kind.name} verdict must be one of {kind.vocabulary}")
    scope = f" scope={scope_digest}" if scope_digest is not None else ""
    return f"{kind.prefix} {verdict} plan={plan_hash}{scope}"


def replace_marker(data: bytes, kind: MarkerKind, line: str) -> bytes:
    """``data`` with every marker-looking line of ``kind`` removed and ``line`` appended."""
    text = data.decode("utf-8", errors="strict")
    kept = []
    for ln in text.split("\n"):
        if _looks_like_marker(ln.rstrip("\r"), kind):
            continue
        hidden = _has_other_line_break(ln)
        kept.append(_drop_hidden_markers(ln, kind) if hidden else ln)
    while kept and kept[-1].strip() == "":
        kept.pop()
    body = "\n".join(kept)
    if body:
        body += "\n\n"
    return (body + line + "\n").encode("utf-8")


def _drop_hidden_markers(line: str, kind: MarkerKind) -> str:
    """``line`` without the marker-like pieces behind a non-LF line break."""
    # text, break, text, break, ..., text
    pieces = re.split(f"([{_OTHER_LINE_BREAKS}])", line)
    out = [pieces[0]]
    for index in range(1, len(pieces), 2):
        if not _looks_like_marker(pieces[index + 1], kind):
            out.extend((pieces[index], pieces[index + 1]))
    return "".join(out)


def _reason(kind: MarkerKind, code: str, message: str, hint: str) -> Reason:
    return Reason(code=code, message=f"{kind.filename}: {message}", hint=hint)


def read_marker(
    kind: MarkerKind,
    data: bytes | None,
    current_plan_hash: str | None,
    current_scope: Callable[[], str | None] | None = None,
) -> MarkerResult:
    """Judge one evidence file's marker. ``data`` None means the file is unreadable.

    ``current_plan_hash`` is the ``sha256:`` of the current plan.md, or None when
    plan.md itself is unreadable (then the marker cannot be bound: undecidable).
    ``current_scope`` gives the digest of the scope derived from the current
    plan.md (None: undefined); it is asked only for a marker that names a scope.
    """
    redo = f"run the {kind.name} review again and write the marker with 'plangate review mark'"
    if data is None:
        return MarkerResult(
            kind,
            MarkerState.FILE_MISSING,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_FILE_MISSING",
                "evidence file is missing or unreadable",
                redo,
            ),
        )
    text = data.decode("utf-8", errors="replace")
    prefix = _FOLDED_PREFIXES.get(kind.name) or f"{kind.name}-verdict".casefold()
    plain = _plain_candidates(data, text, prefix)
    if plain is not None:
        candidates, hidden = plain, 0
    else:
        candidates = marker_candidates(text, prefix)
        hidden = _hidden_marker_count(text, prefix)
    if not candidates:
        return MarkerResult(
            kind,
            MarkerState.MISSING,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_MARKER_MISSING",
                f"no '{kind.prefix}' marker line (free text is never parsed)",
                redo,
            ),
        )
    if hidden:
        return MarkerResult(
            kind,
            MarkerState.DUPLICATE,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_MARKER_DUPLICATE",
                f"{hidden} marker-like line(s) behind a CR, form feed or Unicode line "
                "separator (U+0085, U+2028, U+2029); other readers see them as lines (ambiguous)",
                "save the file with LF line endings only and keep exactly one marker line",
            ),
        )
    if len(candidates) > 1:
        return MarkerResult(
            kind,
            MarkerState.DUPLICATE,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_MARKER_DUPLICATE",
                f"{len(candidates)} marker-like lines; exactly one is allowed (ambiguous)",
                "keep exactly one marker line; 'plangate review mark' replaces old ones",
            ),
        )
    line = candidates[0]
    # A line in full grammar starts with the prefix, so it is always a candidate:
    # with exactly one candidate, the grammar of that line decides.
    grammar = full_grammar(line, kind)
    if grammar is None:
        detail = "does not match the marker grammar"
        if line.endswith("\r"):
            detail = "ends with a carriage return (CRLF line ending); save the file with LF endings"
        elif line != line.rstrip():
            detail = "has trailing whitespace"
        elif not line.startswith(kind.prefix):
            detail = f"does not start exactly with '{kind.prefix} ' (case, indentation or colon)"
        return MarkerResult(
            kind,
            MarkerState.MALFORMED,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_MARKER_MALFORMED",
                f"marker line {detail}: {line.rstrip()[:120]!r}",
                f"write exactly '{kind.prefix} <verdict> plan=sha256:<64 lowercase hex>' "
                "(optionally ' scope=sha256:<64 lowercase hex>'): 'plangate review mark' does",
            ),
        )
    verdict, plan_hash = grammar
    if verdict != kind.accepted:
        return MarkerResult(
            kind,
            MarkerState.NOT_ACCEPTED,
            verdict=verdict,
            plan_hash=plan_hash,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_NOT_ACCEPTED",
                f"verdict {verdict!r} is not accepted (only {kind.accepted!r} is)",
                "address the review findings, then review again",
            ),
        )
    if current_plan_hash is None:
        return MarkerResult(
            kind,
            MarkerState.UNDECIDABLE,
            verdict=verdict,
            plan_hash=plan_hash,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_UNDECIDABLE",
                "plan.md is unreadable, so the marker cannot be bound to it",
                "restore plan.md as a regular file",
            ),
        )
    if plan_hash != current_plan_hash:
        return MarkerResult(
            kind,
            MarkerState.STALE,
            verdict=verdict,
            plan_hash=plan_hash,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_STALE",
                "marker is stale: its plan hash differs from the current plan.md",
                f"plan.md changed after the review; {redo}",
            ),
        )
    scope = marker_scope(line)
    if scope is not None and current_scope is not None and scope != current_scope():
        return MarkerResult(
            kind,
            MarkerState.STALE,
            verdict=verdict,
            plan_hash=plan_hash,
            scope_digest=scope,
            reason=_reason(
                kind,
                f"EVIDENCE_{kind.name}_SCOPE_CHANGED",
                "the scope derived from plan.md now is not the scope this review approved",
                f"'plangate plan lint TASK' shows the scope; {redo}",
            ),
        )
    return MarkerResult(kind, MarkerState.VALID, verdict, plan_hash, scope_digest=scope)
