"""Real bash judges the shell classifier.

Commands are generated from readers, writers of protected files, ref-moving git
commands, quoting, comments, line continuations, heredocs and redirections, then
mutated by inserting characters where bash and a parser may disagree (every control
byte 0x01-0x1f and 0x7f, blanks, quotes, '#', operators) at any position. The
classifier gives its verdict; every command it calls read-only, and every command it
calls a write, then runs under real /bin/bash in a throwaway bubblewrap box over a
copy of a small real git repository (tests/support/bashbox.py). The tree is compared
before and after, ``.git`` refs included: a read-only verdict must leave it as it was,
a declared write set must cover every path that changed.

``PLANGATE_DIFFERENTIAL_EXAMPLES`` sets the number of generated examples (300 by
default; a longer local hunt uses thousands).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from plangate.hooks.shell import ShellAnalysis, ShellKind, analyse
from support.bashbox import PROTECTED, BashBox, covered
from support.branches import Branches

EXAMPLES = int(os.environ.get("PLANGATE_DIFFERENTIAL_EXAMPLES", "300"))

TARGETS = (*PROTECTED, ".git/refs/heads/main", ".git/config", "src/a.py", "new.txt")
READERS = (
    "ls",
    "ls -la src",
    "cat CLAUDE.md",
    "echo hi",
    "printf '%s\\n' x",
    "true",
    "pwd",
    "wc -l src/a.py",
    "head -1 CLAUDE.md",
    "grep -r a src",
    "git status",
    "git status --short",
    "git log --oneline -2",
    "git diff HEAD~1",
    "git branch",
    "git branch -a",
    "git branch --list 'ma*'",
    "git tag",
    "git tag -l 'v*'",
    "git show-ref",
    "git rev-parse HEAD",
    "git symbolic-ref HEAD",
    "git reflog show",
    "git notes list",
    "git add src/a.py",
    "git reset -- src/a.py",
)
REF_MOVERS = (
    "git branch -f topic HEAD",
    "git branch -f main HEAD~2",
    "git branch -M topic main",
    "git branch -m topic moved",
    "git branch -c main copy",
    "git branch -C topic main",
    "git branch -D topic",
    "git branch -d topic",
    "git branch new-topic",
    "git branch -u origin/main",
    "git checkout -b fresh",
    "git checkout -B main HEAD~1",
    "git switch -c fresh",
    "git fetch . +main:topic",
    "git fetch . +topic:main",
    "git fetch origin",
    "git fetch --prune origin",
    "git push . +HEAD~2:main",
    "git push . HEAD:topic",
    "git push . :topic",
    "git push -u origin main",
    "git push origin HEAD",
    "git tag v2",
    "git tag -f v1 HEAD",
    "git tag -d v1",
    "git tag -a v3 -m m",
    "git update-ref refs/heads/main HEAD~2",
    "git update-ref -d refs/heads/topic",
    "git symbolic-ref HEAD refs/heads/topic",
    "git replace HEAD HEAD~1",
    "git notes add -m note",
    "git reflog expire --expire=now --all",
    "git pack-refs --all",
    "git reset --soft HEAD~1",
    "git reset",
    "git commit -q -m x -- src/a.py",
)
WRITER_FORMS = (
    "echo x > {}",
    "echo x >> {}",
    "printf x | tee {}",
    "tee -a {} < /dev/null",
    "touch {}",
    "rm -f {}",
    "cp src/b.py {}",
    "sed -i s/a/b/ {}",
    "chmod 600 {}",
    "truncate -s 0 {}",
    ": > {}",
    "cat src/a.py 1> {}",
    "ls >| {}",
)
SEPARATORS = (" ; ", " && ", " || ", " | ", "\n", ";", "&&")
INSERTED = (
    *(chr(code) for code in range(1, 32) if code not in (9, 10)),
    "\x7f",
    " ",
    "\t",
    "\n",
    "#",
    "\\",
    "\\\n",
    "'",
    '"',
    ";",
    "&",
    "|",
    ">",
    "<",
    "$",
    "`",
    "(",
    ")",
    "{",
    "}",
    "*",
    "=",
    "~",
    "\u00a0",
    "\u2028",
)
"""Characters inserted anywhere: every control byte, blanks, quotes, comment and operator
characters, a line continuation, and Unicode spaces (letters to bash)."""
COMMENT_LEADS = (
    " ",
    "\t",
    "\n",
    ";",
    "",
    "\\\n",
    " \\\n",
    "\u00a0",
    *(chr(code) for code in (*range(1, 9), *range(11, 32), 127)),
    *(" " + chr(code) for code in (13, 11, 12)),
)
"""What comes before a '#': blanks bash knows, none, a line continuation, every control
byte (which the parser may take for a blank), a no-break space."""


PATH_SPELLINGS = ("{}", "./{}", "src/../{}", "/tmp/box/repo/{}", "src//../{}")
"""Spellings of one path of the tree (the box shows the copy at /tmp/box/repo)."""
PREFIXES = ("", "", "", "cd src && ", "cd src; ", "env ", "command ", "nice ")


def _quoted(word: str, style: int) -> str:
    """``word`` in one of the spellings bash reads as the same word."""
    if style == 1:
        return f"'{word}'"
    if style == 2:
        return f'"{word}"'
    if style == 3:
        return "".join(f"\\{c}" if c.isalnum() else c for c in word)
    if style == 4 and len(word) > 2:
        return f"{word[:1]}''{word[1:]}"
    return word


@st.composite
def parts(draw: st.DrawFn, *, readers_only: bool = False) -> str:
    kind = "reader" if readers_only else draw(st.sampled_from(("reader", "writer", "ref")))
    if kind == "reader":
        return draw(st.sampled_from(READERS))
    if kind == "ref":
        return draw(st.sampled_from(REF_MOVERS))
    path = draw(st.sampled_from(PATH_SPELLINGS)).format(draw(st.sampled_from(TARGETS)))
    target = _quoted(path, draw(st.integers(0, 4)))
    prefix = draw(st.sampled_from(PREFIXES))
    if prefix.startswith("cd src") and not target.startswith(("/", "'/", '"/')):
        target = "../" + target
    return prefix + draw(st.sampled_from(WRITER_FORMS)).format(target)


@st.composite
def command_lines(draw: st.DrawFn) -> str:
    # Half the lines are readers only, so read-only verdicts (the ones that let a command
    # through) are common; what is hidden in them comes from the wrappers and insertions.
    readers_only = draw(st.booleans())
    pieces = [draw(parts(readers_only=readers_only)) for _ in range(draw(st.integers(1, 3)))]
    text = pieces[0]
    for piece in pieces[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + piece
    wrapper = draw(st.integers(0, 8))
    if wrapper == 1:
        text += " # " + draw(parts())
    elif wrapper == 2:
        text = f"cat <<'EOF'\n{draw(parts())}\nEOF\n{text}"
    elif wrapper == 3:
        text = f"{text} <<EOF\nbody\nEOF"
    elif wrapper == 4:
        text = text.replace(" ", " \\\n", 1)
    elif wrapper == 5:
        text = f"bash -c {_sh_quote(text)}"
    elif wrapper == 7:
        text = f"sh -c {_sh_quote(text)} && cat <<-'EOF'\n\t{draw(parts())}\n\tEOF"
    elif wrapper == 6:
        # A comment hiding a writer, after each spelling of a blank (or none).
        text += draw(st.sampled_from(COMMENT_LEADS)) + "#" + draw(parts())
    for _ in range(draw(st.integers(0, 2))):
        # Half the insertions go next to a blank, '#', quote or operator, where bash
        # and a parser may part ways; the others anywhere.
        marks = [i for i, c in enumerate(text) if c in " \t\n#'\";&|<>\\"]
        if marks and draw(st.booleans()):
            position = draw(st.sampled_from(marks)) + draw(st.integers(0, 1))
        else:
            position = draw(st.integers(0, len(text)))
        if draw(st.booleans()) or position == len(text):
            text = text[:position] + draw(st.sampled_from(INSERTED)) + text[position:]
        else:
            text = text[:position] + text[position + 1 :]  # a character removed
    return text


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> BashBox:
    return BashBox(tmp_path_factory.mktemp("bashbox"))


def _judge(command: str, box: BashBox) -> ShellAnalysis:
    """Run ``command`` when the classifier calls it read-only or a write; assert bash agrees."""
    analysis = analyse(command)
    if analysis.kind == ShellKind.READ_ONLY:
        outcome = box.run(command)
        assert not outcome.changed, (
            f"read-only by the classifier, but bash changed {sorted(outcome.changed)}: "
            f"{command!r}\n{outcome.output}"
        )
    elif analysis.kind == ShellKind.WRITES:
        outcome = box.run(command)
        declared = [w.path for w in analysis.writes]
        declared += [os.path.join(d, b) for d, b, _step in analysis.into_dir]
        missed = covered(outcome, declared, commits=analysis.commits)
        assert not missed, (
            f"the classifier declared {declared}, but bash also changed {missed}: "
            f"{command!r}\n{outcome.output}"
        )
    return analysis


CONTROL_BYTES = [chr(code) for code in (*range(1, 9), *range(11, 32), 127)]


@pytest.mark.parametrize("control", CONTROL_BYTES, ids=lambda c: f"0x{ord(c):02x}")
@pytest.mark.parametrize(
    "template",
    [
        "ls{}#; echo x > CLAUDE.md",
        "ls {}#; tee .claude/settings.json < /dev/null",
        "git status{}# && touch approvals/c3.json",
        "cat CLAUDE.md{}#\nrm -f .git/hooks/pre-push",
        "echo 'a{}b'",
        "ls{}",
    ],
)
def test_a_control_character_anywhere_is_never_read_only(
    template: str, control: str, box: BashBox
) -> None:
    command = template.format(control)
    assert _judge(command, box).kind == ShellKind.UNCLASSIFIED, repr(command)


REF_REGRESSIONS = [
    "git branch -f main HEAD~2",
    "git branch -M topic main",
    "git branch -D topic",
    "git branch new-topic",
    "git checkout -b fresh",
    "git fetch . +topic:main",
    "git push . +HEAD~2:main",
    "git push -u origin main",
    "git tag -f v1 HEAD",
    "git update-ref refs/heads/main HEAD~2",
    "git symbolic-ref HEAD refs/heads/topic",
    "git reflog expire --expire=now --all",
    "git reset --soft HEAD~1",
    "git reset",
]


@pytest.mark.parametrize("command", REF_REGRESSIONS)
def test_a_ref_moving_command_is_a_write_of_git_that_bash_confirms(
    command: str, box: BashBox
) -> None:
    analysis = _judge(command, box)
    assert analysis.kind == ShellKind.WRITES, analysis
    assert box.run(command).changed, f"the example no longer moves a ref: {command!r}"


def test_bash_agrees_with_the_classifier(box: BashBox) -> None:
    """Only read-only and writes verdicts run in the box: each must be a good share of
    the generated command lines (also shown by --hypothesis-show-statistics)."""
    seen = Branches()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(command=command_lines())
    @example(command="ls\r#; echo x > CLAUDE.md")
    @example(command="ls\x0b#; tee .claude/settings.json < /dev/null")
    @example(command="git status\x0c#; touch approvals/c3.json")
    @example(command="ls \r# x\nrm -f .git/hooks/pre-push")
    @example(command="git branch -f main HEAD~2")
    @example(command="git fetch . +topic:main")
    @example(command="git push . +HEAD~2:main")
    @example(command="git branch -M topic main")
    @example(command='ls ; echo x > "\nCLAUDE.md"')
    @example(command='echo x > "src/a.py\n"')
    @example(command="echo a\\\n# b > CLAUDE.md")
    def check(command: str) -> None:
        seen.example()
        kind = _judge(command, box).kind
        event(f"verdict: {kind}")
        seen.reached("read-only", kind == ShellKind.READ_ONLY)
        seen.reached("writes", kind == ShellKind.WRITES)

    check()
    seen.assert_share("read-only")
    seen.assert_share("writes")


def test_the_box_sees_a_change_bash_makes(box: BashBox) -> None:
    """The comparison itself: a write by bash, in the tree or in .git, is seen."""
    assert box.run("echo x > CLAUDE.md").changed == {"CLAUDE.md"}
    assert ".git/refs/heads/topic" in box.run("git branch -f topic HEAD").changed
    assert box.run("chmod 700 src/a.py").changed == {"src/a.py"}
    assert box.run("true").changed == frozenset()


def test_the_box_has_no_view_of_the_machine(box: BashBox, tmp_path: Path) -> None:
    marker = tmp_path / "outside.txt"
    marker.write_text("outside\n")
    outcome = box.run(f"cat {marker} || echo x > {marker} || ls {Path.cwd()}")
    assert marker.read_text() == "outside\n"
    assert outcome.status != 0, outcome.output


def test_the_box_has_no_network(box: BashBox) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        outcome = box.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
        assert "connected" not in outcome.output
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_a_write_the_declaration_misses_is_reported(box: BashBox) -> None:
    outcome = box.run("echo x > CLAUDE.md; mkdir -p new/deep; git branch -f topic HEAD")
    assert covered(outcome, ["new/deep", ".git"], commits=False) == ["CLAUDE.md"]
    assert covered(outcome, ["CLAUDE.md", "new/deep"], commits=False) == [
        ".git/logs/refs/heads/topic",
        ".git/refs/heads/topic",
    ]
    assert covered(outcome, ["CLAUDE.md", "sub/.git", "new/deep"], commits=False) == []
