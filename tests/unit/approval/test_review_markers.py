"""Adversarial review: a second marker hidden from the LF-only line reader.

A marker-like line that another reader (an editor, ``str.splitlines``, a
review tool) shows as its own line must make the evidence ambiguous, never be
skipped so that a different marker line decides alone.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plangate.plan.markers import C1, C2, MarkerState, read_marker, replace_marker

PLAN = "sha256:" + "a" * 64
PASS = f"C1-VERDICT: PASS plan={PLAN}"
FAIL = f"C1-VERDICT: FAIL plan={PLAN}"

HIDDEN_PREFIXES = {
    "CR alone": "note\r",
    "vertical tab": "note\x0b",
    "form feed": "note\x0c",
    "file separator": "note\x1c",
    "NEL U+0085": "note\x85",
    "LINE SEPARATOR U+2028": "note\u2028",
    "PARAGRAPH SEPARATOR U+2029": "note\u2029",
    "zero-width space": "\u200b",
    "byte-order mark": "\ufeff",
    "NUL": "\x00",
    "word joiner": "\u2060",
    "right-to-left mark": "\u200f",
    "combining grapheme joiner": "\u034f",
    "Hangul filler": "\u3164",
    "blank braille pattern": "\u2800",
}


@pytest.mark.parametrize("hide", HIDDEN_PREFIXES.values(), ids=HIDDEN_PREFIXES.keys())
def test_a_hidden_fail_marker_beside_a_pass_marker_is_ambiguous(hide: str) -> None:
    text = f"# Self review\n{hide}{FAIL}\n\n{PASS}\n"
    result = read_marker(C1, text.encode(), PLAN)
    assert result.state is MarkerState.DUPLICATE
    assert result.reason is not None
    assert result.reason.code == "EVIDENCE_C1_MARKER_DUPLICATE"


def test_full_width_marker_letters_are_marker_like() -> None:
    text = f"\uff23\uff11-VERDICT: FAIL plan={PLAN}\n{PASS}\n"
    assert read_marker(C1, text.encode(), PLAN).state is MarkerState.DUPLICATE


def test_an_undecodable_byte_before_a_marker_does_not_hide_it() -> None:
    data = b"\xff" + FAIL.encode() + b"\n" + PASS.encode() + b"\n"
    assert read_marker(C1, data, PLAN).state is MarkerState.DUPLICATE


def test_crlf_file_with_one_marker_stays_malformed_not_duplicate() -> None:
    # CRLF splits into the same lines for both readers: nothing is hidden.
    result = read_marker(C1, f"intro\r\n{PASS}\r\n".encode(), PLAN)
    assert result.state is MarkerState.MALFORMED


def test_ordinary_non_ascii_prose_is_not_a_marker() -> None:
    text = f"判定: PASS\u3000レビュー完了\n{PASS}\n"
    assert read_marker(C1, text.encode(), PLAN).state is MarkerState.VALID


def test_replace_marker_removes_hidden_lookalikes_too() -> None:
    data = f"\u200b{FAIL}\n".encode()
    out = replace_marker(data, C1, PASS)
    assert read_marker(C1, out, PLAN).state is MarkerState.VALID


@given(
    st.sampled_from(sorted(HIDDEN_PREFIXES.values())),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n"), max_size=20),
)
def test_any_prose_plus_a_hidden_marker_never_validates(hide: str, prose: str) -> None:
    text = f"{prose}\n{hide}C2-VERDICT: reject plan={PLAN}\nC2-VERDICT: approve plan={PLAN}\n"
    assert read_marker(C2, text.encode(), PLAN).state is not MarkerState.VALID


@pytest.mark.parametrize("brk", ["\r", "\u2028", "\x85", "\x0c"])
def test_replace_marker_removes_a_marker_behind_another_line_break(brk: str) -> None:
    data = f"prose{brk}{FAIL}{brk}more prose\n".encode()
    out = replace_marker(data, C1, PASS)
    assert read_marker(C1, out, PLAN).state is MarkerState.VALID
    assert f"prose{brk}more prose".encode() in out
