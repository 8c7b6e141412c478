"""Commands that create, move or delete refs write git's directory, never read-only.

A ref other than the current branch's new commit (judged as a commit) is part of what
PlanGate trusts: the trust branch's tip holds the trust root, so moving it back (to a tip
before a signer was revoked) or forward changes what local checks accept. Each such
command is a write of ``.git`` (denied by the hook as ``HOOK_GIT_INTERNALS``).
"""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse

REF_WRITERS = [
    # branches: force, move, copy, delete, create, upstream (in .git/config)
    "git branch -f main HEAD~1",
    "git branch --force main HEAD~1",
    "git branch -M topic main",
    "git branch -m topic",
    "git branch --move a b",
    "git branch -c main copy",
    "git branch -C topic main",
    "git branch -d topic",
    "git branch -D main",
    "git branch --delete topic",
    "git branch -rd origin/main",
    "git branch topic",
    "git branch topic HEAD~1",
    "git branch -u origin/main",
    "git branch --set-upstream-to=origin/main",
    "git branch --unset-upstream",
    "git branch --list -f main HEAD~1",
    "git branch -a x",
    "git checkout -b topic",
    "git checkout -B main",
    "git switch -c topic",
    "git switch -C main",
    # fetch and push into local refs
    "git fetch . +HEAD~1:main",
    "git fetch . HEAD:topic",
    "git fetch origin main:main",
    "git fetch origin +refs/heads/*:refs/heads/*",
    "git fetch",
    "git fetch origin",
    "git fetch --prune",
    "git fetch --dry-run origin",
    "git push . +HEAD~1:main",
    "git push . HEAD:refs/heads/topic",
    "git push . :topic",
    "git push --delete . topic",
    "git push -u origin feature",
    "git push --set-upstream origin feature",
    # tags
    "git tag v1",
    "git tag v1 HEAD~1",
    "git tag -f v1",
    "git tag -d v1",
    "git tag -a v1 -m msg",
    "git tag -m msg v1",
    "git tag -l -d v1",
    # plumbing and other ref stores
    "git update-ref refs/heads/main HEAD~1",
    "git update-ref -d refs/heads/topic",
    "git symbolic-ref HEAD refs/heads/other",
    "git symbolic-ref -d HEAD",
    "git replace HEAD HEAD~1",
    "git replace -d HEAD",
    "git replace --graft HEAD",
    "git notes add -m x",
    "git notes remove HEAD",
    "git reflog expire --expire=now --all",
    "git reflog delete HEAD@{1}",
    "git pack-refs --all",
    # a reset without paths moves the current branch (or rewrites ORIG_HEAD)
    "git reset HEAD~1",
    "git reset --soft HEAD~3",
    "git reset",
    "git reset HEAD --",
    "git reset a.txt",
]


@pytest.mark.parametrize("command", REF_WRITERS)
def test_a_command_that_moves_a_ref_writes_the_git_directory(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == [".git"]


@pytest.mark.parametrize(
    ("command", "git_dir"),
    [("git -C sub branch -f main HEAD", "sub/.git"), ("cd sub && git tag v1", "sub/.git")],
)
def test_the_git_directory_is_the_one_of_the_directory_git_runs_in(
    command: str, git_dir: str
) -> None:
    assert [w.path for w in analyse(command).writes] == [git_dir]


def test_a_ref_write_in_an_unknown_directory_is_unclassified() -> None:
    assert analyse("cd src; git branch -f main HEAD~1").kind == ShellKind.UNCLASSIFIED


LISTINGS = [
    "git branch",
    "git branch -a",
    "git branch -r -v",
    "git branch --list",
    "git branch --list 'topic*'",
    "git branch -l main",
    "git branch --show-current",
    "git tag",
    "git tag -l",
    "git tag --list 'v*'",
    "git tag -n",
    "git symbolic-ref HEAD",
    "git symbolic-ref --short HEAD",
    "git replace -l",
    "git notes list",
    "git reflog show",
    "git reset -- a.txt",
    "git reset HEAD -- a.txt",
    "git reset HEAD a.txt b.txt",
    "git push origin HEAD",
    "git push",
]


@pytest.mark.parametrize("command", LISTINGS)
def test_listing_forms_and_index_only_resets_stay_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize(
    "command",
    ["git notes", "git reflog", "git notes --ref=x add", "git update-ref $REF HEAD"],
)
def test_ref_forms_the_classifier_does_not_read_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)
