"""Property tests of the hook decision: protected paths, planning files, scope.

Kept apart from the decision's unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.hooks.decision import ALLOW, DENY, OverrideGrant, decide, planning_file_task
from plangate.paths import match_any
from support.hook_decision import NO_TASK, TASK, WITH_TASK, write

SEGMENT = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEF0123456789._-", min_size=1, max_size=8
).filter(lambda s: s not in (".", ".."))
PATH = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)


@settings(max_examples=150, deadline=None)
@given(PATH)
def test_protected_paths_are_never_allowed(path: str) -> None:
    protected = f"{path}/CLAUDE.md"
    facts = WITH_TASK._replace(
        task=TASK._replace(allowed_paths=("**",)), overrides=(OverrideGrant("g", ("**",)),)
    )
    assert decide(facts, write(protected)).verdict == DENY


@settings(max_examples=150, deadline=None)
@given(PATH)
def test_without_task_nothing_outside_planning_files_is_allowed(path: str) -> None:
    result = decide(NO_TASK, write(path))
    if result.verdict == ALLOW:
        assert planning_file_task(path) is not None


@settings(max_examples=150, deadline=None)
@given(PATH)
def test_with_task_an_allow_is_always_inside_scope(path: str) -> None:
    result = decide(WITH_TASK, write(path))
    if result.verdict == ALLOW:
        assert match_any(TASK.allowed_paths or (), path) is not None
