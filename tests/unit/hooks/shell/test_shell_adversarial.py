"""Commands that write a file the classifier must see, in the spellings an agent may try.

Each table names one class of defect: a spelling that once passed as read-only, or as
a write of a harmless path while the shell writes another one. A command that cannot
be read with certainty must be unclassified (denied outside a confinement).
"""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse

# GNU sed ends a label ('b', 't', 'T', ':') and 'v''s version at a blank or ';': what
# follows is the next command, and a 'w' file is created while the script is read.
SED_LABEL_ENDS = [
    "sed -n 'b;w CLAUDE.md' a",
    "sed 't;w CLAUDE.md' a",
    "sed 'T;w CLAUDE.md' a",
    "sed ':a;w CLAUDE.md' a",
    "sed ': a;w CLAUDE.md' a",
    "sed ':a w CLAUDE.md' a",
    "sed 'b x w CLAUDE.md' a",
    "sed 'b\tx;w CLAUDE.md' a",
    "sed 'v;w CLAUDE.md' a",
    "sed 'v 4.2 w CLAUDE.md' a",
    "sed '$!{b;w CLAUDE.md\n}' a",
    "sed 'b;e touch CLAUDE.md' a",
    "sed -i 'b;w .claude/settings.json' src/a.py",
]
SED_IDIOMS_STAY_READ_ONLY = [
    "sed ':a;N;$!ba;s/\\n/ /g' f",
    "sed -e :a -e '$!N;ba' f",
    "sed 'bend;s/a/b/;:end' f",
    "sed -n '/x/{p;q}' f",
    "sed 'r notes.txt' f",
]


@pytest.mark.parametrize("command", SED_LABEL_ENDS)
def test_sed_commands_after_a_label_are_read(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


@pytest.mark.parametrize("command", SED_IDIOMS_STAY_READ_ONLY)
def test_sed_label_idioms_stay_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


# A table shared by another subcommand ('git stash list' takes 'git log''s options)
# writes its '--output' file too.
GIT_OUTPUT = [
    ("git stash list --output=CLAUDE.md", ["CLAUDE.md"]),
    ("git stash list -p --output .claude/settings.json", [".claude/settings.json"]),
    ("git -C docs stash list --output=x", ["docs/x"]),
]


@pytest.mark.parametrize(("command", "paths"), GIT_OUTPUT)
def test_git_output_is_a_write_whatever_the_subcommand(command: str, paths: list[str]) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == paths


# Only a 'cd' the shell itself runs moves the commands after it. A 'cd' inside
# 'sh -c' moves only that script; one run by env/nice/timeout/nohup/stdbuf is a
# program of its own ('/usr/bin/cd' exists on some systems) and moves nothing.
CHILD_CD = [
    ("bash -c 'cd src' && tee CLAUDE.md", ["CLAUDE.md"]),
    ("sh -c 'cd src'; tee CLAUDE.md", ["CLAUDE.md"]),
    ("sh -c 'cd src && ls' && echo x > CLAUDE.md", ["CLAUDE.md"]),
    ("env cd src && tee CLAUDE.md", ["CLAUDE.md"]),
    ("nice cd src && tee CLAUDE.md", ["CLAUDE.md"]),
    ("timeout 5 cd src && tee CLAUDE.md", ["CLAUDE.md"]),
    ("stdbuf -o0 cd src && tee CLAUDE.md", ["CLAUDE.md"]),
    ("timeout 1 command cd src && tee CLAUDE.md", ["CLAUDE.md"]),
    ("bash -c 'cd src && tee x'", ["src/x"]),
    ("command cd src && tee x", ["src/x"]),
    ("LANG=C cd src && tee x", ["src/x"]),
    # 'cd ..' climbs, as text, the directory the line came through (bash's -L).
    ("cd src && cd .. && tee CLAUDE.md", ["CLAUDE.md"]),
    ("cd src/a && cd ../.. && tee CLAUDE.md", ["CLAUDE.md"]),
    ("cd src && cd ../.. && tee x", ["../x"]),
]
# A 'cd' whose outcome is not known leaves later relative targets undecidable.
UNKNOWN_CD = [
    "command cd src/new; tee CLAUDE.md",
    "command -- cd src/new; tee CLAUDE.md",
    "command cd src | tee CLAUDE.md",
    "! cd src/new && tee CLAUDE.md",
    "! command cd src/new && tee CLAUDE.md",
    "cd src/link/.. && tee CLAUDE.md",
    "cd src && cd -P .. && tee CLAUDE.md",
    "cd src && cd ../b && tee CLAUDE.md",
    "cd +1 && tee CLAUDE.md",
]


@pytest.mark.parametrize(("command", "paths"), CHILD_CD)
def test_cd_moves_only_the_shell_that_runs_it(command: str, paths: list[str]) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == paths


@pytest.mark.parametrize("command", UNKNOWN_CD)
def test_a_cd_with_an_unknown_outcome_is_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


# Files no operand names: backups, a link replaced or entered, nohup's output file,
# a walk that follows links out of its operands.
HIDDEN_FILES = [
    "cp -b a src/b",
    "cp --backup=simple a src/b",
    "cp --backup a src/b",
    "cp -S /../../CLAUDE.md a src/b",
    "mv --suffix=.old a src/b",
    "mv -b a src/b",
    "ln -sb a src/b",
    "ln -sfn ../CLAUDE.md src/current",
    "ln --no-dereference -sf a src/current",
    "chown -RL user src",
    "chown -R -H user src",
    "chgrp -LR group src",
    "cp -r src/new/. .claude",
    "cp -a src/new/. docs/working/TASK-0001/approvals",
    "cp -r -t .claude src/new/.",
    "mv src/new/. .claude",
]


@pytest.mark.parametrize("command", HIDDEN_FILES)
def test_writes_of_files_no_operand_names_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("nohup ls", ["nohup.out", "~/nohup.out"]),
        ("cd src && nohup ls", ["src/nohup.out", "~/nohup.out"]),
        ("nohup tee CLAUDE.md", ["nohup.out", "~/nohup.out", "CLAUDE.md"]),
    ],
)
def test_nohup_writes_nohup_out_here_or_in_home(command: str, paths: list[str]) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == paths


# '/proc/self/...' names what the shell's process sees; the hook would resolve it in its
# own process (another directory after a 'cd').
@pytest.mark.parametrize(
    "command",
    [
        "cd .claude && echo x > /proc/self/cwd/settings.json",
        "tee /proc/self/cwd/CLAUDE.md",
        "cd /proc/self/cwd/.claude && tee settings.json",
        "cp a //proc/thread-self/cwd/CLAUDE.md",
        "echo x > /proc/1/root/tmp/x",
    ],
)
def test_process_relative_targets_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


# A descriptor above 2 that the command line did not open is inherited: any file.
INHERITED_DESCRIPTORS = [
    "echo x > /dev/fd/3",
    "echo x >> /dev/fd/9",
    "tee /dev/fd/5",
    "tee //dev//fd/5",
    "dd if=a of=/dev/fd/4",
    "echo x > /proc/self/fd/7",
]


@pytest.mark.parametrize("command", INHERITED_DESCRIPTORS)
def test_inherited_descriptors_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


# Opening '/dev/fd/N' opens again the file on descriptor N, for writing: a line that
# put a file on a descriptor with '<' and writes a standard stream by its path may
# rewrite that file ('echo x < F > /dev/fd/0' truncates F and writes x into it).
REOPENED_STREAMS = [
    "echo x < CLAUDE.md > /dev/fd/0",
    "echo x 1<CLAUDE.md > /dev/stdout",
    "echo x 2<CLAUDE.md >/dev/fd/2",
    "tee /dev/stderr 2<.claude/settings.json",
    "echo x < CLAUDE.md 2<&0 >/dev/fd/2",
    "> /dev/stdout echo x 1< CLAUDE.md",
    "echo x >&5",
    "echo x 2>&9",
    "cat 0<&4",
]


@pytest.mark.parametrize("command", REOPENED_STREAMS)
def test_descriptors_that_may_carry_a_file_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


@pytest.mark.parametrize(
    "command",
    [
        "echo x > /dev/fd/1",
        "echo x 1>&2 > /dev/fd/2",
        "tee /dev/stdout",
        "cat < a > /dev/null",
        "echo x 3>&1 1>&2 2>&3",
        "wc -l < a",
    ],
)
def test_standard_descriptors_write_no_file(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


# zsh (the default shell of many hosts) reads '>!F' as '>' to F, '=NAME' as the
# path of the program NAME, and 'F<N-M>' as a numeric glob (bash: two redirections).
ZSH_SPELLINGS = [
    "echo x >!CLAUDE.md",
    "echo x >>!CLAUDE.md",
    "cd src && echo x >!../CLAUDE.md",
    "echo x > =tee",
    "cp a =python3",
    "tee !CLAUDE.md",
    "tee CLAUDE<->.md",
    "echo x > .github/workflows/ci<1-3>.yml",
    "cat <1-2",
]


@pytest.mark.parametrize("command", ZSH_SPELLINGS)
def test_targets_zsh_reads_as_another_file_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


# A repository given as a path or URL runs that repository's hooks (push) or
# transport; only a remote's name, whose URL is in the guarded .git/config, is read.
GIT_OTHER_REPOSITORY = [
    "git push ./src/r.git HEAD",
    "git push src/r.git HEAD:refs/heads/x",
    "git push ../other main",
    "git push file:///tmp/r.git HEAD",
    "git push -u ~/r.git HEAD",
    "git fetch ../other",
    "git fetch --multiple origin ./src/r.git",
    "git remote show ./src/r.git",
]


@pytest.mark.parametrize("command", GIT_OTHER_REPOSITORY)
def test_git_with_a_repository_path_is_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


@pytest.mark.parametrize(
    "command",
    ["git push origin HEAD:main", "git push origin", "git remote show origin"],
)
def test_git_with_a_remote_name_stays_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


# '--icase-pathspecs' and '--glob-pathspecs' make a path name more files than it spells.
@pytest.mark.parametrize(
    "command",
    [
        "git --icase-pathspecs rm claude.md",
        "git --icase-pathspecs checkout -- claude.md",
        "git --glob-pathspecs restore src",
        "git --icase-pathspecs commit -m x -- claude.md",
    ],
)
def test_widening_pathspecs_with_a_writer_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


def test_widening_pathspecs_with_a_reader_stay_read_only() -> None:
    assert analyse("git --icase-pathspecs status").kind == ShellKind.READ_ONLY


# The hook reads the index before the line runs: a commit in the same line also records
# what an earlier 'git add', 'git restore --staged' or 'git reset REV -- PATHS' stages.
STAGED_IN_THE_SAME_LINE = [
    ("git add CLAUDE.md && git commit -m x", False, ("CLAUDE.md",)),
    ("git add -f .plangate/trust.toml; git commit -m x", False, (".plangate/trust.toml",)),
    ("cd src && git add ../CLAUDE.md && git commit -m x", False, ("src/../CLAUDE.md",)),
    ("git -C docs add a.md && git commit -m x", False, ("docs/a.md",)),
    ("git restore -S -s HEAD~5 CLAUDE.md && git commit -m x", False, ("CLAUDE.md",)),
    ("git reset HEAD~5 -- CLAUDE.md && git commit -m x", False, ("CLAUDE.md",)),
    ("git reset HEAD~5 CLAUDE.md && git commit -m x", False, ("CLAUDE.md",)),
    ("git commit -m x && git add CLAUDE.md", False, ("CLAUDE.md",)),
    ("git add -A && git commit -m x", True, ()),
    ("git add -u; git commit -m x", True, ()),
    ("git add . && git commit -m x", True, ()),
    ("git add .claude/ && git commit -m x", True, ()),
    ("git add '*.md' && git commit -m x", True, ()),
    ("git add ':(icase)claude.md' && git commit -m x", True, ()),
    ("git add src/a.py '*.json' && git commit -m x", True, ("src/a.py",)),
]


@pytest.mark.parametrize(("command", "every", "paths"), STAGED_IN_THE_SAME_LINE)
def test_a_commit_records_what_the_same_line_stages(
    command: str, every: bool, paths: tuple[str, ...]
) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert result.commits
    assert result.commit_all is every
    assert result.commit_paths == paths


def test_staging_alone_or_a_plain_commit_is_unchanged() -> None:
    assert analyse("git add CLAUDE.md").kind == ShellKind.READ_ONLY
    assert analyse("git reset HEAD -- CLAUDE.md").kind == ShellKind.READ_ONLY
    plain = analyse("git commit -m x")
    assert plain.commits and not plain.commit_all and plain.commit_paths == ()
    assert analyse("cd a; git add b && git commit -m x").kind == ShellKind.UNCLASSIFIED
    assert analyse("git add -f . && git commit -m x").kind == ShellKind.UNCLASSIFIED
    assert analyse("git add -f '*.env'").kind == ShellKind.UNCLASSIFIED
