"""A non-empty CDPATH: a relative ``cd`` may enter a directory CDPATH names."""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse


@pytest.mark.parametrize(
    "command",
    [
        "cd src && touch app.py",
        "cd src/pkg && echo x > a.py",
        "command cd src && touch app.py",
        "cd -L src && touch app.py",
        "cd -P src && touch app.py",
        "cd src && sh -c 'touch app.py'",
    ],
)
def test_with_cdpath_a_relative_cd_moves_to_an_unknown_directory(command: str) -> None:
    result = analyse(command, cdpath=True)
    assert result.kind == ShellKind.UNCLASSIFIED
    assert any("unknown directory" in p for p in result.problems), result.problems
    assert analyse(command).kind == ShellKind.WRITES  # without CDPATH: ./src


@pytest.mark.parametrize(
    "command",
    [
        "cd ./src && touch app.py",
        "cd ../repo/src && touch app.py",
        "cd .. && touch app.py",
        "cd . && touch app.py",
        "cd /abs/src && touch app.py",
        "touch src/app.py",
    ],
)
def test_with_cdpath_a_cd_starting_with_dot_or_slash_is_still_followed(command: str) -> None:
    # POSIX: CDPATH is not searched for an operand starting with '/', '.' or '..'.
    result = analyse(command, cdpath=True)
    assert result.kind == ShellKind.WRITES, result.problems
    assert result.writes == analyse(command).writes


def test_with_cdpath_a_read_only_line_stays_read_only() -> None:
    assert analyse("cd src && ls", cdpath=True).kind == ShellKind.READ_ONLY
