"""Adversarial review, unit level: optional plan-package data must not contradict the rest."""

from __future__ import annotations

import pytest

from plangate.approval.arbiter import plan_package_check
from plangate.plan.package import plan_package_hash
from plangate.snapshot import ARTIFACTS

SHA = "a" * 40
HASHES = {name: "sha256:" + format(i, "x") * 64 for i, name in enumerate(ARTIFACTS, start=1)}
P = HASHES["plan.md"]
PP = plan_package_hash(HASHES)
VERDICTS = {"model_a": "approve", "model_b": "approve"}


def block(**changes):
    def snap(ref):
        return {"verdict": "approve", "plan_hash": P, "source_sha": SHA,
                "plan_package_hash": PP, "evidence_ref": ref}

    out = {
        "plan_hash": P,
        "source_sha": SHA,
        "plan_package_hash": PP,
        "c1_evidence_ref": "review-self.md#PASS",
        "c2_evidence_ref": "review-external.md#approve",
        "reviewers": {"model_a": snap("a.md"), "model_b": snap("b.md")},
        "task_id": "TASK-0001",
        "artifact_hashes": dict(HASHES),
    }
    out.update(changes)
    return out


def test_consistent_optional_keys_pass():
    assert plan_package_check(block(), SHA, VERDICTS).integrity_ok


@pytest.mark.parametrize(
    "changes",
    [
        {"artifact_hashes": {**HASHES, "todo.md": "sha256:" + "f" * 64}},  # package hash differs
        {"artifact_hashes": {k: v for k, v in HASHES.items() if k != "todo.md"}},
        {"artifact_hashes": {**HASHES, "extra.md": "sha256:" + "f" * 64}},
        {"artifact_hashes": {**HASHES, "plan.md": "sha256:" + "e" * 64}},  # plan_hash differs
        {"artifact_hashes": "sha256:" + "0" * 64},
        {"artifact_hashes": None},
        {"task_id": "TASK-01"},
        {"task_id": 1},
    ],
)
def test_contradicting_optional_keys_are_an_integrity_failure(changes):
    """``artifact_hashes`` and ``task_id`` were accepted in any shape and never compared:
    a block whose own hashes contradict its package hash was AUTO_APPROVED."""
    check = plan_package_check(block(**changes), SHA, VERDICTS)
    assert check.structure_ok
    assert not check.integrity_ok
