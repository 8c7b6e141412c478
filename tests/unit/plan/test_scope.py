"""The one scope derivation: every problem is an undefined scope with a reason, never "all"."""

from __future__ import annotations

import pytest

from plangate.plan.loopspec import derive_loopspec
from plangate.plan.scope import SCOPE_UNDEFINED, derive_scope
from support.taskkit import PLAN_MD


def _plan(files_section: str) -> bytes:
    return PLAN_MD.replace("- `src/app.py`\n- `tests/test_app.py`\n", files_section).encode()


def test_a_plan_with_paths_has_a_defined_scope_in_plan_order() -> None:
    scope = derive_scope(PLAN_MD.encode())
    assert scope.defined
    assert scope.patterns == ("src/app.py", "tests/test_app.py")
    assert scope.problem is None
    assert scope.problem_text == ""


def test_globs_are_kept_as_patterns_and_duplicates_dropped() -> None:
    scope = derive_scope(_plan("- `src/**/*.py`\n- `src/**/*.py`\n- `README.md`\n"))
    assert scope.patterns == ("src/**/*.py", "README.md")


def test_the_scope_is_the_loopspecs_allowed_paths() -> None:
    spec = derive_loopspec(PLAN_MD.encode(), "TASK-0001", "maker", "checker")
    assert derive_scope(PLAN_MD.encode()).patterns == tuple(
        spec["loop"]["scope"]["allowed_paths"]
    )


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (None, "plan.md is unreadable"),
        (b"## Files / Components to Touch\n- `src/\xff.py`\n", "plan.md is not UTF-8"),
        (_plan("- `./src/app.py`\n"), "LOOPSPEC_PATH_NOT_CANONICAL"),
        (_plan("- `src//app.py`\n"), "LOOPSPEC_PATH_NOT_CANONICAL"),
        (_plan("- `../app.py`\n"), "LOOPSPEC_PATH_NOT_CANONICAL"),
        (_plan("nothing in backticks\n"), "LOOPSPEC_FILES_UNRECOGNISED"),
        (_plan(""), "lists no path"),
        (PLAN_MD.replace("## Files / Components to Touch", "## Files").encode(), "lists no path"),
    ],
    ids=["none", "not-utf8", "dot-slash", "double-slash", "dotdot", "no-path", "empty-section",
         "no-section"],
)
def test_every_problem_is_an_undefined_scope(plan: bytes | None, message: str) -> None:
    scope = derive_scope(plan)
    assert not scope.defined
    assert scope.patterns is None
    assert scope.problem is not None
    assert scope.problem.code == SCOPE_UNDEFINED
    assert message in scope.problem_text
    assert "Files / Components to Touch" in scope.problem.hint
