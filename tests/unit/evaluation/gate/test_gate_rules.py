"""The pure policy gate (plangate.evaluation.gate.rules.decide) over literal facts."""

from __future__ import annotations

from typing import Any

import pytest

from plangate.evaluation.gate.rules import decide
from plangate.evaluation.harness.definition import HarnessDefinition
from plangate.surfaces import load_surfaces_bytes
from plangate.verdict import Reason
from support.gate_rules import DEFINITION, PLAN, definition, facts


def test_clean_prompt_change_is_auto_approved() -> None:
    result = decide(facts(["harness/prompts/a.md"]))
    assert result.verdict == "AUTO_APPROVED"
    assert result.codes == ("POLICY_GATE_PASSED",)
    assert result.exit_code == 0
    assert result.facts["required_independence"] == "I1"


def test_binding_problem_stops_with_inconclusive() -> None:
    reason = Reason("CANDIDATE_COMMIT_UNKNOWN", "gone")
    result = decide(facts(["eval/x.py"], binding_problems=(reason,)))
    assert result.verdict == "INCONCLUSIVE"
    assert result.exit_code == 4
    assert result.codes == ("CANDIDATE_COMMIT_UNKNOWN",)


def test_missing_surfaces_is_inconclusive() -> None:
    result = decide(facts(["harness/prompts/a.md"], surfaces=None))
    assert result.codes == ("PROTECTED_SURFACES_UNAVAILABLE",)
    broken = load_surfaces_bytes(b"version = 1\n", "downstream", "x")
    result = decide(facts(["harness/prompts/a.md"], surfaces=broken))
    assert result.codes == ("PROTECTED_SURFACES_UNRESOLVED",)


@pytest.mark.parametrize("allowed", [[], ["/abs/**"], ["a/../b"], ["a//b"], "harness/**", None])
def test_malformed_allowed_paths_are_denied(allowed: Any) -> None:
    candidate_allowed = allowed if allowed is not None else ["ok/**", "ok/**"]
    result = decide(facts(["harness/prompts/a.md"], allowed=candidate_allowed))
    assert result.verdict == "DENIED"
    assert result.codes[0] in ("CANDIDATE_ALLOWED_PATHS_EMPTY", "CANDIDATE_ALLOWED_PATHS_MALFORMED")


def test_declared_overlap_with_protected_and_implicit_authority() -> None:
    for allowed, hit in (
        (["eval/**"], "eval/**"),
        (["**"], "eval/**"),
        (["fixtures/*.json"], "fixtures/kb.json"),
        (["run.py"], "run.py"),
        (["meta/x"], "meta/**"),
        ([".plangate/*.toml"], ".plangate/protected-surfaces.toml"),
    ):
        result = decide(facts(["harness/prompts/a.md"], allowed=[*allowed, "harness/prompts/**"]))
        assert result.verdict == "DENIED", allowed
        assert "DECLARED_SCOPE_INTERSECTS_PROTECTED_AUTHORITY" in result.codes
        assert hit in {h["pattern"] for h in result.facts["declared_scope_hits"]}


def test_observed_protected_path_is_denied_case_folded() -> None:
    result = decide(facts(["Claude.MD", "harness/prompts/a.md"]))
    assert result.verdict == "DENIED"
    assert result.codes[0] == "PROTECTED_AUTHORITY_CHANGED"
    assert result.facts["matched_surfaces"][0]["provenance"] == "downstream"
    assert result.facts["required_independence"] == "I4"


def test_protected_check_precedes_scope_check() -> None:
    result = decide(facts(["eval/grader.py"]))
    assert result.codes == ("PROTECTED_AUTHORITY_CHANGED", "ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS")
    assert result.verdict == "DENIED"


def test_scope_excess_alone_is_human_required() -> None:
    result = decide(facts(["harness/prompts/a.md", "docs/x.md"]))
    assert result.verdict == "HUMAN_REQUIRED"
    assert result.codes == ("ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS",)


def test_scope_is_case_sensitive() -> None:
    result = decide(facts(["Harness/prompts/a.md"]))
    assert result.codes == ("ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS",)


def test_non_canonical_changed_path_needs_a_human_and_nfd_twin_is_protected() -> None:
    result = decide(facts(["harness/prompts/a .md ", "harness/prompts/a.md"]))
    assert "NON_CANONICAL_CHANGED_PATH" in result.codes
    assert result.verdict == "HUMAN_REQUIRED"
    surfaces = load_surfaces_bytes(
        'version = 1\n[[surface]]\npattern = "caf\u00e9/**"\nclass = "human-owned"\n'
        'reason = "r"\n'.encode(),
        "downstream",
        "s",
    )
    nfd = "cafe\u0301/x.md"  # addresses the protected NFC directory on some file systems
    result = decide(facts([nfd, "harness/prompts/a.md"], surfaces=surfaces))
    assert result.verdict == "DENIED"
    assert result.facts["matched_surfaces"][0]["via"] == "nfc"


def test_symlink_targets_are_judged() -> None:
    cases = {
        "harness/prompts/l1": ("../../eval/grader.py", "PROTECTED_AUTHORITY_CHANGED"),
        "harness/prompts/l2": ("../../eval", "PROTECTED_AUTHORITY_CHANGED"),
        "harness/prompts/l3": ("/etc/passwd", "SYMLINK_TARGET_UNSAFE"),
        "harness/prompts/l4": ("../../../x", "SYMLINK_TARGET_UNSAFE"),
        "harness/prompts/l5": ("../..", "SYMLINK_TARGET_UNSAFE"),
    }
    for link, (target, code) in cases.items():
        result = decide(facts([link], symlink_targets={link: target}))
        assert code in result.codes, (link, result.codes)
        assert result.verdict == "DENIED"
    ok = decide(facts(["harness/prompts/l6"], symlink_targets={"harness/prompts/l6": "a.md"}))
    assert ok.verdict == "AUTO_APPROVED"


def test_participating_verifier_change_is_denied() -> None:
    result = decide(facts(["harness/verifiers/tests.py"], allowed=["harness/verifiers/**"]))
    assert result.verdict == "DENIED"
    assert result.codes == ("PARTICIPATING_VERIFIER_CHANGED",)
    row = result.facts["participation"][0]
    assert row["participating"] is True
    assert row["basis"] == "in the plan's verifier set"
    assert result.facts["required_independence"] == "I3"


def test_verifier_missing_from_a_narrower_plan_set_counts_as_participating() -> None:
    narrower = dict(PLAN, verifier_set=["gate:stop"])
    result = decide(
        facts(["harness/verifiers/tests.py"], allowed=["harness/verifiers/**"], plan=narrower)
    )
    assert result.codes == ("PARTICIPATING_VERIFIER_CHANGED",)
    assert result.facts["participation"][0]["basis"].startswith("missing from")


def test_undecidable_plan_set_counts_as_participating() -> None:
    broken = dict(PLAN, verifier_set="verifier:tests")
    result = decide(
        facts(["harness/verifiers/extra.py"], allowed=["harness/verifiers/**"], plan=broken)
    )
    assert result.codes == ("PARTICIPATING_VERIFIER_CHANGED",)
    assert result.facts["participation"][0]["basis"].startswith("undecidable")


def test_non_participating_verifier_only_into_the_procedure() -> None:
    result = decide(facts(["harness/verifiers/extra.py"], allowed=["harness/verifiers/extra.py"]))
    assert result.verdict == "AUTO_APPROVED"
    assert result.facts["requires_verifier_candidate_procedure"] is True
    assert "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED" in result.codes


def _with(old: str, new: str) -> HarnessDefinition:
    assert old in DEFINITION
    return definition(DEFINITION.replace(old, new))


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        (
            'component = "gate:stop"\nblocking = "block"',
            'component = "gate:stop"\nblocking = "off"',
            "blocking block -> off",
        ),
        ('on_unavailable = "block"', 'on_unavailable = "pass"', "on_unavailable block -> pass"),
        ('applies_to = ["src/**", "lib/**"]', 'applies_to = ["src/**"]', "applies_to"),
        (
            '[[verifier_set.stages]]\ncomponent = "verifier:tests"\nblocking = "block"\n',
            "",
            "removed from the verifier set",
        ),
        (
            'paths = ["harness/verifiers/extra.py"]',
            'paths = ["harness/verifiers/other.py"]',
            "paths removed",
        ),
        (
            'id = "verifier:extra"\ntype = "verifier"',
            'id = "verifier:extra"\ntype = "prompt"',
            "component removed",
        ),
    ],
)
def test_weakening_a_gate_or_verifier_is_human_required(old: str, new: str, fragment: str) -> None:
    result = decide(
        facts(
            [".plangate/harness.toml"],
            allowed=[".plangate/harness.toml"],
            candidate_definition=_with(old, new),
        )
    )
    assert "GATE_OR_VERIFIER_WEAKENED" in result.codes
    assert result.verdict in ("HUMAN_REQUIRED", "DENIED")
    assert any(fragment in w for w in result.facts["weakened"]), result.facts["weakened"]


def test_widening_applies_to_is_not_weakening() -> None:
    result = decide(
        facts(
            [".plangate/harness.toml"],
            allowed=[".plangate/harness.toml"],
            candidate_definition=_with('applies_to = ["src/**", "lib/**"]', 'applies_to = ["**"]'),
        )
    )
    assert "GATE_OR_VERIFIER_WEAKENED" not in result.codes


def test_deleted_verifier_file_is_weakening() -> None:
    result = decide(
        facts(
            ["harness/verifiers/extra.py"],
            allowed=["harness/verifiers/**"],
            removed_paths=frozenset({"harness/verifiers/extra.py"}),
        )
    )
    assert "GATE_OR_VERIFIER_WEAKENED" in result.codes


def test_unreadable_candidate_definition_is_human_required() -> None:
    result = decide(
        facts(
            ["harness/prompts/a.md"],
            candidate_definition=None,
            candidate_definition_problem=Reason("X", "broken"),
        )
    )
    assert result.codes == ("HARNESS_DEFINITION_UNREADABLE_AT_CANDIDATE",)
    assert result.verdict == "HUMAN_REQUIRED"


def test_declared_harness_change_routes_to_i4_and_missing_declaration_is_not_false() -> None:
    result = decide(facts(["harness/prompts/a.md"], changes_evaluation_harness=True))
    assert result.codes == ("EVALUATION_HARNESS_CHANGE_I4_ONLY",)
    assert result.facts["required_independence"] == "I4"
    result = decide(facts(["harness/prompts/a.md"], changes_evaluation_harness=None))
    assert result.codes == ("EVALUATION_HARNESS_DECLARATION_MISSING",)
    assert result.verdict == "HUMAN_REQUIRED"


def test_empty_diff_is_inconclusive() -> None:
    assert decide(facts([])).codes == ("NO_OBSERVED_HARNESS_DELTA",)


def test_undeclared_change_of_a_new_eval_component_needs_the_i4_route() -> None:
    text = DEFINITION.replace(
        "[verifier_set]",
        '[[components]]\nid = "eval:own-grader"\ntype = "eval"\npaths = ["harness/prompts/g.py"]\n'
        "[verifier_set]",
    )
    cand_def = definition(text)
    result = decide(facts(["harness/prompts/g.py"], candidate_definition=cand_def))
    assert result.verdict == "HUMAN_REQUIRED"
    assert result.codes == ("EVALUATION_HARNESS_CHANGE_UNDECLARED",)
    assert result.facts["route"] == "I4_ONLY"
    assert result.facts["required_independence"] == "I4"


def test_a_two_link_chain_to_the_grader_is_resolved_physically() -> None:
    # Lexically "a" lands on harness/prompts/eval/grader.py; through the link "up" (= harness)
    # it is eval/grader.py.
    links = {"harness/prompts/up": "..", "harness/prompts/a": "up/../eval/grader.py"}
    result = decide(facts(sorted(links), symlink_targets=links))
    assert result.verdict == "DENIED"
    assert "PROTECTED_AUTHORITY_CHANGED" in result.codes
    vias = {(m["path"], m["via"]) for m in result.facts["matched_surfaces"]}
    assert ("harness/prompts/a", "symlink->eval/grader.py") in vias


def test_a_chain_through_an_unchanged_link_of_the_tree_is_resolved() -> None:
    changed = {"harness/prompts/a": "shared/grader.py"}
    tree = {"harness/prompts/shared": "../../eval"}
    result = decide(facts(["harness/prompts/a"], symlink_targets=changed, tree_symlinks=tree))
    assert result.verdict == "DENIED"
    assert result.codes == ("PROTECTED_AUTHORITY_CHANGED",)
    # Without the tree's link the same target is harmless: the tree link decides.
    alone = decide(facts(["harness/prompts/a"], symlink_targets=changed))
    assert alone.verdict == "AUTO_APPROVED", alone.codes


@pytest.mark.parametrize(
    "links",
    [
        {"harness/prompts/a": "a"},
        {"harness/prompts/a": "b", "harness/prompts/b": "a"},
        {"harness/prompts/a": "up/x", "harness/prompts/up": "../../.."},
        {"harness/prompts/a": "up/x", "harness/prompts/up": "/etc"},
        {"harness/prompts/a": "up", "harness/prompts/up": "../.."},
    ],
)
def test_link_loops_escapes_and_the_root_through_a_chain_are_unsafe(
    links: dict[str, str],
) -> None:
    result = decide(
        facts(
            ["harness/prompts/a"],
            symlink_targets={"harness/prompts/a": links.pop("harness/prompts/a")},
            tree_symlinks=links,
        )
    )
    assert result.verdict == "DENIED"
    assert "SYMLINK_TARGET_UNSAFE" in result.codes


def test_an_unread_link_set_makes_every_changed_link_undecidable() -> None:
    changed = {"harness/prompts/a": "b.md"}
    result = decide(
        facts(["harness/prompts/a"], symlink_targets=changed, tree_symlinks_complete=False)
    )
    assert result.codes == ("SYMLINK_TARGET_UNSAFE",)


def test_a_link_into_a_participating_verifier_changes_it() -> None:
    link = {"harness/prompts/v.py": "../verifiers/tests.py"}
    result = decide(facts(["harness/prompts/v.py"], symlink_targets=link))
    assert result.verdict == "DENIED"
    assert result.codes == ("PARTICIPATING_VERIFIER_CHANGED",)
    assert result.facts["changed_components"] == ["prompt:builder", "verifier:tests"]
    # A link to a directory holding a judging verifier changes it too.
    folder = {"harness/prompts/all": "../verifiers"}
    result = decide(facts(["harness/prompts/all"], symlink_targets=folder))
    assert "PARTICIPATING_VERIFIER_CHANGED" in result.codes
    # A link into a verifier the plan does not judge with goes to the procedure only.
    extra = {"harness/prompts/e.py": "../verifiers/extra.py"}
    result = decide(facts(["harness/prompts/e.py"], symlink_targets=extra))
    assert result.verdict == "AUTO_APPROVED"
    assert "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED" in result.codes


def test_every_row_is_recorded_in_table_order() -> None:
    from plangate.evaluation.gate.rules import GATE_ORDER

    result = decide(facts(["harness/prompts/a.md", "outside.txt"]))
    rows = result.facts["rows"]
    assert [r["rule"] for r in rows] == list(GATE_ORDER)
    by_rule = {r["rule"]: r for r in rows}
    assert by_rule["within_allowed_paths"] == {
        "step": "5",
        "rule": "within_allowed_paths",
        "outcome": "HUMAN_REQUIRED",
        "codes": ["ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS"],
    }
    assert by_rule["bindings"]["outcome"] == "pass"
    stopped = decide(facts(["x"], binding_problems=(Reason("CANDIDATE_COMMIT_UNKNOWN", "gone"),)))
    assert [r["rule"] for r in stopped.facts["rows"]] == ["bindings"]
    assert stopped.facts["rows"][0]["outcome"] == "INCONCLUSIVE"


def test_the_documented_gate_order_is_the_table() -> None:
    import re
    from pathlib import Path

    from plangate.evaluation.gate.rules import GATE_ORDER, GATE_ROWS

    doc = (Path(__file__).resolve().parents[4] / "docs" / "evaluation.md").read_text()
    section = doc.split("### Gate order", 1)[1].split("\n### ", 1)[0]
    documented = re.findall(r"^\| (\d) \| `([a-z_]+)` \|", section, flags=re.MULTILINE)
    assert [name for _step, name in documented] == list(GATE_ORDER)
    assert [step for step, _name in documented] == [row.step for row in GATE_ROWS]


def test_gate_help_lists_the_rule_order(run_cli: Any, tmp_path: Any) -> None:
    from plangate.evaluation.gate.rules import GATE_ORDER

    result = run_cli(tmp_path, "eval", "gate", "--help")
    assert result.code == 0
    assert ", ".join(GATE_ORDER) in " ".join(result.out.split())


# -- what the gate records -----------------------------------------------------------

PLAN_SOURCE = "evaluation plan sha256:" + "2" * 64
WITH_POLICY = DEFINITION.replace(
    "[verifier_set]", '[policy_profile]\nfiles = ["policy/profile.toml"]\n[verifier_set]'
)


def _hit(
    path: str, pattern: str, cls: str, family: str, reason: str, prov: str, source: str
) -> dict[str, str]:
    return {
        "path": path,
        "via": "path",
        "pattern": pattern,
        "class": cls,
        "family": family,
        "reason": reason,
        "provenance": prov,
        "source": source,
    }


def test_every_implicit_protected_path_is_recorded_with_its_class_and_origin() -> None:
    policy = definition(WITH_POLICY)
    diff = [
        "fixtures/kb.json",
        "run.py",
        "grade.py",
        ".plangate/protected-surfaces.toml",
        "meta/x",
        "policy/profile.toml",
        "CLAUDE.md",
    ]
    result = decide(facts(diff, baseline_definition=policy, candidate_definition=policy))
    assert result.verdict == "DENIED"
    harness = ("harness_definition", "harness definition test")
    assert result.facts["matched_surfaces"] == [
        _hit(
            "fixtures/kb.json",
            "fixtures/kb.json",
            "sealed-fixture",
            "evaluation-harness",
            "sealed fixture kb (known_bad)",
            "evaluation_plan",
            PLAN_SOURCE,
        ),
        _hit(
            "run.py",
            "run.py",
            "evaluator",
            "evaluation-harness",
            "the plan's runner (baseline copy)",
            "evaluation_plan",
            PLAN_SOURCE,
        ),
        _hit(
            "grade.py",
            "grade.py",
            "grader",
            "evaluation-harness",
            "the plan's grader (baseline copy)",
            "evaluation_plan",
            PLAN_SOURCE,
        ),
        _hit(
            ".plangate/protected-surfaces.toml",
            ".plangate/protected-surfaces.toml",
            "surfaces-definition",
            "evaluation-harness",
            "the protected-surfaces definition",
            *harness,
        ),
        _hit(
            ".plangate/protected-surfaces.toml",
            ".plangate/protected-surfaces.toml",
            "human-owned",
            "human-owned-boundary",
            "policy profile file",
            *harness,
        ),
        _hit(
            "meta/x",
            "meta/**",
            "evaluator",
            "evaluation-harness",
            "eval component eval:meta",
            *harness,
        ),
        _hit(
            "policy/profile.toml",
            "policy/profile.toml",
            "human-owned",
            "human-owned-boundary",
            "policy profile file",
            *harness,
        ),
        _hit(
            "CLAUDE.md",
            "CLAUDE.md",
            "human-owned",
            "human-owned-boundary",
            "human-owned",
            "downstream",
            "base:surfaces",
        ),
    ]


FAMILY_SURFACES = b"""version = 1
[[surface]]
pattern = "ev/**"
class = "evaluator"
reason = "r"
[[surface]]
pattern = "ho/**"
class = "human-owned"
reason = "r"
[[surface]]
pattern = "st/**"
class = "settings"
reason = "r"
[[surface]]
pattern = "ps/**"
class = "policy-spec"
reason = "r"
"""


@pytest.mark.parametrize(
    ("path", "surface_class"),
    [
        ("ev/x", "evaluation_harness"),
        ("ho/x", "human_owned"),
        ("st/x", "human_owned"),
        ("ps/x", "policy"),
    ],
)
def test_a_protected_surface_counts_as_its_independence_class(
    path: str, surface_class: str
) -> None:
    surfaces = load_surfaces_bytes(FAMILY_SURFACES, "downstream", "base:surfaces")
    result = decide(facts([path], allowed=[f"{path}"], surfaces=surfaces))
    assert result.verdict == "DENIED"
    assert result.facts["surface_classes"] == [surface_class]


def test_a_denial_after_a_human_decision_still_denies() -> None:
    # Row 5 (a path that cannot be scoped) asks for a human, row 6 (a judging verifier
    # changed) denies: the most severe verdict wins whatever the row order.
    result = decide(
        facts(["harness/prompts/a .md ", "harness/verifiers/tests.py"], allowed=["harness/**"])
    )
    assert result.codes == ("NON_CANONICAL_CHANGED_PATH", "PARTICIPATING_VERIFIER_CHANGED")
    assert result.verdict == "DENIED"


def test_a_nested_gitattributes_changes_every_component_below_it() -> None:
    result = decide(facts(["harness/verifiers/.gitattributes"], allowed=["harness/verifiers/**"]))
    assert result.verdict == "DENIED"
    assert result.codes == (
        "PARTICIPATING_VERIFIER_CHANGED",
        "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED",
    )
    assert result.facts["changed_components"] == ["verifier:extra", "verifier:tests"]


def test_a_case_variant_of_a_verifier_file_changes_the_verifier() -> None:
    result = decide(facts(["harness/verifiers/TESTS.py"], allowed=["harness/verifiers/**"]))
    assert result.verdict == "DENIED"
    assert result.codes == ("PARTICIPATING_VERIFIER_CHANGED",)


def test_a_link_is_judged_by_its_lexical_target_too() -> None:
    # Through the tree's link "eval" the file physically lies elsewhere, but on a checkout
    # without that link it is the grader: both targets are judged.
    link = {"harness/prompts/a": "../../eval/grader.py"}
    result = decide(
        facts(["harness/prompts/a"], symlink_targets=link, tree_symlinks={"eval": "elsewhere"})
    )
    assert result.verdict == "DENIED"
    vias = {m["via"] for m in result.facts["matched_surfaces"]}
    assert "symlink->eval/grader.py" in vias


def test_a_link_to_a_case_variant_of_protected_authority_is_denied() -> None:
    link = {"harness/prompts/a": "../../EVAL/grader.py"}
    result = decide(facts(["harness/prompts/a"], symlink_targets=link))
    assert result.verdict == "DENIED"
    assert result.codes == ("PROTECTED_AUTHORITY_CHANGED",)


def test_with_an_unreadable_candidate_definition_the_baseline_components_still_count() -> None:
    result = decide(
        facts(
            ["harness/verifiers/tests.py"],
            allowed=["harness/verifiers/**"],
            candidate_definition=None,
        )
    )
    assert result.verdict == "DENIED"
    assert result.codes == (
        "PARTICIPATING_VERIFIER_CHANGED",
        "HARNESS_DEFINITION_UNREADABLE_AT_CANDIDATE",
    )


def test_a_verifier_that_changes_type_is_undecidable_and_participates() -> None:
    changed = definition(
        DEFINITION.replace(
            'id = "verifier:extra"\ntype = "verifier"', 'id = "verifier:extra"\ntype = "prompt"'
        )
    )
    result = decide(
        facts(
            [".plangate/harness.toml"],
            allowed=[".plangate/harness.toml"],
            candidate_definition=changed,
        )
    )
    assert result.verdict == "DENIED"
    assert "PARTICIPATING_VERIFIER_CHANGED" in result.codes
    assert result.facts["participation"] == [
        {
            "component": "verifier:extra",
            "type": "prompt/verifier",
            "changed": True,
            "in_plan_verifier_set": False,
            "in_baseline_verifier_set": False,
            "participating": True,
            "basis": "undecidable: the component changes type",
        }
    ]


def test_a_verifier_the_candidate_adds_goes_to_the_procedure() -> None:
    added = definition(
        DEFINITION.replace(
            "[verifier_set]",
            '[[components]]\nid = "verifier:new"\ntype = "verifier"\n'
            'paths = ["harness/verifiers/new.py"]\n[verifier_set]',
        )
    )
    result = decide(
        facts(
            [".plangate/harness.toml"],
            allowed=[".plangate/harness.toml"],
            candidate_definition=added,
        )
    )
    assert result.verdict == "AUTO_APPROVED", result.codes
    assert result.facts["changed_components"] == ["verifier:new"]
    assert "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED" in result.codes


def test_a_plan_verifier_set_with_a_non_string_is_not_read_at_all() -> None:
    broken = dict(PLAN, verifier_set=["verifier:extra", 3])
    result = decide(
        facts(["harness/verifiers/extra.py"], allowed=["harness/verifiers/**"], plan=broken)
    )
    assert result.codes == ("PARTICIPATING_VERIFIER_CHANGED",)
    row = result.facts["participation"][0]
    assert row["in_plan_verifier_set"] is False
    assert row["basis"] == "undecidable: the plan's verifier set is unreadable"


REGISTRY = (
    '[registry]\nenabled = ["verifier:tests", "prompt:builder", "gate:stop", "verifier:extra"]\n'
)
EXTRA = '[[components]]\nid = "verifier:extra"\ntype = "verifier"\npaths = ["harness/verifiers/extra.py"]\n'


def test_a_judge_switched_off_in_the_registry_is_weakened_and_nothing_else_is() -> None:
    assert EXTRA in DEFINITION
    baseline = definition(DEFINITION.replace("[verifier_set]", REGISTRY + "[verifier_set]"))
    # The candidate keeps only the gate enabled and drops the extra verifier altogether.
    candidate = definition(
        DEFINITION.replace(EXTRA, "").replace(
            "[verifier_set]", '[registry]\nenabled = ["gate:stop"]\n[verifier_set]'
        )
    )
    result = decide(
        facts(
            [".plangate/harness.toml"],
            allowed=[".plangate/harness.toml"],
            baseline_definition=baseline,
            candidate_definition=candidate,
        )
    )
    assert "GATE_OR_VERIFIER_WEAKENED" in result.codes
    assert result.facts["weakened"] == [
        "verifier:extra: component removed",
        "verifier:tests: removed from the registry (disabled)",
    ]


def test_a_deleted_file_outside_every_judge_is_no_weakening() -> None:
    result = decide(facts(["harness/prompts/a.md"], removed_paths=frozenset({"docs/old.md"})))
    assert result.verdict == "AUTO_APPROVED", result.codes
    assert result.facts["weakened"] == []


def test_a_binding_problem_is_reported_alone() -> None:
    reason = Reason("CANDIDATE_COMMIT_UNKNOWN", "gone")
    result = decide(facts(["x"], binding_problems=(reason,), surfaces=None))
    assert result.codes == ("CANDIDATE_COMMIT_UNKNOWN",)


@pytest.mark.parametrize("missing", ["plan", "baseline_manifest", "baseline_definition"])
def test_any_missing_baseline_binding_is_inconclusive(missing: str) -> None:
    result = decide(facts(["harness/prompts/a.md"], **{missing: None}))
    assert result.verdict == "INCONCLUSIVE"
    assert result.codes == ("BASELINE_MANIFEST_UNOBTAINABLE",)


def test_an_unusable_surfaces_definition_keeps_its_own_hint() -> None:
    broken = load_surfaces_bytes(b"version = 1\n", "downstream", "x")
    assert broken.problem is not None and broken.problem.hint
    result = decide(facts(["harness/prompts/a.md"], surfaces=broken))
    assert result.reasons[0].hint == broken.problem.hint
    silent = broken._replace(problem=broken.problem._replace(hint=""))
    result = decide(facts(["harness/prompts/a.md"], surfaces=silent))
    assert result.reasons[0].hint.startswith("fix the definition at the baseline commit")


def test_a_gate_stopped_before_the_plan_was_read_records_no_diff_method() -> None:
    from plangate.evaluation.gate.rules import GateFacts

    unread = GateFacts(
        {"candidate_id": "c1", "candidate_commit": "f" * 40, "changes_evaluation_harness": False},
        "sha256:" + "1" * 64,
        "sha256:" + "2" * 64,
        (Reason("EVALUATION_PLAN_UNKNOWN", "no such plan"),),
    )
    result = decide(unread)
    assert result.verdict == "INCONCLUSIVE"
    assert result.facts == {
        "candidate_digest": "sha256:" + "1" * 64,
        "candidate_id": "c1",
        "candidate_commit": "f" * 40,
        "plan_digest": "sha256:" + "2" * 64,
        "diff_method": "",
        "baseline_commit": None,
        "baseline_manifest_ref": None,
        "declares_evaluation_harness_change": False,
        "observed_diff": [],
        "rows": [
            {
                "step": "1",
                "rule": "bindings",
                "outcome": "INCONCLUSIVE",
                "codes": ["EVALUATION_PLAN_UNKNOWN"],
            }
        ],
    }


def test_a_declared_overlap_names_the_allowed_path_and_the_protected_pattern() -> None:
    result = decide(
        facts(["harness/prompts/a.md"], allowed=["fixtures/*.json", "harness/prompts/**"])
    )
    assert result.codes == ("DECLARED_SCOPE_INTERSECTS_PROTECTED_AUTHORITY",)
    assert "('fixtures/*.json', 'fixtures/kb.json')" in result.reasons[0].message


def test_an_unreadable_candidate_definition_without_a_known_cause_says_just_that() -> None:
    result = decide(facts(["harness/prompts/a.md"], candidate_definition=None))
    assert result.codes == ("HARNESS_DEFINITION_UNREADABLE_AT_CANDIDATE",)
    assert result.reasons[0].message.endswith("its gates cannot be ruled out")


def test_the_gate_records_what_it_judged() -> None:
    diff = ["harness/prompts/a.md", "docs/x.md", "harness/verifiers/extra.py"]
    result = decide(facts(diff, allowed=["harness/prompts/**", "harness/verifiers/extra.py"]))
    assert result.verdict == "HUMAN_REQUIRED"
    recorded = dict(result.facts)
    provenance = recorded.pop("surfaces_provenance")
    assert (provenance["provenance"], provenance["source"]) == ("downstream", "base:surfaces")
    rows = recorded.pop("rows")
    assert recorded == {
        "candidate_digest": "sha256:" + "1" * 64,
        "candidate_id": "c1",
        "candidate_commit": "f" * 40,
        "plan_digest": "sha256:" + "2" * 64,
        "diff_method": "git-diff-no-renames-v1",
        "baseline_commit": "a" * 40,
        "baseline_manifest_ref": "sha256:" + "b" * 64,
        "declares_evaluation_harness_change": False,
        "observed_diff": diff,
        "allowed_paths": ["harness/prompts/**", "harness/verifiers/extra.py"],
        "outside_allowed_paths": ["docs/x.md"],
        "declared_scope_hits": [],
        "matched_surfaces": [],
        "changed_components": ["prompt:builder", "verifier:extra"],
        "participation": [
            {
                "component": "verifier:extra",
                "type": "verifier",
                "changed": True,
                "in_plan_verifier_set": False,
                "in_baseline_verifier_set": False,
                "participating": False,
                "basis": "not in the plan's verifier set",
            }
        ],
        "requires_verifier_candidate_procedure": True,
        "weakened": [],
        "surface_classes": ["prompt", "verifier"],
        "required_independence": "I3",
        "independence_drivers": ["verifier"],
        "route": None,
    }
    procedure = next(r for r in rows if r["rule"] == "verifier_candidate_procedure")
    assert procedure["outcome"] == "note"


def test_an_approval_leads_with_the_passed_reason() -> None:
    result = decide(facts(["harness/verifiers/extra.py"], allowed=["harness/verifiers/extra.py"]))
    assert result.codes == ("POLICY_GATE_PASSED", "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED")


def test_an_undeclared_harness_change_counts_as_the_evaluation_harness_class() -> None:
    result = decide(facts(["harness/prompts/a.md"], changes_evaluation_harness=None))
    assert "evaluation_harness" in result.facts["surface_classes"]
    assert result.facts["route"] is None


def test_unreadable_allowed_paths_are_recorded_as_given() -> None:
    result = decide(facts(["harness/prompts/a.md"], allowed="harness/**"))
    assert result.verdict == "DENIED"
    assert result.facts["allowed_paths"] == "harness/**"


def test_a_link_to_an_unprotected_top_level_file_is_safe() -> None:
    link = {"harness/prompts/l": "../../x"}
    result = decide(facts(["harness/prompts/l"], symlink_targets=link))
    assert result.verdict == "AUTO_APPROVED", result.codes


def test_an_exclusion_clears_a_protected_pattern_only_when_it_covers_all_of_it() -> None:
    from plangate.evaluation.gate.rules import excludes

    assert excludes(["**/.claude/**"], "**/.claude/**")
    assert excludes(["**/.CLAUDE/**"], "**/.claude/skills/**")
    assert excludes(["protected-anywhere"], "**/CLAUDE.md")
    assert not excludes(["protected-anywhere"], "eval/**")
    assert not excludes(["**/.claude/skills/**"], "**/.claude/**")
    assert not excludes(["eval/fixtures/**"], "eval/**")
    assert not excludes([], "eval/**")
