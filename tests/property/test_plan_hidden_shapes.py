"""Property: text a renderer never shows as a list item, and unrecognised negations, never allow.

Generated plans allow ``src/**`` and then hold the path ``src/secret.py`` in one shape a
rendered plan shows as code, hides, or says to keep out in words the reader does not know,
wrapped in a random sub-heading. Whatever the combination, ``src/secret.py`` is never
allowed: it is denied or the derivation fails.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.plan.scope import derive_scope

FILES = "## Files / Components to Touch"
SECRET = "src/secret.py"
ITEM = f"- `{SECRET}`"

HIDING = st.sampled_from(
    [
        f"````md\n```\n{ITEM}\n```\n````\n",  # a shorter fence inside a longer one
        f"```\n{ITEM}\n",  # a fence never closed
        f"    {ITEM}\n",  # an indented code block
        f"<div hidden>\n{ITEM}\n</div>\n",  # an HTML block
        f"<!--\n{ITEM}\n-->\n",  # a comment
        f"<details>\n\n{ITEM}\n\n</details>\n",
        f"[x]: {SECRET}\n",  # a link reference definition
    ]
)
NEGATIONS = st.sampled_from(
    [
        "Do not alter",
        "Leave these files alone",
        "Must remain unchanged",
        "Off-limits",
        "\u4e0d\u8981\u4fee\u6539",
        "Never rewrite",
        "Keep as-is",
        "Frozen",
        "Excluded",
        "Do not <em>touch</em>",
        "\u202ehcuot ton oD",
        "Do no\u200bt touch",
        "\u5909\u66f4\u7981\u6b62",
    ]
)
SUBHEADINGS = st.sampled_from(["### Changed\n\n", "### Notes\n\n", "#### More\n\n"])
HEADINGS = st.one_of(st.just(""), SUBHEADINGS)


def _plan(body: str) -> bytes:
    return f"# P\n\n{FILES}\n\n- `src/**`\n\n{body}\n## Testing Strategy\n\nt\n".encode()


@settings(max_examples=150, deadline=None)
@given(heading=SUBHEADINGS, hiding=HIDING)
def test_code_html_and_comments_are_never_a_path(heading: str, hiding: str) -> None:
    # after a sub-heading (right after a list item, a 4-space indent is a nested item)
    body = heading + hiding.replace(SECRET, "evil/x.py")
    scope = derive_scope(_plan(body))
    assert not scope.allows("evil/x.py"), body


@settings(max_examples=150, deadline=None)
@given(heading=HEADINGS, negation=NEGATIONS, as_heading=st.booleans(), colon=st.booleans())
def test_a_negation_in_any_form_never_leaves_the_path_allowed(
    heading: str, negation: str, as_heading: bool, colon: bool
) -> None:
    said = f"### {negation}\n\n" if as_heading else f"{negation}{':' if colon else ''}\n\n"
    body = heading + said + ITEM + "\n"
    scope = derive_scope(_plan(body))
    assert not scope.allows(SECRET), body
