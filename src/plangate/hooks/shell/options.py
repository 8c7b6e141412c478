"""Option parsing by table: every option of a program is known in full, or the
command is unclassified.

A :class:`Spec` lists a program's short letters (without argument, with a
required argument, with an optional attached argument) and its long names
(flag, required argument, optional ``=value``). :func:`parse_options` reads
words the way GNU getopt does (short clusters expanded letter by letter, a
required argument taking the rest of the cluster or the next word, long
options only by their full name: an abbreviation getopt would accept is
unknown here), and returns the options in order with the operands, or the
problem that makes the command unclassified.

Words must be literal. A glob is accepted only as an operand whose first
character is literal and not ``-`` (it cannot expand to an option).
"""

from __future__ import annotations

from plangate.hooks.shell.parse import Word
from plangate.records import NamedTuple


class Spec(NamedTuple):
    """The options of one program (see the module docstring)."""

    flags: str = ""
    args: str = ""
    optional: str = ""
    long_flags: frozenset[str] = frozenset()
    long_args: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    numeric: bool = False
    """``-NUM`` is an option (``head -5``, ``git log -3``)."""
    permute: bool = True
    """Options may follow operands (GNU); False: the first operand ends the options."""


def spec(
    flags: str = "",
    args: str = "",
    optional: str = "",
    *,
    long: str = "",
    long_args: str = "",
    long_optional: str = "",
    numeric: bool = False,
    permute: bool = True,
) -> Spec:
    """A :class:`Spec` from space-separated long names (without their dashes)."""
    return Spec(
        flags,
        args,
        optional,
        frozenset(long.split()),
        frozenset(long_args.split()),
        frozenset(long_optional.split()),
        numeric,
        permute,
    )


class Parsed(NamedTuple):
    """Options in order (``("-o", value)``, ``("--name", value)``) and operands."""

    options: tuple[tuple[str, str | None], ...]
    operands: tuple[str, ...]
    glob_operands: frozenset[int] = frozenset()
    """Indexes of operands that are glob patterns."""

    def has(self, *names: str) -> bool:
        return any(name in names for name, _value in self.options)

    def values(self, *names: str) -> list[str]:
        return [value for name, value in self.options if name in names and value is not None]


def literal_problem(word: Word) -> str | None:
    """Why ``word`` cannot be used at all (not a literal), else None."""
    if word.text is None:
        return f"a word is not literal: {word.problem or 'expansion'}"
    return None


class _Cursor:
    """The words being parsed and the index of the next one (option values consume words)."""

    def __init__(self, words: tuple[Word, ...] | list[Word]) -> None:
        self.items = list(words)
        self.index = 0

    def value_for(self, option: str) -> tuple[str | None, str | None]:
        """The next word as ``option``'s value: ``(value, None)`` or ``(None, problem)``."""
        if self.index >= len(self.items):
            return None, f"{option} needs a value"
        nxt = self.items[self.index]
        problem = literal_problem(nxt)
        if problem is not None or nxt.glob:
            return None, problem or f"the value of {option} is a glob"
        self.index += 1
        return nxt.text or "", None


def _long_option(
    table: Spec, text: str, cursor: _Cursor, options: list[tuple[str, str | None]]
) -> str | None:
    """One ``--name[=value]`` option (names only in full: an abbreviation is unknown)."""
    name, eq, value = text[2:].partition("=")
    if name in table.long_flags:
        if eq:
            return f"--{name} takes no value"
        options.append(("--" + name, None))
    elif name in table.long_args:
        if not eq:
            taken, problem = cursor.value_for("--" + name)
            if taken is None:
                return problem
            value = taken
        options.append(("--" + name, value))
    elif name in table.long_optional:
        options.append(("--" + name, value if eq else None))
    else:
        return f"unknown option --{name}"
    return None


def _short_cluster(
    table: Spec, letters: str, cursor: _Cursor, options: list[tuple[str, str | None]]
) -> str | None:
    """One ``-abc`` cluster, letter by letter, as getopt reads it."""
    if table.numeric and letters.isdigit():
        options.append(("-NUM", letters))
        return None
    position = 0
    while position < len(letters):
        letter = letters[position]
        rest = letters[position + 1 :]
        if letter in table.flags:
            options.append(("-" + letter, None))
            position += 1
            continue
        if letter in table.optional:
            options.append(("-" + letter, rest or None))
            return None
        if letter in table.args:
            if rest:
                options.append(("-" + letter, rest))
                return None
            taken, problem = cursor.value_for("-" + letter)
            if taken is None:
                return problem
            options.append(("-" + letter, taken))
            return None
        return f"unknown option -{letter}"
    return None


def parse_options(table: Spec, words: tuple[Word, ...] | list[Word]) -> Parsed | str:
    """Parse ``words`` (the arguments, without the program name) by ``table``."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    globs: set[int] = set()
    done = False
    cursor = _Cursor(words)
    while cursor.index < len(cursor.items):
        word = cursor.items[cursor.index]
        problem = literal_problem(word)
        if problem is not None:
            return problem
        text = word.text or ""
        cursor.index += 1
        if done or text == "-" or not text.startswith("-"):
            if word.glob:
                if text[:1] in ("-", "*", "?", "[", ""):
                    return f"the glob {text!r} may expand to an option"
                globs.add(len(operands))
            operands.append(text)
            if not table.permute:
                done = True
            continue
        if word.glob:
            return f"the glob {text!r} is in an option position"
        if text == "--":
            done = True
            continue
        if text.startswith("--"):
            problem = _long_option(table, text, cursor, options)
        else:
            problem = _short_cluster(table, text[1:], cursor, options)
        if problem is not None:
            return problem
    return Parsed(tuple(options), tuple(operands), frozenset(globs))
