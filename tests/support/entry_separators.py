"""The Files section's entry-separator rule as one regular expression: the reference
the hand-written scan (``files_section._entry_spans``) must agree with."""

from __future__ import annotations

import re

SEPARATOR_PATTERN = re.compile(
    "[,\u3001\uff0c;\uff1b]|(?<![^ \t\u3000])[/+\uff0b\uff0f](?![^ \t\u3000])"
)


def entry_spans_by_pattern(text: str) -> list[tuple[int, str]]:
    """The separator rule as one regular expression, over the text with commas inside
    braces masked: the reference the hand-written scan must agree with."""
    masked: list[str] = []
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        masked.append("\x01" if depth and ch == "," else ch)
    out: list[tuple[int, str]] = []
    position = 0
    for match in SEPARATOR_PATTERN.finditer("".join(masked)):
        out.append((position, text[position : match.start()]))
        position = match.end()
    out.append((position, text[position:]))
    return out
