"""``plangate ci codeowners``: the paths ``ci check`` hands to a human, as CODEOWNERS lines,
read from a commit of a real repository."""

from __future__ import annotations

from pathlib import Path

from plangate.delivery.ci_report import codeowners, codeowners_pattern
from support.delivery import define_surfaces
from support.repo import commit_all

POLICY = """\
[[taskless]]
name = "docs"
paths = ["docs/**"]
human = false

[[taskless]]
name = "dependencies"
paths = ["requirements*.txt"]
"""


def test_the_suggestion_names_the_surfaces_the_policy_and_its_human_rules(
    git_repo: Path, run_cli
) -> None:
    define_surfaces(git_repo)
    (git_repo / ".plangate" / "policy.toml").write_text(POLICY)
    commit_all(git_repo, "policy")
    result = run_cli(git_repo, "ci", "codeowners", "--owner", "@team/reviewers")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "**/AGENTS.md @team/reviewers" in lines
    assert "/.github/workflows/** @team/reviewers" in lines
    assert "/.plangate/policy.toml @team/reviewers" in lines
    assert "/requirements*.txt @team/reviewers" in lines  # human = true
    assert "/docs/** @team/reviewers" not in lines  # human = false


def test_it_reads_the_commit_it_is_given_not_the_working_tree(git_repo: Path, run_cli) -> None:
    base = define_surfaces(git_repo)
    (git_repo / ".plangate" / "policy.toml").write_text(POLICY)
    commit_all(git_repo, "policy")
    at_base = run_cli(git_repo, "ci", "codeowners", "--owner", "@a", "--at", base)
    assert at_base.code == 0, at_base.err
    assert "/requirements*.txt @a" not in at_base.out.splitlines()


def test_a_bad_owner_or_an_unreadable_policy_is_refused(git_repo: Path, run_cli) -> None:
    define_surfaces(git_repo)
    bad_owner = run_cli(git_repo, "ci", "codeowners", "--owner", "team\n* @evil")
    assert bad_owner.code == 2 and "CI_CODEOWNERS_OWNER" in bad_owner.err
    (git_repo / ".plangate" / "policy.toml").write_text("owners = 1\n")
    commit_all(git_repo, "bad policy")
    bad_policy = run_cli(git_repo, "ci", "codeowners", "--owner", "@a")
    assert bad_policy.code == 1 and "PR_POLICY_UNKNOWN_KEY" in bad_policy.err


def test_a_pattern_codeowners_cannot_say_is_left_for_a_person() -> None:
    assert codeowners_pattern(".plangate/**") == "/.plangate/**"
    assert codeowners_pattern("**/AGENTS.md") == "**/AGENTS.md"
    for unsayable in ("#notes", "docs/a b.md", "!x", "[ab].py"):
        assert codeowners_pattern(unsayable) is None
    text = codeowners([("s", ("docs/a b.md", "x.py", "x.py"))], "@o")
    assert "# not expressible in CODEOWNERS, review by hand: 'docs/a b.md'" in text
    assert text.count("/x.py @o") == 1
