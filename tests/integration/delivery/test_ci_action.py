"""The composite action's check script under GitHub's exact shell flags
(``bash --noprofile --norc -eo pipefail``): every outcome prints its reasons, annotates
the offending paths, writes the job summary and sets the outputs before the step fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.delivery import define_surfaces
from support.hooks import approved_repo
from support.repo import commit_all
from support.taskkit import PLAN_MD, approve_task, make_task

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "ci-action.sh"


class ActionRun:
    """One run of the script: its exit code, log, outputs, summary and SARIF (if any)."""

    def __init__(self, proc: subprocess.CompletedProcess[str], tmp: Path) -> None:
        self.code = proc.returncode
        self.log = proc.stdout + proc.stderr
        self.outputs = dict(
            line.split("=", 1) for line in (tmp / "output").read_text().splitlines() if line
        )
        summary = tmp / "summary.md"
        self.summary = summary.read_text() if summary.exists() else ""
        sarif = tmp / "out.sarif"
        self.sarif = json.loads(sarif.read_text()) if sarif.exists() else None


def _run(repo: Path, tmp: Path, *, base: str, head: str = "HEAD", with_plangate: bool = True,
         sarif: bool = True) -> ActionRun:
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    shim = bindir / "plangate"
    if with_plangate:
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m plangate "$@"\n')
        shim.chmod(0o755)
    elif shim.exists():
        shim.unlink()
    python = bindir / "python3"
    if not python.exists():
        python.symlink_to(sys.executable)
    env = {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "HOME": str(tmp),
        "BASE": base,
        "HEAD": head,
        "GITHUB_OUTPUT": str(tmp / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "SARIF": str(tmp / "out.sarif") if sarif else "",
        "PLANGATE_RESULT_FILE": str(tmp / "result.json"),
    }
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    (tmp / "output").write_text("")
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(SCRIPT)],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    return ActionRun(proc, tmp)


def test_an_accepted_pull_request_passes_and_says_so(git_repo: Path, tmp_path: Path) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    run = _run(repo, tmp_path, base=base)
    assert run.code == 0, run.log
    assert run.outputs == {"verdict": "ACCEPTED", "exit-code": "0"}
    assert "## PlanGate ci check: ACCEPTED" in run.summary
    assert "::error" not in run.log
    assert run.sarif is not None and run.sarif["runs"][0]["results"] == []


def test_a_rejected_pull_request_reports_before_failing(git_repo: Path, tmp_path: Path) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "stray,one.py").write_text("x\n")
    commit_all(repo, "work")
    run = _run(repo, tmp_path, base=base)
    assert run.code == 1, run.log
    assert run.outputs == {"verdict": "REJECTED", "exit-code": "1"}
    # one annotation per offending path; the comma in the path is escaped
    assert "::error file=stray%2Cone.py,title=PlanGate CI_OUTSIDE_SCOPE::" in run.log
    assert '"verdict": "REJECTED"' in run.log  # the JSON reasons are printed
    assert "| `CI_OUTSIDE_SCOPE` |" in run.summary
    assert run.sarif is not None
    result = run.sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "CI_OUTSIDE_SCOPE" and result["level"] == "error"
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "stray%2Cone.py"


def test_human_required_is_told_apart_from_rejected(git_repo: Path, tmp_path: Path) -> None:
    base = define_surfaces(git_repo)
    plan = PLAN_MD.replace("- `tests/test_app.py`", "- `tests/test_app.py`\n- `AGENTS.md`")
    make_task(git_repo, "TASK-0003", plan_md=plan)
    approve_task(git_repo, "TASK-0003")
    commit_all(git_repo, "record")
    (git_repo / "AGENTS.md").write_text("x\n")
    commit_all(git_repo, "work")
    run = _run(git_repo, tmp_path, base=base)
    assert run.code == 3, run.log
    assert run.outputs == {"verdict": "HUMAN_REQUIRED", "exit-code": "3"}
    assert "::warning file=AGENTS.md,title=PlanGate CI_PROTECTED_SURFACE::" in run.log
    assert "::error" not in run.log
    assert "## PlanGate ci check: HUMAN_REQUIRED" in run.summary
    assert run.sarif is not None
    assert run.sarif["runs"][0]["results"][0]["level"] == "warning"


@pytest.mark.parametrize(
    ("case", "code_word"),
    [("no-base", "CI_USAGE"), ("no-plangate", "PLANGATE_NOT_INSTALLED"),
     ("unknown-head", "CI_HEAD_UNKNOWN")],
)
def test_a_check_that_cannot_run_fails_closed_with_outputs(
    git_repo: Path, tmp_path: Path, case: str, code_word: str
) -> None:
    base = define_surfaces(git_repo)
    run = _run(
        git_repo, tmp_path,
        base="" if case == "no-base" else base,
        head="f" * 40 if case == "unknown-head" else "HEAD",
        with_plangate=case != "no-plangate",
    )
    assert run.code == 2, run.log
    assert run.outputs == {"verdict": "REJECTED", "exit-code": "2"}
    assert f"::error title=PlanGate {code_word}::" in run.log
    assert "REJECTED" in run.summary


def test_a_check_that_stops_without_a_verdict_is_rejected(git_repo: Path, tmp_path: Path) -> None:
    define_surfaces(git_repo)
    run = _run(git_repo, tmp_path, base="no-such-ref")
    assert run.code == 1, run.log
    assert run.outputs["verdict"] == "REJECTED"
    assert run.outputs["exit-code"] != "0"
    assert "gave no verdict" in run.log
