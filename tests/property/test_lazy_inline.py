"""Inline runs parsed when read give the tokens of the full parse.

A plan that is not plain is parsed block by block and each inline run the Files-section
reader reads is parsed then (:func:`plangate.plan.files_section._parse`); the tokens,
children included, must be the full parse's, or a scope could change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from plangate.plan.files_section import _parse, _parser, read_files_section

LINE = st.sampled_from([
    "", "# Plan", "## Files / Components to Touch", "### Do not touch", "## Goal",
    "- `src/a.py`", "- src/b.py", "  - nested `x.md`", "1. `docs/`", "* item **bold**",
    "> quote `q.py`", "| path | note |", "|---|---|", "| `a.py` | new |", "| b.md | 変更しない |",
    "[ref]: /url \"t\"", "see [text][ref] and [ref]", "<!-- `hidden.py` -->", "<div>x</div>",
    "```", "code `c.py`", "~~~", "    indented", "a\\\\`b`", "&amp; &lt;x&gt; &#35;",
    "Setext", "---", "===", "***", "- [ ] `todo.md`", "`a`  ", "テスト `t.py` 禁止",
    "![img `i.png`](u)", "<http://x.y>", "a<br>b", "_em_ *em*", "`` a`b ``",
])
TEXT = st.lists(LINE, max_size=14).map("\n".join)


def _projection(tokens: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (t.type, t.tag, t.level, list(t.map) if t.map else None, t.content, t.hidden,
         t.nesting, [(c.type, c.content, c.markup, [(g.type, g.content) for g in c.children or ()])
                     for c in t.children or ()])
        for t in tokens
    ]


@settings(max_examples=1500, deadline=None)
@given(TEXT)
@example("[ref]: /u\n\n## Files / Components to Touch\n\n- [`a.py`][ref] `b.py`\n")
def test_lazy_tokens_are_the_full_parse(text: str) -> None:
    assert _projection(_parse(text)) == _projection(_parser().parse(text))


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_the_files_section_reads_the_same(text: str) -> None:
    assert read_files_section(text, tokens=_parse(text)) == read_files_section(
        text, tokens=_parser().parse(text)
    )


def test_the_repository_plans_read_the_same() -> None:
    root = Path(__file__).resolve().parents[2]
    plans = [p for p in root.glob("**/*.md") if ".git" not in p.parts][:400]
    assert plans
    for plan in plans:
        text = plan.read_text(encoding="utf-8", errors="replace")
        assert read_files_section(text, tokens=_parse(text)) == read_files_section(
            text, tokens=_parser().parse(text)
        ), plan
