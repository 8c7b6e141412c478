"""Demo steps: merge readiness and RunEvidence.

Uses the approved ``TASK-0001`` of the plan-first step. A pull request is
simulated by a commit on a branch made in a linked worktree (the demo
repository's own HEAD does not move); the PR snapshots are literals, as a
collector would write them from the forge's API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plangate.cli.demo import Demo

TASK = "TASK-0001"
HARNESS = json.dumps(
    {"plugin_version": "1.0.0", "cli_version": "0.1.0", "corpus_hash": "sha256:" + "0" * 64}
)


def _snapshot(head: str, changed: list[str], **overrides: Any) -> dict[str, Any]:
    snapshot: dict[str, Any] = {
        "task_id": TASK,
        "pr_number": 7,
        "head_sha": head,
        "mergeable": "MERGEABLE",
        "checks": [{"name": "unit-tests", "sha": head, "conclusion": "success"}],
        "review": {"state": "approved", "sha": head},
        "findings": [],
        "changed_files": changed,
        "escalation_flags": [],
        "dod_evaluated": True,
    }
    snapshot.update(overrides)
    return snapshot


def _assess(
    demo: Demo, path: Path, snapshot: dict[str, Any], now: str
) -> tuple[int, dict[str, Any]]:
    path.write_text(json.dumps(snapshot, indent=2) + "\n")
    code, out, err = demo.cli(
        "delivery", "assess", TASK, "--snapshot", str(path), "--now", now, "--json"
    )
    try:
        doc: dict[str, Any] = json.loads(out)
    except ValueError:
        demo.show(err.rstrip())
        return code, {}
    reasons = ", ".join(r["code"] for r in doc.get("reasons", [])) or "-"
    demo.show(f"    state {doc.get('verdict')}  reasons: {reasons}")
    for action in doc.get("facts", {}).get("requested_actions") or []:
        demo.show(f"    requested action: {action['action_kind']} {action['action_id'][:19]}...")
    appended = doc.get("facts", {}).get("appended_entry_ids")
    if appended is not None:
        demo.show(f"    record.jsonl rows appended: {len(appended)}")
    return code, doc


def run_steps(demo: Demo) -> None:
    """PR branch -> waiting -> deviation -> MERGE_READY -> idempotent -> evidence."""
    base = demo.git("rev-parse", "HEAD")
    worktree = demo.repo.parent / "pr-7"
    demo.git("worktree", "add", "-q", "-b", "pr-7", str(worktree), base)
    try:
        (worktree / "src" / "app.py").write_text(
            '"""Example app."""\n\n\ndef greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
        )
        (worktree / "tests").mkdir(exist_ok=True)
        (worktree / "tests" / "test_app.py").write_text(
            "from src.app import greet\n\n\ndef test_greet():\n"
            '    assert greet("Ada") == "Hello, Ada!"\n'
        )
        demo.git("-C", str(worktree), "add", "-A")
        demo.git("-C", str(worktree), "commit", "-q", "-m", "greet(name)")
        head = demo.git("-C", str(worktree), "rev-parse", "HEAD")
    finally:
        demo.git("worktree", "remove", "--force", str(worktree))
    changed = demo.git("diff", "--name-only", base, head).split()
    snap_file = demo.repo.parent / "pr-7-snapshot.json"

    demo.step("plangate delivery assess: CI still running on the PR head")
    code, _ = _assess(
        demo,
        snap_file,
        _snapshot(
            head,
            changed,
            checks=[{"name": "unit-tests", "sha": head, "conclusion": "in_progress"}],
            review={"state": "pending", "sha": head},
        ),
        "2026-12-02T10:00:00Z",
    )
    demo.expect(code, 4, "not yet ready: WAITING_FOR_CHECKS")

    demo.step("a snapshot that lists a file outside the plan's allowed paths")
    code, _ = _assess(
        demo, snap_file, _snapshot(head, [*changed, "bin/deploy.sh"]), "2026-12-02T10:05:00Z"
    )
    demo.expect(code, 1, "EXEC_RETURN: back to exec, the plan does not cover bin/deploy.sh")

    demo.step("checks green and review approved at the head; DoD evaluated")
    code, doc = _assess(demo, snap_file, _snapshot(head, changed), "2026-12-02T10:10:00Z")
    ancestry = doc.get("facts", {}).get("ancestry", {})
    demo.show(f"    ancestry (measured with git): {ancestry.get('status')}")
    demo.expect(code, 0, "MERGE_READY (nothing merges: a human or the forge does that)")

    demo.step("the same snapshot again: idempotent, nothing appended")
    code, _ = _assess(demo, snap_file, _snapshot(head, changed), "2026-12-02T10:11:00Z")
    demo.expect(code, 0, "MERGE_READY, record unchanged")

    evidence = demo.repo.parent / "run-evidence-run-7.json"
    demo.step("plangate evidence produce: RunEvidence of the finished run")
    code, out, err = demo.cli(
        "evidence", "produce", TASK, "--run-id", "run-7", "--started-at",
        "2026-12-02T09:30:00Z", "--now", "2026-12-02T10:12:00Z", "--repository", "example-app",
        "--harness-version", HARNESS, "--harness-version-end", HARNESS,
        "--routing-decisions", "[]", "--pr-number", "7", "--out", str(evidence),
    )  # fmt: skip
    demo.show(err.rstrip())
    demo.expect(code, 0, "evidence written")
    if code == 0:
        doc = json.loads(evidence.read_text())
        for key in (
            "terminal_state",
            "final_head_sha",
            "repair_rounds",
            "replan_count",
            "cost_metrics",
        ):
            demo.show(f"    {key}: {doc[key]}")

    demo.step("plangate evidence verify: re-derive every binding and the completeness")
    code, out, err = demo.cli("evidence", "verify", str(evidence), TASK)
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 4, "partial: replan_count and cost_metrics are not observed in Phase 1")
