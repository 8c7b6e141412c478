"""The pure decision over literal facts: one test per rule, the tables, messages and overrides.

Deterministic on purpose: this file guards the module under mutation testing (its property
tests live in ``tests/property/test_hook_decision_properties.py``).
"""

from __future__ import annotations

import pytest

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
from plangate.verdict import Reason
from support.hook_decision import NO_TASK, SURFACES, TASK, WITH_TASK, codes, protected, write


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
    task = TaskFacts(
        "TASK-0001",
        "env",
        True,
        allowed_paths=("src/**",),
        denied_paths=("src/secret/**", "src/keys.py"),
    )
    facts = Facts(surfaces=SURFACES, task=task, locked_tasks=frozenset({"TASK-0001"}))
    assert codes(facts, write("src/app.py")) == ()
    for path in ("src/secret/a.py", "src/keys.py", "src/KEYS.py", "src/keys.py/x"):
        result = decide(facts, write(path))
        assert result.verdict == DENY and result.codes == ("HOOK_DENIED_BY_PLAN",), path
    # a human override lifts an out-of-scope write, never a path the plan denies
    grant = OverrideGrant("g1", ("src/keys.py",))
    overridden = Facts(
        surfaces=SURFACES, task=task, locked_tasks=frozenset({"TASK-0001"}), overrides=(grant,)
    )
    assert decide(overridden, write("src/keys.py")).codes == ("HOOK_DENIED_BY_PLAN",)


# -- every row of the module's tables, the messages, the recorded facts ------------------

OPEN_TASK = WITH_TASK._replace(surfaces=protected(), task=TASK._replace(allowed_paths=("**",)))


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (".plangate/protected-surfaces.toml", "HOOK_PLANGATE_STATE"),
        (".git", "HOOK_GIT_INTERNALS"),
        (".git/refs/heads/main", "HOOK_GIT_INTERNALS"),
        (".claude/settings.json", "HOOK_CONFIG_FILE"),
        (".claude/settings.local.json", "HOOK_CONFIG_FILE"),
        (".codex/hooks.json", "HOOK_CONFIG_FILE"),
        (".codex/config.toml", "HOOK_CONFIG_FILE"),
        (".cursor/hooks.json", "HOOK_CONFIG_FILE"),
        (".Cursor/Hooks.json", "HOOK_CONFIG_FILE"),
    ],
)
def test_each_guarded_path_has_its_code(path: str, code: str) -> None:
    result = decide(OPEN_TASK, write(path))
    assert result.codes == (code,)
    assert result.reasons[0].message.startswith("writes to ")
    assert result.reasons[0].message.endswith(f"are never allowed from an agent: {path}")


def test_other_agent_files_are_not_guarded() -> None:
    for path in (".claude/agents/a.md", ".codex/notes.md", ".cursor/rules.md", ".gitignore"):
        assert decide(OPEN_TASK, write(path)).verdict == ALLOW, path


@pytest.mark.parametrize(
    "path",
    [
        ".plangate/ledger.sqlite3",
        ".plangate/ledger.sqlite3-wal",
        ".plangate/ledger.sqlite3-shm",
        ".plangate/ledger.sqlite3-journal",
        ".plangate/ledger.lock",
        ".plangate/locks/a/b",
        ".plangate/session/claude-1.json",
        ".plangate/runs/TASK-0009-1/tree/src/app.py",
        ".plangate/doctor-canary",
        "docs/working/TASK-0009/run.ndjson",
        ".claude/settings.local.json",
    ],
)
def test_each_local_file_is_exempt_from_working_tree_checks_only(path: str) -> None:
    """Local state is never blamed in the working tree; a commit or push carrying it (and
    any tool call writing it) is judged like any path."""
    assert effect_exempt(path)
    for facts in (WITH_TASK, NO_TASK):
        assert decide(facts, write(path, kind=ActionKind.EFFECT)).verdict == ALLOW
        assert decide(facts, write(path, kind=ActionKind.COMMIT)).verdict == DENY
        assert decide(facts, write(path, kind=ActionKind.PUSH)).verdict == DENY
        assert decide(facts, write(path)).verdict == DENY


def test_plangate_ignore_file_is_blamed_nowhere_in_history_but_never_written_by_a_tool() -> None:
    path = ".plangate/.gitignore"
    for kind in (ActionKind.EFFECT, ActionKind.COMMIT, ActionKind.PUSH):
        assert effect_exempt(path, kind)
        assert decide(NO_TASK, write(path, kind=kind)).verdict == ALLOW
    assert codes(NO_TASK, write(path))[0] == "HOOK_PLANGATE_STATE"


@pytest.mark.parametrize(
    "path",
    [
        ".plangate/protected-surfaces.toml",
        ".plangate/trust.toml",
        ".plangate/ledger-checkpoint.json",
        ".plangate/session",
        ".claude/settings.json",
        ".claude/settings.local.json.bak",
        "docs/working/TASK-0009/approvals/c3.json",
        "src/.plangate/locks/x",
    ],
)
def test_nothing_else_is_exempt_from_working_tree_checks(path: str) -> None:
    assert not effect_exempt(path)
    assert decide(NO_TASK, write(path, kind=ActionKind.EFFECT)).verdict == DENY


@pytest.mark.parametrize(
    "name",
    ["pbi-input.md", "plan.md", "todo.md", "test-cases.md", "review-self.md", "review-external.md"],
)
def test_each_planning_file_is_writable_without_a_task(name: str) -> None:
    path = f"docs/working/TASK-0002/{name}"
    assert planning_file_task(path) == "TASK-0002"
    assert decide(NO_TASK, write(path)).verdict == ALLOW
    locked = NO_TASK._replace(locked_tasks=frozenset({"TASK-0002"}))
    assert codes(locked, write(path)) == ("HOOK_PLAN_PACKAGE_LOCKED",)


@pytest.mark.parametrize(
    ("facts", "code"),
    [
        (NO_TASK, "HOOK_NO_ACTIVE_TASK"),
        (WITH_TASK, "HOOK_OUTSIDE_SCOPE"),
        (WITH_TASK._replace(task=TASK._replace(allowed_paths=None)), "HOOK_SCOPE_UNDEFINED"),
        (
            WITH_TASK._replace(task=TASK._replace(verified=False, allowed_paths=("docs/**",))),
            "HOOK_TASK_NOT_VERIFIED",
        ),
    ],
)
def test_each_liftable_code_is_lifted_by_a_matching_grant(facts: Facts, code: str) -> None:
    assert codes(facts, write("docs/guide.md")) == (code,)
    granted = facts._replace(overrides=(OverrideGrant("other", ("lib/**",)), GRANT))
    result = decide(granted, write("docs/guide.md"))
    assert result.verdict == ALLOW
    assert result.facts["overrides_used"] == ["ovr-1"]


def test_a_grant_lifts_nothing_when_a_rule_it_cannot_lift_also_fails() -> None:
    facts = NO_TASK._replace(
        overrides=(OverrideGrant("g", ("**",)),), locked_tasks=frozenset({"TASK-0002"})
    )
    result = decide(facts, write("docs/working/TASK-0002/plan.md"))
    assert result.codes == ("HOOK_PLAN_PACKAGE_LOCKED",)
    assert "overrides_used" not in result.facts


@pytest.mark.parametrize(
    ("code", "start"),
    [
        ("HOOK_SHELL_UNCLASSIFIABLE", "the shell command cannot be classified"),
        ("HOOK_TOOL_UNKNOWN", "the tool is not one PlanGate can judge"),
        ("HOOK_PATCH_UNREADABLE", "the patch names no file PlanGate can read"),
        ("HOOK_SOMETHING_NEW", "the shell command cannot be classified"),
    ],
)
def test_each_unreadable_action_has_its_text(code: str, start: str) -> None:
    action = Action(ActionKind.SHELL, (), ("why one", "why two"), unclassifiable_code=code)
    (reason,) = decide(NO_TASK, action).reasons
    assert reason.code == code
    assert reason.message.startswith(start)
    assert reason.message.endswith(": why one; why two")
    assert reason.hint


def test_a_commit_inside_the_box_is_denied_and_elsewhere_judged_by_its_targets() -> None:
    in_box = WITH_TASK._replace(box_run="TASK-0001-20261203T093100Z-4bf50be3",
                                confinement="exec:bubblewrap")
    commit = Action(ActionKind.SHELL, (Target("src/app.py", "src/app.py"),), commits=True)
    assert codes(in_box, commit) == ("HOOK_BOX_COMMIT",)
    assert decide(WITH_TASK, commit).verdict == ALLOW
    assert decide(in_box, commit._replace(commits=False)).verdict == ALLOW
    assert decide(in_box, commit._replace(kind=ActionKind.EFFECT)).verdict == ALLOW


def test_confinement_allows_unreadable_and_code_running_commands_only() -> None:
    confined = NO_TASK._replace(confinement="exec:bwrap")
    unreadable = Action(ActionKind.SHELL, (), ("npm",))
    runs = Action(ActionKind.SHELL, (), runs_code=("python3 x.py",))
    skips = Action(ActionKind.SHELL, (), skips_hooks=("--no-verify",))
    tool = Action(ActionKind.SHELL, (), ("tool",), unclassifiable_code="HOOK_TOOL_UNKNOWN")
    assert codes(NO_TASK, unreadable) == ("HOOK_SHELL_UNCLASSIFIABLE",)
    assert codes(NO_TASK, runs) == ("HOOK_SHELL_RUNS_CODE",)
    assert decide(NO_TASK, runs).reasons[0].evidence == ("python3 x.py",)
    result = decide(confined, unreadable)
    assert (result.verdict, result.facts["confinement"]) == (ALLOW, "exec:bwrap")
    assert decide(confined, runs).verdict == ALLOW
    assert codes(confined, skips) == ("HOOK_SHELL_SKIPS_HOOKS",)
    assert decide(confined, skips).reasons[0].evidence == ("--no-verify",)
    assert codes(confined, tool) == ("HOOK_TOOL_UNKNOWN",)
    # shell facts are judged only for shell actions
    assert decide(NO_TASK, runs._replace(kind=ActionKind.EFFECT)).verdict == ALLOW
    assert decide(NO_TASK, skips._replace(kind=ActionKind.EFFECT)).verdict == ALLOW
    assert decide(NO_TASK, unreadable._replace(kind=ActionKind.EFFECT)).verdict == ALLOW
    assert "confinement" not in decide(NO_TASK, Action(ActionKind.SHELL)).facts


def test_the_recorded_facts_name_the_action() -> None:
    action = Action(
        ActionKind.WRITE, (Target("src/app.py", "src/app.py"), Target("/etc/x", None)), label="Edit"
    )
    result = decide(WITH_TASK, action)
    assert result.facts == {
        "action": "write",
        "label": "Edit",
        "task": "TASK-0001",
        "targets": ["src/app.py", "/etc/x"],
    }
    read = decide(NO_TASK, Action(ActionKind.READ, (Target("a", "a"),), label="Read"))
    assert read.facts == {"action": "read", "label": "Read", "task": None, "targets": ["a"]}


def test_an_unresolved_target_without_a_reason_is_invalid() -> None:
    (reason,) = decide(WITH_TASK, Action(ActionKind.WRITE, (Target("??", None),))).reasons
    assert reason == Reason(
        "HOOK_TARGET_INVALID",
        "unresolvable target: ??",
        "write only inside the repository",
        ("??",),
    )


def test_messages_name_the_task_and_what_is_wrong() -> None:
    stale = WITH_TASK._replace(task=TASK._replace(verified=False, verification_message="stale"))
    (reason,) = decide(stale, write("src/app.py")).reasons
    assert (
        reason.message == "the record of TASK-0001 does not verify against HEAD (stale): src/app.py"
    )
    quiet = WITH_TASK._replace(task=TASK._replace(verified=False))
    assert (
        decide(quiet, write("src/app.py"))
        .reasons[0]
        .message.startswith("the record of TASK-0001 does not verify against HEAD: ")
    )
    unknown = WITH_TASK._replace(task=TASK._replace(allowed_paths=None, scope_problem="no section"))
    assert decide(unknown, write("src/app.py")).reasons[0].message == (
        "the allowed paths of TASK-0001 are unknown or empty (no section): src/app.py"
    )
    assert decide(WITH_TASK, write("lib/x.py")).reasons[0].message == (
        "the target is outside the allowed paths of TASK-0001: lib/x.py"
    )
    broken = Facts(surfaces=None, surfaces_problem="bad toml")
    assert (
        decide(broken, write("a.md"))
        .reasons[0]
        .message.startswith("protected surfaces could not be resolved (bad toml)")
    )
    task = TaskFacts(
        "TASK-0001", "env", True, allowed_paths=("src/**",), denied_paths=("src/keys.py",)
    )
    denied = decide(Facts(surfaces=SURFACES, task=task), write("src/keys.py"))
    assert denied.reasons[0].message.startswith(
        "the plan of TASK-0001 says not to touch 'src/keys.py'"
    )


def test_a_task_problem_is_listed_without_evidence() -> None:
    facts = NO_TASK._replace(task_problem=Reason("HOOK_TASK_INVALID", "bad id", "fix it"))
    (reason,) = decide(facts, Action(ActionKind.SHELL)).reasons
    assert reason == Reason("HOOK_TASK_INVALID", "bad id", "fix it", ())


@pytest.mark.parametrize(("count", "suffix"), [(8, ""), (9, " (+1 more)")])
def test_a_message_names_eight_paths(count: int, suffix: str) -> None:
    paths = [f"n{i}.txt" for i in range(count)]
    (reason,) = decide(NO_TASK, write(*paths)).reasons
    assert reason.message == (
        "no active task: only planning files may be written: " + ", ".join(paths[:8]) + suffix
    )


def test_own_files_are_not_edits_for_every_effect_kind() -> None:
    facts = WITH_TASK._replace(surfaces=protected("**/approvals/**"))
    own = ("docs/working/TASK-0001/approvals/c3.json", "docs/working/TASK-0001/todo.md")
    for kind in (ActionKind.EFFECT, ActionKind.COMMIT, ActionKind.PUSH):
        assert decide(facts, write(*own, kind=kind)).verdict == ALLOW, kind
    other_task = write("docs/working/TASK-0002/plan.md", kind=ActionKind.EFFECT)
    assert decide(facts, other_task).verdict == DENY
    not_planning = write("docs/working/TASK-0001/notes.md", kind=ActionKind.EFFECT)
    assert decide(facts, not_planning).verdict == DENY


def directory(path: str) -> Action:
    return Action(ActionKind.SHELL, (Target(path, path, directory=True),), label="mkdir")


def test_a_directory_on_the_way_to_an_allowed_path_may_be_created() -> None:
    task = TASK._replace(allowed_paths=("src/pkg/mod.py", "tests/**", "lib/*/x.py"))
    facts = WITH_TASK._replace(task=task)
    for path in ("src", "src/pkg", "tests", "tests/unit", "tests/unit/deep", "lib", "lib/a"):
        assert decide(facts, directory(path)).verdict == ALLOW, path
    for path in ("docs", "src/other", "src/pkg/mod.py/x", "lib/a/b"):
        assert codes(facts, directory(path)) == ("HOOK_OUTSIDE_SCOPE",), path
    # the same paths as files are not parents of anything
    assert codes(facts, write("src/pkg")) == ("HOOK_OUTSIDE_SCOPE",)


def test_without_a_task_only_directories_of_planning_files_may_be_created() -> None:
    for path in ("docs", "docs/working", "docs/working/TASK-0003"):
        assert decide(NO_TASK, directory(path)).verdict == ALLOW, path
    for path in ("src", "docs/other", "docs/working/TASK-0003/sub"):
        assert codes(NO_TASK, directory(path)) == ("HOOK_NO_ACTIVE_TASK",), path


def test_a_shell_action_without_targets_is_allowed_but_a_write_is_not() -> None:
    assert decide(WITH_TASK, Action(ActionKind.SHELL)).verdict == ALLOW
    assert decide(WITH_TASK, Action(ActionKind.EFFECT)).verdict == ALLOW
    (reason,) = decide(WITH_TASK, Action(ActionKind.WRITE)).reasons
    assert reason == Reason(
        "HOOK_NO_TARGET",
        "the write names no target path",
        "the tool input must carry the file path",
    )


# -- the verdict words, the recorded facts and the defaults of the fact types ---------------


def test_the_verdict_words_are_allow_and_deny() -> None:
    allowed = decide(WITH_TASK, write("src/app.py"))
    denied = decide(WITH_TASK, write("lib/x.py"))
    assert (allowed.verdict, int(allowed.exit_code)) == ("ALLOW", 0)
    assert (denied.verdict, int(denied.exit_code)) == ("DENY", 1)


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (ActionKind.READ, "read"),
        (ActionKind.WRITE, "write"),
        (ActionKind.SHELL, "shell"),
        (ActionKind.EFFECT, "effect"),
        (ActionKind.COMMIT, "commit"),
        (ActionKind.PUSH, "push"),
    ],
)
def test_each_action_kind_is_recorded_by_its_name(kind: ActionKind, name: str) -> None:
    assert decide(WITH_TASK, Action(kind, (Target("src/app.py", "src/app.py"),))).facts == {
        "action": name,
        "label": "",
        "task": "TASK-0001",
        "targets": ["src/app.py"],
    }


def test_an_override_grant_is_reusable_unless_it_says_one_shot() -> None:
    assert OverrideGrant("g", ("docs/**",)).one_shot is False
    assert OverrideGrant("g", ("docs/**",), True).one_shot is True


def test_messages_without_a_detail_have_no_parentheses() -> None:
    unknown = WITH_TASK._replace(task=TASK._replace(allowed_paths=()))
    assert decide(unknown, write("src/app.py")).reasons[0].message == (
        "the allowed paths of TASK-0001 are unknown or empty: src/app.py"
    )
    (reason,) = decide(Facts(surfaces=None, task=TASK), write("src/app.py")).reasons
    assert reason.message == "protected surfaces could not be resolved: src/app.py"


def test_an_unreadable_tool_policy_has_its_text() -> None:
    action = Action(
        ActionKind.SHELL, (), ("tools.toml: bad",), unclassifiable_code="HOOK_TOOL_POLICY_INVALID"
    )
    (reason,) = decide(NO_TASK, action).reasons
    assert reason == Reason(
        "HOOK_TOOL_POLICY_INVALID",
        "the repository's tool policy cannot be read, so no MCP tool is declared read-only: "
        "tools.toml: bad",
        "a human fixes .plangate/tools.toml ([mcp] read_only = [names or globs])",
        ("tools.toml: bad",),
    )


def test_session_files_are_exempt_from_effect_checks_only() -> None:
    path = ".plangate/session/claude-1.json"
    assert effect_exempt(path)
    assert decide(WITH_TASK, write(path, kind=ActionKind.EFFECT)).verdict == ALLOW
    assert codes(OPEN_TASK, write(path, kind=ActionKind.COMMIT)) == ("HOOK_PLANGATE_STATE",)


def test_a_directory_on_the_way_through_a_double_star_may_be_created() -> None:
    facts = WITH_TASK._replace(task=TASK._replace(allowed_paths=("lib/**/x.py", "a*/*b/**/y.py")))
    for path in ("lib", "lib/a", "lib/a/b", "lib/a/b/c", "a1", "a1/2b", "a1/2b/c/d"):
        assert decide(facts, directory(path)).verdict == ALLOW, path
    for path in ("other", "other/a/b", "a1/c", "q/r/s/t"):
        assert codes(facts, directory(path)) == ("HOOK_OUTSIDE_SCOPE",), path


def test_a_directory_named_like_a_planning_file_of_no_task_is_not_a_planning_directory() -> None:
    # a planning file's name as a directory, or a task directory that is not TASK-0000
    for path in ("docs/working/TASK-x/plan.md", "docs/working/TASK-0003/plan.md/sub"):
        assert codes(NO_TASK, directory(path)) == ("HOOK_NO_ACTIVE_TASK",), path


def test_a_read_is_allowed_whatever_it_reads() -> None:
    for path in (".git/config", "CLAUDE.md", "docs/working/TASK-0002/approvals/c3.json", "x.py"):
        result = decide(NO_TASK, Action(ActionKind.READ, (Target(path, path),)))
        assert (result.verdict, result.reasons) == (ALLOW, ()), path


RECORD_PART = "docs/working/TASK-0002/approvals/c3.json"
STATEMENT_PART = "docs/working/TASK-0002/approvals/review-c1.json.sig"


def test_a_verified_approval_part_is_no_change_in_commits_pushes_and_the_working_tree() -> None:
    facts = NO_TASK._replace(
        surfaces=protected("**/approvals/**"),
        approval_parts={RECORD_PART: None, STATEMENT_PART: None},
    )
    for kind in (ActionKind.EFFECT, ActionKind.COMMIT, ActionKind.PUSH):
        assert decide(facts, write(RECORD_PART, STATEMENT_PART, kind=kind)).verdict == ALLOW
    # Never for a tool call: an agent writing a verified part is still denied before it runs.
    for kind in (ActionKind.WRITE, ActionKind.SHELL):
        assert "HOOK_APPROVAL_FILE" in codes(facts, write(STATEMENT_PART, kind=kind))


def test_an_unverified_approval_part_is_refused_with_why() -> None:
    why = Reason("HOOK_APPROVAL_PART_UNVERIFIED", "it is a statement of TASK-0001", "re-sign")
    facts = NO_TASK._replace(approval_parts={STATEMENT_PART: why, RECORD_PART: None})
    found = codes(facts, write(STATEMENT_PART, RECORD_PART, "src/other.py", kind=ActionKind.COMMIT))
    assert found[:2] == ("HOOK_APPROVAL_PART_UNVERIFIED", "HOOK_APPROVAL_FILE")
    assert "HOOK_NO_ACTIVE_TASK" in found  # the other path is still judged
    result = decide(facts, write(STATEMENT_PART, RECORD_PART, kind=ActionKind.COMMIT))
    assert all(RECORD_PART not in r.evidence for r in result.reasons)
