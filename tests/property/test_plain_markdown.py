"""The plain-plan tokenizer against ``markdown-it``: same tokens whenever it answers.

:func:`plangate.plan.plain_markdown.plain_tokens` stands in for the Markdown parser on
plain plans; a token it gets wrong would change a derived scope. Texts are drawn from
lines that are plain and lines one character away from plain (indents, trailing
spaces, markup characters, empty code spans, setext underlines, nested and ordered
items, tables), so both the answers and the refusals are exercised.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from plangate.plan.files_section import _parser, read_files_section
from plangate.plan.plain_markdown import plain_tokens

WORD = st.sampled_from(
    ["Goal", "src", "a", "x1", "Files / Components to Touch", "do not touch", "(draft)",
     "Note: read-only", "ok.", "5 %", "a = b", "it's", '"q"', "a;b", "x+y", "1.", "2)"]
)
CODE = st.sampled_from(
    ["`src/a.py`", "`docs/`", "`a b`", "`*`", "`<x>`", "`[l](u)`", "` a`", "`a `", "``",
     "```", "`", "`\\`", "`a`b`", "`#`"]
)
ODD = st.sampled_from(
    ["*", "_", "[", "]", "<", ">", "&", "\\", "|", "~", "!", "#", "  ", "\t", "é", "\r"]
)
INLINE = st.lists(st.one_of(WORD, CODE, ODD, st.just(" ")), min_size=0, max_size=5).map("".join)
LINE = st.one_of(
    st.just(""),
    INLINE,
    INLINE.map(lambda t: "- " + t),
    INLINE.map(lambda t: "# " + t),
    INLINE.map(lambda t: "## " + t),
    INLINE.map(lambda t: "###### " + t),
    INLINE.map(lambda t: "####### " + t),
    INLINE.map(lambda t: "  - " + t),
    INLINE.map(lambda t: "    " + t),
    INLINE.map(lambda t: "1. " + t),
    INLINE.map(lambda t: "* " + t),
    INLINE.map(lambda t: "> " + t),
    st.sampled_from(["---", "===", "- ", "-", "|a|b|", "|-|-|", "```", "<!-- c -->", "#",
                     "## Files / Components to Touch", "- `src/a.py`", "text `x`"]),
)
TEXT = st.tuples(st.lists(LINE, max_size=12), st.booleans()).map(
    lambda parts: "\n".join(parts[0]) + ("\n" if parts[1] else "")
)

PLAIN_WORD = st.sampled_from(["Goal", "src", "x1", "do not touch", "(draft)", "read-only:",
                              "it's", "a = b", "`src/a.py`", "`a b`", "`<x>`", "`*`"])
PLAIN_INLINE = st.lists(PLAIN_WORD, min_size=1, max_size=3).map(" ".join)
PLAIN_LINE = st.one_of(
    st.just(""),
    st.just(""),
    PLAIN_INLINE,
    PLAIN_INLINE.map(lambda t: "- " + t),
    PLAIN_INLINE.map(lambda t: "- " + t),
    PLAIN_INLINE.map(lambda t: "## " + t),
    st.sampled_from(["# Title", "## Files / Components to Touch", "### Do not touch",
                     "##### 1. x", "- `docs/`, `src/b.py`"]),
)
MOSTLY_PLAIN = st.tuples(st.lists(PLAIN_LINE, max_size=16), st.booleans()).map(
    lambda parts: "\n".join(parts[0]) + ("\n" if parts[1] else "")
)
"""Texts the tokenizer mostly answers for: every rule of its grammar in combination."""


def _projection(tokens: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (t.type, t.tag, t.level, list(t.map) if t.map else None, t.content, t.hidden,
         t.nesting, [(c.type, c.content) for c in t.children or ()])
        for t in tokens
    ]


PLAN = (
    "# TASK-0001\n\n## Goal\n\nGoal 1.\n\n## Files / Components to Touch\n\n"
    "- `src/mod1.py`\n\n## Testing Strategy\n\nVerification Automation: `true`\n"
)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(TEXT, MOSTLY_PLAIN))
@example(PLAN)
@example("# a\n- x\n- y\n\n\n")
@example("- x\n\n# h\n\n- y\n\npara\n")
@example("- x\n\n- y\n")
@example("para\n- x\n")
@example("- x\npara\n")
def test_plain_tokens_are_the_parsers_tokens(text: str) -> None:
    tokens = plain_tokens(text)
    if tokens is not None:
        assert _projection(tokens) == _projection(_parser().parse(text))


def test_the_usual_plan_is_plain() -> None:
    # the fast path must serve the plans it exists for, or it only adds work
    assert plain_tokens(PLAN) is not None


def test_markup_falls_back_to_the_parser() -> None:
    for text in ("- *a*\n", "a\nb\n", "- x\n\n- y\n", "  - x\n", "| a |\n|---|\n", "- ``\n",
                 "a  \n", "# a #\n", "é\n", "a\r\nb\n", "- 1. x\n"):
        assert plain_tokens(text) is None, text


@settings(max_examples=300, deadline=None)
@given(MOSTLY_PLAIN)
@example(PLAN)
def test_the_files_section_reads_the_same_either_way(text: str) -> None:
    tokens = plain_tokens(text)
    if tokens is not None:
        assert read_files_section(text) == read_files_section(text, tokens=_parser().parse(text))
