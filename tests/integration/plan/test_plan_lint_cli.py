"""``plangate plan lint`` and ``loopspec --check --json`` as a user runs them, in real repos."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import RunCli
from support.repo import commit_all, git
from support.taskkit import PLAN_MD, make_task, task_dir

DENYING = PLAN_MD.replace("- `src/app.py`\n", "- `src/**`\n").replace(
    "- `tests/test_app.py`\n",
    "- `tests/test_app.py` and `--fix` and `os.replace`\n\n"
    "### \u89e6\u3089\u306a\u3044\uff08forbidden_files\uff09\n\n- `src/keys.py`, `bin/`\n",
)
RENAMED = PLAN_MD.replace("## Files / Components to Touch", "## Files to Touch")
NO_VERIFICATION = PLAN_MD.replace(
    "Verification Automation: `python -m pytest -q && python -m ruff check src`\n",
    "### Verification Automation\n\n- `ls docs | wc -l` = 7\n",
)


def _tree(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def test_a_plan_that_derives(run_cli: RunCli, git_repo: Path) -> None:
    make_task(git_repo, plan_md=DENYING)
    before = _tree(git_repo)
    res = run_cli(git_repo, "plan", "lint", "TASK-0001")
    assert res.code == 0, res.out
    lines = res.out.splitlines()
    assert lines[0] == "TASK-0001 plan lint: DERIVES"
    assert "  allowed: src/**, tests/test_app.py" in lines
    assert "  denied: src/keys.py, bin/**" in lines
    assert any("skipped line" in ln and "`--fix`: an option" in ln for ln in lines)
    assert any("(not to touch: its paths are denied)" in ln for ln in lines)
    assert "  verification: python -m pytest -q && python -m ruff check src" in lines
    assert _tree(git_repo) == before  # lint never writes


def test_json_names_each_path_with_its_line(run_cli: RunCli, git_repo: Path) -> None:
    make_task(git_repo, plan_md=DENYING)
    res = run_cli(git_repo, "plan", "lint", "TASK-0001", "--json")
    doc = json.loads(res.out)
    assert res.code == 0 and doc["verdict"] == "DERIVES" and doc["edits"] == []
    text = DENYING.splitlines()
    for taken in doc["taken"]:
        assert taken["text"] in text[taken["line"] - 1]
    assert {s["text"]: s["why"] for s in doc["skipped"]} == {
        "--fix": "an option, not a path",
        "os.replace": "an identifier, not a file name with a known extension",
    }
    assert doc["denied_paths"] == ["src/keys.py", "bin/**"]
    assert doc["conflicts"] == []


def test_a_plan_that_does_not_derive_gets_the_smallest_edit(
    run_cli: RunCli, git_repo: Path
) -> None:
    make_task(git_repo, plan_md=RENAMED)
    res = run_cli(git_repo, "plan", "lint", "TASK-0001", "--json")
    doc = json.loads(res.out)
    assert res.code == 1
    assert doc["verdict"] == "SCOPE_UNDERIVABLE" and not doc["derives_scope"]
    line = RENAMED.splitlines().index("## Files to Touch") + 1
    assert doc["edits"] == [
        f"line {line}: rename '## Files to Touch' to '## Files / Components to Touch'"
    ]
    # the edit it names is enough
    (task_dir(git_repo) / "plan.md").write_text(PLAN_MD)
    assert run_cli(git_repo, "plan", "lint", "TASK-0001").code == 0


@pytest.mark.parametrize(
    ("files", "edit"),
    [
        ("- `./src/app.py`\n", "write './src/app.py' as 'src/app.py'"),
        ("- the app module in src/app.py\n", "write 'src/app.py' in backticks"),
        ("- nothing named\n", "list each path the task may change"),
    ],
)
def test_scope_edits_name_the_line(run_cli: RunCli, git_repo: Path, files: str, edit: str) -> None:
    plan = PLAN_MD.replace("- `src/app.py`\n- `tests/test_app.py`\n", files)
    make_task(git_repo, plan_md=plan)
    doc = json.loads(run_cli(git_repo, "plan", "lint", "TASK-0001", "--json").out)
    assert doc["verdict"] == "SCOPE_UNDERIVABLE"
    assert edit in doc["edits"][0]


def test_a_verification_subsection_is_reported_not_taken(run_cli: RunCli, git_repo: Path) -> None:
    make_task(git_repo, plan_md=NO_VERIFICATION)
    res = run_cli(git_repo, "plan", "lint", "TASK-0001", "--json")
    doc = json.loads(res.out)
    assert res.code == 1 and doc["verdict"] == "LOOPSPEC_UNDERIVABLE" and doc["derives_scope"]
    assert [c["command"] for c in doc["verification_subsection"]] == ["ls docs | wc -l"]
    assert doc["verification"] == []
    assert "Verification Automation: `cmd && cmd`" in doc["edits"][0]


def test_lint_all_covers_every_task_in_order(run_cli: RunCli, git_repo: Path) -> None:
    make_task(git_repo, "TASK-0002", plan_md=RENAMED, commit=False)
    make_task(git_repo, "TASK-0001", plan_md=PLAN_MD, commit=False)
    (git_repo / "docs" / "working" / "notes").mkdir()
    commit_all(git_repo, "tasks")
    res = run_cli(git_repo, "plan", "lint", "--all", "--json")
    doc = json.loads(res.out)
    assert res.code == 1 and doc["verdict"] == "NOT_ALL_DERIVE"
    assert [t["task_id"] for t in doc["tasks"]] == ["TASK-0001", "TASK-0002"]
    assert doc["summary"]["derive_scope"] == 1 and doc["summary"]["scope_underivable"] == 1
    text = run_cli(git_repo, "plan", "lint", "--all")
    assert text.out.splitlines()[-1] == (
        "2 task(s): 1 derive the LoopSpec, 1 derive a scope, 1 do not derive a scope"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("plan", "lint"),
        ("plan", "lint", "TASK-0001", "--all"),
        ("plan", "lint", "task-1"),
        ("plan", "frob"),
        ("plan",),
    ],
)
def test_usage_errors_exit_2(run_cli: RunCli, git_repo: Path, argv: tuple[str, ...]) -> None:
    res = run_cli(git_repo, *argv)
    assert res.code == 2 and "Traceback" not in res.err


def test_a_missing_task_is_rejected_without_a_traceback(run_cli: RunCli, git_repo: Path) -> None:
    res = run_cli(git_repo, "plan", "lint", "TASK-0042")
    assert res.code == 1 and "Traceback" not in res.err


def test_an_unreadable_plan_is_reported(run_cli: RunCli, git_repo: Path) -> None:
    make_task(git_repo)
    (task_dir(git_repo) / "plan.md").write_bytes(b"## Files / Components to Touch\n- `\xff`\n")
    doc = json.loads(run_cli(git_repo, "plan", "lint", "TASK-0001", "--json").out)
    assert doc["verdict"] == "SCOPE_UNDERIVABLE" and doc["edits"] == [
        "save plan.md as a readable UTF-8 file"
    ]


def test_loopspec_check_json_is_one_object_when_the_loopspec_cannot_be_derived(
    run_cli: RunCli, git_repo: Path
) -> None:
    make_task(git_repo, plan_md=NO_VERIFICATION)
    git(git_repo, "status")
    res = run_cli(
        git_repo, "loopspec", "TASK-0001", "--maker", "m", "--checker", "c", "--check", "--json"
    )
    doc = json.loads(res.out)
    assert res.code == 1
    assert doc["verdict"] == "REJECTED"
    assert [r["code"] for r in doc["reasons"]] == ["LOOPSPEC_UNDERIVABLE"]
    assert doc["reasons"][0]["message"].startswith("loop.verification.deterministic")
    plain = run_cli(git_repo, "loopspec", "TASK-0001", "--maker", "m", "--checker", "c", "--check")
    assert plain.code == 1 and "LOOPSPEC_UNDERIVABLE" in plain.err and plain.out == ""


def test_lint_all_reports_a_symlinked_task_directory(run_cli: RunCli, git_repo: Path) -> None:
    make_task(git_repo)
    (git_repo / "docs" / "working" / "TASK-0002").symlink_to(task_dir(git_repo))
    res = run_cli(git_repo, "plan", "lint", "--all", "--json")
    doc = json.loads(res.out)
    assert res.code == 1 and [t["task_id"] for t in doc["tasks"]] == ["TASK-0001", "TASK-0002"]
    linked = doc["tasks"][1]
    assert linked["verdict"] == "SCOPE_UNDERIVABLE"
    assert (
        linked["scope_problem"].startswith("TASK_DIR_INVALID")
        or "symbolic" in (linked["scope_problem"])
    )
