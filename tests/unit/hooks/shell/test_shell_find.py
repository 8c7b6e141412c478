"""``find``: the primaries it may use, each listed here by hand (not read from the tables)."""

from __future__ import annotations

import shlex

import pytest

from plangate.hooks.shell import ShellKind, analyse

NO_ARGUMENT = [
    "-print", "-print0", "-ls", "-prune", "-quit", "-true", "-false", "-follow", "-depth",
    "-xdev", "-mount", "-noleaf", "-nouser", "-nogroup", "-empty", "-readable", "-writable",
    "-executable", "-daystart", "-not", "-a", "-o", "-and", "-or", "!", "(", ")", ",",
    "-ignore_readdir_race", "-noignore_readdir_race",
]  # fmt: skip
ONE_ARGUMENT = [
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname",
    "-regex", "-iregex", "-type", "-xtype", "-maxdepth", "-mindepth", "-newer", "-anewer",
    "-cnewer", "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-size", "-user",
    "-group", "-uid", "-gid", "-perm", "-links", "-inum", "-samefile", "-regextype", "-used",
    "-fstype", "-printf", "-context", "-newermt", "-newerBa",
]  # fmt: skip


def _read_only(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.READ_ONLY, (command, result.problems)
    assert result.programs == ("find",)


@pytest.mark.parametrize("primary", NO_ARGUMENT)
def test_each_primary_without_an_argument_is_read_only(primary: str) -> None:
    _read_only(f"find . -name x {shlex.quote(primary)} -print")


@pytest.mark.parametrize("primary", ONE_ARGUMENT)
def test_each_primary_with_an_argument_is_read_only(primary: str) -> None:
    _read_only(f"find src {primary} v -print")
    result = analyse(f"find src {primary}")
    assert result.problems == (f"find {primary} needs a value",)


@pytest.mark.parametrize("option", ["-H", "-L", "-P"])
def test_options_before_the_starting_points(option: str) -> None:
    _read_only(f"find {option} src docs -name x")
    _read_only(f"find {option} -P src")
    _read_only(f"find {option}")
    _read_only(f"find -H {option}")
    result = analyse(f"find {option} -delete")
    assert result.problems == ("find -delete is not a primary the classifier allows",)


@pytest.mark.parametrize("opener", ["!", "(", ")", ","])
def test_an_operator_ends_the_starting_points(opener: str) -> None:
    # Read as a starting point it would be a directory name; read as an operator, it
    # begins the expression, where the next word must be a known primary.
    result = analyse(f"find {shlex.quote(opener)} src")
    assert result.problems == ("find src is not a primary the classifier allows",)


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("find *", "find: the glob '*' may expand to a primary"),
        ("find * -delete", "find: the glob '*' may expand to a primary"),
        ("find . -name * -delete", "find: the value of -name is a glob"),
        ("find . -print * -delete", "find: the glob '*' is in the expression"),
        ("find ?x", "find: the glob '?x' may expand to a primary"),
        ("find [ab]", "find: the glob '[ab]' may expand to a primary"),
        ("find . -name *.py", "find: the value of -name is a glob"),
        ("find . -path ?x -print", "find: the value of -path is a glob"),
        ("find . -name x*.py -print", "find: the value of -name is a glob"),
        ("find . -name [-]x", "find: the value of -name is a glob"),
        ("find . -print *.py", "find: the glob '*.py' is in the expression"),
        ("find $D -print", "find: a word is not literal: a parameter expansion"),
        ("find . -newermtx 1", "find -newermtx is not a primary the classifier allows"),
        ("find . -newerm 1", "find -newerm is not a primary the classifier allows"),
        ("find . -delete", "find -delete is not a primary the classifier allows"),
        ("find . -fprint0 out", "find -fprint0 is not a primary the classifier allows"),
        ("find . -print -delete", "find -delete is not a primary the classifier allows"),
    ],
)
def test_what_find_may_not_do_is_named(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED
    assert result.problems == (problem,)


def test_a_glob_that_cannot_expand_to_a_primary_is_read_only() -> None:
    _read_only("find src* -name x")
    _read_only("find . -name '*.py' -print")
