"""The pure decision over literal facts: one test per rule, plus overrides and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.hooks.decision import (
    ALLOW,
    DENY,
    Action,
    ActionKind,
    Facts,
    OverrideGrant,
    Target,
    TaskFacts,
    decide,
    effect_exempt,
    is_approvals_path,
    planning_file_task,
)
from plangate.surfaces import ProtectedPattern, ResolvedSurfaces
from plangate.verdict import Reason


def protected(*patterns: str) -> ResolvedSurfaces:
    """A resolved definition protecting ``patterns`` (class ``rules``)."""
    entries = tuple(ProtectedPattern(p, "rules", "protected in this test") for p in patterns)
    return ResolvedSurfaces("explicit", None, None, entries)


SURFACES = protected("**/CLAUDE.md", ".github/workflows/**")
TASK = TaskFacts("TASK-0001", "env", True, allowed_paths=("src/app.py", "tests/**"))
NO_TASK = Facts(surfaces=SURFACES)
WITH_TASK = Facts(surfaces=SURFACES, task=TASK, locked_tasks=frozenset({"TASK-0001"}))


def write(*paths: str, kind: ActionKind = ActionKind.WRITE) -> Action:
    return Action(kind, tuple(Target(p, p) for p in paths), label="Write")


def codes(facts: Facts, action: Action) -> tuple[str, ...]:
    return decide(facts, action).codes


def test_in_scope_write_allowed() -> None:
    result = decide(WITH_TASK, write("src/app.py", "tests/unit/test_a.py"))
    assert result.verdict == ALLOW
    assert result.accepted


def test_outside_scope_denied() -> None:
    result = decide(WITH_TASK, write("src/other.py"))
    assert result.verdict == DENY
    assert result.codes == ("HOOK_OUTSIDE_SCOPE",)
    assert result.reasons[0].evidence == ("src/other.py",)


def test_scope_is_case_sensitive() -> None:
    assert codes(WITH_TASK, write("SRC/app.py")) == ("HOOK_OUTSIDE_SCOPE",)


def test_protected_surface_denied_with_and_without_task() -> None:
    assert "HOOK_PROTECTED_SURFACE" in codes(WITH_TASK, write("CLAUDE.md"))
    assert "HOOK_PROTECTED_SURFACE" in codes(NO_TASK, write("docs/CLAUDE.md"))
    assert "HOOK_PROTECTED_SURFACE" in codes(NO_TASK, write("claude.MD"))


def test_protected_surface_denied_even_when_in_scope() -> None:
    facts = WITH_TASK._replace(task=TASK._replace(allowed_paths=("**",)))
    assert codes(facts, write("CLAUDE.md")) == ("HOOK_PROTECTED_SURFACE",)


def test_unresolved_surfaces_deny_every_write() -> None:
    facts = Facts(surfaces=None, surfaces_problem="invalid toml", task=TASK)
    assert codes(facts, write("src/app.py")) == ("HOOK_SURFACES_UNAVAILABLE",)


def test_no_task_only_planning_files() -> None:
    assert decide(NO_TASK, write("docs/working/TASK-0002/plan.md")).verdict == ALLOW
    assert codes(NO_TASK, write("docs/working/TASK-0002/notes.md")) == ("HOOK_NO_ACTIVE_TASK",)
    assert codes(NO_TASK, write("src/app.py")) == ("HOOK_NO_ACTIVE_TASK",)
    assert codes(NO_TASK, write("docs/working/TASK-02/plan.md")) == ("HOOK_NO_ACTIVE_TASK",)


def test_locked_package_denied() -> None:
    facts = NO_TASK._replace(locked_tasks=frozenset({"TASK-0002"}))
    assert codes(facts, write("docs/working/TASK-0002/todo.md")) == ("HOOK_PLAN_PACKAGE_LOCKED",)


def test_approvals_denied_for_any_task() -> None:
    assert codes(NO_TASK, write("docs/working/TASK-0002/approvals/c3.json")) == (
        "HOOK_APPROVAL_FILE",
    )
    assert "HOOK_APPROVAL_FILE" in codes(
        WITH_TASK, write("docs/working/TASK-0001/approvals/c3.json")
    )
    assert "HOOK_APPROVAL_FILE" in codes(WITH_TASK, write("docs/working/X/Approvals/y"))


def test_unverified_task_denies() -> None:
    facts = WITH_TASK._replace(task=TASK._replace(verified=False, verification_message="stale"))
    assert codes(facts, write("src/app.py")) == ("HOOK_TASK_NOT_VERIFIED",)


@pytest.mark.parametrize("allowed", [None, ()])
def test_missing_or_empty_scope_denies(allowed: tuple[str, ...] | None) -> None:
    facts = WITH_TASK._replace(task=TASK._replace(allowed_paths=allowed))
    assert codes(facts, write("src/app.py")) == ("HOOK_SCOPE_UNDEFINED",)


@pytest.mark.parametrize(
    "path",
    [
        ".plangate/config.toml",
        ".git/hooks/pre-commit",
        ".claude/settings.json",
        ".codex/hooks.json",
        ".cursor/hooks.json",
        ".GIT/config",
    ],
)
def test_guarded_paths_denied_even_in_scope(path: str) -> None:
    facts = WITH_TASK._replace(surfaces=protected(), task=TASK._replace(allowed_paths=("**",)))
    result = decide(facts, write(path))
    assert result.verdict == DENY
    assert result.codes[0] in ("HOOK_PLANGATE_STATE", "HOOK_GIT_INTERNALS", "HOOK_CONFIG_FILE")


def test_rejected_target_denies() -> None:
    action = Action(
        ActionKind.WRITE, (Target("/etc/x", None, Reason("HOOK_TARGET_OUTSIDE_REPO", "outside")),)
    )
    assert codes(WITH_TASK, action) == ("HOOK_TARGET_OUTSIDE_REPO",)


def test_write_without_target_denies() -> None:
    assert codes(WITH_TASK, Action(ActionKind.WRITE)) == ("HOOK_NO_TARGET",)


def test_unclassifiable_shell_denies_with_or_without_task() -> None:
    action = Action(ActionKind.SHELL, (), ("unknown program 'npm'",))
    assert codes(WITH_TASK, action) == ("HOOK_SHELL_UNCLASSIFIABLE",)
    assert codes(NO_TASK, action) == ("HOOK_SHELL_UNCLASSIFIABLE",)


def test_task_problem_denies() -> None:
    facts = NO_TASK._replace(task_problem=Reason("HOOK_TASK_INVALID", "bad id"))
    assert codes(facts, write("docs/working/TASK-0002/plan.md")) == ("HOOK_TASK_INVALID",)


def test_read_is_allowed_without_facts() -> None:
    assert decide(Facts(surfaces=None), Action(ActionKind.READ)).verdict == ALLOW


def test_all_reasons_of_all_targets_are_listed() -> None:
    result = decide(WITH_TASK, write("CLAUDE.md", "src/other.py", "lib/x.py"))
    assert result.codes == ("HOOK_PROTECTED_SURFACE", "HOOK_OUTSIDE_SCOPE")
    outside = result.reasons[1]
    assert outside.evidence == ("CLAUDE.md", "src/other.py", "lib/x.py")


def test_effect_of_own_verified_package_and_record_is_not_an_edit() -> None:
    facts = WITH_TASK._replace(surfaces=protected("**/approvals/**"))
    own = ("docs/working/TASK-0001/approvals/c3.json", "docs/working/TASK-0001/plan.md")
    assert decide(facts, write(*own, kind=ActionKind.EFFECT)).verdict == ALLOW
    assert decide(facts, write(*own, kind=ActionKind.COMMIT)).verdict == ALLOW
    # ... but as a tool write it is one, and other files under approvals/ always are.
    assert decide(facts, write(*own)).verdict == DENY
    other = write("docs/working/TASK-0001/approvals/extra.json", kind=ActionKind.EFFECT)
    assert decide(facts, other).verdict == DENY


def test_effect_of_unverified_task_package_is_an_edit() -> None:
    facts = WITH_TASK._replace(task=TASK._replace(verified=False))
    action = write("docs/working/TASK-0001/plan.md", kind=ActionKind.EFFECT)
    assert "HOOK_PLAN_PACKAGE_LOCKED" in codes(facts, action)


def test_effect_ignores_plangate_runtime_files() -> None:
    action = write(
        ".plangate/ledger.sqlite3",
        "docs/working/TASK-0001/run.ndjson",
        ".plangate/.gitignore",
        kind=ActionKind.EFFECT,
    )
    assert decide(WITH_TASK, action).verdict == ALLOW
    assert decide(WITH_TASK, write(".plangate/ledger.sqlite3")).verdict == DENY


GRANT = OverrideGrant("ovr-1", ("docs/*.md",))


def test_override_lifts_scope_and_no_task_only() -> None:
    facts = WITH_TASK._replace(overrides=(GRANT,))
    result = decide(facts, write("docs/guide.md"))
    assert result.verdict == ALLOW
    assert result.facts["overrides_used"] == ["ovr-1"]
    assert decide(NO_TASK._replace(overrides=(GRANT,)), write("docs/guide.md")).verdict == ALLOW
    unverified = facts._replace(task=TASK._replace(verified=False))
    assert decide(unverified, write("docs/guide.md")).verdict == ALLOW


def test_override_never_lifts_protected_or_guarded() -> None:
    grant = OverrideGrant("ovr-2", ("CLAUDE.md", ".plangate/*", "docs/working/**"))
    facts = WITH_TASK._replace(overrides=(grant,))
    assert decide(facts, write("CLAUDE.md")).verdict == DENY
    assert decide(facts, write(".plangate/config.toml")).verdict == DENY
    assert decide(facts, write("docs/working/TASK-0001/approvals/c3.json")).verdict == DENY
    assert decide(facts, write("docs/working/TASK-0001/plan.md")).verdict == DENY


def test_override_matching_is_case_sensitive_and_per_target() -> None:
    facts = WITH_TASK._replace(overrides=(GRANT,))
    assert decide(facts, write("DOCS/guide.md")).verdict == DENY
    assert decide(facts, write("docs/guide.md", "lib/x.py")).codes == ("HOOK_OUTSIDE_SCOPE",)


def test_path_helpers() -> None:
    assert planning_file_task("docs/working/TASK-0007/test-cases.md") == "TASK-0007"
    assert planning_file_task("docs/working/TASK-0007/approvals/c3.json") is None
    assert planning_file_task("docs/working/TASK-0007/sub/plan.md") is None
    assert is_approvals_path("docs/working/TASK-0007/approvals")
    assert not is_approvals_path("docs/working/TASK-0007/approvals.md")
    assert effect_exempt(".plangate/ledger.sqlite3-wal")
    assert not effect_exempt(".plangate/protected-surfaces.toml")


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
    from plangate.paths import match_any

    result = decide(WITH_TASK, write(path))
    if result.verdict == ALLOW:
        assert match_any(TASK.allowed_paths or (), path) is not None


def test_evidence_is_listed_once_in_first_seen_order() -> None:
    paths = ["b.txt", "a.txt", "b.txt", "c.txt", "a.txt"]
    result = decide(NO_TASK, write(*paths))
    (reason,) = result.reasons
    assert reason.code == "HOOK_NO_ACTIVE_TASK"
    assert reason.evidence == ("b.txt", "a.txt", "c.txt")


def test_many_targets_stay_linear() -> None:
    paths = [f"notes/{i}.txt" for i in range(20000)]
    (reason,) = decide(NO_TASK, write(*paths)).reasons
    assert len(reason.evidence) == 20000
    assert reason.message.endswith("(+19992 more)")


def test_a_path_the_plan_denies_is_refused_even_inside_an_allowed_pattern() -> None:
    task = TaskFacts("TASK-0001", "env", True, allowed_paths=("src/**",),
                     denied_paths=("src/secret/**", "src/keys.py"))
    facts = Facts(surfaces=SURFACES, task=task, locked_tasks=frozenset({"TASK-0001"}))
    assert codes(facts, write("src/app.py")) == ()
    for path in ("src/secret/a.py", "src/keys.py", "src/KEYS.py", "src/keys.py/x"):
        result = decide(facts, write(path))
        assert result.verdict == DENY and result.codes == ("HOOK_DENIED_BY_PLAN",), path
    # a human override lifts an out-of-scope write, never a path the plan denies
    grant = OverrideGrant("g1", ("src/keys.py",))
    overridden = Facts(surfaces=SURFACES, task=task, locked_tasks=frozenset({"TASK-0001"}),
                       overrides=(grant,))
    assert decide(overridden, write("src/keys.py")).codes == ("HOOK_DENIED_BY_PLAN",)
