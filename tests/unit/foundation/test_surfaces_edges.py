"""Protected surfaces: the documented classes, the JSON forms, the plain-form reader
document by document, and the definition committed in a real git repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest

from plangate.git import Git
from plangate.layout import MAX_SURFACES_BYTES
from plangate.paths import PathRejected, canonical_path, validate_pattern
from plangate.surfaces import (
    REPO_SURFACES_RELPATH,
    SURFACE_CLASSES,
    TEMPLATE_RESOURCE,
    UNMATCHABLE_PATH,
    ProtectedPattern,
    ResolvedSurfaces,
    bundled_template_bytes,
    load_surfaces_bytes,
    parse_surfaces_text,
    plain_toml,
    resolve_surfaces,
    surfaces_at_commit,
    surfaces_with_presence_at_commit,
)
from support.privileges import SRC, interpreter
from support.repo import commit_all, git

ROOT = Path(__file__).resolve().parents[3]

TWO = b"""version = 1

[[surface]]
pattern = "**/CLAUDE.md"
class = "rules"
reason = "first"

[[surface]]
pattern = "**/*.md"
class = "human-owned"
reason = "second"
"""


def _load(data: bytes, provenance: str = "downstream"):
    return load_surfaces_bytes(data, provenance, "defs.toml")


# -- the classes ----------------------------------------------------------------------------


def test_the_classes_are_exactly_the_documented_table() -> None:
    """docs/protected-surfaces.md's table, row by row, is the accepted classes and their families."""
    text = (ROOT / "docs" / "protected-surfaces.md").read_text(encoding="utf-8")
    section = text.split("## Classes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| ([a-z-]+) \|", section, flags=re.MULTILINE)
    assert rows == list(SURFACE_CLASSES.items())


@pytest.mark.parametrize(("cls", "family"), list(SURFACE_CLASSES.items()))
def test_each_class_is_accepted_and_reported_with_its_family(cls: str, family: str) -> None:
    resolved = _load(
        f'version = 1\n[[surface]]\npattern = "x/**"\nclass = "{cls}"\nreason = "r"\n'.encode()
    )
    assert resolved.resolved, resolved.problem
    assert resolved.entries[0].family == family
    assert resolved.entries[0].to_json() == {
        "pattern": "x/**",
        "class": cls,
        "family": family,
        "reason": "r",
    }


def test_a_class_outside_the_table_has_the_family_unknown() -> None:
    assert ProtectedPattern("a", "no-such-class", "r").family == "unknown"
    bad = _load(b'version = 1\n[[surface]]\npattern = "a"\nclass = "Rules"\nreason = "r"\n')
    assert bad.problem is not None and bad.problem.code == "SURFACES_UNKNOWN_CLASS"


# -- JSON forms -----------------------------------------------------------------------------


def test_the_json_forms_of_a_usable_definition() -> None:
    resolved = _load(TWO)
    block = resolved.provenance_json()
    assert block == {
        "provenance": "downstream",
        "path": "defs.toml",
        "digest": resolved.digest,
        "pattern_count": 2,
        "template_marker": False,
        "problem": None,
    }
    full = resolved.to_json()
    assert full == {
        **block,
        "entries": [e.to_json() for e in resolved.entries],
        "problem": None,
    }
    assert [e["reason"] for e in full["entries"]] == ["first", "second"]


def test_the_json_forms_of_a_definition_with_a_problem() -> None:
    resolved = _load(bundled_template_bytes(), "explicit")
    assert resolved.problem is not None
    assert resolved.provenance_json()["problem"] == "HO_BOUNDARY_UNDEFINED"
    assert resolved.provenance_json()["template_marker"] is True
    assert resolved.to_json()["problem"] == resolved.problem.to_json()
    assert resolved.to_json()["problem"]["code"] == "HO_BOUNDARY_UNDEFINED"
    empty = _load(b"")
    assert empty.problem is not None
    assert empty.to_json()["entries"] == []
    assert str(empty.problem) != "" and empty.problem.message == "defs.toml is empty"


def test_an_invalid_definition_keeps_its_reason() -> None:
    bad = _load(b'version = 2\n[[surface]]\npattern = "a"\nclass = "rules"\nreason = "r"\n')
    assert bad.problem is not None
    assert bad.problem.code == "SURFACES_VERSION"
    assert bad.problem.message == "defs.toml: 'version' must be the integer 1, got 2"
    assert bad.entries == ()
    assert bad.pattern_count == 0


# -- matching -------------------------------------------------------------------------------


def test_match_names_the_first_entry_and_explain_every_entry() -> None:
    resolved = _load(TWO)
    hit = resolved.match("docs/CLAUDE.md")
    assert hit is not None and hit.reason == "first"
    second = resolved.match("docs/notes.md")
    assert second is not None and second.reason == "second"
    assert resolved.match("src/app.py") is None
    assert [e.reason for e in resolved.explain("docs/claude.MD")] == ["first", "second"]
    assert resolved.explain("src/app.py") == ()
    with pytest.raises(PathRejected):
        resolved.explain("a/../CLAUDE.md")


def test_a_definition_without_entries_matches_nothing_but_still_refuses_bad_paths() -> None:
    empty = _load(b"version = 1\n")
    assert empty.entries == ()
    assert empty.match("CLAUDE.md") is None
    with pytest.raises(PathRejected):
        empty.match("a/../CLAUDE.md")
    assert empty.protecting("a/../CLAUDE.md") is UNMATCHABLE_PATH
    protecting = empty.protector()
    assert protecting("CLAUDE.md") is None
    assert protecting("a//b") is UNMATCHABLE_PATH
    assert empty.canonical_protector()(canonical_path("CLAUDE.md")) is None


def test_the_protector_refuses_every_path_when_an_entry_does_not_validate() -> None:
    """A definition built by hand with a pattern that does not validate (never parsed)."""
    broken = ResolvedSurfaces(
        "downstream", "defs.toml", None, (ProtectedPattern("a/../b", "rules", "r"),)
    )
    with pytest.raises(PathRejected):
        broken.canonical_protector()
    protecting = broken.protector()
    assert protecting("src/app.py") is UNMATCHABLE_PATH  # protected, never allowed
    assert protecting("a//b") is UNMATCHABLE_PATH


def test_the_protector_validates_paths_and_names_the_entry() -> None:
    resolved = _load(TWO)
    protecting = resolved.protector()
    hit = protecting("x/CLAUDE.md")
    assert hit is not None and hit.reason == "first"
    assert protecting("x/y.py") is None
    assert protecting("x/../CLAUDE.md") is UNMATCHABLE_PATH
    assert protecting("") is UNMATCHABLE_PATH


# -- the plain-form reader ------------------------------------------------------------------

PLAIN = [
    "",
    "\n",
    "# only a comment\n",
    "version = 1",
    "version=1\n",
    " \tversion \t= \t1 \t# trailing comment\n",
    "version = 0\n",
    "version = 10\n",
    "version = 1#c\n",
    'key = ""\n',
    'key = "a # not a comment"\n',
    'key = "a" # c\n',
    'k-1_A = "v"\n',
    "[[surface]]\n",
    "[[surface]] # c\n",
    "  [[surface]]\n",
    'version = 1\n[[surface]]\npattern = "a"\nclass = "rules"\nreason = "r"\n'
    '[[surface]]\npattern = "b"\n',
    "[[surface]]\nversion = 1\n",
    'key = "a"#c\n',
]


@pytest.mark.parametrize("text", PLAIN)
def test_the_plain_form_is_read_as_tomllib_reads_it(text: str) -> None:
    assert plain_toml(text) == tomllib.loads(text)


def test_the_plain_form_gives_these_values() -> None:
    doc = plain_toml(
        'version = 1\n\n[[surface]]\npattern = "a/**" # c\nclass = "rules"\n'
        '[[surface]]\nreason = "r"\n'
    )
    assert doc == {
        "version": 1,
        "surface": [{"pattern": "a/**", "class": "rules"}, {"reason": "r"}],
    }
    assert plain_toml("# c\n") == {}


DECLINED = [
    "version = 01\n",  # a leading zero
    "version = +1\n",
    "version = 1_0\n",
    "version = 1.0\n",
    "version = -1\n",
    "version = true\n",
    "version = \n",
    "version\n",
    " = 1\n",
    "a.b = 1\n",
    '"q" = 1\n',
    "é = 1\n",
    'key = "a\\"b"\n',  # an escape
    'key = "a\\n"\n',
    'key = "\\n"\n',  # an escape right after the quote
    'key = "a"b\n',  # no space after the closing quote
    'key = "\x1f"\n',  # the last control character below the space
    'key = "open\n',
    "key = 'literal'\n",
    'key = "a" b\n',
    "version = 1 x\n",
    "[[surface]] x\n",
    "[surface]\n",
    "[[other]]\n",
    "version = 1\nversion = 1\n",  # a duplicate key
    "surface = 1\n",
    '[[surface]]\npattern = "a"\npattern = "b"\n',
    "version = 1\r\n",  # a CR
    'key = "\x01"\n',  # a control character
    "version = 1 # \x7f\n",
    'key = """a"""\n',
    "key = [1]\n",
]


@pytest.mark.parametrize("text", DECLINED)
def test_the_plain_form_declines_anything_else(text: str) -> None:
    assert plain_toml(text) is None


def test_a_declined_definition_is_still_read_by_tomllib() -> None:
    resolved = _load(
        b'version = 1\n[[surface]]\npattern = \'a/**\'\nclass = "rules"\nreason = "r"\n'
    )
    assert resolved.resolved, resolved.problem
    assert resolved.entries == (ProtectedPattern("a/**", "rules", "r"),)
    bad = _load(b"version = 1\n[[surface]\n")
    assert bad.problem is not None and bad.problem.code == "SURFACES_INVALID_TOML"


# -- the definition committed at a commit ---------------------------------------------------


def _definition(repo: Path, data: bytes) -> None:
    target = repo / REPO_SURFACES_RELPATH
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def test_a_commit_without_a_definition(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    door = Git(git_repo)
    resolved, present = surfaces_with_presence_at_commit(door, head)
    assert present is False
    assert resolved.provenance == "bundled_template"
    assert resolved.problem is not None and resolved.problem.code == "HO_BOUNDARY_UNDEFINED"
    assert surfaces_at_commit(door, head) == resolved
    missing, present = surfaces_with_presence_at_commit(door, head, template_fallback=False)
    assert present is False
    where = f"{REPO_SURFACES_RELPATH}@{head[:12]}"
    assert (missing.provenance, missing.path, missing.digest, missing.entries) == (
        "downstream",
        where,
        None,
        (),
    )
    assert missing.problem is not None
    assert missing.problem.code == "SURFACES_MISSING"
    assert missing.problem.message == f"{where} does not exist"
    assert surfaces_at_commit(door, head, template_fallback=False) == missing


def test_a_committed_definition(git_repo: Path) -> None:
    _definition(git_repo, TWO)
    (git_repo / "other.toml").write_bytes(b"x")
    head = commit_all(git_repo, "surfaces")
    resolved, present = surfaces_with_presence_at_commit(Git(git_repo), head)
    assert present is True
    assert resolved.resolved, resolved.problem
    assert resolved.provenance == "downstream"
    assert resolved.path == f"{REPO_SURFACES_RELPATH}@{head[:12]}"
    assert resolved == _load_at(TWO, resolved.path)


def _load_at(data: bytes, where: str | None):
    return load_surfaces_bytes(data, "downstream", where)


def test_a_committed_definition_that_cannot_be_read(git_repo: Path) -> None:
    target = git_repo / REPO_SURFACES_RELPATH
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink("elsewhere.toml", target)
    head = commit_all(git_repo, "a link")
    resolved, present = surfaces_with_presence_at_commit(
        Git(git_repo), head, template_fallback=False
    )
    assert present is True
    where = f"{REPO_SURFACES_RELPATH}@{head[:12]}"
    assert (resolved.provenance, resolved.path, resolved.digest) == ("downstream", where, None)
    assert resolved.problem is not None
    assert resolved.problem.code == "SURFACES_UNREADABLE"
    assert resolved.problem.message.startswith(f"{where} cannot be used: ")
    assert str(MAX_SURFACES_BYTES) in resolved.problem.hint


def test_a_committed_definition_past_the_size_limit(git_repo: Path) -> None:
    _definition(git_repo, TWO + b"#" * MAX_SURFACES_BYTES)
    head = commit_all(git_repo, "too large")
    resolved = surfaces_at_commit(Git(git_repo), head)
    assert resolved.problem is not None and resolved.problem.code == "SURFACES_UNREADABLE"


# -- messages, defaults and refusals --------------------------------------------------------


def test_an_unmatchable_path_is_human_owned() -> None:
    hit = _load(TWO).protecting("a/../CLAUDE.md")
    assert hit is UNMATCHABLE_PATH
    assert (hit.cls, hit.family) == ("human-owned", "human-owned-boundary")


def test_a_definition_built_without_a_marker_has_none(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    missing = surfaces_at_commit(Git(git_repo), head, template_fallback=False)
    assert missing.template_marker is False
    assert ResolvedSurfaces("explicit", None, None).template_marker is False


def test_explain_refuses_a_bad_path_even_without_entries() -> None:
    with pytest.raises(PathRejected):
        _load(b"version = 1\n").explain("a/../CLAUDE.md")


def test_a_parse_error_carries_its_message() -> None:
    with pytest.raises(Exception) as info:
        parse_surfaces_text("  \n", "x.toml")
    assert str(info.value) == "x.toml is empty"


def test_entries_are_numbered_from_one() -> None:
    bad = _load(
        b'version = 1\n[[surface]]\npattern = "a"\nclass = "rules"\nreason = "r"\n'
        b'[[surface]]\npattern = "A"\nclass = "rules"\nreason = "r"\n'
    )
    assert bad.problem is not None
    assert bad.problem.code == "SURFACES_DUPLICATE_PATTERN"
    assert bad.problem.message == "defs.toml: surface #2: pattern 'A' repeats surface #1"
    first = _load(b'version = 1\n[[surface]]\npattern = "a"\nclass = "nope"\nreason = "r"\n')
    assert first.problem is not None
    assert first.problem.message == "defs.toml: surface #1: unknown class 'nope'"


def test_an_entry_that_is_not_a_table_is_refused() -> None:
    bad = _load(b"version = 1\nsurface = [1, 2]\n")
    assert bad.problem is not None
    assert (bad.problem.code, bad.problem.message) == (
        "SURFACES_BAD_ENTRY",
        "defs.toml: surface #1 is not a table",
    )


def test_a_bad_pattern_keeps_the_path_rules_hint() -> None:
    with pytest.raises(PathRejected) as info:
        validate_pattern("a/../b")
    assert info.value.hint
    bad = _load(b'version = 1\n[[surface]]\npattern = "a/../b"\nclass = "rules"\nreason = "r"\n')
    assert bad.problem is not None
    assert bad.problem.code == "SURFACES_BAD_PATTERN"
    assert bad.problem.hint == info.value.hint


def test_an_unknown_provenance_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown provenance"):
        load_surfaces_bytes(TWO, "upstairs", None)


def test_a_definition_given_as_the_template_without_its_marker() -> None:
    resolved = load_surfaces_bytes(TWO, "bundled_template", "t.toml")
    assert resolved.problem is not None
    assert resolved.problem.code == "HO_BOUNDARY_UNDEFINED"
    assert resolved.problem.message.startswith(
        "the protected-surface definition is the bundled template:"
    )
    copied = load_surfaces_bytes(bundled_template_bytes(), "downstream", "t.toml")
    assert copied.problem is not None
    assert "is a verbatim copy of the bundled template" in copied.problem.message


def test_an_unusable_file_is_reported_with_what_was_found(tmp_path: Path) -> None:
    explicit = resolve_surfaces(tmp_path, tmp_path / "nope.toml")
    assert explicit.problem is not None
    assert explicit.problem.message == (
        f"protected-surface definition {tmp_path / 'nope.toml'} cannot be used: does not exist"
    )
    target = tmp_path / REPO_SURFACES_RELPATH
    target.parent.mkdir(parents=True)
    (tmp_path / "real.toml").write_bytes(TWO)
    target.symlink_to(tmp_path / "real.toml")
    linked = resolve_surfaces(tmp_path)
    assert linked.problem is not None
    assert linked.problem.message == (
        f"protected-surface definition {target} cannot be used: is a symbolic link"
    )


# -- the template from a zipped install -----------------------------------------------------

_TEMPLATE_CHILD = """
import json
from plangate.surfaces import bundled_template_bytes, bundled_template_path, load_bundled_template
resolved = load_bundled_template()
try:
    size = len(bundled_template_bytes())
except OSError as exc:
    size = type(exc).__name__
print(json.dumps({"path": bundled_template_path(), "size": size,
                  "problem": resolved.problem.code if resolved.problem else None}))
"""


def _zipped(tmp_path: Path, *, template: bool) -> Path:
    """The plangate this process imported, as a zip (its Python files, and the template)."""
    archive = tmp_path / ("with.zip" if template else "without.zip")
    package = SRC / "plangate"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" not in path.parts:
                out.write(path, path.relative_to(SRC).as_posix())
        if template:
            out.write(package / TEMPLATE_RESOURCE, f"plangate/{TEMPLATE_RESOURCE}")
    return archive


def _template_in(archive: Path) -> dict[str, object]:
    proc = subprocess.run(
        [interpreter(), "-S", "-c", _TEMPLATE_CHILD],
        env=dict(os.environ, PYTHONPATH=str(archive)),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    found: dict[str, object] = json.loads(proc.stdout)
    return found


def test_the_template_of_a_zipped_install(tmp_path: Path) -> None:
    archive = _zipped(tmp_path, template=True)
    found = _template_in(archive)
    assert found == {
        "path": f"{archive}/plangate/{TEMPLATE_RESOURCE}",
        "size": len(bundled_template_bytes()),
        "problem": "HO_BOUNDARY_UNDEFINED",
    }


def test_a_missing_template_is_unreadable_not_a_crash(tmp_path: Path) -> None:
    archive = _zipped(tmp_path, template=False)
    found = _template_in(archive)
    assert found["problem"] == "SURFACES_UNREADABLE"
    assert found["size"] == "FileNotFoundError"


_HOT_PATH = """
import sys
from plangate.surfaces import load_surfaces_bytes
resolved = load_surfaces_bytes(sys.stdin.buffer.read(), "downstream", "defs.toml")
print(resolved.resolved, "tomllib" in sys.modules)
"""


def test_a_plain_definition_is_read_without_tomllib() -> None:
    proc = subprocess.run(
        [interpreter(), "-c", _HOT_PATH],
        env=dict(os.environ, PYTHONPATH=str(SRC)),
        input=TWO,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [b"True", b"False"]


_ON_DISK = """
import sys
# What the interpreter's own start-up imported (site, .pth files) is not PlanGate's doing.
before = set(sys.modules)
from plangate.surfaces import bundled_template_bytes, bundled_template_path, load_bundled_template
resolved = load_bundled_template()
new = set(sys.modules) - before
print(resolved.path == bundled_template_path(), len(bundled_template_bytes()) > 0,
      "importlib.resources" in new, "zipfile" in new)
"""


def test_the_template_of_an_installed_package_is_read_as_a_plain_file() -> None:
    """On the hook's path: a package on disk never imports importlib.resources (nor zipfile)."""
    proc = subprocess.run(
        [interpreter(), "-c", _ON_DISK],
        env=dict(os.environ, PYTHONPATH=str(SRC)),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "False", "False"]


def test_joined_surfaces_protect_every_pattern_of_each_definition_once():
    from plangate.canonical import sha256_digest
    from plangate.surfaces import ProtectedPattern, ResolvedSurfaces, joined_surfaces

    a = ProtectedPattern("a/**", "human-owned", "first")
    b = ProtectedPattern("b/**", "human-owned", "second")
    b_again = ProtectedPattern("b/**", "generated", "another reason")
    c = ProtectedPattern("c.txt", "human-owned", "third")
    working = ResolvedSurfaces("downstream", "wt.toml", "sha256:w", (a, b))
    same = ResolvedSurfaces("downstream", "x@1", "sha256:w", (a,))
    assert joined_surfaces(working, (same, same)) is working
    assert joined_surfaces(working, ()) is working
    other = ResolvedSurfaces("downstream", "x@2", "sha256:o", (b_again, c, a))
    bare = ResolvedSurfaces("bundled_template", None, None, (c,))
    joined = joined_surfaces(working, (other, bare))
    assert joined.entries == (a, b, c)  # first's own entries first; a pattern once
    assert joined.path == "wt.toml + x@2 + bundled_template"
    assert joined.digest == sha256_digest(b"sha256:w\nsha256:o\n-")
    assert (joined.provenance, joined.problem) == ("downstream", None)
    assert joined.protecting("c.txt") == c and joined.protecting("b/x") == b
