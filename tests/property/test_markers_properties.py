"""Properties of the evidence marker grammar, the UTC timestamp check and the plan
package hash shortcut, over generated inputs.

Kept apart from the markers' unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from plangate.plan.markers import C1, C2, MarkerState, marker_line, read_marker
from support.branches import Branches

H = "sha256:" + hashlib.sha256(b"plan").hexdigest()
PLAN = "sha256:" + "a" * 64
HIDDEN_PREFIXES = (
    "note\r",
    "note\x0b",
    "note\x0c",
    "note\x1c",
    "note\x85",
    "note\u2028",
    "note\u2029",
    "\u200b",
    "\ufeff",
    "\x00",
    "\u2060",
    "\u200f",
    "\u034f",
    "\u3164",
    "\u2800",
)


def state(data: bytes, kind=C1, current: str | None = H) -> MarkerState:
    return read_marker(kind, data, current).state


prose = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
    lambda t: "verdict" not in t.casefold()
)


@given(before=prose, after=prose)
def test_prose_around_a_single_marker_never_changes_the_verdict(before: str, after: str) -> None:
    text = f"{before}\n{marker_line(C1, 'PASS', H)}\n{after}"
    assert state(text.encode()) is MarkerState.VALID


@given(extra=st.sampled_from(["PASS", "FAIL", "x"]), before=prose)
def test_any_second_marker_line_is_ambiguous(extra: str, before: str) -> None:
    text = f"{before}\n{marker_line(C1, 'PASS', H)}\nC1-VERDICT: {extra} plan={H}\n"
    assert state(text.encode()) is MarkerState.DUPLICATE


@given(digest=st.text("0123456789abcdef", min_size=64, max_size=64))
def test_only_the_current_plan_hash_is_valid(digest: str) -> None:
    marker = f"C1-VERDICT: PASS plan=sha256:{digest}\n".encode()
    expected = MarkerState.VALID if "sha256:" + digest == H else MarkerState.STALE
    assert state(marker) is expected


@given(st.datetimes(min_value=__import__("datetime").datetime(1, 1, 1)))
def test_issued_at_accepts_every_real_instant(moment) -> None:
    from plangate.clock import is_utc_timestamp

    assert is_utc_timestamp(moment.strftime("%Y-%m-%dT%H:%M:%SZ").rjust(20, "0"))


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "pbi-input.md",
                "plan.md",
                "todo.md",
                "test-cases.md",
                "review-self.md",
                "review-external.md",
            ]
        ),
        st.text("0123456789abcdef", min_size=64, max_size=64).map(lambda h: "sha256:" + h),
    )
)
def test_plan_package_hash_shortcut_equals_the_canonical_digest(hashes: dict[str, str]) -> None:
    from plangate.canonical import digest
    from plangate.plan.package import plan_package_hash

    assert plan_package_hash(hashes) == digest(hashes)


@given(
    st.sampled_from(HIDDEN_PREFIXES),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n"), max_size=20),
)
def test_any_prose_plus_a_hidden_marker_never_validates(hide: str, prose: str) -> None:
    text = f"{prose}\n{hide}C2-VERDICT: reject plan={PLAN}\nC2-VERDICT: approve plan={PLAN}\n"
    assert read_marker(C2, text.encode(), PLAN).state is not MarkerState.VALID


GRAMMAR_ORACLE = {
    kind.name: __import__("re").compile(
        rf"{kind.name}-VERDICT: (\S+) plan=(sha256:[0-9a-f]{{64}})"
    )
    for kind in (C1, C2)
}
"""The marker grammar as a regular expression: the reference the hand-written reader
must agree with on every line."""

_GRAMMAR_PIECES = st.sampled_from(
    [
        "C1-VERDICT: ", "C2-VERDICT: ", "PASS", "approve", " plan=", "sha256:", "a" * 64,
        "0123456789abcdef" * 4, "A" * 64, " ", "\t", "\u00a0", "\u3000", "\x1c", "\x00",
        "\r", "x", "plan=", "g", "é", "\u2028",
    ]
)


@given(st.lists(_GRAMMAR_PIECES, max_size=8).map("".join), st.sampled_from([C1, C2]))
def test_full_grammar_agrees_with_the_regular_expression(line, kind) -> None:
    from plangate.plan.markers import full_grammar

    match = GRAMMAR_ORACLE[kind.name].fullmatch(line)
    expected = None if match is None else (match.group(1), match.group(2))
    assert full_grammar(line, kind) == expected


@given(st.text(max_size=90), st.sampled_from([C1, C2]))
def test_full_grammar_agrees_on_any_text(tail, kind) -> None:
    from plangate.plan.markers import full_grammar

    for line in (tail, f"{kind.name}-VERDICT: {tail}", f"{kind.name}-VERDICT: {tail} plan={PLAN}",
                 f"{kind.name}-VERDICT: PASS plan=sha256:{tail}"):
        match = GRAMMAR_ORACLE[kind.name].fullmatch(line)
        expected = None if match is None else (match.group(1), match.group(2))
        assert full_grammar(line, kind) == expected


plain_lines = st.lists(
    st.one_of(
        st.sampled_from(
            [
                marker_line(C1, "PASS", H),
                marker_line(C2, "approve", H),
                "c1-verdict: pass",
                "  C1-VERDICT: PASS plan=" + H,
                "C1-VERDICT",
                "prose C1-VERDICT: in a sentence",
                "c2-VERDICTc1-verdict",
                "",
                "   ",
            ]
        ),
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40),
    ),
    max_size=8,
)
any_lines = st.lists(
    st.one_of(
        st.sampled_from([marker_line(C1, "PASS", H), "\tC1-VERDICT: x", "C1-VERDICT\r", ""]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    ),
    max_size=6,
)


@given(lines=plain_lines)
def test_the_plain_search_matches_the_general_one_on_plain_files(lines: list[str]) -> None:
    from plangate.plan.markers import _plain_candidates, marker_candidates

    text = "\n".join(lines)
    for prefix in ("c1-verdict", "c2-verdict"):
        assert _plain_candidates(text.encode(), text, prefix) == marker_candidates(text, prefix)


def test_the_plain_search_answers_only_for_plain_files_and_then_alike() -> None:
    from plangate.plan.markers import _plain_candidates, marker_candidates

    seen = Branches()

    @given(lines=st.one_of(any_lines, plain_lines))
    def check(lines: list[str]) -> None:
        seen.example()
        data = "\n".join(lines).encode()
        text = data.decode("utf-8", errors="replace")
        plain = _plain_candidates(data, text, "c1-verdict")
        if seen.reached("plain", plain is not None):
            assert all(0x20 <= b < 0x7F or b == 0x0A for b in data)
            assert plain == marker_candidates(text, "c1-verdict")
        else:
            seen.reached("not plain", True)

    check()
    seen.assert_share("plain")
    seen.assert_share("not plain")
