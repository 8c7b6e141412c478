"""Does the record's ``derived_loopspec_hash`` name this LoopSpec? (pure)

``plangate loopspec TASK --check`` derives the LoopSpec from the task's plan.md
and compares its hash with the one ``approvals/c3.json`` recorded, both from one
snapshot of the task directory:

- ``LOOPSPEC_RECORD_MISSING``: the record cannot be read;
- a strict-JSON code: the record is not one JSON object;
- ``LOOPSPEC_HASH_NOT_RECORDED``: the record has no ``derived_loopspec_hash``;
- ``LOOPSPEC_HASH_MALFORMED``: the recorded value is not a digest;
- ``LOOPSPEC_HASH_MISMATCH``: plan.md or the actors changed since the issue.
"""

from __future__ import annotations

from plangate.canonical import StrictJSONError, strict_loads_object
from plangate.layout import RECORD_RELPATH
from plangate.plan.loopspec import is_loopspec_hash
from plangate.snapshot import TaskSnapshot
from plangate.verdict import Reason, Result


def check_against_record(snapshot: TaskSnapshot, computed: str) -> Result:
    """Compare ``computed`` with the record's ``derived_loopspec_hash`` (pure over the snapshot)."""
    facts = {"task_id": snapshot.task_id, "computed": computed, "recorded": None}
    record = snapshot.record
    if not record.ok or record.data is None:
        return Result("REJECTED", (Reason(
            "LOOPSPEC_RECORD_MISSING",
            f"{RECORD_RELPATH} cannot be read: {record.detail or record.state.value}",
            "issue the record with 'plangate c3 issue ... --loopspec-actors MAKER,CHECKER'"),),
            facts)
    try:
        doc = strict_loads_object(record.data, RECORD_RELPATH)
    except StrictJSONError as exc:
        return Result("REJECTED", (Reason(exc.code, f"{RECORD_RELPATH}: {exc.message}",
                                          exc.hint),), facts)
    if "derived_loopspec_hash" not in doc:
        return Result("REJECTED", (Reason(
            "LOOPSPEC_HASH_NOT_RECORDED",
            f"{RECORD_RELPATH} has no derived_loopspec_hash field: there is nothing to compare",
            "issue the record with --loopspec-actors MAKER,CHECKER to stamp the hash"),), facts)
    recorded = doc["derived_loopspec_hash"]
    facts["recorded"] = recorded
    if not is_loopspec_hash(recorded):
        return Result("REJECTED", (Reason(
            "LOOPSPEC_HASH_MALFORMED",
            f"recorded derived_loopspec_hash {recorded!r} is not sha256:<64 lowercase hex>",
            "re-issue the record"),), facts)
    if recorded != computed:
        return Result("REJECTED", (Reason(
            "LOOPSPEC_HASH_MISMATCH",
            f"derived LoopSpec hash {computed} differs from the recorded {recorded}",
            "plan.md or the actors changed since the record was issued; re-plan and re-issue"),),
            facts)
    return Result("ACCEPTED", (), facts)
