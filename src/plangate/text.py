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


LOOK_ALIKES = str.maketrans(
    {
        # Cyrillic letters that look like Latin ones (after case folding).
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c",
        "\u0443": "y", "\u0445": "x", "\u0456": "i", "\u0458": "j", "\u0455": "s",
        "\u04bb": "h", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04cf": "l",
        "\u043a": "k", "\u043c": "m", "\u0442": "t", "\u0432": "b", "\u043d": "h",
        # Greek letters that look like Latin ones (after case folding).
        "\u03b1": "a", "\u03bf": "o", "\u03c1": "p", "\u03bd": "v", "\u03b9": "i",
        "\u03ba": "k", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x", "\u03b5": "e",
        "\u03b3": "y", "\u03c9": "w", "\u03b2": "b", "\u03b7": "n", "\u03bc": "u",
        # Latin letters that look like other Latin ones.
        "\u0131": "i", "\u0251": "a", "\u0261": "g", "\u0269": "i", "\u028f": "y",
    }
)  # fmt: skip
"""Letters a reader takes for a Latin letter (mapped after case folding)."""


def identity_skeleton(text: str) -> str:
    """``text`` as an identity that a reader could not tell apart from another.

    :func:`folded_identity` (NFKC, invisible characters removed, case-folded),
    then accents dropped (NFKD without combining marks) and letters of other
    scripts that look like Latin letters mapped to them (:data:`LOOK_ALIKES`).
    Two identities with the same skeleton are treated as the same identity:
    over-matching is the safe side when a match means "not independent".
    """
    folded = folded_identity(text)
    if folded.isascii():
        return folded
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", folded)
    plain = "".join(ch for ch in decomposed if unicodedata.category(ch) not in ("Mn", "Me"))
    return plain.translate(LOOK_ALIKES)
