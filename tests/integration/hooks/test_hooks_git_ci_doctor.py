"""git hooks (really run by git) and doctor canaries in real repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plangate.hooks.install import apply
from support.hooks import approved_repo
from support.repo import git, git_as_person
from support.taskkit import make_task


def test_pre_commit_hook_stops_out_of_scope_and_protected_commits(git_repo: Path) -> None:
    repo = approved_repo(git_repo)
    apply(repo, ["git"], install=True)
    task_env = {"PLANGATE_TASK": "TASK-0001"}
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    git(repo, "add", "src/app.py")
    ok = git_as_person(repo, "commit", "-q", "-m", "in scope", env_extra=task_env)
    assert ok.returncode == 0, ok.stderr
    # HEAD moved on from the approved commit by in-scope work: still verified.
    (repo / "src" / "app.py").write_text("x\n")
    git(repo, "add", "src/app.py")
    again = git_as_person(repo, "commit", "-q", "-m", "more in scope", env_extra=task_env)
    assert again.returncode == 0, again.stderr
    # Someone bypasses the hook with an out-of-scope commit: from then on the
    # run no longer verifies, so further commits stop.
    (repo / "notes.txt").write_text("x\n")
    git(repo, "add", "notes.txt")
    assert git_as_person(repo, "commit", "-q", "--no-verify", "-m", "sneak").returncode == 0
    (repo / "src" / "app.py").write_text("y\n")
    git(repo, "add", "src/app.py")
    stale = git_as_person(repo, "commit", "-q", "-m", "stale", env_extra=task_env)
    assert stale.returncode == 1
    assert b"HOOK_TASK_NOT_VERIFIED" in stale.stderr
    assert (
        b"HOOK_COMMITTED_OUTSIDE_SCOPE" in stale.stderr
        or b"outside the task's scope" in stale.stderr
    )


def test_head_that_does_not_descend_from_the_approved_commit_blocks(git_repo: Path) -> None:
    repo = approved_repo(git_repo)
    apply(repo, ["git"], install=True)
    approved = git(repo, "rev-parse", "HEAD")
    # History rewritten: same tree, new commit that does not descend from the approval.
    git(repo, "commit", "-q", "--amend", "--no-verify", "-m", "rewritten")
    assert approved != git(repo, "rev-parse", "HEAD")
    (repo / "src" / "app.py").write_text("z\n")
    git(repo, "add", "src/app.py")
    proc = git_as_person(repo, "commit", "-q", "-m", "x", env_extra={"PLANGATE_TASK": "TASK-0001"})
    assert proc.returncode == 1
    assert b"does not descend from the approved commit" in proc.stderr


def test_pre_commit_without_task_allows_planning_files_only(git_repo: Path) -> None:
    apply(git_repo, ["git"], install=True)
    make_task(git_repo, "TASK-0002", commit=False)
    git(git_repo, "add", "-A", "docs")
    assert git_as_person(git_repo, "commit", "-q", "-m", "plan").returncode == 0
    (git_repo / "CLAUDE.md").write_text("rules\n")
    git(git_repo, "add", "CLAUDE.md")
    denied = git_as_person(git_repo, "commit", "-q", "-m", "sneak")
    assert denied.returncode == 1
    assert b"HOOK_PROTECTED_SURFACE" in denied.stderr


def test_pre_push_checks_the_pushed_range(git_repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(git_repo, "remote", "add", "origin", str(remote))
    assert git_as_person(git_repo, "push", "-q", "origin", "main").returncode == 0
    apply(git_repo, ["git"], install=True)
    (git_repo / "AGENTS.md").write_text("x\n")
    git(git_repo, "add", "AGENTS.md")
    # A human may skip the commit hook; the push hook still sees the change.
    assert git_as_person(git_repo, "commit", "-q", "--no-verify", "-m", "protected").returncode == 0
    pushed = git_as_person(git_repo, "push", "-q", "origin", "main")
    assert pushed.returncode == 1
    assert b"HOOK_PROTECTED_SURFACE" in pushed.stderr


def test_doctor_proves_every_installed_hook_denies(git_repo: Path, run_cli) -> None:
    apply(git_repo, ["claude", "codex", "cursor", "git"], install=True)
    result = run_cli(git_repo, "doctor", "--json")
    body = json.loads(result.out)
    assert result.code == 0, body
    assert body["verdict"] == "PASS"
    assert sorted(body["facts"]["hosts"]) == ["claude", "codex", "cursor", "git"]
    assert all(p["ok"] for p in body["facts"]["probes"])
    assert all(p["denied"] for p in body["facts"]["probes"] if p["expect"] == "deny")
    allowed = [p for p in body["facts"]["probes"] if p["expect"] == "allow"]
    assert sorted(p["host"] for p in allowed) == ["claude", "codex", "cursor"]
    assert not any(p["denied"] for p in allowed)


def test_doctor_fails_when_nothing_is_installed(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "doctor", "--json")
    assert result.code == 1
    assert json.loads(result.out)["reasons"][0]["code"] == "DOCTOR_NOTHING_INSTALLED"


def test_doctor_catches_a_broken_interpreter_path(git_repo: Path, run_cli) -> None:
    apply(git_repo, ["claude"], install=True, python="/nonexistent/python3", local_python=True)
    body = json.loads(run_cli(git_repo, "doctor", "--json").out)
    assert body["verdict"] == "FAIL"
    assert {r["code"] for r in body["reasons"]} >= {"DOCTOR_CANARY_ALLOWED"}
    assert "not from PlanGate" in body["reasons"][0]["message"]
    assert any(s["reason"].startswith("defers") for s in body["facts"]["skipped"])


def test_doctor_catches_a_hook_that_exits_one(git_repo: Path, run_cli) -> None:
    settings = git_repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    command = f"{sys.executable} -c 'import sys; sys.exit(1)' # plangate-managed"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "*", "hooks": [{"type": "command", "command": command}]}
                    ]
                }
            }
        )
    )
    body = json.loads(run_cli(git_repo, "doctor", "--json").out)
    assert body["verdict"] == "FAIL"
    assert all(not p["denied"] for p in body["facts"]["probes"])


@pytest.mark.skipif(os.name != "posix", reason="shell hook commands")
def test_installed_command_turns_a_crash_into_exit_two(git_repo: Path) -> None:
    from plangate.hooks.install import hook_command

    command = hook_command("claude", "/nonexistent/python3")
    proc = subprocess.run(  # noqa: S602
        command,
        shell=True,
        cwd=git_repo,
        input=b"{}",
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 2


def test_pre_push_of_a_new_branch_compares_with_the_remote_history(
    git_repo: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(git_repo, "remote", "add", "origin", str(remote))
    assert git_as_person(git_repo, "push", "-q", "origin", "main").returncode == 0
    apply(git_repo, ["git"], install=True)
    git(git_repo, "checkout", "-q", "-b", "feature")
    make_task(git_repo, "TASK-0005", commit=False)
    git(git_repo, "add", "-A", "docs/working")
    assert git_as_person(git_repo, "commit", "-q", "-m", "plan only").returncode == 0
    # Only planning files since the remote's main: the new branch may be pushed.
    assert git_as_person(git_repo, "push", "-q", "origin", "feature").returncode == 0
    (git_repo / "code.py").write_text("x\n")
    git(git_repo, "add", "code.py")
    assert git_as_person(git_repo, "commit", "-q", "--no-verify", "-m", "code").returncode == 0
    git(git_repo, "checkout", "-q", "-b", "feature2")
    pushed = git_as_person(git_repo, "push", "-q", "origin", "feature2")
    assert pushed.returncode == 1
    assert b"HOOK_NO_ACTIVE_TASK" in pushed.stderr
    assert b"code.py" in pushed.stderr


def test_hooks_install_cli_creates_the_ledger(git_repo: Path, run_cli) -> None:
    from plangate.ledger import open_ledger

    result = run_cli(git_repo, "hooks", "install", "--claude", "--json")
    assert result.code == 0, result.err
    body = json.loads(result.out)
    assert body["changes"][0]["action"] == "written"
    with open_ledger(git_repo, {}, create=False) as ledger:
        entries = ledger.entries(kind="hooks_installed")
    assert [e.payload["hosts"] for e in entries] == [["claude"]]
    assert run_cli(git_repo, "hooks", "install").code == 2


@pytest.mark.parametrize(
    "commit_args",
    [
        ("-a", "-m", "all"),
        ("-m", "paths", "CLAUDE.md"),
        ("--only", "-m", "only", "CLAUDE.md"),
        ("-i", "-m", "include", "CLAUDE.md"),
    ],
)
def test_pre_commit_judges_the_index_git_commits(
    git_repo: Path, commit_args: tuple[str, ...]
) -> None:
    """'commit -a', 'commit <paths>' and '--only' build another index (GIT_INDEX_FILE)."""
    repo = approved_repo(git_repo)
    (repo / "CLAUDE.md").write_text("rules\n")
    git(repo, "add", "CLAUDE.md")
    git(repo, "commit", "-q", "-m", "tracked rules")
    apply(repo, ["git"], install=True)
    (repo / "CLAUDE.md").write_text("rules, relaxed\n")
    result = git_as_person(repo, "commit", "-q", *commit_args)
    assert result.returncode == 1, result.stderr
    assert b"CLAUDE.md" in result.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "tracked rules"


def _human_env() -> dict[str, str]:
    markers = ("CLAUDE", "CURSOR", "CODEX", "PLANGATE_TASK", "CI", "GITHUB_ACTIONS")
    return {k: v for k, v in os.environ.items() if not k.startswith(markers)}


def test_doctor_passes_with_an_active_task_and_its_allowed_canary_is_in_scope(
    git_repo: Path, run_cli
) -> None:
    from support.cli import run_cli_in

    repo = approved_repo(git_repo)
    apply(repo, ["claude", "codex", "cursor"], install=True)
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=_human_env()).code == 0
    body = json.loads(run_cli(repo, "doctor", "--json").out)
    assert body["verdict"] == "PASS", body["reasons"]
    assert body["facts"]["allowed_canary"] == "src/app.py"
    allowed = [p for p in body["facts"]["probes"] if p["expect"] == "allow"]
    assert sorted(p["host"] for p in allowed) == ["claude", "codex", "cursor"]
    assert not any(p["denied"] for p in allowed)


def test_doctor_without_an_active_task_allows_a_planning_file(git_repo: Path, run_cli) -> None:
    apply(git_repo, ["claude"], install=True)
    body = json.loads(run_cli(git_repo, "doctor", "--json").out)
    assert body["verdict"] == "PASS", body["reasons"]
    assert body["facts"]["allowed_canary"].startswith("docs/working/TASK-")
    assert body["facts"]["allowed_canary"].endswith("/plan.md")


def test_doctor_runs_no_allowed_canary_when_the_active_task_allows_no_write(
    git_repo: Path, run_cli
) -> None:
    from support.cli import run_cli_in

    repo = approved_repo(git_repo)
    apply(repo, ["claude"], install=True)
    assert run_cli_in(repo, "task", "start", "TASK-0001", env=_human_env()).code == 0
    (repo / "README.md").write_text("moved on\n")
    git(repo, "add", "README.md")
    git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "out of scope")
    body = json.loads(run_cli(repo, "doctor", "--json").out)
    assert body["facts"]["allowed_canary"] == ""
    assert not [p for p in body["facts"]["probes"] if p["expect"] == "allow"]
    warnings = [f for f in body["facts"]["findings"] if f["code"] == "DOCTOR_NO_ALLOWED_WRITE"]
    assert warnings and not warnings[0]["fails"]
    assert "HOOK_TASK_NOT_VERIFIED" in warnings[0]["message"]
    assert all(p["ok"] for p in body["facts"]["probes"])


def test_doctor_fails_when_an_installed_file_misses_an_event(git_repo: Path, run_cli) -> None:
    apply(git_repo, ["claude"], install=True)
    settings = git_repo / ".claude" / "settings.json"
    config = json.loads(settings.read_text())
    del config["hooks"]["PostToolUseFailure"]
    settings.write_text(json.dumps(config))
    body = json.loads(run_cli(git_repo, "doctor", "--json").out)
    assert body["verdict"] == "FAIL"
    missing = [r for r in body["reasons"] if r["code"] == "DOCTOR_HOOK_EVENT_MISSING"]
    assert missing and "PostToolUseFailure" in missing[0]["message"]
