"""Build real Plan Packages and c3-prime records in test repositories.

Shared by every capability's tests: ``make_task`` writes six valid artifacts
with current markers; ``approve_task`` issues an AUTO_APPROVED record through
the real producer (the ``plangate c3 issue`` service) bound to HEAD.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from support.repo import commit_all, git

PLAN_MD = """# Plan

## Goal
Add a greeting function to the app.

## Files / Components to Touch
- `src/app.py`
- `tests/test_app.py`

## Testing Strategy
Unit tests for the greeting.

Verification Automation: `python -m pytest -q && python -m ruff check src`
"""


def sha(data: bytes) -> str:
    """``sha256:<hex>`` of bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def task_dir(repo: Path, task_id: str = "TASK-0001") -> Path:
    """Path of a task directory."""
    return repo / "docs" / "working" / task_id


def write_markers(
    repo: Path, task_id: str = "TASK-0001", c1: str = "PASS", c2: str = "approve"
) -> None:
    """(Re)write both review files with one marker bound to the current plan.md."""
    tdir = task_dir(repo, task_id)
    plan_hash = sha((tdir / "plan.md").read_bytes())
    (tdir / "review-self.md").write_text(
        f"# Self review\n\nAll 17 items checked.\n\nC1-VERDICT: {c1} plan={plan_hash}\n"
    )
    (tdir / "review-external.md").write_text(
        f"# External review\n\nNo blocking findings.\n\nC2-VERDICT: {c2} plan={plan_hash}\n"
    )


def make_task(
    repo: Path, task_id: str = "TASK-0001", plan_md: str = PLAN_MD, commit: bool = True
) -> Path:
    """Write a complete, valid Plan Package (markers current); optionally commit it."""
    tdir = task_dir(repo, task_id)
    tdir.mkdir(parents=True, exist_ok=True)
    (tdir / "pbi-input.md").write_text("# PBI\n\nWhy: users need a greeting.\n")
    (tdir / "plan.md").write_text(plan_md)
    (tdir / "todo.md").write_text("- [ ] write greet()\n")
    (tdir / "test-cases.md").write_text("| AC | test |\n|---|---|\n| AC-1 | test_greet |\n")
    write_markers(repo, task_id)
    if commit:
        commit_all(repo, f"plan package {task_id}")
    return tdir


def reviewers_file(
    path: Path,
    a: str = "approve",
    b: str = "approve",
    ref_a: str = "reviews/model-a.md",
    ref_b: str = "reviews/model-b.md",
) -> Path:
    """Write a reviewers JSON file for ``c3 issue``."""
    path.write_text(
        json.dumps(
            {
                "model_a": {"verdict": a, "evidence_ref": ref_a},
                "model_b": {"verdict": b, "evidence_ref": ref_b},
            }
        )
    )
    return path


def approve_task(
    repo: Path,
    task_id: str = "TASK-0001",
    decision: str = "AUTO_APPROVED",
    issued_at: str = "2026-12-01T09:00:00Z",
    a: str = "approve",
    b: str = "approve",
) -> str:
    """Issue a c3-prime record bound to HEAD through the real producer; return HEAD."""
    from plangate.approval.record import ReviewerEvidence
    from plangate.approval.service import IssueRequest, issue_record

    head = git(repo, "rev-parse", "HEAD")
    request = IssueRequest(
        task_id=task_id,
        target_sha=head,
        reviewers={
            "model_a": ReviewerEvidence(a, "reviews/model-a.md"),
            "model_b": ReviewerEvidence(b, "reviews/model-b.md"),
        },
        decision=decision,
        policy_ref="plangate-arbiter@v1",
        issued_at=issued_at,
        issued_by="test-suite",
    )
    result = issue_record(repo, request, {})
    assert result.verdict == "ACCEPTED", result.to_json()
    return head


def load_record(repo: Path, task_id: str = "TASK-0001") -> dict:
    """The parsed approvals/c3.json."""
    return json.loads((task_dir(repo, task_id) / "approvals" / "c3.json").read_text())


def save_record(repo: Path, record: dict, task_id: str = "TASK-0001") -> None:
    """Overwrite approvals/c3.json with ``record`` (tests forge records this way)."""
    path = task_dir(repo, task_id) / "approvals" / "c3.json"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
