"""``plangate status`` prints the same bytes whichever way a plan is tokenized.

A plain plan is tokenized without the Markdown parser
(:func:`plangate.plan.plain_markdown.plain_tokens`); the report over a repository
with tasks in every state (accepted at HEAD, accepted through an in-scope commit,
an artifact changed after approval, a tampered marker, no record, an empty
directory, a plan that needs the parser, a commit outside a task's scope) must be
byte-identical to the report with the parser reading every plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.plan import files_section
from plangate.plan.scope import _derive_scope
from support.plan_tasks import PLAN_MD, REVIEWERS, approve_task, task_dir, write_package
from support.repo import commit_all

EMPHASIS_PLAN = PLAN_MD.replace("- `src/greet.py`", "- `lib/helper.py` *(new)*\n- `src/greet.py`")
"""Not plain (emphasis): read by the parser; its scope is not the others'."""


def _issue(repo: Path, run_cli, task_id: str, head: str) -> None:
    """A record for the committed package of ``task_id``, bound to ``head``."""
    reviewers = repo.parent / f"reviewers-{task_id}.json"
    reviewers.write_text(json.dumps(REVIEWERS))
    result = run_cli(repo, "c3", "issue", task_id, "--target-sha", head, "--reviewers",
                     str(reviewers), "--decision", "AUTO_APPROVED", "--policy-ref", "test@v1",
                     "--issued-at", "2026-01-02T03:04:05Z", "--issued-by", "tests")
    assert result.code == 0, result.err + result.out


def _repository(repo: Path, run_cli) -> None:
    approve_task(repo, run_cli, "TASK-0001")  # later commits leave its scope
    approve_task(repo, run_cli, "TASK-0006", plan=EMPHASIS_PLAN.replace("src/greet.py", "x.py"))
    approve_task(repo, run_cli, "TASK-0007", plan=EMPHASIS_PLAN)
    (repo / "src").mkdir()
    (repo / "src" / "greet.py").write_text("print('hi')\n")
    head = commit_all(repo, "in the scope of TASK-0007, outside TASK-0006's")
    for task_id in ("TASK-0002", "TASK-0003", "TASK-0004", "TASK-0008"):
        write_package(repo, task_id)  # not committed: HEAD stays in TASK-0007's scope
    for task_id in ("TASK-0002", "TASK-0003", "TASK-0008"):  # TASK-0004: no record
        _issue(repo, run_cli, task_id, head)
    with (task_dir(repo, "TASK-0002") / "todo.md").open("a") as fh:
        fh.write("changed after approval\n")
    review = task_dir(repo, "TASK-0003") / "review-self.md"
    review.write_text(review.read_text().replace("plan=sha256:", "plan=sha256:0"))
    task_dir(repo, "TASK-0005").mkdir(parents=True)  # nothing in it


def _outputs(repo: Path, run_cli) -> tuple[str, str]:
    text = run_cli(repo, "status")
    as_json = run_cli(repo, "status", "--json")
    assert text.code == as_json.code == 0, text.err + as_json.err
    return text.out, as_json.out


def test_status_is_the_same_with_the_parser_for_every_plan(
    git_repo: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _repository(git_repo, run_cli)
    _derive_scope.cache_clear()  # the scopes the setup derived are remembered per bytes
    fast = _outputs(git_repo, run_cli)
    rows = {row["task"]: row for row in json.loads(fast[1])["tasks"]}
    # the repository holds the states it claims to hold
    assert {task: (row["verdict"], row["first_reason"]) for task, row in rows.items()} == {
        "TASK-0001": ("REJECTED", "HOOK_COMMITTED_OUTSIDE_SCOPE"),
        "TASK-0002": ("REJECTED", "C3_ARTIFACT_STALE"),
        "TASK-0003": ("REJECTED", "EVIDENCE_C1_MARKER_MALFORMED"),
        "TASK-0004": ("REJECTED", "C3_RECORD_MISSING"),
        "TASK-0005": ("REJECTED", "C3_RECORD_MISSING"),
        "TASK-0006": ("REJECTED", "HOOK_COMMITTED_OUTSIDE_SCOPE"),
        "TASK-0007": ("ACCEPTED", ""),
        "TASK-0008": ("ACCEPTED", ""),
    }
    monkeypatch.setattr(files_section, "plain_tokens", lambda _text: None)
    _derive_scope.cache_clear()
    assert _outputs(git_repo, run_cli) == fast
