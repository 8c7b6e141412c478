"""Legacy human C-3 records (no ``approval_kind`` key at all).

Rules: the legacy schema (allowlisted keys, ``phase == "C-3"``,
``c3_status`` in APPROVED / CONDITIONAL / REJECTED, non-empty ``approved_by``,
an ISO 8601 ``approved_at``, a digest ``plan_hash``; ``conditions`` required
for CONDITIONAL and ``rejection_reason`` for REJECTED; ``_`` annotations of
any value), ``task_id`` bound to the task directory, and ``plan_hash`` equal
to the current plan.md. Exec may accept APPROVED; delivery and RunEvidence
require c3-prime and block legacy.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from plangate.approval import contract as c
from plangate.canonical import is_digest
from plangate.plan.package import compute_package
from plangate.shapes import is_task_id
from plangate.snapshot import TaskSnapshot
from plangate.text import is_blank
from plangate.verdict import Reason, Result

_HINT = ("this record cannot be used: get the plan reviewed and approved again and issue a "
         "c3-prime record with 'plangate c3 issue' (an approval record is never edited by hand)")
_STALE_HINT = ("plan.md changed after it was approved: the changed plan needs new C-1/C-2 "
               "reviews ('plangate review mark') and a new human approval ('plangate c3 "
               "issue'); never edit the record's plan_hash to match")


def _is_iso_datetime(value: object) -> bool:
    if not isinstance(value, str) or not value:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value


def _allowlisted_keys(record: dict[str, Any]) -> list[Reason]:
    allowed = set(c.LEGACY_REQUIRED_KEYS) | set(c.LEGACY_OPTIONAL_KEYS)
    unknown = [k for k in record if k not in allowed and not k.startswith("_")]
    if not unknown:
        return []
    return [Reason("LEGACY_UNKNOWN_KEYS", f"unknown keys: {', '.join(unknown)}", _HINT)]


def _required_keys(record: dict[str, Any]) -> list[Reason]:
    missing = [k for k in c.LEGACY_REQUIRED_KEYS if k not in record]
    if not missing:
        return []
    return [Reason("LEGACY_MISSING_KEYS", f"missing keys: {', '.join(missing)}", _HINT)]


def _task_id(record: dict[str, Any], snapshot: TaskSnapshot) -> list[Reason]:
    if "task_id" not in record:
        return []
    task_id = record["task_id"]
    if not isinstance(task_id, str) or not is_task_id(task_id):
        return [Reason("LEGACY_TASK_ID_INVALID", f"task_id {task_id!r} is invalid", _HINT)]
    if task_id != snapshot.task_id:
        return [Reason("LEGACY_TASK_ID_MISMATCH",
                       f"task_id {task_id!r} does not match the directory {snapshot.task_id!r}",
                       "a record cannot be reused for another task")]
    return []


def _phase(record: dict[str, Any]) -> list[Reason]:
    if "phase" not in record or record["phase"] == c.LEGACY_PHASE:
        return []
    return [Reason("LEGACY_PHASE_INVALID", f"phase {record['phase']!r} is not 'C-3'", _HINT)]


def _status(record: dict[str, Any]) -> list[Reason]:
    status = record.get("c3_status")
    if "c3_status" not in record or status in c.LEGACY_STATUSES:
        return []
    return [Reason("LEGACY_STATUS_INVALID", f"c3_status {status!r} is invalid", _HINT)]


def _invalid(message: str) -> Reason:
    return Reason("LEGACY_FIELD_INVALID", message, _HINT)


def _approval_fields(record: dict[str, Any]) -> list[Reason]:
    reasons = []
    approved_by = record.get("approved_by")
    if "approved_by" in record and (not isinstance(approved_by, str) or is_blank(approved_by)):
        reasons.append(_invalid("approved_by must be a non-empty string"))
    if "approved_at" in record and not _is_iso_datetime(record["approved_at"]):
        reasons.append(_invalid("approved_at is not an ISO 8601 date-time"))
    if "plan_hash" in record and not is_digest(record["plan_hash"]):
        reasons.append(_invalid("plan_hash is not sha256:<64 hex>"))
    return reasons


def _status_fields(record: dict[str, Any]) -> list[Reason]:
    status = record.get("c3_status")
    if status == "CONDITIONAL" and not record.get("conditions"):
        return [_invalid("CONDITIONAL requires conditions")]
    if status == "REJECTED" and not record.get("rejection_reason"):
        return [_invalid("REJECTED requires rejection_reason")]
    return []


def _source(record: dict[str, Any]) -> list[Reason]:
    if "source" not in record or record["source"] in c.LEGACY_SOURCES:
        return []
    return [_invalid("source must be cli or conversation")]


def _gate_checks(record: dict[str, Any]) -> list[Reason]:
    if "gate_checks" not in record:
        return []
    gate_checks = record["gate_checks"]
    ok = isinstance(gate_checks, dict) and all(
        (k in ("goal", "scope", "risk") and isinstance(v, bool))
        or (k == "note" and isinstance(v, str))
        or k.startswith("_")
        for k, v in gate_checks.items()
    )
    return [] if ok else [_invalid("gate_checks has an invalid shape")]


SCHEMA_RULES: tuple[Callable[[dict[str, Any]], list[Reason]], ...] = (
    _allowlisted_keys,
    _required_keys,
)
FIELD_RULES: tuple[Callable[[dict[str, Any]], list[Reason]], ...] = (
    _phase,
    _status,
    _approval_fields,
    _status_fields,
    _source,
    _gate_checks,
)


def _plan_hash_current(record: dict[str, Any], snapshot: TaskSnapshot,
                       current: str | None) -> list[Reason]:
    if current is None:
        plan_read = snapshot.artifacts.get("plan.md")
        detail = plan_read.detail if plan_read is not None else "missing"
        return [Reason("ARTIFACT_MISSING", f"plan.md is unusable ({detail})",
                       "restore the approved plan.md in the task directory")]
    if is_digest(record.get("plan_hash")) and record["plan_hash"] != current:
        return [Reason("LEGACY_PLAN_HASH_STALE",
                       "plan_hash differs from the current plan.md: the plan changed after "
                       "it was approved (stale)", _STALE_HINT)]
    return []


def _verdict(status: Any, reasons: list[Reason], facts: dict[str, Any]) -> Result:
    if reasons:
        return Result("REJECTED", tuple(reasons), facts)
    if status == "APPROVED":
        return Result("ACCEPTED", (), facts)
    if status == "CONDITIONAL":
        return Result("HUMAN_ESCALATED", (Reason(
            "LEGACY_CONDITIONAL", "legacy C-3 is CONDITIONAL: a human must decide", _HINT),),
            facts)
    return Result("REJECTED",
                  (Reason("LEGACY_REJECTED", "legacy C-3 record is REJECTED", _HINT),), facts)


def verify_legacy(record: dict[str, Any], snapshot: TaskSnapshot) -> Result:
    """Verify a legacy C-3 record (pure).

    Order: :data:`SCHEMA_RULES`, the task id bound to the directory,
    :data:`FIELD_RULES`, then ``plan_hash`` against the current plan.md; every
    failure is reported. A consistent record's ``c3_status`` decides: APPROVED is
    accepted, CONDITIONAL needs a human, REJECTED is rejected.
    """
    reasons = [r for rule in SCHEMA_RULES for r in rule(record)]
    reasons += _task_id(record, snapshot)
    reasons += [r for rule in FIELD_RULES for r in rule(record)]
    current = compute_package(snapshot).plan_hash
    reasons += _plan_hash_current(record, snapshot, current)
    facts: dict[str, Any] = {
        "kind": "legacy",
        "task_id": record.get("task_id"),
        "decision": record.get("c3_status"),
        "plan_hash": record.get("plan_hash"),
        "record": record,
        "current_plan_hash": current,
    }
    return _verdict(record.get("c3_status"), reasons, facts)
