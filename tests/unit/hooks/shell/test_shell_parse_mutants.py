"""The shell parser's model, rule by rule, as bash reads each command.

Each test names one reading of the parser (how a line splits into commands, words and
redirections, and where it stops) and pins it on the model; where bash's reading is the
question, real bash answers it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from plangate.hooks.shell import ShellKind, analyse
from plangate.hooks.shell.parse import (
    MAX_COMMAND_BYTES,
    ParseWork,
    Script,
    comment_problem,
    heredoc_delimiter,
    parse,
    parse_tree,
    unquote_double,
    unquote_unquoted,
)

BASH = shutil.which("bash")
HOME = "/nonexistent-home"
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def bash_words(command: str) -> list[str]:
    """The arguments real bash passes to ``printf`` for ``printf '<%s>\\n' <command>``."""
    assert BASH is not None
    out = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", f"printf '%s\\0' {command}"],
        capture_output=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": HOME},
    ).stdout
    return out.decode("utf-8", "surrogateescape").split("\0")[:-1]


def texts(script: Script) -> list[list[str | None]]:
    return [[w.text for w in command.words] for command in script.commands]


def test_a_plain_command_is_its_words() -> None:
    script = parse("ls -l src")
    assert script.problems == ()
    assert texts(script) == [["ls", "-l", "src"]]


# -- what is refused before parsing ------------------------------------------------------


def test_a_command_of_exactly_the_byte_limit_is_parsed() -> None:
    assert MAX_COMMAND_BYTES == 256 * 1024
    script = parse(": " + "x" * (256 * 1024 - 2))
    assert script.problems == ()
    assert texts(script) == [[":", "x" * (256 * 1024 - 2)]]


def test_one_byte_over_the_limit_is_refused_counting_bytes_not_characters() -> None:
    assert parse(": " + "x" * (256 * 1024 - 1)).problems == (
        "the command is longer than 262144 bytes",
    )
    # 'é' is two bytes in UTF-8: 131071 of them and ': ' make 262144 bytes, one more 262146.
    assert parse(": " + "é" * 131071).problems == ()
    assert parse(": " + "é" * 131072).problems == ("the command is longer than 262144 bytes",)


def test_a_nul_byte_is_refused() -> None:
    assert parse("ls\x00 CLAUDE.md") == Script((), ("the command contains a NUL byte",))


def test_text_that_is_not_valid_utf8_is_refused_without_a_traceback() -> None:
    # A lone surrogate (what a decoder's surrogateescape leaves) has no UTF-8 encoding.
    assert parse("ls \udc80") == Script((), ("the command is not valid UTF-8 text",))


# -- the parser's work budget --------------------------------------------------------------

BUDGET_TEXT = "echo " + "$(" * 40 + "x" + ")" * 40


def _budget(text: str) -> int:
    return 1000 + 8 * len(text.encode("utf-8"))


def test_a_fresh_work_counter_starts_at_zero() -> None:
    assert ParseWork().callbacks == 0
    work = ParseWork()
    parse("ls", work)
    assert work.callbacks == 0  # a short command takes no progress callback


def test_the_parse_runs_while_the_progress_callbacks_stay_within_the_budget() -> None:
    fresh = ParseWork()
    parse(BUDGET_TEXT, fresh)
    needed = fresh.callbacks
    assert needed > 1
    work = ParseWork()
    work.callbacks = _budget(BUDGET_TEXT) - needed
    script = parse(BUDGET_TEXT, work)
    assert work.callbacks == _budget(BUDGET_TEXT)  # one per callback, up to the budget
    assert script.problems == ()
    assert texts(script) == [["echo", None]]


def test_the_parse_is_cancelled_at_the_first_callback_over_the_budget() -> None:
    fresh = ParseWork()
    parse(BUDGET_TEXT, fresh)
    work = ParseWork()
    work.callbacks = _budget(BUDGET_TEXT) - fresh.callbacks + 1
    script = parse(BUDGET_TEXT, work)
    assert script == Script((), ("the shell parser gave up (work budget exceeded)",))
    assert work.callbacks == _budget(BUDGET_TEXT) + 1
    # Counted one by one: two below the budget, the third callback is the first over it.
    work = ParseWork()
    work.callbacks = _budget(BUDGET_TEXT) - 2
    assert parse(BUDGET_TEXT, work).problems == ("the shell parser gave up (work budget exceeded)",)
    assert work.callbacks == _budget(BUDGET_TEXT) + 1


def test_a_cancelled_parse_leaves_nothing_behind_for_the_next_command() -> None:
    # tree-sitter resumes a cancelled parse on the parser's next call unless it is reset:
    # the next command's bytes would be read into the cancelled one's half-built tree.
    work = ParseWork()
    work.callbacks = _budget(BUDGET_TEXT)
    assert parse(BUDGET_TEXT, work).problems == ("the shell parser gave up (work budget exceeded)",)
    script = parse("cat CLAUDE.md > notes.txt")
    assert script.problems == ()
    assert texts(script) == [["cat", "CLAUDE.md"]]
    assert [r.target.text for r in script.commands[0].redirects] == ["notes.txt"]


# -- nesting ----------------------------------------------------------------------------


def test_sixty_four_levels_of_nesting_are_followed_and_sixty_five_are_refused() -> None:
    # Each '&&' nests the list one level deeper in the parser's tree.
    assert parse(" && ".join(["ls"] * 64)).problems == ()
    assert len(parse(" && ".join(["ls"] * 64)).commands) == 64
    assert parse(" && ".join(["ls"] * 65)).problems == ("the command nests too deeply",)


# -- words ------------------------------------------------------------------------------


def test_each_word_says_whether_it_is_literal_quoted_or_a_glob() -> None:
    words = parse("echo a 'b' \"c\" d*").commands[0].words
    assert [tuple(w) for w in words] == [
        ("echo", False, "", False),
        ("a", False, "", False),
        ("b", False, "", True),
        ("c", False, "", True),
        ("d*", True, "", False),
    ]


# -- '~' as bash expands it ------------------------------------------------------------


@needs_bash
@pytest.mark.parametrize("word", ["a=~/x", "a=~", "a=x:~/y", "a=~/x:~/y", "a[1]=~/x", "a+=~/x"])
def test_an_assignment_like_argument_has_its_tilde_expanded_and_is_not_literal(word: str) -> None:
    # Bash expands a '~' at the start of an assignment-like argument's value and after
    # each unquoted ':' ('cp f a=~/x' copies to 'a=$HOME/x').
    assert HOME in bash_words(word)[0]
    for command in (f"cp f {word}", f"echo x > {word}"):
        script = parse(command)
        only = script.commands[0]
        read = [*only.words, *(r.target for r in only.redirects)]
        assert read[-1].text is None, command
        assert read[-1].problem == "a '~' expansion in an assignment-like word"


@needs_bash
@pytest.mark.parametrize(
    "word", ["--o=~/x", '"a"=~', "a\\=~", "a=x~", "1a=~", 'a=":"~/x', "a=x\\:~/y", "a-b=~"]
)
def test_an_argument_that_is_no_assignment_keeps_its_tilde(word: str) -> None:
    (expected,) = bash_words(word)
    assert HOME not in expected
    assert texts(parse(f"cp f {word}")) == [["cp", "f", expected]]


@needs_bash
def test_an_assignment_value_has_its_tilde_after_a_colon_expanded() -> None:
    assert BASH is not None
    shown = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", "X=a:~/b; printf '%s' \"$X\""],
        capture_output=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": HOME},
    ).stdout
    assert shown == f"a:{HOME}/b".encode()
    script = parse("X=a:~/b ls")
    ((name, value),) = script.commands[0].assignments
    assert name == "X"
    assert value.text is None
    assert value.problem == "a '~' expansion after ':' in an assignment"
    assert parse("X=~/b ls").commands[0].assignments[0][1].text == "~/b"


@needs_bash
@pytest.mark.parametrize("word", ["\\~/x", "'~/x'", '"~"', '"~/x"', '~"/"x', '""~/x', "~''", "\\~"])
def test_a_quoted_tilde_stays_a_tilde_to_bash_and_is_not_read_as_home(word: str) -> None:
    (expected,) = bash_words(word)
    assert expected.startswith("~")  # bash keeps it: a directory named '~'
    (only,) = parse(f"ls {word}").commands
    assert only.words[1].text is None
    assert only.words[1].problem == "a quoted '~' that bash keeps as it is"


@needs_bash
@pytest.mark.parametrize(("word", "text"), [("~", "~"), ("~/x", "~/x"), ("~/'a b'", "~/a b")])
def test_an_unquoted_tilde_prefix_is_the_home_directory(word: str, text: str) -> None:
    (expected,) = bash_words(word)
    assert expected == HOME + text[1:]
    assert texts(parse(f"ls {word}")) == [["ls", text]]


# -- command substitution ---------------------------------------------------------------

HEREDOC = "$(cat <<'EOF'\na b\nEOF\n)"


@needs_bash
def test_a_quoted_heredoc_message_is_one_literal_word() -> None:
    assert bash_words(f'"{HEREDOC}"') == ["a b"]
    assert texts(parse(f'git commit -m "{HEREDOC}"')) == [["git", "commit", "-m", "a b"]]


@needs_bash
@pytest.mark.parametrize("word", [HEREDOC, f"x{HEREDOC}"])
def test_an_unquoted_heredoc_message_is_split_by_bash_and_not_literal(word: str) -> None:
    # 'touch $(cat <<EOF ... a b ...)' touches 'a' and 'b', not 'a b'.
    assert len(bash_words(word)) == 2
    (only,) = parse(f"touch {word}").commands
    assert only.words[1].text is None
    assert only.words[1].problem == "a command substitution"


# -- the first command ------------------------------------------------------------------


def test_the_first_command_has_no_connector() -> None:
    assert [c.connector for c in parse("ls; cat f && pwd").commands] == ["", ";", "&&"]


# -- comments: where bash starts one ------------------------------------------------------


@pytest.mark.parametrize("text", ["# just a note", "#", "#!/bin/sh"])
def test_a_text_that_is_only_a_comment_has_no_command_and_no_problem(text: str) -> None:
    assert parse(text) == Script((), ())


def test_a_comment_on_its_own_line_after_a_command_is_a_comment() -> None:
    script = parse("ls\n# a note\ncat f")
    assert script.problems == ()
    assert texts(script) == [["ls"], ["cat", "f"]]


@pytest.mark.parametrize("text", ["\\\\\n# a note", "\\\\\n# a note ending in \\"])
def test_an_escaped_backslash_at_the_very_start_does_not_continue_the_line(text: str) -> None:
    # '\\' is a backslash; the newline after it ends the line, and '#' starts a comment
    # (the count of backslashes stops at the start of the text, it does not wrap around).
    script = parse(text)
    assert script.problems == ()
    assert texts(script) == [["\\"]]


@needs_bash
def test_an_escaped_character_before_a_line_continuation_does_not_start_a_comment() -> None:
    # '\a' is 'a'; the continuation joins the '#': the word is 'a#x' to bash.
    assert bash_words("\\a\\\n#x") == ["a#x"]
    assert parse("ls \\a\\\n#x").problems == (
        "a '#' the parser reads as a comment is part of a word to bash",
    )


# -- connectors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "connectors"),
    [
        ("a; b", ["", ";"]),
        ("a\nb", ["", ";"]),
        ("a && b", ["", "&&"]),
        ("a || b", ["", "||"]),
        ("a | b", ["", "|"]),
        ("a |& b", ["", "|&"]),
        ("a && b || c; d | e", ["", "&&", "||", ";", "|"]),
    ],
)
def test_each_command_records_the_operator_before_it(text: str, connectors: list[str]) -> None:
    script = parse(text)
    assert script.problems == ()
    assert [c.connector for c in script.commands] == connectors


def test_a_command_after_an_ampersand_is_joined_by_it_and_the_line_is_refused() -> None:
    script = parse("a & b")
    assert [c.connector for c in script.commands] == ["", "&"]
    assert script.problems == ("a command runs in the background ('&')",)


@needs_bash
def test_a_double_semicolon_outside_case_is_refused_as_bash_refuses_it() -> None:
    assert BASH is not None
    ran = subprocess.run([BASH, "-c", "echo a;; echo b"], capture_output=True, check=False)
    assert ran.returncode == 2
    assert b"syntax error" in ran.stderr
    assert parse("echo a;; echo b").problems == ("a ';;' outside 'case'",)


@needs_bash
@pytest.mark.parametrize(
    ("word", "problem"),
    [
        ("$(echo a)#b", "a command substitution"),
        ("$((1))#b", "an arithmetic expansion"),
        ("<(:)#b", "a process substitution"),
    ],
)
def test_a_hash_right_after_a_substitution_is_part_of_the_word(word: str, problem: str) -> None:
    # The ')' that ends a substitution is inside the word: bash reads no comment there.
    assert len(bash_words(f"{word} c")) == 2
    script = parse(f"echo {word} c")
    assert script.problems == ()
    assert [(w.text, w.problem) for w in script.commands[0].words] == [
        ("echo", ""),
        (None, problem),
        ("c", ""),
    ]


# -- words that are not literal ------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "problem"),
    [
        ("$'a'", "ANSI-C quoting ($'...')"),
        ('$"a"', 'locale quoting ($"...")'),
        ("$x", "a parameter expansion"),
        ("${x}", "a parameter expansion"),
        ("$(ls)", "a command substitution"),
        ("<(ls)", "a process substitution"),
        ("$((1))", "an arithmetic expansion"),
        ("{1..3}", "a brace expansion"),
    ],
)
def test_a_word_bash_changes_is_a_word_that_is_not_literal(word: str, problem: str) -> None:
    # The command is read (no problem of its own); only the word is not a literal, as an
    # argument, a command name and a redirection's target.
    # (The parser reads '$"a"' after a command name as '$' and a string: refused too.)
    places = [
        (f"{word} a", lambda c: c.words[0]),
        (f"echo a > {word}", lambda c: c.redirects[0].target),
    ]
    if word != '$"a"':
        places.append((f"echo {word}", lambda c: c.words[1]))
    for command, pick in places:
        script = parse(command)
        assert script.problems == (), command
        (only,) = script.commands
        assert (pick(only).text, pick(only).problem) == (None, problem), command


def test_a_word_that_is_not_literal_is_neither_quoted_nor_a_glob() -> None:
    script = parse("echo $x > $(ls)")
    (only,) = script.commands
    assert tuple(only.words[1]) == (None, False, "a parameter expansion", False)
    assert tuple(only.redirects[0].target) == (None, False, "a command substitution", False)


def test_an_assignment_without_a_value_is_the_empty_literal() -> None:
    script = parse("X= ls")
    assert script.problems == ()
    ((name, value),) = script.commands[0].assignments
    assert (name, tuple(value)) == ("X", ("", False, "", False))


def test_a_number_is_a_literal_word() -> None:
    script = parse("head -n 12 f")
    assert script.problems == ()
    assert [tuple(w) for w in script.commands[0].words] == [
        ("head", False, "", False),
        ("-n", False, "", False),
        ("12", False, "", False),
        ("f", False, "", False),
    ]


@needs_bash
@pytest.mark.parametrize("word", ["a'b'", "'x'1", "1'x'", '"c"d', '-1"a"', '12""', "a'b'\"c\"d"])
def test_quoted_and_unquoted_parts_join_into_one_literal_word(word: str) -> None:
    (expected,) = bash_words(word)
    script = parse(f"echo {word}")
    assert script.problems == ()
    assert [(w.text, w.quoted) for w in script.commands[0].words] == [
        ("echo", False),
        (expected, True),
    ]


def test_a_word_the_parser_starts_with_a_hash_where_bash_starts_a_comment_is_refused() -> None:
    # tree-sitter-bash starts a comment wherever bash does, so this guard is met only
    # through a tree whose word starts with '#' after a blank: '{#a,b}' read over a
    # source where the '{' is a space.
    tree = parse_tree(b"echo {#a,b}")
    assert tree is not None
    assert comment_problem(b"echo {#a,b}", tree.root_node) is None
    assert comment_problem(b"echo  #a,b}", tree.root_node) == (
        "a '#' the parser reads as part of a word starts a comment to bash"
    )
    # The same word after a '{' is part of a word to bash too: no problem.
    assert parse("echo {#a,b}").problems == ()


def test_nesting_far_past_the_bound_is_refused_without_following_it() -> None:
    # 5000 levels would exhaust Python's recursion if the builder followed them.
    script = parse(" && ".join(["ls"] * 5000))
    assert script.problems == ("the command nests too deeply",)
    assert len(script.commands) < 5000


def test_a_heredoc_message_nested_past_the_bound_is_not_literal() -> None:
    # The first command of an '&&' chain is the deepest; the message's own command sits
    # three levels below the word (substitution, redirected statement, command).
    message = "\"$(cat <<'EOF'\nm\nEOF\n)\""

    def first_message(after: int) -> tuple[str | None, str]:
        script = parse(f"git commit -m {message} && " + " && ".join(["ls"] * after))
        assert script.problems == ()
        word = script.commands[0].words[3]
        return word.text, word.problem

    assert first_message(60) == ("m", "")
    assert first_message(61) == (None, "a command substitution")


@pytest.mark.parametrize(
    ("unit", "fits"),
    [("ls", 64), ("! ls", 63), ("ls > f", 32)],
)
def test_negation_and_redirection_each_count_as_a_level_of_nesting(unit: str, fits: int) -> None:
    script = parse(" && ".join([unit] * fits))
    assert script.problems == ()
    assert len(script.commands) == fits
    assert "the command nests too deeply" in parse(" && ".join([unit] * (fits + 1))).problems


# -- statements -------------------------------------------------------------------------


def test_a_redirection_alone_is_refused() -> None:
    # Bash creates (or truncates) 'f' for '> f'; there is no command to classify.
    assert parse("> f") == Script((), ("a redirection without a command",))


@pytest.mark.parametrize(
    ("text", "kind"), [("{ ls; } > f", "compound_statement"), ("(ls) > f", "subshell")]
)
def test_a_redirection_of_a_block_the_classifier_does_not_read_is_refused(
    text: str, kind: str
) -> None:
    assert parse(text) == Script(
        (),
        (
            f"shell syntax the classifier does not model ({kind})",
            "a redirection whose command cannot be read",
        ),
    )


def test_an_assignment_alone_is_a_command_without_words() -> None:
    script = parse("X=1; ls")
    assert script.problems == ()
    assert [(c.assignments, c.words, c.redirects, c.connector) for c in script.commands] == [
        ((("X", ("1", False, "", False)),), (), (), ""),
        ((), (("ls", False, "", False),), (), ";"),
    ]


def test_a_negated_command_is_marked_with_its_redirections() -> None:
    script = parse("! ls > f && cat g")
    assert script.problems == ()
    assert [(c.negated, [r.target.text for r in c.redirects]) for c in script.commands] == [
        (True, ["f"]),
        (False, []),
    ]


# -- a newline the parser reads past -------------------------------------------------------


def _bash_creates(command: str, where: Path, *, seed: str = "") -> list[str]:
    """The files in a fresh directory (holding ``seed``, if given) after bash runs ``command``."""
    assert BASH is not None
    where.mkdir()
    if seed:
        (where / seed).write_text("x")
    subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", command],
        cwd=where,
        capture_output=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": HOME},
    )
    return sorted(p.name for p in where.iterdir())


@needs_bash
@pytest.mark.parametrize(
    "command", ["cat f #\n\\touch CLAUDE.md", "cat f # note\n\\touch CLAUDE.md"]
)
def test_a_command_the_parser_reads_on_past_a_comment_is_refused(
    command: str, tmp_path: Path
) -> None:
    # The comment ends at the newline and so does the command: bash runs 'touch'.
    assert _bash_creates(command, tmp_path / "work", seed="f") == ["CLAUDE.md", "f"]
    assert parse(command) == Script((), ("a command the parser reads on past a comment",))
    assert analyse(command).kind == ShellKind.UNCLASSIFIED


@needs_bash
@pytest.mark.parametrize(
    "command", [">/dev/null\n\\touch CLAUDE.md", "2>/dev/null\n\\touch CLAUDE.md"]
)
def test_a_word_the_parser_starts_at_a_newline_is_not_literal(command: str, tmp_path: Path) -> None:
    # The parser joins the newline and '\touch' into one word; bash ends the line there
    # and runs 'touch'.
    assert _bash_creates(command, tmp_path / "work") == ["CLAUDE.md"]
    script = parse(command)
    assert script.commands[0].words[0].text is None
    assert script.commands[0].words[0].problem == "an unquoted blank inside a word"
    assert analyse(command).kind == ShellKind.UNCLASSIFIED


def test_a_comment_at_the_end_of_a_command_ends_it() -> None:
    script = parse("cat f # note\ncat g")
    assert script.problems == ()
    assert texts(script) == [["cat", "f"], ["cat", "g"]]


@pytest.mark.parametrize("operator", ["==", "=~"])
def test_a_test_operator_as_an_argument_is_refused(operator: str) -> None:
    # The parser drops the operator from the words (bash passes it as an argument).
    script = parse(f"test a {operator} b")
    assert script.problems == ("a test operator outside a test",)
    assert texts(script) == [["test", "a", "b"]]


# -- assignments --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["a[1]=x ls", "a[1]=x"])
def test_an_assignment_to_an_array_element_is_refused(text: str) -> None:
    script = parse(text)
    assert script.problems == ("an assignment to something other than a plain name",)
    assert script.commands[0].assignments == (("a[1]", ("x", False, "", False)),)


def test_an_appending_assignment_is_refused() -> None:
    script = parse("a+=x ls")
    assert script.problems == ("an appending assignment ('+=')",)
    assert script.commands[0].assignments == (("a", ("x", False, "", False)),)


def test_a_plain_assignment_before_a_command_is_read() -> None:
    script = parse("LC_ALL=C ls")
    assert script.problems == ()
    assert script.commands[0].assignments == (("LC_ALL", ("C", False, "", False)),)
    assert texts(script) == [["ls"]]


# -- redirections -------------------------------------------------------------------------


@needs_bash
@pytest.mark.parametrize("op", [">", "<<<"])
def test_a_redirection_whose_target_the_parser_finds_past_a_comment_is_refused(op: str) -> None:
    # To bash the '#' starts a comment: the redirection has no target (a syntax error).
    assert BASH is not None
    ran = subprocess.run([BASH, "-c", f"cat {op} # c\nx"], capture_output=True, check=False)
    assert b"syntax error" in ran.stderr
    assert parse(f"cat {op} # c\nCLAUDE.md").problems == (
        "a redirection part the classifier does not model (comment)",
    )


@pytest.mark.parametrize(
    ("text", "redirect"),
    [
        ("cat <<< hi", ("<<<", "", ("hi", False, "", False))),
        ("ls 2>&1", (">&", "2", ("1", False, "", False))),
        ("ls >> f", (">>", "", ("f", False, "", False))),
        ("ls &> f", ("&>", "", ("f", False, "", False))),
    ],
)
def test_a_redirection_keeps_its_operator_descriptor_and_target(
    text: str, redirect: tuple[str, str, tuple[object, ...]]
) -> None:
    script = parse(text)
    assert script.problems == ()
    (only,) = script.commands[0].redirects
    assert (only.op, only.fd, tuple(only.target)) == redirect


def test_a_redirection_without_a_target_is_refused() -> None:
    script = parse("ls >&-")
    assert script.problems == ("a redirection without a target",)
    (only,) = script.commands[0].redirects
    assert tuple(only.target) == (None, False, "no target", False)


def test_a_redirection_with_several_targets_is_refused() -> None:
    assert parse("ls > [[ x ]]").problems == ("a redirection with more than one target",)


def test_a_heredoc_with_more_after_its_word_is_refused_part_by_part() -> None:
    script = parse("cat <<EOF > f && ls\na\nEOF")
    assert script.problems == (
        "a heredoc part the classifier does not model (&&)",
        "a heredoc part the classifier does not model (command)",
    )
    assert [(r.op, r.target.text) for r in script.commands[0].redirects] == [
        ("<<", "a\n"),
        (">", "f"),
    ]


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("cat <<'EOF' > CLAUDE.md\nx\nEOF", [("<<", "x\n"), (">", "CLAUDE.md")]),
        ("cat > CLAUDE.md <<'EOF'\nx\nEOF", [(">", "CLAUDE.md"), ("<<", "x\n")]),
    ],
)
def test_a_redirection_written_beside_a_heredoc_is_a_write(
    text: str, order: list[tuple[str, str]]
) -> None:
    # The redirections keep the order they are written in.
    script = parse(text)
    assert script.problems == ()
    assert [(r.op, r.target.text) for r in script.commands[0].redirects] == order
    assert [w.path for w in analyse(text).writes] == ["CLAUDE.md"]


def test_a_heredoc_on_another_descriptor_keeps_it() -> None:
    script = parse("cat 3<<-EOF\n\tx\n\tEOF")
    assert script.problems == ()
    assert script.commands[0].redirects == (("<<-", "3", ("x\n", False, "", False)),)


@pytest.mark.parametrize(("start", "quoted"), [("EOF", False), ("'EOF'", True), ('"EOF"', True)])
def test_a_heredoc_body_is_quoted_when_its_delimiter_is(start: str, quoted: bool) -> None:
    # A quoted delimiter keeps the body from expansion.
    script = parse(f"cat <<{start}\nx\nEOF")
    assert script.problems == ()
    assert script.commands[0].redirects == (("<<", "", ("x\n", False, "", quoted)),)


# -- heredocs as bash reads them ------------------------------------------------------------


def _bash_stdout(command: str) -> str:
    assert BASH is not None
    return subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", command],
        capture_output=True,
        check=False,  # a line after the heredoc may run a command that is not found
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": HOME},
    ).stdout


@needs_bash
@pytest.mark.parametrize(
    "text",
    [
        "cat <<EOF\n\tx\nEOF",
        "cat <<EOF\n  x\n y\nEOF",
        "cat <<EOF\n\n x\nEOF",
        "cat <<EOF\n \nEOF",
        "cat <<EOF\nEOF",
        "cat <<EOF   \n x\nEOF",
        "cat <<-EOF\n\tx\n\tEOF",
        "cat <<-EOF\n\t\tx\n\t\tEOF",
        "cat <<-EOF\n\tEOF",
        "cat <<-EOF\nx\n\tEOF\nEOF",
        "cat <<'EOF'\n $x\\\nEOF",
        'cat <<-"EOF"\n\t\\$x\n\tEOF',
    ],
)
def test_a_heredoc_body_is_read_as_bash_reads_it(text: str) -> None:
    # Leading blanks and empty lines are part of the body; '<<-' removes leading tabs.
    script = parse(text)
    assert script.problems == ()
    (heredoc,) = [r for r in script.commands[0].redirects if r.op in ("<<", "<<-")]
    assert heredoc.target.text == _bash_stdout(text)


@needs_bash
def test_a_heredoc_message_keeps_its_indentation() -> None:
    message = "\"$(cat <<'EOF'\n  Title\n\n  body\nEOF\n)\""
    assert bash_words(message) == ["  Title\n\n  body"]
    assert texts(parse(f"git commit -m {message}")) == [
        ["git", "commit", "-m", "  Title\n\n  body"]
    ]


@needs_bash
@pytest.mark.parametrize(
    "text",
    [
        "cat <<EOF\nx\n\tEOF\nEOF",  # '<<' keeps the tab: '\tEOF' is a body line
        "cat <<-EOF\nx\n  EOF\nEOF",  # '<<-' removes tabs, not spaces
        'cat <<E"OF"\nx\nEOF\ntouch y\nE"OF"\n',  # the delimiter is 'EOF'
    ],
)
def test_a_heredoc_the_parser_ends_on_another_line_is_refused(text: str) -> None:
    script = parse(text)
    assert script.problems == ("a heredoc that bash would end at another line",)
    assert [r.op for r in script.commands[0].redirects] == []


@pytest.mark.parametrize(
    "text",
    ["cat <<E*\nx\nE*", "cat <<$x\nx\n$x"],
)
def test_a_heredoc_delimiter_that_is_not_a_plain_word_is_refused(text: str) -> None:
    assert parse(text).problems == ("a heredoc whose delimiter cannot be read exactly",)


@pytest.mark.parametrize("body", ["$x", "`ls`", "a\\b", "${x}", "$(ls)"])
def test_an_unquoted_heredoc_body_with_an_expansion_or_a_backslash_is_refused(body: str) -> None:
    unquoted = parse(f"cat <<EOF\n{body}\nEOF")
    assert unquoted.problems == ("an unquoted heredoc body with expansions",)
    assert unquoted.commands[0].redirects == ()
    quoted = parse(f"cat <<'EOF'\n{body}\nEOF")
    assert quoted.problems == ()
    assert quoted.commands[0].redirects == (("<<", "", (f"{body}\n", False, "", True)),)


# -- double quotes --------------------------------------------------------------------------

MESSAGE = "$(cat <<'E'\nm\nE\n)"


@needs_bash
@pytest.mark.parametrize(
    "word",
    [
        '"a\\$b"',
        '"a\\nb"',
        '"a\\\\"',
        '"a\\\nb"',
        '"a$"',
        '""',
        f'"x{MESSAGE}y"',
        f'"{MESSAGE}$"',
        f'"{MESSAGE}{MESSAGE}"',
        f'" {MESSAGE} "',  # the parser's tokens ' $(' and ' "' hold the blanks
        f'"\t{MESSAGE}\n"',
        f'"a \\\n {MESSAGE}"',
    ],
)
def test_a_double_quoted_literal_reads_as_bash_reads_it(word: str) -> None:
    (expected,) = bash_words(word)
    script = parse(f"echo {word}")
    assert script.problems == ()
    assert [tuple(w) for w in script.commands[0].words] == [
        ("echo", False, "", False),
        (expected, False, "", True),
    ]


@pytest.mark.parametrize(
    ("word", "problem"),
    [
        ('"a $x"', "a parameter expansion"),
        ('"${x}"', "a parameter expansion"),
        ('"$(ls)"', "a command substitution"),
        ('"`ls`"', "a command substitution"),
        # Inside backquotes bash removes a backslash before '\\', '$' or '`' even in a
        # quoted heredoc's body: only the '$(...)' form is read as a message.
        ("\"`cat <<'E'\na\\\\b\nE\n`\"", "a command substitution"),
        ("\" `cat <<'E'\nm\nE\n`\"", "a command substitution"),  # after a blank
        ('"$((1))"', "an arithmetic expansion"),
        (f'"{MESSAGE}$x"', "a parameter expansion"),
        (f'"$x{MESSAGE}"', "a parameter expansion"),
    ],
)
def test_a_double_quoted_word_with_an_expansion_is_not_literal(word: str, problem: str) -> None:
    script = parse(f"echo {word}")
    assert script.problems == ()
    assert (script.commands[0].words[1].text, script.commands[0].words[1].problem) == (
        None,
        problem,
    )


@needs_bash
def test_a_heredoc_line_continued_by_a_backslash_is_refused() -> None:
    # The continuation joins the empty line after it: the body starts a line later.
    text = "cat <<EOF \\\n\n x\nEOF"
    assert _bash_stdout(text) == " x\n"
    assert parse(text).problems == ("a heredoc that bash would end at another line",)


# -- the heredoc message -------------------------------------------------------------------


@needs_bash
def test_a_heredoc_message_after_a_comment_is_literal() -> None:
    word = "\"$(# the message\ncat <<'E'\nm\nE\n)\""
    assert bash_words(word) == ["m"]
    assert texts(parse(f"git commit -m {word}")) == [["git", "commit", "-m", "m"]]


@pytest.mark.parametrize(
    "inside",
    [
        "cat <<'E'\nm\nE\nls",  # a second command
        "cat <<'E' > f\nm\nE\n",  # a second redirection (a write)
        "X=1 cat <<'E'\nm\nE\n",  # an assignment
        "cat -n <<'E'\nm\nE\n",  # an argument
        "cat <<<m",  # not a heredoc
        "cat <<E\nm\nE\n",  # an unquoted heredoc
        "tac <<'E'\nm\nE\n",  # another program
        "cat <<'E' | tr m n\nm\nE\n",  # a pipe inside the heredoc's redirection
    ],
)
def test_a_substitution_that_is_not_exactly_cat_of_a_quoted_heredoc_is_not_literal(
    inside: str,
) -> None:
    script = parse(f'git commit -m "$({inside})"')
    assert script.problems == ()
    word = script.commands[0].words[3]
    assert (word.text, word.problem) == (None, "a command substitution")


@needs_bash
def test_a_tab_stripped_heredoc_message_is_literal() -> None:
    word = "\"$(cat <<-'E'\n\tm\n\t  n\n\tE\n)\""
    assert bash_words(word) == ["m\n  n"]
    assert texts(parse(f"git commit -m {word}")) == [["git", "commit", "-m", "m\n  n"]]


# -- quote removal, word by word, against bash ---------------------------------------------


@needs_bash
@pytest.mark.parametrize(
    "word",
    [
        "a\\ b",
        "a\\\\b",
        "'a'\"b\"c",
        '"a\\"b"',
        '"a\\\\b"',
        '"a\\b"',
        '"a\\`b"',
        'a"b\'c"d',
        "'a\"b'",
        "\\'",
        '\\"',
        "a\\*",
        'a"*"',
        "a'b\\'",
        '"{a,b}"',
        "'{a,b}'",
        "a\\{b,c}",
        "x='a'",
        "-'n'",
        "\"\"''a",
        'x"a\\\\"',  # an escaped backslash just before the closing quote
        'x"a\\""',  # an escaped quote just before the closing quote
        '"a\\""',
        "x'a'\"b\\$\"",
    ],
)
def test_a_quoted_or_escaped_word_reads_as_bash_reads_it(word: str) -> None:
    (expected,) = bash_words(word)
    script = parse(f"echo {word}")
    assert script.problems == ()
    assert tuple(script.commands[0].words[1]) == (expected, False, "", True)


@needs_bash
@pytest.mark.parametrize("word", ["a{b}", "{a,b", "a,b}", "a..b"])
def test_an_unquoted_word_with_braces_that_do_not_expand_is_literal(word: str) -> None:
    assert bash_words(word) == [word]
    assert tuple(parse(f"echo {word}").commands[0].words[1]) == (word, False, "", False)


@pytest.mark.parametrize("word", ["a*", "[ab]", "a?", "a'b'*", "*.py"])
def test_an_unquoted_glob_character_makes_a_pattern(word: str) -> None:
    only = parse(f"ls {word}").commands[0].words[1]
    assert only.glob is True
    assert only.text == word.replace("'", "")


@needs_bash
@pytest.mark.parametrize("start", ["\\E", '"E"', "'E'"])
def test_a_heredoc_message_with_any_quoting_of_its_delimiter_is_literal(start: str) -> None:
    word = f'"$(cat <<{start}\n$m\nE\n)"'
    assert bash_words(word) == ["$m"]
    assert texts(parse(f"git commit -m {word}")) == [["git", "commit", "-m", "$m"]]


@needs_bash
def test_a_heredoc_delimiter_with_a_quoted_blank_is_one_word() -> None:
    text = 'cat <<"E F"\nx\nE F'
    assert _bash_stdout(text) == "x\n"
    assert parse(text).commands[0].redirects == (("<<", "", ("x\n", False, "", True)),)


@pytest.mark.parametrize("delimiter", ["x", "END_OF_TEXT", "E1"])
def test_any_plain_word_is_a_heredoc_delimiter(delimiter: str) -> None:
    script = parse(f"cat <<{delimiter}\nbody\n{delimiter}")
    assert script.problems == ()
    assert script.commands[0].redirects == (("<<", "", ("body\n", False, "", False)),)


@needs_bash
@pytest.mark.parametrize(("word", "text"), [("[\\\n}", "[}"), ("[\\\n", "[")])
def test_a_line_continuation_inside_a_word_is_removed(word: str, text: str) -> None:
    # The parser keeps '[\<newline>}' as one word (a pattern); bash removes the joint.
    assert bash_words(f"{word};") == [text]
    script = parse(f"echo {word}; ls")
    assert script.problems == ()
    assert [tuple(w) for w in script.commands[0].words] == [
        ("echo", False, "", False),
        (text, True, "", False),
    ]


@pytest.mark.parametrize("char", list("()<>;&|"))
def test_an_unquoted_operator_character_inside_a_word_is_refused(char: str) -> None:
    # The parser ends a word at these; a word text holding one (a heredoc delimiter the
    # parser ran on, 'E<newline>X=0"$(cat ...)"') is refused, not read.
    assert tuple(unquote_unquoted(f"a{char}b")) == (
        None,
        False,
        f"an unquoted {char!r} inside a word",
        False,
    )
    assert unquote_unquoted(f"a'{char}'b").text == f"a{char}b"
    assert heredoc_delimiter(f"E{char}") == (None, False)


@pytest.mark.parametrize("word", ["2$", "a$", "a`b`", "a$x"])
def test_an_unquoted_dollar_or_backquote_inside_a_word_is_not_literal(word: str) -> None:
    # ('a$' is 'a$' to bash; refusing it costs nothing.)
    script = parse(f"echo {word}")
    assert script.problems == ()
    assert tuple(script.commands[0].words[1]) in (
        (None, False, "a '$' or '`' expansion", False),
        (None, False, "a command substitution", False),
        (None, False, "a parameter expansion", False),
    )
    assert unquote_unquoted(word).problem == "a '$' or '`' expansion"


@needs_bash
@pytest.mark.parametrize(
    ("word", "expands"),
    [
        ("{a,b}", True),
        ("{a..c}", True),
        ("x{a,b}y", True),
        ("{ab}", False),
        ("{a,b", False),
        ("a,b}", False),
        ("'{'a,b}", False),
        ("{a,b'}'", False),
        ("{a'..'c}", False),
    ],
)
def test_a_brace_expansion_is_refused_only_where_bash_expands_one(word: str, expands: bool) -> None:
    assert (len(bash_words(word)) > 1) is expands
    read = unquote_unquoted(word)
    if expands:
        assert tuple(read) == (None, False, "a brace expansion", False)
    else:
        assert read.text == bash_words(word)[0]


@pytest.mark.parametrize("text", ["a'b", 'a"b', "'", '"', 'a"b\\"', "x'y'z'"])
def test_a_word_text_with_an_unbalanced_quote_is_refused(text: str) -> None:
    # The parser gives no such word; quote removal refuses one rather than guess.
    assert tuple(unquote_unquoted(text)) == (None, False, "an unbalanced quote", False)


def test_a_backslash_ending_double_quoted_text_is_kept() -> None:
    # Text between a double quote and a substitution never ends so; kept as bash keeps it.
    assert unquote_double("a\\") == "a\\"
    assert unquote_double("a\\\\") == "a\\"


def test_a_heredoc_comes_before_the_redirections_written_after_it() -> None:
    script = parse("cat <<'E' > f 2> g\nx\nE")
    assert script.problems == ()
    assert [(r.op, r.fd, r.target.text) for r in script.commands[0].redirects] == [
        ("<<", "", "x\n"),
        (">", "", "f"),
        (">", "2", "g"),
    ]


@needs_bash
@pytest.mark.parametrize("word", ["{a.\\.c}", "{1\\..3}", "{a.\\x.c}"])
def test_an_escaped_dot_keeps_a_sequence_from_expanding(word: str) -> None:
    (expected,) = bash_words(word)
    assert tuple(unquote_unquoted(word)) == (expected, False, "", True)


@pytest.mark.parametrize("word", ['x"$y"', '"$y"x', 'x"a`b`"'])
def test_an_expansion_in_double_quotes_joined_to_a_word_is_not_literal(word: str) -> None:
    script = parse(f"echo {word}")
    assert script.problems == ()
    assert tuple(script.commands[0].words[1]) == (
        None,
        False,
        "a '$' or '`' inside double quotes",
        False,
    )


def test_a_backslash_at_the_very_end_of_a_word_text_is_refused() -> None:
    # Bash keeps it ('printf %s a\' prints 'a\'); the parser reports a syntax error.
    assert tuple(unquote_unquoted("a\\")) == (
        None,
        False,
        "a backslash at the end of a word",
        False,
    )
    assert parse("echo a\\").problems == (
        "the shell parser found a syntax error or a missing token",
    )
