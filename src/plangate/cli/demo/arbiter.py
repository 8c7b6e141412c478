"""Demo steps: protected surfaces, the derived LoopSpec and the C-3' arbiter.

Runs in its own repository next to the main demo repository, so the arbiter's
commits never move the main demo's HEAD (other steps rely on it).
"""

from __future__ import annotations

import json

from plangate.cli.demo import Demo
from plangate.surfaces import REPO_SURFACES_RELPATH, bundled_template_bytes

TASK = "TASK-0002"
STAMP = "2026-12-02T10:00:00Z"
ACTORS = "impl-agent,qa-agent"

PLAN = """# Plan

## Goal
Make `greet(name)` greet politely.

## Files / Components to Touch
- `src/greet.py`
- `tests/test_greet.py`

## Testing Strategy
A unit test checks the polite greeting.

Verification Automation: `python3 -m pytest -q tests`
"""


def run_steps(demo: Demo) -> None:
    """surfaces (template -> own definition) -> loopspec -> arbiter clean / protected."""
    repo = demo.repo.parent / "arbiter-demo"
    repo.mkdir()
    sub = Demo(repo=repo, out=demo.out, env=demo.env, step_no=demo.step_no)
    try:
        _steps(sub)
    finally:
        demo.step_no = sub.step_no


def _steps(demo: Demo) -> None:
    demo.git("init", "-q", "-b", "main")
    demo.git("config", "user.name", "Demo")
    demo.git("config", "user.email", "demo@example.invalid")
    demo.git("config", "commit.gpgsign", "false")
    (demo.repo / "src").mkdir()
    (demo.repo / "src" / "greet.py").write_text('def greet(name):\n    return "hi " + name\n')
    (demo.repo / "CLAUDE.md").write_text("# Agent rules\n\nNever push to main.\n")
    demo.commit_all("example app")

    demo.step("protected surfaces: this repository has no definition of its own yet")
    code, out, err = demo.cli("surfaces", "--explain", "CLAUDE.md")
    demo.show(out.rstrip())
    demo.expect(code, 3, "HUMAN_ESCALATED: only the bundled template resolves "
                "(HO_BOUNDARY_UNDEFINED)")

    demo.step(f"a human adopts the template as {REPO_SURFACES_RELPATH} (marker line removed)")
    path = demo.repo / REPO_SURFACES_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(bundled_template_bytes().splitlines(keepends=True)[1:]))
    code, out, err = demo.cli("surfaces", "--explain", "CLAUDE.md", "src/greet.py")
    demo.show(out.rstrip())
    demo.expect(code, 0, "resolved: downstream definition")

    demo.step(f"plan {TASK}: six artifacts, both review markers, committed (the base)")
    code, out, err = demo.cli("init", TASK)
    demo.expect(code, 0, "scaffolded")
    tdir = demo.repo / "docs" / "working" / TASK
    (tdir / "pbi-input.md").write_text("# PBI\n\nGreetings should be polite.\n")
    (tdir / "plan.md").write_text(PLAN)
    (tdir / "todo.md").write_text("- [ ] polite greet\n")
    (tdir / "test-cases.md").write_text("| AC | test |\n|---|---|\n| AC-1 | test_polite |\n")
    for flag, verdict in (("--c1", "PASS"), ("--c2", "approve")):
        code, out, err = demo.cli("review", "mark", TASK, flag, verdict)
        demo.expect(code, 0, f"{flag} marker written")
    base = demo.commit_all(f"plan package {TASK}")

    demo.step("derive the LoopSpec from plan.md (its allowed_paths scope the change)")
    code, out, err = demo.cli("loopspec", TASK, "--maker", "impl-agent", "--checker", "qa-agent",
                              "--format", "json")
    demo.show("    allowed_paths: " + ", ".join(json.loads(out)["loop"]["scope"]["allowed_paths"]))
    demo.show("    " + err.strip())
    demo.expect(code, 0, "derived")

    reviewers = demo.repo.parent / "arbiter-reviewers.json"
    reviewers.write_text(json.dumps({
        "model_a": {"verdict": "approve", "evidence_ref": "reviews/model-a.md"},
        "model_b": {"verdict": "approve", "evidence_ref": "reviews/model-b.md"},
    }))
    common = ("--base", base, "--reviewers", str(reviewers), "--loopspec-actors", ACTORS,
              "--class", "no-merge", "--lite", "all", "--breakdown", "pass",
              "--timestamp", STAMP)

    demo.step("the agent implements inside its scope; reviewers approve/approve; arbiter --issue")
    (demo.repo / "src" / "greet.py").write_text(
        'def greet(name):\n    return "Good day, " + name\n')
    clean = demo.commit_all("polite greeting")
    code, out, err = demo.cli("arbiter", TASK, "--target-sha", clean, *common, "--issue")
    demo.show(out.rstrip())
    demo.expect(code, 0, "AUTO_APPROVED; c3-prime record written")
    code, out, err = demo.cli("c3", "verify", TASK, "--expected-sha", clean)
    demo.show(out.rstrip())
    demo.expect(code, 0, "the record verifies against the approved commit")

    demo.step("another change also edits CLAUDE.md (a protected surface)")
    (demo.repo / "CLAUDE.md").write_text("# Agent rules\n\nPush wherever you like.\n")
    (demo.repo / "src" / "greet.py").write_text(
        'def greet(name):\n    return "Good day to you, " + name\n')
    demo.git("add", "CLAUDE.md", "src/greet.py")
    demo.git("commit", "-q", "-m", "greeting + rules edit")
    touching = demo.git("rev-parse", "HEAD")
    code, out, err = demo.cli("arbiter", TASK, "--target-sha", touching, *common)
    demo.show(out.rstrip())
    demo.expect(code, 3, "HUMAN_ESCALATED: touches a protected surface")
