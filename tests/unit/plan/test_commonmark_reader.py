"""The Files section as a CommonMark renderer shows it: the shapes that once widened the scope.

Each plan below allows ``src/**`` and, in the way a reviewer reading the rendered plan
understands it, keeps ``src/secret.py`` out (or shows no such path at all). The reading
must either deny ``src/secret.py`` or fail the derivation with a refusal and a lint edit;
it may never allow it.
"""

from __future__ import annotations

import pytest

from plangate.plan.files_section import (
    FILES_HIDDEN_TEXT,
    FILES_UNRECOGNISED,
    hidden_character,
    read_files_section,
    says_something_unrecognised,
)
from plangate.plan.lint import lint_plan
from plangate.plan.scope import derive_scope

FILES = "## Files / Components to Touch"
SECRET = "src/secret.py"


def plan(body: str) -> str:
    return f"# P\n\n## Goal\n\nx\n\n{FILES}\n\n- `src/**`\n\n{body}\n## Testing Strategy\n\nt\n"


DENIED = {
    "link-deny": "### Changed\n\n- [src/secret.py](src/secret.py) (do not touch)\n",
    "bare-path-in-deny-phrase": "- Do not touch src/secret.py\n",
    "do-not-alter": "### Do not alter\n\n- `src/secret.py`\n",
    "must-remain-unchanged": "### Must remain unchanged\n\n- `src/secret.py`\n",
    "off-limits": "### Off-limits\n\n- `src/secret.py`\n",
    "chinese-do-not-modify": "### \u4e0d\u8981\u4fee\u6539\n\n- `src/secret.py`\n",
    "underlined-deny-heading": "Do not touch\n============\n\n- `src/secret.py`\n",
}
"""Shapes the reader understands as a deny: the path is denied."""

REFUSED = {
    "html-div-hidden": "<div hidden>\n- `src/secret.py`\n</div>\n\n### Do not touch\n\n- `x/y.md`\n",
    "html-div-hidden-markdown-inside": "<div hidden>\n\n### Do not touch\n\n</div>\n\n"
    "- `src/secret.py`\n",
    "brace-empty-alternative": "- `src/app/{greet.py,}`\n",
    "deny-nested-under-a-path": "- `src/secret.py`\n  - do not touch\n",
    "explanation-after-deny-label": "Do not touch:\n\nThese belong to the platform team.\n\n"
    "- `src/secret.py`\n",
    "emphasis-in-html-heading": "### Do not <em>touch</em>\n\n- `src/secret.py`\n",
    "right-to-left-override-heading": "### \u202ehcuot ton oD\n\n- `src/secret.py`\n",
    "cyrillic-o-in-deny-path": "### Do not touch\n\n- `src/secr\u0435t.py`\n",
    "leave-these-files-alone": "Leave these files alone:\n\n- `src/secret.py`\n",
    "zero-width-space-in-deny-heading": "### Do no\u200bt touch\n\n- `src/secret.py`\n",
}
"""Shapes the reader cannot read without guessing: the derivation fails."""


@pytest.mark.parametrize("name", sorted(DENIED))
def test_a_deny_a_reviewer_reads_is_denied(name: str) -> None:
    scope = derive_scope(plan(DENIED[name]).encode())
    assert scope.defined, scope.problem_text
    assert scope.allows("src/app.py")
    assert not scope.allows(SECRET) and scope.denies(SECRET) is not None


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_shape_read_only_by_guessing_fails_the_derivation_with_a_lint_edit(name: str) -> None:
    data = plan(REFUSED[name]).encode()
    scope = derive_scope(data)
    assert not scope.defined and not scope.allows(SECRET)
    report = lint_plan("TASK-0001", data)
    assert report.verdict == "SCOPE_UNDERIVABLE" and report.edits


def test_a_fenced_example_with_a_shorter_fence_inside_is_never_a_path() -> None:
    # inside a ```` fence a ``` line is text: the example never becomes a path
    body = "````md\n```\n- `src/secret.py`\n```\n````\n"
    found = read_files_section(plan(body))
    assert found.allowed == ("src/**",) and not found.refusals
    assert any(s.why.startswith("inside a code block") for s in found.unread)
    scope = derive_scope(plan(body.replace("src/secret.py", "evil/x.py")).encode())
    assert scope.defined and not scope.allows("evil/x.py")


def test_an_indented_code_block_is_never_a_list_item() -> None:
    body = "### Changed\n\n    - `evil/x.py`\n"
    found = read_files_section(plan(body))
    assert found.allowed == ("src/**",)
    assert not derive_scope(plan(body).encode()).allows("evil/x.py")


def test_a_brace_with_an_empty_alternative_is_refused_naming_the_rule() -> None:
    scope = derive_scope(plan("- `src/app/{greet.py,}`\n").encode())
    assert "PATH_BRACES" in scope.problem_text and "empty alternative" in scope.problem_text


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (REFUSED["emphasis-in-html-heading"], FILES_UNRECOGNISED),
        (REFUSED["right-to-left-override-heading"], FILES_HIDDEN_TEXT),
        (REFUSED["cyrillic-o-in-deny-path"], FILES_HIDDEN_TEXT),
        (REFUSED["zero-width-space-in-deny-heading"], FILES_HIDDEN_TEXT),
        (REFUSED["leave-these-files-alone"], FILES_UNRECOGNISED),
        (REFUSED["html-div-hidden"], FILES_UNRECOGNISED),
    ],
)
def test_each_refusal_names_its_code_and_line(body: str, code: str) -> None:
    found = read_files_section(plan(body))
    assert found.refusals and found.refusals[0].code == code
    assert found.refusals[0].line > 0 and found.refusals[0].hint
    assert code in derive_scope(plan(body).encode()).problem_text


@pytest.mark.parametrize(
    "text",
    ["Leave these files alone", "Keep these", "\u4e0d\u8981\u52a8", "must not be moved around"],
)
def test_words_that_may_negate_without_a_known_phrase_are_flagged(text: str) -> None:
    assert says_something_unrecognised(text) is ("must not be" not in text)


@pytest.mark.parametrize(
    "text", ["src/app.py", "\u65e5\u672c\u8a9e\u306e\u8aac\u660e\uff08\u65b0\u898f\uff09", "\u26a0\ufe0f note"]
)
def test_plain_text_japanese_and_emoji_hold_no_hidden_character(text: str) -> None:
    assert hidden_character(text) is None


@pytest.mark.parametrize("text", ["a\u200bb", "\u202eab", "s\u0435cret", "\uff33ecret", "x\u00ady"])
def test_hidden_and_look_alike_characters_are_named(text: str) -> None:
    assert hidden_character(text) is not None


def test_a_deny_heading_elsewhere_in_the_plan_denies_and_never_allows() -> None:
    text = (
        "# P\n\n## Non-goals\n\n### Out of scope\n\n- `src/secret.py`\n\n"
        f"{FILES}\n\n- `src/**`\n\n## Notes\n\n- `evil/x.py`\n"
    )
    scope = derive_scope(text.encode())
    assert scope.denies(SECRET) is not None and not scope.allows("evil/x.py")


def test_prose_in_the_files_section_fails_with_a_hint_to_move_it() -> None:
    report = lint_plan("TASK-0001", plan("These files implement the feature.\n").encode())
    assert report.verdict == "SCOPE_UNDERIVABLE"
    assert "move explanations out of the Files section" in report.edits[0]


def test_the_lint_json_lists_refusals_and_unread_blocks() -> None:
    body = "```\n- `evil/x.py`\n```\n\n### Do not <em>touch</em>\n"
    out = lint_plan("TASK-0001", plan(body).encode()).to_json()
    assert out["refused"][0]["code"] == FILES_UNRECOGNISED
    assert out["not_read"][0]["why"].startswith("inside a code block")


def test_a_paragraph_whose_code_spans_are_no_paths_is_prose() -> None:
    found = read_files_section(plan("Run `make test` first.\n"))
    assert [r.code for r in found.refusals] == [FILES_UNRECOGNISED]
    assert not read_files_section(plan("We also touch `src/extra.py`.\n")).refusals
