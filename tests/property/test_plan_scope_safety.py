"""Property tests of the two safety properties of the scope derivation, over generated plans.

1. Nothing outside the Files section is ever in scope, and every allowed pattern is a path
   the section names (as written, or ``dir/`` as ``dir/**``).
2. Nothing in a "not to touch" sub-section, row or item is ever allowed, even when an
   allowed pattern covers it.

Plans mix sub-sections (deny or not), tables with a path column and description columns,
lists with code spans, bare entries, annotations, nested items, directories and code spans
that are not paths.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.plan.files_section import read_files_section
from plangate.plan.scope import derive_scope
from support.branches import Branches

FILES = "## Files / Components to Touch"
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=6).map(
    lambda s: "w" + s
)
EXT = st.sampled_from(["md", "py", "json", "sh", "yaml"])
DENY_TITLES = st.sampled_from(
    [
        "\u89e6\u3089\u306a\u3044\uff08forbidden_files\uff09",
        "Forbidden",
        "Do not touch",
        "\u53c2\u7167\u306e\u307f\uff08\u66f8\u304d\u63db\u3048\u306a\u3044\uff09",
        "read-only",
    ]
)
ALLOW_TITLES = st.sampled_from(["\u65b0\u898f\u4f5c\u6210", "Updated", "New files", "\u66f4\u65b0"])
ANNOTATIONS = st.sampled_from(["", "\uff08\u65b0\u898f\uff09", " (additive)", "(S1)", ""])
NON_PATHS = st.sampled_from(
    [
        "--fix/--dry-run",
        "os.replace",
        "cmd_doctor",
        "doctor --fix",
        "-v",
        "json.load",
        "https://x.test/a.md",
    ]
)


@st.composite
def paths(draw: st.DrawFn, root: str) -> str:
    parts = draw(st.lists(WORD, min_size=0, max_size=2))
    name = f"{draw(WORD)}.{draw(EXT)}"
    if draw(st.booleans()) and parts:
        return "/".join([root, *parts]) + "/"  # a directory
    return "/".join([root, *parts, name])


@st.composite
def block(draw: st.DrawFn, root: str) -> tuple[str, list[str]]:
    """A list or a table naming paths under ``root``: (text, the paths as written)."""
    named = draw(st.lists(paths(root), min_size=1, max_size=4))
    kind = draw(st.sampled_from(["list", "bare", "table", "nested", "braces"]))
    if kind == "braces":  # one entry spelling several paths: `dir/{a,b}.ext`
        stems = draw(st.lists(WORD, min_size=1, max_size=3, unique=True))
        ext = draw(EXT)
        spelled = [f"{root}/b/{stem}.{ext}" for stem in stems]
        return f"- `{root}/b/{{{','.join(stems)}}}.{ext}`{draw(ANNOTATIONS)}\n", spelled
    noise = draw(st.lists(NON_PATHS, max_size=2))
    if kind == "table":
        rows = [f"| `{p}` | change {' '.join(f'`{n}`' for n in noise)} |" for p in named]
        return "| path | what |\n|---|---|\n" + "\n".join(rows) + "\n", named
    if kind == "bare":
        flat = [p for p in named if not p.endswith("/")] or named
        line = " / ".join(f"{p}{draw(ANNOTATIONS)}" for p in flat)
        return f"- {line}\n", flat
    if kind == "nested":
        head = f"- group {' '.join(f'`{n}`' for n in noise)}\n"
        return head + "".join(f"  - `{p}`{draw(ANNOTATIONS)}\n" for p in named), named
    items = [f"- `{p}`{draw(ANNOTATIONS)} {' '.join(f'`{n}`' for n in noise)}" for p in named]
    return "\n".join(items) + "\n", named


@st.composite
def plans(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """(plan text, allowed paths as written, denied paths as written)."""
    allowed: list[str] = []
    denied: list[str] = []
    body: list[str] = []
    # a broad allowed pattern over the denied tree: the deny must still win
    if draw(st.booleans()):
        body.append("- `dx/**`\n")
        allowed.append("dx/**")
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        deny = draw(st.booleans())
        if deny:
            text, named = draw(block("dx/deny"))
            how = draw(st.sampled_from(["sub-section", "paragraph"]))
            if how == "sub-section":
                body.append(f"### {draw(DENY_TITLES)}\n\n{text}")
            else:  # an allow-titled sub-section whose paragraph says the list is not touched
                said = draw(
                    st.sampled_from(
                        [
                            "**Do not touch:**",
                            "These must not be touched",
                            "\u53c2\u7167\u306e\u307f",
                        ]
                    )
                )
                body.append(f"### {draw(ALLOW_TITLES)}\n\n{said}\n\n{text}")
            denied.extend(named)
        else:
            title = draw(ALLOW_TITLES)
            text, named = draw(block("src"))
            body.append(f"### {title}\n\n{text}")
            allowed.extend(named)
    if draw(st.booleans()):  # a row marked "no edit needed" in an allowed table
        body.append(
            "| kind | path |\n|---|---|\n| \uff08\u7de8\u96c6\u4e0d\u8981\uff09 | "
            "`dx/deny/row.sh` |\n"
        )
        denied.append("dx/deny/row.sh")
    elsewhere = draw(st.lists(paths("zz"), min_size=1, max_size=4))
    other = "".join(f"- `{p}`\n| `{p}` | x |\n" for p in elsewhere) + " ".join(elsewhere)
    text = (
        f"# Plan\n\n## Goal\n\n{other}\n\n{FILES}{draw(ANNOTATIONS)}\n\n"
        + "\n".join(body)
        + f"\n## Testing Strategy\n\n{other}\n\n## Risks\n\n{other}\n"
    )
    return text, allowed, denied


def _as_pattern(written: str) -> str:
    return written[:-1] + "/**" if written.endswith("/") else written


@settings(max_examples=150, deadline=None)
@given(plans())
def test_nothing_outside_the_files_section_is_ever_in_scope(generated) -> None:
    text, allowed, _denied = generated
    scope = derive_scope(text.encode())
    assert scope.defined == bool(allowed)  # only denied paths: no scope at all
    patterns = scope.patterns or ()
    assert not [p for p in patterns if p.startswith("zz")]
    # every allowed pattern is a path the section names
    assert set(patterns) <= {_as_pattern(p) for p in allowed}
    assert {_as_pattern(p) for p in allowed} <= set(patterns)


def test_nothing_in_a_deny_subsection_is_ever_allowed() -> None:
    seen = Branches()

    @settings(max_examples=150, deadline=None)
    @given(plans())
    def check(generated) -> None:
        seen.example()
        text, _allowed, denied = generated
        scope = derive_scope(text.encode())
        assert not [p for p in scope.patterns or () if p.startswith("dx/deny")]
        seen.reached("denied paths in a defined scope", bool(denied) and scope.defined)
        for written in denied:
            probe = written + "inner.md" if written.endswith("/") else written
            assert not scope.allows(probe), written
            assert not scope.allows(probe.upper()), written
            if scope.defined:
                assert scope.denies(probe) is not None

    check()
    seen.assert_share("denied paths in a defined scope")


@settings(max_examples=100, deadline=None)
@given(plans())
def test_the_section_reading_reports_every_non_path_span_it_skips(generated) -> None:
    text, _allowed, _denied = generated
    found = read_files_section(text)
    for skipped in found.skipped:
        assert skipped.text not in {t.text for t in found.taken}
