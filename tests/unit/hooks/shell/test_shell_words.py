"""Word-changing shell features are never read as literal words."""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse

UNCLASSIFIED = [
    "find docs -{delete,print}",
    "find docs $'-delete'",
    "echo $'\\x2d'n x",
    "ls $HOME",
    "ls ${HOME}",
    "echo ${LANG:TZ}",
    "echo ${ touch x; }",
    "echo $(touch x)",
    "echo `touch x`",
    "cat <(touch x)",
    "echo $((1+2))",
    'echo $"locale"',
    "TZ='a[$(touch x)]'; [[ TZ -eq 0 ]]",
    "[[ -f x ]]",
    "[ -f x ]",
    "sh -c 'find . \"$1\"' _ -delete",
    "bash -c 'ls' _ x",
    "ls\\\n-l",
    "l\\\ns",
    'cat <<E"OF"\nx\nEOF\ntouch y\nE"OF"\n',
    "cat <<EOF\n$(touch x)\nEOF",
    "cat <<EOF\n`touch x`\nEOF",
    'echo "unterminated',
    "f() { touch x; }; f",
    "for f in a; do echo $f; done",
    "if true; then touch x; fi",
    "(cd src && touch x)",
    "{ ls; }",
    "export PATH=.",
    "PATH=. ls",
    "PYTHONPATH=src ls",
    "LD_PRELOAD=x.so ls",
    "GIT_EXTERNAL_DIFF=x git diff",
    "LANG='a[$(x)]' ls",
    "ls *",
    "ls -*",
    "cat [a]*",
    "ls ~root",
    "echo hi &",
    "eval ls",
    "xargs rm",
    "source x.sh",
    "time ls",
]

READ_ONLY = [
    "ls -la",
    "ls src/*.py",
    "ls ./*",
    "echo '<<EOF '",
    "echo 'a$b' \"c\\$d\" e\\ f",
    'cat <<\'EOF\'\n"""doc with `backticks` and $vars"""\nEOF',
    "cat <<-'EOF'\n\tbody\n\tEOF",
    "cat <<EOF\nplain body\nEOF",
    "echo a \\\n  b",
    "LANG=C sort -u f",
    "LC_ALL=C.UTF-8 grep -c x f",
    "echo foo # > x",
    "! grep -q x f",
    "cat a | grep b | wc -l",
    "test -f x && echo yes || echo no",
    "test -d src && ls src",
    "test 3 -eq 3",
]


@pytest.mark.parametrize("command", UNCLASSIFIED)
def test_word_changing_features_are_unclassified(command: str) -> None:
    result = analyse(command)
    assert result.kind in (ShellKind.UNCLASSIFIED, ShellKind.RUNS_CODE), result


@pytest.mark.parametrize("command", READ_ONLY)
def test_literal_words_are_read_only(command: str) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.READ_ONLY, result


def test_heredoc_then_write_on_the_next_line_is_seen() -> None:
    result = analyse("echo '<<EOF '\ntouch x")
    assert [w.path for w in result.writes] == ["x"]


def test_quoted_heredoc_commit_message_is_literal() -> None:
    result = analyse("git commit -m \"$(cat <<'EOF'\nfix: `x` and $y\n\nmore\nEOF\n)\"")
    assert result.kind == ShellKind.WRITES and result.commits and not result.problems


def test_unquoted_heredoc_commit_message_is_not_literal() -> None:
    assert analyse('git commit -m "$(cat <<EOF\n$(touch x)\nEOF\n)"').kind == (
        ShellKind.UNCLASSIFIED
    )


def test_test_arithmetic_on_names_is_unclassified() -> None:
    assert analyse("test TZ -eq 0").kind == ShellKind.UNCLASSIFIED
    assert analyse("test -v 'a[$(x)]'").kind == ShellKind.UNCLASSIFIED


def test_printf_assigning_a_variable_is_unclassified() -> None:
    assert analyse("printf -v 'a[$(x)]' %s y").kind == ShellKind.UNCLASSIFIED
