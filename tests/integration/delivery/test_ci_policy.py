"""``plangate ci check`` on pull requests without a task, in real git repositories: the
base commit's ``.plangate/policy.toml`` judges them, never the pull request's own version."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.delivery import define_surfaces
from support.repo import commit_all, git

POLICY = """\
[[taskless]]
name = "docs"
paths = ["docs/**", "*.md"]
human = false

[[taskless]]
name = "dependencies"
paths = ["pyproject.toml", "requirements*.txt"]
human = true
"""


def _ci(repo: Path, run_cli, base: str) -> tuple[int, dict]:
    result = run_cli(repo, "ci", "check", "--base", base, "--head", "HEAD", "--json")
    return result.code, json.loads(result.out) if result.out else {}


def _codes(body: dict) -> list[str]:
    return [r["code"] for r in body["reasons"]]


def _with_policy(repo: Path, text: str = POLICY) -> str:
    """The repository's surfaces and ``text`` as its policy, committed on main: the base."""
    define_surfaces(repo)
    (repo / ".plangate" / "policy.toml").write_text(text)
    return commit_all(repo, "policy")


def _branch(repo: Path, files: dict[str, str]) -> None:
    git(repo, "switch", "-q", "-c", "pr")
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    commit_all(repo, "pull request")


def test_without_a_policy_a_readme_fix_is_refused_and_the_hint_names_the_file(
    git_repo: Path, run_cli
) -> None:
    base = define_surfaces(git_repo)
    _branch(git_repo, {"README.md": "# fixed typo\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert (code, _codes(body)) == (1, ["CI_NO_TASK"])
    assert ".plangate/policy.toml" in body["reasons"][0]["hint"]


def test_a_readme_fix_the_base_policy_allows_is_accepted(git_repo: Path, run_cli) -> None:
    base = _with_policy(git_repo)
    _branch(git_repo, {"README.md": "# fixed typo\n", "docs/guide.md": "guide\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert (code, body["verdict"], _codes(body)) == (0, "ACCEPTED", [])
    assert body["facts"]["policy"]["taskless"] == {"README.md": "docs", "docs/guide.md": "docs"}


def test_a_dependency_bump_goes_to_a_human(git_repo: Path, run_cli) -> None:
    base = _with_policy(git_repo)
    _branch(git_repo, {"requirements.txt": "requests==2.32.4\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert (code, _codes(body)) == (3, ["CI_TASKLESS_HUMAN"])
    assert body["reasons"][0]["evidence"] == ["requirements.txt"]


def test_docs_mixed_with_code_is_refused_for_the_code(git_repo: Path, run_cli) -> None:
    base = _with_policy(git_repo)
    _branch(git_repo, {"README.md": "# x\n", "src/app.py": "x = 1\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert (code, _codes(body)) == (1, ["CI_NO_TASK"])
    assert body["reasons"][0]["evidence"] == ["src/app.py"]


def test_a_pull_request_is_judged_by_the_base_policy_never_its_own(
    git_repo: Path, run_cli
) -> None:
    base = define_surfaces(git_repo)  # no policy on the base: strict
    permissive = '[[taskless]]\nname = "all"\npaths = ["**"]\nhuman = false\n'
    _branch(git_repo, {".plangate/policy.toml": permissive, "src/app.py": "x = 1\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1
    assert _codes(body) == ["CI_NO_TASK", "CI_POLICY_CHANGED", "CI_PROTECTED_SURFACE"]
    assert body["reasons"][0]["evidence"] == ["src/app.py"]


def test_a_pull_request_widening_the_policy_cannot_use_the_widening(
    git_repo: Path, run_cli
) -> None:
    base = _with_policy(git_repo)
    wider = POLICY + '\n[[taskless]]\nname = "code"\npaths = ["src/**"]\nhuman = false\n'
    _branch(git_repo, {".plangate/policy.toml": wider, "src/app.py": "x = 1\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1
    assert "CI_NO_TASK" in _codes(body) and "CI_POLICY_CHANGED" in _codes(body)


def test_a_policy_change_alone_is_human_required(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    _branch(git_repo, {".plangate/policy.toml": POLICY})
    code, body = _ci(git_repo, run_cli, base)
    assert code == 3, body
    assert "CI_POLICY_CHANGED" in _codes(body) and "CI_NO_TASK" not in _codes(body)


def test_a_pull_request_cannot_merge_a_malformed_policy(git_repo: Path, run_cli) -> None:
    base = _with_policy(git_repo)
    _branch(git_repo, {".plangate/policy.toml": POLICY + "allow_all = true\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1
    assert _codes(body)[0] == "PR_POLICY_UNKNOWN_KEY"
    assert "allow_all" in body["reasons"][0]["message"]


def test_a_malformed_base_policy_refuses_a_docs_fix_but_lets_its_repair_reach_a_human(
    git_repo: Path, run_cli
) -> None:
    base = _with_policy(git_repo, '[[taskless]]\nname = "docs"\npaths = ["docs/../src/**"]\n')
    _branch(git_repo, {"docs/guide.md": "guide\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1
    assert _codes(body) == ["PR_POLICY_INVALID", "CI_NO_TASK"]
    assert "PATH_DOTDOT" in body["reasons"][0]["message"]
    git(git_repo, "switch", "-q", "main")
    _branch_named(git_repo, "repair", {".plangate/policy.toml": POLICY})
    code, body = _ci(git_repo, run_cli, base)
    assert code == 3, body
    assert "CI_POLICY_CHANGED" in _codes(body)


def test_a_base_policy_that_is_a_link_is_not_read(git_repo: Path, run_cli) -> None:
    define_surfaces(git_repo)
    (git_repo / "elsewhere.toml").write_text(POLICY)
    os.symlink("../elsewhere.toml", git_repo / ".plangate" / "policy.toml")
    base = commit_all(git_repo, "policy as a link")
    _branch(git_repo, {"README.md": "# x\n"})
    code, body = _ci(git_repo, run_cli, base)
    assert code == 1
    assert _codes(body) == ["PR_POLICY_INVALID", "CI_NO_TASK"]


def _branch_named(repo: Path, name: str, files: dict[str, str]) -> None:
    git(repo, "switch", "-q", "-c", name)
    for rel, text in files.items():
        (repo / rel).write_text(text)
    commit_all(repo, name)


def test_deleting_the_policy_goes_to_a_human(git_repo: Path, run_cli) -> None:
    base = _with_policy(git_repo)
    git(git_repo, "switch", "-q", "-c", "pr")
    (git_repo / ".plangate" / "policy.toml").unlink()
    commit_all(git_repo, "drop the policy")
    code, body = _ci(git_repo, run_cli, base)
    assert code == 3, body
    assert "CI_POLICY_CHANGED" in _codes(body)
    assert "PR_POLICY_INVALID" not in _codes(body)
