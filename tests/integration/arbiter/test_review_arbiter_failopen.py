"""Adversarial review: arbiter inputs that used to end in AUTO_APPROVED (fail open)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.surfaces import REPO_SURFACES_RELPATH

SURFACES = b"""version = 1

[[surface]]
pattern = "**/approvals/**"
class = "approval"
reason = "approval records"
"""
TS = "2026-12-01T10:00:00Z"
SHA = "a" * 40
P = "sha256:" + "1" * 64
PP = "sha256:" + "2" * 64


def _input(ref_a: str, ref_b: str) -> dict:
    def snap(ref: str) -> dict:
        return {"verdict": "approve", "plan_hash": P, "source_sha": SHA,
                "plan_package_hash": PP, "evidence_ref": ref}

    return {
        "changed_files": ["src/app.py"],
        "allowed_paths": ["src/**"],
        "lite": dict.fromkeys(("size_ok", "no_new_design", "follows_pattern", "reversible"), True),
        "class": "no-merge",
        "verdicts": {"model_a": "approve", "model_b": "approve"},
        "target_sha": SHA,
        "gates": {"c1": "PASS", "breakdown": "pass"},
        "production": True,
        "plan_package": {
            "plan_hash": P,
            "source_sha": SHA,
            "plan_package_hash": PP,
            "c1_evidence_ref": "review-self.md#PASS",
            "c2_evidence_ref": "review-external.md#approve",
            "reviewers": {"model_a": snap(ref_a), "model_b": snap(ref_b)},
        },
    }


def _decide(repo: Path, run_cli, doc: dict):
    path = repo.parent / "arbiter-input.json"
    path.write_text(json.dumps(doc))
    return run_cli(repo, "arbiter", "--input", str(path), "--timestamp", TS, "--json",
                   "--no-ledger")


@pytest.fixture
def repo(git_repo: Path) -> Path:
    target = git_repo / REPO_SURFACES_RELPATH
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(SURFACES)
    return git_repo


def test_distinct_evidence_refs_auto_approve(repo, run_cli):
    result = _decide(repo, run_cli, _input("reviews/model-a.md", "reviews/model-b.md"))
    assert result.code == 0, result.out
    assert json.loads(result.out)["decision"] == "AUTO_APPROVED"


@pytest.mark.parametrize(
    "ref_b",
    ["./reviews/model-a.md", "reviews//model-a.md", " reviews/model-a.md ",
     "reviews/x/../model-a.md"],
)
def test_one_review_spelled_two_ways_is_not_independent(repo, run_cli, ref_b):
    """The acceptor normalises evidence refs; the arbiter compared raw strings and approved."""
    result = _decide(repo, run_cli, _input("reviews/model-a.md", ref_b))
    assert result.code == 1, result.out
    doc = json.loads(result.out)
    assert doc["decision"] == "BLOCKED"
    assert doc["decided_by"]["code"] == "PLAN_PACKAGE_INTEGRITY"
    assert "evidence_ref" in doc["reasons"][0]["message"]
