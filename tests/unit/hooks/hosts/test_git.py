"""git hooks adapter: every failure stops the commit or push with exit 1."""

from __future__ import annotations

from pathlib import Path

from plangate.hooks.hosts.git import pre_push, pushed_paths
from support.repo import git


def test_malformed_pre_push_input_stops_the_push(git_repo: Path) -> None:
    output = pre_push(git_repo, b"only three words\n", {})
    assert output.exit_code == 1
    assert "HOOK_PUSH_INPUT_INVALID" in output.stderr


def test_deleting_a_remote_ref_changes_no_file(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    assert pushed_paths(git_repo, f"(delete) {'0' * 40} refs/heads/x {head}\n".encode()) == []
