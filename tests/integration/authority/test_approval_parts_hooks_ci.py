"""Signing is the easy path: a task's signature and review-statement files are parts of its
approval for the git hooks and ``ci check`` (real git, real ssh-keygen keys, the real hooks
run by git), while a forged, foreign or misplaced one is still refused with its reason."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from plangate.git import scrubbed_env
from plangate.hooks.install import apply
from support.cli import run_cli_in
from support.keys import Key, sign_bytes
from support.repo import git
from support.signed import adopt_surfaces, ci_check, commit_trust_root, issue, make_team
from support.taskkit import make_task, sha, task_dir

TASK = "TASK-0001"


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git as a person runs it: the hooks run, nothing names a task."""
    env = scrubbed_env() | {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    env.pop("PLANGATE_TASK", None)
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=False)


def _commit(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    assert _git(repo, "add", "-A").returncode == 0
    return _git(repo, "commit", "-q", "-m", message)


def _team_repo(git_repo: Path, tmp_path: Path, *, require: bool) -> tuple[Path, dict[str, Key]]:
    """A repository on ``main`` with adopted surfaces, a trust root and the git hooks on, and
    a bare remote ``origin``; work happens on branch ``work``."""
    team = make_team(tmp_path / "keys")
    (git_repo / "src").mkdir()
    (git_repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    adopt_surfaces(git_repo)
    commit_trust_root(git_repo, team, require=require)
    apply(git_repo, ["git"], install=True)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(git_repo, "remote", "add", "origin", str(remote))
    assert _git(git_repo, "push", "-q", "--no-verify", "origin", "main").returncode == 0
    git(git_repo, "switch", "-q", "-c", "work")
    return git_repo, team


@pytest.fixture
def signed(git_repo: Path, tmp_path: Path) -> tuple[Path, dict[str, Key]]:
    return _team_repo(git_repo, tmp_path, require=True)


def _plan_and_review(repo: Path, team: dict[str, Key], task: str = TASK) -> None:
    make_task(repo, task, commit=False)
    for flag, verdict, who in (("--c1", "PASS", "alice"), ("--c2", "approve", "bob")):
        marked = run_cli_in(repo, "review", "mark", task, flag, verdict,
                            "--sign", str(team[who].path))
        assert marked.code == 0, marked.err


def _refs(repo: Path, task: str = TASK) -> tuple[str, str]:
    """The review files themselves as the reviewers' evidence (committed with the plan)."""
    out = []
    for name in ("review-self.md", "review-external.md"):
        rel = f"docs/working/{task}/{name}"
        out.append(f"{rel}#{sha((repo / rel).read_bytes())}")
    return out[0], out[1]


def _statement_paths(task: str = TASK) -> list[str]:
    return [f"docs/working/{task}/approvals/review-{r}.json{s}"
            for r in ("c1", "c2") for s in ("", ".sig")]


def test_the_documented_signed_flow_needs_no_no_verify(
    signed: tuple[Path, dict[str, Key]], tmp_path: Path
) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    plan = _commit(repo, "Plan TASK-0001")  # the review statements and their signatures
    assert plan.returncode == 0, plan.stderr
    issue(repo, tmp_path, TASK, _refs(repo), team["carol"])
    approval = _commit(repo, "Approve TASK-0001")  # the record and its signature
    assert approval.returncode == 0, approval.stderr
    pushed = _git(repo, "push", "-q", "-u", "origin", "work")
    assert pushed.returncode == 0, pushed.stderr
    code, doc = ci_check(repo)
    assert (code, doc["verdict"]) == (0, "ACCEPTED"), doc["reasons"]


def test_a_statement_signed_by_an_unlisted_key_is_refused(
    signed: tuple[Path, dict[str, Key]],
) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    statement = task_dir(repo) / "approvals" / "review-c1.json"
    forged = sign_bytes(team["mallory"], "plangate-review", statement.read_bytes())
    (task_dir(repo) / "approvals" / "review-c1.json.sig").write_bytes(forged)
    refused = _commit(repo, "Plan TASK-0001")
    assert refused.returncode == 1
    assert "HOOK_APPROVAL_PART_UNVERIFIED" in refused.stderr
    assert "REVIEW_SIGNER_UNKNOWN" in refused.stderr, refused.stderr
    assert "docs/working/TASK-0001/approvals/review-c1.json.sig" in refused.stderr


def test_a_signature_file_of_garbage_is_refused(signed: tuple[Path, dict[str, Key]]) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    (task_dir(repo) / "approvals" / "review-c2.json.sig").write_bytes(b"not a signature\n")
    refused = _commit(repo, "Plan TASK-0001")
    assert refused.returncode == 1 and "HOOK_APPROVAL_PART_UNVERIFIED" in refused.stderr
    assert "review-c2.json.sig" in refused.stderr


def test_another_tasks_statements_are_refused(signed: tuple[Path, dict[str, Key]]) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    assert _commit(repo, "Plan TASK-0001").returncode == 0
    make_task(repo, "TASK-0002", commit=False)
    approvals = task_dir(repo, "TASK-0002") / "approvals"
    approvals.mkdir()
    for name in ("review-c1.json", "review-c1.json.sig"):
        shutil.copy(task_dir(repo) / "approvals" / name, approvals / name)
    refused = _commit(repo, "Plan TASK-0002")
    assert refused.returncode == 1
    assert "HOOK_APPROVAL_PART_UNVERIFIED" in refused.stderr
    assert "it is a statement of TASK-0001, not of TASK-0002" in refused.stderr


def test_a_statement_of_an_earlier_plan_is_refused(signed: tuple[Path, dict[str, Key]]) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    plan = task_dir(repo) / "plan.md"
    plan.write_text(plan.read_text().replace("- `src/app.py`", "- `src/**`"))
    refused = _commit(repo, "Plan TASK-0001")
    assert refused.returncode == 1
    assert "binds another plan" in refused.stderr


def test_approval_parts_mixed_with_an_out_of_scope_change_are_refused_for_that_change(
    signed: tuple[Path, dict[str, Key]], tmp_path: Path
) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    assert _commit(repo, "Plan TASK-0001").returncode == 0
    issue(repo, tmp_path, TASK, _refs(repo), team["carol"])
    (repo / "README.md").write_text("# changed with the approval\n")
    refused = _commit(repo, "Approve TASK-0001 and more")
    assert refused.returncode == 1
    lines = [line for line in refused.stderr.splitlines() if line.startswith("- ")]
    assert lines and all("README.md" in line for line in lines), refused.stderr
    assert "approvals/c3.json" not in refused.stderr


def test_a_forged_record_signature_is_refused_at_the_approval_commit(
    signed: tuple[Path, dict[str, Key]], tmp_path: Path
) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    assert _commit(repo, "Plan TASK-0001").returncode == 0
    issue(repo, tmp_path, TASK, _refs(repo), team["carol"])
    record = task_dir(repo) / "approvals" / "c3.json"
    # alice reviewed: her signature over the record is no approver's.
    (task_dir(repo) / "approvals" / "c3.json.sig").write_bytes(
        sign_bytes(team["alice"], "plangate-c3", record.read_bytes()))
    refused = _commit(repo, "Approve TASK-0001")
    assert refused.returncode == 1
    assert "HOOK_APPROVAL_PART_UNVERIFIED" in refused.stderr
    assert "does not verify for HEAD" in refused.stderr


def test_a_forged_statement_committed_past_the_hooks_is_stopped_at_the_push(
    signed: tuple[Path, dict[str, Key]],
) -> None:
    repo, team = signed
    _plan_and_review(repo, team)
    statement = task_dir(repo) / "approvals" / "review-c1.json"
    (task_dir(repo) / "approvals" / "review-c1.json.sig").write_bytes(
        sign_bytes(team["mallory"], "plangate-review", statement.read_bytes()))
    git(repo, "add", "-A")
    assert _git(repo, "commit", "-q", "--no-verify", "-m", "forged").returncode == 0
    pushed = _git(repo, "push", "-q", "origin", "work")
    assert pushed.returncode != 0
    assert "HOOK_APPROVAL_PART_UNVERIFIED" in pushed.stderr


def test_signatures_not_required_still_verify_each_one_under_the_trust_root(
    git_repo: Path, tmp_path: Path
) -> None:
    """With ``require_signatures = false`` the acceptor checks no signature: the hooks and
    ``ci check`` check each signature file on its own under the trust root."""
    repo, team = _team_repo(git_repo, tmp_path, require=False)
    _plan_and_review(repo, team)
    assert _commit(repo, "Plan TASK-0001").returncode == 0
    issue(repo, tmp_path, TASK, _refs(repo), team["carol"])
    approval = _commit(repo, "Approve TASK-0001")
    assert approval.returncode == 0, approval.stderr
    code, doc = ci_check(repo)
    assert (code, doc["verdict"]) == (0, "ACCEPTED"), doc["reasons"]
    # A forged one (mallory is listed nowhere) is refused by both.
    sig = task_dir(repo) / "approvals" / "c3.json.sig"
    sig.write_bytes(sign_bytes(team["mallory"], "plangate-c3",
                               (task_dir(repo) / "approvals" / "c3.json").read_bytes()))
    refused = _commit(repo, "replace the record's signature")
    assert refused.returncode == 1 and "HOOK_APPROVAL_PART_UNVERIFIED" in refused.stderr
    git(repo, "add", "-A")
    assert _git(repo, "commit", "-q", "--no-verify", "-m", "forged").returncode == 0
    code, doc = ci_check(repo)
    assert code == 1 and doc["verdict"] == "REJECTED"
    found = {r["code"]: r for r in doc["reasons"]}
    assert "CI_APPROVAL_PART_UNVERIFIED" in found
    assert "C3_SIGNER_UNKNOWN" in found["CI_APPROVAL_PART_UNVERIFIED"]["message"]


def test_a_staged_statement_unlike_the_verified_working_tree_is_refused(
    signed: tuple[Path, dict[str, Key]], tmp_path: Path
) -> None:
    """The hook verifies the working tree's files; a commit records the index's."""
    repo, team = signed
    _plan_and_review(repo, team)
    sig = task_dir(repo) / "approvals" / "review-c1.json.sig"
    genuine = sig.read_bytes()
    statement = (task_dir(repo) / "approvals" / "review-c1.json").read_bytes()
    sig.write_bytes(sign_bytes(team["mallory"], "plangate-review", statement))
    assert _git(repo, "add", "-A").returncode == 0
    sig.write_bytes(genuine)  # the working tree verifies; the index holds the forgery
    refused = _git(repo, "commit", "-q", "-m", "Plan TASK-0001")
    assert refused.returncode == 1
    assert "staged bytes differ from the working tree" in refused.stderr
    assert _commit(repo, "Plan TASK-0001").returncode == 0  # staged as verified: fine
