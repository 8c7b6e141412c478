"""Adversarial review: the verifier holds an edited EV to the producer's own rules."""

from __future__ import annotations

import copy

from plangate.canonical import pretty_bytes
from plangate.evidence.producer import produce
from plangate.evidence.verifier import verify_document
from support.evidence import injected, inputs


def test_a_run_that_ends_before_it_starts_is_refused():
    """The producer refuses --started-at later than --now; the verifier accepted it."""
    outcome = produce(inputs(), injected())
    assert outcome.document is not None
    doc = copy.deepcopy(outcome.document)
    assert verify_document(pretty_bytes(doc), inputs()).verdict == "PARTIAL"
    doc["started_at"] = "2999-01-01T00:00:00Z"
    result = verify_document(pretty_bytes(doc), inputs())
    assert result.verdict == "REJECTED"
    assert result.codes == ("EVIDENCE_DOCUMENT_INVALID",)
    assert "started_at" in result.reasons[0].message
