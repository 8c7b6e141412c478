"""Shell text to a small, flat model, through tree-sitter-bash.

The model keeps only what the classifier may trust:

- a :class:`Command` per simple command, in the order the shell meets them,
  with the control operator before it (``''`` for the first, ``;``, ``&&``,
  ``||``, ``|``, ``&``);
- each word after quote removal (:class:`Word`), or the reason it is not a
  literal (a parameter, arithmetic, command or process substitution, ANSI-C
  or locale quoting, brace expansion); glob characters are flagged;
- redirections with their operator, descriptor and target word.

Anything else the parser finds (a function, a loop, ``if``, ``case``,
``[[ ]]``, a subshell, ``{ ...; }``, ``declare``/``export``, a parse error
or a missing token) is a *problem*: the command is unclassified. The parser
is error-tolerant, so its own verdict is re-checked where it can differ from
bash's: two words joined by a line continuation (``ls\\<newline>-l`` is the
word ``ls-l`` to bash), a heredoc whose end line bash would read differently
(``<<E"OF"`` ends at ``EOF``), a ``#`` the parser and bash disagree on as a
comment's start (``a\\<newline>#`` is the word ``a#``), and double-quoted text,
read from the source because the parser's parts leave its newlines out. A
control character (other than tab and newline) anywhere is refused: the parser
takes carriage return, vertical tab and form feed for blanks, bash does not.

Work is bounded: the text is at most :data:`MAX_COMMAND_BYTES`, the parser is
cancelled when its progress callbacks (one per fixed number of parser
operations) exceed a budget linear in the text, and the model is built
without recursion deeper than :data:`MAX_NESTING`.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from plangate.records import NamedTuple

MAX_COMMAND_BYTES = 256 * 1024
"""Longest command text parsed; a longer one is unclassified."""

MAX_NESTING = 64
"""Deepest syntax nesting followed; deeper is unclassified."""

PARSE_BUDGET_PER_BYTE = 8
"""Parser progress callbacks allowed per byte (plus :data:`PARSE_BUDGET_BASE`)."""
PARSE_BUDGET_BASE = 1000

_CONTROL_BYTE = re.compile(rb"[\x01-\x08\x0b-\x1f\x7f]")
"""Control characters other than tab and newline (NUL is refused on its own)."""


class Word(NamedTuple):
    """One shell word after quote removal.

    ``text`` is ``None`` when the word is not a literal (``problem`` says why).
    ``glob`` is set when an unquoted ``*``, ``?`` or ``[`` makes it a pattern.
    """

    text: str | None
    glob: bool = False
    problem: str = ""
    quoted: bool = False
    """True when any part of the word was quoted or escaped."""


class Redirect(NamedTuple):
    """One redirection: ``[fd]op target``.

    A heredoc carries its body as the target, ``quoted`` when its delimiter was quoted
    (the body is then not expanded)."""

    op: str
    fd: str
    target: Word


class Command(NamedTuple):
    """One simple command as the shell will run it."""

    assignments: tuple[tuple[str, Word], ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    connector: str
    """The control operator before this command (``''`` for the first)."""
    negated: bool = False
    """Inside ``! ...``: the shell inverts the pipeline's status (a failed ``cd`` passes ``&&``)."""


class Script(NamedTuple):
    """A parsed command line: its simple commands, or the problems that stop it."""

    commands: tuple[Command, ...]
    problems: tuple[str, ...]


class ParseWork:
    """Counts the parser's progress callbacks (a measure of its work) for tests."""

    def __init__(self) -> None:
        self.callbacks = 0


_PARSER: list[Any] = []


def _parser() -> Any:
    if not _PARSER:
        import tree_sitter
        import tree_sitter_bash

        _PARSER.append(tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language())))
    return _PARSER[0]


def parse_tree(source: bytes, work: ParseWork | None = None) -> Any | None:
    """The tree-sitter tree of ``source``, or None when the work budget ran out."""
    counter = work or ParseWork()
    budget = PARSE_BUDGET_BASE + PARSE_BUDGET_PER_BYTE * len(source)

    def read(offset: int, _point: Any) -> bytes:
        return source[offset : offset + 65536]

    def progress(*_state: Any) -> bool:
        counter.callbacks += 1
        return counter.callbacks > budget  # True cancels the parse

    parser = _parser()
    try:
        tree = parser.parse(read, progress_callback=progress)
    except ValueError:  # tree-sitter raises "Parsing failed" for a cancelled parse
        tree = None
    if tree is None:
        # A cancelled parser resumes where it stopped on its next parse, reading the
        # next command's bytes into this one's half-built tree: start afresh.
        parser.reset()
    return tree


def parse(text: str, work: ParseWork | None = None) -> Script:
    """Parse ``text`` into a :class:`Script` (problems instead of exceptions)."""
    try:
        source = text.encode("utf-8", "strict")
    except UnicodeEncodeError:
        return Script((), ("the command is not valid UTF-8 text",))
    if len(source) > MAX_COMMAND_BYTES:
        return Script((), (f"the command is longer than {MAX_COMMAND_BYTES} bytes",))
    if b"\x00" in source:
        return Script((), ("the command contains a NUL byte",))
    control = _CONTROL_BYTE.search(source)
    if control is not None:
        # Bash separates words only at space, tab and newline; the parser also takes
        # carriage return, vertical tab and form feed for blanks, so a '#' after one is
        # a comment to it and an ordinary character to bash ('ls\r#; tee CLAUDE.md').
        # No control character has a use in a command an agent means: none is read.
        return Script((), (f"the command contains the control character 0x{control[0][0]:02x}",))
    tree = parse_tree(source, work)
    if tree is None:
        return Script((), ("the shell parser gave up (work budget exceeded)",))
    root = tree.root_node
    if root.has_error:
        return Script((), ("the shell parser found a syntax error or a missing token",))
    if b"#" in source:
        problem = comment_problem(source, root)
        if problem is not None:
            return Script((), (problem,))
    builder = _Builder(source)
    builder.statements(root, "", 0)
    return Script(tuple(builder.commands), tuple(builder.problems))


_WORD_DELIMITERS = frozenset(b" \t\n;&|(<>")
"""Where a word ends and a ``#`` after it starts a comment. Not ``)``: the ``)`` that
ends ``$(...)``, ``<(...)`` or ``$((...))`` is inside the word (``$(ls)#x`` is one
word), and a ``)`` that ends a subshell, a function's ``()`` or a ``case`` pattern is
refused anyway."""


def bash_reads_a_comment(source: bytes, offset: int) -> bool:
    """True when bash reads the ``#`` at ``offset`` as the start of a comment.

    Bash starts a comment only at the start of a word: at the start of the text, or
    after a blank (space, tab, newline) or an operator character. A line continuation
    (an unescaped backslash before a newline) is removed first, so ``a\\<newline>#``
    is the word ``a#``, not a comment.
    """
    start = offset
    while start >= 2 and source[start - 1] == 0x0A:
        slashes = 0
        while start - 2 - slashes >= 0 and source[start - 2 - slashes] == 0x5C:
            slashes += 1
        if slashes % 2 == 0:
            break  # a plain newline (or an escaped backslash before it)
        start -= 2
    return start == 0 or source[start - 1] in _WORD_DELIMITERS


def comment_problem(source: bytes, root: Any) -> str | None:
    """A problem when the parser and bash disagree on where a comment starts.

    Each ``comment`` node must start where bash starts one, and no ``word`` may start
    with a ``#`` bash would read as a comment. The tree is walked with a cursor (no
    recursion), once.
    """
    cursor = root.walk()
    while True:
        node = cursor.node
        if node.type == "comment" and not bash_reads_a_comment(source, node.start_byte):
            return "a '#' the parser reads as a comment is part of a word to bash"
        if (
            node.type == "word"
            and source[node.start_byte : node.start_byte + 1] == b"#"
            and bash_reads_a_comment(source, node.start_byte)
        ):
            return "a '#' the parser reads as part of a word starts a comment to bash"
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None


_CONNECTORS = frozenset({"&", "&&", "||", "|", "|&"})
"""The operators inside a line that a command's connector records; between the
statements of the text (``;``, ``;;``, a newline) it is ``;``, set after each one."""
_REDIRECT_NODES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WORD_NODES = frozenset(
    {
        "word",
        "number",
        "raw_string",
        "string",
        "concatenation",
        "ansi_c_string",
        "translated_string",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "extglob_pattern",
    }
)
_PLAIN_PARTS = frozenset({"word", "number", "raw_string", "string"})
_NOT_LITERAL: dict[str, str] = {
    "ansi_c_string": "ANSI-C quoting ($'...')",
    "translated_string": 'locale quoting ($"...")',
    "simple_expansion": "a parameter expansion",
    "expansion": "a parameter expansion",
    "command_substitution": "a command substitution",
    "process_substitution": "a process substitution",
    "arithmetic_expansion": "an arithmetic expansion",
    "brace_expression": "a brace expansion",
    "extglob_pattern": "an extended glob",
}


class _Builder:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.commands: list[Command] = []
        self.problems: list[str] = []

    def text(self, node: Any) -> str:
        return str(self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape"))

    def problem(self, note: str) -> None:
        if note not in self.problems:
            self.problems.append(note)

    # -- statements -------------------------------------------------------------------

    def statements(self, node: Any, connector: str, depth: int) -> None:
        """Flatten ``node`` into commands, the first of them after ``connector``."""
        if depth > MAX_NESTING:
            self.problem("the command nests too deeply")
            return
        kind = node.type
        if kind in ("program", "list", "pipeline"):
            pending = connector
            for child in node.children:
                if not child.is_named:
                    if child.type == "&":
                        self.problem("a command runs in the background ('&')")
                    if child.type == ";;":
                        # The parser takes 'a;; b' for two commands; to bash it is a
                        # syntax error outside 'case'.
                        self.problem("a ';;' outside 'case'")
                    if child.type in _CONNECTORS:
                        pending = child.type
                    continue
                if child.type == "comment":
                    continue
                self.statements(child, pending, depth + 1)
                if kind == "program":
                    pending = ";"
            return
        if kind == "negated_command":
            start = len(self.commands)
            for child in node.children:
                if child.is_named:
                    self.statements(child, connector, depth + 1)
            for index in range(start, len(self.commands)):
                self.commands[index] = self.commands[index]._replace(negated=True)
            return
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects: list[Redirect] = []
            for child in node.children:
                if child.type in _REDIRECT_NODES:
                    redirects.extend(self.redirects(child, depth))
            if body is None:
                self.problem("a redirection without a command")
                return
            start = len(self.commands)
            self.statements(body, connector, depth + 1)
            if len(self.commands) == start:
                self.problem("a redirection whose command cannot be read")
                return
            # Bash binds a redirection to the simple command it follows; the parser may
            # attach it to a whole list or pipeline ('a && b > f'), whose last command
            # is that one.
            last = self.commands[-1]
            self.commands[-1] = last._replace(redirects=(*last.redirects, *redirects))
            return
        if kind == "command":
            self.command(node, connector, depth)
            return
        if kind == "variable_assignment":
            name, value = self.assignment(node, depth)
            self.commands.append(Command(((name, value),), (), (), connector))
            return
        self.problem(f"shell syntax the classifier does not model ({kind})")

    def command(self, node: Any, connector: str, depth: int) -> None:
        assignments: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        previous_end: int | None = None
        for child in node.children:
            if child.type == "comment":
                # A comment runs to the end of its line, and the newline ends the command;
                # the parser holds a comment inside a command only when it reads on past
                # it ('cat f #<newline>\\touch x' is one command to it, two to bash).
                self.problem("a command the parser reads on past a comment")
                return
            wordish = child.type == "command_name" or child.type in _WORD_NODES
            if previous_end is not None and wordish:
                self.check_gap(previous_end, child.start_byte)
            previous_end = child.end_byte if wordish else None
            if child.type == "variable_assignment":
                assignments.append(self.assignment(child, depth))
            elif child.type == "command_name":
                inner = [c for c in child.children if c.is_named]
                if len(inner) != 1:
                    self.problem("a command name the classifier cannot read")
                    return
                words.append(self.word(inner[0], depth))
            elif child.type in _REDIRECT_NODES:
                redirects.extend(self.redirects(child, depth))
            elif child.type in _WORD_NODES:
                words.append(self.word(child, depth))
            elif not child.is_named and child.type in ("=~", "=="):
                self.problem("a test operator outside a test")
            else:
                self.problem(f"a command part the classifier does not model ({child.type})")
        self.commands.append(Command(tuple(assignments), tuple(words), tuple(redirects), connector))

    def check_gap(self, start: int, end: int) -> None:
        """Two parts the parser split must be split by bash too (not only a line join)."""
        gap = self.source[start:end].replace(b"\\\n", b"")
        if gap == b"":
            self.problem("a line continuation joins two words")

    def assignment(self, node: Any, depth: int) -> tuple[str, Word]:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else ""
        if name_node is None or name_node.type != "variable_name":
            self.problem("an assignment to something other than a plain name")
        if any(not c.is_named and c.type == "+=" for c in node.children):
            self.problem("an appending assignment ('+=')")
        if value_node is None:
            return name, Word("")
        value = self.word(value_node, depth)
        if value.text is not None and ":~" in self.text(value_node):
            # 'PATH=a:~/bin': bash expands a '~' after each ':' of an assignment's value.
            return name, Word(None, problem="a '~' expansion after ':' in an assignment")
        return name, value

    # -- redirections -----------------------------------------------------------------

    def redirects(self, node: Any, depth: int) -> list[Redirect]:
        out: list[Redirect] = []
        fd = ""
        op = ""
        target: Word | None = None
        if node.type == "heredoc_redirect":
            return self.heredoc(node, depth)
        for child in node.children:
            if child.type == "file_descriptor":
                fd = self.text(child)
            elif not child.is_named:
                op = child.type
            elif child.type in _WORD_NODES:
                if target is not None:
                    self.problem("a redirection with more than one target")
                target = self.word(child, depth)
            else:
                self.problem(f"a redirection part the classifier does not model ({child.type})")
        if target is None:
            self.problem("a redirection without a target")
            target = Word(None, problem="no target")
        out.append(Redirect(op, fd, target))
        return out

    def heredoc(self, node: Any, depth: int) -> list[Redirect]:
        out: list[Redirect] = []
        op = "<<"
        fd = ""
        start_text = ""
        body: Any = None
        end: Any = None
        for child in node.children:
            if not child.is_named and child.type in ("<<", "<<-"):
                op = child.type
            elif child.type == "heredoc_start":
                start_text = self.text(child)
            elif child.type == "heredoc_body":
                body = child
            elif child.type == "heredoc_end":
                end = child
            elif child.type in _REDIRECT_NODES:
                out.extend(self.redirects(child, depth))
            elif child.type == "file_descriptor":
                fd = self.text(child)
            else:
                self.problem(f"a heredoc part the classifier does not model ({child.type})")
        delimiter, quoted = heredoc_delimiter(start_text)
        if delimiter is None or end is None:
            self.problem("a heredoc whose delimiter cannot be read exactly")
            return out
        strip = op == "<<-"
        first = end.start_byte if body is None else body.start_byte
        body_text = self.heredoc_lines(first, end, strip)
        lines = [] if body_text is None else body_text.split("\n")
        if (
            body_text is None
            or self.text(end) != delimiter
            or any((line.lstrip("\t") if strip else line) == delimiter for line in lines)
        ):
            self.problem("a heredoc that bash would end at another line")
            return out
        # Every expansion the parser finds in a body starts with '$' or a backquote.
        if not quoted and ("$" in body_text or "`" in body_text or "\\" in body_text):
            self.problem("an unquoted heredoc body with expansions")
            return out
        if strip:
            body_text = "\n".join(line.lstrip("\t") for line in lines)
        out.insert(0, Redirect(op, fd, Word(body_text, quoted=quoted)))
        return out

    def heredoc_lines(self, first: int, end: Any, strip: bool) -> str | None:
        """The heredoc's body as bash reads it: the lines after the one that holds the
        redirection, up to the line of ``end``; None when ``end`` does not start its line
        (after tabs, for ``<<-``) or the redirection's line is continued.

        The parser's body node leaves out the blanks and empty lines at its start
        (``<<EOF<newline><newline>  x`` would read as ``x``), and its end node may follow
        a tab bash keeps: the body is taken from the source, from the end of the line
        the redirection is on (the first newline after the last character before
        ``first`` that is not a blank).
        """
        source = self.source
        before = first  # the '<<' and its word come before, so 'before' stays above 0
        while source[before - 1] in b" \t\n":
            before -= 1
        if source[before - 1] == 0x5C:
            return None  # a backslash before the newline continues the line
        start = source.find(b"\n", before) + 1
        line = end.start_byte
        while strip and line > start and source[line - 1] == 0x09:
            line -= 1
        if start == 0 or line < start or (line > start and source[line - 1] != 0x0A):
            return None
        return self._between(start, line)

    # -- words --------------------------------------------------------------------------

    def word(self, node: Any, depth: int) -> Word:
        # Called at the depth of its statement, which is at most MAX_NESTING.
        kind = node.type
        if kind in ("word", "number"):
            return unquote_unquoted(self.text(node))
        if kind == "raw_string":
            return _kept_tilde(Word(self.text(node)[1:-1], quoted=True))
        if kind == "string":
            return _kept_tilde(self.double_quoted(node, depth))
        if kind == "concatenation":
            named = [c for c in node.children if c.is_named]
            for before, after in pairwise(named):
                # Parts of one word touch; only a line continuation may lie between
                # them (bash removes it), never a blank the parser skipped.
                if self._between(before.end_byte, after.start_byte).replace("\\\n", ""):
                    return Word(None, problem="a word whose parts the parser split")
            for part in named:
                if part.type not in _PLAIN_PARTS:
                    return Word(None, problem=_NOT_LITERAL.get(part.type, f"a {part.type}"))
            return unquote_unquoted(self.text(node))
        # A command substitution outside double quotes is split into words and globbed
        # (a heredoc message 'a b' becomes two words): only a quoted one is literal.
        return Word(None, problem=_NOT_LITERAL.get(kind, f"a {kind}"))

    def double_quoted(self, node: Any, depth: int) -> Word:
        """A ``"..."`` word from the source text between its quotes.

        The parser's ``string_content`` parts leave out the newlines (and any other
        blank it skips) between them: ``"a<newline>b"`` would read as ``ab``. So the
        text is taken from the source, and only the nested parts (a ``$(cat <<'EOF'
        ...)`` message, or an expansion, which is not literal) come from the tree.
        """
        children = node.children  # the quotes first and last (a missing one is an error)
        out: list[str] = []
        position = children[0].end_byte
        for child in children[1:-1]:
            if not child.is_named or child.type == "string_content":
                continue
            # The parser's token may start at a blank before the '$' (' $(' is one token).
            dollar = self.source.find(b"$", child.start_byte, child.end_byte)
            text = unquote_double(self._between(position, max(dollar, child.start_byte)))
            if text is None:
                return Word(None, problem="a '$' or '`' inside double quotes")
            literal = None
            if child.type == "command_substitution":
                literal = self.heredoc_message(child, depth + 1)
            if literal is None:
                return Word(None, problem=_NOT_LITERAL.get(child.type, f"a {child.type}"))
            out += [text, literal]
            position = child.end_byte
        # The closing quote's token may start at the blanks before it (' "').
        text = unquote_double(self._between(position, children[-1].end_byte - 1))
        if text is None:
            return Word(None, problem="a '$' or '`' inside double quotes")
        out.append(text)
        return Word("".join(out), quoted=True)

    def _between(self, start: int, end: int) -> str:
        return str(self.source[start:end].decode("utf-8", "surrogateescape"))

    def heredoc_message(self, node: Any, depth: int) -> str | None:
        """``$(cat <<'EOF' ... EOF)``: the quoted heredoc's body, as bash substitutes it.

        Not inside backquotes: bash removes a backslash before ``\\``, ``$`` or a
        backquote there first, even in a quoted heredoc's body."""
        inner = [c for c in node.children if c.is_named and c.type != "comment"]
        if len(inner) != 1 or inner[0].type != "redirected_statement":
            return None
        if self.text(node).lstrip(" \t\n").startswith("`"):
            return None
        nested = _Builder(self.source)
        nested.statements(inner[0], "", depth + 1)
        if nested.problems or len(nested.commands) != 1:
            return None
        only = nested.commands[0]
        if only.assignments or [w.text for w in only.words] != ["cat"]:
            return None
        if len(only.redirects) != 1 or only.redirects[0].op not in ("<<", "<<-"):
            return None
        body = only.redirects[0].target.text
        if body is None or not only.redirects[0].target.quoted:
            return None  # an unquoted heredoc's body is expanded
        return body.rstrip("\n")


def heredoc_delimiter(start: str) -> tuple[str | None, bool]:
    """Bash's delimiter for the heredoc word ``start`` and whether any part was quoted."""
    word = unquote_unquoted(start)
    if word.text is None or word.glob or word.text == "" or "\n" in word.text:
        return None, False
    return word.text, word.quoted


_GLOB_CHARS = frozenset("*?[")


def unquote_unquoted(text: str) -> Word:
    """Quote removal for the text of an unquoted word (quotes inside it included)."""
    out: list[str] = []
    glob = False
    quoted = False
    unquoted_chars: list[str] = []
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char == "\\":
            if index + 1 == length:
                # Bash keeps a backslash at the very end; the parser never ends a word
                # with one (it reports a syntax error), so none is read.
                return Word(None, problem="a backslash at the end of a word")
            if text[index + 1] != "\n":  # a line continuation is removed
                out.append(text[index + 1])
                quoted = True
                unquoted_chars.append(" ")
            index += 2
            continue
        if char == "'":
            end = text.find("'", index + 1)
            if end < 0:
                return Word(None, problem="an unbalanced quote")
            out.append(text[index + 1 : end])
            quoted = True
            unquoted_chars.append(" ")
            index = end + 1
            continue
        if char == '"':
            end = _double_end(text, index + 1)
            if end < 0:
                return Word(None, problem="an unbalanced quote")
            inner = unquote_double(text[index + 1 : end])
            if inner is None:
                return Word(None, problem="a '$' or '`' inside double quotes")
            out.append(inner)
            quoted = True
            unquoted_chars.append(" ")
            index = end + 1
            continue
        if char in "$`":
            return Word(None, problem="a '$' or '`' expansion")
        if char in " \t\n":
            # Bash ends a word at an unquoted blank: the parser joined two words.
            return Word(None, problem="an unquoted blank inside a word")
        if char in "()<>;&|":
            return Word(None, problem=f"an unquoted {char!r} inside a word")
        if char in _GLOB_CHARS:
            glob = True
        unquoted_chars.append(char)
        out.append(char)
        index += 1
    plain = "".join(unquoted_chars)
    if "{" in plain and "}" in plain and ("," in plain or ".." in plain):
        return Word(None, problem="a brace expansion")
    result = "".join(out)
    if plain.startswith("~") and not (result == "~" or result.startswith("~/")):
        return Word(None, problem="a '~user' expansion")
    if result.startswith("~") and not (plain == "~" or plain.startswith("~/")):
        # '\~/x', '""~/x' and '~"/"x' are the literal '~/x' to bash (a quoted
        # character in the tilde prefix stops the expansion); a reader of the word
        # would take it for the home directory.
        return Word(None, problem=_QUOTED_TILDE)
    assignment = _ASSIGNMENT_WORD.match(plain)
    if assignment is not None and _tilde_in_value(plain[assignment.end() :]):
        return Word(None, problem="a '~' expansion in an assignment-like word")
    return Word(result, glob=glob, quoted=quoted)


_QUOTED_TILDE = "a quoted '~' that bash keeps as it is"


def _kept_tilde(word: Word) -> Word:
    """A quoted word starting with ``~`` (``'~/x'``): bash keeps the ``~``, a reader
    of the word would take it for the home directory."""
    if word.text is not None and word.text.startswith("~"):
        return Word(None, problem=_QUOTED_TILDE)
    return word


_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
"""An argument bash reads as an assignment (``a=``, ``a+=``, ``a[i]=``): bash expands
a ``~`` at the start of its value and after each unquoted ``:`` (``cp f a=~/x`` copies
to ``a=$HOME/x``), as in a real assignment."""


def _tilde_in_value(plain: str) -> bool:
    """Whether bash expands a ``~`` in an assignment's value (its unquoted characters)."""
    return plain.startswith("~") or ":~" in plain


def _double_end(text: str, start: int) -> int:
    index = start
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index
        index += 1
    return -1


def unquote_double(text: str) -> str | None:
    """Quote removal inside double quotes; None when an expansion remains."""
    out: list[str] = []
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char == "\\" and index + 1 < length:
            nxt = text[index + 1]
            if nxt == "\n":
                index += 2
                continue
            if nxt in '$`"\\':
                out.append(nxt)
                index += 2
                continue
            out.append(char)
            index += 1
            continue
        if char == "`" or (char == "$" and index + 1 < length):
            return None
        out.append(char)
        index += 1
    return "".join(out)

