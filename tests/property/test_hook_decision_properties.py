"""Property tests of the hook decision: protected paths, planning files, scope.

Kept apart from the decision's unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.hooks.decision import (
    ALLOW,
    DENY,
    GUARDED,
    PLANNING_FILES,
    OverrideGrant,
    decide,
    planning_file_task,
)
from plangate.paths import match_any
from support.branches import Branches
from support.hook_decision import NO_TASK, TASK, WITH_TASK, write

SEGMENT = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEF0123456789._-", min_size=1, max_size=8
).filter(lambda s: s not in (".", ".."))
PATH = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)
# Paths that may be allowed, so that the ALLOW branches are reached: a task's planning
# files (allowed without a task), and paths in the task's scope (src/app.py, tests/**).
PLANNING_PATH = st.builds(
    lambda n, name: f"docs/working/TASK-{n:04d}/{name}",
    st.integers(0, 9999),
    st.sampled_from(PLANNING_FILES),
)
IN_SCOPE_PATH = st.one_of(st.just("src/app.py"), PATH.map(lambda p: f"tests/{p}"))


@settings(max_examples=150, deadline=None)
@given(PATH)
def test_protected_paths_are_never_allowed(path: str) -> None:
    protected = f"{path}/CLAUDE.md"
    facts = WITH_TASK._replace(
        task=TASK._replace(allowed_paths=("**",)), overrides=(OverrideGrant("g", ("**",)),)
    )
    assert decide(facts, write(protected)).verdict == DENY


def test_without_task_nothing_outside_planning_files_is_allowed() -> None:
    seen = Branches()

    @settings(max_examples=150, deadline=None)
    @given(st.one_of(PATH, PLANNING_PATH))
    def check(path: str) -> None:
        seen.example()
        result = decide(NO_TASK, write(path))
        if seen.reached("ALLOW", result.verdict == ALLOW):
            assert planning_file_task(path) is not None

    check()
    seen.assert_share("ALLOW")


def test_with_task_an_allow_is_always_inside_scope() -> None:
    seen = Branches()

    @settings(max_examples=150, deadline=None)
    @given(st.one_of(PATH, IN_SCOPE_PATH))
    def check(path: str) -> None:
        seen.example()
        result = decide(WITH_TASK, write(path))
        if seen.reached("ALLOW", result.verdict == ALLOW):
            assert match_any(TASK.allowed_paths or (), path) is not None

    check()
    seen.assert_share("ALLOW")


def _mixed_case(text: str, flips: list[bool]) -> str:
    padded = (flips + [False] * len(text))[: len(text)]
    return "".join(c.upper() if flip else c for c, flip in zip(text, padded, strict=True))


@settings(max_examples=150, deadline=None)
@given(PATH, st.lists(SEGMENT, max_size=3).map("/".join), st.lists(st.booleans(), max_size=4))
def test_a_git_directory_at_any_depth_and_case_is_never_written(
    above: str, below: str, flips: list[bool]
) -> None:
    path = f"{above}/{_mixed_case('.git', flips)}" + (f"/{below}" if below else "")
    facts = WITH_TASK._replace(
        task=TASK._replace(allowed_paths=("**",)), overrides=(OverrideGrant("g", ("**",)),)
    )
    assert "HOOK_GIT_INTERNALS" in decide(facts, write(path)).codes


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([p for p, _c, _w in GUARDED if "/" in p and p[:2] != "**"]), st.data())
def test_a_directory_or_link_above_a_guarded_root_path_is_never_written(
    pattern: str, data: st.DataObject
) -> None:
    segments = pattern.split("/")
    depth = data.draw(st.integers(1, len(segments) - 1))
    flips = data.draw(st.lists(st.booleans(), max_size=12))
    above = _mixed_case("/".join(segments[:depth]), flips)
    facts = WITH_TASK._replace(
        task=TASK._replace(allowed_paths=("**",)), overrides=(OverrideGrant("g", ("**",)),)
    )
    assert decide(facts, write(above)).verdict == DENY
