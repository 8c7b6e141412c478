"""``plangate ci check`` in real git repositories: every rule with its exact reason code and
exit code (0 ACCEPTED, 1 REJECTED, 3 HUMAN_REQUIRED)."""

from __future__ import annotations

import json
from pathlib import Path

from support.delivery import define_surfaces
from support.hooks import approved_repo
from support.repo import commit_all, git
from support.taskkit import PLAN_MD, approve_task, make_task

EMPTY_SCOPE_PLAN = PLAN_MD.replace("- `src/app.py`\n- `tests/test_app.py`\n", "- the app module\n")


def _ci(repo: Path, run_cli, base: str, head: str = "HEAD"):
    result = run_cli(repo, "ci", "check", "--base", base, "--head", head, "--json")
    return result.code, json.loads(result.out) if result.out else {}




def test_ci_accepts_in_scope_task_work(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    code, body = _ci(repo, run_cli, base)
    assert code == 0, body
    assert body["verdict"] == "ACCEPTED"
    assert body["facts"]["tasks"]["TASK-0001"]["verdict"] == "ACCEPTED"


def test_ci_rejects_out_of_scope_and_escalates_protected(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "stray.py").write_text("x\n")
    (repo / "AGENTS.md").write_text("x\n")
    commit_all(repo, "work")
    code, body = _ci(repo, run_cli, base)
    assert code == 1
    codes = [r["code"] for r in body["reasons"]]
    assert codes == ["CI_OUTSIDE_SCOPE", "CI_PROTECTED_SURFACE"]
    assert "stray.py" in body["facts"]["outside_scope"]


def test_ci_protected_only_needs_a_human(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    make_task(git_repo, "TASK-0003", plan_md=_plan_with("AGENTS.md"))
    approve_task(git_repo, "TASK-0003")
    commit_all(git_repo, "record")
    (git_repo / "AGENTS.md").write_text("x\n")
    commit_all(git_repo, "work")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 3, body
    assert [r["code"] for r in body["reasons"]] == ["CI_PROTECTED_SURFACE"]


def _plan_with(path: str) -> str:
    return PLAN_MD.replace("- `tests/test_app.py`", f"- `tests/test_app.py`\n- `{path}`")


def test_ci_rejects_code_without_a_task(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    (git_repo / "feature.py").write_text("x\n")
    commit_all(git_repo, "work")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1
    assert [r["code"] for r in body["reasons"]] == ["CI_NO_TASK"]


def test_ci_with_only_the_bundled_template_needs_a_human(git_repo: Path, run_cli) -> None:
    base = git(git_repo, "rev-parse", "HEAD")
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    code, body = _ci(repo, run_cli, base)
    assert code == 3, body
    assert [r["code"] for r in body["reasons"]] == ["HO_BOUNDARY_UNDEFINED"]


def test_ci_rejects_a_tampered_plan(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    plan = repo / "docs" / "working" / "TASK-0001" / "plan.md"
    plan.write_text(plan.read_text().replace("`src/app.py`", "`**`"))
    commit_all(repo, "widen scope after approval")
    code, body = _ci(repo, run_cli, base)
    assert code == 1
    assert "CI_TASK_NOT_VERIFIED" in [r["code"] for r in body["reasons"]]


def test_ci_requires_the_head_checked_out(git_repo: Path, run_cli) -> None:
    base = git(git_repo, "rev-parse", "HEAD")
    (git_repo / "x.txt").write_text("x\n")
    head = commit_all(git_repo, "x")
    git(git_repo, "checkout", "-q", base)
    code, body = _ci(git_repo, run_cli, base, head)
    assert code == 1
    assert body["reasons"][0]["code"] == "CI_HEAD_NOT_CHECKED_OUT"


def test_ci_rejects_a_task_approved_on_a_sibling_branch(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    git(git_repo, "checkout", "-q", "-b", "sibling")
    approved_repo(git_repo)
    commit_all(git_repo, "record on the sibling branch")
    git(git_repo, "checkout", "-q", "-b", "pr", base)
    git(git_repo, "checkout", "sibling", "--", "src", "docs")  # staged by the checkout
    git(git_repo, "commit", "-q", "-m", "the sibling's task, copied onto the pull request")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1, body
    codes = [r["code"] for r in body["reasons"]]
    # The task is not verified for this history, so its record is a protected change too.
    assert codes == ["CI_SOURCE_NOT_ANCESTOR", "CI_OUTSIDE_SCOPE", "CI_PROTECTED_SURFACE"]
    assert body["facts"]["tasks"]["TASK-0001"]["codes"] == ["CI_SOURCE_NOT_ANCESTOR"]
    assert body["facts"]["outside_scope"] == ["src/app.py"]
    assert "docs/working/TASK-0001/approvals/c3.json" in body["facts"]["protected_paths"]


def test_ci_rejects_a_verified_task_whose_plan_lists_no_path(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    make_task(git_repo, "TASK-0002", plan_md=EMPTY_SCOPE_PLAN)
    approve_task(git_repo, "TASK-0002")
    commit_all(git_repo, "record")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1, body
    # Without a scope the task's verification covers nothing: its record is a protected change.
    assert [r["code"] for r in body["reasons"]] == ["CI_SCOPE_UNDEFINED", "CI_PROTECTED_SURFACE"]
    assert "TASK-0002: the plan's '## Files / Components to Touch' section lists no path" in (
        body["reasons"][0]["message"]
    )
    assert body["facts"]["tasks"]["TASK-0002"]["verdict"] == "ACCEPTED"
    assert "allowed_paths" not in body["facts"]["tasks"]["TASK-0002"]


def test_ci_rejects_a_base_commit_with_an_unusable_definition(git_repo: Path, run_cli) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate" / "protected-surfaces.toml").write_text("version = 2\n")
    base = commit_all(git_repo, "an unusable definition")
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    code, body = _ci(repo, run_cli, base)
    assert code == 1, body
    assert [r["code"] for r in body["reasons"]] == ["CI_SURFACES_UNAVAILABLE"]
    assert body["facts"]["protected_paths"] == []


def test_ci_rejects_a_path_outside_the_tasks_scope(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    (repo / "stray.py").write_text("x\n")
    commit_all(repo, "work")
    code, body = _ci(repo, run_cli, base)
    assert code == 1, body
    assert [r["code"] for r in body["reasons"]] == ["CI_OUTSIDE_SCOPE"]
    assert body["reasons"][0]["evidence"] == ["stray.py"]
    assert body["facts"]["outside_scope"] == ["stray.py"]
    assert body["facts"]["protected_paths"] == []


def test_ci_protected_surface_is_human_required_with_exit_three(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    make_task(git_repo, "TASK-0003", plan_md=_plan_with("AGENTS.md"))
    approve_task(git_repo, "TASK-0003")
    commit_all(git_repo, "record")
    (git_repo / "AGENTS.md").write_text("x\n")
    commit_all(git_repo, "work")
    result = run_cli(git_repo, "ci", "check", "--base", base, "--head", "HEAD")
    assert result.code == 3, result.out
    assert "HUMAN_REQUIRED" in result.out
    assert "CI_PROTECTED_SURFACE" in result.out
    _, body = _ci(git_repo, run_cli, base)
    assert body["verdict"] == "HUMAN_REQUIRED"
    assert body["facts"]["protected_paths"] == ["AGENTS.md"]
    assert body["reasons"][0]["evidence"] == ["AGENTS.md"]


def test_ci_refuses_a_path_no_pattern_can_be_matched_against(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    (git_repo / "what?.py").write_text("x\n")
    commit_all(git_repo, "work")
    result = run_cli(git_repo, "ci", "check", "--base", base, "--head", "HEAD")
    assert result.code == 1, result.out
    assert "CI_PATH_UNMATCHABLE" in result.out
    assert "'what?.py' (PATH_HAS_WILDCARD)" in result.out


def test_ci_rejects_a_change_made_only_under_docs_working_with_no_task(
    git_repo: Path, run_cli
) -> None:
    base = define_surfaces(git_repo)
    (git_repo / "docs" / "working").mkdir(parents=True, exist_ok=True)
    (git_repo / "docs" / "working" / "notes.md").write_text("anything\n")
    commit_all(git_repo, "notes")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1, body
    assert [r["code"] for r in body["reasons"]] == ["CI_NO_TASK"]
    assert body["reasons"][0]["evidence"] == ["docs/working/notes.md"]


def test_ci_judges_only_the_pull_requests_own_changes(git_repo: Path, run_cli) -> None:
    # The base branch moves on after the branch was made (a protected file and an
    # out-of-scope file change there): a three-dot diff never counts them.
    define_surfaces(git_repo)
    git(git_repo, "branch", "base-branch", "HEAD")
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    git(repo, "checkout", "-q", "base-branch")
    (repo / "AGENTS.md").write_text("moved on\n")
    (repo / "other.py").write_text("x\n")
    moved = commit_all(repo, "base moves on")
    git(repo, "checkout", "-q", "-")
    code, body = _ci(repo, run_cli, moved)
    assert code == 0, body
    assert "AGENTS.md" not in body["facts"]["changed_paths"]
    assert "other.py" not in body["facts"]["changed_paths"]
    assert "src/app.py" in body["facts"]["changed_paths"]
    assert body["facts"]["merge_base"] == git(repo, "merge-base", moved, "HEAD")


def test_ci_refuses_commits_without_a_common_history(git_repo: Path, run_cli) -> None:
    define_surfaces(git_repo)
    git(git_repo, "checkout", "-q", "--orphan", "island")
    (git_repo / "island.py").write_text("x\n")
    island = commit_all(git_repo, "unrelated root")
    git(git_repo, "checkout", "-q", "main")
    result = run_cli(git_repo, "ci", "check", "--base", island, "--head", "HEAD")
    assert result.code == 1, result.out
    assert "GIT_MERGE_BASE_UNDECIDABLE" in result.err + result.out


def test_ci_refuses_a_working_tree_that_differs_under_docs_working(
    git_repo: Path, run_cli
) -> None:
    base = define_surfaces(git_repo)
    repo = approved_repo(git_repo)
    commit_all(repo, "record")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    commit_all(repo, "work")
    for dirty in ("docs/working/TASK-0001/plan.md", "docs/working/TASK-0001/extra.md"):
        original = (repo / dirty).read_bytes() if (repo / dirty).exists() else None
        (repo / dirty).write_text("# a different plan\n")
        code, body = _ci(repo, run_cli, base)
        assert code == 1, body
        assert [r["code"] for r in body["reasons"]] == ["CI_HEAD_NOT_CHECKED_OUT"]
        assert dirty in body["reasons"][0]["evidence"]
        if original is None:
            (repo / dirty).unlink()
        else:
            (repo / dirty).write_bytes(original)
    assert _ci(repo, run_cli, base)[0] == 0


def test_ci_rejects_a_change_to_a_path_the_plan_says_not_to_touch(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    (git_repo / "src").mkdir()
    (git_repo / "src" / "app.py").write_text("x\n")
    (git_repo / "src" / "keys.py").write_text("x\n")
    commit_all(git_repo, "app")
    plan = PLAN_MD.replace("- `src/app.py`\n", "- `src/**`\n").replace(
        "- `tests/test_app.py`\n",
        "- `tests/test_app.py`\n\n### \u89e6\u3089\u306a\u3044\n\n- `src/keys.py`\n",
    )
    make_task(git_repo, plan_md=plan)
    approve_task(git_repo)
    commit_all(git_repo, "record")
    (git_repo / "src" / "app.py").write_text("y\n")
    (git_repo / "src" / "keys.py").write_text("y\n")
    commit_all(git_repo, "work")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1, body
    assert [r["code"] for r in body["reasons"]] == ["CI_OUTSIDE_SCOPE"]
    assert body["reasons"][0]["evidence"] == ["src/keys.py"]
    assert body["facts"]["tasks"]["TASK-0001"]["denied_paths"] == ["src/keys.py"]


def _adoption_codes(repo: Path, run_cli, base: str) -> list[str]:
    code, body = _ci(repo, run_cli, base)
    assert code in (1, 3), body
    return [r["code"] for r in body["reasons"]]


def test_ci_sees_an_adoption_only_when_the_base_has_no_definition(git_repo: Path, run_cli) -> None:
    from plangate.surfaces import bundled_template_bytes

    base = git(git_repo, "rev-parse", "HEAD")
    define_surfaces(git_repo)
    assert "CI_ADOPTS_PLANGATE" in _adoption_codes(git_repo, run_cli, base)
    # The same change over a base that holds the file, even one no rule can use, is not
    # an adoption.
    git(git_repo, "checkout", "-q", "-b", "with-a-definition", base)
    (git_repo / ".plangate").mkdir(exist_ok=True)
    (git_repo / ".plangate" / "protected-surfaces.toml").write_text("version = 2\n")
    broken = commit_all(git_repo, "an unusable definition")
    (git_repo / ".plangate" / "protected-surfaces.toml").write_bytes(bundled_template_bytes())
    commit_all(git_repo, "the definition")
    codes = _adoption_codes(git_repo, run_cli, broken)
    assert "CI_ADOPTS_PLANGATE" not in codes
    assert "CI_SURFACES_UNAVAILABLE" in codes


def test_ci_refuses_when_the_base_definition_cannot_be_read(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    (git_repo / "feature.py").write_text("x\n")
    commit_all(git_repo, "work")
    # The base's .plangate tree is gone from the object database: never read as "absent".
    tree = git(git_repo, "rev-parse", f"{base}:.plangate")
    (git_repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    result = run_cli(git_repo, "ci", "check", "--base", base, "--head", "HEAD", "--json")
    assert result.code == 1, result.out
    assert "CI_SURFACES_UNREADABLE" in result.out + result.err


def test_ci_refuses_a_checkout_whose_head_names_no_commit(git_repo: Path, run_cli) -> None:
    base = git(git_repo, "rev-parse", "HEAD")
    (git_repo / "feature.py").write_text("x\n")
    head = commit_all(git_repo, "work")
    git(git_repo, "checkout", "-q", "--orphan", "unborn")
    result = run_cli(git_repo, "ci", "check", "--base", base, "--head", head, "--json")
    assert result.code == 1, result.out
    assert "GIT_HEAD_UNBORN" in result.out + result.err
