"""git hooks adapter: every failure stops the commit or push with exit 1."""

from __future__ import annotations

from pathlib import Path

from plangate.hooks.hosts.git import framework_paths, pre_push, pushed_paths
from support.repo import git


def test_malformed_pre_push_input_stops_the_push(git_repo: Path) -> None:
    output = pre_push(git_repo, b"only three words\n", {})
    assert output.exit_code == 1
    assert "HOOK_PUSH_INPUT_INVALID" in output.stderr


def test_deleting_a_remote_ref_changes_no_file(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    assert pushed_paths(git_repo, f"(delete) {'0' * 40} refs/heads/x {head}\n".encode()) == []


def _remote_with_two_branches(repo: Path, tmp_path: Path) -> None:
    """origin holds ``x`` (changes x.txt) and ``y`` (changes y.txt), both from main;
    the local branch merges both and adds c.txt: it meets the remotes at two commits."""
    remote = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    for name in ("x", "y"):
        git(repo, "checkout", "-q", "-b", name, "main")
        (repo / f"{name}.txt").write_text(name)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", name)
        git(repo, "push", "-q", "origin", name)
    git(repo, "checkout", "-q", "-b", "feature", "x")
    git(repo, "merge", "-q", "--no-edit", "y")
    (repo / "c.txt").write_text("c")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "c")


def test_new_branch_paths_are_the_union_over_every_boundary(git_repo: Path, tmp_path: Path) -> None:
    _remote_with_two_branches(git_repo, tmp_path)
    head = git(git_repo, "rev-parse", "HEAD")
    line = f"refs/heads/feature {head} refs/heads/feature {'0' * 40}\n".encode()
    # Against x the branch brings y.txt, against y it brings x.txt: both count.
    assert set(pushed_paths(git_repo, line)) >= {"c.txt", "x.txt", "y.txt"}


def test_the_pre_commit_framework_range_is_read_from_its_variables(git_repo: Path) -> None:
    base = git(git_repo, "rev-parse", "HEAD")
    (git_repo / "a.txt").write_text("a")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "a")
    head = git(git_repo, "rev-parse", "HEAD")
    env = {"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": head}
    assert framework_paths(git_repo, env) == ["a.txt"]
    assert framework_paths(git_repo, {}) is None


def test_framework_push_without_a_range_judges_the_local_branch_as_new(git_repo: Path) -> None:
    (git_repo / "a.txt").write_text("a")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "a")
    paths = framework_paths(git_repo, {"PRE_COMMIT_REMOTE_NAME": "origin"})
    assert paths is not None and "a.txt" in paths


def test_framework_from_ref_without_to_ref_stops_the_push(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    output = pre_push(git_repo, b"", {"PRE_COMMIT_FROM_REF": head})
    assert output.exit_code == 1
    assert "HOOK_PUSH_INPUT_INVALID" in output.stderr


def test_framework_range_reaches_the_decision(git_repo: Path) -> None:
    from support.hooks import init_ledger

    init_ledger(git_repo)
    base = git(git_repo, "rev-parse", "HEAD")
    (git_repo / "CLAUDE.md").write_text("agent rules\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "surface")
    head = git(git_repo, "rev-parse", "HEAD")
    output = pre_push(git_repo, b"", {"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": head})
    assert output.exit_code == 1
    assert "HOOK_PROTECTED_SURFACE" in output.stderr
    assert pre_push(git_repo, b"", {}).exit_code == 0  # nothing presented, nothing pushed
