"""The per-program rules, row by row: each known program, each option table and each
rule of ``programs.py`` is pinned by a command whose verdict changes without it.

The names and options are spelled out here (not read from the module's tables), so
that dropping a row or emptying an option string turns a test red.
"""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse


def _paths(command: str) -> list[str]:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    return [w.path for w in result.writes]


# -- readers: every program, a flag and an option taking a value from its table ----------

READ_ONLY = [
    "ls -a",
    "ls -w 80",
    "cat -n f",
    "head -q f",
    "head -n 5 f",
    "head -5 f",
    "tail -q f",
    "tail -n 5 f",
    "tail -5 f",
    "wc -l f",
    "grep -i x f",
    "grep -e x f",
    "grep -5 x f",
    "egrep -i x f",
    "fgrep -i x f",
    "rg -i x",
    "rg -g x y",
    "sort -n f",
    "sort -k 2 f",
    "uniq -c f",
    "uniq -f 1 f",
    "cut -s -f 1 f",
    "tr -d a",
    "diff -u a b",
    "diff -U 3 a b",
    "cmp -s a b",
    "cmp -n 10 a b",
    "stat -L f",
    "stat -c %s f",
    "file -b f",
    "file -F : f",
    "date -u",
    "date -d now",
    "whoami",
    "id -u",
    "uname -a",
    "basename -a x",
    "basename -s .py x.py",
    "dirname -z x",
    "realpath -e x",
    "readlink -f x",
    "du -s d",
    "du -d 1 d",
    "df -h",
    "df -t ext4",
    "nl -p f",
    "nl -b a f",
    "jq -r . f",
    "jq -f prog f",
    "sha256sum -c f",
    "sha1sum -c f",
    "md5sum -c f",
    "sha512sum -c f",
    "sha224sum -c f",
    "sha384sum -c f",
    "b2sum -c f",
    "od -c f",
    "od -A x f",
    "seq -w 3",
    "seq -s , 3",
    "seq -1 3",
    "sleep 1",
    "comm -1 a b",
    "paste -s f",
    "paste -d , a b",
    "fold -s f",
    "fold -w 40 f",
    "expand -i f",
    "expand -t 4 f",
    "rev f",
    "tac -b f",
    "tac -s x f",
    "which -a ls",
    "pwd -P",
    "printenv -0",
    "type -a ls",
    "tree -a",
    "tree -L 2",
    "true",
    "false",
    ":",
    # options of one long name that take a value, or may
    "tail --follow=name f",
    "sort --check f",
    "date --iso-8601",
    "du --time d",
    "comm --output-delimiter=, a b",
    "basename --suffix=.py x.py",
    "paste --delimiters , a b",
    "fold --width 40 f",
    "expand --tabs 4 f",
    "tac --separator x f",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_each_reader_and_its_options_are_read_only(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.READ_ONLY, result


def test_date_has_no_option_with_an_optional_value() -> None:
    assert analyse("date -x").kind == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("sort -o out f", ["out"]),
        ("sort --output out f", ["out"]),
        ("tree -o out", ["out"]),
    ],
)
def test_output_options_of_readers_are_writes(command: str, paths: list[str]) -> None:
    assert _paths(command) == paths


# -- programs that run code ---------------------------------------------------------------

RUNNERS = [
    "python",
    "python3",
    "python2",
    "pypy",
    "pypy3",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "uvx",
    "poetry",
    "pipenv",
    "pdm",
    "hatch",
    "pytest",
    "py.test",
    "tox",
    "nox",
    "ruff",
    "mypy",
    "black",
    "isort",
    "flake8",
    "pylint",
    "pyright",
    "coverage",
    "pre-commit",
    "make",
    "cmake",
    "ninja",
    "meson",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "node",
    "deno",
    "bun",
    "tsc",
    "eslint",
    "prettier",
    "jest",
    "vitest",
    "cargo",
    "rustc",
    "go",
    "gcc",
    "g++",
    "cc",
    "clang",
    "javac",
    "java",
    "mvn",
    "gradle",
    "ruby",
    "bundle",
    "rake",
    "perl",
    "php",
    "composer",
    "dotnet",
    "swift",
    "awk",
    "gawk",
    "mawk",
    "python3.12",
    "python2.7",
]


@pytest.mark.parametrize("program", RUNNERS)
def test_each_code_runner_runs_code(program: str) -> None:
    result = analyse(f"{program} x")
    assert result.kind == ShellKind.RUNS_CODE, result
    assert result.runs_code == (f"{program} runs project code",)


@pytest.mark.parametrize("program", ["python4", "python3.", "pythonx", "xpython3", "python3.1a"])
def test_only_versioned_python_names_run_code(program: str) -> None:
    assert analyse(f"{program} x").kind == ShellKind.UNCLASSIFIED


# -- builtins are not looked up on PATH ----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo x",
        "printf x",
        "pwd",
        "true",
        "false",
        "test -e f",
        "\\[ -e f ]",  # quoted: '[ ... ]' unquoted is the parser's test command
        "cd d",
        "type ls",
        "command -v ls",
        ":",
    ],
)
def test_builtins_are_not_listed_for_the_path_check(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.READ_ONLY, result
    assert result.programs == (), result


@pytest.mark.parametrize(
    "command", ["ls", "cat f", "tee f", "uniq f", "dd if=a", "plangate status"]
)
def test_programs_are_listed_for_the_path_check(command: str) -> None:
    assert analyse(command).programs == (command.split(maxsplit=1)[0],)


# -- variables a command line may set -----------------------------------------------------

SAFE_NAMES = [
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "TERM",
    "LC_ALL",
]


@pytest.mark.parametrize("name", SAFE_NAMES)
def test_safe_variables_keep_a_reader_read_only(name: str) -> None:
    assert analyse(f"{name}=C ls").kind == ShellKind.READ_ONLY
    assert analyse(f"env {name}=C ls").kind == ShellKind.READ_ONLY


@pytest.mark.parametrize(
    "command",
    [
        "PAGER=x ls",
        "XLC_ALL=C ls",
        "env PATH=/x ls",
        "LANG='a b' ls",
        "LANG=$X ls",
        "env LANG='a;b' ls",
    ],
)
def test_other_variables_and_values_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED


def test_every_plain_value_character_is_accepted() -> None:
    assert analyse("LANG=aZ09_.:/+@- ls").kind == ShellKind.READ_ONLY


# -- programs whose text cannot be read statically ----------------------------------------

RUNS_TEXT = [
    "eval",
    "source",
    ".",
    "exec",
    "xargs",
    "parallel",
    "watch",
    "sudo",
    "doas",
    "su",
    "time",
    "trap",
    "alias",
    "builtin",
    "enable",
    "hash",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "set",
    "shopt",
    "unset",
    "let",
    "read",
    "mapfile",
    "readarray",
    "pushd",
    "popd",
]


@pytest.mark.parametrize("program", RUNS_TEXT)
def test_programs_running_text_are_unclassified_with_their_reason(program: str) -> None:
    # 'command NAME': the parser reads 'export x' and 'unset x' as declarations itself.
    result = analyse(f"command {program} x")
    assert result.kind == ShellKind.UNCLASSIFIED
    assert result.problems == (f"{program} runs text that cannot be read statically",)


# -- writers: each option table, each spelling of the options a rule looks at ------------

WRITER_TARGETS = [
    ("cp -f a b", [("b", False)]),
    ("cp -t d a", [("d", False)]),
    ("cp --target-directory d a", [("d", False)]),
    ("mv -f a b", [("a", True), ("b", True)]),
    ("mv -t d a", [("a", True), ("d", True)]),
    ("ln -f a b", [("a", True), ("b", True)]),
    ("ln -t d a", [("a", True), ("d", True)]),
    ("ln -s a", [("a", True)]),
    ("ln -s x/y/", [("y", True)]),
    ("ln -s a b c", [("c", True)]),
    ("ln --symbolic a b", [("b", True)]),
    ("ln -n -t d a", [("a", True), ("d", True)]),
    ("ln -n --target-directory=d a", [("a", True), ("d", True)]),
    ("cp -l a b", [("a", True), ("b", False)]),
    ("cp --link a b", [("a", True), ("b", False)]),
    ("cp a b", [("b", False)]),
    ("cp -n a b", [("b", False)]),
    ("cp -s a b", [("b", True)]),
    ("cp --symbolic-link a b", [("b", True)]),
    ("cp -r a b", [("b", True)]),
    ("cp -R a b", [("b", True)]),
    ("cp -a a b", [("b", True)]),
    ("cp -d a b", [("b", True)]),
    ("cp -P a b", [("b", True)]),
    ("cp --recursive a b", [("b", True)]),
    ("cp --archive a b", [("b", True)]),
    ("cp --no-dereference a b", [("b", True)]),
    ("rm -f x", [("x", True)]),
    ("rmdir -v d", [("d", True)]),
    ("rmdir --parents a/b/c", [("a/b/c", True), ("a/b", True), ("a", True)]),
    ("rmdir -p /a/b", [("/a/b", True), ("/a", True)]),
    ("rmdir -p ./a/b", [("./a/b", True), ("./a", True)]),
    ("rmdir -p a/b/", [("a/b/", True), ("a", True)]),
    ("rmdir a/b", [("a/b", True)]),
    ("unlink f", [("f", True)]),
    ("shred -f f", [("f", False)]),
    ("shred -n 3 f", [("f", False)]),
    ("shred --remove f", [("f", False)]),
    ("truncate -c -s 0 f", [("f", False)]),
    ("chmod -c +x f", [("f", False)]),
    ("chmod --reference r f", [("f", False)]),
    ("chown -h u f", [("f", False)]),
    ("chown -R u d", [("d", False)]),
    ("chgrp -R g d", [("d", False)]),
    ("chmod u+w -x f", [("u+w", False), ("f", False)]),
    ("tee -a f", [("f", False)]),
    ("tee --output-error f", [("f", False)]),
    ("sed --in-place s/a/b/ f", [("f", False)]),
    ("sed -n -i s/a/b/ f", [("f", False)]),
    ("sed -i -e s/a/b/ -e s/c/d/ f g", [("f", False), ("g", False)]),
    ("sed -i.orig s/a/b/ f g", [("f", False), ("f.orig", False), ("g", False), ("g.orig", False)]),
]


@pytest.mark.parametrize(("command", "targets"), WRITER_TARGETS)
def test_writers_name_their_targets_and_whether_they_relink(
    command: str, targets: list[tuple[str, bool]]
) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [(w.path, w.relinks) for w in result.writes] == targets


def test_copies_record_each_source_moved_into_the_destination() -> None:
    assert analyse("ln -s a b c").into_dir == (("c", "a", 0), ("c", "b", 0))
    assert analyse("cp -r a/ b").into_dir == (("b", "a", 0),)
    assert analyse("mv x/a y/b d").into_dir == (("d", "a", 0), ("d", "b", 0))


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        ("mkdir -v d", (True, True)),
        ("mkdir -m 755 d", (True, True)),
        ("mkdir --mode=755 d", (True, True)),
        ("mkdir --context d", (True, True)),
        ("touch -c f", (False, True)),
        ("touch --date x f", (False, True)),
    ],
)
def test_mkdir_and_touch_keep_an_existing_directory(command: str, flags: tuple[bool, bool]) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [(w.directory, w.keeps_contents) for w in result.writes] == [flags]


WRITER_PROBLEMS = [
    ("cp -T a b", "cp -T merges a directory into the destination"),
    ("cp --no-target-directory a b", "cp -T merges a directory into the destination"),
    ("mv -T a b", "mv -T merges a directory into the destination"),
    ("cp -b a b", "cp --backup writes a file its operands do not name"),
    ("cp --backup a b", "cp --backup writes a file its operands do not name"),
    ("cp -S x a b", "cp --backup writes a file its operands do not name"),
    ("cp --suffix=x a b", "cp --backup writes a file its operands do not name"),
    ("ln --backup a b", "ln --backup writes a file its operands do not name"),
    ("ln -n a b", "ln -n: the destination may be replaced or entered"),
    ("ln --no-dereference a b", "ln -n: the destination may be replaced or entered"),
    ("cp a* b", "cp with a glob: its sources are not known"),
    ("cp -r d/. e", "cp of a directory's contents ('dir/.') into another"),
    ("cp -r d/.. e", "cp of a directory's contents ('dir/.') into another"),
    ("cp -r a d/./ e", "cp of a directory's contents ('dir/.') into another"),
    ("cp -t e d/.", "cp of a directory's contents ('dir/.') into another"),
    ("cp -t e d/..", "cp of a directory's contents ('dir/.') into another"),
    ("cp --target-directory=e d/./", "cp of a directory's contents ('dir/.') into another"),
    ("cp -t x -t y a", "cp with more than one target directory"),
    ("cp a", "cp without a source and a destination"),
    ("mv a", "mv without a source and a destination"),
    ("ln", "ln without a source and a destination"),
    ("rm", "rm without operands"),
    ("mkdir", "mkdir without operands"),
    ("touch -c", "touch without operands"),
    ("chmod +x", "chmod without files"),
    ("chmod --reference=r", "chmod without files"),
    ("chown -R -L u d", "chown -R with -H or -L follows links out of its operands"),
    ("chown --recursive -H u d", "chown -R with -H or -L follows links out of its operands"),
    ("sed -i s/a/b/ 'f'*", "sed -i with a glob: its files are not known"),
    ("sed --file=x f", "sed -f: the script is not on the command line"),
    ("sed -i -e s/a/b/", "sed -i without files"),
    ("sed -i -f x f", "sed -f: the script is not on the command line"),
    ("sed -i -e 'w out' f", "sed: a sed 'w' command writes a file"),
    ("sed", "sed without a script"),
]


@pytest.mark.parametrize(("command", "problem"), WRITER_PROBLEMS)
def test_writers_refuse_what_their_operands_do_not_name(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == (problem,), result
    # A refused part stops there: it lists no target it would have guessed.
    assert result.writes == (), result
    assert result.into_dir == (), result


@pytest.mark.parametrize("command", ["sed -i.b/k s/a/b/ f", "sed -i'*' s/a/b/ f"])
def test_sed_backup_names_must_be_plain_suffixes(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == ("sed -i with a backup name that is not a plain suffix",)
    assert [w.path for w in result.writes] == ["f"]  # the suffix rule stops at the first


@pytest.mark.parametrize(
    "command", ["chown -H u d", "chown -L u d", "chown -R u d", "chmod -R u+w d"]
)
def test_following_links_matters_only_in_a_recursive_walk(command: str) -> None:
    assert analyse(command).kind == ShellKind.WRITES


def test_mv_n_is_no_clobber_not_a_link_option() -> None:
    assert [(w.path, w.relinks) for w in analyse("mv -n a b").writes] == [("a", True), ("b", True)]


def test_rmdir_parents_stop_at_the_first_component() -> None:
    assert _paths("rmdir -p a") == ["a"]


# -- readers that may write: uniq's second operand, dd's of=, tee -------------------------


@pytest.mark.parametrize(
    "command",
    ["tee /dev/null", "uniq a /dev/null", "dd if=a of=/dev/null", "sort -o /dev/null a"],
)
def test_device_sinks_named_as_outputs_write_no_file(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("uniq a b c", "uniq with more than two operands"),
        ("dd if", "dd: unknown operand 'if'"),
        ("dd foo", "dd: unknown operand 'foo'"),
        ("dd of", "dd: unknown operand 'of'"),
        ("dd if=a foo=b", "dd: unknown operand 'foo=b'"),
        ('dd if="$X"', "dd: an operand is not literal"),
        ("dd of=*.txt", "dd: an operand is not literal"),
        ("dd foo of=x", "dd: unknown operand 'foo'"),
        ('dd if="$X" of=x', "dd: an operand is not literal"),
    ],
)
def test_uniq_and_dd_refuse_what_they_do_not_know(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == (problem,), result
    assert result.writes == (), result


def test_uniq_with_one_operand_only_reads() -> None:
    assert analyse("uniq -c a").kind == ShellKind.READ_ONLY


@pytest.mark.parametrize(
    "key",
    [
        "if",
        "of",
        "bs",
        "ibs",
        "obs",
        "cbs",
        "count",
        "skip",
        "seek",
        "conv",
        "status",
        "iflag",
        "oflag",
        "iseek",
        "oseek",
    ],
)
def test_each_dd_operand_is_known(key: str) -> None:
    result = analyse(f"dd {key}=1")
    assert result.problems == (), result
    assert [w.path for w in result.writes] == (["1"] if key == "of" else [])


# -- sed ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sed -i --expression s/a/b/ f",
        "sed -i --expression=s/a/b/ f",
        "sed -e s/a/b/ -i f",
        "sed -i -- s/a/b/ f",
    ],
)
def test_sed_scripts_given_as_options_leave_every_operand_a_file(command: str) -> None:
    assert _paths(command) == ["f"]


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("sed -f x f", "sed -f: the script is not on the command line"),
        ("sed --file x f", "sed -f: the script is not on the command line"),
        ("sed -e 'w out' f", "sed: a sed 'w' command writes a file"),
    ],
)
def test_sed_scripts_that_cannot_be_read_are_refused(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert problem in result.problems, result


def test_sed_without_i_only_reads() -> None:
    assert analyse("sed s/a/b/ f").kind == ShellKind.READ_ONLY
    assert analyse("sed -n -e p f").kind == ShellKind.READ_ONLY


# -- echo and printf ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ["echo a*", "echo x", "printf -- x", "printf", "printf x y"])
def test_echo_and_printf_of_plain_words_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("echo -*", "echo: the glob '-*' may expand to an option"),
        ("echo *x", "echo: the glob '*x' may expand to an option"),
        ("echo ?x", "echo: the glob '?x' may expand to an option"),
        ("echo [ab]x", "echo: the glob '[ab]x' may expand to an option"),
        ('echo "$X"', "echo: a word is not literal: a parameter expansion"),
        ("printf -v x", "printf with an option (-v assigns a variable)"),
        ('printf -v "$X"', "printf with an option (-v assigns a variable)"),
        ("printf -- -v *x", "echo: the glob '*x' may expand to an option"),
        ('echo "$X" -*', "echo: a word is not literal: a parameter expansion"),
        ("echo -* *x", "echo: the glob '-*' may expand to an option"),
        ("printf -v *x", "printf with an option (-v assigns a variable)"),
    ],
)
def test_echo_and_printf_refuse_options_and_expansions(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == (problem,), result


# -- test and [ ----------------------------------------------------------------------------

TEST_UNARY = ["-e", "-f", "-d", "-r", "-w", "-x", "-s", "-L", "-h", "-b", "-c", "-p"]
TEST_UNARY += ["-S", "-g", "-u", "-k", "-O", "-G", "-N", "-t", "-n", "-z", "-a"]


@pytest.mark.parametrize("operator", TEST_UNARY)
def test_each_unary_test_operator_is_known_and_takes_any_operand(operator: str) -> None:
    assert analyse(f"test {operator} f").kind == ShellKind.READ_ONLY
    assert analyse(f"test {operator} -q").kind == ShellKind.READ_ONLY


@pytest.mark.parametrize("operator", ["=", "'=='", "!=", "-nt", "-ot", "-ef", "\\<", "\\>"])
def test_each_binary_test_operator_takes_any_operand(operator: str) -> None:
    assert analyse(f"test a {operator} -q").kind == ShellKind.READ_ONLY


@pytest.mark.parametrize("operator", ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])
def test_each_numeric_test_operator_is_known(operator: str) -> None:
    assert analyse(f"test 1 {operator} -2").kind == ShellKind.READ_ONLY
    assert analyse(f"test 1 {operator} x").kind == ShellKind.UNCLASSIFIED


@pytest.mark.parametrize(
    "command",
    [
        "test",
        "test -",
        "test -5",
        "test -1 -eq 2",
        "test abc = def",
        "test 1 -eq 2 -a 3 -eq 4",
        "test -e f -o -d g",
        "test ! -e f",
        "test -e -q",
        "\\[ ]",
        "\\[ -e f ]",
        "\\[ 1 -eq 2 ]",
    ],
)
def test_test_expressions_of_known_operators_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ('test -e "$X"', "test: a word is not literal"),
        ("test -e *.py", "test: a word is not literal"),
        ("\\[ -e f", "[ without a closing ]"),
        ("\\[", "[ without a closing ]"),
        ("\\[ -q ]", "[: unknown operator '-q'"),
        ("test -q", "test: unknown operator '-q'"),
        ("test ! -q", "test: unknown operator '-q'"),
        ("test -q = a", "test: unknown operator '-q'"),
        ("test 1 -eq", "test -eq with an operand that is not a number"),
        ("test -eq 1", "test -eq with an operand that is not a number"),
        ("test 1 -eq 2 -a x -eq 3", "test -eq with an operand that is not a number"),
        ("\\[ -q -e", "[ without a closing ]"),
        ("test 1 -eq x -q", "test -eq with an operand that is not a number"),
        ("test -q -y", "test: unknown operator '-q'"),
    ],
)
def test_test_refuses_unknown_operators_and_expansions(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == (problem,), result


# -- wrappers: env, timeout, nice, stdbuf, nohup, command ---------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "env -i ls",
        "env -0",
        "env -u X ls",
        "env --unset=X ls",
        "env ls -l",
        "timeout -v 5 ls",
        "timeout -s KILL 5 ls",
        "timeout 5 ls -l",
        "nice -n 5 ls",
        "nice --adjustment=5 ls",
        "nice ls -l",
        "stdbuf -o L ls",
        "stdbuf --output=L ls",
        "stdbuf ls -l",
        "command -p ls",
        "command -V ls",
        "command -v ls",
        "command -- ls",
        "command -p -v ls",
        "command ls -v",
        "command",
    ],
)
def test_wrappers_of_a_reader_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("nice -x ls", "nice: unknown option -x"),
        ("stdbuf -x ls", "stdbuf: unknown option -x"),
        ("timeout 5", "timeout without a command"),
        ("nice", "nice without a command"),
        ("env =x ls", "unknown program '=x'"),
        ("env PATH=/x ls", "setting PATH may change what the command does"),
        ("env PATH=/x FOO=1 ls", "setting PATH may change what the command does"),
        ("command -v $X", "command -v with a word that is not literal"),
        ("command -V *", "command -v with a word that is not literal"),
    ],
)
def test_wrappers_refuse_what_they_do_not_know(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == (problem,), result


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("nohup ls", ["nohup.out", "~/nohup.out"]),
        ("nohup ls -l", ["nohup.out", "~/nohup.out"]),
        ("nice touch x", ["x"]),
        ("command -p touch x", ["x"]),
        ("command -- touch x", ["x"]),
        ("stdbuf -oL touch x", ["x"]),
        ("env -u X touch x", ["x"]),
    ],
)
def test_wrapped_writers_still_write(command: str, paths: list[str]) -> None:
    assert _paths(command) == paths


# -- sh -c --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sh -c ls",
        "bash -c ls",
        "dash -c ls",
        "zsh -c ls",
        "ksh -c ls",
        "sh -ec ls",
        "sh -l -c ls",
        "sh -uc ls",
        "sh -xc ls",
        "sh -e -u -c ls",
    ],
)
def test_shell_c_with_known_flags_judges_the_script(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (
            "sh -c",
            "sh -c without exactly one literal script (positional parameters are not followed)",
        ),
        (
            "sh -c ls x",
            "sh -c without exactly one literal script (positional parameters are not followed)",
        ),
        ("sh -o posix -c ls", "sh: options the classifier does not know"),
        ("sh -- -c ls", "sh: options the classifier does not know"),
        ('sh "$X" -c ls', "sh: a word is not literal"),
        (
            "sh -c 'touch y' x",
            "sh -c without exactly one literal script (positional parameters are not followed)",
        ),
        ("sh -o posix -c 'touch y'", "sh: options the classifier does not know"),
    ],
)
def test_shell_c_refuses_what_it_cannot_follow(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == (problem,), result
    assert result.writes == (), result


@pytest.mark.parametrize(
    "command", ["sh x.sh", "bash -e x.sh", "sh -", "bash --norc x", "sh -ic ls", "sh -c- ls"]
)
def test_shell_without_c_runs_a_script(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.RUNS_CODE, result
    assert result.runs_code == (f"{command.split(maxsplit=1)[0]} runs a script file or stdin",)


# -- plangate -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "plangate -h",
        "plangate --help",
        "plangate --version",
        "plangate status --json",
        "plangate c3 verify T --json --expected-sha x",
        "plangate ledger verify --json",
        "plangate ledger log --kind x --subject y --json",
        "plangate ledger log --subject=y",
        "plangate plan lint T --all --json",
        "plangate surfaces --template --json",
        "plangate trust show --json",
        "plangate task show T --json",
        "plangate task show -h",
    ],
)
def test_plangate_read_only_subcommands_and_their_options(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize(
    "command",
    [
        "plangate c3 issue T",
        "plangate ledger export out",
        "plangate plan approve T",
        "plangate trust init",
        "plangate task start T",
        "plangate status --kind x",
        "plangate ledger log --kind",
        "plangate -h status",
        "plangate --json",
        "plangate status $X",
    ],
)
def test_plangate_other_subcommands_and_options_change_state(command: str) -> None:
    result = analyse(command)
    assert result.runs_code == (
        "plangate changes PlanGate's state (only its read-only subcommands are readers)",
    ), result


# -- cd -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("cd src && cd .. && touch x", ["x"]),
        ("cd src && cd -L .. && touch x", ["x"]),
        ("cd src && cd -P -L .. && touch x", ["x"]),
        ("cd src && cd ./.. && touch x", ["x"]),
        ("cd src && cd ../ && touch x", ["x"]),
        ("cd -- src && touch x", ["src/x"]),
        ("cd a && cd b && touch x", ["a/b/x"]),
        ("cd ../a && touch x", ["../a/x"]),
        ("cd ./.. && touch x", ["./../x"]),
        ("cd /../x && touch f", ["/../x/f"]),
        ("cd /a && touch x", ["/a/x"]),
    ],
)
def test_cd_moves_the_commands_after_it(command: str, paths: list[str]) -> None:
    assert _paths(command) == paths


@pytest.mark.parametrize(
    "command",
    [
        "cd a; touch x",
        "cd src && cd -P .. && touch x",
        "cd && touch x",
        'cd "$X" && touch x',
        "cd * && touch x",
        "cd - && touch x",
        "cd ~/a && touch x",
        "cd -e && touch x",
        "cd +1 && touch x",
        "cd a/../b && touch x",
        "cd /a/../b && touch x",
    ],
)
def test_cd_to_a_directory_not_known_before_it_runs(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == ("write target 'x' is relative to an unknown directory",), result


def test_cd_takes_one_operand() -> None:
    assert analyse("cd a b").problems == ("cd with more than one operand",)
    # The refused cd does not move the commands after it.
    assert [w.path for w in analyse("cd a b && touch x").writes] == ["x"]


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("cd ./src && touch x", ["./src/x"]),
        ("cd ../x && touch x", ["../x/x"]),
        ("cd /x && touch x", ["/x/x"]),
    ],
)
def test_with_cdpath_a_dot_or_slash_start_is_not_searched(command: str, paths: list[str]) -> None:
    result = analyse(command, cdpath=True)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == paths


# -- sh -c, once more --------------------------------------------------------------------


@pytest.mark.parametrize("command", ["sh -c ''", "sh -elux -c ls", "sh -eluxc ls"])
def test_shell_c_scripts_of_readers_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


def test_shell_c_after_flags_judges_the_script_after_c() -> None:
    assert _paths("sh -e -c 'touch x'") == ["x"]


@pytest.mark.parametrize("command", ['sh -c "$X"', 'sh -e -c "$X"'])
def test_shell_c_with_a_script_that_is_not_literal(command: str) -> None:
    result = analyse(command)
    assert result.problems == (
        "sh -c without exactly one literal script (positional parameters are not followed)",
    ), result


@pytest.mark.parametrize("command", ["sh -qc ls", "sh check.sh"])
def test_shell_words_that_are_not_known_flags_run_a_script(command: str) -> None:
    assert analyse(command).runs_code == ("sh runs a script file or stdin",)


# -- command, plangate, once more ---------------------------------------------------------


def test_command_dash_dash_ends_its_options() -> None:
    assert analyse("command -- -v ls").problems == ("unknown program '-v'",)


def test_a_plangate_option_value_may_begin_with_a_dash() -> None:
    assert analyse("plangate ledger log --kind --x").kind == ShellKind.READ_ONLY


@pytest.mark.parametrize(
    "command",
    [
        "chmod --bogus f",
        "chown --bogus u f",
        "tee --bogus f",
        "uniq --bogus a b",
        "mkdir --bogus d",
        "touch --bogus f",
        "rm --bogus f",
        "sed --bogus s/a/b/ f",
        "cp --bogus a b",
        "mv --bogus a b",
        "ln --bogus a b",
        "sort --bogus f",
        "env --bogus ls",
    ],
)
def test_an_unknown_option_stops_every_rule(command: str) -> None:
    result = analyse(command)
    assert result.problems == (f"{command.split(maxsplit=1)[0]}: unknown option --bogus",)
    assert result.writes == ()


def test_sed_i_without_files_is_the_one_problem_even_for_a_glob_script() -> None:
    # The unquoted script is a glob word (the shell may expand it): the first rule that
    # refuses the command is the only one reported.
    assert analyse("sed -i s/a*/b/").problems == ("sed -i without files",)


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("chmod +x -- -r", ["-r"]),
        ("chmod u+x -- -w", ["-w"]),
        ("chmod -- -x f", ["f"]),
        ("chmod -x -- -r", ["-r"]),
    ],
)
def test_chmod_after_double_dash_every_word_is_an_operand(command: str, paths: list[str]) -> None:
    # GNU chmod takes '-r' for a mode only among its options: 'chmod +x -- -r' changes
    # the file '-r', not a file '+x'.
    assert _paths(command) == paths
