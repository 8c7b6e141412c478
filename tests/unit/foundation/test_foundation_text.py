"""Invisible-text folding and identity skeletons: what a reader can tell apart."""

from __future__ import annotations

import pytest

from plangate.text import folded_identity, identity_skeleton, is_blank, visible_text


@pytest.mark.parametrize(
    "spelling",
    [
        "model\u200b-a",
        "\ufeffmodel-a",
        "mo\u00addel-a",
        "\uff4d\uff4f\uff44\uff45\uff4c-a",
        "MODEL-A",
        "model-a\u2060",
    ],
)
def test_folded_identity_sees_through_invisible_and_full_width_spellings(spelling: str) -> None:
    assert folded_identity(spelling) == "model-a"


@pytest.mark.parametrize(
    "spelling",
    [
        "model-\u0430",  # Cyrillic a
        "m\u043edel-a",  # Cyrillic o
        "MODEL-\u0391",  # Greek capital alpha
        "mod\u00e9l-a",  # an accent
        "mode\u0301l-a",  # a combining accent
        "\u043c\u043e\u0434\u0435l-a".replace("\u0434", "d"),  # Cyrillic m, o, e
    ],
)
def test_identity_skeleton_maps_look_alike_letters_and_accents(spelling: str) -> None:
    assert identity_skeleton(spelling) == "model-a"


def test_identity_skeleton_keeps_what_a_reader_tells_apart() -> None:
    assert identity_skeleton("model-b") != identity_skeleton("model-a")
    assert identity_skeleton("m0del-a") != identity_skeleton("model-a")
    assert identity_skeleton("ctx-1") == "ctx-1"  # plain ASCII is only case-folded


def test_blank_and_visible_text() -> None:
    assert is_blank("\u200b\u2800 ")
    assert not is_blank("x\u200b")
    assert visible_text("a\u200bb") == "ab"
