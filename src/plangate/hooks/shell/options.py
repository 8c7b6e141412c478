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

from typing import NamedTuple

from plangate.hooks.shell.parse import Word


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


def parse_options(table: Spec, words: tuple[Word, ...] | list[Word]) -> Parsed | str:
    """Parse ``words`` (the arguments, without the program name) by ``table``."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    globs: set[int] = set()
    index = 0
    done = False
    items = list(words)
    while index < len(items):
        word = items[index]
        problem = literal_problem(word)
        if problem is not None:
            return problem
        text = word.text or ""
        index += 1
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
            name, eq, value = text[2:].partition("=")
            if name in table.long_flags:
                if eq:
                    return f"--{name} takes no value"
                options.append(("--" + name, None))
            elif name in table.long_args:
                if not eq:
                    if index >= len(items):
                        return f"--{name} needs a value"
                    nxt = items[index]
                    problem = literal_problem(nxt)
                    if problem is not None or nxt.glob:
                        return problem or f"the value of --{name} is a glob"
                    value = nxt.text or ""
                    index += 1
                options.append(("--" + name, value))
            elif name in table.long_optional:
                options.append(("--" + name, value if eq else None))
            else:
                return f"unknown option --{name}"
            continue
        letters = text[1:]
        if table.numeric and letters.isdigit():
            options.append(("-NUM", letters))
            continue
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
                break
            if letter in table.args:
                if rest:
                    options.append(("-" + letter, rest))
                    break
                if index >= len(items):
                    return f"-{letter} needs a value"
                nxt = items[index]
                problem = literal_problem(nxt)
                if problem is not None or nxt.glob:
                    return problem or f"the value of -{letter} is a glob"
                options.append(("-" + letter, nxt.text or ""))
                index += 1
                break
            return f"unknown option -{letter}"
    return Parsed(tuple(options), tuple(operands), frozenset(globs))
