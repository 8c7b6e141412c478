"""``find``: starting points, then an expression of known tests only.

Actions that write or run (``-delete``, ``-exec``, ``-execdir``, ``-ok``,
``-okdir``, ``-fprint``, ``-fprint0``, ``-fprintf``, ``-fls``) are not in the
tables, so a command using them is unclassified, as is any primary the tables
do not list.
"""

from __future__ import annotations

from plangate.hooks.shell.parse import Word
from plangate.hooks.shell.state import State

_NO_ARG = frozenset(
    [
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-quit",
        "-true",
        "-false",
        "-follow",
        "-depth",
        "-xdev",
        "-mount",
        "-noleaf",
        "-nouser",
        "-nogroup",
        "-empty",
        "-readable",
        "-writable",
        "-executable",
        "-daystart",
        "-not",
        "-a",
        "-o",
        "-and",
        "-or",
        "!",
        "(",
        ")",
        ",",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
    ]
)
_ONE_ARG = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-lname",
        "-ilname",
        "-regex",
        "-iregex",
        "-type",
        "-xtype",
        "-maxdepth",
        "-mindepth",
        "-newer",
        "-anewer",
        "-cnewer",
        "-mtime",
        "-atime",
        "-ctime",
        "-mmin",
        "-amin",
        "-cmin",
        "-size",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-links",
        "-inum",
        "-samefile",
        "-regextype",
        "-used",
        "-fstype",
        "-printf",
        "-context",
    ]
)
_OPTIONS_BEFORE = frozenset({"-H", "-L", "-P"})


def find_rule(_name: str, args: tuple[Word, ...], state: State, _walker: object) -> None:
    texts: list[str] = []
    for word in args:
        if word.text is None:
            state.unclassified(f"find: a word is not literal: {word.problem}")
            return
        texts.append(word.text)
    index = 0
    while index < len(texts) and texts[index] in _OPTIONS_BEFORE:
        index += 1
    # Starting points: up to the first word that begins an expression.
    while index < len(texts) and not (
        texts[index].startswith("-") or texts[index] in ("!", "(", ")", ",")
    ):
        if args[index].glob and texts[index][:1] in ("*", "?", "["):
            state.unclassified(f"find: the glob {texts[index]!r} may expand to a primary")
            return
        index += 1
    while index < len(texts):
        text = texts[index]
        if args[index].glob:
            state.unclassified(f"find: the glob {text!r} is in the expression")
            return
        if text in _NO_ARG:
            index += 1
            continue
        if text in _ONE_ARG or (text.startswith("-newer") and len(text) == 8):
            if index + 1 >= len(texts):
                state.unclassified(f"find {text} needs a value")
                return
            if args[index + 1].glob:
                # A glob in an option's value is refused (as for every program): bash
                # expands it first, so 'find . -name *' with files '-a' and '-delete'
                # here runs 'find . -name -a -delete'.
                state.unclassified(f"find: the value of {text} is a glob")
                return
            index += 2
            continue
        state.unclassified(f"find {text} is not a primary the classifier allows")
        return
