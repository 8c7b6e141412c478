"""Literal task inputs for the pure RunEvidence producer and verifier."""

from __future__ import annotations

import copy
import json
from typing import Any

from plangate.canonical import sha256_digest, strict_loads
from plangate.delivery.log import rows_bytes, seal_entries
from plangate.evidence.producer import Injected, TaskInputs
from plangate.plan.package import plan_package_hash
from plangate.snapshot import ARTIFACTS
from plangate.verdict import Reason, Result

TASK = "TASK-0001"
SOURCE = "c" * 40
HEAD = "a" * 40
NOW = "2026-12-02T10:00:00Z"
STARTED = "2026-12-02T09:00:00Z"
HV = '{"plugin_version": "1.0.0", "cli_version": "0.1.0", "corpus_hash": "sha256:' + "e" * 64 + '"}'
C3_PATH = f"docs/working/{TASK}/approvals/c3.json"
LOG_PATH = f"docs/working/{TASK}/delivery/record.jsonl"

ARTIFACT_BYTES = {name: f"# {name}\n\ncontent of {name}\n".encode() for name in ARTIFACTS}
HASHES = {name: sha256_digest(data) for name, data in ARTIFACT_BYTES.items()}
PLAN_HASH = HASHES["plan.md"]
PACKAGE_HASH = plan_package_hash(HASHES)


def record(decision: str = "AUTO_APPROVED", **changes: Any) -> dict[str, Any]:
    snap = {
        "plan_hash": PLAN_HASH,
        "source_sha": SOURCE,
        "plan_package_hash": PACKAGE_HASH,
    }
    out: dict[str, Any] = {
        "task_id": TASK,
        "approval_kind": "c3-prime",
        "phase": "C-3'",
        "decision": decision,
        "source_sha": SOURCE,
        "plan_hash": PLAN_HASH,
        "plan_package_hash": PACKAGE_HASH,
        "artifact_hashes": dict(HASHES),
        "c1_evidence_ref": "review-self.md#PASS",
        "c2_evidence_ref": "review-external.md#approve",
        "reviewers": {
            "model_a": {**snap, "verdict": "approve", "evidence_ref": "reviews/a.md"},
            "model_b": {**snap, "verdict": "approve", "evidence_ref": "reviews/b.md"},
        },
        "policy_ref": "plangate-arbiter@v1",
        "issued_at": "2026-12-01T09:00:00Z",
        "issued_by": "tests",
    }
    out.update(changes)
    return out


def acceptor_for(rec: dict[str, Any]) -> Result:
    """What the lead's acceptor says about a consistent record of this decision."""
    facts = {"kind": "c3-prime", "decision": rec["decision"]}
    if rec["decision"] == "AUTO_APPROVED":
        return Result("ACCEPTED", (), facts)
    verdict = "HUMAN_ESCALATED" if rec["decision"] == "HUMAN_ESCALATED" else "REJECTED"
    return Result(verdict, (Reason("C3_DECISION_NOT_APPROVED", "decision"),), facts)


def state(name: str, pr: int = 7, head: str = HEAD, codes: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "kind": "state",
        "state": name,
        "pr_number": pr,
        "head_sha": head,
        "reasons": [{"code": c, "message": c.lower()} for c in codes],
    }


def merge_ready(pr: int = 7, head: str = HEAD, **changes: Any) -> dict[str, Any]:
    rec = {
        "pr_number": pr,
        "head_sha": head,
        "check_summary": {"lint": "success", "ci": "success"},
        "review_disposition": {},
        "round": 0,
        "plan_hash": PLAN_HASH,
        "plan_package_hash": PACKAGE_HASH,
        "source_sha": SOURCE,
    }
    rec.update(changes)
    return {"kind": "merge_ready", "record": rec}


def log(*bodies: dict[str, Any]) -> bytes:
    return rows_bytes(seal_entries(list(bodies), prev=None, at=NOW))


MERGE_LOG = log(
    state("WAITING_FOR_CHECKS", codes=("DELIVERY_NO_CHECKS_AT_HEAD",)),
    state("MERGE_READY"),
    merge_ready(),
)


def inputs(
    rec: dict[str, Any] | None = None,
    delivery: bytes | None = MERGE_LOG,
    *,
    acceptor: Result | None = None,
    artifacts: dict[str, bytes | None] | None = None,
    record_bytes: bytes | None = None,
    ledger_ids: tuple[str, ...] | str | None = "from-log",
) -> TaskInputs:
    from plangate.canonical import pretty_bytes

    rec = record() if rec is None else rec
    if ledger_ids == "from-log":
        # The ledger holds exactly the log's rows (what delivery writes).
        ledger_ids = tuple(
            json.loads(line)["entry_id"] for line in (delivery or b"").decode().splitlines()
        )
    return TaskInputs(
        task_id=TASK,
        record_bytes=record_bytes if record_bytes is not None else pretty_bytes(rec),
        artifacts=dict(ARTIFACT_BYTES if artifacts is None else artifacts),
        acceptor=acceptor if acceptor is not None else acceptor_for(rec),
        delivery_bytes=delivery,
        c3_path=C3_PATH,
        delivery_path=LOG_PATH,
        ledger_entry_ids=ledger_ids if not isinstance(ledger_ids, str) else None,
    )


def injected(**changes: Any) -> Injected:
    base: dict[str, Any] = {
        "run_id": "run-1",
        "started_at": STARTED,
        "now": NOW,
        "repository": "plangate",
        "harness_version": HV,
        "harness_version_end": HV,
        "routing_decisions": "[]",
    }
    base.update(changes)
    return Injected(**base)


def reparse(doc: dict[str, Any]) -> dict[str, Any]:
    from plangate.canonical import pretty_bytes

    return copy.deepcopy(strict_loads(pretty_bytes(doc)))
