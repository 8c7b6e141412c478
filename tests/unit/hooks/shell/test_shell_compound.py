"""Compound commands: judged as a whole, in the order the shell runs them."""

from __future__ import annotations

from plangate.hooks.shell import ShellKind, analyse
from plangate.hooks.shell.order import Placed, order_problems


def test_steps_follow_the_order_of_the_parts() -> None:
    result = analyse("ln -s ../../.claude/settings.json src/a.py && echo x > src/a.py")
    assert [(w.path, w.step, w.relinks) for w in result.writes] == [
        ("src/a.py", 0, True),
        ("src/a.py", 1, False),
    ]


def test_redirection_binds_to_the_command_it_follows() -> None:
    result = analyse("cd src && ls > ../out.txt")
    assert [w.path for w in result.writes] == ["src/../out.txt"]


def test_cd_is_followed_only_along_and_chains() -> None:
    assert [w.path for w in analyse("cd a && cd b && touch c").writes] == ["a/b/c"]
    assert analyse("cd a || touch c").kind == ShellKind.UNCLASSIFIED
    assert analyse("cd a; touch c").kind == ShellKind.UNCLASSIFIED


def test_a_later_target_under_an_earlier_relink_is_undecidable() -> None:
    placed = [
        Placed(0, True, "/r/src/a.py", "src/a.py"),
        Placed(1, False, "/r/src/a.py", "src/a.py"),
    ]
    assert order_problems(placed)
    under = [Placed(0, True, "/r/d", "d"), Placed(1, False, "/r/d/x", "d/x")]
    assert order_problems(under)
    resolved_only = [Placed(0, True, "/r/lnk", "src"), Placed(1, False, "/r/src/x", "src/x")]
    assert order_problems(resolved_only)


def test_content_writes_and_unrelated_paths_are_decidable() -> None:
    assert not order_problems([Placed(0, False, "/r/a", "a"), Placed(1, False, "/r/a", "a")])
    assert not order_problems([Placed(0, True, "/r/a", "a"), Placed(1, False, "/r/b", "b")])
    assert not order_problems([Placed(1, True, "/r/a", "a"), Placed(0, False, "/r/a", "a")])


def test_below_a_relinked_directory_means_below_it_as_a_path() -> None:
    # A trailing slash on the relinked path still covers what lies below it...
    assert order_problems([Placed(0, True, "/r/d/", "d/"), Placed(1, False, "/r/d/x", "d/x")])
    # ...and a sibling that only shares the name's prefix is not below it.
    assert not order_problems(
        [Placed(0, True, "/r/d", "d"), Placed(1, False, "/r/dx", "dx")]
    )
    assert not order_problems(
        [Placed(0, True, "/r/l", "d"), Placed(1, False, "/r/lx", "dx")]
    )
