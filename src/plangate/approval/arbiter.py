"""The C-3' arbiter: input contract and decision table (pure; no IO).

Input: the arbiter input contract (docs/arbiter.md), the same keys as the
original arbiter's input, so such an input replays here unchanged. Validation is strict
(:func:`parse_input`): unknown keys are refused (keys starting with ``_`` are
annotations and ignored), every changed file must be a canonical path and every
allowed path a valid pattern. A non-canonical path (``..``, ``//``, a leading
``/``, a backslash, a leading ``./``) is refused, never normalised into a match.
An input that fails validation is an input error (exit 1), not a
decision.

Decision table, in priority order (the first failing row decides; every row is
evaluated and recorded in ``checks``):

======  ===============================================  ===============
0       protected surfaces unresolved (incl.              HUMAN_ESCALATED
        ``HO_BOUNDARY_UNDEFINED``)
0.5     no changed file at all                            HUMAN_ESCALATED
1       a changed file matches a protected surface        HUMAN_ESCALATED
        (case-folded; HO, judgement base, evaluation harness)
1.5     a changed file outside ``allowed_paths``          HUMAN_ESCALATED
1.6     production run without plan package, or plan      HUMAN_ESCALATED
        package structure NG
1.65    plan package integrity NG                         BLOCKED
1.7     gates not ``c1 == "PASS"`` and                    HUMAN_ESCALATED
        ``breakdown == "pass"``
1.9     ``lite.size_ok`` declared but more than 2 files   HUMAN_ESCALATED
1.95    ``run.round_index > run.cost_cap``                HUMAN_ESCALATED
2       a lite axis not exactly ``true``                  HUMAN_ESCALATED
3       ``class == "merge"``                              HUMAN_ESCALATED
4       verdicts reject-reject or reject-approve          BLOCKED
6       verdicts approve-approve                          AUTO_APPROVED
5       approve-reject: severity map, then models C/D     see docs/arbiter.md
======  ===============================================  ===============
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from plangate import __version__
from plangate.approval import contract as c
from plangate.approval.acceptor import normalise_evidence_ref
from plangate.canonical import StrictJSONError, is_digest, strict_loads_object
from plangate.errors import InputRejected
from plangate.paths import PathRejected, canonical_path, match_any, validate_pattern
from plangate.plan.package import ARTIFACT_SET, plan_package_hash
from plangate.plan.scope import TaskScope
from plangate.records import NamedTuple
from plangate.shapes import is_short_sha, is_task_id
from plangate.surfaces import ResolvedSurfaces
from plangate.verdict import Reason, Result

POLICY_REF = "plangate-arbiter@v1"
"""Policy reference stamped on every decision (docs/arbiter.md: version history)."""

ISSUED_BY = f"plangate-arbiter-{__version__}"
"""Issuer name stamped on every decision."""

SIZE_OK_MAX_FILES = 2
"""A change declared ``size_ok`` may touch at most this many files (priority 1.9)."""

LITE_AXES: tuple[str, ...] = ("size_ok", "no_new_design", "follows_pattern", "reversible")
CLASSES: tuple[str, ...] = ("merge", "no-merge")
VERDICT_WORDS: tuple[str, ...] = ("approve", "reject")

SEVERITY_MAP: Mapping[str, str] = {
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
"""``reject_category`` -> severity. A null or unknown category is ``critical``."""

INPUT_KEYS: tuple[str, ...] = (
    "changed_files", "allowed_paths", "lite", "class", "verdicts", "target_sha",
    "gates", "run", "production", "plan_package", "denied_paths",
)
REQUIRED_INPUT_KEYS: tuple[str, ...] = (
    "changed_files", "allowed_paths", "lite", "class", "verdicts", "target_sha",
)
VERDICTS_KEYS: tuple[str, ...] = ("model_a", "model_b", "reject_category", "model_c", "model_d")
RUN_KEYS: tuple[str, ...] = ("run_id", "round_index", "task_id", "repair_action", "cost_cap")
PLAN_PACKAGE_REQUIRED_KEYS: tuple[str, ...] = (
    "plan_hash", "source_sha", "plan_package_hash", "c1_evidence_ref", "c2_evidence_ref",
    "reviewers",
)
PLAN_PACKAGE_OPTIONAL_KEYS: tuple[str, ...] = ("task_id", "artifact_hashes")


class ArbiterDecision(StrEnum):
    """C-3' arbiter decisions (the arbiter's decision table)."""

    AUTO_APPROVED = "AUTO_APPROVED"
    HUMAN_ESCALATED = "HUMAN_ESCALATED"
    BLOCKED = "BLOCKED"


ESCALATED = ArbiterDecision.HUMAN_ESCALATED.value
BLOCKED = ArbiterDecision.BLOCKED.value
APPROVED = ArbiterDecision.AUTO_APPROVED.value


class ArbiterInputError(InputRejected):
    """The arbiter input violates its contract (exit 1, no decision)."""


def _input_error(message: str, hint: str = "fix the arbiter input") -> ArbiterInputError:
    return ArbiterInputError("ARBITER_INPUT_INVALID", message, hint)


@dataclass(frozen=True)
class ArbiterInput:
    """A validated arbiter input and the exact document it came from."""

    changed_files: tuple[str, ...]
    allowed_paths: tuple[str, ...]
    lite: Mapping[str, Any]
    cls: str
    verdicts: Mapping[str, Any]
    target_sha: str
    gates: Any
    run: Mapping[str, Any] | None
    production: bool | None
    plan_package: Mapping[str, Any] | None
    document: Mapping[str, Any]
    denied_paths: tuple[str, ...] = ()


def _check_keys(obj: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(k for k in obj if k not in allowed and not k.startswith("_"))
    if unknown:
        raise _input_error(f"{where}: unknown key(s) {unknown}",
                           f"allowed keys: {', '.join(allowed)} (and '_' annotations)")


def _path_list(value: Any, key: str, *, patterns: bool) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _input_error(f"{key} must be a list of strings")
    out: list[str] = []
    for index, item in enumerate(value):
        try:
            out.append(validate_pattern(item) if patterns else canonical_path(item))
        except PathRejected as exc:
            raise ArbiterInputError(
                "ARBITER_INPUT_PATH_UNSAFE",
                f"{key}[{index}]: {exc.code}: {exc.message}",
                "give canonical repository-relative paths: no '..', '//', leading '/' or "
                "'./', no backslash (paths are refused, never normalised)",
            ) from None
    return tuple(out)


def _non_blank(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _exact_int(value: Any) -> bool:
    return type(value) is int


def _parse_run(value: Any) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _input_error("run must be an object or null")
    _check_keys(value, RUN_KEYS, "run")
    for key in ("run_id", "task_id"):
        if not _non_blank(value.get(key)):
            raise _input_error(f"run.{key} must be a non-blank string")
    if not _exact_int(value.get("round_index")) or value["round_index"] < 0:
        raise _input_error("run.round_index must be an integer >= 0 (not a bool or string)")
    repair = value.get("repair_action")
    if repair is not None and not isinstance(repair, str):
        raise _input_error("run.repair_action must be a string or null")
    cap = value.get("cost_cap")
    if cap is not None and (not _exact_int(cap) or cap < 1):
        raise _input_error("run.cost_cap must be an integer >= 1 or null")
    return value


def parse_input(doc: Mapping[str, Any]) -> ArbiterInput:
    """Validate an arbiter input document (its contract: docs/arbiter.md); raise on a violation."""
    if not isinstance(doc, Mapping):
        raise _input_error("the input must be a JSON object")
    _check_keys(doc, INPUT_KEYS, "input")
    missing = [k for k in REQUIRED_INPUT_KEYS if k not in doc]
    if missing:
        raise _input_error(f"missing required key(s) {missing}")
    changed = _path_list(doc["changed_files"], "changed_files", patterns=False)
    allowed = _path_list(doc["allowed_paths"], "allowed_paths", patterns=True)
    if not allowed:
        raise _input_error("allowed_paths is empty: an empty scope allows nothing",
                           "derive it from plan.md (plangate loopspec)")
    lite = doc["lite"]
    if not isinstance(lite, dict):
        raise _input_error("lite must be an object with the four lite axes")
    _check_keys(lite, LITE_AXES, "lite")
    cls = doc["class"]
    if cls not in CLASSES:
        raise _input_error(f"class must be 'merge' or 'no-merge', got {cls!r}")
    verdicts = doc["verdicts"]
    if not isinstance(verdicts, dict):
        raise _input_error("verdicts must be an object")
    _check_keys(verdicts, VERDICTS_KEYS, "verdicts")
    for model in ("model_a", "model_b"):
        if verdicts.get(model) not in VERDICT_WORDS:
            raise _input_error(f"verdicts.{model} must be 'approve' or 'reject', "
                               f"got {verdicts.get(model)!r}")
    for model in ("model_c", "model_d"):
        if verdicts.get(model) is not None and verdicts[model] not in VERDICT_WORDS:
            raise _input_error(f"verdicts.{model} must be 'approve', 'reject' or null")
    category = verdicts.get("reject_category")
    if category is not None and not isinstance(category, str):
        raise _input_error("verdicts.reject_category must be a string or null")
    target = doc["target_sha"]
    if not isinstance(target, str) or not is_short_sha(target):
        raise _input_error(f"target_sha must be 7-64 lowercase hex, got {target!r}")
    production = doc.get("production")
    if production is not None and type(production) is not bool:
        raise _input_error("production must be true, false or null (not a string)")
    block = doc.get("plan_package")
    if block is not None and not isinstance(block, dict):
        raise _input_error("plan_package must be an object or null")
    denied = (_path_list(doc["denied_paths"], "denied_paths", patterns=True)
              if "denied_paths" in doc else ())
    return ArbiterInput(
        denied_paths=denied,
        changed_files=changed,
        allowed_paths=allowed,
        lite=lite,
        cls=cls,
        verdicts=verdicts,
        target_sha=target,
        gates=doc.get("gates"),
        run=_parse_run(doc.get("run")),
        production=production,
        plan_package=block,
        document=doc,
    )


def parse_input_bytes(data: bytes) -> ArbiterInput:
    """Strict-JSON parse (no duplicate keys, NaN, BOM...) then :func:`parse_input`."""
    try:
        doc = strict_loads_object(data, "arbiter input")
    except StrictJSONError as exc:
        raise ArbiterInputError(exc.code, f"arbiter input: {exc.message}", exc.hint) from None
    return parse_input(doc)


@dataclass(frozen=True)
class PackageCheck:
    """Outcome of the plan package block check (priorities 1.6 and 1.65)."""

    structure_ok: bool
    integrity_ok: bool
    reason: str = ""


def _structure_problem(block: Mapping[str, Any]) -> str | None:
    missing = [k for k in PLAN_PACKAGE_REQUIRED_KEYS if not block.get(k)]
    if missing:
        return f"required key(s) missing or empty: {missing}"
    unknown = sorted(k for k in block if k not in PLAN_PACKAGE_REQUIRED_KEYS
                     + PLAN_PACKAGE_OPTIONAL_KEYS and not k.startswith("_"))
    if unknown:
        return f"unknown key(s) {unknown}"
    return None


class _BlockFacts(NamedTuple):
    block: Mapping[str, Any]
    target_sha: str
    verdicts: Mapping[str, Any]


def _digests_problem(f: _BlockFacts) -> str | None:
    for key in ("plan_hash", "plan_package_hash"):
        if not is_digest(f.block[key]):
            return f"{key} is not sha256:<64 lowercase hex>"
    for key in ("source_sha", "c1_evidence_ref", "c2_evidence_ref"):
        if not isinstance(f.block[key], str):
            return f"{key} is not a string"
    return None


def _task_id_problem(f: _BlockFacts) -> str | None:
    # The optional keys are judged too: present data that contradicts the block is
    # never ignored.
    task_id = f.block.get("task_id")
    if "task_id" in f.block and not (isinstance(task_id, str) and is_task_id(task_id)):
        return "task_id is not TASK- and four digits"
    return None


def _artifact_hashes_problem(f: _BlockFacts) -> str | None:
    if "artifact_hashes" not in f.block:
        return None
    hashes = f.block["artifact_hashes"]
    if (
        not isinstance(hashes, dict)
        or set(hashes) != ARTIFACT_SET
        or not all(is_digest(v) for v in hashes.values())
    ):
        return "artifact_hashes must map exactly the six artifacts to digests"
    if plan_package_hash(hashes) != f.block["plan_package_hash"]:
        return "plan_package_hash is not the hash of artifact_hashes"
    if hashes["plan.md"] != f.block["plan_hash"]:
        return "artifact_hashes[plan.md] differs from plan_hash"
    return None


def _reviewers_shape_problem(f: _BlockFacts) -> str | None:
    reviewers = f.block["reviewers"]
    if not isinstance(reviewers, dict):
        return "reviewers is not an object"
    if set(reviewers) != set(c.REVIEWERS):
        return f"reviewers must be exactly model_a and model_b, got {sorted(reviewers)}"
    return None


def _snapshot_problem(f: _BlockFacts, model: str) -> str | None:
    snap = f.block["reviewers"][model]
    if not isinstance(snap, dict) or set(snap) != set(c.SNAPSHOT_KEYS):
        return f"reviewers.{model} must hold exactly {list(c.SNAPSHOT_KEYS)}"
    empty = [k for k in c.SNAPSHOT_KEYS if not _non_blank(snap[k])]
    if empty:
        return f"reviewers.{model}: empty {empty}"
    for key in c.TRIO_KEYS:
        if snap[key] != f.block[key]:
            return f"reviewers.{model}.{key} differs from the package's {key}"
    if snap["verdict"] not in c.VERDICTS:
        return f"reviewers.{model}.verdict {snap['verdict']!r}"
    if snap["verdict"] != f.verdicts.get(model):
        return (f"reviewers.{model}.verdict {snap['verdict']!r} differs from "
                f"verdicts.{model} {f.verdicts.get(model)!r}")
    return None


def _snapshots_problem(f: _BlockFacts) -> str | None:
    return next((p for m in c.REVIEWERS if (p := _snapshot_problem(f, m)) is not None), None)


def _independent_refs_problem(f: _BlockFacts) -> str | None:
    # Compared as the acceptor compares them: "a.md", "./a.md" and "x/../a.md" are
    # one review, not two independent ones.
    reviewers = f.block["reviewers"]
    if normalise_evidence_ref(reviewers["model_a"]["evidence_ref"]) == normalise_evidence_ref(
        reviewers["model_b"]["evidence_ref"]
    ):
        return "both reviewers cite the same evidence_ref (independent reviews required)"
    return None


def _source_is_target_problem(f: _BlockFacts) -> str | None:
    if f.block["source_sha"] != f.target_sha:
        return (f"source_sha {f.block['source_sha']} differs from target_sha "
                f"{f.target_sha}")
    return None


INTEGRITY_RULES: tuple[Callable[[_BlockFacts], str | None], ...] = (
    _digests_problem,
    _task_id_problem,
    _artifact_hashes_problem,
    _reviewers_shape_problem,
    _snapshots_problem,
    _independent_refs_problem,
    _source_is_target_problem,
)
"""Integrity of a well-formed block, in order; the first problem is reported."""


def plan_package_check(block: Mapping[str, Any], target_sha: str,
                       verdicts: Mapping[str, Any]) -> PackageCheck:
    """Structure (required keys present and non-empty) and integrity of a plan package block.

    Integrity (:data:`INTEGRITY_RULES`): digests well-formed, the optional task id
    and artifact hashes consistent, both reviewer snapshots present with exactly
    the five snapshot keys, their trio equal to the block's, verdict words valid
    and equal to the arbiter's ``verdicts`` (the decision is about the verdicts
    on record), independent evidence references, and ``source_sha == target_sha``.
    """
    structure = _structure_problem(block)
    if structure is not None:
        return PackageCheck(False, False, structure)
    facts = _BlockFacts(block, target_sha, verdicts)
    for rule in INTEGRITY_RULES:
        problem = rule(facts)
        if problem is not None:
            return PackageCheck(True, False, problem)
    return PackageCheck(True, True)


def severity_of(category: Any) -> str:
    """Severity of a ``reject_category``; null or unknown is ``critical``."""
    if isinstance(category, str) and category in SEVERITY_MAP:
        return SEVERITY_MAP[category]
    return "critical"


@dataclass(frozen=True)
class _Row:
    priority: str
    check: str
    failed: bool
    decision: str
    code: str
    message: str
    hint: str = ""
    unresolved: bool = False  # evaluated against an unusable definition

    @property
    def outcome(self) -> str:
        if self.failed:
            return "fail"
        return "unresolved" if self.unresolved else "pass"


def _verdict_row(verdicts: Mapping[str, Any], w_check: dict[str, Any]) -> _Row:
    a, b = verdicts["model_a"], verdicts["model_b"]
    w_check["model_a"], w_check["model_b"] = a, b
    if a == "reject":
        return _Row("4", "verdicts", True, BLOCKED, "VERDICTS_REJECTED",
                    f"reviewer verdicts {a}-{b}: model A rejects", "address the rejection")
    if b == "approve":
        return _Row("6", "verdicts", False, APPROVED, "VERDICTS_APPROVED",
                    "reviewer verdicts approve-approve")
    category = verdicts.get("reject_category")
    if category is not None:
        w_check["reject_category"] = category
    severity = severity_of(category)
    w_check["severity"] = severity
    if severity in ("critical", "major"):
        return _Row("5", "verdicts", True, ESCALATED, f"REJECT_SEVERITY_{severity.upper()}",
                    f"approve-reject with {severity} reject category {category!r}",
                    "a human decides critical and major rejections")
    model_c, model_d = verdicts.get("model_c"), verdicts.get("model_d")
    w_check["model_c"], w_check["model_d"] = model_c, model_d
    if model_c is None or model_d is None:
        return _Row("5", "verdicts", True, ESCALATED, "MODELS_CD_MISSING",
                    f"approve-reject with {severity} category: models C/D verdicts missing",
                    "ask models C and D, or a human")
    if model_c == "approve" and model_d == "approve":
        return _Row("5", "verdicts", False, APPROVED, "MODELS_CD_APPROVED",
                    f"approve-reject with {severity} category resolved by C/D approve-approve")
    if model_c == "reject" and model_d == "reject":
        return _Row("5", "verdicts", True, BLOCKED, "MODELS_CD_REJECTED",
                    f"approve-reject with {severity} category; C/D reject-reject")
    return _Row("5", "verdicts", True, ESCALATED, "MODELS_CD_SPLIT",
                f"approve-reject with {severity} category; C/D {model_c}-{model_d}",
                "a human breaks the tie")


@dataclass
class _Case:
    """One decision's input and what several rows read (computed once)."""

    inp: ArbiterInput
    surfaces: ResolvedSurfaces
    w_check: dict[str, Any] = field(default_factory=dict)  # filled by the verdict row

    @cached_property
    def unresolved(self) -> bool:
        """The protected-surface definition has a problem."""
        return self.surfaces.problem is not None

    @cached_property
    def hits(self) -> list[dict[str, str]]:
        """Changed files a protected surface covers (case-folded)."""
        out = []
        for path in self.inp.changed_files:
            entry = self.surfaces.match(path)
            if entry is not None:
                out.append({"path": path, "pattern": entry.pattern, "class": entry.cls,
                            "family": entry.family})
        return out

    @cached_property
    def outside(self) -> list[str]:
        """Changed files no allowed path covers (case-sensitive: under-allow is the safe side),
        and changed files the plan denies (:meth:`plangate.plan.scope.TaskScope.allows`)."""
        scope = TaskScope(self.inp.allowed_paths, None, self.inp.denied_paths)
        return [p for p in self.inp.changed_files
                if match_any(self.inp.allowed_paths, p) is None
                or scope.denies(p) is not None]

    @cached_property
    def package_check(self) -> PackageCheck | None:
        """The plan package block's check, when the input has one."""
        block = self.inp.plan_package
        return None if block is None else plan_package_check(block, self.inp.target_sha,
                                                             self.inp.verdicts)

    @cached_property
    def not_lite(self) -> list[str]:
        """Lite axes that are not exactly true."""
        return [axis for axis in LITE_AXES if self.inp.lite.get(axis) is not True]


def _surfaces_row(case: _Case) -> _Row:
    """0: the protected-surface definition must be resolved."""
    problem = case.surfaces.problem
    if problem is not None:
        return _Row("0", "surfaces", True, ESCALATED, problem.code, problem.message, problem.hint)
    return _Row("0", "surfaces", False, ESCALATED, "SURFACES_RESOLVED",
                f"{case.surfaces.provenance} definition, {case.surfaces.pattern_count} patterns")


def _changes_row(case: _Case) -> _Row:
    """0.5: an empty change is never "all clear"."""
    return _Row("0.5", "changes", not case.inp.changed_files, ESCALATED, "NO_CHANGED_FILES",
                "no changed files: there is nothing to approve",
                "run the arbiter on the implementation diff")


def _protected_row(case: _Case) -> _Row:
    """1: protected surfaces (case-folded)."""
    return _Row("1", "protected_surfaces", bool(case.hits), ESCALATED,
                "TOUCHES_PROTECTED_SURFACE",
                "changed files touch protected surfaces: " + ", ".join(
                    f"{h['path']} ({h['class']}: {h['pattern']})" for h in case.hits),
                "a human approves every change to a protected surface",
                unresolved=case.unresolved)


def _scope_row(case: _Case) -> _Row:
    """1.5: scope."""
    return _Row("1.5", "scope", bool(case.outside), ESCALATED, "SCOPE_VIOLATION",
                "changed files outside allowed_paths: " + ", ".join(case.outside),
                "re-plan: add the paths to '## Files / Components to Touch'")


def _package_structure_row(case: _Case) -> _Row:
    """1.6: the plan package block is present (in production) and well-formed."""
    if case.inp.plan_package is None:
        if case.inp.production is True:
            return _Row("1.6", "plan_package_structure", True, ESCALATED,
                        "PLAN_PACKAGE_MISSING", "production run without a plan_package block",
                        "build the input with 'plangate arbiter TASK ...'")
        return _Row("1.6", "plan_package_structure", False, ESCALATED,
                    "PLAN_PACKAGE_STRUCTURE", "")
    pc = case.package_check
    if pc is not None and not pc.structure_ok:
        return _Row("1.6", "plan_package_structure", True, ESCALATED,
                    "PLAN_PACKAGE_STRUCTURE", f"plan_package: {pc.reason}",
                    "rebuild the plan package block from the package")
    return _Row("1.6", "plan_package_structure", False, ESCALATED, "PLAN_PACKAGE_STRUCTURE", "")


def _package_integrity_row(case: _Case) -> _Row:
    """1.65: every reviewer saw the same Plan Package and commit (judged once well-formed)."""
    pc = case.package_check
    if pc is not None and pc.structure_ok and not pc.integrity_ok:
        return _Row("1.65", "plan_package_integrity", True, BLOCKED,
                    "PLAN_PACKAGE_INTEGRITY", f"plan_package: {pc.reason}",
                    "the reviewers did not see the same Plan Package and commit")
    return _Row("1.65", "plan_package_integrity", False, BLOCKED, "PLAN_PACKAGE_INTEGRITY", "")


def _gates_row(case: _Case) -> _Row:
    """1.7: gates (exact words)."""
    gates = case.inp.gates
    gates_ok = (isinstance(gates, dict) and gates.get("c1") == "PASS"
                and gates.get("breakdown") == "pass")
    return _Row("1.7", "gates", not gates_ok, ESCALATED, "GATES_NOT_PASSED",
                f"gates must be c1 == 'PASS' and breakdown == 'pass', got {gates!r}",
                "pass the C-1 and breakdown gates first")


def _size_row(case: _Case) -> _Row:
    """1.9: declared size against the real change."""
    count = len(case.inp.changed_files)
    too_big = case.inp.lite.get("size_ok") is True and count > SIZE_OK_MAX_FILES
    return _Row("1.9", "size", too_big, ESCALATED, "SIZE_EXCEEDED",
                f"lite.size_ok declared but {count} files changed "
                f"(at most {SIZE_OK_MAX_FILES})", "split the change or drop size_ok")


def _cost_cap_row(case: _Case) -> _Row:
    """1.95: cost cap (equal passes)."""
    run = case.inp.run
    over_cap = (run is not None and run.get("cost_cap") is not None
                and run["round_index"] > run["cost_cap"])
    return _Row("1.95", "cost_cap", over_cap, ESCALATED, "COST_CAP_EXCEEDED",
                f"round {run['round_index'] if run else None} exceeds cost cap "
                f"{run.get('cost_cap') if run else None}", "a human decides to continue")


def _lite_row(case: _Case) -> _Row:
    """2: lite (every axis exactly true)."""
    return _Row("2", "lite", bool(case.not_lite), ESCALATED, "NOT_LITE",
                f"lite axes not true: {case.not_lite}", "a non-lite change needs a human")


def _class_row(case: _Case) -> _Row:
    """3: class."""
    return _Row("3", "class", case.inp.cls == "merge", ESCALATED, "CLASS_MERGE",
                "class 'merge' always needs a human", "")


def _verdicts_row(case: _Case) -> _Row:
    """4 / 6 / 5: verdicts and the severity map (records what it read in ``w_check``)."""
    return _verdict_row(case.inp.verdicts, case.w_check)


ROWS: tuple[Callable[[_Case], _Row], ...] = (
    _surfaces_row,
    _changes_row,
    _protected_row,
    _scope_row,
    _package_structure_row,
    _package_integrity_row,
    _gates_row,
    _size_row,
    _cost_cap_row,
    _lite_row,
    _class_row,
    _verdicts_row,
)
"""The decision table in priority order; the first failing row decides."""


def _facts(case: _Case, rows: list[_Row], decisive: _Row, timestamp: str) -> dict[str, Any]:
    inp, surfaces = case.inp, case.surfaces
    scope_check = ("unresolved" if case.unresolved else
                   "scope_violation" if case.outside else "in_scope")
    facts: dict[str, Any] = {
        "decision": decisive.decision,
        "issued_by": ISSUED_BY,
        "policy_ref": POLICY_REF,
        "target_sha": inp.target_sha,
        "decided_by": {"priority": decisive.priority, "check": decisive.check,
                       "code": decisive.code},
        "w_check": case.w_check,
        "boundary_check": ("unresolved" if case.unresolved
                           else ("touches-HO" if case.hits else "clean")),
        "lite_check": not case.not_lite,
        "class_check": inp.cls,
        "scope_check": scope_check,
        "surfaces": {
            "provenance": surfaces.provenance,
            "path": surfaces.path,
            "digest": surfaces.digest,
            "pattern_count": surfaces.pattern_count,
        },
        "ho_paths_source": surfaces.path,
        "ho_pattern_count": surfaces.pattern_count,
        "protected_hits": case.hits,
        "scope_violations": case.outside,
        "changed_files": list(inp.changed_files),
        "allowed_paths": list(inp.allowed_paths),
        "checks": [
            {"priority": r.priority, "check": r.check,
             "outcome": r.outcome, "code": r.code,
             **({"message": r.message} if r.failed else {})}
            for r in rows
        ],
        "timestamp": timestamp,
    }
    # Optional blocks are echoed verbatim when supplied, omitted (never null) when not.
    for key in ("run", "gates", "plan_package", "production"):
        if inp.document.get(key) is not None:
            facts[key] = inp.document[key]
    return facts


def decide(inp: ArbiterInput, surfaces: ResolvedSurfaces, *, timestamp: str) -> Result:
    """Run the decision table :data:`ROWS`; ``facts`` is the provenance record."""
    case = _Case(inp, surfaces)
    rows = [row(case) for row in ROWS]
    decisive = next((r for r in rows if r.failed), rows[-1])
    reasons = tuple(Reason(r.code, r.message, r.hint) for r in rows if r.failed)
    if decisive.decision == APPROVED:
        reasons = (Reason(decisive.code, decisive.message),)
    return Result(decisive.decision, reasons, _facts(case, rows, decisive, timestamp))


def provenance_record(result: Result) -> dict[str, Any]:
    """The one JSON object printed for a decision: provenance plus verdict and reasons."""
    out = dict(result.facts)
    out["verdict"] = result.verdict
    out["reasons"] = [r.to_json() for r in result.reasons]
    return out
