"""``plangate review mark``: exactly one marker line bound to the current plan.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plangate.canonical import sha256_digest
from support.plan_tasks import PLAN_MD, write_package

PLAN_HASH = sha256_digest(PLAN_MD.encode())


def _marker_lines(path: Path, prefix: str) -> list[str]:
    return [ln for ln in path.read_text().split("\n") if ln.upper().startswith(prefix)]


def test_mark_writes_one_marker_bound_to_plan(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 0, result.err
    lines = _marker_lines(task / "review-self.md", "C1-VERDICT")
    assert lines == [f"C1-VERDICT: PASS plan={PLAN_HASH}"]
    assert (task / "review-self.md").read_text().startswith("# review-self.md of TASK-0001")
    assert run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "approve").code == 0
    assert _marker_lines(task / "review-external.md", "C2-VERDICT") == [
        f"C2-VERDICT: approve plan={PLAN_HASH}"
    ]
    assert run_cli(git_repo, "package", "TASK-0001").code == 0


def test_mark_replaces_every_earlier_marker_line(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    (task / "review-self.md").write_text(
        "# review\n"
        "C1-VERDICT: FAIL plan=sha256:" + "0" * 64 + "\n"
        "prose that stays\n"
        "C1-VERDICT: PASS plan=short\r\n"
        "  c1-verdict: PASS plan=x\n"
    )
    assert run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS").code == 0
    text = (task / "review-self.md").read_text()
    assert "prose that stays" in text
    assert [ln for ln in text.split("\n") if "VERDICT" in ln.upper()] == [
        f"C1-VERDICT: PASS plan={PLAN_HASH}"
    ]
    _, doc = 0, json.loads(run_cli(git_repo, "package", "TASK-0001", "--json").out)
    assert doc["markers"]["c1"]["state"] == "valid"


def test_mark_is_idempotent(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    first = (task / "review-self.md").read_bytes()
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert (task / "review-self.md").read_bytes() == first


def test_remark_after_plan_edit_clears_stale(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo)
    (task / "plan.md").write_text(PLAN_MD + "\nchanged\n")
    assert run_cli(git_repo, "package", "TASK-0001").code == 1
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "approve")
    doc = json.loads(run_cli(git_repo, "package", "TASK-0001", "--json").out)
    assert doc["verdict"] == "COMPLETE"
    assert doc["plan_hash"] == sha256_digest((PLAN_MD + "\nchanged\n").encode())


def test_fail_verdict_is_recorded_but_not_accepted(git_repo: Path, run_cli) -> None:
    write_package(git_repo, markers=False)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "FAIL")
    assert result.code == 0
    assert "only PASS" in result.out
    doc = json.loads(run_cli(git_repo, "package", "TASK-0001", "--json").out)
    assert doc["markers"]["c1"]["state"] == "not_accepted"


def test_missing_evidence_file_is_created(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    (task / "review-external.md").unlink()
    assert run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "reject").code == 0
    assert (task / "review-external.md").read_text() == f"C2-VERDICT: reject plan={PLAN_HASH}\n"


@pytest.mark.parametrize("damage", ["missing", "empty", "symlink", "directory"])
def test_refuses_when_plan_is_unusable(git_repo: Path, run_cli, damage: str) -> None:
    task = write_package(git_repo, markers=False)
    before = (task / "review-self.md").read_bytes()
    plan = task / "plan.md"
    plan.unlink()
    if damage == "empty":
        plan.write_bytes(b"")
    elif damage == "symlink":
        plan.symlink_to("todo.md")
    elif damage == "directory":
        plan.mkdir()
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 1
    assert "REVIEW_PLAN_UNREADABLE" in result.err
    assert (task / "review-self.md").read_bytes() == before


def test_refuses_a_symlinked_evidence_file(git_repo: Path, tmp_path: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n")
    (task / "review-self.md").unlink()
    (task / "review-self.md").symlink_to(outside)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 1
    assert "REVIEW_EVIDENCE_INVALID" in result.err
    assert outside.read_text() == "keep\n"


def test_refuses_non_utf8_evidence(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    (task / "review-self.md").write_bytes(b"# review \xff\xfe\n")
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c1", "PASS")
    assert result.code == 1
    assert "REVIEW_EVIDENCE_NOT_UTF8" in result.err
    assert (task / "review-self.md").read_bytes() == b"# review \xff\xfe\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("--c1", "approve"),
        ("--c2", "PASS"),
        ("--c1", "pass"),
        ("--c1", "PASS", "--c2", "approve"),
        (),
    ],
)
def test_usage_errors(git_repo: Path, run_cli, argv: tuple[str, ...]) -> None:
    write_package(git_repo, markers=False)
    assert run_cli(git_repo, "review", "mark", "TASK-0001", *argv).code == 2


def test_review_json(git_repo: Path, run_cli) -> None:
    task = write_package(git_repo, markers=False)
    result = run_cli(git_repo, "review", "mark", "TASK-0001", "--c2", "approve", "--json")
    doc = json.loads(result.out)
    assert doc["marker"] == f"C2-VERDICT: approve plan={PLAN_HASH}"
    assert doc["evidence_sha256"] == sha256_digest((task / "review-external.md").read_bytes())
