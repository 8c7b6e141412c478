"""Continuation statements: strict parsing and the binding rule (pure)."""

from __future__ import annotations

import json

import pytest

from plangate.authority.continuation import (
    Continuation,
    ContinuationFacts,
    Expected,
    continuation_bytes,
    continuation_reasons,
    parse_continuation,
)
from plangate.authority.verify import Verified
from plangate.verdict import Reason

GOOD = Continuation("TASK-0001", "sha256:" + "a" * 64, "b" * 40, "c" * 40, "carol@example.com")
CAROL = Verified("carol@example.com", "ssh-ed25519", "SHA256:x", ("approver",), True)
EXPECTED = Expected("TASK-0001", "sha256:" + "a" * 64, "b" * 40, "c" * 40)


def test_the_canonical_bytes_parse_back() -> None:
    assert parse_continuation(continuation_bytes(GOOD)) == GOOD


def _mutated(**change: object) -> bytes:
    value = json.loads(continuation_bytes(GOOD))
    value.update(change)
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode() + b"\n"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"[]",
        b"{}",
        continuation_bytes(GOOD).rstrip(b"\n"),  # not canonical
        continuation_bytes(GOOD).replace(b'"version":1', b'"version":2'),
        _mutated(kind="plangate-review-statement"),
        _mutated(extra="x"),
        _mutated(base="c" * 12),
        _mutated(source_sha="main"),
        _mutated(plan_hash="md5:abc"),
        _mutated(principal=""),
        _mutated(task_id=1),
        b" " * 20000,
    ],
)
def test_anything_else_is_not_a_continuation(data: bytes) -> None:
    assert isinstance(parse_continuation(data), str)


def test_a_signed_matching_statement_holds() -> None:
    assert continuation_reasons(ContinuationFacts(GOOD, "", CAROL), EXPECTED) == []


@pytest.mark.parametrize("field", ["task_id", "plan_hash", "source_sha", "base"])
def test_every_binding_is_checked(field: str) -> None:
    expected = EXPECTED._replace(**{field: "other"})
    reasons = continuation_reasons(ContinuationFacts(GOOD, "", CAROL), expected)
    assert [r.code for r in reasons] == ["CONTINUATION_STALE"]


def test_signature_failures_and_a_lying_principal_are_all_reported() -> None:
    bad = Reason("CONTINUATION_SIGNER_NOT_AUTHORISED", "x")
    assert [r.code for r in continuation_reasons(ContinuationFacts(GOOD, "", bad), EXPECTED)] == [
        "CONTINUATION_SIGNER_NOT_AUTHORISED"
    ]
    bob = CAROL._replace(principal="bob@example.com")
    codes = [r.code for r in continuation_reasons(ContinuationFacts(GOOD, "", bob), EXPECTED)]
    assert codes == ["CONTINUATION_PRINCIPAL_MISMATCH"]


def test_an_unparsed_statement_is_malformed() -> None:
    reasons = continuation_reasons(ContinuationFacts(None, "not json", None), EXPECTED)
    assert [r.code for r in reasons] == ["CONTINUATION_MALFORMED"]
