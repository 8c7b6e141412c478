"""A repository with what ``plangate report`` reads: tasks, runs, denials, a delivery
record and evaluation entries, optionally with hostile text in every value a page shows."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from support.taskkit import PLAN_MD, approve_task, make_task

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
"""Markup that would run if any value reached the page unescaped."""
CANARY = "CANARY-payload-value-never-shown"
"""A value in a payload field the report does not know: it must never reach the page."""


def _append(repo: Path, kind: str, subject: str, payload: dict[str, Any]) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(repo, {}) as ledger:
        ledger.append(kind, subject, payload)


def _fixture(fid: str, role: str, base: tuple[int, int], cand: tuple[int, int]) -> dict[str, Any]:
    def side(completed: int, stopped: int) -> dict[str, int]:
        return {
            "completed": completed,
            "stopped": stopped,
            "passed": completed - stopped,
            "failed": 0,
        }

    return {"id": fid, "role": role, "baseline": side(*base), "candidate": side(*cand)}


def build_repository(repo: Path, *, hostile: bool = False) -> Path:
    """Two tasks (one approved at HEAD, one not), runs, refusals and one evaluation."""
    text = HOSTILE if hostile else ""
    plan = PLAN_MD.replace("# Plan", f"# Plan {text}greeting", 1)
    make_task(repo, "TASK-0001", plan_md=plan)
    make_task(repo, "TASK-0002", plan_md=PLAN_MD.replace("# Plan", "# Plan without approval", 1))
    approve_task(repo, "TASK-0001")  # bound to HEAD: exec would run it now
    _append(
        repo,
        "exec_started",
        "TASK-0001",
        {
            "program": "claude",
            "head": "0" * 40,
            "command_digest": "sha256:" + "1" * 64,
            "task_id": "TASK-0001",
        },
    )
    _append(
        repo,
        "exec_result",
        "TASK-0001",
        {
            "backend": "bubblewrap",
            "verdict": "REJECTED",
            "reasons": ["CI_OUT_OF_SCOPE" + text],
            "changed": [f"src/evil{text}.py"],
            "note": CANARY,
        },
    )
    _append(
        repo,
        "exec_ended",
        "TASK-0001",
        {"exit_code": 0, "post_verdict": "ACCEPTED", "drift": [], "task_id": "TASK-0001"},
    )
    for _ in range(3):
        _append(
            repo,
            "hook_decision",
            "TASK-0001",
            {
                "host": "claude",
                "event": "pre",
                "tool": f"Write{text}",
                "action": "write",
                "verdict": "DENY",
                "codes": ["HOOK_OUTSIDE_SCOPE", f"HOOK_X{text}"],
                "targets": [f"docs/{text}.md"],
                "task_id": "TASK-0001",
                "extra": CANARY,
            },
        )
    _append(
        repo,
        "hook_decision",
        "TASK-0001",
        {
            "host": "claude",
            "event": "pre",
            "tool": "Write",
            "action": "write",
            "verdict": "ALLOW",
            "codes": [],
            "targets": ["src/app.py"],
            "task_id": "TASK-0001",
        },
    )
    _append(
        repo, "exec_refused", "TASK-0002", {"verdict": "REJECTED", "reasons": ["C3_RECORD_MISSING"]}
    )
    digest = "sha256:" + "c" * 64
    _append(
        repo,
        "eval_candidate_registered",
        digest,
        {
            "candidate": {
                "candidate_id": f"candidate:better{text}:v1",
                "hypothesis": f"stops more{text}",
                "secret_plan": CANARY,
            }
        },
    )
    _append(
        repo,
        "eval_gate_verdict",
        digest,
        {
            "verdict": "AUTO_APPROVED",
            "reasons": [{"code": "POLICY_GATE_PASSED", "message": f"may proceed{text}"}],
        },
    )
    _append(
        repo,
        "eval_experiment_result",
        digest,
        {
            "experiment": {
                "fixtures": [
                    _fixture("known-bad-1", "known_bad", (1, 0), (1, 1)),
                    _fixture(f"mutant-1{text}", "known_mutant", (1, 1), (1, 1)),
                    _fixture("control-1", "negative_control", (1, 0), (1, 0)),
                ],
                "detection": {
                    "known_mutants": [f"mutant-1{text}", "mutant-2"],
                    "baseline_detected": [f"mutant-1{text}"],
                    "candidate_detected": [f"mutant-1{text}", "mutant-2"],
                },
                "independence": {
                    "observed": "I3",
                    "required": "I3",
                    "records": [{"level": "I3", "why": f"separate model{text}", "counted": True}],
                },
                "raw_notes": CANARY,
            }
        },
    )
    _append(
        repo,
        "eval_promotion_decision",
        digest,
        {
            "decision": "PASS",
            "candidate_id": "candidate:better:v1",
            "decision_record": {
                "production_promotion_executed": False,
                "reasons": [{"code": "THRESHOLDS_MET", "message": f"every threshold holds{text}"}],
            },
        },
    )
    return repo


def tamper_ledger(repo: Path, seq: int = 2) -> None:
    """Edit one stored payload behind the ledger's back (as a careless sqlite3 session would)."""
    db = repo / ".plangate" / "ledger.sqlite3"
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("DROP TRIGGER IF EXISTS ledger_entries_no_update")
        conn.execute(
            "UPDATE ledger_entries SET payload = ? WHERE seq = ?", ('{"program":"forged"}', seq)
        )
    finally:
        conn.close()
