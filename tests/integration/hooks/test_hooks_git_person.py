"""git's hooks for a person: the early form of CI's verdict (real git, real hooks).

What CI rejects stays refused at ``git commit`` and ``git push``; what CI hands to a human
(the adoption, protected surfaces, the policy file) goes through with a notice; a path the
base's ``.plangate/policy.toml`` lets through without a human needs no task. With agent
markers in the environment the agent decision stands.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plangate.agents import AGENT_MARKER_PREFIXES, AGENT_MARKERS
from plangate.git import scrubbed_env
from plangate.hooks.install import apply
from plangate.hooks.setup import template_without_marker
from support.repo import git

DOCS_POLICY = '[[taskless]]\nname = "docs"\npaths = ["docs/**", "*.md"]\nhuman = false\n'
DEPS_POLICY = '[[taskless]]\nname = "dependencies"\npaths = ["pyproject.toml"]\nhuman = true\n'
NOTICE = "CI will ask a human to approve"


def _person_env() -> dict[str, str]:
    """A person's terminal: no agent or automation marker (CI runs these tests with CI=true)."""
    env = {
        k: v
        for k, v in scrubbed_env().items()
        if k not in AGENT_MARKERS and not k.startswith(AGENT_MARKER_PREFIXES)
    }
    return env | {
        "GIT_AUTHOR_NAME": "Alice",
        "GIT_AUTHOR_EMAIL": "alice@example.invalid",
        "GIT_COMMITTER_NAME": "Alice",
        "GIT_COMMITTER_EMAIL": "alice@example.invalid",
    }


def _git(repo: Path, *args: str, agent: bool = False) -> subprocess.CompletedProcess[str]:
    env = _person_env() | ({"CLAUDECODE": "1"} if agent else {})
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False
    )


def _write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _with_remote(repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")


def _adoption_files(repo: Path) -> None:
    """What setup writes for the adoption: surfaces, ignore lines, host and git hooks,
    the suggested policy (the ledger stays ignored)."""
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/protected-surfaces.toml").write_bytes(template_without_marker())
    _write(repo, {".plangate/policy.toml": DOCS_POLICY,
                  ".gitignore": "/.plangate/ledger.sqlite3*\n/.plangate/locks/\n"
                                "/.plangate/session/\n/.claude/settings.local.json\n"})
    apply(repo, ["claude", "git"], install=True)


def _adopted(repo: Path, policy: str | None) -> None:
    """A repository that adopted PlanGate, with ``policy`` (or none) committed at HEAD."""
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/protected-surfaces.toml").write_bytes(template_without_marker())
    _write(repo, {".gitignore": "/.plangate/ledger.sqlite3*\n/.plangate/locks/\n"})
    if policy is not None:
        _write(repo, {".plangate/policy.toml": policy})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "adopted")
    apply(repo, ["git"], install=True)


# -- the adoption ------------------------------------------------------------------------


def test_a_person_commits_and_pushes_the_adoption_with_the_notice(
    git_repo: Path, tmp_path: Path
) -> None:
    _with_remote(git_repo, tmp_path)
    _adoption_files(git_repo)
    assert _git(git_repo, "switch", "-q", "-c", "adopt-plangate").returncode == 0
    assert _git(git_repo, "add", "-A").returncode == 0
    committed = _git(git_repo, "commit", "-q", "-m", "Adopt PlanGate")
    assert committed.returncode == 0, committed.stderr
    assert f"{NOTICE}: CI_ADOPTS_PLANGATE" in committed.stderr
    assert ".claude/settings.json" in committed.stderr
    pushed = _git(git_repo, "push", "-q", "-u", "origin", "adopt-plangate")
    assert pushed.returncode == 0, pushed.stderr
    assert f"{NOTICE}: CI_ADOPTS_PLANGATE" in pushed.stderr


def test_an_agent_cannot_push_the_adoption_a_person_committed(
    git_repo: Path, tmp_path: Path
) -> None:
    _with_remote(git_repo, tmp_path)
    _adoption_files(git_repo)
    _git(git_repo, "switch", "-q", "-c", "adopt-plangate")
    _git(git_repo, "add", "-A")
    assert _git(git_repo, "commit", "-q", "-m", "Adopt PlanGate").returncode == 0
    refused = _git(git_repo, "push", "-q", "-u", "origin", "adopt-plangate", agent=True)
    assert refused.returncode == 1, refused.stderr
    assert "HOOK_CONFIG_FILE" in refused.stderr and NOTICE not in refused.stderr
    assert git(tmp_path / "origin.git", "branch", "--list", "adopt-plangate").strip() == ""


def test_the_same_adoption_with_agent_markers_is_refused(git_repo: Path) -> None:
    _adoption_files(git_repo)
    git(git_repo, "add", "-A")
    refused = _git(git_repo, "commit", "-q", "-m", "Adopt PlanGate", agent=True)
    assert refused.returncode == 1, refused.stderr
    for code in ("HOOK_CONFIG_FILE", "HOOK_PROTECTED_SURFACE", "HOOK_PLANGATE_STATE"):
        assert code in refused.stderr
    assert "agent or automation markers are set (CLAUDECODE)" in refused.stderr
    assert NOTICE not in refused.stderr
    assert git(git_repo, "log", "-1", "--format=%s").strip() == "initial"


def test_an_adoption_with_other_changes_is_an_ordinary_commit(git_repo: Path) -> None:
    _adoption_files(git_repo)
    _write(git_repo, {"src/app.py": "x = 1\n"})
    git(git_repo, "add", "-A")
    refused = _git(git_repo, "commit", "-q", "-m", "Adopt PlanGate and more")
    assert refused.returncode == 1, refused.stderr
    assert "CI_NO_TASK" in refused.stderr and "src/app.py" in refused.stderr


# -- a change without a task -------------------------------------------------------------


def test_a_readme_fix_passes_without_a_task_under_a_docs_policy(
    git_repo: Path, tmp_path: Path
) -> None:
    _with_remote(git_repo, tmp_path)
    _adopted(git_repo, DOCS_POLICY)
    git(git_repo, "push", "-q", "origin", "main")
    _git(git_repo, "switch", "-q", "-c", "readme-fix")
    _write(git_repo, {"README.md": "# test repo\n\nBetter words.\n"})
    git(git_repo, "add", "README.md")
    committed = _git(git_repo, "commit", "-q", "-m", "README")
    assert committed.returncode == 0, committed.stderr
    assert "CI lets README.md through without a task: rule 'docs'" in committed.stderr
    assert NOTICE not in committed.stderr
    pushed = _git(git_repo, "push", "-q", "-u", "origin", "readme-fix")
    assert pushed.returncode == 0, pushed.stderr


def test_a_readme_fix_beside_a_task_s_files_is_judged_by_the_task_not_the_policy(
    git_repo: Path,
) -> None:
    # CI judges a pull request that touches a task's directory by that task, where the
    # README is outside any approved scope: the docs rule does not let it through.
    _adopted(git_repo, DOCS_POLICY)
    _write(git_repo, {"README.md": "# better\n",
                      "docs/working/TASK-0001/plan.md": "# TASK-0001\n"})
    git(git_repo, "add", "README.md", "docs/working/TASK-0001/plan.md")
    refused = _git(git_repo, "commit", "-q", "-m", "README and a plan")
    assert refused.returncode == 1, refused.stderr
    assert "HOOK_NO_ACTIVE_TASK" in refused.stderr and "README.md" in refused.stderr
    assert "touches a task's directory" in refused.stderr
    assert "CI lets README.md through" not in refused.stderr


def test_a_readme_fix_without_a_policy_is_refused(git_repo: Path) -> None:
    _adopted(git_repo, None)
    _write(git_repo, {"README.md": "# test repo\n\nBetter words.\n"})
    git(git_repo, "add", "README.md")
    refused = _git(git_repo, "commit", "-q", "-m", "README")
    assert refused.returncode == 1
    assert "HOOK_NO_ACTIVE_TASK" in refused.stderr
    assert "CI rejects it" in refused.stderr and "CI_NO_TASK" in refused.stderr


def test_a_readme_fix_mixed_with_code_is_refused(git_repo: Path) -> None:
    _adopted(git_repo, DOCS_POLICY)
    _write(git_repo, {"README.md": "# better\n", "src/app.py": "x = 1\n"})
    git(git_repo, "add", "README.md", "src/app.py")
    refused = _git(git_repo, "commit", "-q", "-m", "README and code")
    assert refused.returncode == 1
    assert "CI_NO_TASK" in refused.stderr and "src/app.py" in refused.stderr


def test_a_policy_added_in_the_same_commit_does_not_judge_it(git_repo: Path) -> None:
    _adopted(git_repo, None)
    _write(git_repo, {".plangate/policy.toml": DOCS_POLICY, "README.md": "# better\n"})
    git(git_repo, "add", ".plangate/policy.toml", "README.md")
    refused = _git(git_repo, "commit", "-q", "-m", "policy and README")
    assert refused.returncode == 1, refused.stderr
    assert "CI_NO_TASK" in refused.stderr and "README.md" in refused.stderr


def test_the_policy_alone_goes_to_a_human(git_repo: Path) -> None:
    _adopted(git_repo, None)
    _write(git_repo, {".plangate/policy.toml": DOCS_POLICY})
    git(git_repo, "add", ".plangate/policy.toml")
    committed = _git(git_repo, "commit", "-q", "-m", "policy")
    assert committed.returncode == 0, committed.stderr
    assert f"{NOTICE}: CI_POLICY_CHANGED" in committed.stderr


def test_a_malformed_policy_in_the_commit_is_refused(git_repo: Path) -> None:
    _adopted(git_repo, None)
    _write(git_repo, {".plangate/policy.toml": "[[taskless]]\nname = 3\n"})
    git(git_repo, "add", ".plangate/policy.toml")
    refused = _git(git_repo, "commit", "-q", "-m", "broken policy")
    assert refused.returncode == 1, refused.stderr
    assert "PR_POLICY_INVALID" in refused.stderr


def test_a_malformed_policy_at_head_refuses(git_repo: Path) -> None:
    _adopted(git_repo, DOCS_POLICY + "surprise = true\n")
    _write(git_repo, {"README.md": "# better\n"})
    git(git_repo, "add", "README.md")
    refused = _git(git_repo, "commit", "-q", "-m", "README")
    assert refused.returncode == 1, refused.stderr
    assert "PR_POLICY_UNKNOWN_KEY" in refused.stderr


def test_a_human_rule_lets_a_person_through_with_the_notice(git_repo: Path) -> None:
    _adopted(git_repo, DEPS_POLICY)
    _write(git_repo, {"pyproject.toml": "[project]\nname = 'x'\n"})
    git(git_repo, "add", "pyproject.toml")
    committed = _git(git_repo, "commit", "-q", "-m", "bump")
    assert committed.returncode == 0, committed.stderr
    assert f"{NOTICE}: CI_TASKLESS_HUMAN" in committed.stderr
    _write(git_repo, {"pyproject.toml": "[project]\nname = 'y'\n"})
    git(git_repo, "add", "pyproject.toml")
    agent = _git(git_repo, "commit", "-q", "-m", "bump", agent=True)
    assert agent.returncode == 1 and "HOOK_NO_ACTIVE_TASK" in agent.stderr


@pytest.mark.parametrize("marker", ["CI", "CODEX_THREAD_ID", "PLANGATE_TASK"])
def test_every_marker_keeps_the_agent_decision(git_repo: Path, marker: str) -> None:
    _adopted(git_repo, DOCS_POLICY)
    _write(git_repo, {".plangate/policy.toml": DOCS_POLICY + "\n"})
    git(git_repo, "add", ".plangate/policy.toml")
    env = _person_env() | {marker: "true" if marker == "CI" else "TASK-0001"}
    refused = subprocess.run(
        ["git", "commit", "-q", "-m", "policy"], cwd=git_repo, env=env,
        capture_output=True, text=True, check=False,
    )
    assert refused.returncode == 1, refused.stderr
    assert NOTICE not in refused.stderr


def test_what_ci_rejects_stays_refused_for_a_person(git_repo: Path) -> None:
    _adopted(git_repo, DOCS_POLICY)
    _write(git_repo, {"docs/working/TASK-0009/approvals/c3.json": "{}\n"})
    git(git_repo, "add", "docs/working/TASK-0009/approvals/c3.json")
    refused = _git(git_repo, "commit", "-q", "-m", "a record by hand")
    assert refused.returncode == 1
    assert "HOOK_APPROVAL" in refused.stderr and "stays refused in CI too" in refused.stderr


def test_the_ledger_records_what_was_lifted_for_a_person(git_repo: Path) -> None:
    from plangate.ledger import open_ledger

    _adopted(git_repo, DEPS_POLICY)
    _write(git_repo, {"pyproject.toml": "[project]\nname = 'x'\n"})
    git(git_repo, "add", "pyproject.toml")
    assert _git(git_repo, "commit", "-q", "-m", "bump").returncode == 0
    with open_ledger(git_repo, dict(os.environ), create=False) as ledger:
        last = ledger.entries(kind="hook_decision")[-1]
    assert last.payload["verdict"] == "ALLOW"
    assert last.payload["lifted_for_person"] == ["HOOK_NO_ACTIVE_TASK"]
