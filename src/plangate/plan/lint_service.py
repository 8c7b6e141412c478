"""The IO edge of ``plangate plan lint``: read each task's ``plan.md`` once, lint its bytes.

:func:`lint_task` reads one task through the snapshot door; :func:`lint_all`
lints every entry under ``docs/working/`` whose name is a task id, in order.
The report itself is pure (:func:`plangate.plan.lint.lint_plan`).
"""

from __future__ import annotations

from pathlib import Path

from plangate.errors import PlanGateError
from plangate.plan.lint import PlanLint, lint_plan, unreadable_task
from plangate.shapes import is_task_id
from plangate.snapshot import read_task_snapshot, task_dir_for
from plangate.verdict import Reason


def lint_task(repo_root: Path, task_id: str) -> PlanLint:
    """Lint the ``plan.md`` of ``task_id`` (``task_id`` already checked)."""
    snapshot = read_task_snapshot(task_dir_for(repo_root, task_id))
    return lint_plan(task_id, snapshot.artifact("plan.md"))


def task_ids(repo_root: Path) -> list[str]:
    """Names under ``docs/working/`` that are task ids, sorted (whatever kind of entry)."""
    base = repo_root / "docs" / "working"
    if not base.is_dir() or base.is_symlink():
        return []
    return sorted(p.name for p in base.iterdir() if is_task_id(p.name))


def lint_all(repo_root: Path) -> list[PlanLint]:
    """Lint every task of the repository, in task order.

    A task directory the snapshot door refuses (a symbolic link, not a
    directory) is a report of its own that names the reason, never a skip.
    """
    reports = []
    for task_id in task_ids(repo_root):
        try:
            reports.append(lint_task(repo_root, task_id))
        except PlanGateError as exc:
            reports.append(unreadable_task(task_id, Reason(exc.code, exc.message, exc.hint)))
    return reports
