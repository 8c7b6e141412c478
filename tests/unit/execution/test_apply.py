"""The isolated run's judgement (pure): ci check's rules, then exec's own rows."""

from __future__ import annotations

import pytest

from plangate.execution.apply import (
    RULES,
    SPECIAL_KINDS,
    ResultFacts,
    TreeFact,
    WorkspaceFact,
    branch_for,
    judge,
    link_leaves_repository,
)
from plangate.plan.scope import derive_scope
from plangate.surfaces import load_surfaces_bytes
from plangate.verdict import Result

PLAN = b"""# plan

## Files / Components to Touch

- `src/greet.py`
- `src/lib/**`
"""
SURFACES = b"""version = 1

[[surface]]
pattern = "**/CLAUDE.md"
class = "rules"
reason = "agent rules"

[[surface]]
pattern = "src/lib/secret.py"
class = "policy-spec"
reason = "a protected file inside the scope"
"""
TEMPLATE = b"# PLANGATE-BUNDLED-TEMPLATE: x\n" + SURFACES


def _facts(changed: tuple[str, ...], **changes: object) -> ResultFacts:
    base = ResultFacts(
        task_id="TASK-0001",
        approved="a" * 40,
        result="b" * 40,
        changed=changed,
        unmatchable=(),
        surfaces=load_surfaces_bytes(SURFACES, "downstream", "x"),
        verification=Result("ACCEPTED"),
        plan=PLAN,
        tree=tuple(TreeFact(p, "100644", None) for p in changed),
        workspace=(),
    )
    facts = base._replace(**changes)
    if "verification" in changes:
        return facts
    # the record exec verified approves the scope derived from this plan (its digest)
    approved = {"record": {"scope_digest": derive_scope(facts.plan).digest}}
    return facts._replace(verification=Result("ACCEPTED", (), approved))


def test_in_scope_changes_are_accepted() -> None:
    result = judge(_facts(("src/greet.py", "src/lib/a/b.py")))
    assert result.verdict == "ACCEPTED", result.reasons
    assert result.facts["exec_rules"] == []


def test_out_of_scope_is_rejected_with_ci_codes() -> None:
    result = judge(_facts(("src/greet.py", "Makefile")))
    assert result.verdict == "REJECTED"
    assert result.codes == ("CI_OUTSIDE_SCOPE",)
    assert result.reasons[0].evidence == ("Makefile",)


def test_protected_surface_inside_the_scope_needs_a_human() -> None:
    result = judge(_facts(("src/lib/secret.py",)))
    assert result.verdict == "HUMAN_REQUIRED"
    assert result.codes == ("CI_PROTECTED_SURFACE",)


@pytest.mark.parametrize(
    "path",
    [
        "docs/working/TASK-0001/plan.md",
        "docs/working/TASK-0001/approvals/c3.json",
        "docs/working/TASK-0002/plan.md",
        ".plangate/protected-surfaces.toml",
        ".plangate/.gitignore",
    ],
)
def test_plan_packages_and_plangate_state_are_never_changed_by_a_run(path: str) -> None:
    result = judge(_facts(("src/greet.py", path)))
    assert result.verdict == "REJECTED"
    assert "EXEC_PLAN_PACKAGE_CHANGED" in result.codes
    assert result.facts["exec_rules"] == ["plan_package_untouched"]


def test_unmatchable_paths_are_rejected_and_counted_for_plan_packages() -> None:
    result = judge(_facts((), unmatchable=(("docs/working/TASK-0001/x\n", "PATH_CONTROL_CHAR"),)))
    assert result.verdict == "REJECTED"
    assert "CI_PATH_UNMATCHABLE" in result.codes
    assert "EXEC_PLAN_PACKAGE_CHANGED" in result.codes


def test_an_unverified_plan_allows_nothing() -> None:
    result = judge(_facts(("src/greet.py",), plan=None))
    assert result.verdict == "REJECTED"
    assert "CI_SCOPE_UNDEFINED" in result.codes


def test_a_verification_that_did_not_accept_allows_nothing() -> None:
    result = judge(_facts(("src/greet.py",), verification=Result("REJECTED")))
    assert result.verdict == "REJECTED"
    assert "CI_TASK_NOT_VERIFIED" in result.codes


def test_the_bundled_template_never_lets_a_result_through() -> None:
    surfaces = load_surfaces_bytes(TEMPLATE, "downstream", "x")
    result = judge(_facts(("src/greet.py",), surfaces=surfaces))
    assert result.verdict == "HUMAN_REQUIRED"
    assert "HO_BOUNDARY_UNDEFINED" in result.codes


def test_rejection_is_stricter_than_a_human_decision() -> None:
    result = judge(_facts(("src/lib/secret.py", "Makefile")))
    assert result.verdict == "REJECTED"
    assert set(result.codes) == {"CI_OUTSIDE_SCOPE", "CI_PROTECTED_SURFACE"}


def test_rule_table_and_branch_name() -> None:
    assert [rule.name for rule in RULES] == [
        "plan_package_untouched",
        "no_links_leaving_the_repository",
        "no_links",
        "no_gitlinks",
        "no_nested_repositories",
        "no_fifos",
        "no_sockets",
        "no_devices",
        "workspace_readable",
        "regular_modes",
    ]
    assert branch_for("TASK-0001-x") == "plangate/runs/TASK-0001-x"


def test_a_path_the_plan_says_not_to_touch_never_reaches_the_repository() -> None:
    plan = PLAN + b"\n### Do not touch\n\n- `src/lib/vendor/`\n"
    kept = judge(_facts(("src/lib/a.py",), plan=plan))
    assert kept.verdict == "ACCEPTED", kept.reasons
    refused = judge(_facts(("src/lib/a.py", "src/lib/vendor/x.py"), plan=plan))
    assert refused.verdict == "REJECTED"
    assert refused.codes == ("CI_OUTSIDE_SCOPE",)
    assert refused.reasons[0].evidence == ("src/lib/vendor/x.py",)


def _with_tree(*entries: TreeFact, workspace: tuple[WorkspaceFact, ...] = ()) -> ResultFacts:
    return _facts(tuple(e.path for e in entries), tree=entries, workspace=workspace)


@pytest.mark.parametrize("mode", ["100644", "100755"])
def test_regular_files_of_either_mode_are_accepted(mode: str) -> None:
    result = judge(_with_tree(TreeFact("src/greet.py", mode, None)))
    assert result.verdict == "ACCEPTED", result.reasons


@pytest.mark.parametrize(
    ("target", "code"),
    [
        (b"/home/me/.ssh/id_ed25519", "EXEC_RESULT_SYMLINK_ESCAPES"),
        (b"../../../etc/passwd", "EXEC_RESULT_SYMLINK_ESCAPES"),
        (b"../../..", "EXEC_RESULT_SYMLINK_ESCAPES"),
        (b"", "EXEC_RESULT_SYMLINK_ESCAPES"),
        (b"../keep.py", "EXEC_RESULT_SYMLINK"),
        (b"a/b.py", "EXEC_RESULT_SYMLINK"),
    ],
)
def test_every_link_in_scope_is_refused_with_where_it_points(target: bytes, code: str) -> None:
    result = judge(_with_tree(TreeFact("src/lib/link", "120000", target)))
    assert result.verdict == "REJECTED"
    assert result.codes == (code,)
    assert result.reasons[0].evidence == ("src/lib/link",)


@pytest.mark.parametrize(
    ("path", "target", "leaves"),
    [
        ("a.txt", b"b.txt", False),
        ("a.txt", b"../a.txt", True),
        ("d/a.txt", b"../a.txt", False),
        ("d/a.txt", b"../../a.txt", True),
        ("d/a.txt", b"x/../../../a", True),
        ("a.txt", b"/etc/passwd", True),
        ("a.txt", b".", False),
        ("d/a.txt", b"\xff\xfe", False),
        ("d/a.txt", b"../../\xff", True),
        ("a.txt", b"/\xff", True),
        ("a.txt", b"a\x00b", True),
        ("d/a.txt", b"../.git/hooks/pre-commit", True),
        ("a.txt", b".GIT/config", True),
        ("a.txt", b".git", True),
        ("d/a.txt", b"../.gitignore", False),
        ("a.txt", b".github/workflows/ci.yml", False),
        ("d/a.txt", b"e/../../.git/x", True),
    ],
)
def test_link_leaving_the_repository(path: str, target: bytes, leaves: bool) -> None:
    assert link_leaves_repository(path, target) is leaves


@pytest.mark.parametrize(
    ("fact", "code"),
    [
        (TreeFact("src/lib/sub", "160000", None), "EXEC_RESULT_GITLINK"),
        (TreeFact("src/lib/odd", "100664", None), "EXEC_RESULT_MODE_UNSUPPORTED"),
    ],
)
def test_gitlinks_and_other_modes_are_refused(fact: TreeFact, code: str) -> None:
    result = judge(_with_tree(fact))
    assert result.verdict == "REJECTED"
    assert result.codes == (code,)


WORKSPACE_KINDS = [
    (
        "nested_repository",
        "EXEC_RESULT_NESTED_REPOSITORY",
        "nested repositor(ies) (a directory holding .git)",
    ),
    ("fifo", "EXEC_RESULT_FIFO", "FIFO(s)"),
    ("socket", "EXEC_RESULT_SOCKET", "socket(s)"),
    ("device", "EXEC_RESULT_DEVICE", "device node(s)"),
    ("unreadable", "EXEC_RESULT_UNREADABLE", "director(ies) PlanGate could not read"),
]


@pytest.mark.parametrize(("kind", "code", "what"), WORKSPACE_KINDS)
def test_workspace_entries_git_cannot_record_as_files_are_refused(
    kind: str, code: str, what: str
) -> None:
    facts = _with_tree(
        TreeFact("src/greet.py", "100644", None), workspace=(WorkspaceFact("src/lib/x", kind),)
    )
    result = judge(facts)
    assert result.verdict == "REJECTED"
    assert result.codes == (code,)
    assert result.reasons[0].evidence == ("src/lib/x",)
    assert result.reasons[0].message == f"the result holds 1 {what}: src/lib/x"


def test_every_kind_the_walk_reports_has_its_row() -> None:
    assert tuple(kind for kind, _, _ in WORKSPACE_KINDS) == SPECIAL_KINDS


def test_every_file_kind_rule_has_its_own_code() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    facts = _with_tree(
        TreeFact("src/lib/a", "120000", b"/x"),
        TreeFact("src/lib/b", "120000", b"a"),
        TreeFact("src/lib/c", "160000", None),
        TreeFact("src/lib/d", "100600", None),
        workspace=tuple(
            WorkspaceFact(f"src/lib/{k}", k)
            for k in ("nested_repository", "fifo", "socket", "device", "unreadable")
        ),
    )
    result = judge(facts)
    assert len(result.codes) == len(set(result.codes)) == 9


def test_a_link_whose_target_git_did_not_hand_over_counts_as_leaving() -> None:
    result = judge(_with_tree(TreeFact("src/lib/link", "120000", None)))
    assert result.codes == ("EXEC_RESULT_SYMLINK_ESCAPES",)
    assert result.reasons[0].message.startswith(
        "the result holds 1 symbolic link(s) pointing outside the repository: src/lib/link -> "
    )


def test_plangate_s_own_directory_as_a_file_is_refused_too() -> None:
    result = judge(_facts(("src/greet.py", ".plangate")))
    assert "EXEC_PLAN_PACKAGE_CHANGED" in result.codes
    assert result.facts["exec_rules"] == ["plan_package_untouched"]


@pytest.mark.parametrize(
    ("raw", "package"),
    [
        ("docs/working/TASK-0001/x\n", True),
        (".plangate/x\n", True),
        ("src/lib/x\n", False),
        ("docs/x\n", False),
    ],
)
def test_an_unmatchable_path_counts_for_the_plan_package_only_under_its_directories(
    raw: str, package: bool
) -> None:
    result = judge(_facts((), unmatchable=((raw, "PATH_CONTROL_CHAR"),)))
    assert result.verdict == "REJECTED"
    assert "CI_PATH_UNMATCHABLE" in result.codes
    assert ("EXEC_PLAN_PACKAGE_CHANGED" in result.codes) is package


def test_a_reason_lists_the_first_eight_paths_and_keeps_them_all_as_evidence() -> None:
    paths = tuple(f".plangate/p{i}" for i in range(9))
    result = judge(_facts(("src/greet.py", *paths)))
    reason = next(r for r in result.reasons if r.code == "EXEC_PLAN_PACKAGE_CHANGED")
    assert reason.message == (
        "the run changed 9 path(s) of a plan package or of PlanGate's own directory: "
        + ", ".join(paths[:8])
    )
    assert reason.evidence == paths
    fifos = tuple(WorkspaceFact(f"src/lib/f{i}", "fifo") for i in range(9))
    result = judge(_with_tree(TreeFact("src/greet.py", "100644", None), workspace=fifos))
    assert result.reasons[0].message == "the result holds 9 FIFO(s): " + ", ".join(
        f.path for f in fifos[:8]
    )
    assert result.reasons[0].evidence == tuple(f.path for f in fifos)
