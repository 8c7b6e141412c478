"""Symlink targets resolved lexically and physically inside the candidate tree."""

from __future__ import annotations

import pytest

from plangate.evaluation.gate.links import MAX_LINK_HOPS, lexical_target, physical_target


@pytest.mark.parametrize(
    ("link", "target", "expected"),
    [
        ("a/b", "c", "a/c"),
        ("a/b", "../c", "c"),
        ("a/b", "..", ""),
        ("a/b", "../../c", None),
        ("a/b", "/etc/passwd", None),
        ("a/b", "", None),
        ("a/b", "x\\y", None),
        ("a/b", "c\x00", None),
    ],
)
def test_lexical_target(link: str, target: str, expected: str | None) -> None:
    assert lexical_target(link, target) == expected


def test_physical_target_follows_every_link_of_the_tree() -> None:
    links = {"p/q/a": "up/../eval/g.py", "p/q/up": ".."}
    assert lexical_target("p/q/a", links["p/q/a"]) == "p/q/eval/g.py"
    assert physical_target("p/q/a", links) == "eval/g.py"
    assert physical_target("p/q/up", links) == "p"
    # Through "up" (= p), two steps up leave the repository.
    assert physical_target("p/q/b", {"p/q/b": "up/../../x", "p/q/up": ".."}) is None
    assert physical_target("p/a", {"p/a": "s/x", "p/s": "../q", "q": "r"}) == "r/x"
    assert physical_target("p/a", {"p/a": "b//./c"}) == "p/b/c"


@pytest.mark.parametrize(
    "links",
    [
        {"a": "a"},
        {"a": "b", "b": "a"},
        {"a": "b/x", "b": "/abs"},
        {"a": "b/x", "b": "../.."},
        {"a": "b", "b": ""},
    ],
)
def test_physical_target_refuses_loops_and_escapes(links: dict[str, str]) -> None:
    assert physical_target("a", links) is None


def test_a_chain_longer_than_the_hop_bound_is_undecidable() -> None:
    chain = {f"l{i}": f"l{i + 1}" for i in range(MAX_LINK_HOPS + 2)}
    assert physical_target("l0", chain) is None
    bounded = {f"l{i}": f"l{i + 1}" for i in range(MAX_LINK_HOPS + 1)}
    assert physical_target("l0", bounded) == f"l{MAX_LINK_HOPS + 1}"


def test_the_hop_bound_is_forty_links() -> None:
    # 40 links followed after the first one still resolve; the 41st is a loop.
    forty = {f"l{i}": f"l{i + 1}" for i in range(41)}
    assert physical_target("l0", forty) == "l41"
    assert physical_target("l0", {**forty, "l41": "l42"}) is None


@pytest.mark.parametrize(
    ("links", "link"),
    [
        ({}, "missing"),
        ({"a": "/etc"}, "a"),
        ({"a": ""}, "a"),
        ({"a": "x\\y"}, "a"),
        ({"d/a": ".."}, "x"),
    ],
)
def test_an_unknown_link_or_an_unusable_first_target_is_undecidable(
    links: dict[str, str], link: str
) -> None:
    assert physical_target(link, links) is None


def test_the_parent_of_the_root_is_outside_the_repository() -> None:
    assert lexical_target("a", "..") is None
    assert lexical_target("d/a", "../..") is None
    assert lexical_target("d/a", "..") == ""
