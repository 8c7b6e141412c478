"""The deny-phrase scan finds a phrase exactly where testing each phrase in turn does.

:func:`plangate.plan.files_section.contains_deny_phrase` scans a text once with one
expression (a trie of the folded phrases); a phrase it missed would widen a scope.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.plan.files_section import (
    DENY_PHRASES,
    _deny_fold,
    _folded_phrases,
    contains_deny_phrase,
)

PIECES = st.one_of(
    st.sampled_from(DENY_PHRASES),
    st.sampled_from(DENY_PHRASES).map(lambda p: p[: len(p) // 2]),
    st.sampled_from(DENY_PHRASES).map(lambda p: p[len(p) // 2 :]),
    st.sampled_from(DENY_PHRASES).map(str.upper),
    st.text(alphabet="adeghilmnorstu '-`\u2019\u00a0\u200b", max_size=6),
    st.text(max_size=4),
)
TEXT = st.lists(PIECES, max_size=6).map("".join)


def _one_at_a_time(text: str) -> bool:
    folded = _deny_fold(text)
    return any(phrase in folded for phrase in _folded_phrases())


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_the_scan_is_the_phrase_by_phrase_test(text: str) -> None:
    assert contains_deny_phrase(text) == _one_at_a_time(text)


def test_every_phrase_is_found_inside_other_words() -> None:
    for phrase in DENY_PHRASES:
        assert contains_deny_phrase(f"x {phrase} y"), phrase
        assert contains_deny_phrase(f"x{phrase.upper()}y") == _one_at_a_time(f"x{phrase.upper()}y")
