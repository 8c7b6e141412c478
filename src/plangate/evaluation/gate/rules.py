"""The policy gate: may this candidate enter paired evaluation? (pure)

:func:`decide` is a function of already-read facts (:class:`GateFacts`): it
opens no file, runs no git and reads no clock. The service
(:mod:`plangate.evaluation.gate.service`) gathers the facts from the ledger and the
baseline commit, never from the candidate's checkout.

Order of the checks (docs/evaluation.md "Gate order"); every failing check
adds its reasons, in this order, and the verdict is the most severe one:

1. identity and plan bindings: any binding problem -> ``INCONCLUSIVE`` (stop);
2. ``allowed_paths`` canonical and non-empty, else ``DENIED``;
3. declared ``allowed_paths`` overlapping protected authority -> ``DENIED``;
4. observed diff touching protected authority (case-folded; symlinks judged by
   their target too) -> ``DENIED``;
5. observed diff outside ``allowed_paths`` (case-sensitive), or a changed path
   that is not canonical -> ``HUMAN_REQUIRED``;
6. each changed verifier/gate: participating in this candidate's verifier set
   (or undecidable, or missing from a narrower set) -> ``DENIED``;
   non-participating -> may proceed only into the verifier-candidate procedure
   (flag ``requires_verifier_candidate_procedure``);
7. deletion, relaxation or narrowing of any gate or verifier (including switching it off
   in the runtime registry) -> ``HUMAN_REQUIRED``;
8. a declared change of the evaluation harness itself -> ``HUMAN_REQUIRED``,
   route I4 only.

``AUTO_APPROVED`` means only "may proceed to paired evaluation".
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plangate.errors import PlanGateError
from plangate.evaluation.harness.definition import (
    BLOCKING_RANK,
    JUDGE_TYPES,
    PROTECTED_SURFACES_PATH,
    UNAVAILABLE_RANK,
    HarnessDefinition,
)
from plangate.evaluation.registry.candidate import check_allowed_paths
from plangate.paths import PathRejected, glob_match, is_canonical_path, patterns_overlap
from plangate.surfaces import ResolvedSurfaces
from plangate.verdict import PolicyVerdict, Reason, Result

INCONCLUSIVE = "INCONCLUSIVE"

# Severity order of the gate's verdicts (higher wins).
_SEVERITY = {
    PolicyVerdict.AUTO_APPROVED.value: 0,
    PolicyVerdict.HUMAN_REQUIRED.value: 1,
    PolicyVerdict.DENIED.value: 2,
}

# Surface families (plangate.surfaces) -> independence classes (DECISIONS 16).
_FAMILY_TO_CLASS = {
    "evaluation-harness": "evaluation_harness",
    "human-owned-boundary": "human_owned",
    "hardening-override": "human_owned",
    "judgement-base": "policy",
}


@dataclass(frozen=True)
class ProtectedPattern:
    """One protected pattern with its class and where it came from."""

    pattern: str
    cls: str
    family: str
    reason: str
    provenance: str
    source: str

    def to_json(self) -> dict[str, str]:
        """JSON form used in ``matched_surfaces``."""
        return {
            "pattern": self.pattern,
            "class": self.cls,
            "family": self.family,
            "reason": self.reason,
            "provenance": self.provenance,
            "source": self.source,
        }


@dataclass(frozen=True)
class GateFacts:
    """Everything the gate decides from, already read by the service."""

    candidate: Mapping[str, Any]
    candidate_digest: str
    plan_digest: str
    binding_problems: tuple[Reason, ...] = ()
    plan: Mapping[str, Any] | None = None
    baseline_manifest: Mapping[str, Any] | None = None
    baseline_definition: HarnessDefinition | None = None
    candidate_definition: HarnessDefinition | None = None
    candidate_definition_problem: Reason | None = None
    surfaces: ResolvedSurfaces | None = None
    surfaces_source: str = ""
    observed_diff: tuple[str, ...] = ()
    removed_paths: frozenset[str] = frozenset()
    symlink_targets: Mapping[str, str] = field(default_factory=dict)
    diff_method: str = ""


def implicit_protected(
    plan: Mapping[str, Any], definition: HarnessDefinition, plan_digest: str
) -> list[ProtectedPattern]:
    """Protected authority that exists whatever the surfaces file says.

    The sealed fixtures, runner and grader files pinned in the registered plan,
    the protected-surfaces definition, the policy profile files and every
    ``eval`` component of the baseline definition are the evaluation harness
    itself (seed 000 section 1). The harness definition file is *not* implied:
    it describes the candidate's own pipeline (adding a verifier stage is a
    legitimate candidate); weakening it is caught by gate step 7 instead.
    """
    plan_src = f"evaluation plan {plan_digest}"
    out: list[ProtectedPattern] = []
    for fixture in plan.get("fixtures", []):
        out.append(
            ProtectedPattern(
                fixture["path"],
                "sealed-fixture",
                "evaluation-harness",
                f"sealed fixture {fixture['id']} ({fixture['role']})",
                "evaluation_plan",
                plan_src,
            )
        )
    for key in ("runner", "grader"):
        for item in plan.get(key, {}).get("files", []):
            out.append(
                ProtectedPattern(
                    item["path"],
                    "evaluator" if key == "runner" else "grader",
                    "evaluation-harness",
                    f"the plan's {key} (baseline copy)",
                    "evaluation_plan",
                    plan_src,
                )
            )
    def_src = f"harness definition {definition.source}"
    out.append(
        ProtectedPattern(
            PROTECTED_SURFACES_PATH,
            "surfaces-definition",
            "evaluation-harness",
            "the protected-surfaces definition",
            "harness_definition",
            def_src,
        )
    )
    for path in definition.policy_files:
        out.append(
            ProtectedPattern(
                path,
                "human-owned",
                "human-owned-boundary",
                "policy profile file",
                "harness_definition",
                def_src,
            )
        )
    for comp in definition.components:
        if comp.type == "eval":
            for pattern in comp.paths:
                out.append(
                    ProtectedPattern(
                        pattern,
                        "evaluator",
                        "evaluation-harness",
                        f"eval component {comp.id}",
                        "harness_definition",
                        def_src,
                    )
                )
    return out


def _surface_patterns(surfaces: ResolvedSurfaces, source: str) -> list[ProtectedPattern]:
    return [
        ProtectedPattern(e.pattern, e.cls, e.family, e.reason, surfaces.provenance, source)
        for e in surfaces.entries
    ]


def _matches_protected(path: str, protected: Sequence[ProtectedPattern]) -> list[ProtectedPattern]:
    return [p for p in protected if glob_match(p.pattern, path, casefold=True)]


def _symlink_target(link: str, target: str) -> str | None:
    """Lexically resolve a symlink target relative to its link; None if it leaves the repo."""
    if not target or target.startswith("/") or "\\" in target or "\x00" in target:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if joined == ".":
        return ""  # the repository root itself
    if joined.startswith("../") or joined == "..":
        return None
    return joined


def _components_touching(
    path: str, definitions: Sequence[HarnessDefinition]
) -> set[tuple[str, str]]:
    # Case-folded like protected surfaces: on a case-insensitive file system a case
    # variant *is* the component's file, so over-matching is the safe side here.
    # A changed ``.gitattributes`` changes how every file below its directory is
    # checked out (working-tree-encoding, eol, ident, filters) without changing
    # their blobs: it touches every component that can lie below it.
    name = path.rsplit("/", 1)[-1]
    below = f"{path[: len(path) - len(name)]}**" if name.casefold() == ".gitattributes" else None
    hits: set[tuple[str, str]] = set()
    for definition in definitions:
        for comp in definition.components:
            if any(glob_match(p, path, casefold=True) for p in comp.paths) or (
                below is not None and any(patterns_overlap(p, below) for p in comp.paths)
            ):
                hits.add((comp.id, comp.type))
    return hits


def _worst(verdict: str, other: str) -> str:
    return other if _SEVERITY[other] > _SEVERITY[verdict] else verdict


def decide(facts: GateFacts) -> Result:
    """Decide the Policy Verdict (or INCONCLUSIVE) for one candidate (pure)."""
    from plangate.evaluation.independence import required_level

    candidate = facts.candidate
    base_facts: dict[str, Any] = {
        "candidate_digest": facts.candidate_digest,
        "candidate_id": candidate.get("candidate_id"),
        "candidate_commit": candidate.get("candidate_commit"),
        "plan_digest": facts.plan_digest,
        "diff_method": facts.diff_method,
        "baseline_commit": facts.plan.get("baseline_commit") if facts.plan else None,
        "baseline_manifest_ref": facts.plan.get("baseline_manifest_ref") if facts.plan else None,
        "declares_evaluation_harness_change": candidate.get("changes_evaluation_harness"),
    }

    # 1. identity and plan bindings ------------------------------------------
    problems = list(facts.binding_problems)
    if not problems:
        if (
            facts.plan is None
            or facts.baseline_manifest is None
            or facts.baseline_definition is None
        ):
            problems.append(
                Reason(
                    "BASELINE_MANIFEST_UNOBTAINABLE",
                    "the plan or the baseline manifest was not obtained",
                    "check the ledger and the baseline commit",
                )
            )
        if facts.surfaces is None:
            problems.append(
                Reason(
                    "PROTECTED_SURFACES_UNAVAILABLE",
                    "the baseline's protected surfaces were not read",
                    f"commit {PROTECTED_SURFACES_PATH} at the baseline",
                )
            )
        elif facts.surfaces.problem is not None:
            problems.append(
                Reason(
                    "PROTECTED_SURFACES_UNRESOLVED",
                    f"the baseline's protected-surfaces definition is unusable: "
                    f"{facts.surfaces.problem.code}: {facts.surfaces.problem.message}",
                    facts.surfaces.problem.hint
                    or "fix the definition at the baseline commit "
                    "(a new baseline means a new plan)",
                )
            )
        if not facts.observed_diff and not problems:
            problems.append(
                Reason(
                    "NO_OBSERVED_HARNESS_DELTA",
                    "the candidate commit does not differ from the baseline",
                    "commit the candidate's change; there is nothing to evaluate",
                )
            )
    if problems:
        return Result(
            INCONCLUSIVE,
            tuple(problems),
            {**base_facts, "observed_diff": list(facts.observed_diff)},
        )
    # Guaranteed by the binding checks above; the asserts narrow types for mypy.
    assert facts.plan is not None  # noqa: S101
    assert facts.baseline_definition is not None  # noqa: S101
    assert facts.surfaces is not None  # noqa: S101
    assert facts.baseline_manifest is not None  # noqa: S101
    plan = facts.plan
    protected = _surface_patterns(facts.surfaces, facts.surfaces_source) + implicit_protected(
        plan, facts.baseline_definition, facts.plan_digest
    )

    verdict = PolicyVerdict.AUTO_APPROVED.value
    reasons: list[Reason] = []

    def add(level: PolicyVerdict | None, reason: Reason) -> None:
        nonlocal verdict
        if level is not None:
            verdict = _worst(verdict, level.value)
        reasons.append(reason)

    # 2. allowed_paths canonical and non-empty -----------------------------------
    allowed: list[str] | None
    try:
        allowed = check_allowed_paths(candidate.get("allowed_paths"))
    except PlanGateError as exc:
        allowed = None
        add(PolicyVerdict.DENIED, Reason(exc.code, exc.message, exc.hint))

    # 3. declared scope vs protected authority ----------------------------------
    declared_hits: list[dict[str, Any]] = []
    if allowed is not None:
        for pattern in allowed:
            for prot in protected:
                if patterns_overlap(pattern, prot.pattern):
                    declared_hits.append({"allowed_path": pattern, **prot.to_json()})
        if declared_hits:
            add(
                PolicyVerdict.DENIED,
                Reason(
                    "DECLARED_SCOPE_INTERSECTS_PROTECTED_AUTHORITY",
                    f"allowed_paths overlap protected authority: "
                    f"{sorted({(h['allowed_path'], h['pattern']) for h in declared_hits})[:5]}",
                    "a candidate may not declare protected authority in its scope",
                    tuple(sorted({h["allowed_path"] for h in declared_hits})),
                ),
            )

    # 4. observed diff vs protected authority -----------------------------------
    matched: list[dict[str, Any]] = []
    noncanonical: list[str] = []
    for path in facts.observed_diff:
        if not is_canonical_path(path):
            noncanonical.append(path)
            # A non-NFC name may address the same file as its NFC twin on some
            # file systems: judge the normalised form too (over-match is safe).
            normal = unicodedata.normalize("NFC", path)
            if is_canonical_path(normal):
                for prot in _matches_protected(normal, protected):
                    matched.append({"path": path, "via": "nfc", **prot.to_json()})
            continue
        for prot in _matches_protected(path, protected):
            matched.append({"path": path, "via": "path", **prot.to_json()})
    symlink_escapes: list[str] = []
    for link, target in sorted(facts.symlink_targets.items()):
        resolved = _symlink_target(link, target)
        if resolved is None:
            symlink_escapes.append(link)
            continue
        if resolved == "":
            symlink_escapes.append(link)
            continue
        try:
            hits = [
                p
                for p in protected
                if glob_match(p.pattern, resolved, casefold=True)
                or patterns_overlap(p.pattern, f"{resolved}/**")
            ]
        except PathRejected:
            symlink_escapes.append(link)
            continue
        for prot in hits:
            matched.append({"path": link, "via": f"symlink->{resolved}", **prot.to_json()})
    if matched:
        paths = sorted({m["path"] for m in matched})
        add(
            PolicyVerdict.DENIED,
            Reason(
                "PROTECTED_AUTHORITY_CHANGED",
                f"the observed diff touches protected authority: {paths[:5]}",
                "a candidate cannot modify the authority that judges it",
                tuple(paths),
            ),
        )
    if symlink_escapes:
        add(
            PolicyVerdict.DENIED,
            Reason(
                "SYMLINK_TARGET_UNSAFE",
                f"changed symlink(s) point outside the repository, at its root, or at an "
                f"undecidable target: {symlink_escapes[:5]}",
                "replace the symlink with a regular file inside allowed_paths",
                tuple(symlink_escapes),
            ),
        )

    # 5. observed diff within allowed_paths -------------------------------------
    if noncanonical:
        add(
            PolicyVerdict.HUMAN_REQUIRED,
            Reason(
                "NON_CANONICAL_CHANGED_PATH",
                f"changed path(s) are not canonical and cannot be scoped: {noncanonical[:5]!r}",
                "rename them to canonical repository-relative paths",
                tuple(noncanonical),
            ),
        )
    outside: list[str] = []
    if allowed is not None:
        canonical_diff = [p for p in facts.observed_diff if is_canonical_path(p)]
        outside = [p for p in canonical_diff if not any(glob_match(a, p) for a in allowed)]
        if outside:
            add(
                PolicyVerdict.HUMAN_REQUIRED,
                Reason(
                    "ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS",
                    f"the observed diff exceeds allowed_paths: {outside[:5]}",
                    "a human must decide, or register a new candidate whose scope covers it",
                    tuple(outside),
                ),
            )

    # 6. participation of changed verifiers and gates ---------------------------
    definitions = [facts.baseline_definition]
    if facts.candidate_definition is not None:
        definitions.append(facts.candidate_definition)
    changed: dict[str, set[str]] = {}
    for path in facts.observed_diff:
        if not is_canonical_path(path):
            continue
        for comp_id, comp_type in _components_touching(path, definitions):
            changed.setdefault(comp_id, set()).add(comp_type)
    base_by_id = {c.id: c for c in facts.baseline_definition.components}
    cand_by_id = (
        {c.id: c for c in facts.candidate_definition.components}
        if facts.candidate_definition is not None
        else {}
    )
    if facts.candidate_definition is not None:
        for comp_id, comp in base_by_id.items():
            other = cand_by_id.get(comp_id)
            if other is None or other != comp:
                changed.setdefault(comp_id, set()).add(comp.type)
                if other is not None:
                    changed[comp_id].add(other.type)
        for comp_id, comp in cand_by_id.items():
            if comp_id not in base_by_id:
                changed.setdefault(comp_id, set()).add(comp.type)
    plan_set_raw = plan.get("verifier_set")
    plan_set_ok = isinstance(plan_set_raw, list) and all(isinstance(x, str) for x in plan_set_raw)
    plan_set = set(plan_set_raw) if plan_set_ok and isinstance(plan_set_raw, list) else set()
    baseline_set = set(facts.baseline_manifest.get("verifier_set", []))
    participation: list[dict[str, Any]] = []
    participating: list[str] = []
    procedure: list[str] = []
    for comp_id in sorted(changed):
        types = changed[comp_id]
        if not types & JUDGE_TYPES:
            continue
        in_plan = comp_id in plan_set
        in_baseline = comp_id in baseline_set
        if not plan_set_ok:
            part, basis = True, "undecidable: the plan's verifier set is unreadable"
        elif in_plan:
            part, basis = True, "in the plan's verifier set"
        elif in_baseline:
            part, basis = True, "missing from a verifier set narrower than the baseline's"
        elif len(types) > 1:
            part, basis = True, "undecidable: the component changes type"
        else:
            part, basis = False, "not in the plan's verifier set"
        participation.append(
            {
                "component": comp_id,
                "type": "/".join(sorted(types)),
                "changed": True,
                "in_plan_verifier_set": in_plan,
                "in_baseline_verifier_set": in_baseline,
                "participating": part,
                "basis": basis,
            }
        )
        (participating if part else procedure).append(comp_id)
    if participating:
        add(
            PolicyVerdict.DENIED,
            Reason(
                "PARTICIPATING_VERIFIER_CHANGED",
                f"the candidate changes verifier/gate component(s) that judge it: {participating}",
                "a verifier that judges the candidate cannot be changed by it; propose the "
                "verifier change as its own candidate under a plan that it does not judge",
                tuple(participating),
            ),
        )
    if procedure:
        add(
            None,
            Reason(
                "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED",
                f"non-participating verifier/gate change(s) {procedure}: admitted only into the "
                "verifier-candidate procedure (stable meta-verifier, known mutants, baseline "
                "detection power)",
                "eval run must apply the known-mutant procedure of seed 000 section 3",
                tuple(procedure),
            ),
        )

    # 7. deletion, relaxation or narrowing of any gate or verifier --------------
    weakened: list[str] = []
    if facts.candidate_definition is None:
        problem = facts.candidate_definition_problem
        add(
            PolicyVerdict.HUMAN_REQUIRED,
            Reason(
                "HARNESS_DEFINITION_UNREADABLE_AT_CANDIDATE",
                "the candidate's harness definition cannot be read, so deletion or relaxation of "
                "its gates cannot be ruled out"
                + (f" ({problem.code}: {problem.message})" if problem else ""),
                "restore a valid harness definition in the candidate commit",
            ),
        )
    else:
        cand_def = facts.candidate_definition
        for comp in facts.baseline_definition.components:
            if comp.type not in JUDGE_TYPES:
                continue
            other = cand_by_id.get(comp.id)
            if other is None or other.type not in JUDGE_TYPES:
                weakened.append(f"{comp.id}: component removed")
                continue
            lost = [p for p in comp.paths if p not in other.paths]
            if lost:
                weakened.append(f"{comp.id}: paths removed {lost}")
            gone = sorted(
                p
                for p in facts.removed_paths
                if is_canonical_path(p) and any(glob_match(pat, p) for pat in comp.paths)
            )
            if gone:
                weakened.append(f"{comp.id}: files deleted {gone[:5]}")
        # Switching a verifier/gate off in the runtime registry deletes it in effect.
        for comp_id in facts.baseline_definition.registry_enabled:
            base_comp = base_by_id.get(comp_id)
            if (
                base_comp is not None
                and base_comp.type in JUDGE_TYPES
                and comp_id in cand_by_id
                and comp_id not in cand_def.registry_enabled
            ):
                weakened.append(f"{comp_id}: removed from the registry (disabled)")
        cand_stages = {s.component: s for s in cand_def.stages}
        for stage in facts.baseline_definition.stages:
            other_stage = cand_stages.get(stage.component)
            if other_stage is None:
                weakened.append(f"{stage.component}: removed from the verifier set")
                continue
            if BLOCKING_RANK[other_stage.blocking] < BLOCKING_RANK[stage.blocking]:
                weakened.append(
                    f"{stage.component}: blocking {stage.blocking} -> {other_stage.blocking}"
                )
            if (
                UNAVAILABLE_RANK[other_stage.on_unavailable]
                < UNAVAILABLE_RANK[stage.on_unavailable]
            ):
                weakened.append(
                    f"{stage.component}: on_unavailable {stage.on_unavailable} -> "
                    f"{other_stage.on_unavailable}"
                )
            if "**" not in other_stage.applies_to:
                narrowed = [p for p in stage.applies_to if p not in other_stage.applies_to]
                if narrowed:
                    weakened.append(f"{stage.component}: applies_to no longer covers {narrowed}")
        if weakened:
            add(
                PolicyVerdict.HUMAN_REQUIRED,
                Reason(
                    "GATE_OR_VERIFIER_WEAKENED",
                    f"a gate or verifier is deleted, relaxed or narrowed: {weakened[:5]}",
                    "deleting, relaxing or narrowing a gate/verifier always needs the human gate",
                    tuple(weakened),
                ),
            )

    # 8. declared change of the evaluation harness itself -----------------------
    eval_changed = sorted(cid for cid, types in changed.items() if "eval" in types)
    if candidate.get("changes_evaluation_harness") is True:
        add(
            PolicyVerdict.HUMAN_REQUIRED,
            Reason(
                "EVALUATION_HARNESS_CHANGE_I4_ONLY",
                "the candidate declares a change of the evaluation harness itself; ordinary paired "
                "evaluation never adopts it",
                "the only route is I4: human decision plus machine-independent evidence",
            ),
        )
    elif candidate.get("changes_evaluation_harness") is not False:
        add(
            PolicyVerdict.HUMAN_REQUIRED,
            Reason(
                "EVALUATION_HARNESS_DECLARATION_MISSING",
                "the candidate does not declare whether it changes the evaluation harness",
                "set changes_evaluation_harness to true or false",
            ),
        )
    # Declared "no", but an ``eval`` component changes (baseline eval paths are
    # already protected above, so this catches eval components the candidate
    # adds or redeclares): the declaration is a claim, the diff is the observation.
    elif eval_changed:
        add(
            PolicyVerdict.HUMAN_REQUIRED,
            Reason(
                "EVALUATION_HARNESS_CHANGE_UNDECLARED",
                f"eval component(s) {eval_changed} change although the candidate declares "
                "no change of the evaluation harness",
                "the evaluation harness is changed only on the I4 route; declare it or drop "
                "the change",
                tuple(eval_changed),
            ),
        )

    # required independence (DECISIONS 16) -------------------------------------
    classes: set[str] = set()
    for types in changed.values():
        classes |= types
    for item in matched + declared_hits:
        classes.add(_FAMILY_TO_CLASS.get(item["family"], item["family"]))
    if candidate.get("changes_evaluation_harness") is not False:
        classes.add("evaluation_harness")
    level, drivers = required_level(classes)

    if verdict == PolicyVerdict.AUTO_APPROVED.value:
        reasons.insert(
            0,
            Reason(
                "POLICY_GATE_PASSED",
                "the candidate may proceed to paired evaluation (and nothing more)",
            ),
        )
    out_facts = {
        **base_facts,
        "observed_diff": list(facts.observed_diff),
        "allowed_paths": allowed if allowed is not None else candidate.get("allowed_paths"),
        "outside_allowed_paths": outside,
        "declared_scope_hits": declared_hits,
        "matched_surfaces": matched,
        "surfaces_provenance": facts.surfaces.provenance_json() | {"source": facts.surfaces_source},
        "changed_components": sorted(changed),
        "participation": participation,
        "requires_verifier_candidate_procedure": bool(procedure),
        "weakened": weakened,
        "surface_classes": sorted(classes),
        "required_independence": level.value,
        "independence_drivers": list(drivers),
        "route": "I4_ONLY"
        if candidate.get("changes_evaluation_harness") is True or eval_changed
        else None,
    }
    return Result(verdict, tuple(reasons), out_facts)
