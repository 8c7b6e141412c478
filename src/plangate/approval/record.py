"""The c3-prime record producer (pure): build and serialise ``approvals/c3.json``.

Generation rules (seed 004 sections 2-3 and 5, reference 2.4/2.5, DECISIONS 8-9):

- the task id must be ``TASK-0000`` and equal the task directory's name;
- all six artifacts present and non-empty, and both evidence markers valid,
  accepted and current; otherwise *no record is issued* and a human must act
  (exit 3, the failing marker named);
- ``source_sha`` equals the arbiter's target (R-011); here both are the one
  full commit id the CLI resolved with git;
- ``decision`` is one of the three values and consistent with the verdicts
  (AUTO_APPROVED only with approve/approve, #887 F-3);
- ``issued_at`` is injected by the caller (never read from a clock here);
- serialisation: sorted keys, indent 2, final newline, never a ``c3_status``.

The service runs the acceptor on the serialised bytes before writing them
(DECISIONS 9), so the producer never writes what the acceptor would reject.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from plangate.approval import contract as c
from plangate.canonical import StrictJSONError, is_digest, pretty_bytes, strict_loads_object
from plangate.clock import is_utc_timestamp
from plangate.errors import InputRejected
from plangate.plan.markers import C1, C2
from plangate.plan.package import PackageState
from plangate.snapshot import TASK_ID_RE
from plangate.verdict import Reason


class ReviewerEvidence(NamedTuple):
    """One reviewer's verdict and the reference to its rationale."""

    verdict: str
    evidence_ref: str


def parse_reviewers(data: bytes) -> dict[str, ReviewerEvidence]:
    """Parse the ``--reviewers`` file strictly.

    Shape: ``{"model_a": {"verdict": "approve", "evidence_ref": "..."},
    "model_b": {...}}``; exactly these keys, non-empty strings.
    """
    try:
        doc = strict_loads_object(data, "reviewers file")
    except StrictJSONError as exc:
        raise InputRejected(
            "REVIEWERS_MALFORMED", f"reviewers file: {exc.message}", exc.hint
        ) from None
    if set(doc) != set(c.REVIEWERS):
        raise InputRejected(
            "REVIEWERS_MALFORMED",
            f"reviewers file must hold exactly model_a and model_b, got {sorted(doc)}",
            'write {"model_a": {"verdict": ..., "evidence_ref": ...}, "model_b": {...}}',
        )
    out: dict[str, ReviewerEvidence] = {}
    for model in c.REVIEWERS:
        entry = doc[model]
        if not isinstance(entry, dict) or set(entry) != {"verdict", "evidence_ref"}:
            raise InputRejected(
                "REVIEWERS_MALFORMED",
                f"{model} must hold exactly verdict and evidence_ref",
                "remove other keys",
            )
        verdict, ref = entry["verdict"], entry["evidence_ref"]
        if not isinstance(verdict, str) or verdict not in c.VERDICTS:
            raise InputRejected(
                "REVIEWERS_MALFORMED",
                f"{model}.verdict {verdict!r} is not approve/reject",
                "fix it",
            )
        if not isinstance(ref, str) or not ref.strip():
            raise InputRejected(
                "REVIEWERS_MALFORMED", f"{model}.evidence_ref must be a non-empty string", "fix it"
            )
        out[model] = ReviewerEvidence(verdict, ref)
    return out


class RecordRefused(InputRejected):
    """The producer refused to build a record; ``reasons`` lists every cause."""

    def __init__(self, reasons: list[Reason], *, evidence: bool) -> None:
        first = reasons[0]
        super().__init__(first.code, "; ".join(r.message for r in reasons), first.hint)
        self.reasons = tuple(reasons)
        self.evidence = evidence


def build_record(
    package: PackageState,
    *,
    task_dir_name: str,
    source_sha: str,
    target_sha: str,
    reviewers: Mapping[str, ReviewerEvidence],
    decision: str,
    policy_ref: str,
    issued_at: str,
    issued_by: str,
    derived_loopspec_hash: str | None = None,
) -> dict[str, Any]:
    """Build the c3-prime record dict, or raise :class:`RecordRefused`.

    ``evidence=True`` on the exception means the presence gate or an evidence
    marker failed: no record, a human must act (exit 3).
    """
    task_id = package.task_id
    if TASK_ID_RE.fullmatch(task_id) is None or task_id != task_dir_name:
        raise RecordRefused(
            [Reason("C3_TASK_ID_INVALID", f"task id {task_id!r} is invalid for this directory")],
            evidence=False,
        )
    evidence_reasons = list(package.presence) + list(package.evidence_reasons)
    if evidence_reasons:
        raise RecordRefused(evidence_reasons, evidence=True)

    reasons: list[Reason] = []
    if source_sha != target_sha:
        reasons.append(
            Reason(
                "C3_SOURCE_TARGET_MISMATCH",
                f"source_sha {source_sha} differs from target {target_sha}",
            )
        )
    if not c.SOURCE_SHA_RE.fullmatch(source_sha):
        reasons.append(
            Reason("C3_SOURCE_SHA_INVALID", f"source_sha {source_sha!r} is not 7-40 hex")
        )
    if decision not in c.DECISIONS:
        reasons.append(
            Reason("C3_DECISION_INVALID", f"decision {decision!r} is not one of {c.DECISIONS}")
        )
    for model in c.REVIEWERS:
        if model not in reviewers:
            reasons.append(Reason("REVIEWERS_MALFORMED", f"{model} is missing"))
        elif reviewers[model].verdict not in c.VERDICTS:
            reasons.append(Reason("C3_REVIEWER_VERDICT_INVALID", f"{model} verdict is invalid"))
    if decision == "AUTO_APPROVED" and any(
        reviewers[m].verdict != "approve" for m in c.REVIEWERS if m in reviewers
    ):
        reasons.append(
            Reason(
                "C3_DECISION_VERDICT_INCONSISTENT",
                "AUTO_APPROVED requires both reviewer verdicts to be approve",
            )
        )
    if not policy_ref.strip():
        reasons.append(Reason("C3_FIELD_EMPTY", "policy_ref is empty"))
    if not issued_by.strip():
        reasons.append(Reason("C3_FIELD_EMPTY", "issued_by is empty"))
    if not is_utc_timestamp(issued_at):
        reasons.append(
            Reason("C3_ISSUED_AT_INVALID", f"issued_at {issued_at!r} is not YYYY-MM-DDTHH:MM:SSZ")
        )
    if derived_loopspec_hash is not None and not is_digest(derived_loopspec_hash):
        reasons.append(Reason("C3_LOOPSPEC_HASH_INVALID", "derived_loopspec_hash is not a digest"))
    if reasons:
        raise RecordRefused(reasons, evidence=False)

    if package.plan_hash is None or package.plan_package_hash is None:  # pragma: no cover
        raise RecordRefused([Reason("ARTIFACT_MISSING", "plan hashes unavailable")], evidence=True)
    snapshots = {
        model: {
            "verdict": reviewers[model].verdict,
            "plan_hash": package.plan_hash,
            "source_sha": source_sha,
            "plan_package_hash": package.plan_package_hash,
            "evidence_ref": reviewers[model].evidence_ref,
        }
        for model in c.REVIEWERS
    }
    record: dict[str, Any] = {
        "task_id": task_id,
        "approval_kind": c.APPROVAL_KIND,
        "phase": c.PHASE,
        "decision": decision,
        "source_sha": source_sha,
        "plan_hash": package.plan_hash,
        "plan_package_hash": package.plan_package_hash,
        "artifact_hashes": dict(package.artifact_hashes),
        "c1_evidence_ref": f"{C1.filename}#{package.c1.verdict}",
        "c2_evidence_ref": f"{C2.filename}#{package.c2.verdict}",
        "reviewers": snapshots,
        "policy_ref": policy_ref,
        "issued_at": issued_at,
        "issued_by": issued_by,
    }
    if derived_loopspec_hash is not None:
        record["derived_loopspec_hash"] = derived_loopspec_hash
    return record


def serialize_record(record: Mapping[str, Any]) -> bytes:
    """Record bytes: sorted keys, indent 2, final newline; never a ``c3_status``."""
    if "c3_status" in record:
        raise InputRejected(
            "C3_STATUS_FORBIDDEN",
            "a c3-prime record must not contain c3_status",
            "legacy grep paths read c3_status; c3-prime's truth is decision",
        )
    return pretty_bytes(dict(record))
