"""The RunEvidence verifier: re-derive every binding and the completeness itself (pure).

:func:`verify_document` trusts nothing in the EV but its injected fields'
formats: it re-runs the record checks and re-derives every record- and
log-bound field with the producer's own functions, from the bytes the
service read again, and compares. Completeness is derived, never read: the
EV is ``PARTIAL`` (exit 4) when any value at any depth is ``"unavailable"``
or an escalation leaves a binding unverified (``harness_drift_unchecked``,
``pr_number_unverified``, ``delivery_record_unanchored``); otherwise ``COMPLETE``
(exit 0). Any mismatch, malformed document or privacy violation is ``REJECTED``
(exit 1).
"""

from __future__ import annotations

from typing import Any

from plangate.canonical import StrictJSONError, strict_loads_object
from plangate.evidence.contract import PARTIAL_ESCALATIONS, structure_problems, unavailable_paths
from plangate.evidence.privacy import output_problems
from plangate.evidence.producer import TaskInputs, bound_fields, check_record, load_run
from plangate.verdict import Reason, Result

COMPLETE = "COMPLETE"
PARTIAL = "PARTIAL"
REJECTED = "REJECTED"


def _reject(code: str, message: str, hint: str, facts: dict[str, Any]) -> Result:
    return Result(REJECTED, (Reason(code, message, hint),), facts)


def verify_document(ev_bytes: bytes, inputs: TaskInputs) -> Result:
    """Verify one EV document against the task's record and delivery log."""
    facts: dict[str, Any] = {"task_id": inputs.task_id}
    try:
        doc = strict_loads_object(ev_bytes, "RunEvidence")
    except StrictJSONError as exc:
        return _reject("EVIDENCE_DOCUMENT_MALFORMED", exc.message, exc.hint, facts)
    problems = structure_problems(doc)
    if problems:
        return _reject(
            "EVIDENCE_DOCUMENT_INVALID",
            "the document violates the RunEvidence contract: " + "; ".join(problems),
            "produce it again with 'plangate evidence produce'",
            facts,
        )
    facts["run_id"] = doc["run_id"]
    if doc["task_id"] != inputs.task_id:
        return _reject(
            "EVIDENCE_TASK_MISMATCH",
            f"the evidence is for {doc['task_id']}, not {inputs.task_id}",
            "verify it against its own task",
            facts,
        )
    record, reasons = check_record(inputs)
    if record is None:
        return Result(REJECTED, tuple(reasons), facts)
    run, reasons = load_run(inputs, record)
    if run is None:
        return Result(REJECTED, tuple(reasons), facts)
    if run.terminal_state is None:
        return _reject(
            "EVIDENCE_RUN_NOT_TERMINAL",
            f"the delivery record shows a non-terminal run (last state {run.last_state})",
            "evidence exists only for terminal runs",
            facts,
        )
    fields, refs, escalations = bound_fields(inputs, record, run)
    mismatched = sorted(key for key, value in fields.items() if doc.get(key) != value)
    if doc["evidence_refs"][: len(refs)] != refs:
        mismatched.append("evidence_refs")
    present = {(e["kind"], e["detail"]) for e in doc.get("escalation", [])}
    if not set(escalations) <= present:
        mismatched.append("escalation")
    if mismatched:
        return _reject(
            "EVIDENCE_BINDING_MISMATCH",
            "fields differ from what the record and the delivery log show: "
            + ", ".join(mismatched),
            "the evidence was edited or the task changed since it was produced",
            {**facts, "mismatched": mismatched},
        )
    leaks = output_problems(doc)
    if leaks:
        return _reject(
            "EVIDENCE_PRIVACY_VIOLATION", "; ".join(leaks), "redact the document's inputs", facts
        )
    missing = list(unavailable_paths(doc))
    unverified = sorted(
        {e["kind"] for e in doc.get("escalation", []) if e["kind"] in PARTIAL_ESCALATIONS}
    )
    facts.update(
        {
            "terminal_state": doc["terminal_state"],
            "unavailable": missing,
            "unverified": unverified,
        }
    )
    if missing or unverified:
        named = missing + [f"escalation:{kind}" for kind in unverified]
        return Result(
            PARTIAL,
            (
                Reason(
                    "EVIDENCE_PARTIAL",
                    "every binding holds, but the evidence is partial: " + ", ".join(named),
                    "unavailable fields could not be observed; they are never padded",
                    tuple(named),
                ),
            ),
            facts,
        )
    return Result(COMPLETE, (), facts)
