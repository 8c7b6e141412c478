"""Demo steps: where agents meet the gate.

A Claude Code ``PreToolUse`` payload goes through ``plangate hook claude``
exactly as Claude Code would send it: an in-scope write is allowed, a write to
a protected surface is denied, and ``echo x > CLAUDE.md`` through Bash is
denied too (the shell is not a way around the gate). Then the installed hooks
are proven by ``plangate doctor``.
"""

from __future__ import annotations

import json
import os

from plangate.cli.demo import Demo

TASK = "TASK-0090"

PLAN = """# Plan

## Goal
Add a farewell function to the example app.

## Files / Components to Touch
- `src/farewell.py`

## Testing Strategy
A unit test calls farewell() and checks the text.

Verification Automation: `python3 -m pytest -q tests`
"""


def _prepare_task(demo: Demo) -> None:
    tdir = demo.repo / "docs" / "working" / TASK
    code, _out, _err = demo.cli("init", TASK)
    demo.expect(code, 0, f"{TASK} scaffolded")
    (tdir / "pbi-input.md").write_text("# PBI\n\nWhy: users want a goodbye.\n")
    (tdir / "plan.md").write_text(PLAN)
    (tdir / "todo.md").write_text("- [ ] implement farewell\n")
    (tdir / "test-cases.md").write_text("| AC | test |\n|---|---|\n| AC-1 | test_farewell |\n")
    for argv in (("review", "mark", TASK, "--c1", "PASS"),
                 ("review", "mark", TASK, "--c2", "approve")):
        code, _out, _err = demo.cli(*argv)
        demo.expect(code, 0, "review marker written")
    head = demo.commit_all(f"plan package for {TASK}")
    reviewers = demo.repo.parent / "hooks-reviewers.json"
    reviewers.write_text(json.dumps({
        "model_a": {"verdict": "approve", "evidence_ref": "reviews/model-a.md"},
        "model_b": {"verdict": "approve", "evidence_ref": "reviews/model-b.md"},
    }))
    code, _out, _err = demo.cli(
        "c3", "issue", TASK, "--target-sha", head, "--reviewers", str(reviewers),
        "--decision", "AUTO_APPROVED", "--policy-ref", "plangate-arbiter@v1",
        "--issued-at", "2026-12-02T09:30:00Z",
    )  # fmt: skip
    demo.expect(code, 0, f"{TASK} approved at HEAD; its scope is src/farewell.py")


def _payload(demo: Demo, tool: str, tool_input: dict[str, str]) -> bytes:
    cwd = os.path.realpath(demo.repo)
    return json.dumps({"session_id": "demo", "cwd": cwd, "hook_event_name": "PreToolUse",
                       "tool_name": tool, "tool_input": tool_input}).encode()


def _hook(demo: Demo, payload: bytes) -> tuple[int, str, str]:
    saved = demo.env
    demo.env = {**saved, "PLANGATE_TASK": TASK}  # what 'plangate exec' gives the agent
    try:
        return demo.cli("hook", "claude", stdin=payload)
    finally:
        demo.env = saved


def run_steps(demo: Demo) -> None:
    """Approve a task, then send three Claude Code payloads and run doctor."""
    if not (demo.repo / "src").is_dir():
        (demo.repo / "src").mkdir()
    (demo.repo / "CLAUDE.md").write_text("# Rules for the agent\n")
    demo.commit_all("agent rules")

    demo.step(f"hooks: approve {TASK} so that an agent has a scope to work in")
    _prepare_task(demo)

    demo.step("Claude Code asks: Write src/farewell.py (inside the approved scope)")
    target = f"{os.path.realpath(demo.repo)}/src/farewell.py"
    code, _out, _err = _hook(demo, _payload(demo, "Write", {"file_path": target,
                                                          "content": "def farewell(): ..."}))
    demo.show("    (no output: Claude Code's own permission rules stay in charge)")
    demo.expect(code, 0, "allowed")

    demo.step("Claude Code asks: Edit CLAUDE.md (a protected surface)")
    code, out, err = _hook(demo, _payload(demo, "Edit", {"file_path": "CLAUDE.md",
                                                         "old_string": "#", "new_string": "##"}))
    demo.show(err.rstrip())
    demo.expect(code, 2, "denied: exit 2 and permissionDecision 'deny'")

    demo.step("Claude Code asks: Bash `echo x > CLAUDE.md` (the shell is no way around it)")
    code, out, err = _hook(demo, _payload(demo, "Bash", {"command": "echo x > CLAUDE.md"}))
    demo.show(err.rstrip())
    demo.expect(code, 2, "denied")

    demo.step("plangate hooks install --claude --git, then plangate doctor runs canaries")
    code, out, err = demo.cli("hooks", "install", "--claude", "--git")
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 0, "installed")
    code, out, err = demo.cli("doctor")
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 0, "every installed hook really denies")
