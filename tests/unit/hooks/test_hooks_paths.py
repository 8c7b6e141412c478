"""Target canonicalisation on a real file system, and HEAD read from .git files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plangate.hooks.paths import (
    TargetRejected,
    filesystem_is_case_insensitive,
    is_device_sink,
    named_link_path,
    resolve_target,
)
from plangate.paths import is_canonical_path


@pytest.fixture
def root(tmp_path: Path) -> str:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "Pkg").mkdir(parents=True)
    (repo / "src" / "Pkg" / "Mod.py").write_text("x\n")
    return os.path.realpath(repo)


def rejected(raw: str, root: str, cwd: str | None = None) -> str:
    with pytest.raises(TargetRejected) as info:
        resolve_target(raw, cwd=cwd or root, repo_root=root)
    return info.value.code


def test_relative_absolute_dot_and_dotdot(root: str) -> None:
    assert resolve_target("src/a.py", cwd=root, repo_root=root) == "src/a.py"
    assert resolve_target(f"{root}/src/a.py", cwd="/", repo_root=root) == "src/a.py"
    assert resolve_target("./src/./a.py", cwd=root, repo_root=root) == "src/a.py"
    assert resolve_target("../a.py", cwd=f"{root}/src", repo_root=root) == "a.py"
    assert resolve_target("a.py", cwd=f"{root}/src", repo_root=root) == "src/a.py"


def test_outside_root_and_root_itself(root: str) -> None:
    assert rejected("../../x", root, f"{root}/src") == "HOOK_TARGET_OUTSIDE_REPO"
    assert rejected("/etc/passwd", root) == "HOOK_TARGET_OUTSIDE_REPO"
    assert rejected(root + "-sibling/x", root) == "HOOK_TARGET_OUTSIDE_REPO"
    assert rejected(".", root) == "HOOK_TARGET_IS_ROOT"
    assert rejected("", root) == "HOOK_TARGET_INVALID"
    assert rejected("a\x00b", root) == "HOOK_TARGET_INVALID"
    assert rejected("~other/x", root) == "HOOK_TARGET_UNRESOLVABLE"
    assert rejected("x", root, cwd="relative/dir") == "HOOK_TARGET_UNRESOLVABLE"


def test_home_expansion(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", root)
    assert resolve_target("~/src/a.py", cwd="/", repo_root=root) == "src/a.py"


def test_symlinks_are_followed(root: str, tmp_path: Path) -> None:
    os.symlink(f"{root}/src/Pkg", f"{root}/alias")
    assert resolve_target("alias/Mod.py", cwd=root, repo_root=root) == "src/Pkg/Mod.py"
    os.symlink(str(tmp_path), f"{root}/out")
    assert rejected("out/x", root) == "HOOK_TARGET_OUTSIDE_REPO"
    os.symlink("../../etc", f"{root}/src/up")
    assert rejected("src/up/passwd", root) == "HOOK_TARGET_OUTSIDE_REPO"


def test_non_canonical_remainder_is_rejected(root: str) -> None:
    assert rejected("src/ bad.py", root) == "PATH_WHITESPACE"
    assert rejected("src/a\\b.py", root) == "PATH_BACKSLASH"


def test_case_insensitive_spelling_follows_the_disk(root: str) -> None:
    got = resolve_target("SRC/pkg/mod.py", cwd=root, repo_root=root, case_insensitive=True)
    assert got == "src/Pkg/Mod.py"
    new = resolve_target("SRC/pkg/New.py", cwd=root, repo_root=root, case_insensitive=True)
    assert new == "src/Pkg/New.py"
    assert resolve_target("SRC/pkg/mod.py", cwd=root, repo_root=root) == "SRC/pkg/mod.py"


def test_case_probe_on_this_file_system(root: str) -> None:
    expected = os.path.exists(os.path.join(root, ".GIT"))
    assert filesystem_is_case_insensitive(root) is expected


def test_device_sinks() -> None:
    assert is_device_sink("/dev/null")
    assert is_device_sink("/dev/fd/2")
    assert not is_device_sink("/dev/fd/x")
    assert not is_device_sink("/dev/sda")


SEGMENT = st.text(alphabet="abcXYZ019._- ~", min_size=1, max_size=6)
RAW = st.lists(
    st.one_of(SEGMENT, st.just(".."), st.just("."), st.just("")), min_size=1, max_size=6
).map("/".join)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(RAW, st.booleans())
def test_result_is_always_canonical_and_inside(root: str, raw: str, absolute: bool) -> None:
    text = f"{root}/{raw}" if absolute else raw
    try:
        path = resolve_target(text, cwd=f"{root}/src", repo_root=root)
    except TargetRejected:
        return
    assert is_canonical_path(path)
    assert os.path.realpath(os.path.join(root, path)).startswith(root + "/")






def test_a_link_is_named_at_its_own_path_with_its_parents_resolved(root: str) -> None:
    os.symlink("src/Pkg/Mod.py", os.path.join(root, "CLAUDE.md"))
    os.symlink("src", os.path.join(root, "lnk"))
    os.symlink("Pkg/Mod.py", os.path.join(root, "src", "alias.py"))
    assert resolve_target("CLAUDE.md", cwd=root, repo_root=root) == "src/Pkg/Mod.py"
    assert named_link_path("CLAUDE.md", cwd=root, repo_root=root) == "CLAUDE.md"
    assert named_link_path("lnk/alias.py", cwd=root, repo_root=root) == "src/alias.py"
    assert named_link_path(os.path.join(root, "lnk"), cwd="/", repo_root=root) == "lnk"


def test_a_path_that_follows_its_last_link_names_no_link(root: str) -> None:
    os.symlink("src", os.path.join(root, "lnk"))
    for raw in ("lnk/", "lnk/.", "src/Pkg/Mod.py", "missing", "src/Pkg"):
        assert named_link_path(raw, cwd=root, repo_root=root) is None


def test_a_link_outside_the_repository_is_rejected_at_its_own_path(
    root: str, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-link"
    os.symlink(os.path.join(root, "src", "Pkg", "Mod.py"), outside)
    with pytest.raises(TargetRejected) as caught:
        named_link_path(str(outside), cwd=root, repo_root=root)
    assert caught.value.code == "HOOK_TARGET_OUTSIDE_REPO"
