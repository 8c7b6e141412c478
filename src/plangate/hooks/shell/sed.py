"""A linear scan of sed scripts: does a script write a file or run a command?

GNU sed commands that reach outside the stream: ``w``/``W`` (write a file), ``e`` (run a
command), and the ``s`` flags ``w`` and ``e``. ``r``/``R`` only read. Arguments end
where GNU sed ends them: a file name or an ``a``/``i``/``c`` text at the end of the
line, but a label (``b``, ``t``, ``T``, ``:``) or a ``v`` version at the first blank or
``;`` (``b;w FILE`` and ``:a w FILE`` write FILE: GNU sed even creates it while it reads
the script, before any line is read). The scan walks the script once, command by
command, with an index that only moves forward (no regular expression), so a crafted
script with many backslashes costs time linear in its length. A command the scan does
not know is a problem: the script is unclassified.
"""

from __future__ import annotations

from plangate.records import NamedTuple


class SedScan(NamedTuple):
    """What a script does beyond printing: its problems, or none."""

    problem: str
    steps: int
    """Characters visited (a work count; at most a small multiple of the length)."""


_SIMPLE = frozenset("=dDgGhHnNpPxzF")  # not "l": it takes a line length (_NUMBER_ARG)
_LABEL = frozenset("btT:v")
"""Commands whose argument is a label (or ``v``'s version): it ends at a blank or ``;``."""
_LABEL_END = frozenset(" \t\n;")
_TEXT = frozenset("aic")
_FILE_READ = frozenset("rR")
_NUMBER_ARG = frozenset("lqQL")


class _Scanner:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0
        self.steps = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def take(self) -> str:
        char = self.peek()
        self.i += 1
        self.steps += 1
        return char

    def skip_blanks(self, newlines: bool = False) -> None:
        while self.peek() in (" ", "\t") or (newlines and self.peek() in ("\n", ";")):
            self.take()

    def label(self) -> None:
        """A label as GNU sed reads it: leading blanks, then up to a blank, ``;`` or newline."""
        self.skip_blanks()
        while self.peek() != "" and self.peek() not in _LABEL_END:
            self.take()

    def rest_of_line(self) -> None:
        while self.peek() not in ("", "\n"):
            self.take()

    def delimited(self, delimiter: str) -> bool:
        """Skip to the unescaped ``delimiter``; False when the script ends first."""
        while True:
            char = self.take()
            if char == "":
                return False
            if char == "\\":
                if self.take() == "":
                    return False
                continue
            if char == delimiter:
                return True
            if char == "\n":  # a newline is never the delimiter (refused before)
                # GNU sed allows a newline only escaped inside a regex or replacement.
                return False

    def address(self) -> bool:
        char = self.peek()
        if char.isdigit():
            while self.peek().isdigit():
                self.take()
            if self.peek() == "~":
                self.take()
                while self.peek().isdigit():
                    self.take()
            return True
        if char == "$":
            self.take()
            return True
        if char in ("/", "\\"):
            self.take()
            delimiter = "/" if char == "/" else self.take()
            if delimiter in ("", "\n", "\\"):
                return False
            if not self.delimited(delimiter):
                return False
            while self.peek() in ("I", "M"):
                self.take()
            return True
        return True  # no address


def scan(script: str) -> SedScan:
    """Scan ``script``; ``problem`` is empty when it only edits the stream."""
    sc = _Scanner(script)
    depth = 0
    while True:
        sc.skip_blanks(newlines=True)
        if sc.peek() == "":
            break
        if sc.peek() == "#":
            sc.rest_of_line()
            continue
        start = sc.i
        if not sc.address():
            return SedScan("a sed address cannot be read", sc.steps)
        if sc.i != start:
            sc.skip_blanks()
            if sc.peek() == ",":
                sc.take()
                sc.skip_blanks()
                if sc.peek() in ("+", "~"):
                    sc.take()
                    while sc.peek().isdigit():
                        sc.take()
                elif not sc.address():
                    return SedScan("a sed address cannot be read", sc.steps)
        sc.skip_blanks()
        while sc.peek() == "!":
            sc.take()
            sc.skip_blanks()
        command = sc.take()
        if command == "":
            return SedScan("a sed address without a command", sc.steps)
        if command == "{":
            depth += 1
            continue
        if command == "}":
            depth -= 1
            if depth < 0:
                return SedScan("an unbalanced '}' in a sed script", sc.steps)
            continue
        if command in _SIMPLE:
            continue
        if command in _NUMBER_ARG:
            sc.skip_blanks()
            while sc.peek().isdigit():
                sc.take()
            continue
        if command in _LABEL:
            # What follows the label is the next command, even without a ';' ('b x w F').
            sc.label()
            continue
        if command in _FILE_READ or command in _TEXT:
            sc.rest_of_line()
            continue
        if command in ("w", "W"):
            return SedScan("a sed 'w' command writes a file", sc.steps)
        if command == "e":
            return SedScan("a sed 'e' command runs a command", sc.steps)
        if command in ("s", "y"):
            delimiter = sc.take()
            if delimiter in ("", "\n", "\\"):
                return SedScan(f"a sed '{command}' command cannot be read", sc.steps)
            if not (sc.delimited(delimiter) and sc.delimited(delimiter)):
                return SedScan(f"a sed '{command}' command cannot be read", sc.steps)
            if command == "s":
                while sc.peek() not in ("", "\n", ";", "}", " ", "\t", "#"):
                    flag = sc.take()
                    if flag == "w":
                        return SedScan("a sed 's///w' flag writes a file", sc.steps)
                    if flag == "e":
                        return SedScan("a sed 's///e' flag runs a command", sc.steps)
                    if not (flag.isdigit() or flag in "gpiImM"):
                        return SedScan(f"an unknown sed 's' flag {flag!r}", sc.steps)
            continue
        return SedScan(f"an unknown sed command {command!r}", sc.steps)
    if depth != 0:
        return SedScan("an unbalanced '{' in a sed script", sc.steps)
    return SedScan("", sc.steps)
