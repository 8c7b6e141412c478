"""The witness's bytes and how they are judged: only a witness of this very ledger, in its
format, with a creation time, is one; anything else is unreadable (and counts)."""

from __future__ import annotations

import json

import pytest

from plangate.ledger.config import LedgerLocation
from plangate.ledger.witness import judge_witness, witness_bytes

LOCATION = LedgerLocation("sqlite", "/r/.plangate/ledger.sqlite3", "default", "/r")


def test_a_witness_written_for_a_ledger_is_read_back_as_present() -> None:
    data = witness_bytes(LOCATION, "2026-12-05T00:00:00Z")
    assert judge_witness(LOCATION, data) == ("present", "2026-12-05T00:00:00Z")
    assert json.loads(data)["ledger"] == "/r/.plangate/ledger.sqlite3"


def test_the_path_is_compared_normalised() -> None:
    other_spelling = LOCATION._replace(target="/r/./x/../.plangate/ledger.sqlite3")
    assert judge_witness(other_spelling, witness_bytes(LOCATION, "2026-12-05T00:00:00Z"))[0] == (
        "present"
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("[]", "not a plangate-ledger-witness"),
        ('{"format": "plangate-ledger-witness", "version": 2}', "not a plangate-ledger-witness"),
        ('{"format": "plangate-ledger-witness", "version": 1, "ledger": "/elsewhere"}',
         "names another ledger"),
        ('{"format": "plangate-ledger-witness", "version": 1, '
         '"ledger": "/r/.plangate/ledger.sqlite3", "created": "yesterday"}',
         "no creation time"),
        ("{", "not JSON"),
    ],
)
def test_anything_else_is_unreadable(value: str, why: str) -> None:
    state, detail = judge_witness(LOCATION, value.encode())
    assert state == "unreadable"
    assert why in detail
