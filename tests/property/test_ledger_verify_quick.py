"""Property: ``ledger verify``'s quick path accepts exactly what the full checks accept.

``verify_values`` accepts a row on a quick form of the checks (the payload
through one C parse, see ``plangate.ledger.chain._PayloadCheck``) and sends
every other row through ``_check_row``. These tests pin both halves:

- the quick payload check never accepts a text the full checks refuse
  (generated JSON written canonically, unsorted, with whitespace, with every
  escape form, with floats, large integers, ``-0``, duplicate and forbidden
  keys, and single-character mutations of all of those);
- whole chains verify to the same result (verdict, reasons, messages, facts)
  as a reference loop that runs ``_check_row`` on every row.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plangate.canonical import StrictJSONError, canonical_text
from plangate.forbidden_keys import SECRET_KEYS
from plangate.ledger.chain import (
    GENESIS_PREV_HASH,
    VERDICT_INTACT,
    Head,
    StoredRow,
    _check_row,
    _decode_fields,
    _PayloadCheck,
    _tampered,
    _Walk,
    entry_hash_from_text,
    verify_rows,
    verify_values,
)
from plangate.verdict import Result
from support.branches import Branches

AT = "2026-12-02T10:00:00Z"
DIGEST = "sha256:" + "0" * 64

keys = st.sampled_from(["a", "b", "B", "é", "a b", "x\\y", 'q"', "\u00ff", "\ue000", "\U0001f600"])
keys = keys | st.sampled_from(sorted(SECRET_KEYS)) | st.text("abcxyz_-.", min_size=1, max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
    | st.sampled_from(["\\", '"', "/", "\n", "\x1f", "\x7f", "\u2028", "é", "\U0001f600", " "])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=10,
)
objects = st.dictionaries(keys, values, max_size=4)


def writings(value: dict[str, Any]) -> list[str]:
    """The value written canonically and in several near-canonical ways."""
    out = [
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True),
        json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        json.dumps(value, sort_keys=True, ensure_ascii=False),
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, indent=1),
    ]
    with contextlib.suppress(StrictJSONError, TypeError):  # RFC 8785 refuses the value
        out.append(canonical_text(value))
    return out


def full_accepts(text: str) -> bool:
    return _decode_fields((1, "k", "s", text, AT, DIGEST, DIGEST))[0] is None


def test_quick_payload_check_never_accepts_what_the_full_checks_refuse() -> None:
    seen = Branches()

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(objects, st.data())
    def check_one(value: dict[str, Any], data: st.DataObject) -> None:
        seen.example()
        check = _PayloadCheck()
        verdicts: set[bool] = set()
        for text in writings(value):
            mutated = [text]
            if text:
                index = data.draw(st.integers(0, len(text) - 1))
                char = data.draw(
                    st.sampled_from([" ", '"', "\\", "0", "-", "{", "}", "[", ",", "é"])
                )
                mutated += [
                    text[:index] + char + text[index + 1 :],
                    text[:index] + char + text[index:],
                ]
            for candidate in mutated:
                accepted = check.accepts(candidate)
                verdicts.add(accepted)
                if accepted:
                    assert full_accepts(candidate), candidate
        seen.reached("quick check accepts", True in verdicts)
        seen.reached("quick check refuses", False in verdicts)

    check_one()
    seen.assert_share("quick check accepts")
    seen.assert_share("quick check refuses")


def reference_verify(rows: list[tuple[Any, ...]], head: Head) -> Result:
    """The full checks on every row (what ``verify_values`` must equal)."""
    walk = _Walk()
    for values in rows:
        expected = walk.count + 1
        row = StoredRow(*values)
        reason = _check_row(row, expected, walk.prev_hash)
        if reason is not None:
            return _tampered(walk, expected, reason)
        walk.count = expected
        walk.prev_hash = row.entry_hash
        walk.kinds[row.kind] = walk.kinds.get(row.kind, 0) + 1
    if head.seq != walk.count or head.entry_hash != walk.prev_hash:
        return verify_values(rows, head)  # the head rules are shared code
    return Result(
        VERDICT_INTACT,
        (),
        {
            "entries": walk.count,
            "head_hash": walk.prev_hash,
            "first_bad_seq": None,
            "kinds": dict(sorted(walk.kinds.items())),
        },
    )


def chain(items: list[tuple[str, str, str, str]]) -> list[tuple[Any, ...]]:
    """Rows chained over (kind, subject, payload text, at), the texts hashed as stored."""
    rows: list[tuple[Any, ...]] = []
    prev = GENESIS_PREV_HASH
    for seq, (kind, subject, text, at) in enumerate(items, start=1):
        entry_hash = entry_hash_from_text(
            seq=seq, kind=kind, subject=subject, payload_text=text, at=at, prev_hash=prev
        )
        rows.append((seq, kind, subject, text, at, prev, entry_hash))
        prev = entry_hash
    return rows


texts = objects.flatmap(lambda value: st.sampled_from(writings(value)))
items = st.tuples(
    st.sampled_from(["c3_issue", "hook_decision", "Bad-Kind"]),
    st.sampled_from(["TASK-0001", "t é", " edge", "x\ty", ""]),
    texts,
    st.sampled_from(
        [AT, "2026-12-02T10:00:01Z", "2026-02-30T10:00:00Z", "2026-12-02 10:00:00", ""]
    ),
)


def _canonical_or_none(value: dict[str, Any]) -> str | None:
    try:
        return canonical_text(value)
    except (StrictJSONError, TypeError):
        return None


# Well-formed entries (known kinds, a valid subject and time, the RFC 8785 payload), so
# that untouched chains verify and the INTACT answers are compared too.
well_formed_items = st.tuples(
    st.sampled_from(["c3_issue", "hook_decision"]),
    st.sampled_from(["TASK-0001", "-"]),
    objects.map(_canonical_or_none).filter(lambda text: text is not None and full_accepts(text)),
    st.sampled_from([AT, "2026-12-02T10:00:01Z"]),
)


def _verify_values_equals_the_full_checks(
    seen: Branches, entries: list[tuple[str, str, str, str]], data: st.DataObject
) -> None:
    rows = chain(entries)
    # One optional edit behind the chain's back: any field of any row.
    if data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(rows) - 1))
        field = data.draw(st.integers(0, 6))
        row = list(rows[index])
        row[field] = data.draw(
            st.sampled_from([None, 7, True, b"x", "", DIGEST, "c3_issue", '{"a":1}', AT])
        )
        rows[index] = tuple(row)
    head = Head(len(rows), rows[-1][6])
    expected = reference_verify(rows, head)
    seen.reached(expected.verdict, True)
    for got in (verify_values(rows, head), verify_rows([StoredRow(*r) for r in rows], head)):
        assert got.verdict == expected.verdict
        assert got.reasons == expected.reasons
        assert got.facts == expected.facts


def test_verify_values_equals_the_full_checks_row_by_row() -> None:
    seen = Branches()

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.one_of(
            st.lists(items, min_size=1, max_size=6),
            st.lists(well_formed_items, min_size=1, max_size=6),
        ),
        st.data(),
    )
    def check(entries: list[tuple[str, str, str, str]], data: st.DataObject) -> None:
        seen.example()
        _verify_values_equals_the_full_checks(seen, entries, data)

    check()
    seen.assert_share("INTACT")
    seen.assert_share("TAMPERED")
