"""``Ledger.verify_streaming``: the entries handed on as they verify, the verdict of
``verify``, and nothing kept from a chain that does not verify (both backends)."""

from __future__ import annotations

from collections.abc import Iterator

from plangate.ledger import LedgerEntry
from support.ledger import Backend, backend_fixture  # noqa: F401 -- the fixture


def _fill(backend: Backend, count: int) -> list[LedgerEntry]:
    with backend.open() as ledger:
        return [
            ledger.append("c3_issue", f"TASK-{i % 3:04d}", {"n": i, "codes": ["A", "B"]})
            for i in range(count)
        ]


def _seen(entries: Iterator[LedgerEntry]) -> list[LedgerEntry]:
    return list(entries)


def test_an_intact_ledger_hands_every_entry_on_in_order(backend: Backend) -> None:
    appended = _fill(backend, 7)
    with backend.open(create=False) as ledger:
        result, seen = ledger.verify_streaming(_seen)
        plain = ledger.verify()
    assert result.verdict == plain.verdict == "INTACT"
    assert result.facts == plain.facts
    assert seen == appended  # payloads parsed, every field as appended


def test_a_fold_that_stops_early_still_gets_the_whole_chain_verified(backend: Backend) -> None:
    _fill(backend, 5)
    rows = backend.raw_rows()
    rows[3] = (*rows[3][:3], '{"n":99}', *rows[3][4:])  # entry 4 edited behind the ledger
    backend.rewrite(rows)

    def first(entries: Iterator[LedgerEntry]) -> int:
        return next(entries).seq

    with backend.open(create=False) as ledger:
        result, answer = ledger.verify_streaming(first)
    assert result.verdict == "TAMPERED"
    assert result.facts["first_bad_seq"] == 4
    assert answer is None  # fail closed: nothing folded from a chain that does not verify


def test_a_tampered_ledger_hands_on_nothing_after_the_bad_entry(backend: Backend) -> None:
    _fill(backend, 6)
    rows = backend.raw_rows()
    rows[2] = (*rows[2][:3], '{"n":99}', *rows[2][4:])
    backend.rewrite(rows)
    handed: list[int] = []

    def record(entries: Iterator[LedgerEntry]) -> int:
        for entry in entries:
            handed.append(entry.seq)
        return len(handed)

    with backend.open(create=False) as ledger:
        result, answer = ledger.verify_streaming(record)
        plain = ledger.verify()
    assert (result.verdict, plain.verdict) == ("TAMPERED", "TAMPERED")
    assert result.reasons == plain.reasons
    assert handed == [1, 2]  # the edited entry 3 and all after it were never handed on
    assert answer is None


def test_a_truncated_ledger_is_tampered_after_every_entry_was_handed_on(backend: Backend) -> None:
    _fill(backend, 4)
    rows = backend.raw_rows()
    backend.rewrite(rows[:3])  # the last entry deleted; the head still names it
    with backend.open(create=False) as ledger:
        result, answer = ledger.verify_streaming(_seen)
    assert result.verdict == "TAMPERED"
    assert result.reasons[0].code == "LEDGER_HEAD_MISMATCH"
    assert answer is None
