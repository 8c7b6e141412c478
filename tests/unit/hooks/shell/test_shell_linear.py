"""Work on crafted input grows linearly (work counts, never wall-clock time)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from plangate.hooks.shell import ShellKind, analyse
from plangate.hooks.shell.parse import ParseWork, parse
from plangate.hooks.shell.sed import scan


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "s/" + "\\\\" * n + "/x/",
        lambda n: "s/" + "\\" * n + "/x/" + "\\/" * n,
        lambda n: "/" + "\\/" * n + "/Ip;" * 3,
        lambda n: "s/a/b/;" * n,
        lambda n: "b" + "x" * n + ";p",
        lambda n: ":a;ba;" * n,
        lambda n: "v " + "4" * n + " p",
    ],
)
def test_sed_scan_work_is_linear(make) -> None:
    steps = [scan(make(n)).steps for n in (1000, 2000, 4000)]
    for small, large in pairwise(steps):
        assert large <= 2 * small + 16


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "sed -e 's/" + "\\\\" * n + "/x/' f",
        lambda n: "echo " + "$(" * (n // 10) + "x" + ")" * (n // 10),
        lambda n: "echo " + '\'a\' "b\\"" ' * n,
        lambda n: 'echo "' + "\\" * n,
        lambda n: "{" * n,
    ],
)
def test_parser_work_is_linear(make) -> None:
    counts = []
    for n in (2000, 4000, 8000):
        work = ParseWork()
        parse(make(n), work)
        counts.append(work.callbacks)
    for small, large in pairwise(counts):
        assert large <= 2 * small + 50


def test_deep_nesting_and_huge_commands_are_unclassified_not_crashes() -> None:
    assert analyse("echo " + "$(" * 500 + "x" + ")" * 500).kind == ShellKind.UNCLASSIFIED
    assert analyse("sh -c " + "'" + "$(" * 500 + "x" + ")" * 500 + "'").kind == (
        ShellKind.UNCLASSIFIED
    )
    assert parse("x" * (300 * 1024)).problems
