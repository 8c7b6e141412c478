"""``delivery assess`` reads the pull request from its CI event and git, in real repositories.

No hand-written snapshot: the event names the pull request (number, title, body, base
and head commits, a review), git measures what it changes since the merge base and
whether it merges cleanly. A task's own Plan Package in the pull request is the task,
never a plan deviation (the rule ``ci check`` applies). Bad inputs are reason codes and
leave the delivery record untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.cli import CliResult, run_cli_in
from support.delivery import define_surfaces
from support.repo import commit_all, git
from support.taskkit import make_task, task_dir

TASK = "TASK-0001"
NOW = "2026-12-05T10:00:00Z"


def _reviewers(directory: Path) -> Path:
    path = directory / "reviewers.json"
    path.write_text(json.dumps({
        "model_a": {"verdict": "approve", "evidence_ref": "reviews/model-a.md"},
        "model_b": {"verdict": "approve", "evidence_ref": "reviews/model-b.md"},
    }))
    return path


@pytest.fixture
def pr_repo(git_repo: Path, tmp_path: Path) -> Path:
    """main with its own protected surfaces; branch ``feature`` plans, approves and codes."""
    define_surfaces(git_repo)
    git(git_repo, "checkout", "-q", "-b", "feature")
    make_task(git_repo, TASK, commit=False)
    (git_repo / "src").mkdir(exist_ok=True)
    (git_repo / "src/app.py").write_text("def greet():\n    return 'hi'\n")
    commit_all(git_repo, "plan and code")
    result = run_cli_in(git_repo, "c3", "issue", TASK, "--target-sha",
                        git(git_repo, "rev-parse", "HEAD"), "--reviewers",
                        str(_reviewers(tmp_path)), "--decision", "AUTO_APPROVED",
                        "--policy-ref", "plangate-arbiter@v1")
    assert result.code == 0, result.out + result.err
    commit_all(git_repo, "approve")
    return git_repo


def pull_request_event(repo: Path, *, review: str | None = None, feature: str = "feature",
                       **pull: Any) -> dict[str, Any]:
    """The event GitHub writes for the pull request feature -> main (a review when asked)."""
    head = git(repo, "rev-parse", feature)
    body: dict[str, Any] = {
        "number": 7,
        "title": "TASK-0001: greet",
        "body": "Implements TASK-0001.",
        "base": {"ref": "main", "sha": git(repo, "rev-parse", "main")},
        "head": {"ref": "feature", "sha": head},
        "mergeable": None,
    }
    body.update(pull)
    out: dict[str, Any] = {"action": "opened", "number": body["number"], "pull_request": body}
    if review is not None:
        out["review"] = {"state": review, "commit_id": head}
    return out


def assess(repo: Path, *args: str, event: dict[str, Any] | bytes | None = None,
           name: str | None = None, task: str | None = TASK) -> CliResult:
    """``delivery assess TASK ... --json`` with the event where GitHub puts it."""
    env = {"HOME": str(repo.parent)}
    if event is not None:
        path = repo.parent / "event.json"
        path.write_bytes(event if isinstance(event, bytes) else json.dumps(event).encode())
        env["GITHUB_EVENT_PATH"] = str(path)
    if name is not None:
        env["GITHUB_EVENT_NAME"] = name
    named = (task,) if task is not None else ()
    return run_cli_in(repo, "delivery", "assess", *named, *args, "--now", NOW, "--json", env=env)


def record_rows(repo: Path) -> list[str]:
    path = task_dir(repo) / "delivery" / "record.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def test_a_reviewed_pull_request_with_its_plan_package_is_merge_ready(pr_repo: Path) -> None:
    result = assess(pr_repo, "--check", "tests=success", "--dod-evaluated",
                    event=pull_request_event(pr_repo, review="APPROVED"),
                    name="pull_request_review")
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"]) == (0, "MERGE_READY"), doc["reasons"]
    facts = doc["facts"]
    assert facts["pull_request"]["number"] == 7
    assert facts["pull_request"]["title"] == "TASK-0001: greet"
    assert facts["pull_request"]["head_sha"] == git(pr_repo, "rev-parse", "feature")
    assert facts["protected_surfaces"]["hits"] == []  # the approved package is no surface change
    assert len(record_rows(pr_repo)) == 2  # the state and the merge_ready record


def test_the_tasks_own_plan_package_is_the_task_not_plan_deviation(pr_repo: Path) -> None:
    result = assess(pr_repo, "--base", "main", "--head", "feature", "--pr", "7")
    doc = json.loads(result.out)
    assert doc["verdict"] == "WAITING_FOR_CHECKS", doc["reasons"]  # no check reported yet
    assert doc["facts"]["decided_by"] == "waiting_checks"


def test_a_snapshot_listing_the_plan_package_is_not_plan_deviation(pr_repo: Path) -> None:
    head = git(pr_repo, "rev-parse", "feature")
    changed = git(pr_repo, "diff", "--name-only", "main...feature").splitlines()
    assert f"docs/working/{TASK}/plan.md" in changed
    snapshot = {
        "task_id": TASK, "pr_number": 7, "head_sha": head, "mergeable": "MERGEABLE",
        "checks": [{"name": "ci", "sha": head, "conclusion": "success"}],
        "review": {"state": "approved", "sha": head}, "findings": [],
        "changed_files": changed, "escalation_flags": [], "dod_evaluated": True,
    }
    path = pr_repo.parent / "snap.json"
    path.write_text(json.dumps(snapshot))
    result = run_cli_in(pr_repo, "delivery", "assess", TASK, "--snapshot", str(path),
                        "--now", NOW, "--json")
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"]) == (0, "MERGE_READY"), doc["reasons"]


def test_a_change_outside_the_scope_is_still_plan_deviation(pr_repo: Path) -> None:
    git(pr_repo, "checkout", "-q", "feature")
    (pr_repo / "lib").mkdir()
    (pr_repo / "lib/extra.py").write_text("x = 1\n")
    (task_dir(pr_repo, "TASK-0002")).mkdir(parents=True)
    (task_dir(pr_repo, "TASK-0002") / "plan.md").write_text("# another task\n")
    commit_all(pr_repo, "out of scope")
    result = assess(pr_repo, event=pull_request_event(pr_repo), name="pull_request")
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"]) == (1, "EXEC_RETURN")
    deviation = next(r for r in doc["reasons"] if r["code"] == "DELIVERY_PLAN_DEVIATION")
    # Another task's directory is not this task's: a deviation like any other path.
    assert deviation["evidence"] == ["docs/working/TASK-0002/plan.md", "lib/extra.py"]


def test_a_pull_request_event_without_a_review_waits_for_review(pr_repo: Path) -> None:
    result = assess(pr_repo, "--check", "tests=success", event=pull_request_event(pr_repo),
                    name="pull_request")
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"]) == (4, "WAITING_FOR_REVIEW")


def test_a_conflict_is_measured_with_git_when_the_event_has_no_mergeable_flag(
    pr_repo: Path,
) -> None:
    # main changes the same file, in a worktree of its own (the head stays checked out).
    other = pr_repo.parent / "main-worktree"
    git(pr_repo, "worktree", "add", "-q", str(other), "main")
    (other / "src").mkdir(exist_ok=True)
    (other / "src/app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(other, "main changes the same file")
    git(pr_repo, "worktree", "remove", str(other))
    result = assess(pr_repo, "--check", "tests=success",
                    event=pull_request_event(pr_repo, review="approved"))
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"]) == (4, "CONFLICT"), doc["reasons"]


def _refused(result: CliResult, code: str, exit_code: int) -> None:
    assert result.code == exit_code, (result.out, result.err)
    assert code in result.out + result.err


def test_no_pull_request_at_all_is_refused(pr_repo: Path) -> None:
    _refused(assess(pr_repo), "DELIVERY_PR_UNSPECIFIED", 2)
    _refused(assess(pr_repo, "--base", "main", "--head", "feature"), "DELIVERY_PR_UNSPECIFIED", 2)
    assert record_rows(pr_repo) == []


def test_a_snapshot_mixed_with_an_event_is_refused(pr_repo: Path) -> None:
    path = pr_repo.parent / "snap.json"
    path.write_text("{}")
    _refused(assess(pr_repo, "--snapshot", str(path), "--event", str(path)),
             "DELIVERY_PR_UNSPECIFIED", 2)


def test_a_missing_event_file_is_unreadable(pr_repo: Path) -> None:
    result = run_cli_in(pr_repo, "delivery", "assess", TASK, "--now", NOW, "--json",
                        env={"HOME": str(pr_repo.parent),
                             "GITHUB_EVENT_PATH": str(pr_repo.parent / "gone.json")})
    _refused(result, "DELIVERY_EVENT_UNREADABLE", 2)


@pytest.mark.parametrize("raw", [b"", b"{\"pull_request\": ", b"[1, 2]"])
def test_a_malformed_event_is_invalid(pr_repo: Path, raw: bytes) -> None:
    _refused(assess(pr_repo, event=raw), "DELIVERY_EVENT_INVALID", 2)
    assert record_rows(pr_repo) == []


def test_an_event_of_the_wrong_type_is_refused(pr_repo: Path) -> None:
    push = {"ref": "refs/heads/feature", "after": git(pr_repo, "rev-parse", "feature")}
    _refused(assess(pr_repo, event=push, name="push"), "DELIVERY_EVENT_WRONG_TYPE", 2)
    _refused(assess(pr_repo, event=push), "DELIVERY_EVENT_WRONG_TYPE", 2)
    _refused(assess(pr_repo, event=pull_request_event(pr_repo), name="push"),
             "DELIVERY_EVENT_WRONG_TYPE", 2)


def test_commits_the_repository_does_not_hold_are_refused(pr_repo: Path) -> None:
    missing = "c" * 40
    event = pull_request_event(pr_repo, head={"ref": "feature", "sha": missing})
    _refused(assess(pr_repo, event=event), "DELIVERY_PR_COMMIT_UNKNOWN", 1)
    event = pull_request_event(pr_repo, base={"ref": "main", "sha": missing})
    _refused(assess(pr_repo, event=event), "DELIVERY_PR_COMMIT_UNKNOWN", 1)
    _refused(assess(pr_repo, "--base", "main", "--head", "no-such-branch", "--pr", "7"),
             "DELIVERY_PR_COMMIT_UNKNOWN", 1)
    assert record_rows(pr_repo) == []


def test_a_bad_check_is_refused(pr_repo: Path) -> None:
    _refused(assess(pr_repo, "--check", "tests", event=pull_request_event(pr_repo)),
             "DELIVERY_CHECK_INVALID", 2)


def test_a_working_tree_that_is_not_the_head_is_refused(pr_repo: Path) -> None:
    git(pr_repo, "checkout", "-q", "--detach", "feature~1")
    _refused(assess(pr_repo, event=pull_request_event(pr_repo)),
             "DELIVERY_HEAD_NOT_CHECKED_OUT", 1)
    git(pr_repo, "checkout", "-q", "feature")
    (task_dir(pr_repo) / "todo.md").write_text("- [ ] edited, not committed\n")
    _refused(assess(pr_repo, event=pull_request_event(pr_repo)),
             "DELIVERY_HEAD_NOT_CHECKED_OUT", 1)
    assert record_rows(pr_repo) == []


def test_without_a_task_id_the_task_is_the_one_the_pull_request_changes(pr_repo: Path) -> None:
    result = assess(pr_repo, "--check", "tests=success", "--dod-evaluated", task=None,
                    event=pull_request_event(pr_repo, review="approved"))
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"]) == (0, "MERGE_READY"), doc["reasons"]
    assert doc["facts"]["task_id"] == TASK
    human = run_cli_in(pr_repo, "delivery", "assess", "--base", "main", "--head", "feature",
                       "--pr", "7", "--now", NOW)
    assert human.out.startswith(f"{TASK} delivery: "), human.out


def test_without_a_task_id_a_pull_request_without_a_task_is_refused(git_repo: Path) -> None:
    define_surfaces(git_repo)
    git(git_repo, "checkout", "-q", "-b", "readme")
    (git_repo / "README.md").write_text("# fixed typo\n")
    commit_all(git_repo, "readme")
    head = git(git_repo, "rev-parse", "HEAD")
    event = pull_request_event(git_repo, feature=head, head={"ref": "readme", "sha": head})
    _refused(assess(git_repo, task=None, event=event), "DELIVERY_PR_NO_TASK", 1)


def test_without_a_task_id_several_tasks_are_ambiguous(pr_repo: Path) -> None:
    make_task(pr_repo, "TASK-0002")  # committed on feature: the pull request changes both
    _refused(assess(pr_repo, task=None, event=pull_request_event(pr_repo)),
             "DELIVERY_PR_TASK_AMBIGUOUS", 2)
    assert record_rows(pr_repo) == []


def test_a_snapshot_needs_the_task_id(pr_repo: Path) -> None:
    path = pr_repo.parent / "snap.json"
    path.write_text("{}")
    _refused(assess(pr_repo, "--snapshot", str(path), task=None), "DELIVERY_TASK_UNSPECIFIED", 2)


def test_a_configured_merge_driver_is_never_run_to_measure_mergeability(
    pr_repo: Path,
) -> None:
    marker = pr_repo.parent / "driver-ran"
    git(pr_repo, "config", "merge.evil.driver", f"touch {marker}; false")
    # main selects the driver and changes the file the pull request changes: a merge runs it.
    other = pr_repo.parent / "main-worktree"
    git(pr_repo, "worktree", "add", "-q", str(other), "main")
    (other / ".gitattributes").write_text("* merge=evil\n")
    (other / "src").mkdir(exist_ok=True)
    (other / "src/app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(other, "attributes pick the driver")
    git(pr_repo, "worktree", "remove", str(other))
    result = assess(pr_repo, "--check", "tests=success",
                    event=pull_request_event(pr_repo, review="approved"))
    doc = json.loads(result.out)
    assert not marker.exists()
    # Unknown is never mergeable: the pull request waits in CONFLICT.
    assert (doc["verdict"], doc["reasons"][0]["code"]) == ("CONFLICT", "DELIVERY_CONFLICT")
    assert "UNKNOWN" in doc["reasons"][0]["message"]
