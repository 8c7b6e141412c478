"""The hook hot path's shortcuts give exactly the answers of the slow paths they replace.

- ``plangate.surfaces.plain_toml`` parses the plain form of a
  protected-surfaces definition without tomllib; whenever it answers, the answer
  equals ``tomllib.loads``; for anything else it declines (None).
- The ledger's string tests without regular expressions agree with the
  regular expressions they replaced, and the quick JSON string form equals RFC 8785.
- A hook process imports neither dataclasses nor tomllib.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate import surfaces
from plangate.canonical import StrictJSONError, canonical_text
from plangate.ledger import chain
from plangate.surfaces import (
    bundled_template_bytes,
    load_surfaces_bytes,
    parse_surfaces_text,
    plain_toml,
)

ROOT = Path(__file__).resolve().parents[3]

WS = st.sampled_from(["", " ", "\t", "  "])
KEYS = st.sampled_from(
    ["version", "pattern", "class", "reason", "surface", "x-1", "1", "a.b", '"q"', "é"]
)
INTS = st.sampled_from(["0", "1", "12", "01", "+1", "1_0", "-0", "1.0", "true"])
COMMENTS = st.sampled_from(["", "# c", "#", '# "x" \\', "#\x01", "# é\u2028"])
STRING_BODY = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x2030), max_size=8
)
TABLES = st.sampled_from(["[[surface]]", "[[ surface ]]", "[surface]", "[[surface]]x", "[[other]]"])


@st.composite
def lines(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 5))
    lead, trail, comment = draw(WS), draw(WS), draw(COMMENTS)
    if kind == 0:
        return lead + draw(TABLES) + trail + comment
    if kind == 1:
        return f'{lead}{draw(KEYS)}{draw(WS)}={draw(WS)}"{draw(STRING_BODY)}"{trail}{comment}'
    if kind == 2:
        return f"{lead}{draw(KEYS)}{draw(WS)}={draw(WS)}{draw(INTS)}{trail}{comment}"
    if kind == 3:
        return lead + comment
    if kind == 4:
        return f"{lead}{draw(KEYS)} = '{draw(STRING_BODY)}'"
    return draw(st.text(max_size=12))


@st.composite
def documents(draw: st.DrawFn) -> str:
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return newline.join(draw(st.lists(lines(), max_size=12)))


@settings(max_examples=600, deadline=None)
@given(documents())
def test_plain_reader_answers_only_what_tomllib_answers(text: str) -> None:
    plain = plain_toml(text)
    if plain is None:
        return
    assert tomllib.loads(text) == plain


@st.composite
def plain_documents(draw: st.DrawFn) -> str:
    """Documents in the plain form only (unique keys per table, no escapes)."""
    out = [f"version = {draw(st.integers(0, 10**6))}  # top"]
    for _ in range(draw(st.integers(0, 5))):
        out.append(draw(WS) + "[[surface]]" + draw(COMMENTS.filter(lambda c: "\x01" not in c)))
        keys = draw(st.lists(st.sampled_from(["pattern", "class", "reason", "extra"]),
                             unique=True))
        for key in keys:
            body = draw(STRING_BODY.filter(lambda s: not re.search(r'["\\\x00-\x1f\x7f]', s)))
            out.append(f'{draw(WS)}{key}{draw(WS)}={draw(WS)}"{body}"{draw(WS)}')
        out.append("")
    return "\n".join(out)


@settings(max_examples=300, deadline=None)
@given(plain_documents())
def test_plain_form_takes_the_fast_path_and_equals_tomllib(text: str) -> None:
    plain = plain_toml(text)
    assert plain is not None
    assert plain == tomllib.loads(text)


def test_shipped_definitions_take_the_fast_path() -> None:
    shipped = [
        bundled_template_bytes(),
        (ROOT / "src/plangate/resources/demo-harness/repo/dot-plangate/protected-surfaces.toml")
        .read_bytes(),
    ]
    for data in shipped:
        text = data.decode("utf-8")
        assert plain_toml(text) is not None
        assert plain_toml(text) == tomllib.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        'version = 1\nversion = 1\n',
        'surface = "x"\n[[surface]]\npattern = "a"\n',
        '[[surface]]\npattern = "a"\npattern = "b"\n',
        'version = 01\n',
        'version = +1\n',
        'version = 1_0\n',
        '[[surface]]\npattern = "a\\nb"\n',
        '[[surface]]\r\npattern = "a"\r\n',
        '[[surface]]\npattern = "a\x01"\n',
        '# comment \x7f\nversion = 1\n',
        'a.b = 1\n',
        '[[ surface ]]\n',
        "[[surface]]\npattern = 'literal'\n",
        '\ufeffversion = 1\n',
    ],
)
def test_plain_reader_declines_everything_outside_the_plain_form(text: str) -> None:
    assert plain_toml(text) is None


def test_a_declined_document_still_gets_tomllibs_verdict() -> None:
    # Duplicate keys: the plain reader declines, tomllib refuses the document.
    text = 'version = 1\n[[surface]]\npattern = "a"\npattern = "b"\nclass = "rules"\n'
    with pytest.raises(surfaces._InvalidDefinitionError) as caught:
        parse_surfaces_text(text, "def.toml")
    assert caught.value.reason.code == "SURFACES_INVALID_TOML"
    # A literal string: declined by the plain reader, accepted by tomllib.
    literal = "version = 1\n[[surface]]\npattern = 'CLAUDE.md'\nclass = 'rules'\nreason = 'r'\n"
    resolved = load_surfaces_bytes(literal.encode(), "downstream", "def.toml")
    assert resolved.problem is None
    assert [e.pattern for e in resolved.entries] == ["CLAUDE.md"]


_SURROGATE = re.compile("[\ud800-\udfff]")
_AT_OR_ABOVE_D800 = re.compile("[\ud800-\U0010ffff]")
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(), max_size=12))
def test_ledger_string_tests_agree_with_the_regular_expressions(text: str) -> None:
    assert chain._has_surrogate(text) == (_SURROGATE.search(text) is not None)
    assert chain._has_char_at_or_above_d800(text) == (
        _AT_OR_ABOVE_D800.search(text) is not None
    )
    if _NEEDS_ESCAPE.search(text) is None:
        assert chain._json_string(text) == '"' + text + '"'
    try:
        expected = canonical_text(text)
    except StrictJSONError:
        with pytest.raises(StrictJSONError):
            chain._json_string(text)
        return
    assert chain._json_string(text) == expected


def test_a_hook_process_imports_neither_dataclasses_nor_tomllib() -> None:
    code = (
        "import sys\n"
        "import plangate.hooks.entry, plangate.hooks.hosts.claude, plangate.hooks.service\n"
        "import plangate.ledger, plangate.ledger.sqlite, plangate.surfaces\n"
        "from plangate.surfaces import resolve_surfaces\n"
        "from pathlib import Path\n"
        "resolve_surfaces(Path('.'))\n"
        "print(sorted(m for m in ('dataclasses', 'tomllib') if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        cwd=ROOT / "src",
    )
    assert proc.stdout.strip() == "[]"


def test_stored_row_is_still_a_dataclass_from_chain() -> None:
    import dataclasses

    row = chain.StoredRow(1, "k", "s", "{}", "2026-12-02T10:00:00Z", "p", "e")
    assert dataclasses.is_dataclass(row)
    assert dataclasses.replace(row, seq=2).seq == 2
