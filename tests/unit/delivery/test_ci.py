"""The pull-request decision (pure): each row of the table with built facts, the verdict
of the strictest failing row, every failing row listed in table order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plangate.authority.root import TrustRoot
from plangate.authority.signers import AllowedSigners
from plangate.authority.trustfile import TrustConfig
from plangate.delivery.ci import RULES, PullRequestFacts, TaskFacts, decide, touched_tasks
from plangate.delivery.pr_policy import PullRequestPolicy, TasklessRule
from plangate.plan.scope import derive_scope
from plangate.surfaces import ProtectedPattern, ResolvedSurfaces
from plangate.verdict import Reason, Result

ROOT = Path(__file__).resolve().parents[3]
BASE, HEAD = "b" * 40, "h" * 40
PLAN = b"# Plan\n\n## Files / Components to Touch\n- `src/**`\n"
ARTIFACTS = ("plan.md", "todo.md")
SURFACES = ResolvedSurfaces(
    "downstream",
    "x",
    None,
    (
        ProtectedPattern("**/approvals/**", "approval", "records"),
        ProtectedPattern("AGENTS.md", "rules", "agent rules"),
    ),
)
def approved(plan: bytes = PLAN, **facts: object) -> Result:
    """The acceptor's ACCEPTED outcome of a record that carries ``plan``'s scope digest."""
    return Result("ACCEPTED", (), {"record": {"scope_digest": derive_scope(plan).digest}, **facts})


ACCEPTED_TASK = TaskFacts("TASK-0001", None, approved(), PLAN, ARTIFACTS)
TASK_FILES = ("docs/working/TASK-0001/plan.md", "docs/working/TASK-0001/approvals/c3.json")

EXPECTED_ORDER = (
    "head_checked_out",
    "surfaces_available",
    "trust_root_readable",
    "tasks_verified",
    "approvals_fresh",
    "paths_matchable",
    "policy_readable",
    "in_scope",
    "adopts_plangate",
    "taskless_approval",
    "policy_unchanged",
    "protected_surfaces",
    "surfaces_defined",
    "trust_root_unchanged",
    "no_symlinks",
    "no_gitlinks",
)


def facts(
    *changed: str,
    tasks=(ACCEPTED_TASK,),
    surfaces=SURFACES,
    checked_out=HEAD,
    unmatchable=(),
    dirty=(),
):
    return PullRequestFacts(
        BASE,
        HEAD,
        checked_out,
        (*TASK_FILES, *changed),
        surfaces,
        tuple(tasks),
        "m" * 40,
        unmatchable,
        dirty,
    )


def codes(result: Result) -> list[str]:
    return [r.code for r in result.reasons]


def test_the_table_order():
    assert tuple(rule.name for rule in RULES) == EXPECTED_ORDER
    assert [rule.verdict for rule in RULES] == ["REJECTED"] * 8 + ["HUMAN_REQUIRED"] * 8


def test_the_documented_table_is_the_tables_order():
    doc = (ROOT / "docs" / "agents.md").read_text()
    section = doc[doc.index("## CI: `plangate ci check`") : doc.index("## doctor")]
    names = re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE)
    assert names == [rule.name for rule in RULES]


def test_in_scope_task_work_is_accepted():
    result = decide(facts("src/app.py"))
    assert (result.verdict, int(result.exit_code), codes(result)) == ("ACCEPTED", 0, [])
    assert result.facts["tasks"]["TASK-0001"]["allowed_paths"] == ["src/**"]
    assert result.facts["protected_paths"] == []  # the task's own files are covered


# One set of facts per row, decided by that row alone (and the verdict it gives).
ROW_CASES = {
    "head_checked_out": (facts(checked_out="c" * 40), "REJECTED", ["CI_HEAD_NOT_CHECKED_OUT"]),
    "surfaces_available": (
        facts(
            "src/app.py",
            surfaces=ResolvedSurfaces(
                "downstream", "x", None, (), Reason("SURFACES_VERSION", "bad")
            ),
        ),
        "REJECTED",
        ["CI_SURFACES_UNAVAILABLE"],
    ),
    "tasks_verified": (
        facts(
            tasks=(
                ACCEPTED_TASK._replace(
                    outcome=Result(
                        "REJECTED", (Reason("C3_PLAN_HASH_MISMATCH", "plan changed"),), {}
                    )
                ),
            )
        ),
        "REJECTED",
        ["CI_TASK_NOT_VERIFIED", "CI_PROTECTED_SURFACE"],
    ),
    "paths_matchable": (
        facts(unmatchable=(("a\tb.py", "PATH_HAS_CONTROL"),)),
        "REJECTED",
        ["CI_PATH_UNMATCHABLE"],
    ),
    "in_scope": (facts("stray.py"), "REJECTED", ["CI_OUTSIDE_SCOPE"]),
    "protected_surfaces": (facts("src/approvals/x.py"), "HUMAN_REQUIRED", ["CI_PROTECTED_SURFACE"]),
    "surfaces_defined": (
        facts(
            "src/app.py",
            surfaces=SURFACES._replace(
                provenance="bundled_template", problem=Reason("HO_BOUNDARY_UNDEFINED", "template")
            ),
        ),
        "HUMAN_REQUIRED",
        ["HO_BOUNDARY_UNDEFINED"],
    ),
    "trust_root_readable": (
        facts()._replace(trust_problem=Reason("AUTH_TRUST_MALFORMED", "bad toml")),
        "REJECTED",
        ["CI_TRUST_ROOT_UNREADABLE"],
    ),
    "approvals_fresh": (
        facts()._replace(stale_approvals=(("TASK-0001", "a" * 40),)),
        "REJECTED",
        ["CI_APPROVAL_NOT_FRESH"],
    ),
    "trust_root_unchanged": (
        facts()._replace(trust_changed=(".plangate/allowed_signers",)),
        "HUMAN_REQUIRED",
        ["CI_TRUST_ROOT_CHANGED"],
    ),
    "no_symlinks": (
        facts("src/link.py")._replace(links=(("src/link.py", b"app.py"),)),
        "HUMAN_REQUIRED",
        ["CI_SYMLINK"],
    ),
    "no_gitlinks": (
        facts("src/vendored")._replace(gitlinks=("src/vendored",)),
        "HUMAN_REQUIRED",
        ["CI_GITLINK"],
    ),
    "policy_readable": (
        facts()._replace(
            head_policy_problem=Reason("PR_POLICY_UNKNOWN_KEY", "unknown key(s) allow"),
            changed=(*TASK_FILES, ".plangate/policy.toml"),
        ),
        "REJECTED",
        ["PR_POLICY_UNKNOWN_KEY", "CI_OUTSIDE_SCOPE", "CI_POLICY_CHANGED"],
    ),
    "taskless_approval": (
        PullRequestFacts(BASE, HEAD, HEAD, ("pyproject.toml",), SURFACES, (), "m" * 40,
                         policy=PullRequestPolicy((TasklessRule("deps", ("pyproject.toml",)),))),
        "HUMAN_REQUIRED",
        ["CI_TASKLESS_HUMAN"],
    ),
    "policy_unchanged": (
        PullRequestFacts(BASE, HEAD, HEAD, (".plangate/policy.toml",), SURFACES, (), "m" * 40),
        "HUMAN_REQUIRED",
        ["CI_POLICY_CHANGED"],
    ),
    "adopts_plangate": (
        PullRequestFacts(
            BASE,
            HEAD,
            HEAD,
            (
                ".claude/settings.json",
                ".gitignore",
                ".plangate/protected-surfaces.toml",
                ".plangate/trust.toml",
            ),
            SURFACES._replace(
                provenance="bundled_template", problem=Reason("HO_BOUNDARY_UNDEFINED", "template")
            ),
            (),
            "m" * 40,
            trust_changed=(".plangate/trust.toml",),
            base_adopted=False,
        ),
        "HUMAN_REQUIRED",
        ["CI_ADOPTS_PLANGATE"],
    ),
}


def adoption(*changed: str, base_adopted: bool = False) -> PullRequestFacts:
    return PullRequestFacts(
        BASE, HEAD, HEAD, tuple(changed), SURFACES, (), "m" * 40, base_adopted=base_adopted
    )


def test_adoption_message_speaks_to_the_reviewer():
    result = decide(adoption(".plangate/protected-surfaces.toml"))
    assert result.reasons[0].message.startswith(
        "adopts PlanGate: a human reviews the trust root and surfaces"
    )
    assert result.reasons[0].evidence == (".plangate/protected-surfaces.toml",)


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        # Code arriving with the adoption is not adoption: it needs a task.
        (adoption(".plangate/protected-surfaces.toml", "src/app.py"), "CI_NO_TASK"),
        # A task directory arriving with it is not adoption either.
        (
            adoption(".plangate/protected-surfaces.toml", "docs/working/TASK-0001/plan.md"),
            "CI_NO_TASK",
        ),
        # Adoption adds the surfaces file; hook configuration alone is not adoption.
        (adoption(".claude/settings.json", ".gitignore"), "CI_NO_TASK"),
        # A base that already has its surfaces judges changes to them as protected.
        (adoption(".plangate/protected-surfaces.toml", base_adopted=True), "CI_NO_TASK"),
        # An adoption-looking path with a different case is not an adoption path.
        (adoption(".plangate/protected-surfaces.toml", ".GITIGNORE"), "CI_NO_TASK"),
    ],
)
def test_what_is_not_an_adoption(built, expected):
    result = decide(built)
    assert "CI_ADOPTS_PLANGATE" not in codes(result)
    assert any(code.startswith(expected) for code in codes(result)), codes(result)


def test_an_unmatchable_path_is_never_an_adoption():
    built = adoption(".plangate/protected-surfaces.toml")._replace(
        unmatchable=(("a\tb", "PATH_HAS_CONTROL"),)
    )
    result = decide(built)
    assert result.verdict == "REJECTED"
    assert "CI_ADOPTS_PLANGATE" not in codes(result)


@pytest.mark.parametrize("name", EXPECTED_ORDER)
def test_each_row_decides_its_facts(name):
    built, verdict, expected = ROW_CASES[name]
    result = decide(built)
    assert (result.verdict, codes(result)) == (verdict, expected)
    assert int(result.exit_code) == {"REJECTED": 1, "HUMAN_REQUIRED": 3}[verdict]


def test_a_head_not_checked_out_is_the_only_thing_judged():
    result = decide(PullRequestFacts(BASE, HEAD, "c" * 40))
    assert codes(result) == ["CI_HEAD_NOT_CHECKED_OUT"]
    assert result.facts == {
        "base": BASE,
        "head": HEAD,
        "merge_base": "",
        "tasks": {},
        "changed_paths": [],
        "unmatchable_paths": [],
        "authority": "unauthenticated: the base commit has no trust root requiring signatures",
        "severity": {"CI_HEAD_NOT_CHECKED_OUT": "REJECTED"},
    }


def test_a_working_tree_that_differs_under_docs_working_is_not_judged():
    dirty = ("docs/working/TASK-0001/plan.md",)
    result = decide(facts(dirty=dirty))
    assert codes(result) == ["CI_HEAD_NOT_CHECKED_OUT"]
    assert result.reasons[0].evidence == dirty


def test_a_path_that_cannot_be_matched_rejects_with_its_problem():
    result = decide(facts(unmatchable=(("what?.py", "PATH_HAS_WILDCARD"),)))
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_PATH_UNMATCHABLE"])
    assert "'what?.py' (PATH_HAS_WILDCARD)" in result.reasons[0].message
    assert result.reasons[0].evidence == ("what?.py",)


@pytest.mark.parametrize(
    "path",
    [
        "docs/working/notes.md",
        "docs/working/TASK-0002x/plan.md",
        "docs/working/task-0001/plan.md",
        "docs/working/TASK-001/plan.md",
        "docs/working/TASK-0001",
    ],
)
def test_docs_working_outside_a_task_directory_is_in_no_scope(path: str):
    result = decide(facts(path))
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_OUTSIDE_SCOPE"])
    assert result.reasons[0].evidence == (path,)


def test_docs_working_alone_without_a_task_is_no_task():
    result = decide(PullRequestFacts(BASE, HEAD, HEAD, ("docs/working/notes.md",), SURFACES, ()))
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_NO_TASK"])


def test_files_in_a_touched_task_directory_need_no_scope():
    result = decide(facts("docs/working/TASK-0001/notes.md"))
    assert result.verdict == "ACCEPTED", codes(result)


def test_every_failing_row_is_listed_in_table_order_and_rejection_wins():
    template = SURFACES._replace(problem=Reason("HO_BOUNDARY_UNDEFINED", "template"))
    result = decide(facts("stray.py", "AGENTS.md", surfaces=template))
    assert result.verdict == "REJECTED"
    assert codes(result) == ["CI_OUTSIDE_SCOPE", "CI_PROTECTED_SURFACE", "HO_BOUNDARY_UNDEFINED"]


def test_code_without_any_task():
    result = decide(PullRequestFacts(BASE, HEAD, HEAD, ("feature.py",), SURFACES, ()))
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_NO_TASK"])
    assert result.reasons[0].evidence == ("feature.py",)


def test_a_task_approved_elsewhere_keeps_the_acceptors_reason():
    moved = Reason("CI_SOURCE_NOT_ANCESTOR", "TASK-0001: not an ancestor", "approve here")
    task = ACCEPTED_TASK._replace(outcome=Result("REJECTED", (moved,), {}))
    result = decide(facts("src/app.py", tasks=(task,)))
    assert result.reasons[0] == moved
    assert codes(result) == ["CI_SOURCE_NOT_ANCESTOR", "CI_OUTSIDE_SCOPE", "CI_PROTECTED_SURFACE"]


def test_a_plan_without_paths_has_no_scope():
    task = ACCEPTED_TASK._replace(plan=b"# Plan\n\n## Files / Components to Touch\n- none\n")
    result = decide(facts(tasks=(task,)))
    assert codes(result) == ["CI_SCOPE_UNDEFINED", "CI_PROTECTED_SURFACE"]


def test_an_unreadable_task_is_not_verified():
    task = TaskFacts("TASK-0001", read_error=Reason("TASK_DIR_SYMLINK", "a symlink", "fix it"))
    result = decide(facts(tasks=(task,)))
    assert result.reasons[0] == Reason(
        "CI_TASK_NOT_VERIFIED", "TASK-0001: TASK_DIR_SYMLINK: a symlink", "fix it"
    )
    assert result.facts["tasks"] == {"TASK-0001": {"verdict": "REJECTED"}}


def test_protected_surfaces_match_case_folded():
    result = decide(facts("src/Approvals/x.py"))
    assert result.facts["protected_paths"] == ["src/Approvals/x.py"]


def test_touched_tasks_are_the_task_directories_changed():
    assert touched_tasks(
        (
            "docs/working/TASK-0002/plan.md",
            "docs/working/TASK-0001/a/b",
            "docs/working/TASK-001/x",
            "docs/working/TASK-0003",
        )
    ) == ["TASK-0001", "TASK-0002"]


DENY_PLAN = (
    b"# Plan\n\n## Files / Components to Touch\n- `src/**`\n- Do not touch: `src/secret/**`\n"
)


def test_a_path_the_plan_denies_is_outside_scope_whatever_it_allows():
    task = ACCEPTED_TASK._replace(plan=DENY_PLAN, outcome=approved(DENY_PLAN))
    result = decide(facts("src/app.py", "src/Secret/key.py", tasks=(task,)))
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_OUTSIDE_SCOPE"])
    assert result.reasons[0].evidence == ("src/Secret/key.py",)
    assert result.facts["tasks"]["TASK-0001"]["denied_paths"] == ["src/secret/**"]
    assert result.facts["outside_scope"] == ["src/Secret/key.py"]


def test_a_plan_without_denied_paths_records_none():
    result = decide(facts("src/app.py"))
    assert result.facts["tasks"]["TASK-0001"] == {
        "verdict": "ACCEPTED",
        "codes": [],
        "allowed_paths": ["src/**"],
    }


def test_a_deny_in_one_task_applies_to_another_tasks_allowed_paths():
    other = TaskFacts("TASK-0002", None, approved(), PLAN, ARTIFACTS)
    denying = ACCEPTED_TASK._replace(plan=DENY_PLAN, outcome=approved(DENY_PLAN))
    result = decide(
        facts("src/secret/a.py", "docs/working/TASK-0002/plan.md", tasks=(denying, other))
    )
    assert codes(result) == ["CI_OUTSIDE_SCOPE"]


def test_the_tasks_own_verified_files_and_plangates_ignore_file_are_not_protected():
    surfaces = ResolvedSurfaces(
        "downstream",
        "x",
        None,
        (
            ProtectedPattern("docs/working/**", "approval", "records"),
            ProtectedPattern(".plangate/**", "settings", "plangate"),
        ),
    )
    result = decide(
        facts(".plangate/.gitignore", "docs/working/TASK-0001/todo.md", surfaces=surfaces)
    )
    assert (result.verdict, codes(result)) == ("ACCEPTED", [])
    result = decide(facts("docs/working/TASK-0001/notes.md", surfaces=surfaces))
    assert result.verdict == "HUMAN_REQUIRED"
    assert result.reasons[-1].evidence == ("docs/working/TASK-0001/notes.md",)


def test_a_task_neither_read_nor_judged_is_not_verified():
    result = decide(facts(tasks=(TaskFacts("TASK-0001"),)))
    assert result.reasons[0] == Reason("CI_TASK_NOT_VERIFIED", "TASK-0001: ?: not read")
    assert result.verdict == "REJECTED"


def test_a_rejected_task_names_its_first_reason_or_says_it_was_not_accepted():
    task = ACCEPTED_TASK._replace(outcome=Result("REJECTED", (), {}))
    result = decide(facts(tasks=(task,)))
    assert result.reasons[0] == Reason(
        "CI_TASK_NOT_VERIFIED",
        "TASK-0001: REJECTED: ?: not accepted",
        "run 'plangate c3 verify' on the head checkout",
    )
    assert result.facts["tasks"]["TASK-0001"] == {"verdict": "REJECTED", "codes": []}
    two = (Reason("C3_A", "first"), Reason("C3_B", "second"))
    task = ACCEPTED_TASK._replace(outcome=Result("HUMAN_REQUIRED", two, {}))
    result = decide(facts(tasks=(task,)))
    assert result.reasons[0].message == "TASK-0001: HUMAN_REQUIRED: C3_A: first"
    assert result.facts["tasks"]["TASK-0001"] == {
        "verdict": "HUMAN_REQUIRED",
        "codes": ["C3_A", "C3_B"],
    }


def test_source_not_ancestor_among_other_codes_is_a_plain_rejection():
    moved = Reason("CI_SOURCE_NOT_ANCESTOR", "not an ancestor")
    task = ACCEPTED_TASK._replace(outcome=Result("REJECTED", (moved, Reason("X", "y")), {}))
    result = decide(facts(tasks=(task,)))
    assert result.reasons[0].code == "CI_TASK_NOT_VERIFIED"


def test_messages_name_at_most_eight_paths_and_evidence_holds_them_all():
    many = tuple(f"stray{i}.py" for i in range(9))
    result = decide(facts(*many))
    reason = result.reasons[0]
    assert reason.evidence == many
    assert reason.message == (
        "9 changed path(s) are outside every task's allowed paths or "
        "denied by a task's plan: " + ", ".join(many[:8])
    )
    dirty = tuple(f"docs/working/TASK-0001/f{i}.md" for i in range(9))
    reason = decide(facts(dirty=dirty)).reasons[0]
    assert reason.message.endswith(", ".join(dirty[:8]))
    assert reason.message.startswith("9 file(s) under docs/working/ differ from the head: ")
    bad = tuple((f"x{i}\t.py", "PATH_HAS_CONTROL") for i in range(9))
    reason = decide(facts(unmatchable=bad)).reasons[0]
    assert reason.message.count("PATH_HAS_CONTROL") == 8
    assert len(reason.evidence) == 9
    approvals = tuple(f"src/approvals/a{i}.py" for i in range(9))
    reason = decide(facts(*approvals)).reasons[0]
    assert reason.message == "9 protected surface(s) changed: " + ", ".join(approvals[:8])
    assert reason.evidence == approvals
    result = decide(PullRequestFacts(BASE, HEAD, HEAD, many, SURFACES, ()))
    assert result.reasons[0].message == (
        "9 changed path(s) belong to no task: " + ", ".join(many[:8])
    )


def test_the_head_mismatch_message_names_both_commits():
    result = decide(facts(checked_out="c" * 40))
    assert result.reasons[0].message == (
        f"the working tree is at {'c' * 12}, not the head {HEAD[:12]}"
    )


def test_unavailable_surfaces_do_not_stop_the_other_rows():
    result = decide(facts("stray.py", surfaces=None))
    assert codes(result) == ["CI_SURFACES_UNAVAILABLE", "CI_OUTSIDE_SCOPE"]
    assert "surfaces_provenance" not in result.facts
    assert "protected_paths" not in result.facts


def test_facts_of_a_judged_pull_request():
    result = decide(
        facts(
            "src/app.py",
            "stray.py",
            "src/approvals/x.py",
            unmatchable=(("a\tb", "PATH_HAS_CONTROL"),),
        )
    )
    assert result.facts == {
        "base": BASE,
        "head": HEAD,
        "merge_base": "m" * 40,
        "tasks": {"TASK-0001": {"verdict": "ACCEPTED", "codes": [], "allowed_paths": ["src/**"]}},
        "changed_paths": [*TASK_FILES, "src/app.py", "stray.py", "src/approvals/x.py"],
        "unmatchable_paths": ["a\tb"],
        "authority": "unauthenticated: the base commit has no trust root requiring signatures",
        "surfaces_provenance": "downstream",
        "outside_scope": ["stray.py"],
        "protected_paths": ["src/approvals/x.py"],
        # each reason graded by its own row: the protected path is a human's finding
        "severity": {"CI_PATH_UNMATCHABLE": "REJECTED", "CI_OUTSIDE_SCOPE": "REJECTED",
                     "CI_PROTECTED_SURFACE": "HUMAN_REQUIRED"},
    }


def test_a_definition_without_entries_protects_nothing_and_is_unavailable():
    empty = ResolvedSurfaces("downstream", "x", None, (), Reason("HO_BOUNDARY_UNDEFINED", "t"))
    result = decide(facts("src/app.py", surfaces=empty))
    assert codes(result) == ["CI_SURFACES_UNAVAILABLE"]
    assert result.facts["protected_paths"] == []


def test_a_rejected_row_and_a_human_row_give_the_rejection():
    result = decide(facts("stray.py", "src/approvals/x.py"))
    assert (result.verdict, codes(result)) == (
        "REJECTED",
        ["CI_OUTSIDE_SCOPE", "CI_PROTECTED_SURFACE"],
    )


def trust_root(require: bool) -> TrustRoot:
    config = TrustConfig(require, "plangate/trust", False, {}, (), ())
    return TrustRoot(config, AllowedSigners(()), frozenset(), "t" * 40, "sha256:" + "7" * 64)


SIGNED_TASK = ACCEPTED_TASK._replace(
    outcome=approved(authority={"approver": "a@example.com"})
)
TRUST_FILES = (".plangate/trust.toml",)


def test_a_trust_root_change_passes_only_with_every_task_signed_under_a_requiring_root():
    signed = facts(*TRUST_FILES, tasks=(SIGNED_TASK,))._replace(
        trust=trust_root(True), trust_changed=TRUST_FILES
    )
    assert codes(decide(signed)) == ["CI_OUTSIDE_SCOPE"]  # the change itself is judged by scope
    for unsigned in (
        signed._replace(trust=None),
        signed._replace(trust=trust_root(False)),
        signed._replace(tasks=()),
        signed._replace(tasks=(SIGNED_TASK._replace(outcome=Result("REJECTED", (), {})),)),
    ):
        result = decide(unsigned)
        assert "CI_TRUST_ROOT_CHANGED" in codes(result)
        reason = next(r for r in result.reasons if r.code == "CI_TRUST_ROOT_CHANGED")
        assert reason.evidence == TRUST_FILES
        assert reason.message == "the pull request changes the trust root: .plangate/trust.toml"


def test_an_unreadable_trust_root_names_its_problem_and_keeps_its_hint():
    result = decide(facts()._replace(trust_problem=Reason("AUTH_X", "bad", "fix it here")))
    assert result.reasons[0] == Reason(
        "CI_TRUST_ROOT_UNREADABLE",
        "the base commit's trust root cannot be used: AUTH_X: bad",
        "fix it here",
    )
    result = decide(facts()._replace(trust_problem=Reason("AUTH_X", "bad")))
    assert result.reasons[0].hint == "fix the trust root on the base branch"


def test_each_stale_approval_is_named():
    stale = (("TASK-0001", "a" * 40), ("TASK-0002", "b" * 40))
    result = decide(facts()._replace(stale_approvals=stale))
    assert codes(result) == ["CI_APPROVAL_NOT_FRESH", "CI_APPROVAL_NOT_FRESH"]
    assert result.reasons[1].message.startswith(f"TASK-0002: its approval names {'b' * 12}, ")


def test_a_signed_tasks_signature_files_are_covered_and_an_unsigned_tasks_are_not():
    files = tuple(
        f"docs/working/TASK-0001/{rel}"
        for rel in (
            "approvals/c3.json.sig",
            "approvals/review-c1.json",
            "approvals/review-c1.json.sig",
            "approvals/review-c2.json",
            "approvals/review-c2.json.sig",
        )
    )
    assert decide(facts(*files, tasks=(SIGNED_TASK,))).verdict == "ACCEPTED"
    result = decide(facts(*files))
    assert result.verdict == "HUMAN_REQUIRED"
    assert result.reasons[0].evidence == files


def test_a_requiring_trust_root_is_named_in_the_facts():
    result = decide(facts("src/app.py")._replace(trust=trust_root(True)))
    assert result.facts["authority"] == {"trust_root": "t" * 40, "digest": "sha256:" + "7" * 64}
    result = decide(facts("src/app.py")._replace(trust=trust_root(False)))
    assert result.facts["authority"].startswith("unauthenticated")


def _validations(monkeypatch, n_files: int, n_patterns: int) -> tuple[int, int]:
    """(path validations, pattern validations) of one decision over n files x m patterns."""
    import plangate.paths as paths_module

    counts = {"canonical_path": 0, "validate_pattern": 0}
    for name in counts:
        real = getattr(paths_module, name)

        def counting(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(paths_module, name, counting)
    paths_module._validated_pattern.cache_clear()
    allowed = "".join(f"- `lib{i}/**`\n" for i in range(n_patterns))
    plan = b"# Plan\n\n## Files / Components to Touch\n- `src/**`\n" + allowed.encode()
    task = TaskFacts("TASK-0001", None, approved(plan), plan, ARTIFACTS)
    surfaces = ResolvedSurfaces(
        "downstream",
        "x",
        None,
        tuple(ProtectedPattern(f"guard{i}/**", "rules", "guarded") for i in range(n_patterns)),
    )
    counts["canonical_path"] = counts["validate_pattern"] = 0
    result = decide(
        facts(*(f"src/m{i}.py" for i in range(n_files)), tasks=(task,), surfaces=surfaces)
    )
    assert result.verdict == "ACCEPTED"
    return counts["canonical_path"], counts["validate_pattern"]


def test_a_check_validates_each_path_and_pattern_once_not_per_pair(monkeypatch):
    paths, patterns = _validations(monkeypatch, 200, 20)
    more_patterns = _validations(monkeypatch, 200, 40)
    more_files = _validations(monkeypatch, 400, 20)
    # paths: a constant number of times each, whatever the number of patterns
    assert more_patterns[0] == paths
    assert paths <= 3 * (200 + len(TASK_FILES))
    assert more_files[0] <= 2 * paths
    # patterns: each once per process for matching (plus once when the plan is read),
    # never once per changed file
    assert patterns <= 2 * (2 * 20 + 1)
    assert more_files[1] <= patterns


@pytest.mark.parametrize(
    "path",
    [
        ".plangate/tools.toml",
        ".plangate/trust.toml",
        ".plangate/allowed_signers",
        ".plangate/revoked_signers",
        ".plangate/.gitignore",
        ".gitignore",
        ".claude/settings.json",
        ".codex/hooks.json",
        ".codex/config.toml",
        ".cursor/hooks.json",
        ".pre-commit-config.yaml",
        ".github/workflows/ci.yml",
        ".github/workflows/deep/x.yml",
    ],
)
def test_each_adoption_path_may_arrive_with_the_surfaces(path):
    result = decide(adoption(".plangate/protected-surfaces.toml", path))
    assert (result.verdict, codes(result)) == ("HUMAN_REQUIRED", ["CI_ADOPTS_PLANGATE"])
    assert result.reasons[0].evidence == (".plangate/protected-surfaces.toml", path)


def test_an_adoption_message_names_eight_paths():
    paths = (
        ".plangate/protected-surfaces.toml",
        *(f".github/workflows/w{i}.yml" for i in range(8)),
    )
    reason = decide(adoption(*paths)).reasons[0]
    assert reason.message == (
        "adopts PlanGate: a human reviews the trust root and surfaces: "
        + ", ".join(paths[:8])
        + " (+1 more)"
    )
    assert reason.evidence == paths
    reason = decide(adoption(*paths[:8])).reasons[0]
    assert reason.message.endswith(", ".join(paths[:8]))


def test_a_base_is_taken_as_adopted_unless_the_facts_say_otherwise():
    built = PullRequestFacts(
        BASE, HEAD, HEAD, (".plangate/protected-surfaces.toml",), SURFACES, (), "m" * 40
    )
    assert built.base_adopted is True
    assert "CI_ADOPTS_PLANGATE" not in codes(decide(built))


def test_continuation_files_are_covered_only_where_approvals_fresh_judges_them():
    """A continuation is a part of its task's approval when the task was approved on the
    base (approvals_fresh judges it: it holds, or the pull request is rejected); for any
    other task, signed or not, it is an unverified file under approvals/."""
    files = (
        "docs/working/TASK-0001/approvals/continuation.json",
        "docs/working/TASK-0001/approvals/continuation.json.sig",
    )
    stale = facts(*files, tasks=(SIGNED_TASK,))._replace(
        stale_approvals=(("TASK-0001", "s" * 40),))
    result = decide(stale)
    assert "CI_PROTECTED_SURFACE" not in codes(result)
    assert "CI_APPROVAL_NOT_FRESH" in codes(result)
    for tasks in ((SIGNED_TASK,), (ACCEPTED_TASK,)):
        for one in files:
            result = decide(facts(one, tasks=tasks))
            assert (result.verdict, result.reasons[0].evidence) == ("HUMAN_REQUIRED", (one,))


@pytest.mark.parametrize(
    ("record", "code"),
    [
        ({}, "SCOPE_NOT_APPROVED"),
        ({"scope_digest": "sha256:" + "0" * 64}, "SCOPE_DIGEST_MISMATCH"),
        ({"scope_digest": "not a digest"}, "SCOPE_DIGEST_MISMATCH"),
    ],
)
def test_a_scope_the_record_did_not_approve_is_refused(record: dict, code: str) -> None:
    task = ACCEPTED_TASK._replace(outcome=Result("ACCEPTED", (), {"record": record}))
    verdict = decide(facts(tasks=(task,)))
    assert verdict.verdict == "REJECTED" and code in verdict.codes


def test_a_trust_root_change_with_one_task_of_two_failing_is_refused():
    second = SIGNED_TASK._replace(task_id="TASK-0002")
    both = facts(*TRUST_FILES, tasks=(SIGNED_TASK, second))._replace(
        trust=trust_root(True), trust_changed=TRUST_FILES
    )
    assert "CI_TRUST_ROOT_CHANGED" not in codes(decide(both))
    for failing in (
        second._replace(outcome=Result("REJECTED", (), {})),
        second._replace(outcome=None),
    ):
        for tasks in ((SIGNED_TASK, failing), (failing, SIGNED_TASK)):
            result = decide(both._replace(tasks=tasks))
            assert "CI_TRUST_ROOT_CHANGED" in codes(result), tasks


def test_a_part_checked_on_its_own_is_covered_and_a_refused_one_rejects():
    sig = "docs/working/TASK-0001/approvals/c3.json.sig"
    stmt = "docs/working/TASK-0001/approvals/review-c1.json"
    checked = ACCEPTED_TASK._replace(parts=((sig, None),))
    assert decide(facts(sig, tasks=(checked,))).verdict == "ACCEPTED"
    why = Reason("HOOK_APPROVAL_PART_UNVERIFIED", f"{stmt} is not a part: forged", "re-sign")
    refused = ACCEPTED_TASK._replace(parts=((sig, None), (stmt, why)))
    result = decide(facts(sig, stmt, tasks=(refused,)))
    assert result.verdict == "REJECTED"
    assert codes(result) == ["CI_APPROVAL_PART_UNVERIFIED", "CI_PROTECTED_SURFACE"]
    assert result.reasons[0].evidence == (stmt,)
    assert result.reasons[1].evidence == (stmt,)


def test_a_link_whose_target_git_did_not_hand_over_still_needs_a_human():
    result = decide(facts("src/a.py", "src/b.py")._replace(
        links=(("src/a.py", None), ("src/b.py", b"../../../etc/shadow"))))
    assert (result.verdict, codes(result)) == ("HUMAN_REQUIRED", ["CI_SYMLINK"])
    reason = result.reasons[0]
    assert reason.message == (
        "2 symbolic link(s) added or changed: src/a.py -> (target not readable), "
        "src/b.py -> ../../../etc/shadow (outside the repository)")
    assert reason.evidence == ("src/a.py", "src/b.py")


def test_links_and_gitlinks_are_listed_up_to_the_limit():
    links = tuple((f"src/l{i}.py", b"app.py") for i in range(10))
    gitlinks = tuple(f"src/g{i}" for i in range(10))
    result = decide(facts(*(p for p, _ in links), *gitlinks)._replace(
        links=links, gitlinks=gitlinks))
    assert codes(result) == ["CI_SYMLINK", "CI_GITLINK"]
    link_reason, gitlink_reason = result.reasons
    assert link_reason.message.count(" -> app.py") == 8 and "src/l8.py" not in link_reason.message
    assert gitlink_reason.message.endswith(", ".join(gitlinks[:8]))
    assert link_reason.evidence == tuple(p for p, _ in links)
    assert gitlink_reason.evidence == gitlinks
