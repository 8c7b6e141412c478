"""The option table reader, word by word (``plangate.hooks.shell.options``)."""

from __future__ import annotations

import pytest

from plangate.hooks.shell.options import Parsed, Spec, parse_options, spec
from plangate.hooks.shell.parse import Word


def w(*texts: str) -> list[Word]:
    return [Word(text) for text in texts]


def glob(text: str) -> Word:
    return Word(text, glob=True)


@pytest.mark.parametrize("table", [Spec(), spec()], ids=["Spec()", "spec()"])
def test_an_empty_table_knows_no_option(table: Spec) -> None:
    for word in ("-x", "-o", "-5", "--x", "--long"):
        assert parse_options(table, w(word)) == f"unknown option {word}"
    # Options may follow operands by default (GNU), and '-NUM' is no option by default.
    assert table.permute is True
    assert table.numeric is False
    assert parse_options(table, w("a", "b")) == Parsed((), ("a", "b"))


def test_options_may_follow_operands_unless_the_table_says_no() -> None:
    assert parse_options(spec("v"), w("a", "-v")) == Parsed((("-v", None),), ("a",))
    assert parse_options(spec("v", permute=False), w("a", "-v")) == Parsed((), ("a", "-v"))


def test_a_numeric_option() -> None:
    assert parse_options(spec(numeric=True), w("-5", "f")) == Parsed((("-NUM", "5"),), ("f",))
    assert parse_options(spec(), w("-5")) == "unknown option -5"


def test_short_options_with_values() -> None:
    table = spec("v", "o", "i")
    assert parse_options(table, w("-vofile", "-i")) == Parsed(
        (("-v", None), ("-o", "file"), ("-i", None)), ()
    )
    assert parse_options(table, w("-o", "", "x")) == Parsed((("-o", ""),), ("x",))
    assert parse_options(table, w("-ibak")) == Parsed((("-i", "bak"),), ())
    assert parse_options(table, w("-o")) == "-o needs a value"
    assert parse_options(table, [Word("-o"), glob("*.txt")]) == "the value of -o is a glob"
    assert parse_options(table, [Word("-o"), Word(None, problem="a parameter expansion")]) == (
        "a word is not literal: a parameter expansion"
    )


def test_long_options_by_their_full_name() -> None:
    table = spec(long="verbose", long_args="file", long_optional="color")
    assert parse_options(table, w("--verbose", "--file", "f", "--file=g", "--color")) == Parsed(
        (("--verbose", None), ("--file", "f"), ("--file", "g"), ("--color", None)), ()
    )
    assert parse_options(table, w("--color=never")) == Parsed((("--color", "never"),), ())
    assert parse_options(table, w("--verbose=yes")) == "--verbose takes no value"
    assert parse_options(table, w("--file")) == "--file needs a value"
    assert parse_options(table, [Word("--file"), glob("*")]) == "the value of --file is a glob"
    assert parse_options(table, w("--verb")) == "unknown option --verb"


def test_a_dash_alone_and_an_empty_word_are_operands() -> None:
    assert parse_options(spec("v"), w("-", "", "-v")) == Parsed((("-v", None),), ("-", ""))


def test_double_dash_ends_the_options() -> None:
    assert parse_options(spec("x"), w("--", "-x", "--")) == Parsed((), ("-x", "--"))


def test_glob_operands_are_marked_by_their_index() -> None:
    parsed = parse_options(spec(), [Word("a"), glob("b*"), glob("x?"), Word("c")])
    assert parsed == Parsed((), ("a", "b*", "x?", "c"), frozenset({1, 2}))


@pytest.mark.parametrize("text", ["-*", "*", "?x", "[ab]c"])
def test_a_glob_that_may_expand_to_an_option_is_refused(text: str) -> None:
    assert parse_options(spec(), [Word("--"), glob(text)]) == (
        f"the glob {text!r} may expand to an option"
    )


def test_a_glob_in_an_option_position_is_refused() -> None:
    assert parse_options(spec("x"), [glob("-x*")]) == "the glob '-x*' is in an option position"
