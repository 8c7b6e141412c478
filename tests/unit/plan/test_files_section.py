"""The Files section as people write it: allowed and denied paths, skipped spans, problems."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from plangate.plan import files_section as fs
from plangate.plan.files_section import (
    MAX_BRACE_EXPANSION,
    bare_path_like,
    heading_annotation,
    read_files_section,
    span_skip_reason,
)
from plangate.plan.scope import derive_scope
from support.entry_separators import entry_spans_by_pattern

FILES = "Files / Components to Touch"


def plan(body: str, heading: str = f"## {FILES}") -> str:
    return f"# P\n\n## Goal\n\nx\n\n{heading}\n\n{body}\n## Testing Strategy\n\nt\n"


def section(body: str, heading: str = f"## {FILES}"):
    return read_files_section(plan(body, heading))


# -- the tables, each row on its own -----------------------------------------------------
# Written out here (not read from the module): a row dropped from a table must turn a test red.

DENY_PHRASES = (
    'forbidden', 'do not touch', "don't touch", 'not to touch',
    'must not touch', 'do not edit', "don't edit", 'do not modify',
    "don't modify", 'do not change', "don't change", 'must not change',
    'no edit', 'no change', 'read-only', 'read only',
    'reference only', 'untouched', 'out of scope', 'not be touched',
    'not be edited', 'not be modified', 'not be changed', 'never touch',
    'never edit', 'never modify', 'never change', 'leave unchanged',
    'keep unchanged', 'leave as is', 'keep as is', 'leave alone',
    'do not update', "don't update", 'must not be', 'unmodified',
    'excluded from', 'do not alter', "don't alter", 'must not alter',
    'off-limits', 'off limits', 'remain unchanged', '不要修改',
    '不要改动', '请勿修改', '不得修改', '触らない',
    '触れない', '編集不要', '編集しない', '変更しない',
    '変更不要', '書き換えない', '改変しない', '参照のみ',
    '確認のみ', '対象外', 'スコープ外', '禁止',
    '不可', '変更なし', '読み取り専用',
)


@pytest.mark.parametrize("phrase", DENY_PHRASES)
def test_every_deny_phrase_denies_the_paths_of_its_item(phrase: str) -> None:
    found = section(f"- `src/a.py` ({phrase})\n- `src/b.py`\n")
    assert found.denied == ("src/a.py",) and found.allowed == ("src/b.py",)
    assert found.refusals == ()


KNOWN_EXTENSIONS = (
    'bash', 'bat', 'c', 'cc', 'cfg', 'cjs', 'conf', 'cpp',
    'cs', 'css', 'csv', 'dart', 'env', 'gitignore', 'gitkeep', 'go',
    'gradle', 'h', 'hpp', 'htm', 'html', 'ini', 'ipynb', 'java',
    'jpeg', 'jpg', 'js', 'json', 'jsonl', 'jsx', 'kt', 'lock',
    'lua', 'md', 'mdx', 'mjs', 'php', 'pl', 'png', 'properties',
    'proto', 'ps1', 'py', 'pyi', 'rb', 'rs', 'rst', 'scss',
    'sh', 'sql', 'svg', 'swift', 'tf', 'toml', 'ts', 'tsx',
    'txt', 'vue', 'xml', 'yaml', 'yml', 'zsh',
)
KNOWN_NAMES = (
    'CODEOWNERS', 'Dockerfile', 'Gemfile', 'Jenkinsfile', 'Justfile',
    'LICENSE', 'Makefile', 'Procfile', 'Rakefile', 'Vagrantfile',
)


@pytest.mark.parametrize("ext", KNOWN_EXTENSIONS)
def test_every_known_extension_makes_a_bare_word_and_a_span_a_path(ext: str) -> None:
    found = section(f"- `notes.{ext}`\n- tool.{ext.upper()}\n")
    assert found.allowed == (f"notes.{ext}", f"tool.{ext.upper()}")
    assert found.skipped == ()


@pytest.mark.parametrize("name", KNOWN_NAMES)
def test_every_known_file_name_is_a_path(name: str) -> None:
    found = section(f"- `{name}`\n- docs/{name}\n")
    assert found.allowed == (name, f"docs/{name}")
    assert found.skipped == ()


NEGATION_CUES = (
    'not', 'never', "don't", 'dont', 'cannot', "can't",
    "mustn't", "shouldn't", "won't", 'without', 'leave', 'keep',
    'remain', 'remains', 'alone', 'unchanged', 'frozen', 'freeze',
    'limits', 'exclude', 'excluded', 'excluding', 'except', 'avoid',
    'ignore', 'protected', 'preserve', 'immutable', 'forbid', 'prohibited',
    'locked', 'hands',
)
NEGATION_CUES_CJK = (
    '不要', '不得', '不准', '不改', '不动', '不变',
    '不變', '不碰', '不修', '不编', '勿', '禁',
    '别动', '保持原样', 'ない', 'ません', '非改変',
)


@pytest.mark.parametrize("cue", NEGATION_CUES + NEGATION_CUES_CJK)
def test_every_negation_cue_without_a_deny_phrase_refuses_the_section(cue: str) -> None:
    found = section(f"- `src/a.py` ({cue})\n")
    assert [(r.code, r.line) for r in found.refusals] == [(fs.FILES_UNRECOGNISED, 9)]
    assert "### Do not touch" in found.refusals[0].hint


@pytest.mark.parametrize("quote", ["\u2018", "\u2019", "\u02bc"])
def test_a_typographic_apostrophe_reads_as_a_plain_one(quote: str) -> None:
    found = section(f"- `src/a.py` (don{quote}t touch)\n- `src/b.py`\n")
    assert found.denied == ("src/a.py",) and found.allowed == ("src/b.py",)


@pytest.mark.parametrize("dash", ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212"])
def test_a_typographic_dash_reads_as_a_hyphen(dash: str) -> None:
    found = section(f"- `src/a.py` (read{dash}only)\n- `src/b.py`\n")
    assert found.denied == ("src/a.py",) and found.allowed == ("src/b.py",)


@pytest.mark.parametrize("mark", ["*", "_", "`"])
def test_emphasis_marks_inside_a_deny_phrase_are_dropped(mark: str) -> None:
    found = section(f"- `src/a.py` (do {mark}not{mark} touch)\n- `src/b.py`\n")
    assert found.denied == ("src/a.py",) and found.allowed == ("src/b.py",)
    assert found.refusals == ()


@pytest.mark.parametrize(
    "line",
    [
        "- `src/a.py` (do ~not~ touch)",  # GitHub shows 'not' struck: 'do touch'
        "- `src/a.py` (do ~~not~~ touch)",
        "- ~~`src/a.py`~~",  # a struck path reads as dropped
        "- ~`src/a.py`~",
        "- `src/a.py` ~~and `src/b.py`~~",
        "| ~~`src/a.py`~~ |",
    ],
)
def test_struck_through_text_is_refused(line: str) -> None:
    text = line if not line.startswith("|") else f"| path |\n|---|\n{line}"
    found = section(f"{text}\n")
    assert [r.code for r in found.refusals] == ["LOOPSPEC_FILES_UNRECOGNISED"], found
    assert "strikes through" in found.refusals[0].message


@pytest.mark.parametrize(
    "line",
    ["- `src/a.py` (about ~10 lines)", "- `src/~a.py`", "- `src/a.py` and `~/notes` (never read)"],
)
def test_a_lone_tilde_or_one_in_a_code_span_is_plain_text(line: str) -> None:
    assert not any("strikes through" in r.message for r in section(f"{line}\n").refusals)


@pytest.mark.parametrize(
    "line",
    [
        "- ![src/evil.py](x.png)",
        "- `src/a.py` ![`src/evil.py`](x.png)",
        "- [![src/evil.py](x.png)](src/a.py)",
        "| ![src/evil.py](x.png) |",
    ],
)
def test_an_image_is_refused_its_text_is_not_what_a_reviewer_sees(line: str) -> None:
    text = line if not line.startswith("|") else f"| path |\n|---|\n{line}"
    found = section(f"{text}\n")
    assert [r.code for r in found.refusals] == ["LOOPSPEC_FILES_UNRECOGNISED"], found
    assert "an image" in found.refusals[0].message
    assert "src/evil.py" not in found.allowed


def test_the_reason_codes_of_the_section_are_their_literal_names() -> None:
    # a consumer matches on the code text, so the text itself is the contract
    assert fs.FILES_UNRECOGNISED == "LOOPSPEC_FILES_UNRECOGNISED"
    assert fs.FILES_HIDDEN_TEXT == "LOOPSPEC_FILES_HIDDEN_TEXT"
    assert [r.code for r in section("- `src/a.py` (never)\n").refusals] == [
        "LOOPSPEC_FILES_UNRECOGNISED"
    ]


BIDI_CONTROLS = (
    "\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c",
    "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
)  # fmt: skip


@pytest.mark.parametrize("control", BIDI_CONTROLS)
def test_every_bidirectional_control_is_named_as_one(control: str) -> None:
    found = section(f"- `src/a.py` x{control}y\n")
    assert [r.code for r in found.refusals] == ["LOOPSPEC_FILES_HIDDEN_TEXT"]
    assert f"bidirectional control U+{ord(control):04X}" in found.refusals[0].message


@pytest.mark.parametrize("tag", ["<br>", "<br/>", "<BR />"])
def test_a_line_break_tag_in_a_table_cell_separates_two_paths(tag: str) -> None:
    found = section(f"| Path |\n|---|\n| `src/a.py`{tag}`src/b.py` |\n")
    assert [t.text for t in found.taken] == ["src/a.py", "src/b.py"]
    assert found.refusals == ()


def test_a_path_between_two_words_reads_as_a_space_in_a_statement() -> None:
    found = section("- `src/a.py` never`src/b.py`edit\n- `src/c.py`\n")
    assert found.denied == ("src/a.py", "src/b.py") and found.allowed == ("src/c.py",)


def test_a_deny_phrase_written_with_html_entities_is_one() -> None:
    # the parser decodes entities in text; the LoopSpec and the lint read raw lines
    assert fs.contains_deny_phrase("`x.py` do&nbsp;not&nbsp;touch")
    assert fs.contains_deny_phrase("read&#45;only")
    assert not fs.contains_deny_phrase("do&amp;not touch")


def test_a_glob_span_without_a_slash_or_a_known_extension_is_a_pattern() -> None:
    found = section("- `Make*`\n- `data?`\n- `*.zzz`\n")
    assert found.allowed == ("Make*", "data?", "*.zzz") and found.skipped == ()


def test_a_closing_brace_without_its_opening_one_fails_the_path() -> None:
    found = section("- `src/a}b.py`\n- `src/{a,b}}.py`\n")
    assert [(p.text, p.code) for p in found.problems] == [
        ("src/a}b.py", "PATH_BRACES"),
        ("src/{a,b}}.py", "PATH_BRACES"),
    ]
    assert found.allowed == ()


def test_nested_braces_and_empty_alternatives_fail_the_path() -> None:
    found = section("- `x/{{a,b}`\n- `x/{a,{b}`\n- `x/{a,}.md`\n- `x/{,a}.md`\n- `x/{a}.md`\n")
    assert [(p.text, p.code) for p in found.problems] == [
        ("x/{{a,b}", "PATH_BRACES"),
        ("x/{a,{b}", "PATH_BRACES"),
        ("x/{a,}.md", "PATH_BRACES"),
        ("x/{,a}.md", "PATH_BRACES"),
    ]
    assert found.allowed == ("x/a.md",)


def test_a_problem_says_whether_it_is_a_path_or_a_pattern() -> None:
    found = section("- `./src/a.py`\n- `./src/*.py`\n- `./src/a?.py`\n")
    assert [p.message for p in found.problems] == [
        "path './src/a.py' contains a '.' segment",
        "pattern './src/*.py' contains a '.' segment",
        "pattern './src/a?.py' contains a '.' segment",
    ]


def test_an_unclosed_brace_fails_the_path() -> None:
    found = section("- `x/{abc`\n- `x/{a}{bc`\n")
    assert [(p.text, p.code) for p in found.problems] == [
        ("x/{abc", "PATH_BRACES"),
        ("x/{a}{bc", "PATH_BRACES"),
    ]


@pytest.mark.parametrize(
    ("text", "code", "suggestion"),
    [
        ("./src/a.py", "PATH_DOT", "src/a.py"),
        ("src/./a.py", "PATH_DOT", "src/a.py"),
        ("src/dir/.", "PATH_DOT", "src/dir"),
        ("src//a.py", "PATH_EMPTY_SEGMENT", "src/a.py"),
        ("src/dir//", "PATH_EMPTY_SEGMENT", "src/dir/"),
        ("src\\a.py", "PATH_BACKSLASH", "src/a.py"),
        ("src\\dir\\", "PATH_BACKSLASH", "src/dir/"),
        ("/abs/a.py", "PATH_ABSOLUTE", "abs/a.py"),
        ("./x/{a,b}.md", "PATH_DOT", "x/{a,b}.md"),
        ("a/../b.py", "PATH_DOTDOT", None),  # no obvious fix: '..' is refused, never resolved
        ("./", "PATH_DOT", None),  # nothing left
        (".//", "PATH_DOT", None),
        ("src/**x/./a.py", "PATH_DOT", None),  # the cleaned spelling is still no pattern
        ("x/{a,}/./b", "PATH_BRACES", None),
    ],
)
def test_a_non_canonical_path_gets_its_obvious_spelling_or_none(
    text: str, code: str, suggestion: str | None
) -> None:
    found = section(f"- `{text}`\n")
    assert [(p.text, p.code, p.suggestion) for p in found.problems] == [(text, code, suggestion)]
    assert found.allowed == () and found.denied == ()


def test_a_bare_path_on_a_continuation_line_keeps_its_line() -> None:
    # annotations, labels and code spans are blanked in place, so offsets stay lines
    body = (
        "- (note) src/a.py,\n  src/b.py\n"
        "- Label: src/c.py,\n  src/d.py\n"
        "- `x` src/e.py,\n  src/f.py\n"
        "- (a (b)) src/i.py,\n  src/j.py\n"
        "- (a (b (c)) d) src/k.py\n"  # nested annotations end with their last bracket
        "- ) (note) src/m.py\n"  # a stray closing bracket opens nothing
        "- ** src/n.py,\n  src/o.py\n"  # a literal '**' is blanked in place too
    )
    found = section(body)
    assert [(t.text, t.line, t.form) for t in found.taken] == [
        ("src/a.py", 9, "bare word"),
        ("src/b.py", 10, "bare word"),
        ("src/c.py", 11, "bare word"),
        ("src/d.py", 12, "bare word"),
        ("src/e.py", 13, "bare word"),
        ("src/f.py", 14, "bare word"),
        ("src/i.py", 15, "bare word"),
        ("src/j.py", 16, "bare word"),
        ("src/k.py", 17, "bare word"),
        ("src/m.py", 18, "bare word"),
        ("src/n.py", 19, "bare word"),
        ("src/o.py", 20, "bare word"),
    ]


def test_an_item_ending_with_a_colon_is_a_label_and_names_no_path() -> None:
    # the paths are in the list under it; what the label mentions is not in scope
    body = (
        "- docs/a.md, plus:\n  - `src/b.py`\n"
        "- docs/c.md, plus\uff1a\n  - `src/d.py`\n"
        "- Core\uff1asrc/e.py\n"
        "- Core: src/f.py\n"
        "- Core:\tsrc/g.py\n"
    )
    found = section(body)
    assert [(t.text, t.line) for t in found.taken] == [
        ("src/b.py", 10),
        ("src/d.py", 12),
        ("src/e.py", 13),
        ("src/f.py", 14),
        ("src/g.py", 15),
    ]
    assert found.skipped == () and found.refusals == ()


def test_each_line_of_a_long_item_keeps_its_own_line() -> None:
    found = section("- a.c,\n  b.c,\n  c.c,\n  d.c,\n  e.c,\n  f.c\n")
    assert [(t.text, t.line) for t in found.taken] == [
        ("a.c", 9), ("b.c", 10), ("c.c", 11), ("d.c", 12), ("e.c", 13), ("f.c", 14),
    ]  # fmt: skip


def test_a_denied_bare_path_ending_a_sentence_denies_the_path_a_reader_sees() -> None:
    # 'src/keys.py.' reads as src/keys.py with a full stop: that path is denied, and the
    # literal spelling too (narrowing); a '..' is still a problem, never resolved
    body = (
        "- `src/**`\n\n### Do not touch\n\n"
        "- src/keys.py.\n- src/b.py:.\n- src/c.py, src/d.py.\n- never src/e.py.\n"
    )
    found = section(body)
    assert found.allowed == ("src/**",)
    assert found.denied == (
        "src/keys.py.", "src/keys.py", "src/b.py", "src/c.py", "src/d.py.", "src/d.py",
        "src/e.py",
    )  # fmt: skip
    assert found.problems == () and found.refusals == ()
    # outside a "not to touch" the word is taken as written (never wider)
    assert section("- src/a.py.\n").allowed == ("src/a.py.",)


def test_a_table_without_a_body_reads_its_header_spans_and_their_deny() -> None:
    found = section("| `src/a.py` | `src/b.py` |\n|---|---|\n")
    assert [(t.text, t.line, t.denied) for t in found.taken] == [
        ("src/a.py", 9, False),
        ("src/b.py", 9, False),
    ]
    # a header cell that says "not to touch" denies what it names, never allows it
    found = section("- `src/**`\n\n| `src/keys.py` (do not touch) |\n|---|\n")
    assert found.allowed == ("src/**",) and found.denied == ("src/keys.py",)


# -- the line readers the LoopSpec and the lint share -----------------------------------


@pytest.mark.parametrize(
    ("lines", "outside"),
    [
        (["a", "```py", "x", "```", "b"], [True, False, False, False, True]),
        # a backtick line inside a tilde fence is text; the tilde line closes it
        (["~~~", "```", "~~~", "c"], [False, False, False, True]),
        # a line with text after the backticks does not close; a longer, indented one does
        (["```", "``` x", "  ````", "d"], [False, False, False, True]),
        (["    ```", "e"], [True, True]),  # four spaces: indented code, no fence
        (["   ```", "f", "```", "g"], [False, False, False, True]),
        # two backticks never close a fence of three
        (["```", "``", "x", "```", "y"], [False, False, False, False, True]),
    ],
)
def test_outside_fences_marks_the_lines_of_fenced_blocks(lines, outside) -> None:
    assert fs.outside_fences(lines) == outside


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("## Files", (2, "Files")),
        ("##Files", None),
        ("####### x", None),
        ("###### six", (6, "six")),
        ("#", (1, "")),
        ("### ###", (3, "")),
        ("########", (6, "")),
        ("## a ##", (2, "a")),
        ("##\tb", (2, "b")),
        ("## a #b", (2, "a #b")),
        ("# a  ", (1, "a")),
        ("text", None),
        ("  ## a", None),
        ("#\u3000a", None),
    ],
)
def test_heading_reads_an_atx_heading_at_column_zero(line: str, parsed) -> None:
    assert fs.heading(line) == parsed


def test_section_spans_end_at_the_next_level_one_or_two_heading_outside_fences() -> None:
    lines = [
        "# T", "## Files", "x", "### sub", "y", "## Next", "z", "## Files (draft)", "w",
        "```", "## Files", "```", "# End", "## Files", "v",
    ]  # fmt: skip
    assert fs.section_spans(lines, fs.outside_fences(lines), "Files") == [
        (1, 5),
        (7, 12),
        (13, 15),
    ]


# -- headings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "annotation"),
    [
        (FILES, ""),
        (f"{FILES}\uff08S1 \u78ba\u5b9a\uff09", "S1 \u78ba\u5b9a"),
        (f"{FILES} (draft)", "draft"),
        (f"{FILES}\u3000\uff08plan\uff09", "plan"),
        (f"{FILES} [v2]", "v2"),
    ],
)
def test_annotated_headings_are_the_section(text: str, annotation: str) -> None:
    assert heading_annotation(text, FILES) == annotation
    found = section("- `src/a.py`\n", f"## {text}")
    assert found.found and found.annotation == annotation
    assert found.allowed == ("src/a.py",)


def test_an_empty_parenthetical_is_an_empty_annotation() -> None:
    assert heading_annotation(f"{FILES} ()", FILES) == ""
    assert heading_annotation(f"{FILES}\uff08\uff09", FILES) == ""
    found = section("- `src/a.py`\n", f"## {FILES} ()")
    assert found.found and found.allowed == ("src/a.py",)


def test_a_heading_of_the_same_length_with_another_name_is_not_the_section() -> None:
    other = FILES[:-1] + "x"  # 'Files / Components to Touc' + 'x'
    assert heading_annotation(f"{other} (draft)", FILES) is None
    found = section("- `src/a.py`\n", f"## {other} (draft)")
    assert not found.found and found.allowed == ()


@pytest.mark.parametrize(
    "text",
    [
        f"{FILES} and more",
        f"{FILES} (a)(b)",
        f"{FILES} (a) tail",
        f"{FILES} (a",
        f"{FILES} (a (b))",
        f"{FILES}s",
        "Files to Touch",
        "Files",
        f"x {FILES}",
        f"{FILES} ()".replace("()", "(\uff09"),
    ],
)
def test_other_headings_are_not_the_section(text: str) -> None:
    assert heading_annotation(text, FILES) is None
    found = section("- `src/a.py`\n", f"## {text}")
    assert not found.found and found.allowed == ()
    assert derive_scope(plan("- `src/a.py`\n", f"## {text}").encode()).defined is False


def test_a_level3_heading_is_not_the_section() -> None:
    assert not section("- `src/a.py`\n", f"### {FILES}").found


def test_two_headings_annotated_or_not_are_ambiguous() -> None:
    text = plan("- `a/b.py`\n") + f"\n## {FILES} (again)\n\n- `c/d.py`\n"
    found = read_files_section(text)
    assert len(found.heading_lines) == 2 and not found.found
    scope = derive_scope(text.encode())
    assert not scope.defined and "LOOPSPEC_SECTION_AMBIGUOUS" in scope.problem_text


# -- deny sub-sections, rows and items ------------------------------------------------------


@pytest.mark.parametrize(
    "title",
    [
        "\u89e6\u3089\u306a\u3044\uff08forbidden_files\uff09",
        "\u89e6\u3089\u306a\u3044",
        "Forbidden",
        "Do not touch",
        "Read-only (reference)",
        "\u53c2\u7167\u306e\u307f\uff08\u66f8\u304d\u63db\u3048\u306a\u3044\uff09",
        "Out of scope",
    ],
)
def test_a_deny_subsection_contributes_denied_paths_only(title: str) -> None:
    body = (
        "### New\n\n- `docs/a.md`\n\n"
        f"### {title}\n\n- `bin/**`, `.github/workflows/**`\n- CLAUDE.md, AGENTS.md\n"
        "- `.claude/agents/`\n"
    )
    found = section(body)
    assert found.allowed == ("docs/a.md",)
    assert found.denied == (
        "bin/**",
        ".github/workflows/**",
        "CLAUDE.md",
        "AGENTS.md",
        ".claude/agents/**",
    )
    scope = derive_scope(plan(body).encode())
    for path in ("bin/x", ".github/workflows/ci.yml", "CLAUDE.md", ".claude/agents/a.md"):
        assert not scope.allows(path)
    assert scope.allows("docs/a.md")


def test_the_deny_subsection_ends_at_a_heading_of_its_level_and_spans_deeper_ones() -> None:
    body = (
        "### Do not touch\n\n- `a/x.md`\n\n#### Updated later\n\n- `b/y.md`\n\n"
        "### Updated\n\n- `c/z.md`\n"
    )
    found = section(body)
    assert found.denied == ("a/x.md", "b/y.md")
    assert found.allowed == ("c/z.md",)


def test_a_table_row_that_says_not_to_edit_is_denied() -> None:
    body = (
        "| kind | path | change |\n|---|---|---|\n"
        "| change | `bin/plangate` | add `--fix/--dry-run/--yes` |\n"
        "| \uff08\u7de8\u96c6\u4e0d\u8981\uff09 | `tests/run-tests.sh` | "
        "**\u672c\u4f53\u7de8\u96c6\u3057\u306a\u3044** |\n"
    )
    found = section(body)
    assert found.allowed == ("bin/plangate",)
    assert found.denied == ("tests/run-tests.sh",)
    assert ("--fix/--dry-run/--yes", 11, "an option, not a path") in [
        tuple(s) for s in found.skipped
    ]


def test_a_list_item_that_says_not_to_touch_denies_all_its_lines() -> None:
    body = (
        "- `docs/working/TASK-0077/`\n"
        "- \u53c2\u7167\u306e\u307f\uff08\u5909\u66f4\u3057\u306a\u3044\uff09: "
        "`.claude/rules/a.md` /\n  `.claude/rules/b.md`\uff08gate\uff09/ `docs/working/TASK-0071/`\n"
    )
    found = section(body)
    assert found.allowed == ("docs/working/TASK-0077/**",)
    assert found.denied == (".claude/rules/a.md", ".claude/rules/b.md", "docs/working/TASK-0071/**")


def test_items_nested_under_a_deny_item_are_denied() -> None:
    body = "- Do not touch:\n  - `a/b.md`\n    - `a/c.md`\n- `d/e.md`\n"
    found = section(body)
    assert found.denied == ("a/b.md", "a/c.md")
    assert found.allowed == ("d/e.md",)


def test_a_label_paragraph_that_says_not_to_touch_denies_the_list_after_it() -> None:
    body = (
        "- `src/a.py`\n\n**Do not touch:**\n\n- `src/b.py`\n- `src/c.py`\n\n### New\n\n- `x/y.py`\n"
    )
    found = section(body)
    assert found.allowed == ("src/a.py", "x/y.py")
    assert found.denied == ("src/b.py", "src/c.py")


def test_a_paragraph_that_says_not_to_touch_denies_what_follows_until_the_next_heading() -> None:
    body = (
        "- `src/a.py`\n\nThe files below must not be touched\n\n- `src/b.py`\n\n"
        "| path |\n|---|\n| `src/t.py` |\n\n### New\n\n- `src/c.py`\n"
    )
    found = section(body)
    assert found.allowed == ("src/a.py", "src/c.py")
    assert found.denied == ("src/b.py", "src/t.py")


def test_a_paragraph_after_a_deny_paragraph_fails_the_derivation() -> None:
    # which lists does the deny cover now? A reader may take either view: refused
    body = "The files below must not be touched\n\n- `src/b.py`\n\nThese are new.\n\n- `src/c.py`\n"
    found = section(body)
    assert found.refusals and found.refusals[0].line == 13
    assert not derive_scope(plan("- `src/a.py`\n\n" + body).encode()).defined


def test_a_paragraph_inside_a_list_item_that_says_not_to_touch_denies_its_children() -> None:
    body = "- group one\n\n  read-only, kept as is\n\n  - `a/b.md`\n- `c/d.md`\n"
    found = section(body)
    assert found.denied == ("a/b.md",)
    assert found.allowed == ("c/d.md",)


def test_a_table_whose_header_says_not_to_touch_denies_every_row() -> None:
    body = "| do not touch | why |\n|---|---|\n| `bin/x.sh` | owned elsewhere |\n"
    found = section(body + "\n- `src/a.py`\n")
    assert found.denied == ("bin/x.sh",) and found.allowed == ("src/a.py",)


def test_a_files_heading_annotated_not_to_touch_allows_nothing() -> None:
    found = section("- `src/a.py`\n", f"## {FILES} (read-only)")
    assert found.found and found.allowed == () and found.denied == ("src/a.py",)
    assert not derive_scope(plan("- `src/a.py`\n", f"## {FILES} (read-only)").encode()).defined


@pytest.mark.parametrize("title", ["DO  NOT TOUCH", "Don\u2019t edit", "read\u2010only"])
def test_a_deny_heading_is_read_as_a_reader_sees_it(title: str) -> None:
    found = section(f"- `src/a.py`\n\n### {title}\n\n- `src/b.py`\n")
    assert found.denied == ("src/b.py",) and found.allowed == ("src/a.py",)


@pytest.mark.parametrize(
    "title",
    [
        "do no\u200bt touch",
        "\uff24\uff4f not touch",
        "do n\u043et touch",
        "\u30b9\u30b3\u30fc\u30d5\u309a\u5916",
    ],
)
def test_a_heading_with_a_hidden_or_look_alike_character_fails_the_derivation(title: str) -> None:
    found = section(f"- `src/a.py`\n\n### {title}\n\n- `src/b.py`\n")
    assert [r.code for r in found.refusals] == [fs.FILES_HIDDEN_TEXT]
    assert not derive_scope(plan(f"- `src/a.py`\n\n### {title}\n\n- `src/b.py`\n").encode()).defined


def test_a_denied_path_wins_over_an_allowed_pattern_in_every_case_spelling() -> None:
    body = "- `src/**`\n\n### Forbidden\n\n- `src/secret/`\n- `src/keys.py`\n"
    scope = derive_scope(plan(body).encode())
    assert scope.allows("src/app.py")
    for path in (
        "src/secret/x.py",
        "src/SECRET/x.py",
        "src/keys.py",
        "src/Keys.py",
        "src/keys.py/inner",
    ):
        assert not scope.allows(path), path
        assert scope.denies(path) is not None


def test_a_plan_that_only_denies_has_no_scope() -> None:
    scope = derive_scope(plan("### Forbidden\n\n- `bin/**`\n").encode())
    assert not scope.defined and not scope.allows("bin/x")


# -- code spans that are not paths ----------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "why"),
    [
        ("--fix/--dry-run/--yes", "an option"),
        ("-v", "an option"),
        ("os.replace", "an identifier"),
        ("json.load", "an identifier"),
        ("cmd_doctor", "a word"),
        ("doctor --fix", "contains a space"),
        ("https://example.com/x.md", "a URL"),
        ("", "empty"),
    ],
)
def test_non_path_spans_are_skipped_with_a_reason(span: str, why: str) -> None:
    assert (span_skip_reason(span) or "").startswith(why)
    found = section(f"- `src/a.py` and `{span}`\n" if span else "- `src/a.py`\n")
    assert found.allowed == ("src/a.py",)
    if span:
        assert [s.text for s in found.skipped] == [span]


@pytest.mark.parametrize(
    "span", ["README.md", "src/a", "a/*.py", ".gitkeep", "Makefile", "docs/x.yaml", "a\\b"]
)
def test_path_spans_are_paths(span: str) -> None:
    assert span_skip_reason(span) is None


def test_a_path_in_a_description_column_is_reported_not_taken() -> None:
    body = (
        "| path | change |\n|------|------|\n"
        "| `README.md` | link `docs/orchestrator-mode.md` from the table |\n"
        "| `docs/index.md` | `Edit\\|Write` only |\n"
    )
    found = section(body)
    assert found.allowed == ("README.md", "docs/index.md")
    skipped = {s.text: s.why for s in found.skipped}
    assert skipped["docs/orchestrator-mode.md"].startswith("a path in a column")
    assert not found.problems  # the backslash span is in a description column


def test_a_table_without_a_path_column_contributes_nothing() -> None:
    body = "| what | how |\n|---|---|\n| the 11 scripts above | replace paths |\n"
    assert section(body).allowed == ()


# -- bare paths, directories, braces ------------------------------------------------------


def test_bare_paths_as_whole_list_entries_are_taken() -> None:
    body = (
        "- scripts/keep-rate.py / scripts/context-engine.py\n"
        "- schemas/x.schema.json\uff08\u65b0\u898f\uff09\n"
        "- bin/plangate(cmd_metrics) /\n  tests/\uff08TC\uff09\n"
        "- CLAUDE.md, AGENTS.md\n"
    )
    found = section(body)
    assert found.allowed == (
        "scripts/keep-rate.py",
        "scripts/context-engine.py",
        "schemas/x.schema.json",
        "bin/plangate",
        "tests/**",
        "CLAUDE.md",
        "AGENTS.md",
    )


def test_a_bare_path_inside_a_phrase_is_skipped() -> None:
    body = "- we read config/x.yaml for its defaults\n- `src/a.py`\n"
    found = section(body)
    assert found.allowed == ("src/a.py",)
    assert [(s.text, s.why.startswith("a bare path")) for s in found.skipped] == [
        ("config/x.yaml", True)
    ]


def test_bare_paths_in_paragraphs_are_not_taken() -> None:
    found = section("We change src/a.py and src/b.py.\n\n- `src/c.py`\n")
    assert found.allowed == ("src/c.py",)


@pytest.mark.parametrize(
    "word", ["#ab/#cd/TASK-0071", "-x/y", "\u65e5\u672c/x.md", "a", "v1.2", "**"]
)
def test_words_that_are_not_written_like_paths(word: str) -> None:
    assert not bare_path_like(word)


def test_a_directory_written_with_a_trailing_slash_is_everything_under_it() -> None:
    found = section("- `scripts/`\n- `.github/workflows/`\n")
    assert found.allowed == ("scripts/**", ".github/workflows/**")
    scope = derive_scope(plan("- `scripts/`\n").encode())
    assert scope.allows("scripts/a/b.sh") and not scope.allows("scripts")


def test_brace_alternatives_are_the_paths_they_spell() -> None:
    body = "- \u5909\u66f4\u3057\u306a\u3044: scripts/hooks/check-{a,b-c,plan}.sh\n- `t/{x,y}/*`\n"
    found = section(body)
    assert found.denied == (
        "scripts/hooks/check-a.sh",
        "scripts/hooks/check-b-c.sh",
        "scripts/hooks/check-plan.sh",
    )
    assert found.allowed == ("t/x/*", "t/y/*")


def test_too_many_brace_alternatives_fail_the_derivation() -> None:
    group = "{" + ",".join(f"a{i}" for i in range(9)) + "}"
    body = f"- `x/{group}/{group}.md`\n"
    assert MAX_BRACE_EXPANSION < 9 * 9
    found = section(body)
    assert found.problems and found.problems[0].code == "PATH_BRACES"
    assert not derive_scope(plan(body).encode()).defined


def test_sixty_four_brace_alternatives_are_read_and_sixty_five_are_not() -> None:
    eight = "{" + ",".join(f"a{i}" for i in range(8)) + "}"
    found = section(f"- `x/{eight}/{eight}.md`\n")
    assert len(found.allowed) == 64 and found.problems == ()
    assert found.allowed[-1] == "x/a7/a7.md"
    sixty_five = "{" + ",".join(f"a{i}" for i in range(65)) + "}"
    found = section(f"- `x/{sixty_five}.md`\n")
    assert [p.code for p in found.problems] == ["PATH_BRACES"] and found.allowed == ()


@pytest.mark.parametrize("bad", ["./src/a.py", "src//a.py", "/abs/a.py", "a/../b.py", "x/{a"])
def test_a_non_canonical_denied_path_fails_the_derivation(bad: str) -> None:
    body = f"- `src/a.py`\n\n### Forbidden\n\n- `{bad}`\n"
    scope = derive_scope(plan(body).encode())
    assert not scope.defined
    assert "LOOPSPEC_PATH_NOT_CANONICAL" in scope.problem_text and repr(bad) in scope.problem_text


def test_a_suggestion_is_given_for_an_obviously_fixable_path() -> None:
    found = section("- `./src//a.py`\n")
    assert found.problems[0].suggestion == "src/a.py"


def test_paths_inside_fenced_blocks_are_ignored() -> None:
    found = section("```\n- `src/fenced.py`\n```\n- `src/a.py`\n")
    assert found.allowed == ("src/a.py",)


def test_paths_outside_the_section_are_ignored() -> None:
    text = plan("- `src/a.py`\n").replace("x\n", "- `src/goal.py`\n| `src/t.py` |\n")
    assert read_files_section(text).allowed == ("src/a.py",)


def test_an_underlined_heading_ends_the_section_and_a_deny_under_it_still_denies() -> None:
    # A renderer shows 'Notes' as a level-2 heading: paths after it are not in the section;
    # a 'Do not touch' heading anywhere in the plan still denies its paths.
    body = (
        "- `src/**`\n\nNotes `x/y.md`\n-----\n\n- `evil/**`\n\n"
        "### Do not touch\n\n- `src/keys.py`\n"
    )
    found = section(body)
    assert found.allowed == ("src/**",)
    assert found.denied == ("src/keys.py",)


def test_an_underlined_heading_that_says_not_to_touch_denies_what_follows() -> None:
    found = section("- `src/**`\n\nDo not touch\n============\n\n- `src/keys.py`\n")
    assert found.allowed == ("src/**",) and found.denied == ("src/keys.py",)


def test_a_rule_after_a_blank_line_or_a_list_item_is_no_heading() -> None:
    found = section("- `src/a.py`\n---\n\ntext\n\n---\n\n- `src/b.py`\n")
    assert found.allowed == ("src/a.py", "src/b.py")


def test_paths_inside_html_comments_are_never_in_scope() -> None:
    body = "- `src/a.py` <!-- `evil/**` -->\n<!--\n- `evil2/**`\n-->\n- `src/b.py`\n"
    found = section(body)
    assert found.allowed == ("src/a.py", "src/b.py")
    assert {(s.text, s.why) for s in found.skipped} == {
        ("evil/**", "inside an HTML comment: not shown"),
        ("evil2/**", "inside an HTML comment: not shown"),
    }


def test_an_unclosed_html_comment_hides_the_rest_of_the_section() -> None:
    found = section("- `src/a.py`\n<!-- draft\n- `evil/**`\n")
    assert found.allowed == ("src/a.py",)


@pytest.mark.parametrize(
    "said",
    [
        "do **not** touch",
        "do&nbsp;not touch",
        "Leave as is",
        "\u7de8\u96c6\u4e0d\u53ef",
        "must not be edited",
        "_read-only_",
    ],
)
def test_deny_statements_in_emphasis_entities_and_other_words(said: str) -> None:
    found = section(f"- `src/a.py`\n- `src/b.py` ({said})\n")
    assert found.allowed == ("src/a.py",) and found.denied == ("src/b.py",)


def test_a_path_name_is_not_a_statement() -> None:
    found = section("- `src/forbidden_words.py`\n- `docs/read-only-mode.md`\n")
    assert found.allowed == ("src/forbidden_words.py", "docs/read-only-mode.md")
    # a file name without a directory is a name too
    found = section("- `forbidden.md`\n- `untouched.txt`\n")
    assert found.allowed == ("forbidden.md", "untouched.txt") and found.denied == ()


# -- entry separators ------------------------------------------------------------------

@pytest.mark.parametrize(
    "text",
    [
        "", "a", "a, b", "a,b", "a/b", "a / b", "/ a", "a /", "/", " / ", "a + b", "a+b",
        "a\t/\tb", "a\u3000\uff0f\u3000b", "a \uff0b b", "a\u3001b\uff0cc;d\uff1be",
        "src/{a,b}.py, c", "{a,b;c}", "}a,b{", "{{a,b},c},d", "a / / b", "a //b", "a\n/\nb",
        "a /b", "a/ b", ",,", "x{,}y, z", "a \u00a0/ b",
    ],
)
def test_entry_separators_agree_with_their_pattern(text: str) -> None:
    assert fs._entry_spans(text) == entry_spans_by_pattern(text)


# -- linear work on untrusted plans ------------------------------------------------------------


def _work(text: str) -> int:
    """Lines of the section reader and the parser executed reading ``text`` (a deterministic count).

    Regular expressions and string methods run in C and are linear here; every loop of
    the reader is Python, so superlinear work shows up as superlinear line counts.
    """
    import markdown_it

    import plangate.plan.files_section as module

    count = [0]
    source = module.__file__
    parser = str(Path(markdown_it.__file__).parent)  # the CommonMark parser's work counts too

    def tracer(frame, event, _arg):
        name = frame.f_code.co_filename
        if name != source and not name.startswith(parser):
            return None
        if event == "line":
            count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        read_files_section(text)
    finally:
        sys.settrace(None)
    return count[0]


ADVERSARIAL = {
    # one list item continued over many lines, every line holding words and a bare path
    "long item": lambda n: "- start\n" + "  word x/y.md more z\n" * n,
    # a wide table: the path column is found in one pass over the cells
    "wide table": lambda n: (
        "| " + " | ".join(["h"] * n) + " |\n|" + "---|" * n + "\n"
        + ("| `a/b.md` " + "| x " * (n - 1) + "|\n") * 4
    ),
    # a long table: each row is read once
    "long table": lambda n: "| path | note |\n|---|---|\n" + "| `a/b.md` | x |\n" * n,
    # brackets, backticks and colons on one long line
    "long line": lambda n: "- " + "(`a" * n + ": " * n + "{" * n + "\n",
    # non-canonical paths whose suggestion strips './' and '//' runs
    "dotted path": lambda n: "- `" + "./" * n + "a//" * n + "b.md`\n",
    # a deep list: every item nested under the one before
    "deep list": lambda n: "".join(" " * (i % 64) + "- `a/b.md` x\n" for i in range(n)),
    # HTML comments opened and closed many times on a line, and one left open
    "comments": lambda n: "- `a/b.md` <!-- `x/y.md` --> " * n + "<!--\n" + "- `c.md`\n" * n,
    # many sub-sections, half of them denying
    "headings": lambda n: "### Forbidden\n- `a/b.md`\n### New\n- `c/d.md`\n" * n,
    # unmatched backtick runs and emphasis delimiters: the parser's known hard cases
    "delimiters": lambda n: "- `a/b.md` " + "` `` *a_ [x](" * n + "\n",
    # a fence opened in the section and never closed
    "open fence": lambda n: "- `a/b.md`\n\n````\n" + "```\n- `x/y.md`\n" * n,
}


# The smaller size of each shape (the larger is eight times it), chosen so that each
# shape costs the mutation runner well under a second. Short rows under a wide header
# are no shape here: the parser itself pads each row to the header's width (up to its
# own cap of 65536 padded cells per table), so their cost is the parser's, not the reader's.
SMALL = {"comments": 50, "wide table": 50}


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_reading_the_section_is_linear_in_the_plan(shape: str) -> None:
    # Eight times the input costs about eight times the work; a quadratic reading
    # would cost about 64 times. Counted work, never a clock.
    n = SMALL.get(shape, 100)
    small = _work(plan(ADVERSARIAL[shape](n)))
    large = _work(plan(ADVERSARIAL[shape](8 * n)))
    assert large <= 10 * small, f"{shape}: x8 input cost x{large / small:.1f}"


FRONT_MATTER_CHANGES_THE_SECTION = {
    "the only Files section is inside it": (
        f"---\n## {FILES}\n\n- `src/evil.py`\n---\n\n# Plan\n\nbody\n"
    ),
    "its closing line makes the list a Files section": (
        f"---\n# Plan\n\n## {FILES}\n\n- `src/a.py`\n---\n\n- `src/evil.py`\n"
    ),
    "a heading inside it ends the section": (
        f"---\n# Plan\n\n## {FILES}\n\n- `src/a.py`\n...\n\n- `src/b.py`\n"
    ),
}


@pytest.mark.parametrize("text", FRONT_MATTER_CHANGES_THE_SECTION.values(),
                         ids=list(FRONT_MATTER_CHANGES_THE_SECTION))
def test_front_matter_that_changes_the_section_is_refused(text: str) -> None:
    found = read_files_section(text)
    assert [r.code for r in found.refusals][:1] == ["LOOPSPEC_FILES_UNRECOGNISED"], found
    assert "front matter" in found.refusals[0].message
    scope = derive_scope(text.encode())
    assert not scope.defined
    assert "front matter" in scope.problem_text


@pytest.mark.parametrize(
    "top",
    [
        "---\ntitle: A plan\n# a YAML comment\n---\n",
        "---\nfiles: src/a.py\n...\n",
        "---\n\n",  # a rule, never closed: no front matter
        "----\nx\n----\n",  # not the front matter line
    ],
)
def test_front_matter_that_changes_nothing_is_read_as_before(top: str) -> None:
    text = top + f"\n# Plan\n\n## {FILES}\n\n- `src/a.py`\n"
    found = read_files_section(text)
    assert found.refusals == (), found
    assert found.allowed == ("src/a.py",)


def test_front_matter_end_names_the_closing_line() -> None:
    assert fs.front_matter_end("---\na: 1\n---\nrest\n") == 3
    assert fs.front_matter_end("---\r\na: 1\r\n...\r\n") == 3
    assert fs.front_matter_end("--- \nx\n") is None
    assert fs.front_matter_end("---x\n---\n") is None
    assert fs.front_matter_end("# Plan\n---\n---\n") is None


@pytest.mark.parametrize(
    "body",
    [
        "- src/a.py\\\n  src/b.py",  # a backslash hard break between two bare paths
        "- src/a.py  \n  src/b.py",  # a two-space hard break
        "- src/a.py\\`src/b.py",  # an escaped backtick is shown, and separates
        "- src/a.py`` x`y ``src/b.py",  # a code span holding a backtick separates too
    ],
)
def test_what_separates_two_bare_paths_is_never_dropped(body: str) -> None:
    # Either reading takes neither bare path (prose around them); joining them into one
    # 'src/a.pysrc/b.py' would take a path the plan never wrote.
    found = section(f"{body}\n")
    assert found.allowed == ()
    assert all("src/a.pysrc" not in t.text for t in found.taken)


def test_a_line_break_tag_separates_two_paths() -> None:
    assert section("- src/a.py<br>src/b.py\n").allowed == ("src/a.py", "src/b.py")


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("- `src/evil.py` <span>x</span> <b>y</b>", "<span>"),
        ("- `src/evil.py` ![one](a.png) ![two](b.png)", "one"),
        ("- ~~`src/evil.py`~~", "~~`src/evil.py`~~"),
        ("- `src/evil.py` \u200b", "`src/evil.py` \u200b"),
    ],
)
def test_a_refused_paragraph_lends_no_path_and_names_its_first_offender(
    body: str, text: str
) -> None:
    found = section(f"{body}\n- `src/a.py`\n")
    assert "src/evil.py" not in found.allowed
    assert "src/a.py" in found.allowed
    assert found.refusals[0].text == text, found.refusals


def test_the_front_matter_refusal_names_the_first_line() -> None:
    found = read_files_section(FRONT_MATTER_CHANGES_THE_SECTION["the only Files section is inside it"])
    assert (found.refusals[0].text, found.refusals[0].line) == ("---", 1)
    assert fs.front_matter_end("---") is None


@pytest.mark.parametrize("block", ["<details>", "<div hidden>", "<p align=center>"])
def test_an_html_block_above_the_files_heading_is_refused(block: str) -> None:
    text = f"# P\n\n{block}\n\n## {FILES}\n\n- `src/a.py`\n\n</details>\n"
    found = read_files_section(text)
    assert found.refusals[0].code == "LOOPSPEC_FILES_UNRECOGNISED", found
    assert "above the Files heading" in found.refusals[0].message
    assert not derive_scope(text.encode()).defined


def test_a_comment_above_the_files_heading_hides_nothing() -> None:
    text = f"# P\n\n<!-- a note -->\n\n## {FILES}\n\n- `src/a.py`\n"
    assert read_files_section(text).refusals == ()
    assert read_files_section(text).allowed == ("src/a.py",)
