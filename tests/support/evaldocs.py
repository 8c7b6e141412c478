"""Literal evaluation documents shared by the tests of several evaluation modules."""

from __future__ import annotations

from typing import Any

COMMIT = "a" * 40

ASK = {"side": "candidate", "fixture_id": "kb", "role": "known_bad", "trial": 2}
"""The trial as the evaluator knows it (what the grader is told and echoes)."""

TRIAL_ID = "0f3a9c2e7b1d4a5c8e6f0b2d4c6a8e1f"
"""The opaque id a runner is given for that trial (all it knows and echoes)."""

RESULT_ASK = {"trial_id": TRIAL_ID, **ASK}
"""What :func:`plangate.evaluation.run.protocol.parse_result` is called with."""


def record(
    author: dict[str, Any] | None = None,
    reviewer: dict[str, Any] | None = None,
    evidence: list[dict[str, str]] | None = None,
    **top: Any,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema": "plangate-review/1",
        "candidate_id": "candidate:x:v1",
        "reviewed_commit": COMMIT,
        "author": {
            "model": "model-a",
            "context_id": "ctx-1",
            "run_id": "run-1",
            "role": "implementer",
            "human_identity": None,
        },
        "reviewer": {
            "model": "model-a",
            "context_id": "ctx-2",
            "run_id": "run-2",
            "role": "reviewer",
            "human_identity": None,
        },
        "evidence": evidence if evidence is not None else [],
    }
    doc["author"].update(author or {})
    doc["reviewer"].update(reviewer or {})
    doc.update(top)
    return doc


def result_doc(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "protocol": "plangate-trial/2",
        "trial_id": TRIAL_ID,
        "outcome": "BLOCKED",
        "stop_reasons": ["VERIFIER_UNAVAILABLE"],
        "metrics": {"duration_ms": 12, "cost": 0.5},
        "activation": {
            "verifier:completion-evidence": {
                "level": "influenced_decision",
                "evidence_refs": ["decision:1"],
            },
            "prompt:builder": {"level": "registered", "evidence_refs": []},
        },
        "detections": {"verifier:completion-evidence": "detected"},
    }
    doc.update(overrides)
    return doc


def grade_doc(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"protocol": "plangate-grade/1", **ASK, "judgement": "stopped"}
    doc.update(overrides)
    return doc
