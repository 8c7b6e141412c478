"""Property: any single mutation of a stored ledger is detected, at the right seq.

Mutations: one changed payload character, kind, subject, time, prev_hash,
entry_hash or seq; a deleted entry (the last one included); a forged,
correctly chained entry inserted (the rest renumbered); two neighbours swapped.
Checked on the pure chain rules with generated ledgers, and on both real
databases (the stored rows rewritten behind the ledger's back).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration" / "ledger"))

from plangate.canonical import canonical_text
from plangate.ledger.chain import (
    GENESIS_PREV_HASH,
    Head,
    StoredRow,
    compute_entry_hash,
    verify_rows,
)
from support.ledger import Backend, make_backend

Row = tuple[Any, ...]
AT = "2026-12-02T10:00:00Z"
FIELDS = {"kind": 1, "subject": 2, "payload": 3, "at": 4, "prev_hash": 5, "entry_hash": 6}

# Text both databases can store: no NUL (PostgreSQL) and no lone surrogates.
db_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
db_text = st.text(db_chars, max_size=24)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | db_text,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text("abcxyz_", min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
payloads = st.dictionaries(st.text("abcdefgh_", min_size=1, max_size=8), json_values, max_size=4)


def chain_rows(items: list[tuple[str, str, dict[str, Any]]]) -> list[Row]:
    """Stored rows of a correctly chained ledger of (kind, subject, payload) items."""
    rows: list[Row] = []
    prev = GENESIS_PREV_HASH
    for seq, (kind, subject, payload) in enumerate(items, start=1):
        entry_hash = compute_entry_hash(
            seq=seq, kind=kind, subject=subject, payload=payload, at=AT, prev_hash=prev
        )
        rows.append((seq, kind, subject, canonical_text(payload), AT, prev, entry_hash))
        prev = entry_hash
    return rows


@dataclass(frozen=True)
class Mutation:
    """One single mutation and the seq at which verification must report it."""

    rows: list[Row]
    first_bad_seq: int


@st.composite
def mutations(draw: st.DrawFn, rows: list[Row]) -> Mutation:
    """Draw one single mutation of ``rows``."""
    n = len(rows)
    op = draw(
        st.sampled_from(
            [
                "payload_char",
                "kind",
                "subject",
                "at",
                "prev_hash",
                "entry_hash",
                "seq",
                "delete",
                "insert",
                "swap",
            ]
        )
    )
    out = [list(row) for row in rows]
    if op == "insert":
        k = draw(st.integers(0, n))
        prev = rows[k - 1][6] if k else GENESIS_PREV_HASH
        forged = chain_rows([("c3_issue", "FORGED", {"forged": True})])[0]
        # Forge it properly: the right seq and the right link to the entry before.
        entry_hash = compute_entry_hash(
            seq=k + 1,
            kind="c3_issue",
            subject="FORGED",
            payload={"forged": True},
            at=AT,
            prev_hash=prev,
        )
        new = [k + 1, forged[1], forged[2], forged[3], AT, prev, entry_hash]
        shifted = [[row[0] + 1, *row[1:]] for row in out[k:]]
        # The forged entry itself verifies; the entry after it no longer links.
        return Mutation([tuple(r) for r in [*out[:k], new, *shifted]], k + 2 if k < n else k + 1)
    if op == "swap":
        k = draw(st.integers(0, n - 2))
        a, b = out[k], out[k + 1]
        out[k], out[k + 1] = [a[0], *b[1:]], [b[0], *a[1:]]
        return Mutation([tuple(r) for r in out], k + 1)
    k = draw(st.integers(0, n - 1))
    if op == "delete":
        del out[k]
        return Mutation([tuple(r) for r in out], k + 1)
    if op == "seq":
        used = {row[0] for row in rows}
        new_seq = draw(st.integers(-5, n + 5).filter(lambda s: s not in used))
        out[k][0] = new_seq
        # Storage order is seq order; the first position holding a wrong seq.
        ordered = sorted(out, key=lambda r: r[0])
        bad = next(i for i, r in enumerate(ordered, start=1) if r[0] != i)
        return Mutation([tuple(r) for r in ordered], bad)
    if op == "payload_char":
        text: str = out[k][3]
        pos = draw(st.integers(0, len(text) - 1))
        char = draw(db_chars.filter(lambda c: c != text[pos]))
        out[k][3] = text[:pos] + char + text[pos + 1 :]
        return Mutation([tuple(r) for r in out], k + 1)
    index = FIELDS[op]
    original = out[k][index]
    out[k][index] = draw(db_text.filter(lambda t: t != original))
    return Mutation([tuple(r) for r in out], k + 1)


def stored(rows: list[Row]) -> list[StoredRow]:
    return [StoredRow(*row) for row in rows]


@st.composite
def ledgers_and_mutations(draw: st.DrawFn) -> tuple[list[Row], Mutation]:
    items = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["c3_issue", "exec_started", "arbiter_decision"]),
                st.sampled_from(["TASK-0001", "TASK-0002", "sha256:" + "a" * 64]),
                payloads,
            ),
            min_size=2,
            max_size=8,
        )
    )
    rows = chain_rows(items)
    return rows, draw(mutations(rows))


@settings(max_examples=150, deadline=None)
@given(ledgers_and_mutations())
def test_pure_chain_detects_any_single_mutation(case: tuple[list[Row], Mutation]) -> None:
    rows, mutation = case
    head = Head(len(rows), rows[-1][6])
    assert verify_rows(stored(rows), head).verdict == "INTACT"
    result = verify_rows(stored(mutation.rows), head)
    assert result.verdict == "TAMPERED"
    assert result.exit_code == 1
    assert result.facts["first_bad_seq"] == mutation.first_bad_seq


@settings(max_examples=60, deadline=None)
@given(st.lists(payloads, min_size=1, max_size=6))
def test_pure_chain_accepts_every_untouched_ledger(items: list[dict[str, Any]]) -> None:
    rows = chain_rows([("c3_issue", "TASK-0001", p) for p in items])
    result = verify_rows(stored(rows), Head(len(rows), rows[-1][6]))
    assert result.verdict == "INTACT"
    assert result.facts["entries"] == len(rows)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def seeded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Backend, list[Row]]]:
    """A real ledger of six entries written through the API, and its pristine rows."""
    pg_base_url = request.getfixturevalue("pg_url") if request.param == "postgresql" else None
    with make_backend(request.param, tmp_path, pg_base_url) as backend:
        with backend.open() as ledger:
            ledger.append("c3_issue", "TASK-0001", {"decision": "AUTO_APPROVED", "n": 1.5})
            ledger.append("c3_issue_refused", "TASK-0002", {"reasons": ["C1_MARKER_MISSING"]})
            ledger.append("exec_started", "TASK-0001", {"digests": {"plan": "sha256:" + "1" * 64}})
            ledger.append("exec_ended", "TASK-0001", {"exit": 0, "note": "é ☃ \u2028"})
            ledger.append("arbiter_decision", "TASK-0003", {"decision": "BLOCKED", "ok": False})
            ledger.append("c3_verify", "TASK-0001", {"verdict": "ACCEPTED", "list": [None, 2]})
            assert ledger.verify().verdict == "INTACT"
        yield backend, backend.raw_rows()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_real_databases_detect_any_single_mutation(
    seeded: tuple[Backend, list[Row]], data: st.DataObject
) -> None:
    backend, pristine = seeded
    mutation = data.draw(mutations(pristine))
    backend.rewrite(mutation.rows)
    try:
        with backend.open() as ledger:
            result = ledger.verify()
        assert result.verdict == "TAMPERED"
        assert result.facts["first_bad_seq"] == mutation.first_bad_seq
    finally:
        backend.rewrite(pristine)
    with backend.open() as ledger:
        assert ledger.verify().verdict == "INTACT"


any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
rich_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(rich_values)
def test_fast_canonical_text_equals_the_reference(value: Any) -> None:
    from plangate.ledger.chain import fast_canonical_text

    assert fast_canonical_text(value) == canonical_text(value)


@settings(max_examples=200, deadline=None)
@given(
    subject=any_text.filter(lambda t: t and t.isprintable() and t == t.strip()),
    payload=st.dictionaries(any_text, rich_values, max_size=3),
    seq=st.integers(1, 2**40),
)
def test_verify_hash_path_equals_append_hash_path(
    subject: str, payload: dict[str, Any], seq: int
) -> None:
    from plangate.ledger.chain import entry_hash_from_text

    fields = {"kind": "c3_issue", "subject": subject, "at": AT, "prev_hash": GENESIS_PREV_HASH}
    assert entry_hash_from_text(
        seq=seq, payload_text=canonical_text(payload), **fields
    ) == compute_entry_hash(seq=seq, payload=payload, **fields)
