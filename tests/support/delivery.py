"""Approved tasks in real git repositories, built with the lead's producer (``c3 issue``).

A helper module, not a conftest: a second ``conftest`` module name would shadow
the root one (tests/ has no packages).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.canonical import sha256_digest
from support.repo import commit_all, git

TASK = "TASK-0001"
NOW = "2026-12-02T10:00:00Z"

PLAN_MD = """# Plan

## Goal

Add a greeting module.

## Files / Components to Touch

- `src/app/**`
- `docs/notes.md`

## Testing Strategy

Verification Automation: `python3 -m pytest -q`
"""


@dataclass
class ApprovedTask:
    """A repository with an issued c3-prime record for :data:`TASK`."""

    repo: Path
    task_dir: Path
    source_sha: str
    plan_hash: str

    def pr_commit(self, path: str = "src/app/hello.py", text: str = "print('hi')\n") -> str:
        """Commit a change on a PR branch (HEAD returns to main); return the PR head."""
        git(self.repo, "checkout", "-q", "-b", f"pr-{len(text)}-{path.replace('/', '-')}")
        target = self.repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        git(self.repo, "add", path)
        git(self.repo, "commit", "-q", "-m", f"change {path}")
        head = git(self.repo, "rev-parse", "HEAD")
        git(self.repo, "checkout", "-q", "main")
        return head

    def snapshot(self, head: str, **overrides: Any) -> dict[str, Any]:
        """A MERGE_READY snapshot at ``head`` unless overridden."""
        snap: dict[str, Any] = {
            "task_id": TASK,
            "pr_number": 7,
            "head_sha": head,
            "mergeable": "MERGEABLE",
            "checks": [{"name": "ci", "sha": head, "conclusion": "success"}],
            "review": {"state": "approved", "sha": head},
            "findings": [],
            "changed_files": ["src/app/hello.py"],
            "escalation_flags": [],
            "dod_evaluated": True,
        }
        snap.update(overrides)
        return snap

    def write_snapshot(self, snap: dict[str, Any], name: str = "snap.json") -> Path:
        """Write a snapshot outside the repository; return its path."""
        path = self.repo.parent / name
        path.write_text(json.dumps(snap))
        return path

    @property
    def record_path(self) -> Path:
        """``delivery/record.jsonl`` of the task."""
        return self.task_dir / "delivery" / "record.jsonl"


def write_package(
    repo: Path, run_cli: Callable[..., Any], task_id: str = TASK, plan: str = PLAN_MD
) -> Path:
    """Write the six artifacts and mark C-1/C-2 with ``plangate review mark``; return the task dir."""
    task_dir = repo / "docs" / "working" / task_id
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "plan.md").write_text(plan)
    (task_dir / "pbi-input.md").write_text("# PBI\n\nGreet the user.\n")
    (task_dir / "todo.md").write_text("# Todo\n\n- write hello\n")
    (task_dir / "test-cases.md").write_text("# Test cases\n\n- prints hi\n")
    (task_dir / "review-self.md").write_text("# Self review\n\nLooks fine.\n")
    (task_dir / "review-external.md").write_text("# External review\n\nApproved.\n")
    for flag, verdict in (("--c1", "PASS"), ("--c2", "approve")):
        result = run_cli(repo, "review", "mark", task_id, flag, verdict)
        assert result.code == 0, (result.out, result.err)
    return task_dir


def issue(
    run_cli: Callable[..., Any],
    repo: Path,
    target: str,
    *,
    task_id: str = TASK,
    decision: str = "AUTO_APPROVED",
    verdicts: tuple[str, str] = ("approve", "approve"),
    force: bool = False,
) -> None:
    """Issue the record with ``plangate c3 issue`` (the lead's producer)."""
    reviewers = repo.parent / f"reviewers-{task_id}.json"
    reviewers.write_text(
        json.dumps(
            {
                "model_a": {"verdict": verdicts[0], "evidence_ref": "reviews/model-a.md"},
                "model_b": {"verdict": verdicts[1], "evidence_ref": "reviews/model-b.md"},
            }
        )
    )
    argv = [
        "c3",
        "issue",
        task_id,
        "--target-sha",
        target,
        "--reviewers",
        str(reviewers),
        "--decision",
        decision,
        "--policy-ref",
        "plangate-arbiter@v1",
        "--issued-at",
        "2026-12-01T09:00:00Z",
        "--issued-by",
        "test-suite",
    ]
    if force:
        argv.append("--force")
    result = run_cli(repo, *argv)
    assert result.code == 0, (result.out, result.err)


def make_approved(git_repo: Path, run_cli: Callable[..., Any]) -> ApprovedTask:
    """An AUTO_APPROVED task whose record verifies (artifacts committed at source_sha)."""
    task_dir = write_package(git_repo, run_cli)
    source = commit_all(git_repo, "plan package")
    issue(run_cli, git_repo, source)
    plan_hash = sha256_digest((task_dir / "plan.md").read_bytes())
    return ApprovedTask(git_repo, task_dir, source, plan_hash)


@contextmanager
def fresh_pg_database(base_url: str) -> Iterator[str]:
    """An empty database on the test PostgreSQL server, dropped afterwards."""
    import uuid
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from psycopg import sql

    name = "plangate_delivery_" + uuid.uuid4().hex[:16]
    with psycopg.connect(base_url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = urlsplit(base_url)
    try:
        yield urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    finally:
        with psycopg.connect(base_url, autocommit=True, connect_timeout=10) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def define_surfaces(repo: Path) -> str:
    """Adopt the bundled template as the repository's own definition; commit; return HEAD."""
    from plangate.surfaces import bundled_template_bytes

    text = bundled_template_bytes().decode()
    own = "\n".join(ln for ln in text.splitlines() if "PLANGATE-BUNDLED-TEMPLATE" not in ln)
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate" / "protected-surfaces.toml").write_text(own + "\n")
    return commit_all(repo, "protected surfaces")
