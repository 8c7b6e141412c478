"""The c3-prime record contract: its constants, defined once (docs/approval.md)."""

from __future__ import annotations

RECORD_REQUIRED_KEYS: tuple[str, ...] = (
    "task_id",
    "approval_kind",
    "phase",
    "decision",
    "source_sha",
    "plan_hash",
    "plan_package_hash",
    "artifact_hashes",
    "c1_evidence_ref",
    "c2_evidence_ref",
    "reviewers",
    "policy_ref",
    "issued_at",
    "issued_by",
)
RECORD_OPTIONAL_KEYS: tuple[str, ...] = ("derived_loopspec_hash", "scope_digest")
RECORD_ALLOWED_KEYS = frozenset(RECORD_REQUIRED_KEYS + RECORD_OPTIONAL_KEYS)
RECORD_REQUIRED_SET = frozenset(RECORD_REQUIRED_KEYS)

APPROVAL_KIND = "c3-prime"
PHASE = "C-3'"
DECISIONS: tuple[str, ...] = ("AUTO_APPROVED", "HUMAN_ESCALATED", "BLOCKED")
VERDICTS: tuple[str, ...] = ("approve", "reject")
REVIEWERS: tuple[str, ...] = ("model_a", "model_b")
SNAPSHOT_KEYS: tuple[str, ...] = (
    "verdict",
    "plan_hash",
    "source_sha",
    "plan_package_hash",
    "evidence_ref",
)
TRIO_KEYS: tuple[str, ...] = ("plan_hash", "source_sha", "plan_package_hash")
REVIEWER_SET = frozenset(REVIEWERS)
SNAPSHOT_KEY_SET = frozenset(SNAPSHOT_KEYS)


LEGACY_PHASE = "C-3"
LEGACY_STATUSES: tuple[str, ...] = ("APPROVED", "CONDITIONAL", "REJECTED")
LEGACY_REQUIRED_KEYS: tuple[str, ...] = (
    "task_id",
    "phase",
    "c3_status",
    "approved_by",
    "approved_at",
    "plan_hash",
)
LEGACY_OPTIONAL_KEYS: tuple[str, ...] = ("conditions", "rejection_reason", "source", "gate_checks")
LEGACY_SOURCES: tuple[str, ...] = ("cli", "conversation")

