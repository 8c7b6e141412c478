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
    [
        "git status -x",
        "git status -x a",
        "git push -x",
        "git push -x origin",
        "git branch -x",
        "git reflog show -x",
        "git stash show -x",
    ],
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
        "log.date=iso",
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


def _line(command: str) -> tuple[bool, tuple[str, ...]]:
    result = analyse(command)
    assert result.commits, result
    return result.commit_all, result.commit_paths


# 'git add': with a pathspec, '-A', '-u' and '--no-ignore-removal' stage only what the
# pathspec names (checked with git); without one, every change.
@pytest.mark.parametrize("option", ["-A", "--all", "-u", "--update", "--no-ignore-removal"])
def test_add_with_a_widening_option_stages_what_its_pathspec_names(option: str) -> None:
    assert _line(f"git add {option} a && git commit -m x") == (False, ("a",))
    assert _line(f"git add {option} && git commit -m x") == (True, ())


def test_add_force_is_unclassified_only_when_its_pathspec_names_more_than_a_file() -> None:
    assert _line("git add -f a && git commit -m x") == (False, ("a",))
    assert _kind("git add --force .") == ShellKind.UNCLASSIFIED
    assert _kind("git add -f") == ShellKind.UNCLASSIFIED
    assert _kind("git add . && git add -f a") == ShellKind.READ_ONLY


def test_an_earlier_stage_everything_is_kept_by_a_later_add() -> None:
    assert _line("git add . && git add a && git commit -m x") == (True, ("a",))


@pytest.mark.parametrize(
    ("pathspec", "every"),
    [
        ("a", False),
        (".", True),
        ("src/", True),
        ("':(icase)a'", True),
        ("'*.md'", True),
        ("'a?'", True),
        ("'[ab]'", True),
        ("a]", True),
    ],
)
def test_a_pathspec_that_names_more_than_its_text_stages_every_change(
    pathspec: str, every: bool
) -> None:
    assert _line(f"git add {pathspec} && git commit -m x")[0] is every


# '--output' of any table is a write of its file; a device sink is none.
def test_output_is_a_write_and_dev_null_is_not() -> None:
    assert _writes("git log --output=o") == ["o"]
    assert _kind("git diff --output=/dev/null") == ShellKind.READ_ONLY


@pytest.mark.parametrize("command", ["git rm ':(icase)a'", "git rm 'a*'", "git mv ':/a' b"])
def test_a_writer_with_a_glob_or_pathspec_magic_is_unclassified(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED


# Remotes: a name (or '.') is read from the guarded configuration; a path or URL runs
# another repository's hooks or transport.
@pytest.mark.parametrize("remote", ["./r", "r/x", "host:r", ".r", "'~r'", "-r", "../r", "file:///r"])
def test_a_push_to_a_path_or_url_is_unclassified(remote: str) -> None:
    assert _kind(f"git push -- {remote} HEAD") == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize("remote", ["origin", "up-stream", "a.b"])
def test_a_push_to_a_remote_name_is_read_only(remote: str) -> None:
    assert _kind(f"git push {remote} HEAD:main") == ShellKind.READ_ONLY


def test_push_checks_the_repository_operand_only() -> None:
    # The second operand is a refspec ('HEAD:refs/x' holds ':' and '/').
    assert _kind("git push origin HEAD:refs/heads/x") == ShellKind.READ_ONLY
    assert _kind("git push origin ./x") == ShellKind.READ_ONLY


def test_push_into_this_repository_or_setting_upstream_writes_the_git_directory() -> None:
    assert _writes("git push . HEAD:x") == [".git"]
    assert _writes("git push -u origin x") == [".git"]
    assert _writes("git push --set-upstream origin x") == [".git"]
    assert _kind("git push origin .") == ShellKind.READ_ONLY
    assert _kind("git push origin x") == ShellKind.READ_ONLY


def test_push_no_verify_is_reported_as_skipping_hooks() -> None:
    assert analyse("git push --no-verify origin").skips_hooks
    assert not analyse("git push origin").skips_hooks


def test_fetch_checks_every_repository_only_with_multiple() -> None:
    assert _writes("git fetch origin ./x") == [".git"]  # './x' is a refspec here
    assert _kind("git fetch --multiple origin ./x") == ShellKind.UNCLASSIFIED
    assert _kind("git fetch ./x") == ShellKind.UNCLASSIFIED
    assert _kind("git fetch --upload-pack=x origin") == ShellKind.UNCLASSIFIED


# 'git commit'.
@pytest.mark.parametrize(
    "command", ["git commit -n -m x", "git commit --no-verify -m x", "git commit --no-post-rewrite"]
)
def test_commit_options_that_skip_hooks_are_reported(command: str) -> None:
    result = analyse(command)
    assert result.skips_hooks and not result.commits


@pytest.mark.parametrize("command", ["git commit -t f", "git commit --template=f"])
def test_commit_with_a_template_is_unclassified(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize("option", ["-a", "--all"])
def test_commit_all_is_recorded(option: str) -> None:
    assert _line(f"git commit {option} -m x") == (True, ())


def test_commit_paths_are_recorded_relative_to_git_s_directory() -> None:
    assert _line("git -C d commit -m x a b") == (False, ("d/a", "d/b"))
    assert _kind("cd $X; git commit -m x a") == ShellKind.UNCLASSIFIED
    assert _kind("git commit -m x a*") == ShellKind.UNCLASSIFIED
    result = analyse("git commit --all -m x && git commit -m y")
    assert result.commit_all


# 'git restore'.
def test_restore_writes_its_paths_and_stages_with_staged() -> None:
    result = analyse("git restore a")
    assert [(w.path, w.relinks) for w in result.writes] == [("a", True)]
    assert _kind("git restore") == ShellKind.UNCLASSIFIED
    assert _kind("git restore 'a*'") == ShellKind.UNCLASSIFIED
    assert analyse("git restore -S a").kind == ShellKind.READ_ONLY
    assert analyse("git restore --staged a").kind == ShellKind.READ_ONLY
    assert _writes("git restore -S -W a") == ["a"]
    assert _writes("git restore --staged --worktree a") == ["a"]
    assert _line("git restore --staged a && git commit -m x") == (False, ("a",))
    assert _line("git restore -S a && git commit -m x") == (False, ("a",))
    assert _line("git restore a && git commit -m x") == (False, ())


# 'git checkout'.
def test_checkout_paths_after_double_dash_are_written() -> None:
    result = analyse("git checkout HEAD -- a b")
    assert [(w.path, w.relinks) for w in result.writes] == [("a", True), ("b", True)]
    assert _kind("git checkout -b x -- a") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout -B x -- a") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout a b -- c") == ShellKind.UNCLASSIFIED
    assert _writes("git checkout a -- c") == ["c"]
    assert _kind("git checkout --") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout -x -- a") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout -- 'a*'") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout -- $X") == ShellKind.UNCLASSIFIED
    assert _writes("git checkout -- -a") == ["-a"]


def test_checkout_of_a_new_branch_writes_the_git_directory_only() -> None:
    assert _writes("git checkout -b x") == [".git"]
    assert _writes("git checkout -B x") == [".git"]
    assert _kind("git checkout -b x main") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout -q main") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout") == ShellKind.UNCLASSIFIED
    assert _kind("git checkout -x") == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize("option", ["-c x", "-C x", "--create x", "--force-create x"])
def test_switch_to_a_new_branch_writes_the_git_directory(option: str) -> None:
    assert _writes(f"git switch {option}") == [".git"]
    assert _kind(f"git switch {option} main") == ShellKind.UNCLASSIFIED


def test_switch_without_a_new_branch_is_unclassified() -> None:
    assert _kind("git switch -q") == ShellKind.UNCLASSIFIED
    assert _kind("git switch -x") == ShellKind.UNCLASSIFIED


# 'git rm', 'git mv'.
def test_rm_writes_each_path_unless_cached_or_dry_run() -> None:
    result = analyse("git rm a b")
    assert [(w.path, w.relinks) for w in result.writes] == [("a", True), ("b", True)]
    assert _kind("git rm --cached a") == ShellKind.READ_ONLY
    assert _kind("git rm --dry-run a") == ShellKind.READ_ONLY
    assert _kind("git rm -x a") == ShellKind.UNCLASSIFIED


def test_mv_writes_sources_and_destination_and_records_the_move_into_it() -> None:
    result = analyse("git mv a b/ d")
    assert [(w.path, w.relinks) for w in result.writes] == [
        ("a", True),
        ("b/", True),
        ("d", True),
    ]
    assert [(d, base) for d, base, _step in result.into_dir] == [("d", "a"), ("d", "b")]
    assert _kind("git mv a") == ShellKind.UNCLASSIFIED
    assert _kind("git mv") == ShellKind.UNCLASSIFIED
    assert _kind("git mv -x a b") == ShellKind.UNCLASSIFIED
    assert _kind("git mv 'a*' b") == ShellKind.UNCLASSIFIED


# 'git reset'.
@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("git reset -- a b", ("a", "b")),
        ("git reset HEAD -- a", ("a",)),
        ("git reset HEAD~1 a b", ("a", "b")),
        ("git reset -q HEAD -- a", ("a",)),
        ("git reset -- a -- b", ("a", "--", "b")),
    ],
)
def test_reset_with_paths_stages_them(command: str, paths: tuple[str, ...]) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY
    assert _line(f"{command} && git commit -m x") == (False, paths)


@pytest.mark.parametrize(
    "command", ["git reset", "git reset HEAD~1", "git reset --", "git reset a"]
)
def test_reset_without_paths_moves_the_branch(command: str) -> None:
    assert _writes(command) == [".git"]


def test_reset_with_an_unknown_option_or_magic_is_unclassified() -> None:
    assert _kind("git reset --hard") == ShellKind.UNCLASSIFIED
    assert _kind("git reset -- ':(icase)a'") == ShellKind.UNCLASSIFIED


# 'git apply' only checks.
@pytest.mark.parametrize("command", ["git apply p", "git apply -v p", "git apply -x p"])
def test_apply_without_a_checking_option_is_unclassified(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED


# 'git branch', 'git tag': listing forms.
def test_branch_and_tag_list_only_without_operands_or_with_list() -> None:
    assert _kind("git branch -l 'a*'") == ShellKind.READ_ONLY
    assert _kind("git branch --list a") == ShellKind.READ_ONLY
    assert _kind("git tag -l a") == ShellKind.READ_ONLY
    assert _kind("git tag --list a") == ShellKind.READ_ONLY
    assert _writes("git branch a") == [".git"]
    assert _writes("git tag a") == [".git"]
    assert _kind("git branch -x a") == ShellKind.UNCLASSIFIED
    assert _kind("git tag -x a") == ShellKind.UNCLASSIFIED


# 'git symbolic-ref', 'git replace'.
@pytest.mark.parametrize(
    "command",
    [
        "git symbolic-ref HEAD refs/heads/x",
        "git symbolic-ref -d HEAD",
        "git symbolic-ref --delete HEAD",
        "git symbolic-ref -m why HEAD refs/heads/x",
        "git symbolic-ref -m why HEAD",
        "git symbolic-ref",
    ],
)
def test_symbolic_ref_with_a_target_or_delete_writes(command: str) -> None:
    assert _writes(command) == [".git"]


def test_symbolic_ref_with_one_name_reads() -> None:
    assert _kind("git symbolic-ref HEAD") == ShellKind.READ_ONLY
    assert _kind("git symbolic-ref -q HEAD") == ShellKind.READ_ONLY


def test_symbolic_ref_m_takes_the_reason_and_is_judged_a_write() -> None:
    # '-m REASON' takes the next word (checked with git: 'git symbolic-ref -m why HEAD'
    # prints HEAD's target); any '-m' is judged a write, with one name too.
    assert _writes("git symbolic-ref -m why HEAD") == [".git"]
    assert _writes("git symbolic-ref -m why") == [".git"]
    assert _kind("git symbolic-ref -x HEAD") == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize(
    "command",
    [
        "git replace a b",
        "git replace -l -f a b",
        "git replace --list --force",
        "git replace -l -d a",
        "git replace --list --delete a",
        "git replace -d a",
    ],
)
def test_replace_other_than_a_plain_listing_writes(command: str) -> None:
    assert _writes(command) == [".git"]


def test_replace_listing_reads() -> None:
    assert _kind("git replace --list 'a*'") == ShellKind.READ_ONLY
    assert _kind("git replace -x") == ShellKind.UNCLASSIFIED


# 'update-ref', 'pack-refs', and the forms of 'reflog'/'notes' that write.
@pytest.mark.parametrize(
    "command",
    ["git update-ref $R HEAD", "git update-ref refs/* HEAD", "git reflog expire $X"],
)
def test_a_ref_writer_with_a_word_that_is_not_literal_is_unclassified(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED


def test_a_ref_write_is_git_s_directory_kept_whole() -> None:
    (write,) = analyse("git update-ref refs/heads/x HEAD").writes
    assert (write.path, write.keeps_contents, write.relinks) == (".git", True, False)
    (moved,) = analyse("git -C d pack-refs").writes
    assert moved.path == "d/.git"


def test_reflog_forms() -> None:
    assert _writes("git reflog expire --all") == [".git"]
    assert _writes("git reflog delete x") == [".git"]
    assert _kind("git reflog show x") == ShellKind.READ_ONLY
    assert _kind("git reflog show -x") == ShellKind.UNCLASSIFIED
    assert _kind("git reflog list") == ShellKind.READ_ONLY
    assert _kind("git reflog list -x") == ShellKind.UNCLASSIFIED
    assert _kind("git reflog exists x") == ShellKind.UNCLASSIFIED
    assert _kind("git reflog") == ShellKind.UNCLASSIFIED
    assert _kind("git reflog $X") == ShellKind.UNCLASSIFIED


def test_notes_forms() -> None:
    assert _kind("git notes show x") == ShellKind.READ_ONLY
    assert _kind("git notes list x") == ShellKind.READ_ONLY
    assert _kind("git notes list -x") == ShellKind.UNCLASSIFIED
    assert _kind("git notes get-ref") == ShellKind.UNCLASSIFIED


def test_stash_and_worktree_forms() -> None:
    assert _kind("git stash list --oneline") == ShellKind.READ_ONLY
    assert _kind("git stash show --stat") == ShellKind.READ_ONLY
    assert _kind("git stash show --oneline") == ShellKind.UNCLASSIFIED
    assert _kind("git worktree list --porcelain") == ShellKind.READ_ONLY
    assert _kind("git worktree add x") == ShellKind.UNCLASSIFIED
    assert _kind("git stash drop") == ShellKind.UNCLASSIFIED


# 'git remote'.
def test_remote_queries_name_exactly_one_remote() -> None:
    assert _kind("git remote show origin") == ShellKind.READ_ONLY
    assert _kind("git remote get-url origin") == ShellKind.READ_ONLY
    assert _kind("git remote get-url --all origin") == ShellKind.READ_ONLY
    assert _kind("git remote show -n origin") == ShellKind.READ_ONLY
    assert _kind("git remote show") == ShellKind.UNCLASSIFIED
    assert _kind("git remote get-url a b") == ShellKind.UNCLASSIFIED
    assert _kind("git remote show -x origin") == ShellKind.UNCLASSIFIED
    assert _kind("git remote get-url ./r") == ShellKind.UNCLASSIFIED
    assert _kind("git remote -v show") == ShellKind.UNCLASSIFIED


def test_remote_without_a_subcommand_lists() -> None:
    assert _kind("git remote") == ShellKind.READ_ONLY
    assert _kind("git remote -v") == ShellKind.READ_ONLY
    assert _kind("git remote -x") == ShellKind.UNCLASSIFIED
    assert _kind("git remote rename a b") == ShellKind.UNCLASSIFIED


# 'git config'.
@pytest.mark.parametrize(
    "command",
    [
        "git config get user.name",
        "git config list",
        "git config list --show-origin",
        "git config -l",
        "git config --list",
        "git config --get a.b",
        "git config --get-all a.b",
        "git config --get-regexp 'a.*'",
    ],
)
def test_config_reads(command: str) -> None:
    assert _kind(command) == ShellKind.READ_ONLY


@pytest.mark.parametrize(
    "command",
    [
        "git config a.b c",
        "git config set a.b c",
        "git config --local a.b c",
        "git config get -x",
        "git config list --add",
        "git config --bogus",
        "git config",
    ],
)
def test_config_that_writes_or_is_unknown_is_unclassified(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED


# Global options.
def test_global_options_before_the_subcommand() -> None:
    assert _writes("git -C a -C b rm x") == ["a/b/x"]
    assert _writes("git -c user.name=x -C d rm x") == ["d/x"]
    assert _writes("git --no-pager -C d rm x") == ["d/x"]
    assert _kind("git -C ~/r rm x") == ShellKind.UNCLASSIFIED
    assert _kind("git -C $D status") == ShellKind.UNCLASSIFIED
    assert _kind("git -c $S status") == ShellKind.UNCLASSIFIED
    assert _kind("git $X status") == ShellKind.UNCLASSIFIED
    assert _kind("git 'st*'") == ShellKind.UNCLASSIFIED
    assert _kind("git") == ShellKind.UNCLASSIFIED
    assert _kind("git --no-pager") == ShellKind.UNCLASSIFIED
    assert _kind("git -c user.name=x") == ShellKind.UNCLASSIFIED
    assert _kind("git --bare status") == ShellKind.UNCLASSIFIED
    assert _kind("git frobnicate") == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize(
    "setting", ["core.hooksPath=x", "core.hooks_path=x", "CORE.HOOKSPATH=", "x.hookspath=y"]
)
def test_a_hooks_path_setting_skips_hooks(setting: str) -> None:
    result = analyse(f"git -c {setting} status")
    # Reported as skipping hooks (its own reason), not also as an unknown setting.
    assert result.skips_hooks and not result.problems


def _paths_written(command: str) -> list[str]:
    return [w.path for w in analyse(command).writes]


def test_the_directory_git_runs_in_does_not_outlive_the_command() -> None:
    assert _writes("git -C d status; git rm a") == ["a"]
    assert _paths_written("git -C d bogus; git rm a") == ["a"]
    assert _paths_written("git --icase-pathspecs -C d rm a; git rm b") == ["b"]


# A commit's pathspec is matched by git (quoted or not): one that names more than its
# text is judged with every change ('git commit -m x -- "[C]LAUDE.md"' commits CLAUDE.md).
@pytest.mark.parametrize("pathspec", ["'[C]LAUDE.md'", "'CLAUDE.m?'", "'*.md'", ".", "docs/"])
def test_a_commit_pathspec_that_names_more_is_judged_with_every_change(pathspec: str) -> None:
    assert _line(f"git commit -m x -- {pathspec}") == (True, ())
    assert _line(f"git commit -m x -- a {pathspec}") == (True, ("a",))


def test_an_empty_pathspec_records_no_path() -> None:
    # git refuses it ('empty string is not a valid pathspec'); the classifier records no
    # path named '' and judges the commit with every change.
    assert _line("git commit -m x -- ''") == (True, ())
    assert _line("git add '' && git commit -m x") == (True, ())


# Verifying a signature runs gpg, like 'git log --show-signature' (checked with git: a
# commit with a 'gpgsig' header makes 'git log --format=%G?' and
# 'git -c log.showSignature=true log' run gpg); '--signed' pushes sign with gpg.
@pytest.mark.parametrize(
    "command",
    [
        "git log '--format=%G?'",
        "git log --pretty=format:%GS",
        "git show -s --format='%h %GK'",
        "git rev-list --format=%GG HEAD",
        "git stash list '--pretty=%G?'",
        "git for-each-ref --format='%(signature)'",
        "git -c log.showSignature=true log",
        "git -c log.showsignature show",
        "git push --signed",
    ],
)
def test_a_form_that_runs_gpg_is_unclassified(command: str) -> None:
    assert _kind(command) == ShellKind.UNCLASSIFIED, analyse(command)


@pytest.mark.parametrize(
    "command",
    [
        "git log --format=%h",
        "git log --pretty=fuller",
        "git -c log.date=iso log",
        "git for-each-ref --format='%(refname)'",
    ],
)
def test_a_format_without_signature_placeholders_is_read_only(command: str) -> None:
    assert _kind(command) == ShellKind.READ_ONLY, analyse(command)
