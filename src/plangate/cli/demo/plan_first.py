"""Demo steps: the plan-first journey."""

from __future__ import annotations

import json

from plangate.cli.demo import Demo

TASK = "TASK-0001"

PLAN = """# Plan

## Goal
Add a `greet(name)` function to the example app and test it.

## Files / Components to Touch
- `src/app.py`
- `tests/test_app.py`

## Testing Strategy
A unit test calls greet("Ada") and checks the greeting.

Verification Automation: `python3 -m pytest -q tests`
"""


def run_steps(demo: Demo) -> None:
    """init -> artifacts -> reviews -> c3 issue -> verify -> exec -> stale plan -> exec refused."""
    (demo.repo / "src").mkdir()
    (demo.repo / "src" / "app.py").write_text('"""Example app."""\n')
    (demo.repo / "README.md").write_text("# Example app\n")
    demo.commit_all("example app")

    demo.step(f"plangate init {TASK}: scaffold the six Plan Package artifacts")
    code, out, err = demo.cli("init", TASK)
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 0, "scaffolded")

    demo.step("people and agents write the artifacts (pbi-input, plan, todo, test-cases)")
    tdir = demo.repo / "docs" / "working" / TASK
    (tdir / "pbi-input.md").write_text("# PBI\n\nWhy: users want to be greeted by name.\n")
    (tdir / "plan.md").write_text(PLAN)
    (tdir / "todo.md").write_text("- [ ] implement greet\n- [ ] test greet\n")
    (tdir / "test-cases.md").write_text("| AC | test |\n|---|---|\n| AC-1 | test_greet |\n")
    code, out, err = demo.cli("package", TASK)
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 1, "package incomplete: no C-1/C-2 markers yet")

    demo.step("C-1 self review and C-2 external review write markers bound to plan.md")
    for argv in (
        ("review", "mark", TASK, "--c1", "PASS"),
        ("review", "mark", TASK, "--c2", "approve"),
    ):
        code, out, err = demo.cli(*argv)
        demo.show(out.rstrip() or err.rstrip())
        demo.expect(code, 0, "marker written")
    code, out, err = demo.cli("package", TASK)
    demo.show(out.rstrip())
    demo.expect(code, 0, "package complete, both markers valid")
    head = demo.commit_all("plan package for TASK-0001")

    demo.step("C-3': issue the c3-prime record bound to HEAD (two independent reviewers)")
    reviewers = demo.repo.parent / "reviewers.json"
    reviewers.write_text(
        json.dumps(
            {
                "model_a": {"verdict": "approve", "evidence_ref": "reviews/model-a.md"},
                "model_b": {"verdict": "approve", "evidence_ref": "reviews/model-b.md"},
            }
        )
    )
    code, out, err = demo.cli(
        "c3", "issue", TASK, "--target-sha", head, "--reviewers", str(reviewers),
        "--decision", "AUTO_APPROVED", "--policy-ref", "plangate-arbiter@v1",
        "--issued-at", "2026-12-02T09:00:00Z",
    )  # fmt: skip
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 0, "record issued")

    demo.step("static validate: plangate c3 verify")
    code, out, err = demo.cli("c3", "verify", TASK)
    demo.show(out.rstrip())
    demo.expect(code, 0, "accepted")

    demo.step("plangate exec: preflight against HEAD, then run the agent's command")
    code, out, err = demo.cli("exec", TASK, "--", "git", "status", "--short")
    demo.show((out + err).rstrip())
    demo.expect(code, 0, "preflight accepted, command ran")

    demo.step("someone edits plan.md after approval")
    with (tdir / "plan.md").open("a") as handle:
        handle.write("\nAlso rewrite the database layer.\n")
    code, out, err = demo.cli("exec", TASK, "--", "git", "status", "--short")
    demo.show((out + err).rstrip())
    demo.expect(code, 1, "refused: the approval is stale, the command never started")
    code, out, err = demo.cli("c3", "verify", TASK)
    demo.show(out.rstrip())
    demo.expect(code, 1, "rejected as stale")

    # Restore the approved plan so later demo steps work with a valid approval.
    (tdir / "plan.md").write_text(PLAN)
