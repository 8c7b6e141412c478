"""The classifier's own rules, literal lines: redirections, nesting, the input, the result."""

from __future__ import annotations

import shlex

import pytest

from plangate.hooks.shell import ShellAnalysis, ShellKind, analyse
from plangate.hooks.shell.state import State, Write


def test_the_verdict_words() -> None:
    # The kinds are recorded and shown; their spelling is part of the interface.
    assert (
        ShellKind.READ_ONLY,
        ShellKind.WRITES,
        ShellKind.RUNS_CODE,
        ShellKind.UNCLASSIFIED,
    ) == ("read_only", "writes", "runs_code", "unclassified")


@pytest.mark.parametrize("command", [None, 5, b"ls", "", "   ", "\n\t"])
def test_an_empty_or_non_text_command_is_unclassified(command: object) -> None:
    assert analyse(command) == ShellAnalysis(
        ShellKind.UNCLASSIFIED, problems=("the command is empty or not text",)
    )
    result = analyse(command)
    assert result.commits is False
    assert result.commit_all is False


def _nested(depth: int, script: str) -> str:
    for _ in range(depth):
        script = "sh -c " + shlex.quote(script)
    return script


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_sh_c_is_followed_three_levels_deep(depth: int) -> None:
    result = analyse(_nested(depth, "touch x"))
    assert result.kind == ShellKind.WRITES
    assert [w.path for w in result.writes] == ["x"]


def test_a_fourth_level_of_sh_c_is_unclassified_and_not_walked() -> None:
    result = analyse(_nested(4, "touch x"))
    assert result.problems == ("shell nesting is too deep",)
    assert result.writes == ()


# -- redirections ------------------------------------------------------------------


@pytest.mark.parametrize("op", [">", ">>", ">|", "&>", "&>>"])
def test_each_writing_redirection_writes_its_target(op: str) -> None:
    result = analyse(f"echo x {op} f")
    assert result.kind == ShellKind.WRITES
    assert [w.path for w in result.writes] == ["f"]


@pytest.mark.parametrize(
    "command",
    [
        "cat < f",
        "cat < /dev/null",
        "cat <<< hi",
        "cat <<EOF\nx\nEOF\n",
        "cat <<-EOF\n\tx\n\tEOF\n",
        "echo x 2>&1",
        "echo x >&2",
        "cat <&0",
        "echo x >& -",  # closes standard output
        "echo x >&/dev/null",
        "echo x 3<f <&3",
    ],
)
def test_reading_and_duplicating_redirections_write_nothing(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.READ_ONLY, result.problems
    assert result.writes == ()


@pytest.mark.parametrize(
    "command", ["echo x 3>f >&3", "echo x 5>f 1>&5", "echo x 3>>f 2>&3"]
)
def test_a_descriptor_the_line_opened_may_be_written(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES
    assert [w.path for w in result.writes] == ["f"]


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("echo x >&3", "a descriptor 3 the line did not open"),
        ("cat <&3", "a descriptor 3 the line did not open"),
        ("echo x 2>&out", "a descriptor redirection to 'out'"),
        ("echo x <&out", "a descriptor redirection to 'out'"),
        ("echo x > *.txt", "a redirection target '*.txt' is a glob"),
        ("echo x > $F", "a redirection target is not literal: a parameter expansion"),
        ("cat < 1-2 > /dev/stdout", "'<1-2>' is a numeric glob to zsh"),
        ("*.sh x", "the program name '*.sh' is a glob"),
    ],
)
def test_what_the_classifier_cannot_follow_is_named_exactly(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED
    assert result.problems == (problem,)
    assert result.writes == ()


def test_a_file_descriptor_redirection_without_a_number_writes_the_file() -> None:
    assert [w.path for w in analyse("echo x >&out").writes] == ["out"]


@pytest.mark.parametrize(
    "command",
    [
        "cat <<< hi > /dev/stdout",
        "cat < /dev/null > /dev/stdout",
        "cat < /dev/tty > /dev/stdout",
        "cat <<EOF > /dev/stderr\nx\nEOF\n",
    ],
)
def test_a_stream_write_beside_no_opened_file_is_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY


def test_a_stream_write_beside_a_file_opened_with_less_than_is_unclassified() -> None:
    assert analyse("cat < f > /dev/stdout").problems == (
        "a write to '/dev/stdout' in a line that opens a file with '<'",
    )


def test_a_line_the_parser_refuses_is_not_walked() -> None:
    result = analyse("touch a; cat <> g")
    assert result.problems == ("the shell parser found a syntax error or a missing token",)
    assert result.writes == ()
    # The parser may find a problem in one part and still build the others: none is walked.
    result = analyse("touch a; echo x >&-")
    assert result.problems == ("a redirection without a target",)
    assert result.writes == ()


# -- cd along the line -----------------------------------------------------------------


@pytest.mark.parametrize("pipe", ["|", "|&"])
def test_a_cd_inside_a_pipeline_leaves_the_directory_unknown(pipe: str) -> None:
    result = analyse(f"ls {pipe} cd a && touch b")
    assert result.problems == ("write target 'b' is relative to an unknown directory",)


def test_a_cd_run_by_another_program_moves_nothing_after_it() -> None:
    for command in ("env cd a; touch b", "env cd a && touch b", "sh -c 'cd a'; touch b"):
        result = analyse(command)
        assert result.kind == ShellKind.WRITES, command
        assert [w.path for w in result.writes] == ["b"]


def test_programs_trusted_by_name_are_listed_once_builtins_not() -> None:
    assert analyse("cat f && cat g | wc -l").programs == ("cat", "wc")
    assert analyse("cd a && echo x && pwd").programs == ()


# -- write targets (plangate.hooks.shell.state) ----------------------------------------


def test_a_plain_write_is_a_content_write() -> None:
    assert Write("f", 0) == Write("f", 0, False, False, False)
    assert analyse("echo x > f").writes == (Write("f", 0, False, False, False),)
    assert State().cdpath is False


@pytest.mark.parametrize("target", ["/dev/fd/0", "/dev/fd/1", "/dev/fd/2", "/dev/tty"])
def test_the_standard_descriptors_and_the_terminal_are_streams(target: str) -> None:
    assert analyse(f"echo x > {target}").kind == ShellKind.READ_ONLY
    if target != "/dev/tty":
        assert analyse(f"cat < f > {target}").kind == ShellKind.UNCLASSIFIED
    else:
        assert analyse(f"cat < f > {target}").kind == ShellKind.READ_ONLY


def test_a_device_is_a_file_to_a_program_that_does_not_stream_into_it() -> None:
    result = analyse("touch /dev/null")
    assert [w.path for w in result.writes] == ["/dev/null"]


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("touch /dev/fd/5", "write target '/dev/fd/5' is an inherited descriptor"),
        ("cd /dev/fd && echo x > 5", "write target '5' is an inherited descriptor"),
        (
            "touch /proc/self/cwd/f",
            "write target '/proc/self/cwd/f' depends on the process that opens it",
        ),
        ("echo x > 'a*b'", "write target 'a*b' is not a plain path"),
        ("touch 'a?b'", "write target 'a?b' is not a plain path"),
        ("touch '=ls'", "write target '=ls' means another file to zsh"),
        ("touch '!f'", "write target '!f' means another file to zsh"),
        ("touch :x", "write target ':x' looks like a git pathspec with magic"),
        ("cd a; touch b", "write target 'b' is relative to an unknown directory"),
    ],
)
def test_a_write_target_that_cannot_be_judged_is_not_written(command: str, problem: str) -> None:
    result = analyse(command)
    assert result.problems == (problem,)
    assert result.writes == ()


@pytest.mark.parametrize("target", ["/abs/f", "~/f"])
def test_an_absolute_or_home_target_ignores_the_directory(target: str) -> None:
    assert [w.path for w in analyse(f"cd a && echo x > {target}").writes] == [target]
    # ...even when that directory is unknown.
    assert [w.path for w in analyse(f"cd a; echo x > {target}").writes] == [target]


def test_copies_into_a_directory_name_the_file_they_land_as() -> None:
    assert analyse("cp a b").into_dir == (("b", "a", 0),)
    assert analyse("cd d && cp x/a b").into_dir == (("d/b", "a", 1),)
