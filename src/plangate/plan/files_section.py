"""What the ``## Files / Components to Touch`` section of a plan names (pure).

The one reading of the section that the scope (:mod:`plangate.plan.scope`), the
LoopSpec (:mod:`plangate.plan.loopspec`) and ``plangate plan lint`` share. The
rules (docs/loopspec.md, "Allowed and denied paths") never widen the scope from
ambiguity:

- the section is the one level-2 heading that is exactly the Files heading,
  optionally followed by one parenthetical annotation in ASCII or full-width
  brackets (``(draft)``);
- a sub-section whose heading says its paths are not to be touched, a list
  item or table row that says so, every list item nested under such an item,
  every row of a table whose header says so, and the lists and tables after a
  paragraph that says so contribute **denied** paths, never allowed ones;
- a path is taken from an inline code span anywhere in a list item or
  paragraph, from the path column of a table, or as a bare word when it is a
  whole entry of a list item or path cell (entries are separated by ``,``,
  ``、``, `` / `` or `` + ``); a bare path inside a phrase is skipped;
- a code span that is not a path (an option ``--fix``, an identifier
  ``os.replace``, a phrase with spaces) is skipped and reported;
- ``dir/`` means everything under ``dir`` (``dir/**``); ``a/{b,c}.md`` is the
  two paths it spells (at most :data:`MAX_BRACE_EXPANSION`).

Work is linear in the size of the plan: every line is scanned a bounded
number of times with string operations and non-backtracking expressions.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cache, lru_cache
from typing import Any

from plangate.paths import PathRejected, canonical_path, validate_pattern
from plangate.plan.plain_markdown import plain_tokens
from plangate.records import NamedTuple
from plangate.text import identity_skeleton, is_invisible

FILES_HEADING = "Files / Components to Touch"
MAX_BRACE_EXPANSION = 64

DENY_PHRASES: tuple[str, ...] = (
    "forbidden",
    "do not touch",
    "don't touch",
    "not to touch",
    "must not touch",
    "do not edit",
    "don't edit",
    "do not modify",
    "don't modify",
    "do not change",
    "don't change",
    "must not change",
    "no edit",
    "no change",
    "read-only",
    "read only",
    "reference only",
    "untouched",
    "out of scope",
    "not be touched",
    "not be edited",
    "not be modified",
    "not be changed",
    "never touch",
    "never edit",
    "never modify",
    "never change",
    "leave unchanged",
    "keep unchanged",
    "leave as is",
    "keep as is",
    "leave alone",
    "do not update",
    "don't update",
    "must not be",
    "unmodified",
    "excluded from",
    "do not alter",
    "don't alter",
    "must not alter",
    "off-limits",
    "off limits",
    "remain unchanged",
    "不要修改",
    "不要改动",
    "请勿修改",
    "禁止修改",
    "不得修改",
    "触らない",
    "触れない",
    "編集不要",
    "編集しない",
    "変更しない",
    "変更不要",
    "書き換えない",
    "改変しない",
    "参照のみ",
    "確認のみ",
    "対象外",
    "スコープ外",
    "禁止",
    "不可",
    "変更なし",
    "読み取り専用",
)
"""Phrases (matched case-insensitively) that mark paths as not to be touched."""

KNOWN_EXTENSIONS = frozenset(
    (
        "bash",
        "bat",
        "c",
        "cc",
        "cfg",
        "cjs",
        "conf",
        "cpp",
        "cs",
        "css",
        "csv",
        "dart",
        "env",
        "gitignore",
        "gitkeep",
        "go",
        "gradle",
        "h",
        "hpp",
        "htm",
        "html",
        "ini",
        "ipynb",
        "java",
        "jpeg",
        "jpg",
        "js",
        "json",
        "jsonl",
        "jsx",
        "kt",
        "lock",
        "lua",
        "md",
        "mdx",
        "mjs",
        "php",
        "pl",
        "png",
        "properties",
        "proto",
        "ps1",
        "py",
        "pyi",
        "rb",
        "rs",
        "rst",
        "scss",
        "sh",
        "sql",
        "svg",
        "swift",
        "tf",
        "toml",
        "ts",
        "tsx",
        "txt",
        "vue",
        "xml",
        "yaml",
        "yml",
        "zsh",
    )
)
"""File-name extensions a bare word or code span without ``/`` needs to count as a path."""

KNOWN_NAMES = frozenset(
    (
        "Makefile",
        "Dockerfile",
        "LICENSE",
        "Gemfile",
        "Rakefile",
        "Procfile",
        "Justfile",
        "CODEOWNERS",
        "Jenkinsfile",
        "Vagrantfile",
    )
)
"""Root file names without an extension that count as paths."""

_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
_WORD_RE = re.compile(r"\S+")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_RE = re.compile(r"^([ \t]*)(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$)")
_BARE_CHARS_RE = re.compile(r"[A-Za-z0-9._\-/*?{},@+~]+")
# Entry separators: commas, ideographic commas, semicolons anywhere; '/' and '+' (ASCII
# or full-width) only with a space, a tab or an ideographic space (or the text's edge) on
# both sides. Scanned by hand: the equivalent regular expression costs about 1 ms to
# compile in every process (a character class beyond Latin-1).
_SEPARATORS = frozenset(",\u3001\uff0c;\uff1b")
_SPACED_SEPARATORS = frozenset("/+\uff0b\uff0f")
_SEPARATOR_SPACES = frozenset(" \t\u3000")
_OPEN = "(\uff08[\u3010"  # ASCII and full-width parentheses, brackets
_CLOSE = ")\uff09]\u3011"
_COLONS = (": ", ":\t", "\uff1a")  # a label ends with a colon (ASCII or full-width)


class Taken(NamedTuple):
    """A path the section names: as written, the patterns it stands for, where."""

    text: str
    patterns: tuple[str, ...]
    line: int
    denied: bool
    form: str  # "code span", "bare word", "table cell"


class Skipped(NamedTuple):
    """Text of the section that looks like it might be a path and is not taken."""

    text: str
    line: int
    why: str


class PathProblem(NamedTuple):
    """A path the section names that is not canonical (the scope is undefined)."""

    text: str
    line: int
    code: str
    message: str
    suggestion: str | None


class Refusal(NamedTuple):
    """Text of the section the derivation cannot read without guessing: the scope fails."""

    text: str
    line: int
    code: str
    message: str
    hint: str


class FilesSection(NamedTuple):
    """Everything the derivation sees in the Files section of one plan."""

    heading_lines: tuple[int, ...]  # 1-based lines of every heading that is the section
    annotation: str
    taken: tuple[Taken, ...]
    skipped: tuple[Skipped, ...]
    problems: tuple[PathProblem, ...]
    subsections: tuple[tuple[int, str, bool], ...]  # (line, heading text, deny)
    refusals: tuple[Refusal, ...] = ()
    unread: tuple[Skipped, ...] = ()  # code blocks and comments: shown as code or hidden

    @property
    def found(self) -> bool:
        """True when exactly one heading is the section."""
        return len(self.heading_lines) == 1

    @property
    def allowed(self) -> tuple[str, ...]:
        """Allowed patterns, in order, duplicates removed."""
        return _unique(p for t in self.taken if not t.denied for p in t.patterns)

    @property
    def denied(self) -> tuple[str, ...]:
        """Denied patterns, in order, duplicates removed."""
        return _unique(p for t in self.taken if t.denied for p in t.patterns)


def _unique(items: object) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for item in items:  # type: ignore[attr-defined]
        out.setdefault(item, None)
    return tuple(out)


# -- headings and fences -----------------------------------------------------------------


def outside_fences(lines: list[str]) -> list[bool]:
    """For each line, True when it is outside a fenced code block (fence lines count as inside)."""
    flags: list[bool] = []
    fence: str | None = None
    for line in lines:
        match = _FENCE_RE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
            flags.append(False)
        elif fence is not None:
            if line.lstrip(" ").startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            flags.append(False)
        else:
            flags.append(True)
    return flags


def heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading at column 0, or None.

    One to six ``#``, then a space or tab and the text; trailing spaces, tabs
    and closing ``#`` are not part of the text. A line of only ``#``, spaces and
    tabs is a heading with empty text (at most level 6). String scans only, so
    the work is linear in the line.
    """
    stripped = line.rstrip()
    hashes = len(stripped) - len(stripped.lstrip("#"))
    if hashes == 0:
        return None
    rest = stripped[hashes:]
    if rest.strip(" \t#") == "":
        return min(hashes, 6), ""
    if hashes > 6 or rest[0] not in " \t":
        return None
    return hashes, rest.strip(" \t").rstrip(" \t#").strip()


def heading_annotation(text: str, name: str) -> str | None:
    """The annotation when ``text`` is ``name`` plus at most one parenthetical, else None.

    ``name`` itself gives ``""``; ``name (draft)`` (ASCII or full-width brackets,
    with or without a space) gives the text inside the brackets; anything else
    after ``name`` (``name and more``, ``name (a)(b)``, ``name (a) tail``) is not
    the heading.
    """
    if text == name:
        return ""
    if not text.startswith(name):
        return None
    rest = text[len(name) :].lstrip(" \t\u3000")
    if len(rest) < 2 or rest[0] not in _OPEN:
        return None
    close = _CLOSE[_OPEN.index(rest[0])]
    if rest[-1] != close:
        return None
    inner = rest[1:-1]
    if any(ch in _OPEN or ch in _CLOSE for ch in inner):
        return None
    return inner.strip()


def section_spans(lines: list[str], outside: list[bool], name: str) -> list[tuple[int, int]]:
    """``(heading index, end index)`` of every level-2 section headed ``name``.

    Annotated headings (:func:`heading_annotation`) count.
    """
    out: list[tuple[int, int]] = []
    current: int | None = None
    for i, line in enumerate(lines):
        head = heading(line) if outside[i] else None
        if head is None or head[0] > 2:
            continue
        if current is not None:
            out.append((current, i))
            current = None
        if head[0] == 2 and heading_annotation(head[1], name) is not None:
            current = i
    if current is not None:
        out.append((current, len(lines)))
    return out


# -- classification of one candidate -----------------------------------------------------


_EMPHASIS = str.maketrans("", "", "*_~`")
_QUOTES_DASHES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)


@lru_cache(maxsize=256)
def _deny_fold(text: str) -> str:
    """``text`` as a reader sees it: HTML entities decoded, emphasis marks (``*``, ``_``,
    ``~``, backticks) dropped, invisible characters dropped, NFKC, case-folded, accents and
    look-alike letters folded, typographic quotes and dashes plain, runs of space one."""
    # a path written as a code span is a name, not a statement ("`src/forbidden.py`")
    plain = _CODE_SPAN_RE.sub(
        lambda m: " " if span_skip_reason(m.group(1)) is None else m.group(0), text
    )
    if "&" in plain:
        import html  # lazy: its entity table costs milliseconds, and few lines hold a '&'

        plain = html.unescape(plain)
    plain = plain.translate(_EMPHASIS)
    return " ".join(identity_skeleton(plain).translate(_QUOTES_DASHES).split())


@cache
def _folded_phrases() -> tuple[str, ...]:
    return tuple(_deny_fold(p) for p in DENY_PHRASES)


@cache
def _folded_phrases_re() -> re.Pattern[str]:
    """One expression that finds any folded phrase in a text (one scan, not one per phrase).

    A phrase that holds another is dropped (the shorter one is found wherever the longer
    one is); the rest form a trie, one character per branch, so the expression matches
    exactly where some phrase occurs and never backtracks further than a phrase's length.
    """
    phrases = set(_folded_phrases())
    kept = [p for p in phrases if not any(q != p and q in p for q in phrases)]
    trie: dict[str, Any] = {}
    for phrase in kept:
        node = trie
        for ch in phrase:
            node = node.setdefault(ch, {})

    def branch(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + branch(child) for ch, child in sorted(node.items())]
        if len(alternatives) <= 1:
            return "".join(alternatives)
        return "(?:" + "|".join(alternatives) + ")"

    return re.compile(branch(trie))


@lru_cache(maxsize=256)
def contains_deny_phrase(text: str) -> bool:
    """True when ``text`` says its paths are not to be touched.

    Compared as a reader sees both (:func:`_deny_fold`): a zero-width character,
    a full-width or look-alike letter, a typographic apostrophe or a double
    space never hides a "do not touch" (over-matching only narrows the scope).
    """
    return _folded_phrases_re().search(_deny_fold(text)) is not None


def _has_known_extension(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    if base in KNOWN_NAMES:
        return True
    _, dot, ext = base.rpartition(".")
    return bool(dot) and ext.casefold() in KNOWN_EXTENSIONS


def span_skip_reason(span: str) -> str | None:
    """Why an inline code span is not a path, or None when it is one."""
    text = span.strip()
    if text == "":
        return "empty"
    if text.startswith("-"):
        return "an option, not a path"
    if "://" in text:
        return "a URL, not a path"
    if any(ch in text for ch in " \t\u3000"):
        return "contains a space: a command or phrase, not a path"
    if "/" in text or "\\" in text:
        return None
    if "*" in text or "?" in text:
        return None
    if _has_known_extension(text):
        return None
    if "." in text:
        return "an identifier, not a file name with a known extension"
    return "a word without '/' or a file extension"


def bare_path_like(word: str) -> bool:
    """True when a bare word (no backticks) is written like a path."""
    if _BARE_CHARS_RE.fullmatch(word) is None or word.startswith("-"):
        return False
    if "/" in word:
        return any(ch.isalpha() for ch in word)
    return _has_known_extension(word) or ("*" in word and "." in word)


def _expand_braces(text: str) -> list[str] | None:
    """``a/{b,c}.md`` -> ``[a/b.md, a/c.md]``; None when nested, unbalanced or too many."""
    results = [""]
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "}":
            return None
        if ch != "{":
            j = i
            while j < len(text) and text[j] not in "{}":
                j += 1
            results = [r + text[i:j] for r in results]
            i = j
            continue
        end = text.find("}", i)
        if end < 0 or "{" in text[i + 1 : end]:
            return None
        options = text[i + 1 : end].split(",")
        if any(option == "" for option in options):
            return None  # "{a,}" also spells the bare prefix: a reader does not see that
        if len(results) * len(options) > MAX_BRACE_EXPANSION:
            return None
        results = [r + o for r in results for o in options]
        i = end + 1
    return results


def _suggest(text: str) -> str | None:
    """A canonical spelling of a non-canonical path, when one is obvious (linear work)."""
    directory = text.rstrip().endswith(("/", "\\"))
    parts = [p for p in text.replace("\\", "/").strip().split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    candidate = "/".join(parts) + ("/" if directory else "")
    try:
        _to_patterns(candidate)
    except PathRejected:
        return None
    return candidate if candidate != text else None


def _to_patterns(text: str) -> tuple[str, ...]:
    """The canonical patterns ``text`` stands for, or raise :class:`PathRejected`."""
    if "{" in text or "}" in text:
        expanded = _expand_braces(text)
        if expanded is None:
            raise PathRejected(
                "PATH_BRACES",
                f"{text!r}: braces must be one level, with no empty alternative and at most "
                f"{MAX_BRACE_EXPANSION} alternatives",
                "write each path as its own list item",
            )
    else:
        expanded = [text]
    out: list[str] = []
    for item in expanded:
        directory = item.endswith("/") and not item.endswith("//")
        body = item[:-1] if directory else item
        if "*" in body or "?" in body:
            pattern = validate_pattern(body)
        else:
            pattern = canonical_path(body)
        out.append(f"{pattern}/**" if directory else pattern)
    return tuple(out)


# -- units: list items, table rows, paragraphs ----------------------------------------------


def _strip_annotations(text: str) -> str:
    """``text`` with its parenthetical parts blanked (ASCII and full-width brackets).

    Length-preserving, so offsets into the result are offsets into ``text``.
    """
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch in _OPEN:
            depth += 1
            out.append(" ")
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
            out.append(" ")
        else:
            out.append(ch if depth == 0 else " ")
    return "".join(out)


def _drop_label(text: str) -> str:
    """``text`` with a ``label:`` prefix blanked (a path never contains ': '); length-preserving."""
    if text.rstrip().endswith((":", "\uff1a")):
        return " " * len(text)
    cut = max(text.rfind(sep) + len(sep) if sep in text else 0 for sep in _COLONS)
    return " " * cut + text[cut:]


def _blank_spans(text: str) -> str:
    """``text`` with its inline code spans blanked (length-preserving)."""
    return _CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), text)


def _bare_text(text: str) -> str:
    """What bare words are read from: code spans, annotations, a label and ``**`` blanked."""
    return _drop_label(_strip_annotations(_blank_spans(text))).replace("**", "  ")


class _Collector:
    def __init__(self) -> None:
        self.taken: list[Taken] = []
        self.skipped: list[Skipped] = []
        self.problems: list[PathProblem] = []
        self.refusals: list[Refusal] = []

    def take(self, text: str, line: int, denied: bool, form: str) -> None:
        try:
            patterns = _to_patterns(text)
        except PathRejected as exc:
            self.problems.append(PathProblem(text, line, exc.code, exc.message, _suggest(text)))
            return
        self.taken.append(Taken(text, patterns, line, denied, form))

    def unit(self, parts: list[tuple[int, str]], denied: bool, *, bare: bool) -> None:
        """One list item or paragraph: its code spans, and bare paths when ``bare``."""
        for line, text in parts:
            for match in _CODE_SPAN_RE.finditer(text):
                self._span(match.group(1), line, denied, "code span")
        if bare:
            self._bare(parts, denied, "bare word")

    def _span(self, span: str, line: int, denied: bool, form: str) -> None:
        why = span_skip_reason(span)
        if why is None:
            self.take(span.strip(), line, denied, form)
        else:
            self.skipped.append(Skipped(span, line, why))

    def _bare(self, parts: list[tuple[int, str]], denied: bool, form: str) -> None:
        starts: list[int] = []
        offset = 0
        for _, text in parts:
            starts.append(offset)
            offset += len(text) + 1
        masked = _bare_text(" ".join(text for _, text in parts))

        def line_at(position: int) -> int:
            return parts[bisect_right(starts, position) - 1][0]

        for start, entry in _entry_spans(masked):
            words = [(start + m.start(), m.group(0)) for m in _WORD_RE.finditer(entry)]
            if len(words) == 1:
                position, word = words[0]
                if bare_path_like(word):
                    self.take(word, line_at(position), denied, form)
                stripped = word.rstrip(".:;")
                if denied and stripped != word and bare_path_like(stripped):
                    # 'src/keys.py.' under "not to touch": the path a reader sees is denied too
                    self.take(stripped, line_at(position), denied, form)
                continue
            for position, raw in words:
                word = raw.rstrip(".:;") if denied else raw
                if bare_path_like(word) and denied:
                    # a path inside a "do not touch" phrase is denied: narrowing is safe
                    self.take(word, line_at(position), denied, form)
                elif bare_path_like(word):
                    self.skipped.append(
                        Skipped(
                            word,
                            line_at(position),
                            "a bare path inside a phrase: write it in backticks",
                        )
                    )

    def table(self, rows: list[tuple[int, list[str]]], denied: bool) -> None:
        """A table: the path column's entries; spans elsewhere are reported."""
        # rows[1] is the stand-in delimiter row :meth:`_Reader.table` puts back
        if len(rows) < 2:  # a header without a body: its code spans, denied when it says so
            for line, cells in rows:
                row_denied = denied or any(contains_deny_phrase(c) for c in cells)
                self.unit([(line, " | ".join(cells))], row_denied, bare=False)
            return
        body = rows[2:]
        # a header that says "not to touch" denies every row
        denied = denied or any(contains_deny_phrase(c) for c in rows[0][1])
        column = _path_column(body, len(rows[0][1]))
        for line, cells in body:
            row_denied = denied or any(contains_deny_phrase(c) for c in cells)
            for index, cell in enumerate(cells):
                if index == column:
                    for match in _CODE_SPAN_RE.finditer(cell):
                        self._span(match.group(1), line, row_denied, "table cell")
                    self._bare([(line, cell)], row_denied, "table cell")
                    continue
                for match in _CODE_SPAN_RE.finditer(cell):
                    span = match.group(1)
                    why = span_skip_reason(span)
                    self.skipped.append(
                        Skipped(span, line, why or "a path in a column that is not the path column")
                    )


def _entry_spans(text: str) -> list[tuple[int, str]]:
    """``(offset, entry)`` of ``text`` split on the entry separators outside braces.

    ``a/{b,c}`` stays one entry.
    """
    out: list[tuple[int, str]] = []
    depth = 0
    position = 0
    last = len(text) - 1
    for index, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth:
                depth -= 1
        elif ch in _SEPARATORS:
            if ch == "," and depth:
                continue  # a comma inside braces belongs to the pattern
            out.append((position, text[position:index]))
            position = index + 1
        elif (
            ch in _SPACED_SEPARATORS
            and (index == 0 or text[index - 1] in _SEPARATOR_SPACES)
            and (index == last or text[index + 1] in _SEPARATOR_SPACES)
        ):
            out.append((position, text[position:index]))
            position = index + 1
    out.append((position, text[position:]))
    return out


def _cell_entries(cell: str) -> list[str] | None:
    """The entries of a table cell when every entry is one path, else None (empty: [])."""
    entries: list[str] = []
    for match in _CODE_SPAN_RE.finditer(cell):
        if span_skip_reason(match.group(1)) is not None:
            return None
        entries.append(match.group(1))
    for _, entry in _entry_spans(_bare_text(cell)):
        words = entry.split()
        if not words:
            continue
        if len(words) != 1 or not bare_path_like(words[0]):
            return None
        entries.append(words[0])
    return entries


def _path_column(body: list[tuple[int, list[str]]], width: int) -> int | None:
    """The leftmost column whose every cell holds only paths (and one at least), or None.

    One pass over the cells present (a short row's missing cells are empty), so
    the work is linear in the table.
    """
    valid = [True] * width
    seen = [False] * width
    for _, cells in body:
        for index, cell in enumerate(cells[:width]):
            if not valid[index]:
                continue
            entries = _cell_entries(cell)
            if entries is None:
                valid[index] = False
            elif entries:
                seen[index] = True
    return next((i for i in range(width) if valid[i] and seen[i]), None)


# -- the section, as a CommonMark renderer shows it ------------------------------------------

FILES_UNRECOGNISED = "LOOPSPEC_FILES_UNRECOGNISED"
"""Text of the Files section that is neither a path list nor a recognised deny form."""
FILES_HIDDEN_TEXT = "LOOPSPEC_FILES_HIDDEN_TEXT"
"""An invisible, bidirectional-control or look-alike character in the Files section."""

NEGATION_CUES: tuple[str, ...] = (
    "not",
    "never",
    "don't",
    "dont",
    "cannot",
    "can't",
    "mustn't",
    "shouldn't",
    "won't",
    "without",
    "leave",
    "keep",
    "remain",
    "remains",
    "alone",
    "unchanged",
    "untouched",
    "frozen",
    "freeze",
    "off-limits",
    "limits",
    "exclude",
    "excluded",
    "excluding",
    "except",
    "avoid",
    "ignore",
    "protected",
    "preserve",
    "immutable",
    "forbid",
    "prohibited",
    "locked",
    "hands",
)
"""Words (whole, case-folded) that may say "keep out" in a way :data:`DENY_PHRASES` does
not recognise; text that holds one and no deny phrase fails the derivation."""

NEGATION_CUES_CJK: tuple[str, ...] = (
    "不要",
    "不得",
    "不准",
    "不可",
    "不改",
    "不动",
    "不变",
    "不變",
    "不碰",
    "不修",
    "不编",
    "勿",
    "禁",
    "别动",
    "保持不变",
    "保持原样",
    "ない",
    "ません",
    "非改変",
    "対象外",
)
"""Words and endings of Chinese and Japanese that may negate (matched anywhere)."""

_CUE_WORD_RE = re.compile(r"[a-z][a-z'\-]*")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")
_BREAK_TAG_RE = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HINT_DENY = (
    "say it with a recognised phrase: a sub-heading '### Do not touch' with the paths as "
    "list items under it ('plangate plan lint TASK' shows how the section is read)"
)


def says_something_unrecognised(text: str) -> bool:
    """True when ``text`` may say "keep out" but holds no recognised deny phrase."""
    if contains_deny_phrase(text):
        return False
    folded = _deny_fold(text)
    if any(cue in folded for cue in NEGATION_CUES_CJK):
        return True
    cues = frozenset(NEGATION_CUES)
    return any(word.strip("'-") in cues or word in cues for word in _CUE_WORD_RE.findall(folded))


def hidden_character(text: str) -> str | None:
    """A description of the first character of ``text`` a reader may not see as it is.

    Invisible (format, control) characters, bidirectional controls, and letters of
    another script or width that look like an ASCII letter or digit (a Cyrillic
    ``o``, U+043E, or a full-width ``A``, U+FF21). None for plain text, Japanese and
    Chinese included.
    """
    if text.isascii():
        bad = next((ch for ch in text if not ch.isprintable() and ch not in "\t\n"), None)
        return None if bad is None else f"control character U+{ord(bad):04X}"
    import unicodedata

    previous = ""
    for ch in text:
        after, previous = previous, ch
        if ch.isascii():
            if not ch.isprintable() and ch not in "\t\n":
                return f"control character U+{ord(ch):04X}"
            continue
        if ch in _EMOJI_SELECTORS and after and unicodedata.category(after) == "So":
            continue  # the emoji form of a symbol ("\u26a0\ufe0f"): shown, hides nothing
        if ch in _BIDI:
            return f"bidirectional control U+{ord(ch):04X}"
        if is_invisible(ch):
            return f"invisible character U+{ord(ch):04X}"
        skeleton = identity_skeleton(ch)
        if skeleton.isascii() and skeleton.isalnum():
            name = unicodedata.name(ch, "unnamed")
            return f"look-alike character U+{ord(ch):04X} ({name}) shown like {skeleton!r}"
    return None


@cache
def _parser() -> object:
    # lazy: the parser costs ~25 ms to import, and only a scope derivation needs it
    # a mypy outside the project's environment may not see the package: its types are not
    # needed here (the parser is used through its tokens' attributes)
    from markdown_it import MarkdownIt  # type: ignore[import-not-found, unused-ignore]

    return MarkdownIt("commonmark", {"html": True}).enable("table")


@cache
def _block_parser() -> Any:
    """:func:`_parser` without its last two core rules (``inline``, ``text_join``): the
    blocks only; :class:`_LazyInline` runs those two rules on the inline tokens read."""
    from markdown_it import MarkdownIt  # type: ignore[import-not-found, unused-ignore]

    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    parser.core.ruler.disable(["inline", "text_join"])
    return parser


@cache
def _inline_rules() -> tuple[Any, tuple[Any, ...]]:
    """The parser's core state and its last two core rules, in the parser's order."""
    from markdown_it.rules_core import inline, text_join  # type: ignore[import-not-found, unused-ignore]
    from markdown_it.rules_core.state_core import StateCore  # type: ignore[import-not-found, unused-ignore]

    return StateCore, (inline, text_join)


class _LazyInline:
    """An inline token whose children are parsed when first read.

    The reader reads the inline runs of the Files section and of the headings only; the
    rest of a plan (most of its text) is never inline-parsed. The children are the ones
    the full parse gives: the same two core rules (``inline``, then ``text_join``) run on
    this one token with the document's own ``env`` (its link reference definitions), and
    neither rule looks at another token.
    """

    __slots__ = ("_children", "_env", "_token")
    type = "inline"

    def __init__(self, token: Any, env: dict[str, Any]) -> None:
        self._token = token
        self._env = env
        self._children: list[Any] | None = None

    @property
    def children(self) -> list[Any]:
        if self._children is None:
            state_core, rules = _inline_rules()
            state = state_core("", _block_parser(), self._env)
            state.tokens = [self._token]
            for rule in rules:
                rule(state)
            self._children = self._token.children
        return self._children

    def __getattr__(self, name: str) -> Any:
        return getattr(self._token, name)


def _parse(text: str) -> list[Any]:
    """The parser's tokens of ``text``, inline runs parsed when read (:class:`_LazyInline`)."""
    env: dict[str, Any] = {}
    tokens = _block_parser().parse(text, env)
    return [_LazyInline(t, env) if t.type == "inline" else t for t in tokens]


class _Inline(NamedTuple):
    """One inline run (a paragraph, heading or cell) as a reader sees it."""

    parts: list[tuple[int, str]]  # (line, text) with code spans in backticks
    html: list[str]  # inline HTML that is not a comment or a line break
    comments: list[str]
    images: list[str]  # the text of each image (shown only when it fails to load)
    tildes: int  # '~' in the text outside code spans (a pair strikes through on GitHub)


def _inline(token: object, first_line: int) -> _Inline:
    """What ``token`` (an inline token) shows: text, code spans and link text; images and
    tildes are counted apart (see :meth:`_Reader.visible`)."""
    parts: list[tuple[int, str]] = []
    current: list[str] = []
    html: list[str] = []
    comments: list[str] = []
    images: list[str] = []
    tildes = 0
    line = first_line
    for child in getattr(token, "children", None) or ():
        kind, content = child.type, child.content
        if kind == "text":
            # a literal backtick (escaped in the source) is shown, never a code span
            current.append(content.replace("`", " "))
            tildes += content.count("~")
        elif kind == "code_inline":
            current.append(f"`{content}`" if "`" not in content else " ")
        elif kind in ("softbreak", "hardbreak"):
            parts.append((line, "".join(current)))
            current = []
            line += 1
        elif kind == "html_inline":
            if content.startswith("<!--"):
                comments.append(content)
            elif _BREAK_TAG_RE.fullmatch(content):
                current.append(", ")
            else:
                html.append(content)
        elif kind == "image":
            images.append(content)
    parts.append((line, "".join(current)))
    return _Inline(parts, html, comments, images, tildes)


def _line_of(token: object) -> int:
    lines = getattr(token, "map", None)
    return lines[0] + 1 if lines else 0


def _joined(parts: list[tuple[int, str]]) -> str:
    return " ".join(text for _, text in parts)


class _Item:
    """An open list item: whether it denies, and what it has said so far."""

    def __init__(self, denied: bool) -> None:
        self.denied = denied
        self.took_allowed = False
        self.bare_deny: int | None = None  # line of a deny statement that names no path
        self.has_list = False


class _Reader:
    """One walk over the tokens of the Files section (linear in the tokens)."""

    def __init__(self, collector: _Collector, deny_level: int | None) -> None:
        self.collector = collector
        self.deny_level = deny_level
        self.label_deny: int | None = None  # line of a paragraph that said "not to touch"
        self.items: list[_Item] = []
        self.subsections: list[tuple[int, str, bool]] = []

    def refuse(self, text: str, line: int, code: str, message: str, hint: str) -> None:
        self.collector.refusals.append(Refusal(text, line, code, message, hint))

    def inherited(self) -> bool:
        return (
            self.deny_level is not None
            or self.label_deny is not None
            or bool(self.items and self.items[-1].denied)
        )

    def visible(self, run: _Inline, line: int, what: str) -> bool:
        """False (and a refusal) when ``run`` holds HTML or a hidden character."""
        text = _joined(run.parts)
        for comment in run.comments:
            for match in _CODE_SPAN_RE.finditer(comment):
                self.collector.skipped.append(
                    Skipped(match.group(1), line, "inside an HTML comment: not shown")
                )
        if run.html:
            self.refuse(
                run.html[0], line, FILES_UNRECOGNISED,
                f"inline HTML {run.html[0]!r} in {what}: a renderer may show or hide it",
                "write the text in plain Markdown",
            )  # fmt: skip
            return False
        if run.images:
            self.refuse(
                run.images[0], line, FILES_UNRECOGNISED,
                f"an image in {what}: its text {run.images[0]!r} is shown only when the image "
                "fails to load",
                "write paths as text, and put images outside the Files section",
            )  # fmt: skip
            return False
        if run.tildes >= 2:
            self.refuse(
                text.strip(), line, FILES_UNRECOGNISED,
                f"{what} holds tildes outside code spans: GitHub strikes through text between "
                "them ('~~x~~', '~x~'), so a struck path may read as not meant",
                "remove struck text, or put a '~' that belongs to a path inside `backticks`",
            )  # fmt: skip
            return False
        hidden = hidden_character(text)
        if hidden is not None:
            self.refuse(
                text.strip(), line, FILES_HIDDEN_TEXT,
                f"{what} holds a {hidden}: what a reviewer reads is not what is derived",
                "retype the line in plain characters (paths in ASCII)",
            )  # fmt: skip
            return False
        return True

    def heading(self, level: int, run: _Inline, line: int) -> None:
        self.items.clear()
        self.label_deny = None
        title = _joined(run.parts).strip()
        if not self.visible(run, line, "a heading"):
            # refused; what follows is shown (and read) as denied, the narrower reading
            if self.deny_level is None or level <= self.deny_level:
                self.deny_level = level
            self.subsections.append((line, title, True))
            return
        if self.deny_level is not None and level <= self.deny_level:
            self.deny_level = None
        if self.deny_level is None and contains_deny_phrase(title):
            self.deny_level = level
        elif self.deny_level is None and says_something_unrecognised(title):
            self.refuse(
                title, line, FILES_UNRECOGNISED,
                f"the heading {title!r} may say its paths are not to be touched, in words "
                "the derivation does not recognise",
                _HINT_DENY,
            )  # fmt: skip
        self.subsections.append((line, title, self.deny_level is not None))

    def paragraph(self, run: _Inline, line: int) -> None:
        """A paragraph: a list item's text when an item is open, else a label."""
        if not self.visible(run, line, "a paragraph"):
            return
        joined = _joined(run.parts)
        if self.deny_level is not None and not self.items:
            # under a "not to touch" heading every path is denied, whatever the prose says
            self.collector.unit(run.parts, True, bare=True)
            return
        says_deny = contains_deny_phrase(joined)
        if not says_deny and not self.inherited() and says_something_unrecognised(joined):
            self.refuse(
                joined.strip(), line, FILES_UNRECOGNISED,
                f"{joined.strip()!r} may say its paths are not to be touched, in words the "
                "derivation does not recognise",
                _HINT_DENY,
            )  # fmt: skip
            return
        before = len(self.collector.taken)
        if self.items:
            item = self.items[-1]
            item.denied = item.denied or says_deny
            self.collector.unit(run.parts, item.denied, bare=True)
            new = self.collector.taken[before:]
            if says_deny and not new:
                if item.took_allowed:
                    self.refuse(
                        joined.strip(), line, FILES_UNRECOGNISED,
                        "a 'not to touch' statement inside a list item whose paths are "
                        "allowed: it is unclear what it covers",
                        "move the path under a '### Do not touch' sub-heading",
                    )  # fmt: skip
                item.bare_deny = item.bare_deny or line
            item.took_allowed = item.took_allowed or any(not t.denied for t in new)
            return
        if self.label_deny is not None and not says_deny:
            self.refuse(
                joined.strip(), line, FILES_UNRECOGNISED,
                f"a paragraph after the 'not to touch' paragraph of line {self.label_deny}: "
                "it is unclear which of the lists after it are denied",
                "start a sub-heading ('### Changed') before the paths the task may change, or "
                "put the explanation before the 'not to touch' paragraph",
            )  # fmt: skip
            return
        names_path = any(
            span_skip_reason(m.group(1)) is None
            for _, t in run.parts
            for m in _CODE_SPAN_RE.finditer(t)
        )
        if not says_deny and not names_path:
            self.refuse(
                joined.strip(), line, FILES_UNRECOGNISED,
                f"{joined.strip()!r} is neither a list of paths nor a 'not to touch' statement",
                "move explanations out of the Files section (or into the list item they "
                "explain), or end a label with ':' before its list as a list item",
            )  # fmt: skip
            return
        self.collector.unit(run.parts, says_deny or self.inherited(), bare=says_deny)
        if says_deny:
            self.label_deny = line

    def open_item(self) -> None:
        if self.items:
            self.items[-1].has_list = True
        self.items.append(_Item(self.inherited()))

    def close_item(self) -> None:
        item = self.items.pop()
        if item.bare_deny is not None and not item.has_list:
            self.refuse(
                "", item.bare_deny, FILES_UNRECOGNISED,
                "a list item says 'not to touch' but names no path and holds no list",
                "name the path in the same item ('- `dir/file` (do not touch)') or list the "
                "paths under it",
            )  # fmt: skip

    def table(self, rows: list[tuple[int, list[_Inline]]]) -> None:
        cells: list[tuple[int, list[str]]] = []
        for line, runs in rows:
            texts = []
            for run in runs:
                if not self.visible(run, line, "a table cell"):
                    return
                text = _joined(run.parts)
                if (
                    not self.inherited()
                    and not contains_deny_phrase(text)
                    and says_something_unrecognised(text)
                ):
                    self.refuse(
                        text.strip(), line, FILES_UNRECOGNISED,
                        f"the table cell {text.strip()!r} may say its paths are not to be "
                        "touched, in words the derivation does not recognise",
                        _HINT_DENY,
                    )  # fmt: skip
                    return
                texts.append(text)
            cells.append((line, texts))
        if len(cells) >= 2:
            # the delimiter row is not a token: put a stand-in back for the table rule
            cells.insert(1, (cells[0][0] + 1, ["---"] * len(cells[0][1])))
        self.collector.table(cells, self.inherited())

    def block(self, kind: str, content: str, line: int) -> None:
        """A code block or HTML block: never a path, and HTML fails the derivation."""
        if kind == "html_block":
            stripped = content.strip()
            if stripped.startswith("<!--") and (stripped.endswith("-->") or "-->" not in stripped):
                spans = _CODE_SPAN_RE.findall(stripped)
                for span in spans or [stripped.splitlines()[0]]:
                    self.collector.skipped.append(
                        Skipped(span, line, "inside an HTML comment: not shown")
                    )
                return
            self.refuse(
                stripped.splitlines()[0] if stripped else "", line, FILES_UNRECOGNISED,
                "an HTML block in the Files section: a renderer may show or hide it",
                "write the section in plain Markdown (lists of paths, sub-headings)",
            )  # fmt: skip
            return
        self.collector.skipped.append(
            Skipped(content.strip().splitlines()[0] if content.strip() else "", line,
                    "inside a code block: shown as code, never a path")
        )  # fmt: skip


def _headings(tokens: list[Any]) -> list[tuple[int, int, str]]:
    """``(index, level, title)`` of every heading that is not inside a list or quote."""
    return [
        (index, int(token.tag[1]), _joined(_inline(tokens[index + 1], 0).parts).strip())
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.level == 0
    ]


def _section_ends(heads: list[tuple[int, int, str]], total: int) -> list[int]:
    """For each heading, the index of the next heading of its level or above (one pass)."""
    ends = [total] * len(heads)
    open_heads: list[int] = []  # positions in ``heads`` still waiting for their end
    for position, (index, level, _) in enumerate(heads):
        while open_heads and heads[open_heads[-1]][1] >= level:
            ends[open_heads.pop()] = index
        open_heads.append(position)
    return ends


def _section_bounds(
    tokens: list[Any], heads: list[tuple[int, int, str]]
) -> tuple[list[int], list[tuple[int, int, str]]]:
    """Indices of the Files headings, and every top-level h1/h2 (index, line, title).

    ``heads``: :func:`_headings` of ``tokens`` (the titles are read once)."""
    files: list[int] = []
    tops: list[tuple[int, int, str]] = []
    for index, level, title in heads:
        if level > 2:
            continue
        line = _line_of(tokens[index])
        tops.append((index, line, title))
        if level == 2 and heading_annotation(title, FILES_HEADING) is not None:
            files.append(index)
    return files, tops


def _walk(tokens: list[Any], index: int, end: int, reader: _Reader, unread: list[Skipped]) -> None:
    """Feed the tokens ``index`` to ``end`` (one section) to ``reader``, in order."""
    collector = reader.collector
    rows: list[tuple[int, list[_Inline]]] = []
    row: list[_Inline] = []
    row_line = 0
    while index < end:
        token = tokens[index]
        kind = token.type
        line = _line_of(token)
        if kind == "heading_open":
            reader.heading(int(token.tag[1]), _inline(tokens[index + 1], line), line)
            index += 3
            continue
        if kind == "paragraph_open":
            reader.paragraph(_inline(tokens[index + 1], line), line)
            index += 3
            continue
        if kind == "list_item_open":
            reader.open_item()
        elif kind == "list_item_close":
            reader.close_item()
        elif kind in ("fence", "code_block", "html_block"):
            reader.block(kind, token.content, line)
            if kind != "html_block":
                unread.append(collector.skipped[-1])
        elif kind == "tr_open":
            row, row_line = [], line
        elif kind in ("th_open", "td_open"):
            row.append(_inline(tokens[index + 1], row_line))
        elif kind == "tr_close":
            rows.append((row_line, row))
        elif kind == "table_close":
            reader.table(rows)
            rows = []
        index += 1


def read_files_section(text: str, tokens: list[Any] | None = None) -> FilesSection:
    """Everything :func:`plangate.plan.scope.derive_scope` reads from ``text`` (pure):
    :func:`_read_section`, and a refusal when the plan begins with front matter that
    changes what the section says.

    GitHub shows a ``---`` block at the top of a Markdown file as data (a table of its
    YAML, comments hidden), not as Markdown, while CommonMark reads it as a rule and
    text; a plan whose Files section reads differently with the block as Markdown and
    with it blanked out is refused (``LOOPSPEC_FILES_UNRECOGNISED``): a reviewer may
    have seen either.
    """
    section = _read_section(text, tokens)
    end = front_matter_end(text)
    if end is None:
        return section
    lines = text.split("\n")
    without = _read_section("\n" * end + "\n".join(lines[end:]), None)
    if (without.heading_lines, without.allowed, without.denied, bool(without.refusals)) == (
        section.heading_lines, section.allowed, section.denied, bool(section.refusals)
    ):
        return section
    refusal = Refusal(
        lines[0], 1, FILES_UNRECOGNISED,
        f"plan.md begins with front matter (lines 1-{end}), which GitHub shows as data, not "
        "Markdown: the Files section read with it and without it differs",
        "move the text out of the '---' block at the top of plan.md, or remove the block",
    )  # fmt: skip
    return section._replace(refusals=(refusal, *section.refusals))


def shown_line(text: str, number: int) -> str | None:
    """The text a renderer shows on line ``number`` (1-based) of ``text``, code spans in
    backticks and markup (emphasis, links) dropped, or None when it may not show it as
    written (pure): no paragraph, heading or cell holds the line (an HTML block, a code
    block, the inside of a comment), the paragraph holds inline HTML, or an HTML block
    other than a comment comes anywhere before it (``<details>``, ``<div hidden>``: what
    follows, up to its closing tag wherever that is, may be folded away or hidden)."""
    tokens = plain_tokens(text)
    if tokens is None:
        tokens = _parse(text)
    shown: list[str] = []  # one text per inline run on the line (a table row: one per cell)
    for token in tokens:
        lines = getattr(token, "map", None)
        if not lines:
            continue
        if (token.type == "html_block" and lines[0] + 1 < number
                and not token.content.lstrip().startswith("<!--")):
            return None
        if token.type != "inline" or not lines[0] < number <= lines[1]:
            continue
        run = _inline(token, lines[0] + 1)
        if run.html:
            return None
        shown.append("".join(part for line, part in run.parts if line == number))
    return " | ".join(shown) if shown else None


def front_matter_end(text: str) -> int | None:
    """The line (1-based) closing a front matter block at the top of ``text`` (a first
    line ``---``, a later line ``---`` or ``...``), or None when there is none (pure)."""
    if not text.startswith("---"):
        return None
    lines = text.split("\n", 1)
    if lines[0].rstrip(" \t\r") != "---" or len(lines) == 1:
        return None
    for number, line in enumerate(lines[1].split("\n"), start=2):
        if line.rstrip(" \t\r") in ("---", "..."):
            return number
    return None


def _read_section(text: str, tokens: list[Any] | None = None) -> FilesSection:
    """The Files section of ``text`` as CommonMark shows it (see :func:`read_files_section`).

    The plan is parsed as CommonMark (with tables); the section is what a
    renderer shows between the Files heading and the next level-1 or level-2
    heading. Only list items, table cells and "not to touch" statements are read;
    code blocks and comments are never a path, and HTML, hidden characters and
    text that is neither a path list nor a recognised deny form are refusals.
    ``tokens``: the parser's tokens of ``text`` when the caller has them; else a plain
    plan is tokenized by :func:`plangate.plan.plain_markdown.plain_tokens` (the parser's
    very tokens) and any other by the parser.
    """
    if tokens is None:  # a plain plan's tokens without the parser (the same tokens)
        tokens = plain_tokens(text)
    if tokens is None:
        tokens = _parse(text)
    heads = _headings(tokens)
    files, tops = _section_bounds(tokens, heads)
    heading_lines = tuple(_line_of(tokens[i]) for i in files)
    if len(files) != 1:
        return FilesSection(heading_lines, "", (), (), (), ())
    start = files[0]
    end = next((i for i, _, _ in tops if i > start), len(tokens))
    title = _joined(_inline(tokens[start + 1], heading_lines[0]).parts).strip()
    annotation = heading_annotation(title, FILES_HEADING) or ""
    collector = _Collector()
    reader = _Reader(collector, 2 if contains_deny_phrase(annotation) else None)
    hidden = hidden_character(title)
    if hidden is not None:
        reader.refuse(title, heading_lines[0], FILES_HIDDEN_TEXT,
                      f"the Files heading holds a {hidden}", "retype the heading")
    for token in tokens[:start]:
        # '<details>' or '<div hidden>' above the heading may fold or hide everything up to
        # its closing tag, the section included, wherever that tag is
        if token.type == "html_block" and not token.content.lstrip().startswith("<!--"):
            block = token.content.strip().split("\n")[0]
            reader.refuse(block, _line_of(token), FILES_UNRECOGNISED,
                          f"an HTML block ({block[:40]!r}) above the Files heading: a renderer "
                          "may fold or hide the section behind it",
                          "write the plan in plain Markdown")
            break
    unread: list[Skipped] = []
    _walk(tokens, start + 3, end, reader, unread)
    ends = _section_ends(heads, len(tokens))
    for (index, _, heading_title), later in zip(heads, ends, strict=True):
        # a heading elsewhere in the plan that says "not to touch" (an underlined 'Do not
        # touch' ends the Files section for a renderer): its paths are denied, never allowed
        if (start <= index < end) or not contains_deny_phrase(heading_title):
            continue
        stop = min(later, start) if index < start else later
        _walk(tokens, index + 3, stop, _Reader(collector, 0), unread)
    return FilesSection(
        heading_lines,
        annotation,
        tuple(collector.taken),
        tuple(collector.skipped),
        tuple(collector.problems),
        tuple(reader.subsections),
        tuple(collector.refusals),
        tuple(unread),
    )
