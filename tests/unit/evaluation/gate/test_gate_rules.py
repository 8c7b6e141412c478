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
