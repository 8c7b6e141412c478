"""``ci check`` and what a reviewer cannot read as a file, in real git repositories.

A symbolic link or a gitlink is a change whose effect is not in the diff a reviewer reads:
whoever opens the link reads its target; a gitlink brings another repository's commit.
CI never accepts either by itself (``HUMAN_REQUIRED``, exit 3), even at an allowed path.
Their modes come from the diff PlanGate computes, never from what the pull request says.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.delivery import define_surfaces
from support.repo import commit_all, git
from support.taskkit import PLAN_MD, approve_task, make_task

PLAN_SRC = PLAN_MD.replace("- `src/app.py`\n", "- `src/**`\n")


def _ci(repo: Path, run_cli, base: str) -> tuple[int, dict]:
    result = run_cli(repo, "ci", "check", "--base", base, "--head", "HEAD", "--json")
    return result.code, json.loads(result.out) if result.out else {}


def _approved(repo: Path) -> str:
    """Surfaces defined, ``src/app.py`` committed, a task allowing ``src/**`` approved."""
    base = define_surfaces(repo)
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hi'\n")
    make_task(repo, plan_md=PLAN_SRC)
    approve_task(repo)
    commit_all(repo, "task")
    return base


def _reason(body: dict, code: str) -> dict:
    found = [r for r in body["reasons"] if r["code"] == code]
    assert len(found) == 1, body["reasons"]
    return found[0]


def test_a_link_inside_the_repository_needs_a_human(git_repo: Path, run_cli) -> None:
    base = _approved(git_repo)
    os.symlink("app.py", git_repo / "src" / "alias.py")
    commit_all(git_repo, "link")
    code, body = _ci(git_repo, run_cli, base)
    assert (code, body["verdict"]) == (3, "HUMAN_REQUIRED"), body
    reason = _reason(body, "CI_SYMLINK")
    assert "src/alias.py -> app.py" in reason["message"]
    assert "outside the repository" not in reason["message"]
    assert [r["code"] for r in body["reasons"]] == ["CI_SYMLINK"]


def test_links_leaving_the_repository_are_marked(git_repo: Path, run_cli) -> None:
    base = _approved(git_repo)
    os.symlink("/etc/passwd", git_repo / "src" / "passwd")
    os.symlink("../.git/hooks/pre-commit", git_repo / "src" / "hook")
    os.symlink("../../elsewhere", git_repo / "src" / "up")
    commit_all(git_repo, "links")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 3, body
    message = _reason(body, "CI_SYMLINK")["message"]
    assert message.startswith("3 symbolic link(s) added or changed")
    for shown in ("src/passwd -> /etc/passwd (outside the repository)",
                  "src/hook -> ../.git/hooks/pre-commit (outside the repository)",
                  "src/up -> ../../elsewhere (outside the repository)"):
        assert shown in message


def test_a_link_retargeted_by_the_pull_request_needs_a_human(git_repo: Path, run_cli) -> None:
    os.makedirs(git_repo / "src")
    os.symlink("app.py", git_repo / "src" / "alias.py")
    commit_all(git_repo, "a link a person added")
    base = define_surfaces(git_repo)
    (git_repo / "src" / "app.py").write_text("x = 1\n")
    make_task(git_repo, plan_md=PLAN_SRC)
    approve_task(git_repo)
    commit_all(git_repo, "task")
    (git_repo / "src" / "alias.py").unlink()
    os.symlink("/home/runner/.ssh/id_ed25519", git_repo / "src" / "alias.py")
    commit_all(git_repo, "retarget")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 3, body
    assert "src/alias.py -> /home/runner/.ssh/id_ed25519 (outside the repository)" in (
        _reason(body, "CI_SYMLINK")["message"])


def test_removing_a_link_or_replacing_it_with_a_file_is_plain_work(
    git_repo: Path, run_cli
) -> None:
    os.makedirs(git_repo / "src")
    (git_repo / "src" / "app.py").write_text("x = 1\n")
    os.symlink("app.py", git_repo / "src" / "alias.py")
    os.symlink("app.py", git_repo / "src" / "other.py")
    commit_all(git_repo, "links a person added")
    base = define_surfaces(git_repo)
    make_task(git_repo, plan_md=PLAN_SRC)
    approve_task(git_repo)
    (git_repo / "src" / "alias.py").unlink()
    (git_repo / "src" / "alias.py").write_text("y = 2\n")
    (git_repo / "src" / "other.py").unlink()
    commit_all(git_repo, "work")
    code, body = _ci(git_repo, run_cli, base)
    assert (code, body["verdict"]) == (0, "ACCEPTED"), body


def test_a_gitlink_needs_a_human(git_repo: Path, run_cli) -> None:
    base = _approved(git_repo)
    other = git(git_repo, "rev-parse", "HEAD")  # any commit id: git records it as given
    git(git_repo, "update-index", "--add", "--cacheinfo", f"160000,{other},src/vendored")
    git(git_repo, "commit", "-q", "-m", "submodule pointer")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 3, body
    reason = _reason(body, "CI_GITLINK")
    assert reason["message"] == (
        "1 gitlink(s) (a commit of another repository) added or changed: src/vendored")
    assert [r["code"] for r in body["reasons"]] == ["CI_GITLINK"]


def test_a_link_outside_the_scope_is_refused_and_still_named(git_repo: Path, run_cli) -> None:
    """Every failing row is listed: out of scope refuses; the link row says what it is."""
    base = _approved(git_repo)
    os.symlink("src/app.py", git_repo / "alias.py")
    commit_all(git_repo, "link outside the scope")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1, body
    assert [r["code"] for r in body["reasons"]] == ["CI_OUTSIDE_SCOPE", "CI_SYMLINK"]
