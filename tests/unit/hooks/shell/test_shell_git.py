"""git: subcommands with full option tables; hook-skipping flags reported."""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse

READ_ONLY = [
    "git status",
    "git status -sb",
    "git status --porcelain=v1",
    "git diff",
    "git diff --cached",
    "git diff --stat HEAD~1",
    "git diff --name-only main...HEAD",
    "git log --oneline -5",
    "git log --format='%h %s' -n 3",
    "git show HEAD --stat",
    "git rev-parse --show-toplevel",
    "git rev-parse --abbrev-ref HEAD",
    "git ls-files",
    "git branch -a",
    "git branch --show-current",
    "git remote -v",
    "git remote get-url origin",
    "git blame -L 1,5 a",
    "git grep -n foo",
    "git config --get user.name",
    "git config --list",
    "git stash list",
    "git worktree list",
    "git add -A",
    "git reset -- a",
    "git reset HEAD a b",
    "git branch --list 'topic*'",
    "git tag",
    "git tag -l 'v*'",
    "git symbolic-ref HEAD",
    "git symbolic-ref --short -q HEAD",
    "git add src/a.py",
    "git push",
    "git -C sub status",
    "git --no-pager log -1",
    "git apply --check p.diff",
    "git -c color.ui=always diff",
]
UNCLASSIFIED = [
    "git reset --har",
    "git reset --hard",
    "git reset --merge",
    "git apply --stat --appl x",
    "git apply p.diff",
    "git checkout HEAD --",
    "git checkout main",
    "git checkout -b t origin/main",
    "git remote -v add x y",
    "git remote add x y",
    "git config user.name x",
    "git diff --ext-diff",
    "git diff --textconv",
    "git grep -O foo",
    "git grep --open-files-in-pager foo",
    "git log --show-signature",
    "git fetch --upload-pack=x",
    "git push --receive-pack=x",
    "git push --exec=x",
    "git add --pathspec-from-file=x",
    "git restore --pathspec-from-file=x",
    "git commit --pathspec-from-file=x",
    "git stash",
    "git stash pop",
    "git pull",
    "git merge x",
    "git rebase main",
    "git clean -fd",
    "git -c core.pager=x log",
    "git -c alias.x=!sh x",
    "git --git-dir=x status",
    "git --work-tree=x status",
    "git --exec-path=x status",
    "git commit -S -m x",
    "git tag -s v1",
    "git commit -e",
    "git help log",
    "git rm 'src/*'",
    "git restore :/src",
    "git switch main",
    "git config",
]
WRITES = [
    ("git rm a", ["a"]),
    ("git mv a b", ["a", "b"]),
    ("git restore a", ["a"]),
    ("git checkout -- a b", ["a", "b"]),
    ("git checkout HEAD~1 -- a", ["a"]),
    ("git restore --source=HEAD~1 --worktree a", ["a"]),
    ("git diff --output=o", ["o"]),
    ("git -C sub rm a", ["sub/a"]),
]
SKIPS = [
    "git commit --no-verify -m x",
    "git commit -n -m x",
    "git commit -nm x",
    "git commit -anm x",
    "git commit -m x -n",
    "git commit --no-post-rewrite -m x",
    "git push --no-verify",
    "git push origin HEAD --no-verify",
    "git -c core.hooksPath=/dev/null commit -m x",
    "git -c core.hooksPath= push",
    "git -c CORE.HOOKSPATH=x commit -m y",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_git_queries_are_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize("command", UNCLASSIFIED)
def test_git_forms_that_rewrite_run_or_redirect_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


@pytest.mark.parametrize(("command", "paths"), WRITES)
def test_git_writers_name_their_paths(command: str, paths: list[str]) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == paths


@pytest.mark.parametrize("command", SKIPS)
def test_hook_skipping_flags_are_reported(command: str) -> None:
    assert analyse(command).skips_hooks, analyse(command)


@pytest.mark.parametrize(
    "command", ["git commit -m 'n in message'", "git push -n", "git commit -m -n"]
)
def test_n_as_a_value_or_push_dry_run_is_not_skipping(command: str) -> None:
    assert not analyse(command).skips_hooks


def test_commit_all_and_paths_are_reported() -> None:
    result = analyse("git commit -am x")
    assert result.commits and result.commit_all
    assert analyse("git commit -m x -- CLAUDE.md").commit_paths == ("CLAUDE.md",)
