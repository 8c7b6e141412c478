"""The c3-prime record producer (pure): build and serialise ``approvals/c3.json``.

Generation rules:

- the task id must be ``TASK-0000`` and equal the task directory's name;
- all six artifacts present and non-empty, and both evidence markers valid,
  accepted and current; otherwise *no record is issued* and a human must act
  (exit 3, the failing marker named);
- ``source_sha`` equals the arbiter's target (the approval is for that commit);
  here both are the one full commit id the CLI resolved with git;
- ``decision`` is one of the three values and consistent with the verdicts
  (AUTO_APPROVED only with approve/approve);
- ``issued_at`` is injected by the caller (never read from a clock here);
- serialisation: sorted keys, indent 2, final newline, never a ``c3_status``.

The service runs the acceptor on the serialised bytes before writing them, so
the producer never writes what the acceptor would reject.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from plangate.approval import contract as c
from plangate.canonical import StrictJSONError, is_digest, pretty_bytes, strict_loads_object
from plangate.clock import is_utc_timestamp
from plangate.errors import InputRejected
from plangate.plan.markers import C1, C2
from plangate.plan.package import PackageState
from plangate.records import NamedTuple
from plangate.shapes import is_source_sha, is_task_id
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


class RecordInputs(NamedTuple):
    """What the producer is asked to stamp, besides the package."""

    source_sha: str
    target_sha: str
    reviewers: Mapping[str, ReviewerEvidence]
    decision: str
    policy_ref: str
    issued_at: str
    issued_by: str
    derived_loopspec_hash: str | None = None


def _source_is_target(inputs: RecordInputs) -> list[Reason]:
    if inputs.source_sha == inputs.target_sha:
        return []
    return [Reason("C3_SOURCE_TARGET_MISMATCH",
                   f"source_sha {inputs.source_sha} differs from target {inputs.target_sha}")]


def _source_sha_form(inputs: RecordInputs) -> list[Reason]:
    if is_source_sha(inputs.source_sha):
        return []
    return [Reason("C3_SOURCE_SHA_INVALID", f"source_sha {inputs.source_sha!r} is not 7-40 hex")]


def _decision_value(inputs: RecordInputs) -> list[Reason]:
    if inputs.decision in c.DECISIONS:
        return []
    return [Reason("C3_DECISION_INVALID",
                   f"decision {inputs.decision!r} is not one of {c.DECISIONS}")]


def _reviewer_verdicts(inputs: RecordInputs) -> list[Reason]:
    reasons = []
    for model in c.REVIEWERS:
        if model not in inputs.reviewers:
            reasons.append(Reason("REVIEWERS_MALFORMED", f"{model} is missing"))
        elif inputs.reviewers[model].verdict not in c.VERDICTS:
            reasons.append(Reason("C3_REVIEWER_VERDICT_INVALID", f"{model} verdict is invalid"))
    return reasons


def _decision_matches_verdicts(inputs: RecordInputs) -> list[Reason]:
    if inputs.decision != "AUTO_APPROVED" or all(
        inputs.reviewers[m].verdict == "approve" for m in c.REVIEWERS if m in inputs.reviewers
    ):
        return []
    return [Reason("C3_DECISION_VERDICT_INCONSISTENT",
                   "AUTO_APPROVED requires both reviewer verdicts to be approve")]


def _names_non_empty(inputs: RecordInputs) -> list[Reason]:
    return [Reason("C3_FIELD_EMPTY", f"{key} is empty")
            for key, value in (("policy_ref", inputs.policy_ref), ("issued_by", inputs.issued_by))
            if not value.strip()]


def _issued_at_form(inputs: RecordInputs) -> list[Reason]:
    if is_utc_timestamp(inputs.issued_at):
        return []
    return [Reason("C3_ISSUED_AT_INVALID",
                   f"issued_at {inputs.issued_at!r} is not YYYY-MM-DDTHH:MM:SSZ")]


def _loopspec_hash_form(inputs: RecordInputs) -> list[Reason]:
    value = inputs.derived_loopspec_hash
    if value is None or is_digest(value):
        return []
    return [Reason("C3_LOOPSPEC_HASH_INVALID", "derived_loopspec_hash is not a digest")]


INPUT_RULES: tuple[Callable[[RecordInputs], list[Reason]], ...] = (
    _source_is_target,
    _source_sha_form,
    _decision_value,
    _reviewer_verdicts,
    _decision_matches_verdicts,
    _names_non_empty,
    _issued_at_form,
    _loopspec_hash_form,
)
"""The producer's input rules, in order; every failing rule is reported (exit 1)."""


def _refuse_task_or_evidence(package: PackageState, task_dir_name: str) -> None:
    task_id = package.task_id
    if not is_task_id(task_id) or task_id != task_dir_name:
        raise RecordRefused(
            [Reason("C3_TASK_ID_INVALID", f"task id {task_id!r} is invalid for this directory")],
            evidence=False,
        )
    evidence_reasons = list(package.presence) + list(package.evidence_reasons)
    if evidence_reasons:
        raise RecordRefused(evidence_reasons, evidence=True)


def evidence_refs(package: PackageState) -> dict[str, str]:
    """``c1_evidence_ref`` and ``c2_evidence_ref``: each marker's file and verdict."""
    return {
        "c1_evidence_ref": f"{C1.filename}#{package.c1.verdict}",
        "c2_evidence_ref": f"{C2.filename}#{package.c2.verdict}",
    }


def reviewer_snapshots(
    plan_hash: str, plan_package_hash: str, source_sha: str,
    reviewers: Mapping[str, ReviewerEvidence],
) -> dict[str, dict[str, str]]:
    """What each reviewer saw: its verdict and evidence, and the package and commit trio."""
    return {
        model: {
            "verdict": reviewers[model].verdict,
            "plan_hash": plan_hash,
            "source_sha": source_sha,
            "plan_package_hash": plan_package_hash,
            "evidence_ref": reviewers[model].evidence_ref,
        }
        for model in c.REVIEWERS
    }


def _assemble(package: PackageState, inputs: RecordInputs) -> dict[str, Any]:
    if package.plan_hash is None or package.plan_package_hash is None:  # pragma: no cover
        raise RecordRefused([Reason("ARTIFACT_MISSING", "plan hashes unavailable")], evidence=True)
    snapshots = reviewer_snapshots(package.plan_hash, package.plan_package_hash,
                                   inputs.source_sha, inputs.reviewers)
    record: dict[str, Any] = {
        "task_id": package.task_id,
        "approval_kind": c.APPROVAL_KIND,
        "phase": c.PHASE,
        "decision": inputs.decision,
        "source_sha": inputs.source_sha,
        "plan_hash": package.plan_hash,
        "plan_package_hash": package.plan_package_hash,
        "artifact_hashes": dict(package.artifact_hashes),
        **evidence_refs(package),
        "reviewers": snapshots,
        "policy_ref": inputs.policy_ref,
        "issued_at": inputs.issued_at,
        "issued_by": inputs.issued_by,
    }
    if inputs.derived_loopspec_hash is not None:
        record["derived_loopspec_hash"] = inputs.derived_loopspec_hash
    return record


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
    scope_digest: str | None = None,
) -> dict[str, Any]:
    """Build the c3-prime record dict, or raise :class:`RecordRefused`.

    Order: the task id names the directory (exit 1); the presence gate and both
    evidence markers (``evidence=True`` on the exception: no record, a human must
    act, exit 3); then every rule of :data:`INPUT_RULES`, all failures reported
    together (exit 1).
    """
    _refuse_task_or_evidence(package, task_dir_name)
    inputs = RecordInputs(source_sha, target_sha, reviewers, decision, policy_ref, issued_at,
                          issued_by, derived_loopspec_hash)
    reasons = [reason for rule in INPUT_RULES for reason in rule(inputs)]
    if reasons:
        raise RecordRefused(reasons, evidence=False)
    record = _assemble(package, inputs)
    if scope_digest is not None:  # the derived scope the reviewers approved (docs/approval.md)
        record["scope_digest"] = scope_digest
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
