"""Protected-surface definition: parsing, validation, provenance and resolution order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.paths import PathRejected
from plangate.surfaces import (
    REPO_SURFACES_RELPATH,
    SURFACE_CLASSES,
    TEMPLATE_MARKER,
    bundled_template_bytes,
    load_surfaces_bytes,
    resolve_surfaces,
)

GOOD = b"""version = 1

[[surface]]
pattern = "src/plangate/approval/**"
class = "decision-code"
reason = "the arbiter's own judgement base"

[[surface]]
pattern = "**/CLAUDE.md"
class = "rules"
reason = "agent rules"
"""


def entry(pattern: str, cls: str = "hook", reason: str = "why") -> str:
    return f'[[surface]]\npattern = "{pattern}"\nclass = "{cls}"\nreason = "{reason}"\n'


def load(text: str | bytes, provenance: str = "downstream"):
    data = text.encode() if isinstance(text, str) else text
    return load_surfaces_bytes(data, provenance, "defs.toml")


def test_good_definition_resolves_with_digest_and_count() -> None:
    resolved = load(GOOD)
    assert resolved.problem is None
    assert resolved.resolved
    assert resolved.provenance == "downstream"
    assert resolved.pattern_count == 2
    assert resolved.digest is not None and resolved.digest.startswith("sha256:")
    assert resolved.entries[0].cls == "decision-code"
    assert resolved.entries[0].family == "judgement-base"


def test_digest_is_over_raw_bytes() -> None:
    a = load(GOOD)
    b = load(GOOD.replace(b"\n", b"\r\n"))
    assert b.problem is None
    assert a.digest != b.digest


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "SURFACES_EMPTY"),
        ("   \n# only a comment\n", "SURFACES_EMPTY"),
        ("version = 1\n", "SURFACES_EMPTY"),
        ("version = 1\nsurface = []\n", "SURFACES_EMPTY"),
        ("version = [\n", "SURFACES_INVALID_TOML"),
        ("version = 2\n" + entry("a/**"), "SURFACES_VERSION"),
        ('version = "1"\n' + entry("a/**"), "SURFACES_VERSION"),
        ("version = true\n" + entry("a/**"), "SURFACES_VERSION"),
        (entry("a/**"), "SURFACES_VERSION"),
        ("version = 1\nextra = 1\n" + entry("a/**"), "SURFACES_UNKNOWN_KEY"),
        ("version = 1\n" + entry("a/**") + "note = 'x'\n", "SURFACES_UNKNOWN_KEY"),
        ('version = 1\n[[surface]]\npattern = "a"\nclass = "hook"\n', "SURFACES_BAD_ENTRY"),
        ('version = 1\n[[surface]]\npattern = "a"\nclass = "hook"\nreason = " "\n',
         "SURFACES_BAD_ENTRY"),
        ("version = 1\nsurface = 3\n", "SURFACES_BAD_ENTRY"),
        ("version = 1\n" + entry("../a"), "SURFACES_BAD_PATTERN"),
        ("version = 1\n" + entry("/etc/x"), "SURFACES_BAD_PATTERN"),
        ("version = 1\n" + entry("a//b"), "SURFACES_BAD_PATTERN"),
        ("version = 1\n" + entry("./a"), "SURFACES_BAD_PATTERN"),
        ("version = 1\n" + entry("a/**x"), "SURFACES_BAD_PATTERN"),
        ("version = 1\n" + entry("a", cls="HO-core"), "SURFACES_UNKNOWN_CLASS"),
        ("version = 1\n" + entry("a/**") + entry("A/**", cls="ci"),
         "SURFACES_DUPLICATE_PATTERN"),
    ],
)
def test_invalid_definitions_carry_a_problem_and_no_entries(text: str, code: str) -> None:
    resolved = load(text)
    assert resolved.problem is not None
    assert resolved.problem.code == code
    assert not resolved.resolved
    assert resolved.entries == ()


def test_backslash_pattern_is_refused() -> None:
    resolved = load("version = 1\n" + entry("a\\\\b"))
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_BAD_PATTERN"


@pytest.mark.parametrize(
    ("data", "code"),
    [(b"\xef\xbb\xbf" + GOOD, "SURFACES_NOT_UTF8"), (GOOD + b"# \xff\n", "SURFACES_NOT_UTF8")],
)
def test_encoding_problems(data: bytes, code: str) -> None:
    resolved = load(data)
    assert resolved.problem is not None and resolved.problem.code == code


def test_every_required_class_family_exists() -> None:
    required = {
        "core-cli", "hook", "schema", "rules", "settings", "contract", "ci", "approval",
        "plugin-dist", "decision-code", "policy-spec", "execution-skill", "evaluator", "grader",
        "sealed-fixture", "manifest", "surfaces-definition", "ledger",
    }
    assert required <= set(SURFACE_CLASSES)


def test_matching_is_case_folded_and_segment_aware() -> None:
    resolved = load(GOOD)
    assert resolved.match("CLAUDE.md") is not None
    assert resolved.match("sub/dir/claude.MD") is not None
    assert resolved.match("SRC/PlanGate/Approval/arbiter.py") is not None
    assert resolved.match("src/plangate/approval") is None  # trailing ** needs a segment
    assert resolved.match("src/other.py") is None
    assert [e.pattern for e in resolved.explain("CLAUDE.md")] == ["**/CLAUDE.md"]


@pytest.mark.parametrize("path", ["./CLAUDE.md", "a/../CLAUDE.md", "/CLAUDE.md", "a//b", "a\\b",
                                  ""])
def test_match_refuses_non_canonical_paths(path: str) -> None:
    with pytest.raises(PathRejected):
        load(GOOD).match(path)


def test_template_marker_turns_any_provenance_into_bundled_template() -> None:
    data = b"# " + TEMPLATE_MARKER.encode() + b" copy\n" + GOOD
    resolved = load(data, provenance="downstream")
    assert resolved.provenance == "bundled_template"
    assert resolved.template_marker
    assert resolved.problem is not None and resolved.problem.code == "HO_BOUNDARY_UNDEFINED"
    assert "copy" in resolved.problem.message
    assert resolved.pattern_count == 2  # still parsed, for --explain


def test_an_invalid_copy_reports_the_worse_problem() -> None:
    resolved = load(b"# " + TEMPLATE_MARKER.encode() + b"\nversion = 7\n")
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_VERSION"
    assert resolved.provenance == "bundled_template"


def test_bundled_template_parses_and_carries_its_marker() -> None:
    data = bundled_template_bytes()
    assert data.splitlines()[0].decode().startswith("# " + TEMPLATE_MARKER)
    resolved = load(data)
    assert resolved.provenance == "bundled_template"
    assert resolved.problem is not None and resolved.problem.code == "HO_BOUNDARY_UNDEFINED"
    for path in ("CLAUDE.md", "AGENTS.md", ".claude/settings.json", ".codex/hooks.json",
                 ".cursor/hooks.json", ".github/workflows/ci.yml",
                 "docs/working/TASK-0001/approvals/c3.json", ".plangate/protected-surfaces.toml",
                 ".plangate/ledger.sqlite3", ".plangate/config.toml"):
        assert resolved.match(path) is not None, path
    assert resolved.match(".plangate/protected-surfaces.toml").cls == "surfaces-definition"
    assert resolved.match(".plangate/ledger.sqlite3").cls == "ledger"
    assert resolved.match("src/app.py") is None


def test_template_without_marker_line_is_a_usable_definition() -> None:
    lines = bundled_template_bytes().splitlines(keepends=True)
    resolved = load(b"".join(lines[1:]))
    assert resolved.problem is None
    assert resolved.provenance == "downstream"


# --- resolution order -------------------------------------------------------------


def write_repo_file(root: Path, data: bytes) -> Path:
    path = root / REPO_SURFACES_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_resolution_bundled_template_only(tmp_path: Path) -> None:
    resolved = resolve_surfaces(tmp_path)
    assert resolved.provenance == "bundled_template"
    assert resolved.problem is not None and resolved.problem.code == "HO_BOUNDARY_UNDEFINED"
    assert resolved.pattern_count > 0


def test_resolution_downstream_file(tmp_path: Path) -> None:
    path = write_repo_file(tmp_path, GOOD)
    resolved = resolve_surfaces(tmp_path)
    assert resolved.provenance == "downstream"
    assert resolved.path == str(path)
    assert resolved.problem is None
    assert resolved.pattern_count == 2


def test_resolution_copied_template(tmp_path: Path) -> None:
    write_repo_file(tmp_path, bundled_template_bytes())
    resolved = resolve_surfaces(tmp_path)
    assert resolved.provenance == "bundled_template"
    assert resolved.problem is not None and resolved.problem.code == "HO_BOUNDARY_UNDEFINED"


def test_resolution_empty_downstream_file_escalates_without_fallback(tmp_path: Path) -> None:
    write_repo_file(tmp_path, b"")
    resolved = resolve_surfaces(tmp_path)
    assert resolved.provenance == "downstream"
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_EMPTY"


def test_resolution_invalid_downstream_file(tmp_path: Path) -> None:
    write_repo_file(tmp_path, b"version = 1\n[[surface]\n")
    resolved = resolve_surfaces(tmp_path)
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_INVALID_TOML"


def test_resolution_unknown_key_downstream(tmp_path: Path) -> None:
    write_repo_file(tmp_path, GOOD + b"owner = 'me'\n")
    resolved = resolve_surfaces(tmp_path)
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_UNKNOWN_KEY"


def test_resolution_symlinked_downstream_file_is_unreadable(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_bytes(GOOD)
    link = tmp_path / REPO_SURFACES_RELPATH
    link.parent.mkdir(parents=True)
    os.symlink(real, link)
    resolved = resolve_surfaces(tmp_path)
    assert resolved.provenance == "downstream"
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_UNREADABLE"


def test_resolution_explicit_wins_over_downstream(tmp_path: Path) -> None:
    write_repo_file(tmp_path, bundled_template_bytes())
    explicit = tmp_path / "mine.toml"
    explicit.write_bytes(GOOD)
    resolved = resolve_surfaces(tmp_path, explicit)
    assert resolved.provenance == "explicit"
    assert resolved.problem is None
    assert resolved.path == str(explicit)


def test_resolution_explicit_missing_never_falls_back(tmp_path: Path) -> None:
    write_repo_file(tmp_path, GOOD)
    resolved = resolve_surfaces(tmp_path, tmp_path / "missing.toml")
    assert resolved.provenance == "explicit"
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_UNREADABLE"
    assert resolved.entries == ()


def test_resolution_explicit_empty(tmp_path: Path) -> None:
    explicit = tmp_path / "empty.toml"
    explicit.write_bytes(b"")
    resolved = resolve_surfaces(tmp_path, explicit)
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_EMPTY"


def test_resolution_explicit_directory(tmp_path: Path) -> None:
    resolved = resolve_surfaces(tmp_path, tmp_path)
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_UNREADABLE"


def test_provenance_json_has_the_recorded_fields() -> None:
    block = load(GOOD).provenance_json()
    assert set(block) >= {"provenance", "path", "digest", "pattern_count"}


PROTECTOR_PATHS = [
    "CLAUDE.md", "sub/dir/claude.MD", "SRC/PlanGate/Approval/arbiter.py", "src/plangate/approval",
    "src/other.py", "docs/Straße/CLAUDE.md", "ÉCOLE/claude.md", "./CLAUDE.md", "a/../CLAUDE.md",
    "/CLAUDE.md", "a//b", "a\\b", "", "src/plangate/approval/x/y.py", "x/approvals/c3.json",
]


@pytest.mark.parametrize("definition", [GOOD, bundled_template_bytes(), b"version = 1\n"])
def test_the_protector_answers_as_protecting_for_every_path(definition: bytes) -> None:
    resolved = load(definition)
    protecting = resolved.protector()
    for path in PROTECTOR_PATHS:
        assert protecting(path) == resolved.protecting(path), path


def test_the_protector_names_the_first_matching_entry() -> None:
    resolved = load(
        "version = 1\n\n" + entry("**/CLAUDE.md", "rules", "first")
        + entry("**/*.md", "hook", "second")
    )
    assert resolved.resolved, resolved.problem
    protecting = resolved.protector()
    first = protecting("a/claude.md")
    assert first is not None and first.reason == "first"
    second = protecting("a/notes.md")
    assert second is not None and second.reason == "second"
    assert protecting("src/app.py") is None
    assert protecting("a/../CLAUDE.md") == resolved.protecting("a/../CLAUDE.md")
    assert protecting("a/../CLAUDE.md") is not None  # unmatchable is protected
