"""A conservative shell-command classifier for hooks.

It answers one question about a command line an agent wants to run: which
files would it write? The answer is one of

- ``READ_ONLY``: every simple command is a known reader and nothing is
  redirected into a file;
- ``WRITES``: every simple command is understood, and the files it writes are
  listed (paths as written, joined to the directory the command changed into);
- ``UNCLASSIFIABLE``: something could not be understood (command or process
  substitution, variables in a target, an unknown program, ``eval``, a
  heredoc without its end, ``git reset --hard``...). The hook denies these
  whenever a write could matter: with no active task, and with an active task
  alike (docs/agents.md, "Shell commands"). Effects that slip past anyway are
  caught by the PostToolUse/Stop effect check, the git hooks and CI.

The classifier never runs anything and never touches the file system. It is
deliberately incomplete: anything it does not know is unclassifiable, never
read-only.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
from enum import StrEnum
from typing import NamedTuple

from plangate.hooks.paths import is_device_sink

__all__ = ["BashAnalysis", "BashKind", "analyse"]

MAX_DEPTH = 3
"""How deep ``sh -c '...'`` nesting is followed before giving up."""


class BashKind(StrEnum):
    """Classification of one command line."""

    READ_ONLY = "read_only"
    WRITES = "writes"
    UNCLASSIFIABLE = "unclassifiable"


class BashAnalysis(NamedTuple):
    """What a command line would do, as far as the classifier can tell."""

    kind: BashKind
    writes: tuple[str, ...] = ()
    """Raw paths written (relative ones already joined to any ``cd`` target)."""
    problems: tuple[str, ...] = ()
    """Why the command is unclassifiable (short human-readable notes)."""
    commits: bool = False
    """True when the command runs ``git commit`` (the staged paths are written to history)."""
    into_dir: tuple[tuple[str, str], ...] = ()
    """``(destination, basename)`` pairs for cp/mv/ln/install: when the destination
    is a directory the file lands at ``destination/basename``."""
    no_descend: tuple[str, ...] = ()
    """Written paths whose existing directory is left as it is (``mkdir -p``,
    ``touch``): the hook does not judge the files inside them."""


READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "echo", "printf",
        "pwd", "which", "type", "true", "false", "test", "[", "[[", "sort", "uniq", "cut", "tr",
        "diff", "cmp", "stat", "file", "tree", "date", "whoami", "id", "uname", "basename",
        "dirname", "realpath", "readlink", "du", "df", "less", "more", "nl", "column", "jq",
        "sha256sum", "sha1sum", "md5sum", "shasum", "b2sum", "od", "hexdump", "xxd", "strings",
        "seq", "sleep", "ps", "hostname", "printenv", "comm", "paste", "fold", "expand", "rev",
        "tac", "yes", "history", "cd", "pushd", "popd", "export", "exit", "return",
        ":", "wait", "jobs", "ruff", "mypy", "pytest", "tox", "nox",
    }
)
"""Programs that read but do not write files (with the caveats below).

``ruff`` is read-only only for ``ruff check`` without ``--fix`` and for
``ruff format --check``/``--diff``; ``pytest``/``mypy`` write caches only (the
effect check reports any cache that is not ignored by git).
"""

PREFIX_COMMANDS = frozenset({"sudo", "nohup", "time", "nice", "stdbuf", "timeout", "env"})
"""Wrappers whose remaining arguments form the real command."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})

REDIRECT_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
CONTROL_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "\n"})

_ASSIGNMENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
# A heredoc operator whose delimiter is one plain or wholly quoted word that ends
# where the shell's word ends. Anything else ('<<"EOF"X', '<<E"OF"', '<<\\EOF') makes
# the shell's delimiter differ from the one read here, so it is unclassifiable.
_HEREDOC_RE = re.compile(
    r"(?<!<)<<(-?)[ \t]*(?:'([A-Za-z0-9_.-]+)'|\"([A-Za-z0-9_.-]+)\"|([A-Za-z0-9_.-]+))"
    r"(?=[\s;&|<>()]|$)"
)
_HEREDOC_ANY = re.compile(r"(?<!<)<<(?!<)")
# The two python -c patterns are compiled on first use (re's own cache): most
# commands never need them, and every hook process would pay ~0.5 ms for them.
_PY_DANGER = (
    r"\b(?:os|subprocess|shutil|pathlib|Path|exec|eval|compile|__import__|system|popen|"
    r"remove|unlink|rmdir|rename|replace|makedirs|mkdir|write_text|write_bytes|touch|"
    r"chmod|symlink|truncate|importlib|open|io|codecs|tempfile|sqlite3)\b"
)
_PY_OPEN = r"""\bopen\(\s*(['"])([^'"]+)\1\s*,\s*(['"])([rwaxbt+]+)\3\s*\)"""

SAFE_ENV_NAMES = frozenset(
    {
        "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
        "COLUMNS", "LINES", "TERM", "CI", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED", "PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8",
        "PYTHONFAULTHANDLER", "PYTHONDEVMODE", "HYPOTHESIS_PROFILE",
    }
)
"""Variables a command may be given (``NAME=value cmd``, ``env``, ``export``).

Any other name is unclassifiable: many variables turn a reader into something
that runs a command or writes elsewhere (``GIT_EXTERNAL_DIFF``, ``GIT_CONFIG_*``,
``PYTEST_ADDOPTS``, ``LD_PRELOAD``, ``LESSOPEN``, ``PATH``, ``TMPDIR``, ``HOME``...).
``LC_*`` is allowed as well.
"""

GIT_SAFE_CONFIG_PREFIXES = (
    "user.", "color.", "advice.", "core.quotepath", "commit.gpgsign", "gc.auto",
    "init.defaultbranch", "log.", "diff.renames", "diff.noprefix", "column.",
)
"""``git -c key=value`` keys that cannot run a command or redirect git."""

WRAPPER_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset"}),
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-r", "-t", "-U", "-T", "-C", "--user",
                       "--group", "--host", "--prompt", "--role", "--type", "--other-user",
                       "--command-timeout", "--close-from"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "nohup": frozenset(),
    "command": frozenset(),
}
"""Options of the prefix commands that take a separate value (never the command)."""

WRAPPER_UNREADABLE_OPTIONS: dict[str, tuple[str, ...]] = {
    "env": ("-C", "--chdir", "-S", "--split-string"),
    "sudo": ("-D", "--chdir", "-s", "--shell", "-i", "--login", "-e", "--edit"),
}
"""Prefix options that change directory, run a shell or edit files."""


def _long_option(arg: str, name: str) -> bool:
    """True when ``arg`` (``--opt`` or ``--opt=V``) names ``name`` or an abbreviation of it.

    GNU getopt, argparse and git accept any unambiguous prefix of a long option
    (``sort --outp=F``); matching every prefix of at least two letters errs on the
    side of seeing the option.
    """
    if not arg.startswith("--") or not name.startswith("--"):
        return arg == name or arg.startswith(name + "=")
    head = arg.split("=", 1)[0]
    if head in _EXACT_LONG_OPTIONS:
        return head == name
    return len(head) >= 4 and name.startswith(head)


_EXACT_LONG_OPTIONS = frozenset({"--co", "--cov"})
"""Real options (pytest's ``--co``, pytest-cov's ``--cov``) that are not abbreviations."""


def _option_values(args: list[str], short: tuple[str, ...], long: tuple[str, ...]) -> list[str]:
    """Values of ``-o V``, ``-oV``, ``--long V`` and ``--long=V`` (or abbreviations) in ``args``."""
    values: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg in short or (
            "=" not in arg and any(_long_option(arg, name) for name in long)
        ):
            if index + 1 < len(args):
                values.append(args[index + 1])
            index += 2
            continue
        if "=" in arg and any(_long_option(arg, name) for name in long):
            values.append(arg.split("=", 1)[1])
        elif any(arg.startswith(name) and len(arg) > len(name) for name in short):
            values.append(arg[2:])
        index += 1
    return values


def _plain_operands(args: list[str], value_options: frozenset[str]) -> list[str]:
    """Operands of a command whose options in ``value_options`` take a separate value."""
    out: list[str] = []
    skip_next = False
    options_done = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if options_done:
            out.append(arg)
        elif arg == "--":
            options_done = True
        elif arg in value_options:
            skip_next = True
        elif arg.startswith("-") and arg != "-":
            continue
        else:
            out.append(arg)
    return out


def _unsafe_env_name(assignment: str) -> str | None:
    """The variable name of ``NAME=value`` when it is not a safe one, else None."""
    name = assignment.split("=", 1)[0]
    if name in SAFE_ENV_NAMES or name == "LC_ALL" or name.startswith("LC_"):
        return None
    return name


_SED_WRITE_COMMAND = re.compile(r"(?:^|[;{}\n!$/0-9,])\s*[wWe](?:\s|$|;)")
_SED_SUBST_FLAGS = re.compile(
    r"s([^\\\n])(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiImM0-9]*[we]", re.DOTALL
)


class _State:
    def __init__(self, cwd_prefix: str | None = "") -> None:
        self.writes: list[str] = []
        self.problems: list[str] = []
        self.into_dir: list[tuple[str, str]] = []
        self.no_descend: list[str] = []
        self.commits = False
        # Directory changed into with 'cd' ('' = the tool's directory, None = unknown).
        self.cwd_prefix = cwd_prefix

    def write(self, raw: str, *, sink_ok: bool = False) -> None:
        # Redirecting into /dev/null or tee-ing to /dev/stderr writes no file; 'rm
        # /dev/null' or 'touch /dev/stderr' does touch one outside the repository.
        if sink_ok and is_device_sink(raw):
            return
        if raw == "" or "$" in raw or "`" in raw or any(c in raw for c in "*?[]{}"):
            self.problems.append(f"write target {raw!r} is not a literal path")
            return
        if raw.startswith(("~", "/")):
            self.writes.append(raw)
            return
        if self.cwd_prefix is None:
            self.problems.append(f"write target {raw!r} is relative to an unknown directory")
            return
        self.writes.append(posixpath.join(self.cwd_prefix, raw) if self.cwd_prefix else raw)

    def unclassifiable(self, note: str) -> None:
        self.problems.append(note)


def _strip_heredocs(command: str) -> str | None:
    """Remove heredoc bodies (the lines after ``<<WORD`` up to ``WORD``).

    Returns None when a heredoc has no terminating line or a delimiter that
    cannot be read exactly.
    """
    lines = command.split("\n")
    out: list[str] = []
    pending: list[tuple[bool, str]] = []
    for line in lines:
        if pending:
            strip_tabs, word = pending[0]
            candidate = line.lstrip("\t") if strip_tabs else line
            if candidate == word:
                pending.pop(0)
            continue
        out.append(line)
        found = list(_HEREDOC_RE.finditer(line))
        if len(found) != len(_HEREDOC_ANY.findall(line)):
            return None
        for match in found:
            word = match.group(2) or match.group(3) or match.group(4)
            pending.append((match.group(1) == "-", word))
    if pending:
        return None
    # The heredoc operator itself reads stdin: replace it so that the tokenizer
    # does not see '<<WORD' as two redirections.
    return "\n".join(_HEREDOC_RE.sub(" ", line) for line in out)


def _tokens(command: str) -> list[str] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    # Comments are not stripped by the lexer: it cannot tell a quoted '#' from
    # an unquoted one, and dropping text could hide a redirection.
    lexer.commenters = ""
    lexer.whitespace = " \t\r"
    try:
        return list(lexer)
    except ValueError:
        return None


def _split_with_operators(tokens: list[str]) -> list[tuple[list[str], str]]:
    """Simple commands with the control operator before each ('' for the first)."""
    out: list[tuple[list[str], str]] = []
    current: list[str] = []
    before = ""
    for token in tokens:
        if token in CONTROL_OPERATORS:
            if current:
                out.append((current, before))
                current = []
                before = token
            elif token not in ("\n", ";"):
                before = token
            continue
        current.append(token)
    if current:
        out.append((current, before))
    return out


def _split_commands(tokens: list[str]) -> list[list[str]]:
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in CONTROL_OPERATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def analyse(command: object, *, depth: int = 0) -> BashAnalysis:
    """Classify a shell command line (see the module docstring)."""
    state = _State()
    if not isinstance(command, str) or command.strip() == "":
        return BashAnalysis(BashKind.UNCLASSIFIABLE, problems=("the command is empty or not text",))
    _analyse_into(command, state, depth)
    if state.problems:
        return BashAnalysis(
            BashKind.UNCLASSIFIABLE,
            writes=tuple(state.writes),
            problems=tuple(state.problems),
            commits=state.commits,
            into_dir=tuple(state.into_dir),
            no_descend=tuple(state.no_descend),
        )
    if state.writes or state.commits:
        return BashAnalysis(
            BashKind.WRITES,
            writes=tuple(state.writes),
            commits=state.commits,
            into_dir=tuple(state.into_dir),
            no_descend=tuple(state.no_descend),
        )
    return BashAnalysis(BashKind.READ_ONLY)


def _analyse_into(command: str, state: _State, depth: int) -> None:
    if depth > MAX_DEPTH:
        state.unclassifiable("shell nesting is too deep")
        return
    if "`" in command or "$(" in command or "<(" in command or ">(" in command:
        state.unclassifiable("command or process substitution")
        return
    stripped = _strip_heredocs(command)
    if stripped is None:
        state.unclassifiable("a heredoc has no terminating line or an unreadable delimiter")
        return
    tokens = _tokens(stripped.replace("\n", " ; "))
    if tokens is None:
        state.unclassifiable("unbalanced quotes")
        return
    if ("(" in tokens or ")" in tokens) and any(t in ("cd", "pushd", "popd") for t in tokens):
        state.unclassifiable("directory change inside a subshell")
        return
    known = REDIRECT_OPERATORS | CONTROL_OPERATORS | {"<", "<<", "<<<", "<&"}
    for token in tokens:
        if token and all(c in ";&|<>()" for c in token) and token not in known:
            state.unclassifiable(f"unrecognised shell operator {token!r}")
            return
    # A 'cd' moves the commands after it only along an '&&' chain: a failed cd stops
    # the chain, while after ';', newline, '|', '||' or '&' the next command runs
    # whether or not the cd happened (or ran in a pipeline's subshell). There the
    # directory is unknown, so relative writes become unclassifiable.
    moved = False
    for simple, before in _split_with_operators(tokens):
        if moved and before != "&&":
            state.cwd_prefix = None
        is_cd = bool(simple) and simple[0] in ("cd", "pushd", "popd")
        if is_cd and before in ("||", "|", "|&"):
            state.cwd_prefix = None
            moved = True
            continue
        _simple_command(simple, state, depth)
        moved = moved or is_cd


def _take_redirections(words: list[str], state: _State) -> list[str]:
    """Record redirection targets; return the words without redirections."""
    out: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in REDIRECT_OPERATORS:
            if index + 1 >= len(words):
                state.unclassifiable(f"redirection {word!r} without a target")
                return out
            target = words[index + 1]
            # '2>&1' duplicates a descriptor; it writes no file.
            if not (word == ">&" and (target.isdigit() or target == "-")):
                state.write(target, sink_ok=True)
            index += 2
            # Drop the descriptor number written before the operator ('2>file').
            if out and out[-1].isdigit() and word != "&>":
                out.pop()
            continue
        if word in ("<", "<<", "<<<", "<&"):
            index += 2
            if out and out[-1].isdigit():
                out.pop()
            continue
        out.append(word)
        index += 1
    return out


def _operands(args: list[str]) -> list[str]:
    """Arguments that are not options (everything after ``--`` counts)."""
    out: list[str] = []
    options_done = False
    for arg in args:
        if options_done:
            out.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("-") and arg != "-":
            continue
        else:
            out.append(arg)
    return out


def _command_words(words: list[str], state: _State) -> list[str]:
    """The program and its arguments: redirections recorded, a comment and leading
    ``NAME=value`` assignments dropped (an unsafe name is unclassifiable: nothing left)."""
    words = _take_redirections(words, state)
    if words and words[0].startswith("#"):
        return []  # a comment line (its redirections, if any, were still recorded)
    while words and _ASSIGNMENT_RE.fullmatch(words[0]):
        unsafe = _unsafe_env_name(words[0])
        if unsafe is not None:
            state.unclassifiable(f"setting {unsafe} may change what the command does")
            return []
        words = words[1:]
    return words


def _simple_command(words: list[str], state: _State, depth: int) -> None:
    """Judge one simple command by the rule of its program (:data:`_PROGRAM_RULES`).

    A program without a rule of its own is judged as a reader when it is one of
    :data:`READ_ONLY_PROGRAMS`; any other program is unclassifiable.
    """
    words = _command_words(words, state)
    if not words:
        return
    program = posixpath.basename(words[0])
    rule = _PROGRAM_RULES.get(program)
    if rule is None and _PYTHON_VERSIONED.fullmatch(program):
        rule = _python_rule
    if rule is None and program in READ_ONLY_PROGRAMS:
        rule = _reader_rule
    if rule is None:
        state.unclassifiable(f"unknown program {program!r}")
        return
    rule(program, words[1:], state, depth)


_PYTHON_VERSIONED = re.compile(r"python3\.\d+")


def _wrapper_rule(program: str, args: list[str], state: _State, depth: int) -> None:
    if program == "command" and any(a in ("-v", "-V") for a in args[:2]):
        return  # 'command -v NAME' only looks a name up
    _wrapped(program, args, state, depth)


def _export_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    for arg in args:
        name = arg.split("=", 1)[0]
        if not arg.startswith("-") and _unsafe_env_name(name + "=") is not None:
            state.unclassifiable(f"exporting {name} may change what later commands do")


def _runs_text_rule(program: str, _args: list[str], state: _State, _depth: int) -> None:
    state.unclassifiable(f"{program} runs text that cannot be read statically")


def _cd_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    _change_directory(args, state)


def _dir_stack_rule(_program: str, _args: list[str], state: _State, _depth: int) -> None:
    state.cwd_prefix = None


def _git_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    # 'git -C DIR' changes git's directory only, not the shell's: restore it after.
    saved = state.cwd_prefix
    _git(args, state)
    state.cwd_prefix = saved


def _python_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    _python(args, state)


_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                           "-fprintf", "-fls"})


def _find_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    if any(arg in _FIND_ACTIONS for arg in args):
        state.unclassifiable("find with -delete/-exec/-fprint")


def _ruff_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    _ruff(args, state)


def _sed_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    _sed(args, state)


def _tee_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    for path in _operands(args):
        state.write(path, sink_ok=True)


def _copy_rule(program: str, args: list[str], state: _State, _depth: int) -> None:
    _copy_like(args, state, moves=program == "mv")


def _link_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    _link(args, state)


def _file_operands_rule(program: str, args: list[str], state: _State, _depth: int) -> None:
    """rm, rmdir, unlink, shred, touch, mkdir: every operand is written."""
    for path in _operands(args):
        before = len(state.writes)
        state.write(path)
        if program in ("touch", "mkdir") and len(state.writes) > before:
            state.no_descend.append(state.writes[-1])


def _truncate_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    _truncate(args, state)


def _mode_rule(program: str, args: list[str], state: _State, _depth: int) -> None:
    """chmod, chown, chgrp: the files after the mode (or all, with ``--reference``)."""
    operands = _operands(args)
    if any(a.startswith("--reference") for a in args):
        files = operands
    else:
        files = operands[1:]
    if not files:
        state.unclassifiable(f"{program} without files")
    for path in files:
        state.write(path)


def _dd_rule(_program: str, args: list[str], state: _State, _depth: int) -> None:
    for path in (a[3:] for a in args if a.startswith("of=")):
        state.write(path)


def _reader_rule(program: str, args: list[str], state: _State, _depth: int) -> None:
    _reader_outputs(program, args, state)


def _wrapped(program: str, args: list[str], state: _State, depth: int) -> None:
    """A prefix command (``env``, ``sudo``, ``timeout``...): judge the command it runs."""
    value_options = WRAPPER_VALUE_OPTIONS.get(program, frozenset())
    unreadable = WRAPPER_UNREADABLE_OPTIONS.get(program, ())
    rest = list(args)
    while rest and (rest[0].startswith("-") or _ASSIGNMENT_RE.fullmatch(rest[0])):
        head = rest.pop(0)
        if head == "--":
            break
        if any(head == o or head.startswith(o + "=") or (len(o) == 2 and head.startswith(o))
               for o in unreadable):
            state.unclassifiable(f"{program} {head} changes directory or runs a shell")
            return
        if _ASSIGNMENT_RE.fullmatch(head) and not head.startswith("-"):
            unsafe = _unsafe_env_name(head)
            if unsafe is not None:
                state.unclassifiable(f"setting {unsafe} may change what the command does")
                return
            continue
        if program == "time" and (head in ("-o", "--output") or head.startswith("--output=")):
            if "=" in head:
                state.write(head.split("=", 1)[1])
            elif rest:
                state.write(rest[0])
        if head in value_options and rest:
            rest.pop(0)
    if program == "timeout" and rest:
        rest = rest[1:]  # the duration
    if not rest:
        return
    _simple_command(rest, state, depth)


OUTPUT_FILE_OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "sort": (("-o",), ("--output",)),
    "tree": (("-o",), ()),
    "less": (("-o", "-O"), ("--log-file", "--LOG-FILE")),
    "more": ((), ()),
    "ruff": (("-o",), ("--output-file", "--cache-dir")),
    "pytest": ((), ("--junitxml", "--junit-xml", "--basetemp", "--resultlog", "--result-log",
                    "--report-log", "--debug")),
    "mypy": ((), ("--junit-xml", "--cache-dir", "--html-report", "--xml-report", "--txt-report",
                  "--linecount-report", "--linecoverage-report", "--lineprecision-report",
                  "--any-exprs-report", "--cobertura-xml-report", "--xslt-html-report",
                  "--xslt-txt-report", "--lineprecision-report")),
}
"""Options that name a file (or directory) a "reader" program writes."""

RUNS_COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "rg": ("--pre",),
    "ag": ("--pager",),
    "sort": ("--compress-program",),
    "pytest": ("-o", "--override-ini", "-c", "--config-file", "--rootdir", "--confcutdir",
               "--cov-report", "--html", "--json-report-file", "--alluredir"),
    "mypy": ("--install-types", "--config-file", "--python-executable"),
    "file": ("-C", "--compile"),
    "tox": ("-c", "--conf", "--workdir", "--installpkg", "--root"),
    "nox": ("-f", "--noxfile", "--envdir"),
}
"""Options that make a "reader" run another command, write a cache elsewhere or
load configuration from a path the agent chose."""

READER_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "uniq": frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}),
    "xxd": frozenset({"-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-groupsize", "-len",
                      "-seek", "-offset", "-name"}),
    "json.tool": frozenset({"--indent"}),
}


def _reader_outputs(program: str, args: list[str], state: _State) -> None:
    """Writes (or unreadable options) of a program that normally only reads."""
    for option in RUNS_COMMAND_OPTIONS.get(program, ()):
        if any(_long_option(a, option) for a in args):
            state.unclassifiable(f"{program} {option} runs a command or changes where it writes")
            return
    if program == "history" and args:
        state.unclassifiable("history with options reads or writes a history file")
        return
    if program == "pytest" and "--debug" in args:
        state.write("pytestdebug.log")
    short, long = OUTPUT_FILE_OPTIONS.get(program, ((), ()))
    if short or long:
        for value in _option_values(args, short, long):
            state.write(value, sink_ok=True)
    if program in ("uniq", "xxd", "json.tool"):
        operands = _plain_operands(args, READER_VALUE_OPTIONS[program])
        if len(operands) >= 2:
            state.write(operands[1], sink_ok=True)


def _shell(program: str, args: list[str], state: _State, depth: int) -> None:
    index = 0
    script: str | None = None
    while index < len(args):
        arg = args[index]
        if arg.startswith("-") and "c" in arg[1:] and not arg.startswith("--"):
            if index + 1 < len(args):
                script = args[index + 1]
            break
        if arg.startswith("-"):
            index += 1
            continue
        break
    if script is None:
        state.unclassifiable(f"{program} runs a script or stdin")
        return
    nested = _State(cwd_prefix=state.cwd_prefix)
    _analyse_into(script, nested, depth + 1)
    state.writes.extend(nested.writes)
    state.no_descend.extend(nested.no_descend)
    state.problems.extend(nested.problems)
    state.into_dir.extend(nested.into_dir)
    state.commits = state.commits or nested.commits


def _change_directory(args: list[str], state: _State) -> None:
    operands = _operands(args)
    if not operands:
        state.cwd_prefix = None  # 'cd' alone goes home
        return
    target = operands[0]
    if target == "-" or "$" in target or target.startswith("~"):
        state.cwd_prefix = None
        return
    if target.startswith("/"):
        state.cwd_prefix = target
        return
    if state.cwd_prefix is None:
        return
    state.cwd_prefix = posixpath.join(state.cwd_prefix, target) if state.cwd_prefix else target


GIT_READ_ONLY = frozenset(
    {
        "status", "diff", "log", "show", "rev-parse", "ls-files", "ls-tree", "cat-file", "blame",
        "grep", "describe", "show-ref", "merge-base", "rev-list", "shortlog", "fetch", "add",
        "push", "version", "help", "whatchanged", "for-each-ref", "name-rev", "count-objects",
        "check-ignore", "check-attr", "var", "cherry",
    }
)
"""git subcommands that change no file in the working tree.

``add`` only stages (the commit is checked when it happens); ``push`` sends
commits that the pre-push hook and CI check; ``fetch`` updates remote refs.
"""


def _git_directory(directory: str, state: _State) -> None:
    """``git -C DIR``: where git's relative paths start from."""
    if "$" in directory or directory.startswith("~"):
        state.cwd_prefix = None
    elif directory.startswith("/"):
        state.cwd_prefix = directory
    elif state.cwd_prefix is not None:
        state.cwd_prefix = posixpath.join(state.cwd_prefix, directory)


def _git_config_is_safe(setting: str, state: _State) -> bool:
    """``git -c key=value``: only keys that cannot run a command or skip the hooks."""
    if "hookspath" in setting:
        state.unclassifiable("git -c core.hooksPath bypasses the git hooks")
        return False
    if not setting.startswith(GIT_SAFE_CONFIG_PREFIXES):
        state.unclassifiable(f"git -c {setting.split('=', 1)[0]!r} may run a command")
        return False
    return True


_GIT_REDIRECTING_OPTIONS = ("--git-dir", "--work-tree", "--exec-path", "--namespace",
                            "--config-env", "--super-prefix", "--list-cmds")


def _git_subcommand_index(args: list[str], state: _State) -> int | None:
    """Index of the subcommand after git's own options; None when an option is unclassifiable."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        if option == "-C":
            if index + 1 >= len(args):
                state.unclassifiable("git -C without a directory")
                return None
            _git_directory(args[index + 1], state)
            index += 2
            continue
        if option == "-c":
            setting = args[index + 1].lower() if index + 1 < len(args) else ""
            if not _git_config_is_safe(setting, state):
                return None
            index += 2
            continue
        if option.startswith(_GIT_REDIRECTING_OPTIONS):
            state.unclassifiable(f"git {option} redirects git")
            return None
        index += 1
    return index


_GIT_RUNS_OPTIONS = ("--upload-pack", "--receive-pack", "--exec", "--open-files-in-pager", "-O")


def _git_runs_command(sub: str, rest: list[str], state: _State) -> bool:
    """True (and unclassifiable) when an option makes git run another command."""
    for arg in rest:
        if arg == "--":
            break
        if any(_long_option(arg, o) for o in _GIT_RUNS_OPTIONS) or (
            sub == "grep" and arg.startswith("-O")
        ):
            state.unclassifiable(f"git {sub} {arg.split('=', 1)[0]} runs another command")
            return True
    return False


def _git(args: list[str], state: _State) -> None:
    """Judge ``git ARGS`` by the rule of its subcommand (:data:`_GIT_RULES`)."""
    index = _git_subcommand_index(args, state)
    if index is None or index >= len(args):
        return
    sub, rest = args[index], args[index + 1:]
    if _git_runs_command(sub, rest, state):
        return
    for value in _option_values(rest, (), ("--output",)):
        state.write(value, sink_ok=True)
    if sub in GIT_READ_ONLY:
        return
    rule = _GIT_RULES.get(sub)
    if rule is not None:
        rule(sub, rest, state)
    elif not _git_query(sub, rest):
        state.unclassifiable(f"git {sub} may rewrite the working tree")


def _git_branch(_sub: str, _rest: list[str], _state: _State) -> None:
    return  # creates, moves or deletes refs; no working-tree file changes


def _git_commit(_sub: str, rest: list[str], state: _State) -> None:
    if _commit_skips_hooks(rest):
        state.unclassifiable("git commit --no-verify skips the git hooks")
        return
    state.commits = True


def _git_checkout(sub: str, rest: list[str], state: _State) -> None:
    """checkout and restore: the paths after ``--``; restore's operands; never a branch switch."""
    if "--" in rest:
        for path in rest[rest.index("--") + 1:]:
            state.write(path)
        return
    if sub == "restore":
        paths = [a for a in _operands(rest) if not a.startswith("--source")]
        if not paths:
            state.unclassifiable("git restore without paths")
        for path in paths:
            state.write(path)
        return
    state.unclassifiable("git checkout of a branch or commit rewrites the working tree")


def _git_rm_mv(sub: str, rest: list[str], state: _State) -> None:
    operands = _operands(rest)
    if not operands:
        state.unclassifiable(f"git {sub} without paths")
    for path in operands:
        state.write(path)


def _git_apply(_sub: str, rest: list[str], state: _State) -> None:
    if any(a in ("--check", "--stat", "--numstat", "--summary") for a in rest) and not any(
        a == "--apply" for a in rest
    ):
        return
    state.unclassifiable("git apply: the patch's paths are not on the command line")


def _git_reset(_sub: str, rest: list[str], state: _State) -> None:
    if "--" in rest or any(a in ("--hard", "--merge", "--keep") for a in rest):
        state.unclassifiable("git reset rewrites the working tree or index")
    # a soft or mixed reset changes refs and the index, not files


_GIT_RULES: dict[str, Callable[[str, list[str], _State], None]] = {
    "branch": _git_branch,
    "commit": _git_commit,
    "checkout": _git_checkout,
    "restore": _git_checkout,
    "rm": _git_rm_mv,
    "mv": _git_rm_mv,
    "apply": _git_apply,
    "reset": _git_reset,
}
"""Subcommands that may write, each with its rule (any other is a query or unclassifiable)."""

_GIT_QUERY_FORMS: dict[str, tuple[str, ...]] = {
    "stash": ("list", "show"),
    "worktree": ("list",),
}
_GIT_LISTING_SUBCOMMANDS = frozenset({"remote", "config", "tag", "reflog"})
_GIT_LISTING_FIRST_ARGS = ("-v", "--list", "-l", "--get", "show", "get-url")


def _git_query(sub: str, rest: list[str]) -> bool:
    """True for the read-only forms of subcommands that can also write."""
    if sub in _GIT_QUERY_FORMS:
        return bool(rest) and rest[0] in _GIT_QUERY_FORMS[sub]
    return sub in _GIT_LISTING_SUBCOMMANDS and (not rest or rest[0] in _GIT_LISTING_FIRST_ARGS)


def _commit_skips_hooks(args: list[str]) -> bool:
    """True for ``--no-verify`` or ``-n`` anywhere in a short-option cluster."""
    for arg in args:
        if arg == "--":
            return False
        # git accepts any unambiguous prefix of a long option ('--no-veri').
        if arg.startswith("--no-ve") and "--no-verify".startswith(arg.split("=", 1)[0]):
            return True
        if arg.startswith("-") and not arg.startswith("--"):
            for ch in arg[1:]:
                if ch == "n":
                    return True
                if ch in "mFcCt":
                    break  # the rest of the cluster is this option's value
    return False


def _python(args: list[str], state: _State) -> None:
    read_only_modules = ("pytest", "mypy", "pyflakes", "json.tool")
    if len(args) >= 2 and args[0] == "-m" and args[1] in read_only_modules:
        _reader_outputs(args[1], args[2:], state)
        return
    if len(args) >= 2 and args[0] == "-m" and args[1] == "ruff":
        _ruff(args[2:], state)
        return
    if args[:1] in (["--version"], ["-V"]):
        return
    if len(args) >= 2 and args[0] == "-c":
        code = args[1]
        opens = list(re.finditer(_PY_OPEN, code))
        for match in opens:
            mode = match.group(4)
            if any(c in mode for c in "wax+"):
                state.write(match.group(2))
        remainder = re.sub(_PY_OPEN, "", code)
        if re.search(_PY_DANGER, remainder) or not _python_names_safe(remainder):
            state.unclassifiable("python -c code that may write files")
        return
    state.unclassifiable("python runs a script or module that may write files")


SAFE_PY_NAMES = frozenset(
    {
        # keywords
        "and", "or", "not", "in", "is", "for", "if", "else", "elif", "lambda", "import", "from",
        "as", "def", "return", "while", "break", "continue", "pass", "try", "except", "finally",
        "raise", "assert", "del", "True", "False", "None",
        # builtins that neither open files nor reach other objects by name
        "print", "len", "sum", "min", "max", "sorted", "reversed", "range", "str", "int", "float",
        "bool", "repr", "list", "dict", "set", "frozenset", "tuple", "abs", "round", "enumerate",
        "zip", "map", "filter", "any", "all", "isinstance", "hex", "oct", "bin", "ord", "chr",
        "format", "divmod", "pow", "hash", "bytes", "Exception", "ValueError", "KeyError",
        # modules without file or process access, and the attributes used from them
        "json", "sys", "math", "re", "platform", "hashlib", "string", "textwrap", "statistics",
        "version", "version_info", "executable", "argv", "maxsize", "byteorder", "stdout",
        "stdin", "write", "read", "loads", "dumps", "sqrt", "pi", "floor", "ceil", "join",
        "split", "strip", "upper", "lower", "replace", "encode", "decode", "hexdigest", "sha256",
        "sha1", "md5", "items", "keys", "values", "get", "append", "extend", "count", "index",
        "startswith", "endswith", "findall", "match", "search", "sub", "fullmatch", "group",
        "groups", "python_version", "machine", "indent", "sort_keys", "x", "y", "i", "k", "v",
        "line", "data", "s", "n",
    }
)
"""Names ``python -c`` code may use and still count as a reader.

An allowlist on purpose: a list of dangerous names is always incomplete
(``getattr(__builtins__, 'op' + 'en')`` spells ``open`` without the word).
Names starting with ``_`` are never allowed.
"""


def _python_names_safe(code: str) -> bool:
    """True when every name in ``code`` is in :data:`SAFE_PY_NAMES` (tokenized, not parsed)."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return False
    return all(
        tok.string in SAFE_PY_NAMES for tok in tokens if tok.type == tokenize.NAME
    )


def _ruff(args: list[str], state: _State) -> None:
    for value in _option_values(args, ("-o",), ("--output-file", "--cache-dir")):
        state.write(value, sink_ok=True)
    sub = args[0] if args else ""
    if sub == "check" and not any(a.startswith(("--fix", "--unsafe-fixes")) for a in args):
        return
    if sub == "format" and any(a in ("--check", "--diff") for a in args):
        return
    if sub in ("--version", "version", "rule"):
        return
    state.unclassifiable("ruff may rewrite files")


def _sed(args: list[str], state: _State) -> None:
    in_place = any(
        a == "-i" or a.startswith("--in-place") or (a.startswith("-i") and not a.startswith("--"))
        or (a.startswith("-") and not a.startswith("--") and "i" in a[1:] and "e" not in a[1:])
        for a in args
    )
    scripts = _option_values(args, ("-e",), ("--expression",))
    if not scripts:
        plain = _plain_operands(args, frozenset({"-f", "--file", "-l", "--line-length"}))
        scripts = plain[:1]
    for script in scripts:
        if _SED_WRITE_COMMAND.search(script) or _SED_SUBST_FLAGS.search(script):
            state.unclassifiable("sed script with a w/W/e command writes a file or runs one")
            return
    if any(a in ("-f", "--file") or a.startswith("--file=") for a in args):
        state.unclassifiable("sed -f: the script's commands are not on the command line")
        return
    if not in_place:
        return
    has_script_option = any(a in ("-e", "-f", "--expression", "--file") for a in args)
    operands: list[str] = []
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg in ("-e", "-f", "--expression", "--file"):
            skip_next = True
            continue
        if arg.startswith("-"):
            continue
        operands.append(arg)
    files = operands if has_script_option else operands[1:]
    if not files:
        state.unclassifiable("sed -i without files")
    for path in files:
        state.write(path)


def _copy_like(
    args: list[str], state: _State, *, moves: bool, link_sources: bool = False
) -> None:
    target_dir: str | None = None
    operands: list[str] = []
    skip_next = False
    if any(a.startswith("-") and not a.startswith("--") and "t" in a[1:] and a != "-t"
           for a in args):
        state.unclassifiable("-t inside a cluster of short options ('-rt DIR'): spell it '-t DIR'")
        return
    if any(a == "--no-target-directory" or (
        a.startswith("-") and not a.startswith("--") and "T" in a[1:]) for a in args
    ):
        # The source directory's files land directly in the destination directory.
        state.unclassifiable("-T merges a directory into the destination: its files are unknown")
        return
    for index, arg in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if arg in ("-t", "--target-directory"):
            if index + 1 < len(args):
                target_dir = args[index + 1]
            skip_next = True
            continue
        if arg.startswith("--target-directory="):
            target_dir = arg.split("=", 1)[1]
            continue
        if arg in ("-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"):
            skip_next = True
            continue
        if arg.startswith("-") and arg != "-":
            continue
        operands.append(arg)
    if target_dir is not None:
        sources, destination = operands, target_dir
    else:
        if len(operands) < 2:
            state.unclassifiable("copy or move without a source and a destination")
            return
        sources, destination = operands[:-1], operands[-1]
    hard_links = any(
        a in ("-l", "--link") or (a.startswith("-") and not a.startswith("--") and "l" in a[1:])
        for a in args
    )
    if moves or hard_links or link_sources:
        # A hard link is a second name for the source's bytes: writing through
        # it writes the source, so the source must be writable too.
        for source in sources:
            state.write(source)
    for source in sources:
        base = posixpath.basename(source.rstrip("/"))
        state.into_dir.append((_joined(destination, state), base))
    state.write(destination)


def _joined(raw: str, state: _State) -> str:
    if raw.startswith(("/", "~")) or not state.cwd_prefix:
        return raw
    return posixpath.join(state.cwd_prefix, raw)


def _link(args: list[str], state: _State) -> None:
    operands = _operands(args)
    if not operands:
        state.unclassifiable("ln without operands")
        return
    symbolic = any(
        a == "--symbolic" or (a.startswith("-") and not a.startswith("--") and "s" in a[1:])
        for a in args
    )
    if any(a in ("-t", "--target-directory") or a.startswith("--target-directory=")
           or (a.startswith("-") and not a.startswith("--") and "t" in a[1:]) for a in args):
        _copy_like(args, state, moves=False, link_sources=not symbolic)
        return
    if len(operands) == 1:
        if not symbolic:
            state.write(operands[0])  # a hard link: see _copy_like
        state.write(posixpath.basename(operands[0].rstrip("/")))
        return
    destination = operands[-1]
    if not symbolic:
        for source in operands[:-1]:
            state.write(source)  # a hard link: see _copy_like
    for source in operands[:-1]:
        state.into_dir.append((_joined(destination, state), posixpath.basename(source.rstrip("/"))))
    state.write(destination)


def _truncate(args: list[str], state: _State) -> None:
    files: list[str] = []
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg in ("-s", "--size", "-r", "--reference"):
            skip_next = True
            continue
        if arg.startswith("-"):
            continue
        files.append(arg)
    for path in files:
        state.write(path)


_Rule = Callable[[str, list[str], _State, int], None]

_PROGRAM_RULES: dict[str, _Rule] = {
    **dict.fromkeys(PREFIX_COMMANDS | {"command"}, _wrapper_rule),
    "export": _export_rule,
    **dict.fromkeys(("eval", "source", ".", "exec", "xargs", "parallel", "watch"),
                    _runs_text_rule),
    **dict.fromkeys(SHELLS, _shell),
    "cd": _cd_rule,
    "pushd": _dir_stack_rule,
    "popd": _dir_stack_rule,
    "git": _git_rule,
    "python": _python_rule,
    "python3": _python_rule,
    "find": _find_rule,
    "ruff": _ruff_rule,
    "sed": _sed_rule,
    "tee": _tee_rule,
    "cp": _copy_rule,
    "install": _copy_rule,
    "mv": _copy_rule,
    "ln": _link_rule,
    **dict.fromkeys(("rm", "rmdir", "unlink", "shred", "touch", "mkdir"), _file_operands_rule),
    "truncate": _truncate_rule,
    **dict.fromkeys(("chmod", "chown", "chgrp"), _mode_rule),
    "dd": _dd_rule,
}
"""The rule of each program with one of its own; readers and unknown programs are
handled by :func:`_simple_command`."""
