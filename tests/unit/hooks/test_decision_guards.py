"""Guards that hold whatever the scope says: git directories at any depth, and the
ancestor rule (a directory, link or new path above a guarded or protected path)."""

from __future__ import annotations

import pytest

from plangate.hooks.decision import ALLOW, DENY, Action, ActionKind, Target, ancestor_of, decide
from support.hook_decision import SURFACES, TASK, WITH_TASK, codes, protected, write

EVERYWHERE = WITH_TASK._replace(task=TASK._replace(allowed_paths=("**",)))
"""A task whose scope holds every path: only the guards can deny."""
TEMPLATE_LIKE = EVERYWHERE._replace(
    surfaces=protected("**/CLAUDE.md", ".github/workflows/**", "**/.claude/**", "docs/CODEOWNERS")
)


def _one(path: str, *, regular_file: bool = False, directory: bool = False) -> Action:
    target = Target(path, path, regular_file=regular_file, directory=directory)
    return Action(ActionKind.SHELL, (target,), label="Bash")


@pytest.mark.parametrize(
    "path",
    [
        ".git",
        ".git/config",
        "src/.git",
        "src/.git/config",
        "vendor/lib/.git/hooks/pre-commit",
        "a/b/c/d/.git/info/attributes",
        "sub/.GIT",
        "Src/.Git/HOOKS/post-checkout",
    ],
)
@pytest.mark.parametrize("kind", [ActionKind.WRITE, ActionKind.SHELL, ActionKind.EFFECT])
def test_a_git_directory_at_any_depth_is_guarded(path: str, kind: ActionKind) -> None:
    assert "HOOK_GIT_INTERNALS" in codes(EVERYWHERE, write(path, kind=kind))


@pytest.mark.parametrize("path", ["src/.gitignore", "src/git/config", "src/.github/x", "a.git/b"])
def test_names_that_only_resemble_git_are_not_guarded(path: str) -> None:
    assert decide(EVERYWHERE, write(path)).verdict == ALLOW


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (".claude", "HOOK_CONFIG_FILE"),
        (".CLAUDE", "HOOK_CONFIG_FILE"),
        (".codex", "HOOK_CONFIG_FILE"),
        (".cursor", "HOOK_CONFIG_FILE"),
        (".plangate", "HOOK_PLANGATE_STATE"),
        ("docs", "HOOK_APPROVAL_FILE"),
        ("docs/working", "HOOK_APPROVAL_FILE"),
        ("docs/working/TASK-0002", "HOOK_APPROVAL_FILE"),
        (".github", "HOOK_PROTECTED_SURFACE"),
        (".github/workflows", "HOOK_PROTECTED_SURFACE"),
        ("src/.claude", "HOOK_PROTECTED_SURFACE"),
        ("vendor/x/.Claude", "HOOK_PROTECTED_SURFACE"),
    ],
)
def test_a_path_above_a_guarded_or_protected_path_is_judged_as_writing_it(
    path: str, code: str
) -> None:
    assert code in decide(TEMPLATE_LIKE, _one(path)).codes
    # an existing regular file holds nothing beneath it; a directory mkdir creates is empty
    assert code not in decide(TEMPLATE_LIKE, _one(path, regular_file=True)).codes
    assert code not in decide(TEMPLATE_LIKE, _one(path, directory=True)).codes


def test_the_ancestor_rule_is_not_lifted_by_an_override() -> None:
    from plangate.hooks.decision import OverrideGrant

    facts = TEMPLATE_LIKE._replace(overrides=(OverrideGrant("g", ("**",)),))
    assert decide(facts, _one(".claude")).verdict == DENY


@pytest.mark.parametrize(
    "path", ["src", "src/app.py", "src/newpkg", "src/b.py", "tests", "lib/claude", "CLAUDE"]
)
def test_ordinary_paths_are_no_ancestors(path: str) -> None:
    assert decide(TEMPLATE_LIKE, _one(path)).verdict == ALLOW


def test_ancestor_of_names_the_pattern_it_stands_above() -> None:
    patterns = (".github/workflows/**", "**/.claude/**", "docs/working/*/approvals/**")
    assert ancestor_of(patterns, ".github") == ".github/workflows/**"
    assert ancestor_of(patterns, "a/b/.claude") == "**/.claude/**"
    assert ancestor_of(patterns, "docs/working/TASK-0009/approvals") == (
        "docs/working/*/approvals/**"
    )
    assert ancestor_of(patterns, ".github/workflows/ci.yml") is None  # matched, not above
    assert ancestor_of(patterns, "docs/other") is None
    assert ancestor_of(patterns, "src") is None


def test_the_bundled_surfaces_make_the_approvals_directory_an_ancestor_too() -> None:
    assert "HOOK_PROTECTED_SURFACE" in codes(
        EVERYWHERE._replace(surfaces=protected("**/approvals/**")), _one("src/approvals")
    )
    assert codes(EVERYWHERE._replace(surfaces=SURFACES), _one("src/approvals")) == ()
