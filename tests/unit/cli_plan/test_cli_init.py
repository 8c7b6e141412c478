"""``plangate init``: useful templates, never overwrites."""

from __future__ import annotations

import json
from pathlib import Path

from plangate.plan.loopspec import extract_allowed_paths
from plangate.snapshot import ARTIFACTS
from support.plan_tasks import task_dir


def test_init_scaffolds_six_templates(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "init", "TASK-0042")
    assert result.code == 0, result.err
    task = task_dir(git_repo, "TASK-0042")
    assert sorted(p.name for p in task.iterdir()) == sorted(ARTIFACTS)
    for name in ARTIFACTS:
        text = (task / name).read_text()
        assert text.strip(), name
        assert "TASK-0042" in text
        assert "{task_id}" not in text
        assert f"docs/working/TASK-0042/{name}" in result.out
    plan = (task / "plan.md").read_text()
    for heading in ("## Goal", "## Files / Components to Touch", "## Testing Strategy"):
        assert f"\n{heading}\n" in plan
    assert "Verification Automation: `" in plan
    assert extract_allowed_paths(plan), "the example path must be extractable"


def test_templates_hold_no_valid_marker(git_repo: Path, run_cli) -> None:
    run_cli(git_repo, "init", "TASK-0001")
    out = run_cli(git_repo, "package", "TASK-0001", "--json")
    assert out.code == 1
    doc = json.loads(out.out)
    assert doc["complete"] is True
    assert doc["markers"]["c1"]["state"] == "missing"
    assert doc["markers"]["c2"]["state"] == "missing"
    for name in ("review-self.md", "review-external.md"):
        text = (task_dir(git_repo) / name).read_text()
        assert "plangate review mark" in text  # it explains how to write the marker


def test_init_refuses_an_existing_task(git_repo: Path, run_cli) -> None:
    assert run_cli(git_repo, "init", "TASK-0001").code == 0
    plan = task_dir(git_repo) / "plan.md"
    plan.write_text("my edited plan\n")
    again = run_cli(git_repo, "init", "TASK-0001")
    assert again.code == 1
    assert "TASK_EXISTS" in again.err
    assert plan.read_text() == "my edited plan\n"


def test_init_refuses_a_directory_with_any_file(git_repo: Path, run_cli) -> None:
    task = task_dir(git_repo)
    task.mkdir(parents=True)
    (task / "notes.txt").write_text("mine")
    result = run_cli(git_repo, "init", "TASK-0001")
    assert result.code == 1
    assert "TASK_EXISTS" in result.err
    assert sorted(p.name for p in task.iterdir()) == ["notes.txt"]


def test_init_fills_an_empty_directory(git_repo: Path, run_cli) -> None:
    task_dir(git_repo).mkdir(parents=True)
    assert run_cli(git_repo, "init", "TASK-0001").code == 0
    assert len(list(task_dir(git_repo).iterdir())) == 6


def test_init_refuses_a_symlinked_task_dir(git_repo: Path, tmp_path: Path, run_cli) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    task = task_dir(git_repo)
    task.parent.mkdir(parents=True)
    task.symlink_to(elsewhere)
    result = run_cli(git_repo, "init", "TASK-0001")
    assert result.code == 1
    assert "TASK_EXISTS" in result.err
    assert list(elsewhere.iterdir()) == []


def test_init_bad_task_id_is_usage(git_repo: Path, run_cli) -> None:
    for bad in ("task-0001", "TASK-1", "TASK-00011", "../TASK-0001"):
        result = run_cli(git_repo, "init", bad)
        assert result.code == 2, bad
        assert "TASK_ID_INVALID" in result.err
    assert not (git_repo / "docs").exists()


def test_init_json(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "init", "TASK-0007", "--json")
    assert result.code == 0
    doc = json.loads(result.out)
    assert doc["verdict"] == "CREATED"
    assert doc["reasons"] == []
    assert doc["created"] == [f"docs/working/TASK-0007/{n}" for n in ARTIFACTS]


def test_init_from_a_subdirectory_uses_the_repo_root(git_repo: Path, run_cli) -> None:
    sub = git_repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert run_cli(sub, "init", "TASK-0001").code == 0
    assert (git_repo / "docs" / "working" / "TASK-0001" / "plan.md").is_file()
