"""The CommonMark tokens of a plain plan, without the Markdown parser (pure).

Most plans are a handful of ATX headings, one-line paragraphs and flat one-line
bullet lists whose only inline markup is code spans. For such a text this module
builds the very token stream ``markdown-it`` (CommonMark, tables on) builds: the
same types, tags, levels, line maps, contents and inline children, for a small
fraction of the cost (the parser's import alone is ~25 ms, each parse ~0.2 ms).

Anything else gives None and the caller parses with ``markdown-it``: the grammar
below accepts only lines whose CommonMark reading has a single answer, and every
doubt (a character outside the plain set, an indented or trailing space, a line
that could continue or interrupt the block before it, a list after a blank line
that could make a list loose, an empty code span) is a refusal. A property test
pins the tokens to the parser's for every text this module accepts.

Lines (split on ``\\n``, the text printable ASCII only):

- a blank line is empty;
- a heading is ``#`` to ``######``, one space, then plain inline text;
- a list item is ``- `` then plain inline text starting with a letter or a code
  span; consecutive items form one tight list, which starts after a heading, the
  start of the text, or a blank line that follows anything but a list, and ends at
  a heading, at a paragraph after a blank line, or at the end (an item after a blank
  line that follows an item is refused: it may make the list loose);
- a paragraph is one line of plain inline text starting with a letter or a code
  span, followed by a blank line, a heading or the end.

Plain inline text: letters, digits, spaces and ``. , : ; / ( ) ' " ? = % + -``
between code spans; a code span is one backtick, at least one printable
character that is not a backtick and neither starts nor ends with a space, and
one backtick, never next to another code span. No space begins or ends the text.
"""

from __future__ import annotations

import re

from plangate.records import NamedTuple


class Child(NamedTuple):
    """One inline child: ``text`` or ``code_inline``."""

    type: str
    content: str


class Token(NamedTuple):
    """The attributes of a ``markdown-it`` token that a reader of the tokens uses."""

    type: str
    tag: str
    level: int
    map: list[int] | None
    content: str
    hidden: bool
    nesting: int
    children: list[Child] | None


_INLINE_RE = re.compile(r"(?:[A-Za-z0-9.,:;/()'\"?=%+ -]|`[!-_a-~](?:[ -_a-~]*[!-_a-~])?`)+")
"""Plain inline text: the plain characters and closed code spans, nothing else."""
_CODE_RE = re.compile(r"`([^`]+)`")
_HEADING_RE = re.compile(r"(#{1,6}) (.+)")


_new = tuple.__new__
"""A token built without the named tuple's Python-level ``__new__`` (the same object)."""

_HEADING_CLOSE = {f"h{n}": _new(Token, ("heading_close", f"h{n}", 0, None, "", False, -1, None))
                  for n in range(1, 7)}
_PARAGRAPH_CLOSE = _new(Token, ("paragraph_close", "p", 0, None, "", False, -1, None))
_ITEM_PARAGRAPH_CLOSE = _new(Token, ("paragraph_close", "p", 2, None, "", True, -1, None))
_ITEM_CLOSE = _new(Token, ("list_item_close", "li", 1, None, "", False, -1, None))
_LIST_CLOSE = _new(Token, ("bullet_list_close", "ul", 0, None, "", False, -1, None))


def _inline_children(text: str) -> list[Child] | None:
    """The children of plain inline ``text``, or None when it is not plain."""
    if (
        not text
        or text[0] == " "
        or text[-1] == " "
        or "``" in text  # a run of backticks opens and closes longer code spans
        or _INLINE_RE.fullmatch(text) is None
    ):
        return None
    if "`" not in text:
        return [_new(Child, ("text", text))]
    children: list[Child] = []
    position = 0
    for match in _CODE_RE.finditer(text):
        if match.start() > position:
            children.append(_new(Child, ("text", text[position : match.start()])))
        children.append(_new(Child, ("code_inline", match.group(1))))
        position = match.end()
    if position < len(text):
        children.append(_new(Child, ("text", text[position:])))
    return children


def _starts_block(text: str) -> bool:
    """A paragraph's or list item's text begins with a letter or a code span."""
    return text[:1].isalpha() or text[:1] == "`"


def plain_tokens(text: str) -> list[Token] | None:
    """The tokens ``markdown-it`` gives ``text``, or None when ``text`` is not a plain plan."""
    if not text.isascii() or not text.replace("\n", "").isprintable():
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline ends the last line, it adds none
    tokens: list[Token] = []
    append = tokens.append
    previous = "start"  # start, blank, heading, paragraph, item
    list_open = -1  # index of the open list's bullet_list_open token, or -1
    item_open = -1  # index of the open list item's list_item_open token
    blank_after = "start"  # what the blank lines since the last block followed
    for number, line in enumerate(lines):
        if line == "":
            if previous != "blank":
                blank_after = previous
            previous = "blank"
            continue
        heading = _HEADING_RE.fullmatch(line) if line[0] == "#" else None
        if heading is not None:
            if previous == "item" or (previous == "blank" and list_open >= 0):
                _close_list(tokens, list_open, item_open, number)
                list_open = item_open = -1
            content = heading.group(2)
            children = _inline_children(content)
            if children is None:
                return None
            tag = f"h{len(heading.group(1))}"
            lines_map = [number, number + 1]
            append(_new(Token, ("heading_open", tag, 0, lines_map, "", False, 1, None)))
            append(_new(Token, ("inline", "", 1, lines_map, content, False, 0, children)))
            append(_HEADING_CLOSE[tag])
            previous = "heading"
            continue
        if previous == "paragraph" or (previous == "item" and not line.startswith("- ")):
            return None  # a continuation or an interruption: the parser decides
        if line.startswith("- "):
            content = line[2:]
            children = _inline_children(content)
            if children is None or not _starts_block(content):
                return None
            if previous == "blank" and (list_open >= 0 or blank_after == "item"):
                return None  # a blank line between items may make the list loose
            lines_map = [number, number + 1]
            if previous == "item":
                opened = tokens[item_open]
                tokens[item_open] = _new(Token, (*opened[:3], [opened[3][0], number],  # type: ignore[index]
                                                 *opened[4:]))
                append(_ITEM_CLOSE)
            else:
                list_open = len(tokens)
                append(_new(Token, ("bullet_list_open", "ul", 0, lines_map, "", False, 1, None)))
            item_open = len(tokens)
            append(_new(Token, ("list_item_open", "li", 1, lines_map, "", False, 1, None)))
            append(_new(Token, ("paragraph_open", "p", 2, lines_map, "", True, 1, None)))
            append(_new(Token, ("inline", "", 3, lines_map, content, False, 0, children)))
            append(_ITEM_PARAGRAPH_CLOSE)
            previous = "item"
            continue
        if previous == "blank" and list_open >= 0:
            _close_list(tokens, list_open, item_open, number)
            list_open = item_open = -1
        children = _inline_children(line)
        if children is None or not _starts_block(line):
            return None
        lines_map = [number, number + 1]
        append(_new(Token, ("paragraph_open", "p", 0, lines_map, "", False, 1, None)))
        append(_new(Token, ("inline", "", 1, lines_map, line, False, 0, children)))
        append(_PARAGRAPH_CLOSE)
        previous = "paragraph"
    if list_open >= 0:
        _close_list(tokens, list_open, item_open, len(lines))
    return tokens


def _close_list(tokens: list[Token], list_open: int, item_open: int, end: int) -> None:
    """Close the open list whose next block starts on line ``end`` (blank lines included)."""
    for index in (item_open, list_open):
        opened = tokens[index]
        tokens[index] = _new(Token, (*opened[:3], [opened[3][0], end], *opened[4:]))  # type: ignore[index]
    tokens.append(_ITEM_CLOSE)
    tokens.append(_LIST_CLOSE)
