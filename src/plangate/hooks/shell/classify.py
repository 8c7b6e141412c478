"""Walk a parsed command line and say what it does (see :func:`analyse`)."""

from __future__ import annotations

import re

from plangate.hooks.shell.find import find_rule
from plangate.hooks.shell.git import git_rule
from plangate.hooks.shell.parse import Command, Redirect, Word, parse
from plangate.hooks.shell.programs import (
    BUILTINS,
    SPECIAL,
    WRITERS,
    classify_program,
    env_problem,
    reader_rule,
)
from plangate.hooks.shell.state import State, Write
from plangate.records import NamedTuple

MAX_DEPTH = 3
"""How deep ``sh -c '...'`` nesting is followed before giving up."""

_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_READ_REDIRECTS = frozenset({"<", "<<<"})  # heredocs ("<<", "<<-") return before the test
_DUP_REDIRECTS = frozenset({">&", "<&"})
_ZSH_NUMERIC_GLOB = re.compile(r"[0-9]*-[0-9]*")


class ShellKind:
    """Classification of one command line."""

    READ_ONLY = "read_only"
    WRITES = "writes"
    RUNS_CODE = "runs_code"
    UNCLASSIFIED = "unclassified"


class ShellAnalysis(NamedTuple):
    """What a command line would do, as far as the classifier can tell."""

    kind: str
    writes: tuple[Write, ...] = ()
    problems: tuple[str, ...] = ()
    runs_code: tuple[str, ...] = ()
    skips_hooks: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    """Programs trusted by bare name: each must not resolve into the repository."""
    into_dir: tuple[tuple[str, str, int], ...] = ()
    """``(destination, basename, step)`` for cp/mv/ln: into an existing directory the
    file lands at ``destination/basename``."""
    commits: bool = False
    commit_all: bool = False
    commit_paths: tuple[str, ...] = ()


class _Walker:
    def __init__(self, depth: int) -> None:
        self.depth = depth

    def script(self, text: str, state: State) -> None:
        if self.depth >= MAX_DEPTH:
            state.unclassified("shell nesting is too deep")
            return
        # A 'sh -c' script runs in a child process: its 'cd' moves only its own commands.
        saved = state.cwd
        walk(text, state, self.depth + 1)
        state.cwd = saved
        state.moved = False

    def simple(self, words: tuple[Word, ...], state: State) -> None:
        simple_command(words, state, self)

    def child(self, words: tuple[Word, ...], state: State) -> None:
        # 'env cd', 'nice cd', 'timeout 5 cd': a program runs 'cd' in its own process
        # (an external 'cd' exists on some systems), so the shell's directory stays.
        saved = state.cwd
        simple_command(words, state, self)
        state.cwd = saved
        state.moved = False


def analyse(command: object, *, cdpath: bool = False) -> ShellAnalysis:
    """Classify a shell command line: read-only, writes (targets), runs code, or unclassified.

    ``cdpath``: the shell runs with a non-empty ``CDPATH``, so ``cd NAME`` (a relative
    directory not starting with ``./`` or ``../``) may enter a directory of ``CDPATH``
    rather than ``./NAME``: the directory after it is unknown.
    """
    if not isinstance(command, str) or command.strip() == "":
        return ShellAnalysis(ShellKind.UNCLASSIFIED, problems=("the command is empty or not text",))
    state = State(cdpath=cdpath)
    walk(command, state, 0)
    if state.reads_file and state.stream_writes:
        # Opening '/dev/fd/N' (or '/dev/stdin|stdout|stderr') opens again the file on
        # descriptor N, for writing: 'echo x < F > /dev/fd/0' and '2<F ... >/dev/stderr'
        # rewrite F, and a duplicated descriptor ('2<&0') may carry F anywhere.
        state.unclassified(
            f"a write to {state.stream_writes[0]!r} in a line that opens a file with '<'"
        )
    if state.commits:
        # The hook reads the index before the line runs: what 'git add' (or 'restore
        # --staged', 'reset REV -- F') stages first is not there yet. The commit is judged
        # with the paths named, and with every change when a pathspec names more.
        state.commit_all = state.commit_all or state.stage_all
        for path in state.stage_paths:
            if path is None:
                state.unclassified("git add paths relative to an unknown directory")
            else:
                state.commit_paths.append(path)
    if state.problems:
        kind = ShellKind.UNCLASSIFIED
    elif state.runs_code:
        kind = ShellKind.RUNS_CODE
    elif state.writes or state.commits or state.skips_hooks:
        kind = ShellKind.WRITES
    else:
        kind = ShellKind.READ_ONLY
    return ShellAnalysis(
        kind=kind,
        writes=tuple(state.writes),
        problems=tuple(state.problems),
        runs_code=tuple(state.runs_code),
        skips_hooks=tuple(state.skips_hooks),
        programs=tuple(dict.fromkeys(state.programs)),
        into_dir=tuple(state.into_dir),
        commits=state.commits,
        commit_all=state.commit_all,
        commit_paths=tuple(state.commit_paths),
    )


def walk(text: str, state: State, depth: int) -> None:
    script = parse(text)
    for problem in script.problems:
        state.unclassified(problem)
    if script.problems:
        return
    walker = _Walker(depth)
    moved = False
    for command in script.commands:
        # A 'cd' moves the commands after it only along an '&&' chain: after ';', '|',
        # '||' or '&' the cd may have failed or run in a subshell. Any 'cd' the shell
        # runs counts ('command cd' too): the rule of the 'cd' sets state.moved.
        if moved and command.connector != "&&":
            state.cwd = None
        state.moved = False
        one_command(command, state, walker)
        if state.moved:
            moved = True
            if command.connector in ("|", "|&") or command.negated:
                # In a pipeline the cd runs in a subshell; under '!' a failed cd passes '&&'.
                state.cwd = None
        state.moved = False
        state.step += 1


def one_command(command: Command, state: State, walker: _Walker) -> None:
    for name, value in command.assignments:
        problem = env_problem(name, value)
        if problem is not None:
            state.unclassified(problem)
    for redirect in command.redirects:
        _redirect(redirect, state)
    if command.words:
        simple_command(command.words, state, walker)


def _redirect(redirect: Redirect, state: State) -> None:
    op, target = redirect.op, redirect.target
    if op in ("<<", "<<-"):
        return  # a heredoc body is stdin (its expansions were checked by the parser)
    if target.text is None:
        state.unclassified(f"a redirection target is not literal: {target.problem}")
        return
    if op in _DUP_REDIRECTS:
        if target.text == "-":
            return
        if target.text.isdigit():
            if int(target.text) > 2 and target.text not in state.opened_fds:
                # '>&5' writes on a descriptor inherited from whatever started the
                # shell, which may be open on any file.
                state.unclassified(f"a descriptor {target.text} the line did not open")
            state.opened_fds.add(redirect.fd)
            return
        if op == ">&" and not redirect.fd:
            state.write(target.text, sink_ok=True)  # '>&file' is '&>file'
            return
        state.unclassified(f"a descriptor redirection to {target.text!r}")
        return
    if target.glob:
        state.unclassified(f"a redirection target {target.text!r} is a glob")
        return
    if op == "<" and _ZSH_NUMERIC_GLOB.fullmatch(target.text):
        # 'CLAUDE<->.md' or 'ci<1-3>.yml': zsh reads '<N-M>' as a numeric glob inside
        # one word (a file name it matches), bash as two redirections.
        state.unclassified(f"'<{target.text}>' is a numeric glob to zsh")
        return
    state.opened_fds.add(redirect.fd)
    if op in _WRITE_REDIRECTS:
        state.write(target.text, sink_ok=True)
    elif op == "<" and target.text not in ("/dev/null", "/dev/tty"):
        state.reads_file = True
    elif op not in _READ_REDIRECTS:
        state.unclassified(f"a redirection the classifier does not model ({op})")


def simple_command(words: tuple[Word, ...], state: State, walker: _Walker) -> None:
    first = words[0]
    if first.text is None:
        state.unclassified(f"the program name is not literal: {first.problem}")
        return
    if first.glob:
        state.unclassified(f"the program name {first.text!r} is a glob")
        return
    name = first.text
    family = classify_program(name)
    args = words[1:]
    if family == "unknown":
        if name == "git":
            state.programs.append(name)
            git_rule(name, args, state, walker)
        elif name == "find":
            state.programs.append(name)
            find_rule(name, args, state, walker)
        else:
            state.unclassified(f"unknown program {name!r}")
        return
    if family == "runs-code":
        state.runs(f"{name} runs project code")
        return
    if name not in BUILTINS:
        state.programs.append(name)
    if family == "special":
        SPECIAL[name](name, args, state, walker)
    elif family == "writer":
        WRITERS[name](name, args, state, walker)
    else:
        reader_rule(name, args, state, walker)
