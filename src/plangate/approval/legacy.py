"""Legacy human C-3 records (no ``approval_kind`` key at all; DECISIONS 10).

Rules: the legacy schema (allowlisted keys, ``phase == "C-3"``,
``c3_status`` in APPROVED / CONDITIONAL / REJECTED, non-empty ``approved_by``,
an ISO 8601 ``approved_at``, a digest ``plan_hash``; ``conditions`` required
for CONDITIONAL and ``rejection_reason`` for REJECTED; ``_`` annotations of
any value), ``task_id`` bound to the task directory, and ``plan_hash`` equal
to the current plan.md. Exec may accept APPROVED; delivery and RunEvidence
require c3-prime and block legacy.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from plangate.approval import contract as c
from plangate.canonical import is_digest
from plangate.plan.package import compute_package
from plangate.snapshot import TASK_ID_RE, TaskSnapshot
from plangate.text import is_blank
from plangate.verdict import Reason, Result

_HINT = "fix approvals/c3.json or issue a c3-prime record with 'plangate c3 issue'"


def _is_iso_datetime(value: object) -> bool:
    if not isinstance(value, str) or not value:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value


def verify_legacy(record: dict[str, Any], snapshot: TaskSnapshot) -> Result:
    """Verify a legacy C-3 record (pure)."""
    reasons: list[Reason] = []
    status = record.get("c3_status")
    facts: dict[str, Any] = {
        "kind": "legacy",
        "task_id": record.get("task_id"),
        "decision": status,
        "plan_hash": record.get("plan_hash"),
        "record": record,
    }
    allowed = set(c.LEGACY_REQUIRED_KEYS) | set(c.LEGACY_OPTIONAL_KEYS)
    unknown = [k for k in record if k not in allowed and not k.startswith("_")]
    if unknown:
        reasons.append(Reason("LEGACY_UNKNOWN_KEYS", f"unknown keys: {', '.join(unknown)}", _HINT))
    missing = [k for k in c.LEGACY_REQUIRED_KEYS if k not in record]
    if missing:
        reasons.append(Reason("LEGACY_MISSING_KEYS", f"missing keys: {', '.join(missing)}", _HINT))
    task_id = record.get("task_id")
    if "task_id" in record:
        if not isinstance(task_id, str) or TASK_ID_RE.fullmatch(task_id) is None:
            reasons.append(
                Reason("LEGACY_TASK_ID_INVALID", f"task_id {task_id!r} is invalid", _HINT)
            )
        elif task_id != snapshot.task_id:
            reasons.append(
                Reason(
                    "LEGACY_TASK_ID_MISMATCH",
                    f"task_id {task_id!r} does not match the directory {snapshot.task_id!r}",
                    "a record cannot be reused for another task",
                )
            )
    if "phase" in record and record["phase"] != c.LEGACY_PHASE:
        reasons.append(
            Reason("LEGACY_PHASE_INVALID", f"phase {record['phase']!r} is not 'C-3'", _HINT)
        )
    if "c3_status" in record and status not in c.LEGACY_STATUSES:
        reasons.append(Reason("LEGACY_STATUS_INVALID", f"c3_status {status!r} is invalid", _HINT))
    approved_by = record.get("approved_by")
    if "approved_by" in record and (not isinstance(approved_by, str) or is_blank(approved_by)):
        reasons.append(
            Reason("LEGACY_FIELD_INVALID", "approved_by must be a non-empty string", _HINT)
        )
    if "approved_at" in record and not _is_iso_datetime(record["approved_at"]):
        reasons.append(
            Reason("LEGACY_FIELD_INVALID", "approved_at is not an ISO 8601 date-time", _HINT)
        )
    if "plan_hash" in record and not is_digest(record["plan_hash"]):
        reasons.append(Reason("LEGACY_FIELD_INVALID", "plan_hash is not sha256:<64 hex>", _HINT))
    if status == "CONDITIONAL" and not record.get("conditions"):
        reasons.append(Reason("LEGACY_FIELD_INVALID", "CONDITIONAL requires conditions", _HINT))
    if status == "REJECTED" and not record.get("rejection_reason"):
        reasons.append(Reason("LEGACY_FIELD_INVALID", "REJECTED requires rejection_reason", _HINT))
    if "source" in record and record["source"] not in c.LEGACY_SOURCES:
        reasons.append(Reason("LEGACY_FIELD_INVALID", "source must be cli or conversation", _HINT))
    gate_checks = record.get("gate_checks")
    if "gate_checks" in record:
        ok = isinstance(gate_checks, dict) and all(
            (k in ("goal", "scope", "risk") and isinstance(v, bool))
            or (k == "note" and isinstance(v, str))
            or k.startswith("_")
            for k, v in gate_checks.items()
        )
        if not ok:
            reasons.append(
                Reason("LEGACY_FIELD_INVALID", "gate_checks has an invalid shape", _HINT)
            )

    package = compute_package(snapshot)
    plan_read = snapshot.artifacts.get("plan.md")
    if package.plan_hash is None:
        detail = plan_read.detail if plan_read is not None else "missing"
        reasons.append(Reason("ARTIFACT_MISSING", f"plan.md is unusable ({detail})", _HINT))
    elif is_digest(record.get("plan_hash")) and record["plan_hash"] != package.plan_hash:
        reasons.append(
            Reason(
                "LEGACY_PLAN_HASH_STALE",
                "plan_hash differs from the current plan.md (stale)",
                _HINT,
            )
        )
    facts["current_plan_hash"] = package.plan_hash

    if reasons:
        return Result("REJECTED", tuple(reasons), facts)
    if status == "APPROVED":
        return Result("ACCEPTED", (), facts)
    if status == "CONDITIONAL":
        return Result(
            "HUMAN_ESCALATED",
            (
                Reason(
                    "LEGACY_CONDITIONAL", "legacy C-3 is CONDITIONAL: a human must decide", _HINT
                ),
            ),
            facts,
        )
    return Result(
        "REJECTED",
        (Reason("LEGACY_REJECTED", "legacy C-3 record is REJECTED", _HINT),),
        facts,
    )
