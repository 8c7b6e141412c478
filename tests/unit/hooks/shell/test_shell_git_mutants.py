"""git: every row of the option tables and of the subcommand rules, one case each.

Each case names the table entry or rule it pins: deleting the entry (a subcommand,
a letter class, a long option, a safe ``-c`` prefix, a global flag, a writing option
of ``git branch``/``git tag``) or inverting the rule changes its verdict. Where the
table says how git reads a word, the case was checked against git itself.
"""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse


def _kind(command: str) -> str:
    return analyse(command).kind


def _writes(command: str) -> list[str]:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    return [w.path for w in result.writes]


# One read-only query per subcommand of the read-only table, and per letter class
# (flags, letters with a value, letters with an attached optional value) and per
# long option that is a table entry of its own.
READ_ONLY_ROWS = [
    "git status -s",
    "git status -uno",
    "git diff -R",
    "git diff -S foo",
    "git diff -M",
    "git diff -M50%",
    "git diff -2",
    "git diff -U5",
    "git diff --unified=5",
    "git log -m",
    "git log -S foo",
    "git log -M",
    "git log -U1",
    "git log -3",
    "git log --format=%h --max-parents=1 --min-parents=0",
    "git show",
    "git rev-list HEAD",
    "git whatchanged",
    "git rev-parse -q --verify HEAD",
    "git ls-files -s",
    "git ls-files -o -x '*.o'",
    "git ls-files --abbrev -s",
    "git ls-tree -r HEAD",
    "git ls-tree --format='%(path)' HEAD",
    "git ls-tree --abbrev HEAD",
    "git cat-file -t HEAD",
    "git blame -w a",
    "git blame -M a",
    "git grep -e foo",
    "git grep -i foo",
    "git grep -3 foo",
    "git grep --color foo",
    "git describe --tags",
    "git shortlog -sn",
    "git show-ref -q",
    "git merge-base -a A B",
    "git for-each-ref",
    "git count-objects -v",
    "git check-ignore -q a",
    "git check-attr -a a",
    "git var -l",
    "git cherry -v",
    "git cherry --abbrev",
    "git version",
    "git version --build-options",
    "git --version",
    "git --help",
    "git stash list",
    "git stash list -3",
    "git stash show",
    "git stash show -p",
    "git stash show -2",
    "git worktree list -v",
    "git worktree list --expire=now",
    "git reflog show -n 3",
    "git reflog show -3",
    "git reflog show --all",
    "git reflog show --format=%h",
    "git reflog list",
    "git notes list",
    "git notes show",
    "git config -l",
    "git config get user.name",
    "git config list",
    "git remote --verbose",
    "git remote show -n origin",
    "git remote get-url --push origin",
    "git replace -l --format=short",
    "git symbolic-ref -q HEAD",
    "git apply -v --check p.diff",
    "git apply --stat p.diff",
    "git apply --numstat p.diff",
    "git apply --summary p.diff",
]


@pytest.mark.parametrize("command", READ_ONLY_ROWS)
def test_each_row_of_the_read_only_tables_is_read_only(command: str) -> None:
    assert _kind(command) == ShellKind.READ_ONLY, analyse(command)


# Letters git does not know for these subcommands: the empty letter classes stay empty.
@pytest.mark.parametrize(
    "command",
    ["git status -x", "git push -x", "git branch -x", "git reflog show -x", "git stash show -x"],
)
def test_a_letter_no_class_lists_is_unclassified(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED, analyse(command)


# How git reads these options, checked with git: '-U'/'--unified' take a value only
# attached, '--format'/'--max-parents'/'--min-parents' only after '='. Read as taking
# the next word, '--output=F' would hide in the value while git truncates F.
@pytest.mark.parametrize(
    "command",
    [
        "git diff -U --output=o",
        "git diff --unified --output=o",
        "git show -U --output=o",
        "git log --unified --output=o",
        "git log --format --output=o",
        "git log --max-parents --output=o",
        "git log --min-parents --output=o",
        "git rev-list --format --output=o HEAD",
        "git stash list -U --output=o",
    ],
)
def test_an_option_git_reads_without_the_next_word_does_not_hide_output(command: str) -> None:
    assert _writes(command) == ["o"]


def test_reflog_format_does_not_take_the_next_word() -> None:
    # 'git reflog show --format --output=o' truncates o; the reflog's table has no
    # '--output', so the next word is an unknown option, not a format.
    assert _kind("git reflog show --format --output=o") == ShellKind.UNCLASSIFIED


# Writers' letter classes and long options.
WRITER_ROWS = [
    ("git add -v a", ShellKind.READ_ONLY),
    ("git add --chmod=+x a", ShellKind.READ_ONLY),
    ("git push -q", ShellKind.READ_ONLY),
    ("git push --push-option=x", ShellKind.READ_ONLY),
    ("git commit -q -m x", ShellKind.WRITES),
    ("git commit -uno -m x", ShellKind.WRITES),
    ("git commit --untracked-files -m x", ShellKind.WRITES),
    ("git restore -q a", ShellKind.WRITES),
    ("git restore -s HEAD a", ShellKind.WRITES),
    ("git checkout -q -- a", ShellKind.WRITES),
    ("git switch -q -c t", ShellKind.WRITES),
    ("git switch --quiet -c t", ShellKind.WRITES),
    ("git rm -q a", ShellKind.WRITES),
    ("git mv -v a b", ShellKind.WRITES),
    ("git reset -q", ShellKind.WRITES),
    ("git branch -v", ShellKind.READ_ONLY),
    ("git branch -u origin/main", ShellKind.WRITES),
    ("git tag -l", ShellKind.READ_ONLY),
    ("git tag -n", ShellKind.READ_ONLY),
    ("git tag -m msg v1", ShellKind.WRITES),
    ("git fetch -q", ShellKind.WRITES),
    ("git fetch --recurse-submodules", ShellKind.WRITES),
    ("git symbolic-ref -q HEAD", ShellKind.READ_ONLY),
    ("git replace -l", ShellKind.READ_ONLY),
]


@pytest.mark.parametrize(("command", "kind"), WRITER_ROWS)
def test_each_row_of_the_writers_tables_is_known(command: str, kind: str) -> None:
    assert _kind(command) == kind, analyse(command)


# 'git -c KEY=VALUE': each safe prefix is accepted, others are unclassified.
@pytest.mark.parametrize(
    "setting",
    [
        "user.name=x",
        "color.ui=never",
        "advice.detachedHead=false",
        "core.quotepath=off",
        "log.showSignature=false",
        "diff.renames=true",
        "diff.noprefix=true",
        "column.ui=never",
        "init.defaultBranch=main",
        "commit.gpgsign=false",
    ],
)
def test_each_safe_config_prefix_is_read_only(setting: str) -> None:
    assert _kind(f"git -c {setting} status") == ShellKind.READ_ONLY


@pytest.mark.parametrize(
    "setting",
    ["commit.gpgsign=true", "core.pager=x", "diff.external=x", "core.fsmonitor=x"],
)
def test_a_config_key_outside_the_safe_prefixes_is_unclassified(setting: str) -> None:
    assert _kind(f"git -c {setting} status") == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize(
    "flag",
    [
        "--no-pager",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-advice",
        "-P",
    ],
)
def test_each_global_flag_is_known(flag: str) -> None:
    assert _kind(f"git {flag} status") == ShellKind.READ_ONLY


@pytest.mark.parametrize("flag", ["--glob-pathspecs", "--icase-pathspecs"])
@pytest.mark.parametrize(
    "command", ["rm a", "mv a b", "restore a", "checkout -- a", "commit -m x -- a"]
)
def test_a_widening_pathspec_flag_makes_path_writers_unclassified(flag: str, command: str) -> None:
    assert _kind(f"git {flag} {command}") == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize("flag", ["--literal-pathspecs", "--noglob-pathspecs"])
def test_a_narrowing_pathspec_flag_keeps_the_paths(flag: str) -> None:
    assert _writes(f"git {flag} rm a") == ["a"]


# 'git branch'/'git tag': a writing option beside '--list' is still a write (the
# listing form is judged only without one; git versions where '-l' meant
# '--create-reflog' ran 'git branch -l -d x' as a delete).
@pytest.mark.parametrize(
    "options",
    [
        "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f",
        "--force", "--unset-upstream", "--no-track", "--track",
        "-u origin/main", "--set-upstream-to=origin/main", "-t x",
    ],
)  # fmt: skip
def test_a_writing_branch_option_beside_list_is_a_ref_write(options: str) -> None:
    assert _writes(f"git branch --list {options} topic") == [".git"]


@pytest.mark.parametrize(
    "options",
    ["-d", "--delete", "-f", "--force", "-a", "--annotate", "-m x", "--message=x",
     "-F f", "--file=f"],
)  # fmt: skip
def test_a_writing_tag_option_beside_list_is_a_ref_write(options: str) -> None:
    assert _writes(f"git tag --list {options} v1") == [".git"]


# The subcommands with a rule of their own, one case each.
SUBCOMMAND_ROWS = [
    ("git add a", ShellKind.READ_ONLY),
    ("git push origin", ShellKind.READ_ONLY),
    ("git fetch origin", ShellKind.WRITES),
    ("git commit -m x", ShellKind.WRITES),
    ("git restore a", ShellKind.WRITES),
    ("git checkout -- a", ShellKind.WRITES),
    ("git switch -c t", ShellKind.WRITES),
    ("git rm a", ShellKind.WRITES),
    ("git mv a b", ShellKind.WRITES),
    ("git reset", ShellKind.WRITES),
    ("git apply --check p", ShellKind.READ_ONLY),
    ("git branch t", ShellKind.WRITES),
    ("git tag v1", ShellKind.WRITES),
    ("git remote -v", ShellKind.READ_ONLY),
    ("git config --get user.name", ShellKind.READ_ONLY),
    ("git stash list", ShellKind.READ_ONLY),
    ("git worktree list", ShellKind.READ_ONLY),
    ("git reflog expire --all", ShellKind.WRITES),
    ("git reflog delete HEAD@{1}", ShellKind.WRITES),
    ("git notes list", ShellKind.READ_ONLY),
    ("git symbolic-ref HEAD refs/heads/x", ShellKind.WRITES),
    ("git replace a b", ShellKind.WRITES),
    ("git update-ref refs/heads/x HEAD", ShellKind.WRITES),
    ("git pack-refs --all", ShellKind.WRITES),
]


@pytest.mark.parametrize(("command", "kind"), SUBCOMMAND_ROWS)
def test_each_subcommand_rule_is_applied(command: str, kind: str) -> None:
    assert _kind(command) == kind, analyse(command)


@pytest.mark.parametrize("form", ["add", "copy", "append", "edit", "merge", "remove", "prune"])
def test_each_notes_form_that_writes_is_a_ref_write(form: str) -> None:
    assert _writes(f"git notes {form} x") == [".git"]


def test_commit_records_what_it_commits() -> None:
    result = analyse("git commit -m x -- a")
    assert result.kind == ShellKind.WRITES and result.writes == ()
    assert result.commits and result.commit_paths == ("a",)


# A glob after '-C' or '-c' is expanded by the shell before git reads it: 'git -C d* rm a'
# removes 'docs/a', not 'd*/a'.
@pytest.mark.parametrize(
    "command", ["git -C d* rm a", "git -C d* status", "git -c user.x* status", "git -C", "git -c"]
)
def test_a_global_option_value_must_be_a_literal_word(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED, analyse(command)


def test_a_quoted_global_option_value_is_literal() -> None:
    assert _writes("git -C 'd*' rm a") == ["d*/a"]
    assert _writes("git -C '' rm a") == ["a"]


def test_help_with_a_topic_runs_the_manual_viewer() -> None:
    # 'git --help status' runs 'man git-status' (or the viewer the configuration names),
    # like 'git help status'; 'git --help' alone prints git's usage.
    assert _kind("git --help status") == ShellKind.UNCLASSIFIED
    assert _kind("git --no-pager --help log") == ShellKind.UNCLASSIFIED
    assert _kind("git --help") == ShellKind.READ_ONLY
    assert _kind("git --version x") == ShellKind.READ_ONLY


# 'git rm' stages the removal; a commit in the same line commits it even with '--cached'
# (which leaves the file in the working tree).
@pytest.mark.parametrize(
    ("command", "every", "paths"),
    [
        ("git rm --cached CLAUDE.md && git commit -m x", False, ("CLAUDE.md",)),
        ("git rm CLAUDE.md && git commit -m x", False, ("CLAUDE.md",)),
        ("git rm --cached -r . && git commit -m x", True, ()),
        ("git rm -r --cached .claude/ && git commit -m x", True, ()),
        ("git rm -n CLAUDE.md && git commit -m x", False, ()),
        ("git rm --dry-run --cached CLAUDE.md && git commit -m x", False, ()),
    ],
)
def test_a_commit_records_what_git_rm_stages_in_the_same_line(
    command: str, every: bool, paths: tuple[str, ...]
) -> None:
    result = analyse(command)
    assert result.commits
    assert result.commit_all is every
    assert result.commit_paths == paths


def test_git_rm_without_paths_is_unclassified_and_cached_rm_writes_no_file() -> None:
    assert _kind("git rm") == ShellKind.UNCLASSIFIED
    assert _kind("git rm --cached") == ShellKind.UNCLASSIFIED
    assert _kind("git rm --cached a") == ShellKind.READ_ONLY
    assert _kind("git rm -n a") == ShellKind.READ_ONLY
