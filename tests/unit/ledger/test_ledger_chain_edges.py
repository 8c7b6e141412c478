"""The chain rules at their edges, with literal rows.

Most rows here are hashed over their stored payload text, as someone who
rewrites the table and re-hashes it would: the hash then holds, and only the
entry's own rules can refuse it. ``verify_values`` takes a quick path for
rows it can accept cheaply and sends every other row through the full
checks; both must refuse each of these rows, and the quick path must accept
the plain canonical payloads it exists for.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from plangate.canonical import StrictJSONError, canonical_bytes, canonical_text
from plangate.ledger import chain
from plangate.ledger.chain import (
    _KEY_CACHE_MAX,
    EXPORT_FORMAT,
    GENESIS_PREV_HASH,
    MAX_PAYLOAD_BYTES,
    MAX_SUBJECT_CHARS,
    ChainWalk,
    Head,
    LedgerError,
    StoredRow,
    _PayloadCheck,
    check_entry_fields,
    compute_entry_hash,
    entry_from_values,
    entry_hash_from_text,
    export_bytes,
    prepare_payload,
    verify_export_bytes,
    verify_rows,
    verify_segment,
    verify_values,
)
from plangate.ledger.rows import StoredRow as RowsStoredRow
from plangate.verdict import Result

AT = "2026-12-02T10:00:00Z"
DIGEST = "sha256:" + "0" * 64
OTHER = "sha256:" + "1" * 64
GOOD = '{"a":1}'
DEFAULT_HINT = "restore the ledger from a verified export; investigate who wrote it"

Row = tuple[Any, ...]


def chain_of(*texts: str, kinds: tuple[str, ...] = (), subject: str = "TASK-0001") -> list[Row]:
    """Rows over the payload ``texts``, each hashed over its stored text."""
    rows: list[Row] = []
    prev = GENESIS_PREV_HASH
    for seq, text in enumerate(texts, start=1):
        kind = kinds[seq - 1] if kinds else "c3_issue"
        entry_hash = entry_hash_from_text(
            seq=seq, kind=kind, subject=subject, payload_text=text, at=AT, prev_hash=prev
        )
        rows.append((seq, kind, subject, text, AT, prev, entry_hash))
        prev = entry_hash
    return rows


def rehashed(row: Row, **fields: Any) -> Row:
    """``row`` with some fields replaced and its hash recomputed over them."""
    names = ("seq", "kind", "subject", "payload_text", "at", "prev_hash")
    values = dict(zip(names, row[:6], strict=True)) | fields
    return (*values.values(), entry_hash_from_text(**values))


def head_of(rows: list[Row]) -> Head:
    return Head(len(rows), rows[-1][6] if rows else GENESIS_PREV_HASH)


def verify(rows: list[Row], head: Head | None = None) -> Result:
    return verify_values(rows, head_of(rows) if head is None else head)


# -- module surface --------------------------------------------------------------


def test_stored_row_is_served_lazily_and_other_names_are_missing() -> None:
    assert chain.StoredRow is RowsStoredRow
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = chain.no_such_name


def test_a_ledger_error_without_a_hint_has_an_empty_hint() -> None:
    error = LedgerError("LEDGER_X", "message")
    assert (error.code, error.message, error.hint) == ("LEDGER_X", "message", "")


# -- entry fields ------------------------------------------------------------------


@pytest.mark.parametrize("subject", ["x", "x" * MAX_SUBJECT_CHARS])
def test_subjects_from_one_to_the_maximum_length_are_accepted(subject: str) -> None:
    assert MAX_SUBJECT_CHARS == 1024
    check_entry_fields("c3_issue", subject)
    rows = chain_of(GOOD, subject=subject)
    assert verify(rows).verdict == "INTACT"


@pytest.mark.parametrize("subject", ["", "x" * (MAX_SUBJECT_CHARS + 1), " x", "x\ty"])
def test_subjects_empty_too_long_or_with_edge_or_control_characters_are_refused(
    subject: str,
) -> None:
    with pytest.raises(LedgerError) as info:
        check_entry_fields("c3_issue", subject)
    assert info.value.code == "LEDGER_SUBJECT_INVALID"
    result = verify(chain_of(GOOD, subject=subject))
    assert result.codes == ("LEDGER_ENTRY_MALFORMED",)
    assert result.facts["first_bad_seq"] == 1


@pytest.mark.parametrize("kind", ["Bad Kind", "1kind", 5, None])
def test_kinds_that_are_no_snake_case_word_are_refused(kind: object) -> None:
    with pytest.raises(LedgerError) as info:
        check_entry_fields(kind, "TASK-0001")
    assert info.value.code == "LEDGER_KIND_INVALID"


@pytest.mark.parametrize("kind", ["Bad Kind", 5, b"c3_issue", ["c3_issue"], None])
def test_a_row_rehashed_over_a_bad_kind_is_refused_first_or_later(kind: object) -> None:
    # The quick path remembers kinds it has seen; a new or odd one takes the full checks.
    for index in (0, 1):
        rows = chain_of(GOOD, GOOD)
        forged = rehashed(rows[index], kind=str(kind))
        rows[index] = (forged[0], kind, *forged[2:])
        result = verify(rows)
        assert result.verdict == "TAMPERED"
        assert result.codes == ("LEDGER_ENTRY_MALFORMED",)
        assert result.facts["first_bad_seq"] == index + 1


def test_an_export_line_whose_kind_is_a_list_is_tampered_not_a_crash() -> None:
    entry_hash = entry_hash_from_text(
        seq=1, kind="c3_issue", subject="S", payload_text="{}", at=AT, prev_hash=GENESIS_PREV_HASH
    )
    header = {"format": EXPORT_FORMAT, "version": 1, "entries": 1, "head_hash": entry_hash}
    entry = {
        "seq": 1,
        "kind": ["c3_issue"],
        "subject": "S",
        "payload": {},
        "at": AT,
        "prev_hash": GENESIS_PREV_HASH,
        "entry_hash": entry_hash,
    }
    result = verify_export_bytes(canonical_bytes(header) + b"\n" + canonical_bytes(entry) + b"\n")
    assert result.verdict == "TAMPERED"
    assert result.codes == ("LEDGER_ENTRY_MALFORMED",)
    assert result.facts["first_bad_seq"] == 1


@pytest.mark.parametrize(
    "at",
    [
        "2026-04-31T10:00:00Z",  # April has 30 days
        "2026-12-02T24:00:00Z",
        "2026-12-02T10:60:00Z",
        "2026-12-02T10:00:60Z",
        "2100-02-29T10:00:00Z",  # 2100 is no leap year
        "2026-12-02 10:00:00",
    ],
)
def test_times_outside_the_calendar_are_refused(at: str) -> None:
    rows = chain_of(GOOD)
    rows[0] = rehashed(rows[0], at=at)
    result = verify(rows)
    assert result.codes == ("LEDGER_ENTRY_MALFORMED",)
    assert at in result.reasons[0].message


@pytest.mark.parametrize("at", ["2000-02-29T00:00:00Z", "2024-02-29T23:59:59Z"])
def test_leap_days_are_valid_times(at: str) -> None:
    rows = chain_of(GOOD)
    rows[0] = rehashed(rows[0], at=at)
    assert verify(rows).verdict == "INTACT"


@pytest.mark.parametrize("at", ["", "2026-12-02 10:00:00"])
def test_a_chain_rehashed_over_a_malformed_time_is_tampered_from_its_first_row(at: str) -> None:
    # The quick path skips the time check for a time equal to the previous row's:
    # the first row has no previous time, whatever its own time is.
    rows = chain_of(GOOD, GOOD)
    rows[0] = rehashed(rows[0], at=at)
    rows[1] = rehashed(rows[1], at=at, prev_hash=rows[0][6])
    result = verify(rows)
    assert result.verdict == "TAMPERED"
    assert result.facts["first_bad_seq"] == 1
    assert result.reasons[0].code == "LEDGER_ENTRY_MALFORMED"


@pytest.mark.parametrize("seq", [7, 0, True, 1.0, "1"])
def test_a_row_rehashed_over_a_wrong_seq_is_refused(seq: object) -> None:
    # The hash holds for the seq as written; the seq itself is not the next one.
    rows = chain_of(GOOD, GOOD)
    rows[0] = rehashed(rows[0], seq=seq)
    result = verify(rows)
    assert result.codes == ("LEDGER_SEQ_MISMATCH",)
    assert result.facts["first_bad_seq"] == 1


@pytest.mark.parametrize("subject", ["é", 'say "hi"', "a\\b", "\U0001f600 x"])
def test_subjects_that_need_escaping_or_are_not_ascii_hash_as_rfc_8785(subject: str) -> None:
    fields = {"seq": 1, "kind": "c3_issue", "subject": subject, "at": AT,
              "prev_hash": GENESIS_PREV_HASH}
    expected = compute_entry_hash(payload={"a": 1}, **fields)  # type: ignore[arg-type]
    assert entry_hash_from_text(payload_text=GOOD, **fields) == expected  # type: ignore[arg-type]
    rows = [(1, "c3_issue", subject, GOOD, AT, GENESIS_PREV_HASH, expected)]
    assert verify(rows).verdict == "INTACT"


# -- payloads on the way in ----------------------------------------------------------


@pytest.mark.parametrize("payload", [[("a", 1)], "{}", None])
def test_a_payload_that_is_no_mapping_is_refused(payload: object) -> None:
    with pytest.raises(LedgerError) as info:
        prepare_payload(payload)
    assert info.value.code == "LEDGER_PAYLOAD_INVALID"


@pytest.mark.parametrize(
    "payload",
    [
        {"a": float("nan")},
        {"a": {1, 2}},
        {"a": object()},
        {"a": 2**53 + 1},
        {"a": "\ud800"},
        {"\ud800": 1},  # a key without a UTF-16 form cannot be sorted
        {"b": {"\udfff": 1, "a": 2}},
    ],
)
def test_a_payload_without_a_canonical_form_is_refused(payload: dict[str, object]) -> None:
    with pytest.raises(LedgerError) as info:
        prepare_payload(payload)
    assert info.value.code == "LEDGER_PAYLOAD_INVALID"


def test_a_lone_surrogate_key_has_no_canonical_text() -> None:
    with pytest.raises(StrictJSONError) as info:
        canonical_text({"\ud800": 1, "a": 2})
    assert info.value.code == "JSON_LONE_SURROGATE"


def test_a_payload_of_exactly_the_maximum_size_is_accepted_one_byte_more_is_not() -> None:
    assert MAX_PAYLOAD_BYTES == 1024 * 1024
    filler = MAX_PAYLOAD_BYTES - len('{"a":""}')
    text, parsed = prepare_payload({"a": "x" * filler})
    assert len(text.encode()) == MAX_PAYLOAD_BYTES
    assert parsed == {"a": "x" * filler}
    with pytest.raises(LedgerError) as info:
        prepare_payload({"a": "x" * (filler + 1)})
    assert info.value.code == "LEDGER_PAYLOAD_TOO_LARGE"


def test_entry_from_values_decodes_a_good_row_and_refuses_a_bad_one() -> None:
    rows = chain_of('{"b":[1,"é"]}')
    entry = entry_from_values(rows[0])
    assert entry.seq == 1
    assert entry.payload == {"b": [1, "é"]}
    assert entry.entry_hash == rows[0][6]
    with pytest.raises(LedgerError) as info:
        entry_from_values((1, "Bad Kind", *rows[0][2:]))
    assert info.value.code == "LEDGER_CORRUPT"


@pytest.mark.parametrize("payload", [None, b'{"a":1}', 7])
def test_a_stored_payload_that_is_not_text_is_refused(payload: object) -> None:
    rows = chain_of(GOOD)
    rows[0] = (*rows[0][:3], payload, *rows[0][4:])
    result = verify(rows)
    assert result.codes == ("LEDGER_PAYLOAD_NOT_CANONICAL",)
    assert result.reasons[0].message == "entry 1: payload is not text"


# -- stored payloads: the quick path and the full checks -----------------------------

DEEPEST_OBJECT = '{"a":' * 64 + "1" + "}" * 64  # the value at depth 64
DEEPEST_LIST = '{"a":' + "[" * 63 + "1" + "]" * 63 + "}"
REFUSED = [
    '{"b":1,"a":2}',  # keys out of order
    '{"a":1,"a":1}',  # a repeated key
    '{"a": 1}',  # a space between tokens
    '{"a":1,\n"b":2}',  # a newline between tokens, and nothing else
    '{"a":1,\r"b":2}',
    '{"a":1,\t"b":2}',
    '{"a":1, "b":2}',
    '{"a":1}\n',  # trailing whitespace
    '{"a":1}x',  # trailing text
    "[1]",  # not an object
    '"a"',
    '{"a":-0}',  # -0 is written 0
    '{"a":01}',
    '{"a":1.0}',  # 1.0 is written 1
    '{"a":1e2}',
    '{"a":NaN}',  # not JSON
    '{"a":Infinity}',
    '{"a":"\\u00e9"}',  # an escape RFC 8785 writes as the character itself
    '{"a":"\\/"}',  # an escaped solidus
    '{"a":"\\u001F"}',  # uppercase hex
    '{"a":"\\u000a"}',  # \n has a short form
    '{"a":1000000000000000000000}',  # RFC 8785 writes 1e+21
    '{"a":-1000000000000000000000}',
    '{"a":9007199254740993}',  # no double holds it
    '{"a":[{"api_key":"x"}]}',  # a forbidden key inside a list
    '{"a":{"githubToken":"x"}}',  # a forbidden key in another spelling, nested
    '{"\ue000":1,"\U0001f600":2}',  # code point order, not RFC 8785's UTF-16 order
    '{"a":"\ud800"}',  # a lone surrogate, as a character
    '{"\ud800":1}',
    '{"a":"\\ud800"}',  # a lone surrogate, escaped
    '{"\\ud800":1}',
    '{"a":' * 65 + "1" + "}" * 65,  # deeper than MAX_DEPTH
    '{"a":' + "[" * 64 + "1" + "]" * 64 + "}",
]


def _rows_for(text: str) -> list[Row]:
    """A good first row, then ``text`` hashed over as stored (a placeholder hash when the
    text cannot even be encoded)."""
    rows = chain_of(GOOD, GOOD)
    try:
        rows[1] = rehashed(rows[1], payload_text=text)
    except UnicodeEncodeError:
        rows[1] = (*rows[1][:3], text, *rows[1][4:6], DIGEST)
    return rows


@pytest.mark.parametrize("text", REFUSED)
def test_each_non_canonical_payload_is_refused_on_both_paths(text: str) -> None:
    assert not _PayloadCheck().accepts(text)
    result = verify(_rows_for(text))
    assert result.verdict == "TAMPERED"
    assert result.codes in (("LEDGER_PAYLOAD_NOT_CANONICAL",), ("LEDGER_FORBIDDEN_KEY",))
    assert result.facts["first_bad_seq"] == 2
    assert result.facts["entries"] == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a":"\ud800"}', "payload cannot be canonicalised"),
        ('{"a":9007199254740993}', "payload cannot be canonicalised"),
        ('{"a":' * 65 + "1" + "}" * 65, "payload cannot be canonicalised"),
        ('{"a":1000000000000000000000}', "payload text is not its canonical form"),
        ('{"\ue000":1,"\U0001f600":2}', "payload text is not its canonical form"),
    ],
)
def test_the_full_checks_say_why_a_payload_is_not_canonical(text: str, message: str) -> None:
    result = verify(_rows_for(text))
    assert result.reasons[0].message.startswith(f"entry 2: {message}")


ACCEPTED = [
    "{}",
    GOOD,
    '{"":1}',
    '{"a":[{"b":1},{"c":[]}],"d":"x y","e":"[{"}',
    '{"a":"x\\"y\\\\z\\n\\u001f","b":"é"}',
    '{"a":"tab\\there"}',
    '{"A":1,"a":9007199254740991,"b":-9007199254740991,"c":true,"d":null}',
    '{"k":{"x":1},"l":{"x":2},"m":[{"x":3}]}',  # one key tuple, three objects
    DEEPEST_OBJECT,
    DEEPEST_LIST,
    '{"a":"' + "x" * 200 + '"}',
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_plain_canonical_payloads_pass_the_quick_check_and_verify(text: str) -> None:
    assert _PayloadCheck().accepts(text)
    assert verify(_rows_for(text)).verdict == "INTACT"


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1.5}',
        '{"a":9007199254740992}',  # a double holds 2**53 exactly
        '{"a":1e+30}',
        '{"\U0001f600":1,"\ue000":2}',  # RFC 8785's UTF-16 order
        '{"":1.5,"é":[true]}',
        '{"a":[' + "{}," * 64 + "{}]}",  # more objects than the quick path counts
    ],
)
def test_canonical_payloads_outside_the_quick_path_verify_through_the_full_checks(
    text: str,
) -> None:
    assert not _PayloadCheck().accepts(text)
    assert verify(_rows_for(text)).verdict == "INTACT"


def test_one_payload_check_serves_every_row_of_a_long_ledger() -> None:
    check = _PayloadCheck()
    nested = '{"a":{"b":{"c":[1,{"d":2}]}}}'
    assert all(check.accepts(nested) for _ in range(200))
    assert check.value == json.loads(nested)


def test_the_payload_check_remembers_a_bounded_number_of_key_tuples() -> None:
    assert _KEY_CACHE_MAX == 4096
    check = _PayloadCheck()
    assert all(check.accepts(f'{{"k{i}":1}}') for i in range(_KEY_CACHE_MAX + 10))
    assert len(check._shapes) == _KEY_CACHE_MAX


def test_the_walk_yields_each_payload_as_stored() -> None:
    texts = [
        '{"a":1.5,"b":[1,-2,9007199254740991],"c":null}',
        '{"x":{"k":1},"y":{"k":2}}',
        '{"x":{"k":1},"y":{"k":2}}',
        '{"\U0001f600":1,"\ue000":2}',
    ]
    rows = chain_of(*texts)
    walk = ChainWalk(rows, head_of(rows))
    entries = list(walk.entries())
    assert [e.payload for e in entries] == [json.loads(t) for t in texts]
    assert [e.seq for e in entries] == [1, 2, 3, 4]
    assert entries[-1].entry_hash == rows[-1][6]
    assert walk.finish().verdict == "INTACT"
    with pytest.raises(RuntimeError):
        walk.entries()


# -- verdict facts ------------------------------------------------------------------


def test_the_verdict_counts_the_kinds_it_passed() -> None:
    rows = chain_of(GOOD, GOOD, GOOD, kinds=("c3_issue", "hook_decision", "c3_issue"))
    result = verify(rows)
    assert result.facts == {
        "entries": 3,
        "head_hash": rows[-1][6],
        "first_bad_seq": None,
        "kinds": {"c3_issue": 2, "hook_decision": 1},
    }
    rows.append(rehashed(chain_of(GOOD, GOOD, GOOD, GOOD)[3], kind="Bad", prev_hash=rows[-1][6]))
    broken = verify(rows, Head(4, rows[-1][6]))
    assert broken.facts == {
        "entries": 3,
        "head_hash": rows[2][6],
        "first_bad_seq": 4,
        "kinds": {"c3_issue": 2, "hook_decision": 1},
    }


def test_a_reason_without_a_hint_gets_the_default_one() -> None:
    rows = chain_of(GOOD, GOOD)
    rows[1] = rehashed(rows[1], kind="Bad Kind")
    assert verify(rows).reasons[0].hint == DEFAULT_HINT
    moved = chain_of(GOOD, GOOD)
    moved[1] = (5, *moved[1][1:])
    assert verify(moved).reasons[0].hint == "an entry was deleted, inserted or moved here"


@pytest.mark.parametrize(
    ("count", "head", "first_bad_seq"),
    [
        (4, lambda rows: Head(2, rows[1][6]), 3),  # rows appended behind the head's back
        (4, lambda rows: Head(4, OTHER), 4),  # the last entry replaced
        (2, lambda rows: Head(5, OTHER), 3),  # entries after the chain's end deleted
        (0, lambda rows: Head(0, OTHER), 1),
        (0, lambda rows: Head("0", GENESIS_PREV_HASH), 1),
        (3, lambda rows: Head("3", rows[2][6]), 3),
        (3, lambda rows: Head(True, rows[2][6]), 3),
        (3, lambda rows: Head(None, rows[2][6]), 3),
    ],
)
def test_where_a_chain_and_its_head_disagree(count: int, head: Any, first_bad_seq: int) -> None:
    rows = chain_of(*[GOOD] * count)
    result = verify(rows, head(rows))
    assert result.codes == ("LEDGER_HEAD_MISMATCH",)
    assert result.facts["first_bad_seq"] == first_bad_seq
    assert result.facts["entries"] == count


# -- segments ----------------------------------------------------------------------


def test_a_segment_verifies_from_the_genesis_or_from_any_entry() -> None:
    rows = chain_of(GOOD, '{"b":2}', '{"c":3}')
    head = head_of(rows)
    assert [e.seq for e in verify_segment(rows, head, 1)] == [1, 2, 3]
    assert [e.payload for e in verify_segment(rows[1:], head, 2)] == [{"b": 2}, {"c": 3}]
    assert [e.seq for e in verify_segment(rows[2:], head, 3)] == [3]
    assert verify_segment([], Head(), 1) == []


@pytest.mark.parametrize(
    ("start", "count", "head", "at_seq"),
    [
        (1, 3, Head(3, OTHER), 4),  # the last entry is not the head
        (1, 3, Head(4, None), 4),
        (2, 2, Head(3, OTHER), 4),
        (1, 0, Head(0, OTHER), 1),  # an empty segment needs the empty head
        (1, 0, Head(1, GENESIS_PREV_HASH), 1),
        (1, 0, Head(-1, GENESIS_PREV_HASH), 1),
        (2, 0, Head(), 2),  # nothing after seq 1 where the head says there is nothing
        (0, 0, Head(0, OTHER), 0),
    ],
)
def test_a_segment_that_does_not_end_at_the_head_is_tampered(
    start: int, count: int, head: Head, at_seq: int
) -> None:
    rows = chain_of(GOOD, GOOD, GOOD)[start - 1 : start - 1 + count] if count else []
    with pytest.raises(LedgerError) as info:
        verify_segment(rows, head, start, location="ledger.sqlite3")
    assert info.value.code == "LEDGER_TAMPERED"
    assert f"ledger ledger.sqlite3 does not verify at seq {at_seq} (LEDGER_HEAD_MISMATCH" in (
        info.value.message
    )


def test_a_segment_from_seq_one_must_start_at_the_genesis() -> None:
    rows = chain_of(GOOD, GOOD)
    forged = [rehashed(rows[0], prev_hash=OTHER)]
    forged.append(rehashed(rows[1], prev_hash=forged[0][6]))
    with pytest.raises(LedgerError) as info:
        verify_segment(forged, head_of(forged), 1)
    assert "at seq 1 (LEDGER_PREV_HASH_MISMATCH" in info.value.message
    # From seq 2 the first row anchors the segment, whatever it links to.
    assert [e.seq for e in verify_segment(forged[1:], head_of(forged), 2)] == [2]


# -- export files --------------------------------------------------------------------


def _export(count: int) -> bytes:
    rows = [StoredRow(*row) for row in chain_of(*[GOOD] * count)]
    return export_bytes(rows, Head(count, rows[-1].entry_hash if rows else GENESIS_PREV_HASH))


def test_the_export_header_names_the_format_count_and_head() -> None:
    data = _export(2)
    rows = chain_of(GOOD, GOOD)
    header = data.split(b"\n")[0]
    assert header == (
        b'{"entries":2,"format":"plangate-ledger-export","head_hash":"'
        + rows[1][6].encode()
        + b'","version":1}'
    )
    assert verify_export_bytes(data).facts["entries"] == 2


def _problem(line_no: int, message: str, first_bad_seq: int) -> Result:
    return Result(
        "TAMPERED",
        (
            chain.Reason(
                "LEDGER_EXPORT_MALFORMED",
                f"export line {line_no}: {message}",
                "the export file was edited or truncated; take a new export from the ledger",
            ),
        ),
        {"entries": 0, "head_hash": GENESIS_PREV_HASH, "first_bad_seq": first_bad_seq,
         "kinds": {}},
    )


def test_an_export_without_its_final_newline_is_refused_at_its_last_line() -> None:
    data = _export(3)
    assert verify_export_bytes(data[:-1]) == _problem(
        4, "the file does not end in a newline", 3
    )
    assert verify_export_bytes(b"") == _problem(1, "the file does not end in a newline", 1)


def test_an_export_header_that_is_not_json_or_not_canonical_is_refused_at_line_one() -> None:
    result = verify_export_bytes(b"not json\n")
    assert result.facts == _problem(1, "", 1).facts
    assert result.reasons[0].message.startswith("export line 1: header is not JSON: ")
    wrong_format = canonical_bytes(
        {"format": "other", "version": 1, "entries": 0, "head_hash": GENESIS_PREV_HASH}
    )
    assert verify_export_bytes(wrong_format + b"\n") == _problem(
        1, f"header is not a canonical {EXPORT_FORMAT} v1 header", 1
    )


def test_an_export_entry_line_that_is_not_json_is_refused_at_its_seq() -> None:
    lines = _export(3).split(b"\n")
    for broken_at in (1, 3):
        data = b"\n".join([*lines[:broken_at], b"{not json", *lines[broken_at + 1 :]])
        result = verify_export_bytes(data)
        assert result.codes == ("LEDGER_EXPORT_MALFORMED",)
        assert result.reasons[0].message.startswith(f"export line {broken_at + 1}: not JSON: ")
        assert result.facts["first_bad_seq"] == broken_at
        assert result.facts["entries"] == broken_at - 1


def test_an_export_reports_a_broken_entry_before_a_later_malformed_line() -> None:
    lines = _export(3).split(b"\n")
    entry = json.loads(lines[1])
    entry["subject"] = "EDITED"
    data = b"\n".join([lines[0], canonical_bytes(entry), lines[2], b"{not json", b""])
    result = verify_export_bytes(data)
    assert result.codes == ("LEDGER_ENTRY_HASH_MISMATCH",)
    assert result.facts["first_bad_seq"] == 1


def test_export_rows_use_the_canonical_payload_text() -> None:
    payload = {"b": [1, {"a": "é"}], "a": None}
    rows = [StoredRow(*chain_of(canonical_text(payload))[0])]
    data = export_bytes(rows, Head(1, rows[0].entry_hash))
    assert verify_export_bytes(data).verdict == "INTACT"
    assert verify_rows(rows, Head(1, rows[0].entry_hash)).verdict == "INTACT"
