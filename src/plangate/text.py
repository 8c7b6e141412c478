"""Invisible-text folding: what a reader of a piece of text actually sees.

Evidence references, reviewer identities, marker lines and free-text fields
are compared by what they show, so that a zero-width character, a full-width
letter or a decomposed accent cannot make one thing count as two (or an empty
field count as filled in). One home for that folding.
"""

from __future__ import annotations

INVISIBLE_CATEGORIES = frozenset(("Cc", "Cf", "Mn", "Me"))
"""Unicode categories a reader does not see on their own: controls, format
characters (U+200B, U+FEFF, bidi marks) and combining marks with no base."""

INVISIBLE_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\ufffd")
"""Blank-looking letters and symbols (Hangul fillers, the blank braille pattern)
and U+FFFD, which stands for an undecodable byte (files are read with replace)."""


def is_invisible(ch: str) -> bool:
    """True for one character a reader cannot see on its own (spaces excluded)."""
    import unicodedata

    return ch in INVISIBLE_FILLERS or unicodedata.category(ch) in INVISIBLE_CATEGORIES


def visible_text(text: str) -> str:
    """``text`` without characters a reader cannot see, compatibility-folded.

    NFKC folds look-alike forms (full-width letters, ligatures, composed vs
    decomposed accents); control (Cc) and format (Cf) characters such as
    U+200B ZERO WIDTH SPACE or U+FEFF, combining marks left without a base
    after NFKC, and blank fillers (Hangul fillers, U+2800) are removed. Plain
    printable ASCII, the usual case, is returned as is without importing
    :mod:`unicodedata`.
    """
    if text.isascii() and text.isprintable():
        return text
    import unicodedata  # lazy: only odd text needs it

    folded = unicodedata.normalize("NFKC", text)
    return "".join(
        ch
        for ch in folded
        if ch not in INVISIBLE_FILLERS and unicodedata.category(ch) not in INVISIBLE_CATEGORIES
    )


def is_blank(text: str) -> bool:
    """True when ``text`` shows nothing: empty, whitespace or invisible characters only."""
    return not visible_text(text).strip()


def folded_identity(text: str) -> str:
    """``text`` as an identity to compare: visible characters only, NFKC, case-folded."""
    return visible_text(text).strip().casefold()
