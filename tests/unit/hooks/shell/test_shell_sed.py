"""The sed script scan, script by script (``plangate.hooks.shell.sed.scan``)."""

from __future__ import annotations

import pytest

from plangate.hooks.shell.sed import scan

EDITS_ONLY = [
    "p", "=", "1d", "$d", "1~2p", "2,4p", "2,+3p", "2,~4p", "/x/p", "/x/Ip", "/x/Mp",
    "\\%x%p", "/x/,/y/d", "1,/y/d", "1!p", "1!!p", "1 ! p", "# c\np", "{p}", "1{p;}",
    "l", "l 5", "l5;p", "q", "q5", "Q 3", "L", "b", "b end", "t x", "T", "v 4.2", "v",
    ":a", "r f", "R f", "a text", "i text", "c text", "s/a/b/", "s/a/b/g",
    "s/a/b/2", "s/a/b/gpiImM3", "s/a\\xb/c/", "/a\\/b/p", "s|a|b|", "s/a/\\/b/", "y/ab/cd/", "s/a/b/ ;p",
    "s/a/b/#c", "s/a/b/;p", "s/a/b/\tp", "s/a/b/\np", "s/a/b/g\np", "sxaxbx", "\\xaxp",
    "2, 4p", "2, /y/p", "2, +3p", "{s/a/b/}", "/x\\/y/p", "n;N;D;P;g;G;h;H;x",
    "F", "z", "  \t p", "p;;p", "p\n\np", "2,3 p", "/a/ ,/b/ p", "$!N", "",
]  # fmt: skip


@pytest.mark.parametrize("script", EDITS_ONLY)
def test_scripts_that_only_edit_the_stream(script: str) -> None:
    assert scan(script).problem == ""


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        ("w f", "a sed 'w' command writes a file"),
        ("W f", "a sed 'w' command writes a file"),
        ("1,/x/w f", "a sed 'w' command writes a file"),
        ("bx;w f", "a sed 'w' command writes a file"),
        ("b;w f", "a sed 'w' command writes a file"),
        ("1\np", "an unknown sed command '\\n'"),
        ("/x\\", "a sed address cannot be read"),
        ("b x w f", "a sed 'w' command writes a file"),
        ("b\tx\tw f", "a sed 'w' command writes a file"),
        (":a;w f", "a sed 'w' command writes a file"),
        ("v 4.2;w f", "a sed 'w' command writes a file"),
        ("r f\nw g", "a sed 'w' command writes a file"),
        ("a x\nw g", "a sed 'w' command writes a file"),
        ("# c\nw g", "a sed 'w' command writes a file"),
        ("q;w f", "a sed 'w' command writes a file"),
        ("l 5;w f", "a sed 'w' command writes a file"),
        ("1!{w f\n}", "a sed 'w' command writes a file"),
        ("e", "a sed 'e' command runs a command"),
        ("e ls", "a sed 'e' command runs a command"),
        ("s/a/b/w f", "a sed 's///w' flag writes a file"),
        ("s/a/b/gw f", "a sed 's///w' flag writes a file"),
        ("s/a/b/e", "a sed 's///e' flag runs a command"),
        ("s/a/b/x", "an unknown sed 's' flag 'x'"),
        ("s/a/b/g\\", "an unknown sed 's' flag '\\\\'"),
        ("s\na\nb\n", "a sed 's' command cannot be read"),
        ("s\\a\\b\\", "a sed 's' command cannot be read"),
        ("s", "a sed 's' command cannot be read"),
        ("s/a/b", "a sed 's' command cannot be read"),
        ("s/a\nb/c/", "a sed 's' command cannot be read"),
        ("s/a\\", "a sed 's' command cannot be read"),
        ("y/ab/cd", "a sed 'y' command cannot be read"),
        ("y", "a sed 'y' command cannot be read"),
        ("y/a/b/k", "an unknown sed command 'k'"),
        ("k", "an unknown sed command 'k'"),
        ("1", "a sed address without a command"),
        ("1,", "a sed address without a command"),
        ("1!", "a sed address without a command"),
        ("/x", "a sed address cannot be read"),
        ("/x/,/y", "a sed address cannot be read"),
        ("\\", "a sed address cannot be read"),
        ("\\\n", "a sed address cannot be read"),
        ("\\\\x\\p", "a sed address cannot be read"),
        ("\\\nx\np", "a sed address cannot be read"),
        ("{p", "an unbalanced '{' in a sed script"),
        ("{{p}", "an unbalanced '{' in a sed script"),
        ("}", "an unbalanced '}' in a sed script"),
        ("p}", "an unbalanced '}' in a sed script"),
        ("s/a/b/}", "an unbalanced '}' in a sed script"),
    ],
)
def test_scripts_that_reach_outside_the_stream_or_cannot_be_read(
    script: str, problem: str
) -> None:
    assert scan(script).problem == problem


def test_the_scan_counts_the_characters_it_visits() -> None:
    assert scan("").steps == 0
    assert scan("p").steps == 1
    assert scan("s/a/b/g").steps == len("s/a/b/g")
    assert scan("1,3p;w f").steps == len("1,3p;w")


@pytest.mark.parametrize(
    ("script", "problem", "steps"),
    [
        # the scan stops at the first character that makes the script unreadable
        ("/x\\", "a sed address cannot be read", 4),
        ("\\", "a sed address cannot be read", 2),
        ("\\\\x", "a sed address cannot be read", 2),
        ("s", "a sed 's' command cannot be read", 2),
        ("s\\a", "a sed 's' command cannot be read", 2),
        ("s\na", "a sed 's' command cannot be read", 2),
    ],
)
def test_a_script_that_cannot_be_read_is_not_read_further(
    script: str, problem: str, steps: int
) -> None:
    assert scan(script) == (problem, steps)
