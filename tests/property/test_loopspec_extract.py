"""Property tests: section extraction and allowed-path extraction of plan.md."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.paths import is_canonical_path, validate_pattern
from plangate.plan.loopspec import (
    FILES_HEADING,
    LoopSpecError,
    extract_allowed_paths,
    extract_section,
)
from support.branches import Branches

# A span that starts with '-' is an option, not a path: segments start with a letter or digit.
SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8).map(
    lambda s: "p" + s)
PATH = st.lists(SEGMENT, min_size=2, max_size=4).map("/".join)
LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="`#~\r\n"),
    max_size=30,
)


def plan_with(files_lines: list[str], other: list[str]) -> str:
    return "\n".join(
        [
            "# Plan",
            "",
            "## Goal",
            "",
            *other,
            "",
            f"## {FILES_HEADING}",
            "",
            *files_lines,
            "",
            "## Testing Strategy",
            "",
            *other,
            "",
        ]
    )


@given(st.lists(PATH, min_size=1, max_size=8), st.lists(PATH, max_size=4))
def test_files_section_paths_in_order_deduplicated(paths: list[str], others: list[str]) -> None:
    plan = plan_with([f"- `{p}`" for p in paths], [f"see `{o}x/y`" for o in others])
    expected: list[str] = []
    for p in paths:
        if p not in expected:
            expected.append(p)
    assert extract_allowed_paths(plan) == expected


@given(st.lists(PATH, min_size=1, max_size=5), st.lists(PATH, min_size=1, max_size=5))
def test_paths_outside_the_files_section_never_leak(paths: list[str], others: list[str]) -> None:
    marked = [f"zz{o}" for o in others]
    plan = plan_with([f"- `{p}`" for p in paths], [f"`{m}`" for m in marked])
    result = extract_allowed_paths(plan)
    assert not set(marked) - set(paths) & set(result)


@given(PATH, st.sampled_from(["../", "./", "/", "a//", "a\\"]))
def test_non_canonical_candidates_always_fail(path: str, prefix: str) -> None:
    plan = plan_with([f"- `{prefix}{path}`"], [])
    with pytest.raises(LoopSpecError) as err:
        extract_allowed_paths(plan)
    assert err.value.code == "LOOPSPEC_PATH_NOT_CANONICAL"
    assert repr(f"{prefix}{path}") in err.value.message


# Files-section entries of every kind: canonical paths, globs, non-canonical spellings
# and free text, so that generated plans yield paths, patterns and named errors.
GOOD_ENTRY = st.one_of(
    PATH.map(lambda p: f"- `{p}`"),
    PATH.map(lambda p: f"- `{p}/**`"),
    PATH.map(lambda p: f"- `{p.replace('/', '/*', 1)}`"),
)
ENTRY = st.one_of(
    GOOD_ENTRY,
    st.tuples(st.sampled_from(["../", "./", "/", "a//"]), PATH).map(lambda t: f"- `{t[0]}{t[1]}`"),
    LINE,
)
PLAN_TEXT = st.builds(
    lambda files, other, tail: plan_with(files, other) + tail,
    st.one_of(st.lists(GOOD_ENTRY, min_size=1, max_size=6), st.lists(ENTRY, max_size=6)),
    st.lists(LINE, max_size=3),
    st.sampled_from(["", f"\n## {FILES_HEADING}\n\n- `pz/q`\n"]),  # a second section
)


# The documented codes of a Files section that cannot be read (docs/reason-codes.md).
FILES_SECTION_CODES = (
    None,
    "LOOPSPEC_PATH_NOT_CANONICAL",
    "LOOPSPEC_SECTION_AMBIGUOUS",
    "LOOPSPEC_FILES_UNRECOGNISED",
    "LOOPSPEC_FILES_HIDDEN_TEXT",
)


def test_arbitrary_text_yields_canonical_paths_or_a_named_error() -> None:
    seen = Branches()

    @settings(max_examples=200)
    @given(st.one_of(st.text(max_size=400), PLAN_TEXT))
    def check(text: str) -> None:
        seen.example()
        try:
            result = extract_allowed_paths(text)
        except LoopSpecError as exc:
            code: str | None = exc.code
            result = []
        else:
            code = None
        seen.reached("named error", code is not None)
        assert code in FILES_SECTION_CODES
        seen.reached("paths", bool(result))
        seen.reached("pattern", any("*" in item or "?" in item for item in result))
        for item in result:
            if "*" in item or "?" in item:
                validate_pattern(item)
            else:
                assert is_canonical_path(item)
        assert len(result) == len(set(result))

    check()
    for branch in ("named error", "paths", "pattern"):
        seen.assert_share(branch)


@given(st.lists(LINE, max_size=8), st.sampled_from(["Goal", "Files / Components to Touch"]))
def test_section_body_round_trips(body_lines: list[str], heading: str) -> None:
    body = "\n".join(body_lines)
    text = f"# T\n\nintro\n\n## {heading}\n{body}\n## Next\nafter\n"
    assert extract_section(text, heading) == body.strip()


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=12))
def test_only_the_exact_heading_matches(suffix: str) -> None:
    text = f"## Goal{suffix.rstrip() and suffix}\nbody\n"
    expected = "body" if not suffix.strip() else None
    assert extract_section(text, "Goal") == expected
