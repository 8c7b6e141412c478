"""The composite action's check script under GitHub's exact shell flags
(``bash --noprofile --norc -eo pipefail``): every outcome prints its reasons, annotates
the offending paths, writes the job summary and sets the outputs before the step fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from support.delivery import define_surfaces
from support.hooks import approved_repo
from support.repo import commit_all, git
from support.sarif import SARIF_MIN_SCHEMA
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
         sarif: bool = True, env: dict[str, str] | None = None) -> ActionRun:
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
    full = {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "HOME": str(tmp),
        "BASE": base,
        "HEAD": head,
        "GITHUB_OUTPUT": str(tmp / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "SARIF": str(tmp / "out.sarif") if sarif else "",
        "PLANGATE_RESULT_FILE": str(tmp / "result.json"),
        **(env or {}),
    }
    if "PYTHONPATH" in os.environ:
        full["PYTHONPATH"] = os.environ["PYTHONPATH"]
    (tmp / "output").write_text("")
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(SCRIPT)],
        cwd=repo, env=full, capture_output=True, text=True, timeout=120, check=False,
    )
    return ActionRun(proc, tmp)


def github_pull_request(repo: Path, tmp: Path, base: str, *, event: str = "pull_request",
                        payload: object = None, fail_on_human: str = "") -> ActionRun:
    """The script as a plain ``run:`` step of a workflow on ``event``: no BASE or HEAD, only
    what GitHub hands every step (its variables and the event file), and the working tree
    at GitHub's merge commit of the pull request, as ``actions/checkout`` leaves it."""
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/heads/pr", head)
    git(repo, "switch", "-q", "--detach", base)
    git(repo, "-c", "user.name=GitHub", "-c", "user.email=noreply@github.invalid", "merge",
        "-q", "--no-ff", "-m", f"Merge {head} into {base}", head)
    merge = git(repo, "rev-parse", "HEAD")
    event_file = tmp / "event.json"
    if payload is None:
        payload = {"action": "synchronize", "number": 7, "pull_request": {
            "number": 7, "base": {"ref": "main", "sha": base}, "head": {"ref": "pr", "sha": head},
        }}
    event_file.write_text(json.dumps(payload))
    env = {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(event_file),
        "GITHUB_BASE_REF": "main",
        "GITHUB_HEAD_REF": "pr",
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_SHA": merge,
        "GITHUB_REPOSITORY": "team/app",
        "GITHUB_WORKSPACE": str(repo),
        "RUNNER_TEMP": str(tmp),
    }
    if fail_on_human:
        env["FAIL_ON_HUMAN_REQUIRED"] = fail_on_human
    return _run(repo, tmp, base="", head="", env=env)


def test_an_accepted_pull_request_passes_and_says_so(git_repo: Path, tmp_path: Path) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    run = _run(repo, tmp_path, base=base)
    assert run.code == 0, run.log
    assert run.outputs == {"verdict": "ACCEPTED", "exit-code": "0", "human_required": "false"}
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
    assert run.outputs == {"verdict": "REJECTED", "exit-code": "1", "human_required": "false"}
    # one annotation per offending path; the comma in the path is escaped
    assert ("::error file=stray%2Cone.py,title=PlanGate CI_OUTSIDE_SCOPE::stray,one.py: outside "
            "every task's allowed paths") in run.log
    assert '"verdict": "REJECTED"' in run.log  # the JSON reasons are printed
    assert "| `CI_OUTSIDE_SCOPE` |" in run.summary
    assert run.sarif is not None
    result = run.sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "CI_OUTSIDE_SCOPE" and result["level"] == "error"
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "stray%2Cone.py"


def _protected_change(repo: Path) -> str:
    """A task that names ``AGENTS.md`` (a protected surface) changes it; returns the base."""
    base = define_surfaces(repo)
    plan = PLAN_MD.replace("- `tests/test_app.py`", "- `tests/test_app.py`\n- `AGENTS.md`")
    make_task(repo, "TASK-0003", plan_md=plan)
    approve_task(repo, "TASK-0003")
    commit_all(repo, "record")
    (repo / "AGENTS.md").write_text("x\n")
    commit_all(repo, "work")
    return base


def test_human_required_passes_the_step_and_hands_the_decision_to_a_human(
    git_repo: Path, tmp_path: Path
) -> None:
    run = _run(git_repo, tmp_path, base=_protected_change(git_repo))
    assert run.code == 0, run.log  # not a red step: GitHub's human gate decides
    assert run.outputs == {"verdict": "HUMAN_REQUIRED", "exit-code": "3",
                           "human_required": "true"}
    assert ("::warning file=AGENTS.md,title=PlanGate CI_PROTECTED_SURFACE::AGENTS.md: a "
            "protected surface") in run.log
    assert "::error" not in run.log
    assert "::notice title=PlanGate HUMAN_REQUIRED::a human must approve" in run.log
    assert "## PlanGate ci check: HUMAN_REQUIRED" in run.summary
    assert "hands the decision to the repository's human gate" in run.summary
    assert run.sarif is not None
    jsonschema.validate(run.sarif, SARIF_MIN_SCHEMA)
    assert run.sarif["runs"][0]["results"][0]["level"] == "warning"


def test_human_required_can_still_fail_the_step_when_asked(
    git_repo: Path, tmp_path: Path
) -> None:
    base = _protected_change(git_repo)
    run = _run(git_repo, tmp_path, base=base, env={"FAIL_ON_HUMAN_REQUIRED": "true"})
    assert run.code == 3, run.log
    assert run.outputs["human_required"] == "true"


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
    assert run.outputs == {"verdict": "REJECTED", "exit-code": "2", "human_required": "false"}
    assert f"::error title=PlanGate {code_word}::" in run.log
    assert "REJECTED" in run.summary


def test_a_check_that_stops_without_a_verdict_is_rejected(git_repo: Path, tmp_path: Path) -> None:
    define_surfaces(git_repo)
    run = _run(git_repo, tmp_path, base="no-such-ref")
    assert run.code == 1, run.log
    assert run.outputs["verdict"] == "REJECTED"
    assert run.outputs["exit-code"] != "0"
    assert "gave no verdict" in run.log


# -- run as GitHub runs it: its variables, its event file, its merge-commit checkout --------

POLICY = """\
[[taskless]]
name = "docs"
paths = ["docs/**", "*.md"]
human = false

[[taskless]]
name = "dependencies"
paths = ["requirements*.txt"]
human = true
"""


def _taskless_pull_request(repo: Path, files: dict[str, str], *, policy: bool = True) -> str:
    """Surfaces (and the policy) on main; a branch that changes ``files``; returns the base."""
    define_surfaces(repo)
    if policy:
        (repo / ".plangate" / "policy.toml").write_text(POLICY)
    base = commit_all(repo, "base")
    git(repo, "switch", "-q", "-c", "topic")
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    commit_all(repo, "pull request")
    return base


def test_a_run_step_reads_the_pull_request_from_the_event_and_checks_out_its_head(
    git_repo: Path, tmp_path: Path
) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    head = commit_all(repo, "work")
    run = github_pull_request(repo, tmp_path, base)
    assert run.code == 0, run.log
    assert run.outputs == {"verdict": "ACCEPTED", "exit-code": "0", "human_required": "false"}
    assert git(repo, "rev-parse", "HEAD") == head  # not GitHub's merge commit


def test_a_readme_fix_without_a_task_passes_under_the_bases_policy(
    git_repo: Path, tmp_path: Path
) -> None:
    base = _taskless_pull_request(git_repo, {"README.md": "# fixed a typo\n"})
    run = github_pull_request(git_repo, tmp_path, base)
    assert run.code == 0, run.log
    assert run.outputs["verdict"] == "ACCEPTED"
    assert "::error" not in run.log and "::warning" not in run.log


def test_a_dependency_bump_without_a_task_waits_for_a_human_without_failing(
    git_repo: Path, tmp_path: Path
) -> None:
    base = _taskless_pull_request(git_repo, {"requirements.txt": "requests==2.32.4\n"})
    run = github_pull_request(git_repo, tmp_path, base)
    assert run.code == 0, run.log
    assert run.outputs == {"verdict": "HUMAN_REQUIRED", "exit-code": "3",
                           "human_required": "true"}
    assert "::warning file=requirements.txt,title=PlanGate CI_TASKLESS_HUMAN::" in run.log
    assert "| `CI_TASKLESS_HUMAN` |" in run.summary


def test_without_a_policy_a_pull_request_without_a_task_fails_and_names_the_policy_file(
    git_repo: Path, tmp_path: Path
) -> None:
    base = _taskless_pull_request(git_repo, {"README.md": "# x\n"}, policy=False)
    run = github_pull_request(git_repo, tmp_path, base)
    assert run.code == 1, run.log
    assert run.outputs["human_required"] == "false"
    assert ".plangate/policy.toml" in run.summary


def test_one_annotation_per_finding_each_naming_only_its_own_path(
    git_repo: Path, tmp_path: Path
) -> None:
    files = {"README.md": "# x\n", "src/a.py": "a\n", "src/b.py": "b\n", "src/c.py": "c\n"}
    base = _taskless_pull_request(git_repo, files)
    run = github_pull_request(git_repo, tmp_path, base)
    assert run.code == 1, run.log
    errors = [line for line in run.log.splitlines() if line.startswith("::error")]
    assert [line.split(",", 1)[0] for line in errors] == [
        "::error file=src/a.py", "::error file=src/b.py", "::error file=src/c.py"]
    for line, own in zip(errors, ("a", "b", "c"), strict=True):
        others = {"a", "b", "c"} - {own}
        assert all(f"src/{o}.py" not in line for o in others), line
        assert "README.md" not in line
    assert run.sarif is not None
    jsonschema.validate(run.sarif, SARIF_MIN_SCHEMA)
    assert len(run.sarif["runs"][0]["results"]) == 3


@pytest.mark.parametrize(
    ("event", "payload", "said"),
    [
        ("push", {"ref": "refs/heads/main"}, "the event is push, not a pull request"),
        ("pull_request", {"pull_request": {"base": {}}}, "names no pull request base and head"),
        ("pull_request", {"pull_request": {"base": {"sha": "main"}, "head": {"sha": "HEAD"}}},
         "names no pull request base and head"),
        ("pull_request", ["not", "an", "object"], "names no pull request base and head"),
    ],
)
def test_an_event_that_names_no_pull_request_fails_closed(
    git_repo: Path, tmp_path: Path, event: str, payload: object, said: str
) -> None:
    base = _taskless_pull_request(git_repo, {"README.md": "# x\n"})
    run = github_pull_request(git_repo, tmp_path, base, event=event, payload=payload)
    assert run.code == 2, run.log
    assert run.outputs == {"verdict": "REJECTED", "exit-code": "2", "human_required": "false"}
    assert "::error title=PlanGate CI_USAGE::" in run.log and said in run.log
