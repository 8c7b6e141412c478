"""The arbiter decision table: every row, every severity-map entry, the input contract.

Optional plan-package data must not contradict the rest of the block.

The decision table is pure: no file, git, clock or ledger access (ARCHITECTURE).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

import plangate
import plangate.approval.arbiter as arbiter_module
import plangate.plan.loopspec as loopspec_module
from plangate.approval.arbiter import (
    POLICY_REF,
    SEVERITY_MAP,
    ArbiterInputError,
    decide,
    parse_input,
    parse_input_bytes,
    plan_package_check,
    provenance_record,
    severity_of,
)
from plangate.plan.package import plan_package_hash
from plangate.snapshot import ARTIFACTS
from plangate.surfaces import bundled_template_bytes, load_surfaces_bytes

SURFACES = load_surfaces_bytes(
    b"""version = 1
[[surface]]
pattern = "bin/plangate"
class = "core-cli"
reason = "the CLI"
[[surface]]
pattern = "**/CLAUDE.md"
class = "rules"
reason = "agent rules"
[[surface]]
pattern = "scripts/ai-loop/**"
class = "decision-code"
reason = "judgement base: the arbiter's decision code"
[[surface]]
pattern = "docs/ai/ai-loop/**"
class = "policy-spec"
reason = "judgement base: policy corpus"
[[surface]]
pattern = ".claude/skills/ai-loop-cycle/**"
class = "execution-skill"
reason = "judgement base: execution skill"
[[surface]]
pattern = "eval/graders/**"
class = "grader"
reason = "evaluation harness"
[[surface]]
pattern = "eval/fixtures/sealed/**"
class = "sealed-fixture"
reason = "evaluation harness"
[[surface]]
pattern = ".plangate/protected-surfaces.toml"
class = "surfaces-definition"
reason = "protects itself"
""",
    "downstream",
    ".plangate/protected-surfaces.toml",
)
TS = "2026-01-01T00:00:00Z"
SHA = "a" * 40
P = "sha256:" + "1" * 64
PP = "sha256:" + "2" * 64


def package_block() -> dict[str, Any]:
    def snap(verdict: str, ref: str) -> dict[str, str]:
        return {
            "verdict": verdict,
            "plan_hash": P,
            "source_sha": SHA,
            "plan_package_hash": PP,
            "evidence_ref": ref,
        }

    return {
        "plan_hash": P,
        "source_sha": SHA,
        "plan_package_hash": PP,
        "c1_evidence_ref": "review-self.md#PASS",
        "c2_evidence_ref": "review-external.md#approve",
        "reviewers": {"model_a": snap("approve", "a.md"), "model_b": snap("approve", "b.md")},
    }


def clean() -> dict[str, Any]:
    """An input that reaches AUTO_APPROVED at priority 6."""
    return {
        "changed_files": ["src/app.py", "tests/test_app.py"],
        "allowed_paths": ["src/**", "tests/*.py"],
        "lite": {
            "size_ok": True,
            "no_new_design": True,
            "follows_pattern": True,
            "reversible": True,
        },
        "class": "no-merge",
        "verdicts": {
            "model_a": "approve",
            "model_b": "approve",
            "reject_category": None,
            "model_c": None,
            "model_d": None,
        },
        "target_sha": SHA,
        "gates": {"c1": "PASS", "breakdown": "pass"},
        "production": True,
        "plan_package": package_block(),
    }


def run(doc: dict[str, Any], surfaces=SURFACES):
    return decide(parse_input(doc), surfaces, timestamp=TS)


def decided(doc: dict[str, Any], surfaces=SURFACES) -> tuple[str, str, str]:
    result = run(doc, surfaces)
    by = result.facts["decided_by"]
    return result.verdict, by["priority"], by["code"]


def test_clean_input_is_auto_approved() -> None:
    result = run(clean())
    assert result.verdict == "AUTO_APPROVED"
    assert result.exit_code == 0
    assert result.facts["decided_by"]["priority"] == "6"
    assert result.facts["boundary_check"] == "clean"
    assert result.facts["scope_check"] == "in_scope"
    assert result.facts["policy_ref"] == POLICY_REF
    assert all(c["outcome"] == "pass" for c in result.facts["checks"])


# --- priority 0: surfaces ---------------------------------------------------------


def test_p0_bundled_template_escalates_ho_boundary_undefined() -> None:
    template = load_surfaces_bytes(bundled_template_bytes(), "bundled_template", "template")
    result = run(clean(), template)
    assert (result.verdict, result.facts["decided_by"]["code"]) == (
        "HUMAN_ESCALATED",
        "HO_BOUNDARY_UNDEFINED",
    )
    assert result.exit_code == 3
    assert result.facts["boundary_check"] == "unresolved"
    assert result.facts["surfaces"]["provenance"] == "bundled_template"


def test_p0_empty_definition_escalates() -> None:
    empty = load_surfaces_bytes(b"", "explicit", "x.toml")
    assert decided(clean(), empty) == ("HUMAN_ESCALATED", "0", "SURFACES_EMPTY")


def test_p0_beats_everything_even_blocked_verdicts() -> None:
    doc = clean()
    doc["verdicts"]["model_a"] = "reject"
    empty = load_surfaces_bytes(b"", "explicit", "x.toml")
    assert decided(doc, empty)[1] == "0"


# --- priority 0.5: nothing changed ---------------------------------------------------


def test_p05_no_changed_files_escalates() -> None:
    doc = clean()
    doc["changed_files"] = []
    assert decided(doc) == ("HUMAN_ESCALATED", "0.5", "NO_CHANGED_FILES")


# --- priority 1: protected surfaces ------------------------------------------------


@pytest.mark.parametrize(
    ("path", "cls"),
    [
        ("bin/plangate", "core-cli"),
        ("CLAUDE.md", "rules"),
        ("docs/claude.md", "rules"),  # case-folded
        ("scripts/ai-loop/arbiter.py", "decision-code"),
        ("docs/ai/ai-loop/decision-table.md", "policy-spec"),
        (".claude/skills/ai-loop-cycle/SKILL.md", "execution-skill"),
        ("eval/graders/exact.py", "grader"),
        ("eval/fixtures/sealed/case1.json", "sealed-fixture"),
        (".plangate/protected-surfaces.toml", "surfaces-definition"),
    ],
)
def test_p1_touching_a_protected_surface_escalates(path: str, cls: str) -> None:
    doc = clean()
    doc["changed_files"] = [path]
    doc["allowed_paths"] = ["**"]  # declaring it in scope does not avoid the boundary
    doc["lite"]["size_ok"] = True
    result = run(doc)
    assert decided(doc) == ("HUMAN_ESCALATED", "1", "TOUCHES_PROTECTED_SURFACE")
    assert result.facts["boundary_check"] == "touches-HO"
    assert result.facts["protected_hits"][0]["class"] == cls


def test_p1_beats_scope_and_blocked_verdicts() -> None:
    doc = clean()
    doc["changed_files"] = ["bin/plangate", "outside/x.py"]
    doc["verdicts"]["model_a"] = "reject"
    result = run(doc)
    assert result.facts["decided_by"]["priority"] == "1"
    assert result.codes[:2] == ("TOUCHES_PROTECTED_SURFACE", "SCOPE_VIOLATION")


# --- priority 1.5: scope ---------------------------------------------------------


def test_p15_file_outside_allowed_paths_escalates() -> None:
    doc = clean()
    doc["changed_files"] = ["src/app.py", "lib/extra.py"]
    result = run(doc)
    assert decided(doc) == ("HUMAN_ESCALATED", "1.5", "SCOPE_VIOLATION")
    assert result.facts["scope_violations"] == ["lib/extra.py"]
    assert result.facts["scope_check"] == "scope_violation"


def test_p15_scope_is_case_sensitive() -> None:
    doc = clean()
    doc["changed_files"] = ["SRC/app.py"]
    assert decided(doc)[1] == "1.5"


def test_p15_single_star_stays_in_one_segment() -> None:
    doc = clean()
    doc["changed_files"] = ["tests/sub/test_app.py"]
    assert decided(doc)[1] == "1.5"


# --- priority 1.6 / 1.65: plan package -----------------------------------------------


def test_p16_production_without_plan_package_escalates() -> None:
    doc = clean()
    del doc["plan_package"]
    assert decided(doc) == ("HUMAN_ESCALATED", "1.6", "PLAN_PACKAGE_MISSING")


def test_p16_non_production_without_plan_package_is_additive() -> None:
    doc = clean()
    del doc["plan_package"]
    doc["production"] = False
    assert decided(doc)[0] == "AUTO_APPROVED"
    del doc["production"]
    assert decided(doc)[0] == "AUTO_APPROVED"


@pytest.mark.parametrize(
    "key",
    [
        "plan_hash",
        "source_sha",
        "plan_package_hash",
        "c1_evidence_ref",
        "c2_evidence_ref",
        "reviewers",
    ],
)
def test_p16_missing_or_empty_required_key_escalates(key: str) -> None:
    doc = clean()
    del doc["plan_package"][key]
    assert decided(doc) == ("HUMAN_ESCALATED", "1.6", "PLAN_PACKAGE_STRUCTURE")
    doc = clean()
    doc["plan_package"][key] = ""
    assert decided(doc)[1] == "1.6"


def test_p16_unknown_key_in_block_escalates() -> None:
    doc = clean()
    doc["plan_package"]["decision"] = "AUTO_APPROVED"
    assert decided(doc)[1] == "1.6"


def block_mutations() -> list[tuple[str, Any]]:
    def trio(model: str, key: str) -> Any:
        def f(b: dict[str, Any]) -> None:
            b["reviewers"][model][key] = "sha256:" + "9" * 64 if "hash" in key else "b" * 40

        return f

    def set_(path: list[str], value: Any) -> Any:
        def f(b: dict[str, Any]) -> None:
            target = b
            for part in path[:-1]:
                target = target[part]
            target[path[-1]] = value

        return f

    def drop(path: list[str]) -> Any:
        def f(b: dict[str, Any]) -> None:
            target = b
            for part in path[:-1]:
                target = target[part]
            del target[path[-1]]

        return f

    return [
        ("model_b plan_hash differs", trio("model_b", "plan_hash")),
        ("model_a source_sha differs", trio("model_a", "source_sha")),
        ("model_a plan_package_hash differs", trio("model_a", "plan_package_hash")),
        ("source_sha differs from target", set_(["source_sha"], "c" * 40)),
        ("reviewers is a list", set_(["reviewers"], ["x"])),
        ("reviewers is a string", set_(["reviewers"], "x")),
        ("model_b missing", drop(["reviewers", "model_b"])),
        ("extra reviewer", set_(["reviewers", "model_c"], {})),
        ("snapshot key missing", drop(["reviewers", "model_a", "evidence_ref"])),
        ("snapshot extra key", set_(["reviewers", "model_a", "note"], "x")),
        ("snapshot empty value", set_(["reviewers", "model_a", "evidence_ref"], "")),
        ("snapshot verdict word", set_(["reviewers", "model_a", "verdict"], "approved")),
        (
            "snapshot verdict differs from verdicts",
            set_(["reviewers", "model_b", "verdict"], "reject"),
        ),
        ("same evidence_ref", set_(["reviewers", "model_b", "evidence_ref"], "a.md")),
        (
            "plan_hash not a digest",
            lambda b: (
                b.__setitem__("plan_hash", "SHA256:" + "1" * 64),
                [
                    b["reviewers"][m].__setitem__("plan_hash", "SHA256:" + "1" * 64)
                    for m in ("model_a", "model_b")
                ],
            ),
        ),
        ("c1 ref not a string", set_(["c1_evidence_ref"], ["x"])),
    ]


@pytest.mark.parametrize(
    ("what", "mutate"), block_mutations(), ids=[m[0] for m in block_mutations()]
)
def test_p165_integrity_failures_block(what: str, mutate: Any) -> None:
    doc = clean()
    mutate(doc["plan_package"])
    assert decided(doc) == ("BLOCKED", "1.65", "PLAN_PACKAGE_INTEGRITY"), what
    assert run(doc).exit_code == 1


def test_plan_package_check_reports_structure_and_integrity() -> None:
    assert plan_package_check(package_block(), SHA, clean()["verdicts"]).integrity_ok
    check = plan_package_check({}, SHA, clean()["verdicts"])
    assert (check.structure_ok, check.integrity_ok) == (False, False)


# --- priority 1.7: gates ---------------------------------------------------------


@pytest.mark.parametrize(
    "gates",
    [
        None,
        {},
        {"c1": "PASS"},
        {"c1": "pass", "breakdown": "pass"},
        {"c1": "PASS", "breakdown": "PASS"},
        "PASS",
        ["PASS"],
    ],
)
def test_p17_gates_must_pass_exactly(gates: Any) -> None:
    doc = clean()
    if gates is None:
        del doc["gates"]
    else:
        doc["gates"] = gates
    assert decided(doc) == ("HUMAN_ESCALATED", "1.7", "GATES_NOT_PASSED")


# --- priority 1.9: size ----------------------------------------------------------


def test_p19_size_ok_with_three_files_escalates() -> None:
    doc = clean()
    doc["changed_files"] = ["src/a.py", "src/b.py", "src/c.py"]
    assert decided(doc) == ("HUMAN_ESCALATED", "1.9", "SIZE_EXCEEDED")


def test_p19_two_files_are_within_size() -> None:
    doc = clean()
    doc["changed_files"] = ["src/a.py", "src/b.py"]
    assert decided(doc)[0] == "AUTO_APPROVED"


def test_p19_three_files_without_size_ok_fall_to_lite() -> None:
    doc = clean()
    doc["changed_files"] = ["src/a.py", "src/b.py", "src/c.py"]
    doc["lite"]["size_ok"] = False
    assert decided(doc) == ("HUMAN_ESCALATED", "2", "NOT_LITE")


# --- priority 1.95: cost cap -------------------------------------------------------


def with_run(round_index: int, cost_cap: int | None) -> dict[str, Any]:
    doc = clean()
    doc["run"] = {
        "run_id": "r1",
        "round_index": round_index,
        "task_id": "TASK-0001",
        "repair_action": None,
        "cost_cap": cost_cap,
    }
    return doc


def test_p195_round_over_cost_cap_escalates() -> None:
    assert decided(with_run(4, 3)) == ("HUMAN_ESCALATED", "1.95", "COST_CAP_EXCEEDED")


@pytest.mark.parametrize(("round_index", "cap"), [(3, 3), (1, 3), (9, None)])
def test_p195_equal_or_no_cap_passes(round_index: int, cap: int | None) -> None:
    assert decided(with_run(round_index, cap))[0] == "AUTO_APPROVED"


# --- priority 2: lite ------------------------------------------------------------


@pytest.mark.parametrize("axis", ["size_ok", "no_new_design", "follows_pattern", "reversible"])
@pytest.mark.parametrize("value", [False, None, 1, "true", "missing"])
def test_p2_every_lite_axis_must_be_exactly_true(axis: str, value: Any) -> None:
    doc = clean()
    doc["changed_files"] = ["src/a.py"]
    if value == "missing":
        del doc["lite"][axis]
    else:
        doc["lite"][axis] = value
    assert decided(doc) == ("HUMAN_ESCALATED", "2", "NOT_LITE")


# --- priority 3: class -------------------------------------------------------------


def test_p3_merge_class_escalates() -> None:
    doc = clean()
    doc["class"] = "merge"
    assert decided(doc) == ("HUMAN_ESCALATED", "3", "CLASS_MERGE")


# --- priorities 4 / 6 / 5: verdicts --------------------------------------------------


def verdict_doc(
    a: str,
    b: str,
    category: Any = None,
    c: Any = None,
    d: Any = None,
) -> dict[str, Any]:
    doc = clean()
    doc["verdicts"] = {
        "model_a": a,
        "model_b": b,
        "reject_category": category,
        "model_c": c,
        "model_d": d,
    }
    del doc["plan_package"]  # the block's verdicts must match; keep the table row isolated
    doc["production"] = False
    return doc


@pytest.mark.parametrize("b", ["approve", "reject"])
def test_p4_model_a_reject_blocks(b: str) -> None:
    assert decided(verdict_doc("reject", b)) == ("BLOCKED", "4", "VERDICTS_REJECTED")


def test_p6_approve_approve_auto_approves() -> None:
    assert decided(verdict_doc("approve", "approve")) == ("AUTO_APPROVED", "6", "VERDICTS_APPROVED")


SEVERITY_TABLE = {
    "ho_path_contact": "critical",
    "permission": "critical",
    "irreversible": "critical",
    "security_break": "critical",
    "public_api": "major",
    "data_integrity": "major",
    "migration": "major",
    "auth_change": "major",
    "logic": "minor",
    "performance": "minor",
    "test_shortage": "minor",
    "documentation": "low",
    "format": "low",
    "naming": "low",
}


def test_severity_map_is_exactly_the_documented_table() -> None:
    # Literal copy of docs/arbiter.md's table: a dropped or renamed row fails here
    # instead of silently leaving the parametrized test below.
    assert dict(SEVERITY_MAP) == SEVERITY_TABLE


@pytest.mark.parametrize(("category", "severity"), sorted(SEVERITY_TABLE.items()))
def test_severity_map_entries(category: str, severity: str) -> None:
    assert severity_of(category) == severity
    result = run(verdict_doc("approve", "reject", category, "approve", "approve"))
    assert result.facts["w_check"]["severity"] == severity
    assert result.facts["w_check"]["reject_category"] == category
    if severity in ("critical", "major"):
        assert result.verdict == "HUMAN_ESCALATED"
        assert result.facts["decided_by"]["code"] == f"REJECT_SEVERITY_{severity.upper()}"
    else:
        assert result.verdict == "AUTO_APPROVED"
        assert result.facts["decided_by"]["code"] == "MODELS_CD_APPROVED"


@pytest.mark.parametrize("category", [None, "unknown_category", "LOGIC"])
def test_null_or_unknown_category_is_critical(category: Any) -> None:
    assert severity_of(category) == "critical"
    assert decided(verdict_doc("approve", "reject", category, "approve", "approve")) == (
        "HUMAN_ESCALATED",
        "5",
        "REJECT_SEVERITY_CRITICAL",
    )


@pytest.mark.parametrize("category", ["logic", "naming"])
@pytest.mark.parametrize(
    ("c", "d", "expected"),
    [
        ("approve", "approve", ("AUTO_APPROVED", "5", "MODELS_CD_APPROVED")),
        ("reject", "reject", ("BLOCKED", "5", "MODELS_CD_REJECTED")),
        ("approve", "reject", ("HUMAN_ESCALATED", "5", "MODELS_CD_SPLIT")),
        ("reject", "approve", ("HUMAN_ESCALATED", "5", "MODELS_CD_SPLIT")),
        (None, "approve", ("HUMAN_ESCALATED", "5", "MODELS_CD_MISSING")),
        ("approve", None, ("HUMAN_ESCALATED", "5", "MODELS_CD_MISSING")),
        (None, None, ("HUMAN_ESCALATED", "5", "MODELS_CD_MISSING")),
    ],
)
def test_p5_models_c_and_d(category: str, c: Any, d: Any, expected: tuple[str, str, str]) -> None:
    assert decided(verdict_doc("approve", "reject", category, c, d)) == expected


# --- input contract ---------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "../etc/passwd",
        "src/../x.py",
        "src//x.py",
        "/abs/x.py",
        "src\\x.py",
        "./src/x.py",
        "src/./x.py",
        "",
        "src/",
        "src/*.py",
    ],
)
def test_path_safety_rejects_changed_files(path: str) -> None:
    doc = clean()
    doc["changed_files"] = [path]
    with pytest.raises(ArbiterInputError) as err:
        parse_input(doc)
    assert err.value.code == "ARBITER_INPUT_PATH_UNSAFE"
    assert err.value.exit_code == 1


@pytest.mark.parametrize("pattern", ["../x/**", "src//**", "/src/**", "src\\**", "./src/**", ""])
def test_path_safety_rejects_allowed_paths(pattern: str) -> None:
    doc = clean()
    doc["allowed_paths"] = [pattern]
    with pytest.raises(ArbiterInputError) as err:
        parse_input(doc)
    assert err.value.code == "ARBITER_INPUT_PATH_UNSAFE"


def mutated(change: Any) -> dict[str, Any]:
    doc = clean()
    change(doc)
    return doc


@pytest.mark.parametrize(
    ("what", "change"),
    [
        ("unknown top-level key", lambda d: d.__setitem__("extra", 1)),
        ("missing changed_files", lambda d: d.__delitem__("changed_files")),
        ("missing verdicts", lambda d: d.__delitem__("verdicts")),
        ("changed_files not a list", lambda d: d.__setitem__("changed_files", "src/a.py")),
        ("changed_files item not a string", lambda d: d.__setitem__("changed_files", [1])),
        ("empty allowed_paths", lambda d: d.__setitem__("allowed_paths", [])),
        ("lite not an object", lambda d: d.__setitem__("lite", True)),
        ("unknown lite axis", lambda d: d["lite"].__setitem__("fast", True)),
        ("bad class", lambda d: d.__setitem__("class", "Merge")),
        ("verdicts not an object", lambda d: d.__setitem__("verdicts", [])),
        ("model_a missing", lambda d: d["verdicts"].__delitem__("model_a")),
        ("model_b bad word", lambda d: d["verdicts"].__setitem__("model_b", "approved")),
        ("model_c bad word", lambda d: d["verdicts"].__setitem__("model_c", "yes")),
        ("reject_category not a string", lambda d: d["verdicts"].__setitem__("reject_category", 3)),
        ("unknown verdicts key", lambda d: d["verdicts"].__setitem__("model_e", "approve")),
        ("target_sha empty", lambda d: d.__setitem__("target_sha", "")),
        ("target_sha not hex", lambda d: d.__setitem__("target_sha", "HEAD")),
        ("target_sha uppercase", lambda d: d.__setitem__("target_sha", "A" * 40)),
        ("production string", lambda d: d.__setitem__("production", "true")),
        ("plan_package string", lambda d: d.__setitem__("plan_package", "x")),
        ("run not an object", lambda d: d.__setitem__("run", [])),
        (
            "run round_index bool",
            lambda d: d.__setitem__("run", {"run_id": "r", "round_index": True, "task_id": "T"}),
        ),
        (
            "run round_index string",
            lambda d: d.__setitem__("run", {"run_id": "r", "round_index": "1", "task_id": "T"}),
        ),
        (
            "run blank run_id",
            lambda d: d.__setitem__("run", {"run_id": " ", "round_index": 1, "task_id": "T"}),
        ),
        (
            "run cost_cap zero",
            lambda d: d.__setitem__(
                "run", {"run_id": "r", "round_index": 1, "task_id": "T", "cost_cap": 0}
            ),
        ),
        (
            "run cost_cap bool",
            lambda d: d.__setitem__(
                "run", {"run_id": "r", "round_index": 1, "task_id": "T", "cost_cap": True}
            ),
        ),
        (
            "run unknown key",
            lambda d: d.__setitem__(
                "run", {"run_id": "r", "round_index": 1, "task_id": "T", "budget": 1}
            ),
        ),
        (
            "run repair_action number",
            lambda d: d.__setitem__(
                "run", {"run_id": "r", "round_index": 1, "task_id": "T", "repair_action": 1}
            ),
        ),
    ],
)
def test_input_contract_violations_are_input_errors(what: str, change: Any) -> None:
    with pytest.raises(ArbiterInputError):
        parse_input(mutated(change))


def test_annotation_keys_are_ignored() -> None:
    doc = clean()
    doc["_comment"] = "replayed from another arbiter"
    assert decided(doc)[0] == "AUTO_APPROVED"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b'{"a": 1, "a": 2}', "JSON_DUPLICATE_KEY"),
        (b"[]", "JSON_NOT_OBJECT"),
        (b"\xef\xbb\xbf{}", "JSON_BOM"),
        (b'{"x": NaN}', "JSON_NON_FINITE"),
        (b"{", "JSON_SYNTAX"),
    ],
)
def test_strict_json_input(data: bytes, code: str) -> None:
    with pytest.raises(ArbiterInputError) as err:
        parse_input_bytes(data)
    assert err.value.code == code


def test_a_minimal_input_of_the_original_contract_replays() -> None:
    data = json.dumps(
        {
            "changed_files": ["scripts/ai-loop/sandbox_a.py"],
            "allowed_paths": ["scripts/ai-loop/sandbox_a.py"],
            "lite": {
                "size_ok": True,
                "no_new_design": True,
                "follows_pattern": True,
                "reversible": True,
            },
            "class": "no-merge",
            "verdicts": {"model_a": "approve", "model_b": "approve", "reject_category": None},
            "target_sha": "abc1234",
            "gates": {"c1": "PASS", "breakdown": "pass"},
        }
    ).encode()
    surfaces = load_surfaces_bytes(
        b'version = 1\n[[surface]]\npattern = "bin/plangate"\nclass = "core-cli"\nreason = "cli"\n',
        "explicit",
        "x",
    )
    result = decide(parse_input_bytes(data), surfaces, timestamp=TS)
    assert result.verdict == "AUTO_APPROVED"


# --- provenance ---------------------------------------------------------------


def test_same_input_same_timestamp_gives_identical_provenance() -> None:
    a = json.dumps(provenance_record(run(clean())), sort_keys=True)
    b = json.dumps(provenance_record(run(clean())), sort_keys=True)
    assert a == b


def test_provenance_echoes_optional_blocks_verbatim_and_omits_absent_ones() -> None:
    doc = clean()
    record = provenance_record(run(copy.deepcopy(doc)))
    assert record["plan_package"] == doc["plan_package"]
    assert record["gates"] == doc["gates"]
    assert "run" not in record
    assert record["timestamp"] == TS
    assert record["surfaces"] == {
        "provenance": "downstream",
        "path": ".plangate/protected-surfaces.toml",
        "digest": SURFACES.digest,
        "pattern_count": SURFACES.pattern_count,
    }
    assert record["verdict"] == record["decision"] == "AUTO_APPROVED"
    assert [c["priority"] for c in record["checks"]] == [
        "0",
        "0.5",
        "1",
        "1.5",
        "1.6",
        "1.65",
        "1.7",
        "1.9",
        "1.95",
        "2",
        "3",
        "6",
    ]


def test_every_failing_check_is_recorded_in_priority_order() -> None:
    doc = clean()
    doc["class"] = "merge"
    doc["gates"] = {}
    result = run(doc)
    assert result.codes == ("GATES_NOT_PASSED", "CLASS_MERGE")
    outcomes = {c["check"]: c["outcome"] for c in result.facts["checks"]}
    assert outcomes["gates"] == "fail" and outcomes["class"] == "fail"
    assert outcomes["scope"] == "pass"


def test_protected_check_against_an_unusable_definition_is_not_a_pass() -> None:
    empty = load_surfaces_bytes(b"", "explicit", "x.toml")
    outcomes = {c["check"]: c["outcome"] for c in run(clean(), empty).facts["checks"]}
    assert outcomes["surfaces"] == "fail"
    assert outcomes["protected_surfaces"] == "unresolved"


BLOCK_SHA = "a" * 40
HASHES = {name: "sha256:" + format(i, "x") * 64 for i, name in enumerate(ARTIFACTS, start=1)}
BLOCK_P = HASHES["plan.md"]
BLOCK_PP = plan_package_hash(HASHES)
VERDICTS = {"model_a": "approve", "model_b": "approve"}


def block(**changes):
    def snap(ref):
        return {
            "verdict": "approve",
            "plan_hash": BLOCK_P,
            "source_sha": BLOCK_SHA,
            "plan_package_hash": BLOCK_PP,
            "evidence_ref": ref,
        }

    out = {
        "plan_hash": BLOCK_P,
        "source_sha": BLOCK_SHA,
        "plan_package_hash": BLOCK_PP,
        "c1_evidence_ref": "review-self.md#PASS",
        "c2_evidence_ref": "review-external.md#approve",
        "reviewers": {"model_a": snap("a.md"), "model_b": snap("b.md")},
        "task_id": "TASK-0001",
        "artifact_hashes": dict(HASHES),
    }
    out.update(changes)
    return out


def test_consistent_optional_keys_pass():
    assert plan_package_check(block(), BLOCK_SHA, VERDICTS).integrity_ok


@pytest.mark.parametrize(
    "changes",
    [
        {"artifact_hashes": {**HASHES, "todo.md": "sha256:" + "f" * 64}},  # package hash differs
        {"artifact_hashes": {k: v for k, v in HASHES.items() if k != "todo.md"}},
        {"artifact_hashes": {**HASHES, "extra.md": "sha256:" + "f" * 64}},
        {"artifact_hashes": {**HASHES, "plan.md": "sha256:" + "e" * 64}},  # plan_hash differs
        {"artifact_hashes": "sha256:" + "0" * 64},
        {"artifact_hashes": None},
        {"task_id": "TASK-01"},
        {"task_id": 1},
    ],
)
def test_contradicting_optional_keys_are_an_integrity_failure(changes):
    """``artifact_hashes`` and ``task_id`` were accepted in any shape and never compared:
    a block whose own hashes contradict its package hash was AUTO_APPROVED."""
    check = plan_package_check(block(**changes), BLOCK_SHA, VERDICTS)
    assert check.structure_ok
    assert not check.integrity_ok


FORBIDDEN_MODULES = {
    "os",
    "subprocess",
    "datetime",
    "time",
    "pathlib",
    "shutil",
    "socket",
    "plangate.git",
    "plangate.fsutil",
    "plangate.ledger",
    "plangate.snapshot",
}
FORBIDDEN_CALLS = {"open", "read_regular_file", "sha256_of_file"}


def imported_and_called(path: Path) -> tuple[set[str], set[str]]:
    tree = ast.parse(path.read_text())
    imported: set[str] = set()
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            called.add(
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
    return imported, called


def test_arbiter_decision_module_does_no_io() -> None:
    imported, called = imported_and_called(Path(arbiter_module.__file__))
    assert not imported & FORBIDDEN_MODULES
    assert not called & FORBIDDEN_CALLS


def test_loopspec_derivation_does_no_io() -> None:
    imported, called = imported_and_called(Path(loopspec_module.__file__))
    assert not imported & FORBIDDEN_MODULES - {"plangate.snapshot"}  # check_task_id only
    assert not called & FORBIDDEN_CALLS


@pytest.mark.parametrize(
    "key", ["changed_files", "allowed_paths", "lite", "class", "verdicts", "target_sha"]
)
def test_every_required_input_key_is_required(key: str) -> None:
    doc = clean()
    del doc[key]
    with pytest.raises(ArbiterInputError) as info:
        parse_input(doc)
    assert info.value.code == "ARBITER_INPUT_INVALID"
    assert key in info.value.message


def test_changed_files_must_be_a_list() -> None:
    doc = clean()
    doc["changed_files"] = "src/app.py"
    with pytest.raises(ArbiterInputError, match="changed_files must be a list"):
        parse_input(doc)


def test_provenance_record_fields_of_a_clean_decision() -> None:
    record = provenance_record(run(clean()))
    assert record["policy_ref"] == "plangate-arbiter@v1"
    assert record["issued_by"].startswith("plangate-arbiter-")
    assert record["target_sha"] == SHA
    assert record["lite_check"] is True
    assert record["class_check"] == "no-merge"
    assert record["ho_paths_source"] == ".plangate/protected-surfaces.toml"
    assert record["ho_pattern_count"] == SURFACES.pattern_count
    assert record["changed_files"] == ["src/app.py", "tests/test_app.py"]
    assert record["allowed_paths"] == ["src/**", "tests/*.py"]
    assert record["protected_hits"] == []
    assert record["scope_violations"] == []
    assert record["production"] is True
    assert set(record["decided_by"]) == {"priority", "check", "code"}
    assert record["decided_by"]["code"] == "VERDICTS_APPROVED"
    for check in record["checks"]:
        assert set(check) == {"priority", "check", "outcome", "code"}
    assert record["reasons"] == [
        {"code": "VERDICTS_APPROVED", "message": record["reasons"][0]["message"]}
    ]


def test_failed_checks_carry_their_message() -> None:
    doc = clean()
    doc["changed_files"] = ["outside/x.py"]
    record = provenance_record(run(doc))
    failed = [c for c in record["checks"] if c["outcome"] != "pass"]
    assert failed
    for check in failed:
        assert set(check) == {"priority", "check", "outcome", "code", "message"}
        assert check["message"]


def test_the_documented_decision_table_is_the_row_order() -> None:
    # docs/arbiter.md lists the rows by check name in priority order; the verdict
    # row appears three times there (4, 6, 5: one row of the table decides them).
    doc = (Path(__file__).resolve().parents[3] / "docs" / "arbiter.md").read_text()
    table = doc[doc.index("| priority | check |") :]
    table = table[: table.index("\n\n")]
    checks = re.findall(r"^\| [0-9.]+ \| ([a-z_]+) \|", table, flags=re.MULTILINE)
    seen: list[str] = []
    for name in checks:
        if name not in seen:
            seen.append(name)
    rows = [
        row(arbiter_module._Case(_row_probe_input(), _row_probe_surfaces()))
        for row in arbiter_module.ROWS
    ]
    assert seen == [r.check for r in rows]
    assert [r.priority for r in rows][:11] == [
        "0",
        "0.5",
        "1",
        "1.5",
        "1.6",
        "1.65",
        "1.7",
        "1.9",
        "1.95",
        "2",
        "3",
    ]


def _row_probe_input() -> Any:
    return parse_input(clean())


def _row_probe_surfaces() -> Any:
    return SURFACES


def test_a_changed_file_the_plan_denies_is_a_scope_violation_inside_allowed_paths() -> None:
    doc = clean() | {"denied_paths": ["src/app.py"]}
    assert decided(doc)[1:] == ("1.5", "SCOPE_VIOLATION")
    assert run(doc).facts["scope_violations"] == ["src/app.py"]
    assert decided(clean() | {"denied_paths": ["src/other.py"]})[0] == "AUTO_APPROVED"
    assert decided(clean() | {"denied_paths": ["SRC"]})[1] == "1.5"  # case-folded, subtree
    with pytest.raises(ArbiterInputError):
        parse_input(clean() | {"denied_paths": ["./src"]})


# --- input contract: values at the edge of what is accepted ---------------------------


def run_block(**fields: Any) -> dict[str, Any]:
    out = {"run_id": "r1", "round_index": 1, "task_id": "TASK-0001"}
    out.update(fields)
    return out


@pytest.mark.parametrize(
    ("what", "change"),
    [
        ("round_index zero", lambda d: d.__setitem__("run", run_block(round_index=0))),
        ("cost_cap one", lambda d: d.__setitem__("run", run_block(round_index=1, cost_cap=1))),
        ("repair_action text", lambda d: d.__setitem__("run", run_block(repair_action="retry"))),
        ("run null", lambda d: d.__setitem__("run", None)),
        (
            "model_c and model_d words",
            lambda d: d["verdicts"].update(model_c="approve", model_d="reject"),
        ),
        ("reject_category text", lambda d: d["verdicts"].__setitem__("reject_category", "logic")),
        ("production false", lambda d: d.__setitem__("production", False)),
        ("production null", lambda d: d.__setitem__("production", None)),
        ("plan_package null", lambda d: d.__setitem__("plan_package", None)),
        ("target_sha of 7 hex", lambda d: d.__setitem__("target_sha", "abc1234")),
        ("target_sha of 64 hex", lambda d: d.__setitem__("target_sha", "f" * 64)),
        (
            "annotation keys everywhere",
            lambda d: (d["lite"].__setitem__("_why", "x"), d["verdicts"].__setitem__("_why", "x")),
        ),
    ],
)
def test_input_contract_accepts_values_at_its_edges(what: str, change: Any) -> None:
    parse_input(mutated(change))


@pytest.mark.parametrize(
    ("what", "change", "named"),
    [
        ("model_d bad word", lambda d: d["verdicts"].__setitem__("model_d", "yes"), "model_d"),
        ("model_b missing", lambda d: d["verdicts"].__delitem__("model_b"), "model_b"),
        ("run blank task_id", lambda d: d.__setitem__("run", run_block(task_id="  ")), "task_id"),
        (
            "run missing run_id",
            lambda d: d.__setitem__("run", {"round_index": 1, "task_id": "T"}),
            "run_id",
        ),
        (
            "run negative round",
            lambda d: d.__setitem__("run", run_block(round_index=-1)),
            "round_index",
        ),
        (
            "run missing round",
            lambda d: d.__setitem__("run", {"run_id": "r", "task_id": "T"}),
            "round_index",
        ),
        (
            "run cost_cap negative",
            lambda d: d.__setitem__("run", run_block(cost_cap=-1)),
            "cost_cap",
        ),
        ("run cost_cap text", lambda d: d.__setitem__("run", run_block(cost_cap="2")), "cost_cap"),
        ("target_sha of 6 hex", lambda d: d.__setitem__("target_sha", "abc123"), "target_sha"),
        ("target_sha of 65 hex", lambda d: d.__setitem__("target_sha", "f" * 65), "target_sha"),
        ("target_sha a number", lambda d: d.__setitem__("target_sha", 1234567), "target_sha"),
        ("production a number", lambda d: d.__setitem__("production", 1), "production"),
        ("plan_package a list", lambda d: d.__setitem__("plan_package", []), "plan_package"),
        ("lite a list", lambda d: d.__setitem__("lite", []), "lite"),
        ("class missing value", lambda d: d.__setitem__("class", None), "class"),
        (
            "reject_category a list",
            lambda d: d["verdicts"].__setitem__("reject_category", ["x"]),
            "reject_category",
        ),
        ("unknown run key", lambda d: d.__setitem__("run", run_block(budget=1)), "budget"),
        ("unknown lite key", lambda d: d["lite"].__setitem__("fast", True), "fast"),
        (
            "unknown verdicts key",
            lambda d: d["verdicts"].__setitem__("model_e", "approve"),
            "model_e",
        ),
        ("unknown top key", lambda d: d.__setitem__("extra", 1), "extra"),
    ],
)
def test_input_contract_violation_names_the_offending_key(
    what: str, change: Any, named: str
) -> None:
    with pytest.raises(ArbiterInputError) as err:
        parse_input(mutated(change))
    assert err.value.code == "ARBITER_INPUT_INVALID"
    assert named in err.value.message


@pytest.mark.parametrize("doc", [[], "x", None, 1])
def test_an_input_that_is_not_an_object_is_an_input_error(doc: Any) -> None:
    with pytest.raises(ArbiterInputError) as err:
        parse_input(doc)
    assert err.value.code == "ARBITER_INPUT_INVALID"
    assert "JSON object" in err.value.message


def test_empty_allowed_paths_is_refused_with_its_own_message() -> None:
    doc = clean()
    doc["allowed_paths"] = []
    with pytest.raises(ArbiterInputError) as err:
        parse_input(doc)
    assert (err.value.code, "allowed_paths is empty" in err.value.message) == (
        "ARBITER_INPUT_INVALID",
        True,
    )


def test_parsed_input_keeps_every_field() -> None:
    doc = clean()
    doc["run"] = run_block(cost_cap=3)
    inp = parse_input(doc)
    assert inp.changed_files == ("src/app.py", "tests/test_app.py")
    assert inp.allowed_paths == ("src/**", "tests/*.py")
    assert inp.lite == doc["lite"]
    assert inp.cls == "no-merge"
    assert inp.verdicts == doc["verdicts"]
    assert inp.target_sha == SHA
    assert inp.gates == {"c1": "PASS", "breakdown": "pass"}
    assert inp.run == doc["run"]
    assert inp.production is True
    assert inp.plan_package == doc["plan_package"]
    assert inp.document is doc


# --- plan package check: each rule reports its own problem, the first one wins ---------


def _set(path: str, value: Any) -> Any:
    def change(b: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = b
        for part in parents:
            target = target[part]
        target[last] = value

    return change


def _with_hashes(**overrides: str) -> Any:
    """artifact_hashes consistent with plan_package_hash, some artifacts changed."""

    def change(b: dict[str, Any]) -> None:
        hashes = {**HASHES, **{k.replace("_", "."): v for k, v in overrides.items()}}
        b["artifact_hashes"] = hashes
        b["plan_package_hash"] = plan_package_hash(hashes)
        for model in ("model_a", "model_b"):
            b["reviewers"][model]["plan_package_hash"] = b["plan_package_hash"]

    return change


OTHER = "sha256:" + "e" * 64
INTEGRITY_PROBLEMS: list[tuple[str, Any, str]] = [
    (
        "plan_hash upper",
        _set("plan_hash", "SHA256:" + "1" * 64),
        "plan_hash is not sha256:<64 lowercase hex>",
    ),
    (
        "package hash short",
        _set("plan_package_hash", "sha256:" + "2" * 63),
        "plan_package_hash is not sha256:<64 lowercase hex>",
    ),
    ("source_sha a number", _set("source_sha", 7), "source_sha is not a string"),
    ("c1 ref a list", _set("c1_evidence_ref", ["x"]), "c1_evidence_ref is not a string"),
    ("c2 ref a list", _set("c2_evidence_ref", ["x"]), "c2_evidence_ref is not a string"),
    ("task id short", _set("task_id", "TASK-1"), "task_id is not TASK- and four digits"),
    ("task id null", _set("task_id", None), "task_id is not TASK- and four digits"),
    ("hashes a list", _set("artifact_hashes", []), "artifact_hashes must map exactly"),
    (
        "hashes value not a digest",
        _set("artifact_hashes", {**HASHES, "todo.md": "x"}),
        "artifact_hashes must map exactly",
    ),
    (
        "hashes contradict package",
        _set("artifact_hashes", {**HASHES, "todo.md": OTHER}),
        "plan_package_hash is not the hash of artifact_hashes",
    ),
    (
        "hashes contradict plan",
        _with_hashes(plan_md=OTHER),
        "artifact_hashes[plan.md] differs from plan_hash",
    ),
    ("reviewers a list", _set("reviewers", ["x"]), "reviewers is not an object"),
    ("reviewers a third", _set("reviewers.model_c", {}), "reviewers must be exactly"),
    ("model_a not an object", _set("reviewers.model_a", "x"), "reviewers.model_a must hold"),
    ("model_b extra key", _set("reviewers.model_b.note", "x"), "reviewers.model_b must hold"),
    (
        "model_a blank ref",
        _set("reviewers.model_a.evidence_ref", "  "),
        "reviewers.model_a: empty ['evidence_ref']",
    ),
    (
        "model_b blank verdict",
        _set("reviewers.model_b.verdict", ""),
        "reviewers.model_b: empty ['verdict']",
    ),
    (
        "model_a plan_hash",
        _set("reviewers.model_a.plan_hash", OTHER),
        "reviewers.model_a.plan_hash differs from the package's plan_hash",
    ),
    (
        "model_b source_sha",
        _set("reviewers.model_b.source_sha", "b" * 40),
        "reviewers.model_b.source_sha differs from the package's source_sha",
    ),
    (
        "model_b package hash",
        _set("reviewers.model_b.plan_package_hash", OTHER),
        "reviewers.model_b.plan_package_hash differs",
    ),
    (
        "model_a verdict word",
        _set("reviewers.model_a.verdict", "ok"),
        "reviewers.model_a.verdict 'ok'$",
    ),
    (
        "model_b verdict differs",
        _set("reviewers.model_b.verdict", "reject"),
        "reviewers.model_b.verdict 'reject' differs from verdicts.model_b 'approve'",
    ),
    (
        "same ref",
        _set("reviewers.model_b.evidence_ref", "a.md"),
        "both reviewers cite the same evidence_ref",
    ),
    (
        "same ref spelled twice",
        _set("reviewers.model_b.evidence_ref", "./x/../a.md"),
        "both reviewers cite the same evidence_ref",
    ),
    (
        "source is not target",
        lambda b: (
            b.__setitem__("source_sha", "c" * 40),
            _set("reviewers.model_a.source_sha", "c" * 40)(b),
            _set("reviewers.model_b.source_sha", "c" * 40)(b),
        ),
        f"source_sha {'c' * 40} differs from target_sha {BLOCK_SHA}",
    ),
]


@pytest.mark.parametrize(
    ("what", "change", "reason"), INTEGRITY_PROBLEMS, ids=[p[0] for p in INTEGRITY_PROBLEMS]
)
def test_each_integrity_rule_reports_its_own_problem(what: str, change: Any, reason: str) -> None:
    b = block()
    change(b)
    check = plan_package_check(b, BLOCK_SHA, VERDICTS)
    assert (check.structure_ok, check.integrity_ok) == (True, False)
    if reason.endswith("$"):  # the whole reason, not a prefix of a longer one
        assert check.reason == reason[:-1]
    else:
        assert check.reason.startswith(reason), check.reason


def test_the_first_failing_integrity_rule_is_the_one_reported() -> None:
    b = block(source_sha="c" * 40, plan_hash="bad")
    assert plan_package_check(b, BLOCK_SHA, VERDICTS).reason.startswith("plan_hash is not")
    b = block(task_id="x", reviewers=["x"])
    assert plan_package_check(b, BLOCK_SHA, VERDICTS).reason.startswith("task_id")


def test_optional_keys_may_be_absent() -> None:
    b = block()
    del b["task_id"], b["artifact_hashes"]
    assert plan_package_check(b, BLOCK_SHA, VERDICTS) == arbiter_module.PackageCheck(True, True)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda b: b.__delitem__("reviewers"), "required key(s) missing or empty: ['reviewers']"),
        (
            lambda b: b.__setitem__("c2_evidence_ref", ""),
            "required key(s) missing or empty: ['c2_evidence_ref']",
        ),
        (lambda b: b.__setitem__("decision", "x"), "unknown key(s) ['decision']"),
    ],
)
def test_structure_problems_are_named(change: Any, reason: str) -> None:
    b = block()
    change(b)
    assert plan_package_check(b, BLOCK_SHA, VERDICTS) == arbiter_module.PackageCheck(
        False, False, reason
    )


def test_annotation_keys_in_the_block_are_ignored() -> None:
    assert plan_package_check(block(_note="rebuilt"), BLOCK_SHA, VERDICTS).integrity_ok


def test_structure_failure_is_recorded_and_integrity_is_not_judged() -> None:
    doc = clean()
    del doc["plan_package"]["reviewers"]
    result = run(doc)
    outcomes = {c["check"]: (c["outcome"], c["code"]) for c in result.facts["checks"]}
    assert outcomes["plan_package_structure"] == ("fail", "PLAN_PACKAGE_STRUCTURE")
    assert outcomes["plan_package_integrity"] == ("pass", "PLAN_PACKAGE_INTEGRITY")
    assert result.reasons[0].message == (
        "plan_package: required key(s) missing or empty: ['reviewers']"
    )


def test_integrity_failure_message_carries_the_reason() -> None:
    doc = clean()
    doc["plan_package"]["reviewers"]["model_b"]["evidence_ref"] = "a.md"
    result = run(doc)
    assert result.reasons[0].code == "PLAN_PACKAGE_INTEGRITY"
    assert result.reasons[0].message.startswith("plan_package: both reviewers cite")


# --- the record: every row's code, the verdict row's reads, echoed blocks --------------


def test_a_clean_decision_records_every_row_with_its_code() -> None:
    checks = [
        (c["priority"], c["check"], c["outcome"], c["code"]) for c in run(clean()).facts["checks"]
    ]
    assert checks == [
        ("0", "surfaces", "pass", "SURFACES_RESOLVED"),
        ("0.5", "changes", "pass", "NO_CHANGED_FILES"),
        ("1", "protected_surfaces", "pass", "TOUCHES_PROTECTED_SURFACE"),
        ("1.5", "scope", "pass", "SCOPE_VIOLATION"),
        ("1.6", "plan_package_structure", "pass", "PLAN_PACKAGE_STRUCTURE"),
        ("1.65", "plan_package_integrity", "pass", "PLAN_PACKAGE_INTEGRITY"),
        ("1.7", "gates", "pass", "GATES_NOT_PASSED"),
        ("1.9", "size", "pass", "SIZE_EXCEEDED"),
        ("1.95", "cost_cap", "pass", "COST_CAP_EXCEEDED"),
        ("2", "lite", "pass", "NOT_LITE"),
        ("3", "class", "pass", "CLASS_MERGE"),
        ("6", "verdicts", "pass", "VERDICTS_APPROVED"),
    ]


def test_a_decision_without_a_package_records_the_structure_row_as_passed() -> None:
    doc = clean()
    del doc["plan_package"]
    doc["production"] = False
    checks = {
        c["check"]: (c["priority"], c["outcome"], c["code"]) for c in run(doc).facts["checks"]
    }
    assert checks["plan_package_structure"] == ("1.6", "pass", "PLAN_PACKAGE_STRUCTURE")
    assert checks["plan_package_integrity"] == ("1.65", "pass", "PLAN_PACKAGE_INTEGRITY")


def test_the_surfaces_row_names_the_definition_it_used() -> None:
    result = run(clean())
    assert result.facts["checks"][0]["code"] == "SURFACES_RESOLVED"
    doc = clean()
    doc["class"] = "merge"
    doc["changed_files"] = []
    failed = {c["check"]: c.get("message") for c in run(doc).facts["checks"]}
    assert failed["surfaces"] is None  # passed: no message recorded
    assert failed["changes"] == "no changed files: there is nothing to approve"


@pytest.mark.parametrize(
    ("verdicts", "w_check"),
    [
        (("reject", "approve", None, None, None), {"model_a": "reject", "model_b": "approve"}),
        (("approve", "approve", "logic", None, None), {"model_a": "approve", "model_b": "approve"}),
        (
            ("approve", "reject", None, None, None),
            {"model_a": "approve", "model_b": "reject", "severity": "critical"},
        ),
        (
            ("approve", "reject", "migration", "approve", None),
            {
                "model_a": "approve",
                "model_b": "reject",
                "reject_category": "migration",
                "severity": "major",
            },
        ),
        (
            ("approve", "reject", "naming", "approve", None),
            {
                "model_a": "approve",
                "model_b": "reject",
                "reject_category": "naming",
                "severity": "low",
                "model_c": "approve",
                "model_d": None,
            },
        ),
        (
            ("approve", "reject", "logic", "reject", "reject"),
            {
                "model_a": "approve",
                "model_b": "reject",
                "reject_category": "logic",
                "severity": "minor",
                "model_c": "reject",
                "model_d": "reject",
            },
        ),
    ],
)
def test_the_verdict_row_records_exactly_what_it_read(
    verdicts: tuple[Any, ...], w_check: dict[str, Any]
) -> None:
    assert run(verdict_doc(*verdicts)).facts["w_check"] == w_check


def test_a_rejected_package_decision_has_an_empty_w_check() -> None:
    doc = clean()
    doc["class"] = "merge"
    assert run(doc).facts["w_check"] == {"model_a": "approve", "model_b": "approve"}


def test_record_of_an_escalated_decision() -> None:
    doc = clean()
    doc["changed_files"] = ["bin/plangate", "src/a.py", "lib/x.py"]
    doc["lite"]["reversible"] = False
    doc["class"] = "merge"
    doc["run"] = run_block(cost_cap=5)
    record = provenance_record(run(doc))
    assert record["decision"] == record["verdict"] == "HUMAN_ESCALATED"
    assert record["decided_by"] == {
        "priority": "1",
        "check": "protected_surfaces",
        "code": "TOUCHES_PROTECTED_SURFACE",
    }
    assert record["issued_by"] == f"plangate-arbiter-{plangate.__version__}"
    assert record["boundary_check"] == "touches-HO"
    assert record["scope_check"] == "scope_violation"
    assert record["lite_check"] is False
    assert record["class_check"] == "merge"
    assert record["protected_hits"] == [
        {
            "path": "bin/plangate",
            "pattern": "bin/plangate",
            "class": "core-cli",
            "family": "hardening-override",
        }
    ]
    assert record["scope_violations"] == ["bin/plangate", "lib/x.py"]
    assert record["run"] == doc["run"]
    assert [r["code"] for r in record["reasons"]] == [
        "TOUCHES_PROTECTED_SURFACE",
        "SCOPE_VIOLATION",
        "SIZE_EXCEEDED",
        "NOT_LITE",
        "CLASS_MERGE",
    ]
    assert record["reasons"][0]["hint"] == "a human approves every change to a protected surface"
    assert record["reasons"][1]["message"] == (
        "changed files outside allowed_paths: bin/plangate, lib/x.py"
    )


def test_record_of_an_unresolved_definition() -> None:
    empty = load_surfaces_bytes(b"", "explicit", "x.toml")
    record = provenance_record(run(clean(), empty))
    assert record["scope_check"] == "unresolved"
    assert record["boundary_check"] == "unresolved"
    assert record["ho_paths_source"] == "x.toml"
    assert record["ho_pattern_count"] == 0


def test_record_echoes_production_false_and_omits_absent_gates() -> None:
    doc = clean()
    del doc["plan_package"], doc["gates"]
    doc["production"] = False
    record = provenance_record(run(doc))
    assert record["production"] is False
    assert "gates" not in record and "plan_package" not in record and "run" not in record


def test_approval_by_models_c_and_d_reports_only_the_deciding_row() -> None:
    record = provenance_record(run(verdict_doc("approve", "reject", "logic", "approve", "approve")))
    assert record["decision"] == "AUTO_APPROVED"
    assert record["decided_by"]["code"] == "MODELS_CD_APPROVED"
    assert [r["code"] for r in record["reasons"]] == ["MODELS_CD_APPROVED"]
    assert "hint" not in record["reasons"][0]


def test_a_blocked_decision_lists_every_failed_row() -> None:
    doc = verdict_doc("reject", "reject")
    doc["class"] = "merge"
    result = run(doc)
    assert result.verdict == "HUMAN_ESCALATED"
    assert result.codes == ("CLASS_MERGE", "VERDICTS_REJECTED")
    assert result.reasons[1].hint == "address the rejection"


def test_cost_cap_row_message_names_round_and_cap() -> None:
    result = run(with_run(4, 3))
    assert result.reasons[0].message == "round 4 exceeds cost cap 3"


def test_size_row_counts_the_changed_files() -> None:
    doc = clean()
    doc["changed_files"] = ["src/a.py", "src/b.py", "src/c.py"]
    assert run(doc).reasons[0].message == "lite.size_ok declared but 3 files changed (at most 2)"


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d.__setitem__("extra", 1), "input: unknown key(s) ['extra']"),
        (lambda d: d["lite"].__setitem__("fast", True), "lite: unknown key(s) ['fast']"),
        (
            lambda d: d["verdicts"].__setitem__("model_e", "x"),
            "verdicts: unknown key(s) ['model_e']",
        ),
        (lambda d: d.__setitem__("run", run_block(budget=1)), "run: unknown key(s) ['budget']"),
    ],
)
def test_an_unknown_key_is_named_with_the_object_it_is_in(change: Any, where: str) -> None:
    with pytest.raises(ArbiterInputError) as err:
        parse_input(mutated(change))
    assert err.value.message == where


def test_an_unsafe_allowed_path_is_named_with_its_index() -> None:
    doc = clean()
    doc["allowed_paths"] = ["src/**", "../x"]
    with pytest.raises(ArbiterInputError) as err:
        parse_input(doc)
    assert err.value.message.startswith("allowed_paths[1]: PATH_DOTDOT: ")


def test_a_sound_package_check_carries_no_reason() -> None:
    assert plan_package_check(block(), BLOCK_SHA, VERDICTS).reason == ""


@pytest.mark.parametrize(
    ("verdicts", "code", "outcome"),
    [
        (("reject", "approve", None, None, None), "VERDICTS_REJECTED", "fail"),
        (("approve", "reject", "migration", None, None), "REJECT_SEVERITY_MAJOR", "fail"),
        (("approve", "reject", "logic", None, "approve"), "MODELS_CD_MISSING", "fail"),
        (("approve", "reject", "logic", "approve", "approve"), "MODELS_CD_APPROVED", "pass"),
        (("approve", "reject", "logic", "reject", "reject"), "MODELS_CD_REJECTED", "fail"),
        (("approve", "reject", "logic", "reject", "approve"), "MODELS_CD_SPLIT", "fail"),
        (("approve", "approve", None, None, None), "VERDICTS_APPROVED", "pass"),
    ],
)
def test_the_verdict_row_is_recorded_as_the_verdicts_check(
    verdicts: tuple[Any, ...], code: str, outcome: str
) -> None:
    result = run(verdict_doc(*verdicts))
    last = result.facts["checks"][-1]
    assert (last["check"], last["code"], last["outcome"]) == ("verdicts", code, outcome)
    assert result.facts["decided_by"]["check"] == "verdicts"
    assert [r.code for r in result.reasons] == [code]


def test_the_models_cd_rejection_has_no_hint() -> None:
    record = provenance_record(run(verdict_doc("approve", "reject", "logic", "reject", "reject")))
    assert "hint" not in record["reasons"][0]


def test_a_package_row_that_decides_names_its_check() -> None:
    doc = clean()
    del doc["plan_package"]
    assert run(doc).facts["decided_by"] == {
        "priority": "1.6",
        "check": "plan_package_structure",
        "code": "PLAN_PACKAGE_MISSING",
    }
    doc = clean()
    doc["plan_package"]["reviewers"]["model_b"]["evidence_ref"] = "a.md"
    assert run(doc).facts["decided_by"] == {
        "priority": "1.65",
        "check": "plan_package_integrity",
        "code": "PLAN_PACKAGE_INTEGRITY",
    }


def test_denied_paths_are_patterns_and_an_unsafe_one_is_named_with_its_index() -> None:
    inp = parse_input(clean() | {"denied_paths": ["src/secret/**", "src/*.key"]})
    assert inp.denied_paths == ("src/secret/**", "src/*.key")
    doc = clean() | {"changed_files": ["src/secret/a.py"], "denied_paths": ["src/secret/**"]}
    assert decided(doc) == ("HUMAN_ESCALATED", "1.5", "SCOPE_VIOLATION")
    with pytest.raises(ArbiterInputError) as err:
        parse_input(clean() | {"denied_paths": ["src/**", "a//b"]})
    assert err.value.message.startswith("denied_paths[1]: PATH_EMPTY_SEGMENT: ")
    assert parse_input(clean()).denied_paths == ()
