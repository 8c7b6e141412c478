"""``plangate setup --git`` beside an existing pre-commit configuration, with the real
pre-commit framework and the team's real ruff hook: PlanGate joins the framework's chain
(``repo: local``, no ``rev:``), both hooks run on a commit, and ``plangate doctor`` reports
the framework's real state (not installed, without PlanGate, skipped by ``SKIP``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support.repo import commit_all, git
from support.terminal import at_terminal, person_env

TEAM_CONFIG = """\
# The team's hooks: keep this comment.
repos:
  - repo: local
    hooks:
      - id: ruff
        name: ruff
        entry: ruff check --no-cache
        language: system
        types: [python]
"""

BIN = str(Path(sys.executable).parent)


def _pre_commit() -> str:
    found = shutil.which("pre-commit", path=BIN) or shutil.which("pre-commit")
    if found is None:
        pytest.fail("the pre-commit framework is not installed: pip install -e '.[dev]'")
    return found


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = person_env(**extra)
    env["PATH"] = f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}"
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env.pop("SKIP", None) if "SKIP" not in extra else None
    return env


def _run(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True,
                          check=False, timeout=300)


@pytest.fixture
def team_repo(git_repo: Path, tmp_path: Path) -> Path:
    """A repository with the team's pre-commit configuration, the framework's hook
    installed for the pre-commit stage only (as most teams do)."""
    (git_repo / ".pre-commit-config.yaml").write_text(TEAM_CONFIG)
    commit_all(git_repo, "the team's hooks")
    proc = _run(git_repo, _env(tmp_path), _pre_commit(), "install")
    assert proc.returncode == 0, proc.stderr
    return git_repo


def test_setup_adds_plangate_to_the_framework_and_both_hooks_run(
    team_repo: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path)
    framework_hook = (team_repo / ".git" / "hooks" / "pre-commit").read_text()
    proc = at_terminal(team_repo, "setup", "--claude", "--git", typed="SETUP\n", env=env)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "repo: local" in proc.stdout  # shown before it is written
    assert proc.stdout.index("plangate hook git-pre-commit") < proc.stdout.index("Type SETUP")
    text = (team_repo / ".pre-commit-config.yaml").read_text()
    assert text.startswith(TEAM_CONFIG)  # the team's file, comments and all, kept
    config = yaml.safe_load(text)
    local = config["repos"][-1]
    assert local["repo"] == "local" and "rev" not in local
    assert [h["id"] for h in local["hooks"]] == ["plangate-pre-commit", "plangate-pre-push"]
    assert all(h["language"] == "system" for h in local["hooks"])
    # git's hook is still the framework's; setup says how to add the pre-push stage.
    assert (team_repo / ".git" / "hooks" / "pre-commit").read_text() == framework_hook
    assert "pre-commit install --hook-type pre-commit --hook-type pre-push" in proc.stdout
    assert "git add .plangate/protected-surfaces.toml" in proc.stdout
    assert ".pre-commit-config.yaml" in proc.stdout.split("git add", 1)[1].splitlines()[0]
    assert (team_repo / ".plangate" / "ledger.sqlite3").is_file()
    # Running setup again changes nothing.
    again = at_terminal(team_repo, "setup", "--claude", "--git", env=env)
    assert again.returncode == 0 and "Type SETUP" not in again.stdout
    assert (team_repo / ".pre-commit-config.yaml").read_text() == text
    # The adoption commit, as setup's steps say; then both hooks run on a commit: ruff
    # refuses the lint error, PlanGate the path outside a task.
    git(team_repo, "add", "-A")
    git(team_repo, "commit", "-q", "--no-verify", "-m", "Adopt PlanGate")
    assert _run(team_repo, env, _pre_commit(), "install", "--hook-type", "pre-commit",
                "--hook-type", "pre-push").returncode == 0
    (team_repo / "src").mkdir()
    (team_repo / "src" / "bad.py").write_text("import os\n")
    git(team_repo, "add", "src/bad.py")
    commit = _run(team_repo, env, "git", "commit", "-m", "code outside a task")
    assert commit.returncode != 0
    said = commit.stdout + commit.stderr
    lines = {line.split("...")[0].strip(): line for line in said.splitlines() if "..." in line}
    assert "Failed" in lines["ruff"]
    assert "Failed" in lines["PlanGate (staged changes against the active task and protected "
                             "surfaces)"]
    # SKIP leaves PlanGate out of that commit, visibly ("Skipped"); CI still judges the PR.
    git(team_repo, "reset", "-q")
    (team_repo / "src" / "bad.py").unlink()
    plan = team_repo / "docs" / "working" / "TASK-0001" / "plan.md"
    plan.parent.mkdir(parents=True)
    plan.write_text("# plan\n")
    git(team_repo, "add", str(plan))
    skipped = _run(team_repo, _env(tmp_path, SKIP="plangate-pre-commit"), "git", "commit",
                   "-m", "plan")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    said = skipped.stdout + skipped.stderr
    lines = {line.split("...")[0].strip(): line for line in said.splitlines() if "..." in line}
    assert "Skipped" in lines["PlanGate (staged changes against the active task and protected "
                              "surfaces)"]


def test_a_configuration_setup_cannot_edit_is_refused_before_any_write(
    git_repo: Path, tmp_path: Path
) -> None:
    (git_repo / ".pre-commit-config.yaml").write_text(TEAM_CONFIG + "default_stages: [pre-commit]\n")
    commit_all(git_repo, "hooks")
    before = sorted(p.name for p in git_repo.iterdir())
    proc = at_terminal(git_repo, "setup", "--claude", "--git", typed="SETUP\n",
                       env=_env(tmp_path))
    assert proc.returncode == 1
    assert "SETUP_PRE_COMMIT_CONFIG_UNEDITABLE" in proc.stderr
    assert "plangate hook git-pre-commit" in proc.stderr  # the entry to add by hand
    assert sorted(p.name for p in git_repo.iterdir()) == before
    assert not (git_repo / ".plangate").exists()
    assert "PlanGate" not in (git_repo / ".gitignore").read_text() if (
        git_repo / ".gitignore").exists() else True


def _doctor(repo: Path, env: dict[str, str]) -> dict[str, object]:
    proc = _run(repo, env, sys.executable, "-m", "plangate", "doctor", "--json")
    assert proc.stdout, proc.stderr
    return dict(json.loads(proc.stdout))


def _codes(doc: dict[str, object]) -> list[str]:
    reasons = doc["reasons"]
    assert isinstance(reasons, list)
    return [str(r["code"]) for r in reasons]


def test_doctor_fails_while_the_framework_runs_without_plangate(
    team_repo: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path)
    assert _run(team_repo, env, sys.executable, "-m", "plangate", "hooks", "install",
                "--claude").returncode == 0
    doc = _doctor(team_repo, env)
    assert doc["verdict"] == "FAIL"
    assert "DOCTOR_PRE_COMMIT_WITHOUT_PLANGATE" in _codes(doc)


def test_doctor_reports_the_framework_s_real_state(team_repo: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    proc = at_terminal(team_repo, "setup", "--claude", "--git", typed="SETUP\n", env=env)
    assert proc.returncode == 0, proc.stderr
    # Only the framework's pre-commit stage is installed: pre-push runs nothing.
    doc = _doctor(team_repo, env)
    assert "DOCTOR_PRE_COMMIT_NOT_INSTALLED" in _codes(doc)
    assert doc["verdict"] == "FAIL"
    assert _run(team_repo, env, _pre_commit(), "install", "--hook-type", "pre-commit",
                "--hook-type", "pre-push").returncode == 0
    doc = _doctor(team_repo, env)
    assert not [c for c in _codes(doc) if c.startswith("DOCTOR_PRE_COMMIT")]
    facts = doc["facts"]
    assert isinstance(facts, dict)
    framework = [p for p in facts["probes"] if "pre-commit framework" in p["event"]]
    assert {p["event"] for p in framework} == {
        "pre-commit (pre-commit framework)", "pre-push (pre-commit framework)"}
    assert all(p["denied"] for p in framework)
    assert not [s for s in facts["skipped"] if s["host"] == "git"]
    # SKIP naming PlanGate's hook in the environment fails doctor.
    doc = _doctor(team_repo, _env(tmp_path, SKIP="ruff,plangate-pre-commit"))
    assert doc["verdict"] == "FAIL"
    assert "DOCTOR_PRE_COMMIT_SKIPPED" in _codes(doc)
    assert os.path.isfile(team_repo / ".git" / "hooks" / "pre-push")


def test_a_commit_that_skipped_plangate_is_still_judged_at_the_push(
    team_repo: Path, tmp_path: Path
) -> None:
    """SKIP=plangate-pre-commit lets one commit through; the framework's pre-push stage runs
    PlanGate over the whole pushed range, so the push of that commit is stopped."""
    env = _env(tmp_path)
    assert at_terminal(team_repo, "setup", "--git", typed="SETUP\n", env=env).returncode == 0
    git(team_repo, "add", "-A")
    git(team_repo, "commit", "-q", "--no-verify", "-m", "Adopt PlanGate")
    remote = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(team_repo), str(remote))
    git(team_repo, "remote", "add", "origin", str(remote))
    git(team_repo, "fetch", "-q", "origin")
    assert _run(team_repo, env, _pre_commit(), "install", "--hook-type", "pre-commit",
                "--hook-type", "pre-push").returncode == 0
    (team_repo / "src").mkdir()
    (team_repo / "src" / "ok.py").write_text("VALUE = 1\n")
    git(team_repo, "add", "src/ok.py")
    skipped = _run(team_repo, _env(tmp_path, SKIP="plangate-pre-commit"), "git", "commit",
                   "-q", "-m", "outside a task")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    push = _run(team_repo, env, "git", "push", "origin", "HEAD:refs/heads/main")
    assert push.returncode != 0
    said = push.stdout + push.stderr
    assert "PlanGate (pushed range" in said and "src/ok.py" in said
    assert git(remote, "rev-parse", "main") != git(team_repo, "rev-parse", "HEAD")
