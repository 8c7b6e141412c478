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
from functools import cache

from plangate.paths import PathRejected, canonical_path, validate_pattern
from plangate.records import NamedTuple
from plangate.text import identity_skeleton

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


class FilesSection(NamedTuple):
    """Everything the derivation sees in the Files section of one plan."""

    heading_lines: tuple[int, ...]  # 1-based lines of every heading that is the section
    annotation: str
    taken: tuple[Taken, ...]
    skipped: tuple[Skipped, ...]
    problems: tuple[PathProblem, ...]
    subsections: tuple[tuple[int, str, bool], ...]  # (line, heading text, deny)

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


def contains_deny_phrase(text: str) -> bool:
    """True when ``text`` says its paths are not to be touched.

    Compared as a reader sees both (:func:`_deny_fold`): a zero-width character,
    a full-width or look-alike letter, a typographic apostrophe or a double
    space never hides a "do not touch" (over-matching only narrows the scope).
    """
    folded = _deny_fold(text)
    return any(phrase in folded for phrase in _folded_phrases())


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
                f"{text!r}: braces must be one level, at most {MAX_BRACE_EXPANSION} alternatives",
                "write each path",
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


def _split_cells(row: str) -> list[str]:
    """Cells of a table row, splitting on unescaped ``|``."""
    body = row.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in body:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    cells.append("".join(current).strip())
    return cells


def _is_delimiter_row(cells: list[str]) -> bool:
    return bool(cells) and all(c != "" and c.strip(":-") == "" and "-" in c for c in cells)


_SETEXT_RE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_AFTER_UNDERLINE = (
    "after a heading underlined with '===' or '---': a reader sees a new section there, so "
    "only its 'not to touch' entries count"
)


class _Collector:
    def __init__(self) -> None:
        self.taken: list[Taken] = []
        self.skipped: list[Skipped] = []
        self.problems: list[PathProblem] = []
        self.deny_only = False  # after an underlined heading: only denied entries count

    def take(self, text: str, line: int, denied: bool, form: str) -> None:
        if self.deny_only and not denied:
            self.skipped.append(Skipped(text, line, _AFTER_UNDERLINE))
            return
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
            if len(words) == 1 and bare_path_like(words[0][1]):
                self.take(words[0][1], line_at(words[0][0]), denied, form)
                continue
            for position, word in words if len(words) > 1 else ():
                if bare_path_like(word):
                    self.skipped.append(
                        Skipped(
                            word,
                            line_at(position),
                            "a bare path inside a phrase: write it in backticks",
                        )
                    )

    def table(self, rows: list[tuple[int, list[str]]], denied: bool) -> None:
        """A table: the path column's entries; spans elsewhere are reported."""
        if len(rows) < 2 or not _is_delimiter_row(rows[1][1]):
            for line, cells in rows:
                self.unit([(line, " | ".join(cells))], denied, bare=False)
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


# -- the section ---------------------------------------------------------------------------


def _blank_html_comments(
    lines: list[str], start: int, end: int, outside: list[bool], skipped: list[Skipped]
) -> list[str]:
    """``lines`` with the text of HTML comments (``<!-- ... -->``) between ``start`` and
    ``end`` blanked: a reader of the rendered plan never sees it, so nothing in it is in
    scope. Code spans hidden there are reported. One pass, linear in the section."""
    out = list(lines)
    inside = False
    for i in range(start, end):
        if not outside[i]:
            continue
        line = lines[i]
        kept: list[str] = []
        hidden: list[str] = []
        position = 0
        while position < len(line):
            if inside:
                close = line.find("-->", position)
                stop = len(line) if close < 0 else close + 3
                hidden.append(line[position:stop])
                kept.append(" " * (stop - position))
                position = stop
                inside = close < 0
            else:
                opening = line.find("<!--", position)
                stop = len(line) if opening < 0 else opening
                kept.append(line[position:stop])
                position = stop
                if opening >= 0:
                    inside = True
                    kept.append(" " * 4)
                    hidden.append("<!--")
                    position += 4
        out[i] = "".join(kept)
        for match in _CODE_SPAN_RE.finditer(" ".join(hidden)):
            skipped.append(Skipped(match.group(1), i + 1, "inside an HTML comment: not shown"))
    return out


def read_files_section(text: str) -> FilesSection:
    """Everything :func:`plangate.plan.scope.derive_scope` reads from ``text`` (pure)."""
    lines = text.splitlines()
    outside = outside_fences(lines)
    spans = section_spans(lines, outside, FILES_HEADING)
    heading_lines = tuple(start + 1 for start, _ in spans)
    if len(spans) != 1:
        return FilesSection(heading_lines, "", (), (), (), ())
    start, end = spans[0]
    head = heading(lines[start])
    annotation = heading_annotation(head[1], FILES_HEADING) if head else ""
    collector = _Collector()
    lines = _blank_html_comments(lines, start + 1, end, outside, collector.skipped)
    subsections: list[tuple[int, str, bool]] = []
    # level of the deny sub-section we are in; an annotation of the Files heading
    # itself that says "not to touch" makes the whole section deny
    deny_level: int | None = 2 if contains_deny_phrase(annotation or "") else None
    label_deny = False  # a paragraph said "not to touch" and a list or table follows
    items: list[tuple[int, bool]] = []  # (indent, denied) of the open list items
    unit: list[tuple[int, str]] = []
    unit_kind = ""  # "item", "para"
    unit_denied = False
    unit_start = 0
    table: list[tuple[int, list[str]]] = []

    def flush() -> None:
        nonlocal unit, unit_kind, table, label_deny
        if unit:
            joined = " ".join(t for _, t in unit)
            denied = unit_denied or contains_deny_phrase(joined)
            collector.unit(unit, denied, bare=unit_kind == "item")
            if unit_kind in ("item", "inner") and items:
                items[-1] = (items[-1][0], denied)  # what is nested under it inherits
            elif unit_kind == "para":
                label_deny = denied  # the list or table after it inherits
        if table:
            collector.table(
                table, deny_level is not None or label_deny or bool(items and items[-1][1])
            )
        unit, unit_kind, table = [], "", []

    for i in range(start + 1, end):
        line = lines[i]
        number = i + 1
        if not outside[i]:
            continue
        head = heading(line)
        if head is not None:
            flush()
            items.clear()
            label_deny = False
            level, title = head
            if deny_level is not None and level <= deny_level:
                deny_level = None
            says_deny = contains_deny_phrase(title)
            if deny_level is None and says_deny:
                deny_level = level
            subsections.append((number, title, deny_level is not None))
            continue
        stripped = line.strip()
        if unit_kind == "para" and unit and _SETEXT_RE.match(line):
            # The paragraph above is a heading underlined with '===' or '---' (level 1
            # or 2): a reader sees the section end here. Its text is a heading, not a
            # list of paths; what follows can still deny, never allow.
            title = " ".join(t for _, t in unit)
            if contains_deny_phrase(title):
                deny_level = 1  # a heading that says not to touch: all that follows denies
            unit, unit_kind = [], ""
            items.clear()
            label_deny = False
            collector.deny_only = True
            subsections.append((unit_start, title, deny_level is not None))
            continue
        if stripped == "":
            flush()
            continue
        if stripped.startswith("|"):
            if unit:
                flush()
            table.append((number, _split_cells(stripped)))
            continue
        if table:
            flush()
        marker = _LIST_RE.match(line)
        if marker is not None:
            flush()
            indent = len(marker.group(1).expandtabs(4))
            while items and items[-1][0] >= indent:
                items.pop()
            inherited = deny_level is not None or label_deny or bool(items and items[-1][1])
            items.append((indent, inherited))
            unit, unit_kind, unit_denied = [(number, line[marker.end() :])], "item", inherited
            continue
        if unit:
            unit.append((number, stripped))  # a continuation line of the item or paragraph
            continue
        if line.startswith((" ", "\t")) and items:
            kind = "inner"  # a paragraph inside the open list item
        else:
            kind = "para"
            items.clear()
            label_deny = False
        unit, unit_kind = [(number, stripped)], kind
        unit_start = number
        unit_denied = deny_level is not None or label_deny or bool(items and items[-1][1])
    flush()
    return FilesSection(
        heading_lines,
        annotation or "",
        tuple(collector.taken),
        tuple(collector.skipped),
        tuple(collector.problems),
        tuple(subsections),
    )
