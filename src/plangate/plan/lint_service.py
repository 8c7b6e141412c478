"""The IO edge of ``plangate plan lint``: read each task's ``plan.md`` once, lint its bytes.

:func:`lint_task` reads one task through the snapshot door; :func:`lint_all`
lints every task directory under ``docs/working/`` whose name is a task id, in
order. The report itself is pure (:func:`plangate.plan.lint.lint_plan`).
"""

from __future__ import annotations

from pathlib import Path

from plangate.plan.lint import PlanLint, lint_plan
from plangate.snapshot import TASK_ID_RE, read_task_snapshot, task_dir_for


def lint_task(repo_root: Path, task_id: str) -> PlanLint:
    """Lint the ``plan.md`` of ``task_id`` (``task_id`` already checked)."""
    snapshot = read_task_snapshot(task_dir_for(repo_root, task_id))
    return lint_plan(task_id, snapshot.artifact("plan.md"))


def task_ids(repo_root: Path) -> list[str]:
    """Task ids of the directories under ``docs/working/``, sorted (symbolic links skipped)."""
    base = repo_root / "docs" / "working"
    if not base.is_dir() or base.is_symlink():
        return []
    return sorted(
        p.name
        for p in base.iterdir()
        if TASK_ID_RE.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )


def lint_all(repo_root: Path) -> list[PlanLint]:
    """Lint every task of the repository, in task order."""
    return [lint_task(repo_root, task_id) for task_id in task_ids(repo_root)]
