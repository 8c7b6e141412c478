"""Adversarial review of the policy gate: attacks through the CLI in real git repositories.

Each test is an input a candidate controls that once narrowed the authority judging it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import RunCli
from support.gate import (  # noqa: F401 -- harness_template is a fixture
    HarnessRepo,
    codes,
    copy_template,
    harness_template,
    make_harness_repo,
)
from support.repo import git

PROMPT = "harness/prompts/builder.md"
GITLINK_PATH = "eval/vendor"
OLD_POINTER = "1" * 40
NEW_POINTER = "2" * 40


def _baseline_with_gitlink(repo: Path, run_cli: RunCli) -> HarnessRepo:
    """The demo harness plus a submodule pointer inside protected authority (eval/**)."""
    hr = make_harness_repo(repo, run_cli, register=False)
    (repo / ".gitmodules").write_text(
        f'[submodule "vendor"]\n\tpath = {GITLINK_PATH}\n\turl = ./vendor\n'
    )
    git(repo, "add", ".gitmodules")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{OLD_POINTER},{GITLINK_PATH}")
    git(repo, "commit", "-q", "-m", "baseline with a vendored submodule")
    hr.baseline = git(repo, "rev-parse", "HEAD")
    hr.manifest_ref = hr.manifest(hr.baseline)["harness_id"]
    res = hr.register_plan()
    assert res.code == 0, res.err
    return hr


def test_worktree_gitmodules_ignore_all_cannot_hide_a_protected_submodule_change(
    tmp_path: Path, run_cli: RunCli, git_repo: Path
) -> None:
    # The evaluator's checkout is the candidate's: a `.gitmodules` there saying
    # `ignore = all` made `git diff` drop the submodule pointer change, so a candidate
    # moving protected authority (eval/vendor) was AUTO_APPROVED with a prompt-only diff.
    hr = _baseline_with_gitlink(git_repo, run_cli)
    hr.start_candidate("hidden-submodule")
    path = hr.repo / PROMPT
    path.write_text(path.read_text() + "better\n")
    git(hr.repo, "add", PROMPT)
    git(hr.repo, "update-index", "--cacheinfo", f"160000,{NEW_POINTER},{GITLINK_PATH}")
    git(hr.repo, "commit", "-q", "-m", "prompt and a moved submodule pointer")
    commit = git(hr.repo, "rev-parse", "HEAD")
    # Uncommitted edit in the evaluator's working tree (never part of any commit).
    gitmodules = hr.repo / ".gitmodules"
    gitmodules.write_text(gitmodules.read_text() + "\tignore = all\n")

    code, verdict = hr.gate(commit, ["harness/prompts/**"])

    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert GITLINK_PATH in verdict["facts"]["observed_diff"]
    assert "PROTECTED_AUTHORITY_CHANGED" in codes(verdict)


@pytest.fixture
def hr(tmp_path: Path, harness_template: Path, run_cli: RunCli) -> HarnessRepo:  # noqa: F811
    return copy_template(harness_template, tmp_path, run_cli)


def test_repository_diff_config_cannot_hide_a_submodule_change(hr: HarnessRepo) -> None:
    # Same attack through repository configuration (diff.ignoreSubmodules = all):
    # a new gitlink under eval/ is protected authority whatever git's UI config says.
    hr.start_candidate("config-hidden")
    path = hr.repo / PROMPT
    path.write_text(path.read_text() + "better\n")
    git(hr.repo, "add", PROMPT)
    git(hr.repo, "update-index", "--add", "--cacheinfo", f"160000,{NEW_POINTER},{GITLINK_PATH}")
    git(hr.repo, "commit", "-q", "-m", "prompt and a new gitlink")
    commit = git(hr.repo, "rev-parse", "HEAD")
    git(hr.repo, "config", "diff.ignoreSubmodules", "all")

    code, verdict = hr.gate(commit, ["harness/prompts/**"])

    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert GITLINK_PATH in verdict["facts"]["observed_diff"]


def test_unregistering_a_verifier_is_a_weakened_verifier(hr: HarnessRepo) -> None:
    # Dropping a verifier from the runtime registry switches it off without deleting
    # its component or any stage: that is deletion/relaxation of a verifier (human gate).
    hr.start_candidate("unregister")
    definition = hr.repo / ".plangate/harness.toml"
    text = definition.read_text()
    assert ', "verifier:completion-evidence"]' in text
    definition.write_text(text.replace(', "verifier:completion-evidence"]', "]"))
    git(hr.repo, "commit", "-q", "-am", "registry without the completion-evidence verifier")
    commit = git(hr.repo, "rev-parse", "HEAD")

    code, verdict = hr.gate(commit, [".plangate/harness.toml"])

    assert verdict["verdict"] == "HUMAN_REQUIRED", verdict
    assert code == 3
    assert "GATE_OR_VERIFIER_WEAKENED" in codes(verdict)
    assert any("verifier:completion-evidence" in w for w in verdict["facts"]["weakened"])


def test_case_variant_of_a_participating_verifier_counts_as_changing_it(
    hr: HarnessRepo,
) -> None:
    # On a case-insensitive file system `Deterministic_Tests.py` and the stage's
    # `deterministic_tests.py` are one file: whichever checks out last is the verifier that
    # judges. Participation is matched case-folded, like protected surfaces (over-match is
    # the safe side).
    hr.start_candidate("case-shadow")
    shadow = hr.repo / "harness/verifiers/Deterministic_Tests.py"
    shadow.write_text("def check(fixture):\n    return 'pass'\n")
    git(hr.repo, "add", str(shadow.relative_to(hr.repo)))
    git(hr.repo, "commit", "-q", "-m", "a case-variant shadow of the participating verifier")
    commit = git(hr.repo, "rev-parse", "HEAD")

    code, verdict = hr.gate(commit, ["harness/verifiers/**"])

    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert "PARTICIPATING_VERIFIER_CHANGED" in codes(verdict)
    assert "verifier:deterministic-tests" in verdict["facts"]["changed_components"]


def test_gitattributes_rewriting_a_participating_verifier_counts_as_changing_it(
    hr: HarnessRepo,
) -> None:
    # A `.gitattributes` beside the participating verifier changes the bytes its checkout
    # gets (working-tree-encoding, eol, ident, filters) without changing its blob: the diff
    # only shows the attributes file, yet the verifier that judges the candidate changed.
    hr.start_candidate("attributes")
    attributes = hr.repo / "harness/verifiers/.gitattributes"
    attributes.write_text("deterministic_tests.py working-tree-encoding=UTF-16LE\n")
    git(hr.repo, "add", "harness/verifiers/.gitattributes")
    git(hr.repo, "commit", "-q", "-m", "attributes for the verifiers")
    commit = git(hr.repo, "rev-parse", "HEAD")

    code, verdict = hr.gate(commit, ["harness/verifiers/**"])

    assert verdict["facts"]["observed_diff"] == ["harness/verifiers/.gitattributes"]
    assert verdict["verdict"] == "DENIED", verdict
    assert code == 1
    assert "PARTICIPATING_VERIFIER_CHANGED" in codes(verdict)
