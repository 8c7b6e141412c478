"""Helpers for CLI tests of the plan-first commands: build tasks in real git repos.

Importable from any test as ``support.plan_tasks``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plangate.canonical import sha256_digest
from plangate.snapshot import ARTIFACTS
from support.repo import commit_all, git

PLAN_MD = """# plan

## Goal

Add a greeting module.

## Files / Components to Touch

- `src/greet.py`

## Testing Strategy

Verification Automation: `true`
"""

REVIEWERS = {
    "model_a": {"verdict": "approve", "evidence_ref": "review-self.md#PASS"},
    "model_b": {"verdict": "approve", "evidence_ref": "review-external.md#approve"},
}


def task_dir(repo: Path, task_id: str = "TASK-0001") -> Path:
    """``docs/working/<task_id>`` of ``repo``."""
    return repo / "docs" / "working" / task_id


def write_package(
    repo: Path, task_id: str = "TASK-0001", *, markers: bool = True, plan: str = PLAN_MD
) -> Path:
    """Write the six artifacts by hand (no CLI); with ``markers`` both markers are valid."""
    task = task_dir(repo, task_id)
    task.mkdir(parents=True, exist_ok=True)
    (task / "plan.md").write_text(plan)
    plan_hash = sha256_digest(plan.encode())
    for name in ARTIFACTS:
        if name == "plan.md":
            continue
        (task / name).write_text(f"# {name} of {task_id}\n\nbody\n")
    if markers:
        with (task / "review-self.md").open("a") as fh:
            fh.write(f"\nC1-VERDICT: PASS plan={plan_hash}\n")
        with (task / "review-external.md").open("a") as fh:
            fh.write(f"\nC2-VERDICT: approve plan={plan_hash}\n")
    return task


def approve_task(
    repo: Path,
    run_cli: Callable[..., Any],
    task_id: str = "TASK-0001",
    *,
    decision: str = "AUTO_APPROVED",
    reviewers: dict[str, dict[str, str]] | None = None,
    plan: str = PLAN_MD,
) -> str:
    """Write a valid package (``plan`` its plan.md), commit it, issue the record for HEAD;
    return HEAD."""
    write_package(repo, task_id, plan=plan)
    head = commit_all(repo, f"plan {task_id}")
    reviewers_file = repo.parent / f"reviewers-{task_id}.json"
    reviewers_file.write_text(json.dumps(reviewers or REVIEWERS))
    result = run_cli(
        repo,
        "c3",
        "issue",
        task_id,
        "--target-sha",
        head,
        "--reviewers",
        str(reviewers_file),
        "--decision",
        decision,
        "--policy-ref",
        "test-policy@v1",
        "--issued-at",
        "2026-01-02T03:04:05Z",
        "--issued-by",
        "tests",
    )
    assert result.code in (0, 3), result.err + result.out
    assert (task_dir(repo, task_id) / "approvals" / "c3.json").is_file(), result.out + result.err
    return head


def head_of(repo: Path) -> str:
    """Full HEAD id."""
    return git(repo, "rev-parse", "HEAD")
