"""Evidence marker grammar (pure), with literals (properties: tests/property).

Adversarial review: a second marker hidden from the LF-only line reader.

A marker-like line that another reader (an editor, ``str.splitlines``, a
review tool) shows as its own line must make the evidence ambiguous, never be
skipped so that a different marker line decides alone.
"""

from __future__ import annotations

import hashlib

import pytest

from plangate.plan.markers import C1, C2, MarkerState, marker_line, read_marker, replace_marker

H = "sha256:" + hashlib.sha256(b"plan").hexdigest()


def state(data: bytes, kind=C1, current: str | None = H) -> MarkerState:
    return read_marker(kind, data, current).state


def test_valid_markers() -> None:
    assert state(f"x\nC1-VERDICT: PASS plan={H}\n".encode()) is MarkerState.VALID
    assert state(f"C2-VERDICT: approve plan={H}".encode(), C2) is MarkerState.VALID


@pytest.mark.parametrize(
    "text,expected",
    [
        ("", MarkerState.MISSING),
        ("判定: PASS\n", MarkerState.MISSING),
        (f"C1-VERDICT: FAIL plan={H}\n", MarkerState.NOT_ACCEPTED),
        (f"C1-VERDICT: pass plan={H}\n", MarkerState.NOT_ACCEPTED),
        (f"C1-VERDICT: PASS plan={H}\nC1-VERDICT: PASS plan={H}\n", MarkerState.DUPLICATE),
        (
            f"C1-VERDICT: PASS plan={H}\nC1-VERDICT: PASS plan=sha256:dead extra\n",
            MarkerState.DUPLICATE,
        ),
        (f"C1-VERDICT: PASS plan={H}\r\n", MarkerState.MALFORMED),
        (f"C1-VERDICT:  PASS plan={H}\n", MarkerState.MALFORMED),
        (f"C1-VERDICT: PASS  plan={H}\n", MarkerState.MALFORMED),
        (f"C1-VERDICT: PASS plan={H.upper()}\n", MarkerState.MALFORMED),
        (f"C1-VERDICT: PASS plan={H[7:]}\n", MarkerState.MALFORMED),
        (f"C1-VERDICT\uff1aPASS plan={H}\n", MarkerState.MALFORMED),
        (f"C1-VERDICT: PASS plan=sha256:{'0' * 64}\n", MarkerState.STALE),
        (f"> C1-VERDICT: PASS plan={H}\n", MarkerState.MISSING),
    ],
)
def test_marker_states(text: str, expected: MarkerState) -> None:
    assert state(text.encode()) is expected


def test_unreadable_file_and_unreadable_plan() -> None:
    assert read_marker(C1, None, H).state is MarkerState.FILE_MISSING
    assert state(f"C1-VERDICT: PASS plan={H}\n".encode(), current=None) is MarkerState.UNDECIDABLE


def test_c1_marker_in_c2_file_does_not_count() -> None:
    assert state(f"C1-VERDICT: approve plan={H}\n".encode(), C2) is MarkerState.MISSING


def test_replace_marker_keeps_prose_and_leaves_exactly_one() -> None:
    old = f"# Review\n\nAll good.\nC1-VERDICT: FAIL plan={H}\nc1-verdict: junk\n".encode()
    new = replace_marker(old, C1, marker_line(C1, "PASS", H))
    assert b"All good." in new
    assert state(new) is MarkerState.VALID
    assert new.count(b"VERDICT") == 1


def test_marker_line_rejects_unknown_verdicts() -> None:
    with pytest.raises(ValueError):
        marker_line(C1, "approve", H)


@pytest.mark.parametrize(
    "value,ok",
    [
        ("2024-02-29T00:00:00Z", True),
        ("2000-02-29T23:59:59Z", True),
        ("2023-02-29T00:00:00Z", False),
        ("1900-02-29T00:00:00Z", False),
        ("2026-04-31T00:00:00Z", False),
        ("2026-13-01T00:00:00Z", False),
        ("2026-12-31T24:00:00Z", False),
        ("2026-12-31T23:60:00Z", False),
        ("2026-12-31T23:59:60Z", False),
        ("0000-01-01T00:00:00Z", False),
        ("2026-12-31T23:59:59", False),
        ("2026-12-31 23:59:59Z", False),
    ],
)
def test_issued_at_calendar(value: str, ok: bool) -> None:
    from plangate.clock import is_utc_timestamp

    assert is_utc_timestamp(value) is ok


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


@pytest.mark.parametrize(
    "hidden",
    [
        "C1-\x00VERDICT: FAIL",
        "C1\x7f-VERDICT: FAIL",
        "C1-VERD\x00ICT: FAIL",
        "C1-VER\x1bDICT: FAIL",
        "\x01C1-VERDICT: FAIL",
    ],
)
def test_a_control_character_inside_a_marker_does_not_hide_it(hidden: str) -> None:
    # A reader does not see NUL, DEL or ESC: the line reads as a second verdict.
    text = f"# Self review\n{hidden} plan={PLAN}\n\n{PASS}\n"
    result = read_marker(C1, text.encode(), PLAN)
    assert result.state is MarkerState.DUPLICATE


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


@pytest.mark.parametrize("brk", ["\r", "\u2028", "\x85", "\x0c"])
def test_replace_marker_removes_a_marker_behind_another_line_break(brk: str) -> None:
    data = f"prose{brk}{FAIL}{brk}more prose\n".encode()
    out = replace_marker(data, C1, PASS)
    assert read_marker(C1, out, PLAN).state is MarkerState.VALID
    assert f"prose{brk}more prose".encode() in out


# --- Detection power: tests that pin what a mutation of markers.py would change.

PASS_LINE = f"C1-VERDICT: PASS plan={H}"
FAIL_LINE = f"C1-VERDICT: FAIL plan={H}"


@pytest.mark.parametrize(
    "text,current,expected_state,code",
    [
        (None, H, "file_missing", "EVIDENCE_C1_FILE_MISSING"),
        ("prose\n", H, "missing", "EVIDENCE_C1_MARKER_MISSING"),
        (f"{PASS_LINE}\n{PASS_LINE}\n", H, "duplicate", "EVIDENCE_C1_MARKER_DUPLICATE"),
        (f"{PASS_LINE} \n", H, "malformed", "EVIDENCE_C1_MARKER_MALFORMED"),
        (f"{FAIL_LINE}\n", H, "not_accepted", "EVIDENCE_C1_NOT_ACCEPTED"),
        (f"{PASS_LINE}\n", None, "undecidable", "EVIDENCE_C1_UNDECIDABLE"),
        (f"C1-VERDICT: PASS plan=sha256:{'0' * 64}\n", H, "stale", "EVIDENCE_C1_STALE"),
    ],
)
def test_every_invalid_state_has_its_json_value_and_reason(
    text: str | None, current: str | None, expected_state: str, code: str
) -> None:
    result = read_marker(C1, None if text is None else text.encode(), current)
    assert result.valid is False
    assert result.reason is not None
    assert result.reason.code == code
    assert result.reason.message.startswith("review-self.md: ")
    assert result.to_json() == {
        "file": "review-self.md",
        "state": expected_state,
        "verdict": result.verdict,
        "plan": result.plan_hash,
        "reason": result.reason.to_json(),
    }


def test_a_valid_marker_serialises_without_a_reason() -> None:
    result = read_marker(C2, f"C2-VERDICT: approve plan={H}\n".encode(), H)
    assert result.valid is True
    assert result.reason is None
    assert result.to_json() == {
        "file": "review-external.md",
        "state": "valid",
        "verdict": "approve",
        "plan": H,
    }
    assert read_marker(C2, None, H).reason.message.startswith("review-external.md: ")


def test_marker_line_accepts_each_kinds_whole_vocabulary() -> None:
    assert marker_line(C1, "PASS", H) == PASS_LINE
    assert marker_line(C1, "FAIL", H) == FAIL_LINE
    assert marker_line(C2, "approve", H) == f"C2-VERDICT: approve plan={H}"
    assert marker_line(C2, "reject", H) == f"C2-VERDICT: reject plan={H}"
    with pytest.raises(ValueError):
        marker_line(C2, "PASS", H)


@pytest.mark.parametrize(
    "hide",
    [
        "  ",  # ASCII indentation
        "\x7f",  # DEL
        "\u0080",  # C1 control (Cc)
        "\u0301",  # combining acute with no base (Mn)
        "\u20dd",  # combining enclosing circle (Me)
        "\u3000",  # ideographic space
        "\u115f",
        "\u1160",
        "\u3164",
        "\uffa0",
        "\u2800",
        "\ufffd",  # blank fillers
        "\u200b" * 61,  # a long run of zero-width spaces, wider than the NFKC window
    ],
)
def test_a_second_marker_behind_invisible_leading_characters_is_ambiguous(hide: str) -> None:
    text = f"{hide}{FAIL_LINE}\n{PASS_LINE}\n"
    assert state(text.encode()) is MarkerState.DUPLICATE


def test_zero_width_characters_between_the_marker_letters_still_make_a_marker() -> None:
    spread = "".join(ch + "\u200b" * 3 for ch in "C1-VERDICT")
    assert state(f"{spread}: FAIL plan={H}\n{PASS_LINE}\n".encode()) is MarkerState.DUPLICATE


@pytest.mark.parametrize("lead", ["!", "x", "\u00c4", "\u00c4\u200b"])
def test_a_visible_character_before_the_prefix_is_not_a_marker(lead: str) -> None:
    assert state(f"{lead}{FAIL_LINE}\n{PASS_LINE}\n".encode()) is MarkerState.VALID


def test_undecodable_bytes_are_replaced_when_reading() -> None:
    assert state(b"\xff\xfe prose\n" + PASS_LINE.encode() + b"\n") is MarkerState.VALID


def test_hidden_marker_reason_counts_the_hidden_lines() -> None:
    result = read_marker(C1, f"note\r{FAIL_LINE}\n{PASS_LINE}\n".encode(), H)
    assert result.state is MarkerState.DUPLICATE
    assert result.reason is not None
    assert result.reason.message.startswith("review-self.md: 1 marker-like line(s) behind")
    two = read_marker(C1, f"a\r{FAIL_LINE}\rb\u2028{FAIL_LINE}\n{PASS_LINE}\n".encode(), H)
    assert two.reason is not None
    assert two.reason.message.startswith("review-self.md: 2 marker-like line(s)")


@pytest.mark.parametrize(
    "line,detail",
    [
        (f"{PASS_LINE}\r", "ends with a carriage return"),
        (f"{PASS_LINE} ", "has trailing whitespace"),
        (f"c1-verdict: PASS plan={H}", "does not start exactly with 'C1-VERDICT: '"),
        (f"C1-VERDICT: PASS plan={H[:-1]}", "does not match the marker grammar"),
    ],
)
def test_malformed_reason_names_what_is_wrong(line: str, detail: str) -> None:
    result = read_marker(C1, f"{line}\n".encode(), H)
    assert result.state is MarkerState.MALFORMED
    assert result.reason is not None
    assert result.reason.message.startswith(f"review-self.md: marker line {detail}")


def test_replace_marker_exact_output() -> None:
    line = marker_line(C1, "PASS", H)
    assert replace_marker(b"", C1, line) == f"{line}\n".encode()
    assert replace_marker(b"\n\n", C1, line) == f"{line}\n".encode()
    old = f"# Review\nbody\n{FAIL_LINE}\n\n  \n".encode()
    assert replace_marker(old, C1, line) == f"# Review\nbody\n\n{line}\n".encode()


def test_replace_marker_drops_only_the_hidden_piece_of_a_line() -> None:
    line = marker_line(C1, "PASS", H)
    old = f"keep\r{FAIL_LINE}\rtail\u2028more\n".encode()
    assert replace_marker(old, C1, line) == f"keep\rtail\u2028more\n\n{line}\n".encode()
    old = f"keep\rtail\r{FAIL_LINE}\n".encode()
    assert replace_marker(old, C1, line) == f"keep\rtail\n\n{line}\n".encode()


def test_replace_marker_refuses_undecodable_evidence() -> None:
    with pytest.raises(UnicodeDecodeError):
        replace_marker(b"\xff" + FAIL_LINE.encode(), C1, PASS_LINE)


FULL_GRAMMAR_CASES = [
    ("C1-VERDICT: PASS plan=sha256:" + "a" * 64, ("PASS", "sha256:" + "a" * 64)),
    ("C1-VERDICT: x\x00y plan=sha256:" + "0" * 64, ("x\x00y", "sha256:" + "0" * 64)),
    ("C1-VERDICT:  PASS plan=sha256:" + "a" * 64, None),  # two spaces: empty verdict
    ("C1-VERDICT: PA\u00a0SS plan=sha256:" + "a" * 64, None),  # a no-break space inside
    ("C1-VERDICT: PA\x1cSS plan=sha256:" + "a" * 64, None),  # a separator control is space
    ("C1-VERDICT: PASS plan=sha256:" + "A" * 64, None),  # upper-case hex
    ("C1-VERDICT: PASS plan=sha256:" + "a" * 63, None),
    ("C1-VERDICT: PASS plan=sha256:" + "a" * 65, None),
    ("C1-VERDICT: PASS plan=sha256:" + "a" * 63 + "g", None),
    ("C1-VERDICT: PASS plan=sha257:" + "a" * 64, None),
    ("C1-VERDICT: PASS plan=" + "a" * 71, None),
    ("C1-VERDICT: PASS plan=x plan=sha256:" + "a" * 64, None),
    ("C1-VERDICT: PASS  plan=sha256:" + "a" * 64, None),
    ("C1-VERDICT: PASS sha256:" + "a" * 64, None),
    ("C1-VERDICT: PASS plan=sha256:" + "a" * 64 + " ", None),
    ("C2-VERDICT: PASS plan=sha256:" + "a" * 64, None),  # the other kind's prefix
    (" C1-VERDICT: PASS plan=sha256:" + "a" * 64, None),
    ("C1-VERDICT:PASS plan=sha256:" + "a" * 64, None),
]


@pytest.mark.parametrize(("line", "expected"), FULL_GRAMMAR_CASES)
def test_full_grammar_reads_exactly_the_marker_grammar(line: str, expected: object) -> None:
    from plangate.plan.markers import full_grammar

    assert full_grammar(line, C1) == expected


# -- the plain-file search against the general one ------------------------------------

PLAIN_TEXTS = [
    "",
    "\n",
    f"# review\n\nC1-VERDICT: PASS plan={H}\n",
    f"C1-VERDICT: PASS plan={H}",
    f"   C1-VERDICT: PASS plan={H}\n",
    f"c1-verdict: pass plan={H}\n",
    "C1-Verdict PASS\nnote C1-VERDICT: in prose\n",
    f"x C1-VERDICT: PASS plan={H}\n  c1-VERDICTS\n",
    "C1-VERDIC\nC1-VERDICT\n C1-VERDICT:\n",
    f"C1-VERDICT: PASS plan={H}\nC1-VERDICT: FAIL plan={H}\n",
    "C2-VERDICT: approve\nC1-VERDICT c1-verdict C1-verdict\n",
    f"C1-VERDICT:  PASS plan={H} \n",
    "  \n  \n   c1-verdict",
    "c1-verdictc1-verdict\nc1-verdict",
]
NOT_PLAIN_TEXTS = [
    f"\tC1-VERDICT: PASS plan={H}\n",
    f"C1-VERDICT: PASS plan={H}\r\n",
    f"note\rC1-VERDICT: FAIL plan={H}\nC1-VERDICT: PASS plan={H}\n",
    f"\u200bC1-VERDICT: PASS plan={H}\n",
    f"\uff23\uff11-VERDICT: PASS plan={H}\n",
    f"C\x001-VERDICT: PASS plan={H}\n",
    f"\x7fC1-VERDICT: PASS plan={H}\n",
    f"caf\u00e9\nC1-VERDICT: PASS plan={H}\n",
]


@pytest.mark.parametrize("text", PLAIN_TEXTS)
def test_the_plain_search_finds_the_general_searchs_lines(text: str) -> None:
    from plangate.plan.markers import _hidden_marker_count, _plain_candidates, marker_candidates

    data = text.encode()
    for prefix in ("c1-verdict", "c2-verdict"):
        assert _plain_candidates(data, text, prefix) == marker_candidates(text, prefix)
        assert _hidden_marker_count(text, prefix) == 0  # what the plain path takes for granted


@pytest.mark.parametrize("text", NOT_PLAIN_TEXTS)
def test_a_file_that_is_not_plain_takes_the_general_search(text: str) -> None:
    from plangate.plan.markers import _plain_candidates

    data = text.encode()
    assert _plain_candidates(data, data.decode("utf-8", errors="replace"), "c1-verdict") is None
    # and the answer is the general one (one marker, or an ambiguity)
    assert state(data) in {
        MarkerState.VALID, MarkerState.DUPLICATE, MarkerState.MALFORMED, MarkerState.MISSING
    }


S = "sha256:" + hashlib.sha256(b"scope").hexdigest()


def test_a_marker_bound_to_the_scope_derived_now_is_valid() -> None:
    line = marker_line(C1, "PASS", H, S)
    assert line == f"C1-VERDICT: PASS plan={H} scope={S}"
    result = read_marker(C1, (line + "\n").encode(), H, lambda: S)
    assert result.state is MarkerState.VALID and result.scope_digest == S


def test_a_marker_bound_to_another_scope_is_stale_with_its_own_code() -> None:
    # same plan bytes, another reading of them: the reviewer approved another scope
    data = (marker_line(C2, "approve", H, S) + "\n").encode()
    result = read_marker(C2, data, H, lambda: "sha256:" + "0" * 64)
    assert result.state is MarkerState.STALE
    assert result.reason is not None and result.reason.code == "EVIDENCE_C2_SCOPE_CHANGED"
    assert read_marker(C2, data, H, lambda: None).state is MarkerState.STALE  # now undefined


@pytest.mark.parametrize(
    "tail", [" scope=", " scope=sha256:" + "A" * 64, " scope=" + S + " ", " scope=" + S[:-1]]
)
def test_a_malformed_scope_binding_is_a_malformed_marker(tail: str) -> None:
    data = f"C1-VERDICT: PASS plan={H}{tail}\n".encode()
    assert read_marker(C1, data, H, lambda: S).state is MarkerState.MALFORMED


def test_a_marker_written_before_the_scope_binding_still_reads() -> None:
    asked: list[int] = []
    result = read_marker(C1, f"C1-VERDICT: PASS plan={H}\n".encode(), H,
                         lambda: asked.append(1) or S)  # fmt: skip
    assert result.state is MarkerState.VALID and result.scope_digest is None
    assert asked == []  # the plan is not parsed for a marker that names no scope
