"""Words and comments as bash reads them (bash splits only at space, tab and newline).

The differential test (tests/property/test_shell_bash_differential.py) lets real bash
judge these readings; this file pins each class found there.
"""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse
from plangate.hooks.shell.parse import parse

CONTROL_BYTES = [chr(code) for code in (*range(1, 9), *range(11, 32), 127)]


@pytest.mark.parametrize("control", CONTROL_BYTES, ids=lambda c: f"0x{ord(c):02x}")
@pytest.mark.parametrize(
    "template",
    [
        "ls{}#; echo x > CLAUDE.md",
        "ls {}# x\ntouch approvals/c3.json",
        "{}ls",
        "ls{}",
        "echo 'a{}b'",
        'echo "a{}b"',
        "cat <<'EOF'\n{}\nEOF",
        "git status # {}",
    ],
)
def test_a_control_character_anywhere_makes_the_command_unclassified(
    template: str, control: str
) -> None:
    result = analyse(template.format(control))
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert result.problems == (f"the command contains the control character 0x{ord(control):02x}",)


@pytest.mark.parametrize("command", ["ls\t-l", "ls\n", "ls # a comment", "ls\t# comment"])
def test_tab_and_newline_stay_blanks(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize("space", ["\u00a0", "\u2028", "\u3000", "\u2009"])
def test_a_unicode_space_is_part_of_the_word_as_it_is_to_bash(space: str) -> None:
    result = analyse(f"ls{space}#; echo x > CLAUDE.md")
    assert result.kind == ShellKind.UNCLASSIFIED
    assert result.problems == (f"unknown program {'ls' + space + '#'!r}",)


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ('echo x > "\nCLAUDE.md"', "\nCLAUDE.md"),
        ('echo x > "src/a.py\n"', "src/a.py\n"),
        ('echo x > "a\n\nb"', "a\n\nb"),
        ('echo x > "a\\\nb"', "ab"),
        ("echo x > 'a\nb'", "a\nb"),
    ],
)
def test_a_newline_inside_quotes_is_part_of_the_word(command: str, target: str) -> None:
    assert [w.path for w in analyse(command).writes] == [target]


def test_a_quoted_heredoc_message_keeps_its_blank_lines() -> None:
    script = parse("git commit -m \"$(cat <<'EOF'\nTitle\n\nBody\nEOF\n)\"")
    assert [w.text for w in script.commands[0].words] == ["git", "commit", "-m", "Title\n\nBody"]


@pytest.mark.parametrize(
    "command",
    [
        "echo a\\\n# b > CLAUDE.md",
        "cat CLAUDE.md\\\n# x; touch approvals/c3.json",
        "echo a\\\n\\\n# b > CLAUDE.md",
    ],
)
def test_a_hash_joined_to_a_word_by_a_line_continuation_is_not_a_comment(command: str) -> None:
    # Bash removes the continuation first: 'a\<newline>#' is the word 'a#'.
    result = analyse(command)
    assert result.kind == ShellKind.UNCLASSIFIED, result
    assert "is part of a word to bash" in result.problems[0]


@pytest.mark.parametrize(
    "command",
    [
        "echo a \\\n# a comment",
        "echo a\\\\\n# a comment after an escaped backslash",
        "ls;#c",
        "ls&&#c\ntrue",
        "ls # c",
        "echo x#y",
    ],
)
def test_comments_where_bash_reads_them_stay_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)
