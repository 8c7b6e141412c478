"""The plan-first journey as a user runs it: ``python -m plangate`` in a real repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.repo import commit_all, git


def _plangate(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGATE_")}
    return subprocess.run(
        [sys.executable, "-m", "plangate", *argv],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_init_review_issue_status_exec_edit_exec(git_repo: Path, tmp_path: Path) -> None:
    # 1. scaffold and fill in
    assert _plangate(git_repo, "init", "TASK-0100").returncode == 0
    task = git_repo / "docs" / "working" / "TASK-0100"
    plan = task / "plan.md"
    plan.write_text(plan.read_text().replace("One paragraph:", "Greet the user:"))
    # 2. reviews, bound to the plan as it is now
    assert _plangate(git_repo, "review", "mark", "TASK-0100", "--c1", "PASS").returncode == 0
    assert _plangate(git_repo, "review", "mark", "TASK-0100", "--c2", "approve").returncode == 0
    package = _plangate(git_repo, "package", "TASK-0100", "--json")
    assert package.returncode == 0, package.stdout
    assert json.loads(package.stdout)["verdict"] == "COMPLETE"
    # 3. commit and issue the record for that commit
    head = commit_all(git_repo, "plan TASK-0100")
    reviewers = tmp_path / "reviewers.json"
    reviewers.write_text(
        json.dumps(
            {
                "model_a": {"verdict": "approve", "evidence_ref": "review-self.md#PASS"},
                "model_b": {"verdict": "approve", "evidence_ref": "review-external.md#approve"},
            }
        )
    )
    issue = _plangate(
        git_repo,
        "c3",
        "issue",
        "TASK-0100",
        "--target-sha",
        head,
        "--reviewers",
        str(reviewers),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "e2e@v1",
    )
    assert issue.returncode == 0, issue.stdout + issue.stderr
    # 4. status shows it accepted
    status = _plangate(git_repo, "status")
    assert status.returncode == 0
    assert "TASK-0100" in status.stdout and "ACCEPTED" in status.stdout
    # 5. exec runs the command; its stdout is the command's own
    ok = _plangate(
        git_repo,
        "exec",
        "TASK-0100",
        "--",
        sys.executable,
        "-c",
        "import os; print('agent ran for', os.environ['PLANGATE_TASK'])",
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == "agent ran for TASK-0100\n"
    assert "verified against HEAD" in ok.stderr
    # 6. an edit to plan.md after approval makes exec refuse before the command starts
    with plan.open("a") as fh:
        fh.write("\nscope creep\n")
    marker = tmp_path / "should-not-exist"
    stale = _plangate(git_repo, "exec", "TASK-0100", "--", "touch", str(marker))
    assert stale.returncode == 1
    assert not marker.exists()
    assert "stale" in stale.stderr
    assert "Traceback" not in stale.stderr
    status = _plangate(git_repo, "status", "TASK-0100", "--json")
    assert json.loads(status.stdout)["tasks"][0]["verdict"] == "REJECTED"
    # 7. the ledger holds the whole story and verifies intact
    events = (task / "run.ndjson").read_text().splitlines()
    assert [json.loads(e)["event"] for e in events] == ["exec_started", "exec_ended"]
    ledger = _plangate(git_repo, "ledger", "verify")
    assert ledger.returncode == 0, ledger.stdout + ledger.stderr
    assert git(git_repo, "rev-parse", "HEAD") == head


def test_no_traceback_on_hostile_inputs(git_repo: Path, run_cli) -> None:
    # In-process (the same boundary as the console script) to keep the suite fast.
    task = git_repo / "docs" / "working" / "TASK-0001"
    task.mkdir(parents=True)
    (task / "approvals").mkdir()
    for content in (b"\xef\xbb\xbf{}", b"NaN", b"[]", b'{"a":1,"a":2}', b"\xff"):
        (task / "approvals" / "c3.json").write_bytes(content)
        # status is a report (0); the others refuse the empty package or the record (1)
        for argv, code in (
            (("status",), 0),
            (("package", "TASK-0001"), 1),
            (("exec", "TASK-0001", "--", "true"), 1),
            (("review", "mark", "TASK-0001", "--c1", "PASS"), 1),
        ):
            result = run_cli(git_repo, *argv)
            assert result.code == code, (argv, result.err)
            assert "Traceback" not in result.err
            assert "INTERNAL_ERROR" not in result.err
