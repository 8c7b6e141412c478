"""The policy gate: may this candidate enter paired evaluation? (pure)

:func:`decide` applies the rows of :data:`GATE_ROWS`, in order, to a
:class:`GateCase` made from already-read facts (:class:`GateFacts`): it opens
no file, runs no git and reads no clock. The service
(:mod:`plangate.evaluation.gate.service`) gathers the facts from the ledger and
the baseline commit, never from the candidate's checkout.

The first row (``bindings``) stops at once with ``INCONCLUSIVE``. Every other
row runs and adds its reasons, in table order, and the verdict is the most
severe (``DENIED`` > ``HUMAN_REQUIRED`` > ``AUTO_APPROVED``). Every row is
recorded in the ``rows`` fact. :data:`GATE_ORDER`, generated from the table,
is the order docs/evaluation.md documents ("Gate order").

``AUTO_APPROVED`` means only "may proceed to paired evaluation".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from plangate.errors import PlanGateError
from plangate.evaluation.gate.links import lexical_target, physical_target
from plangate.evaluation.harness.definition import (
    BLOCKING_RANK,
    JUDGE_TYPES,
    PROTECTED_SURFACES_PATH,
    UNAVAILABLE_RANK,
    ComponentDef,
    HarnessDefinition,
)
from plangate.evaluation.independence import required_level
from plangate.evaluation.registry.candidate import (
    ANYWHERE,
    EXCLUDE,
    check_allowed_paths,
    split_scope,
)
from plangate.evaluation.words import PolicyVerdict
from plangate.paths import (
    PathRejected,
    glob_match,
    is_canonical_path,
    match_any,
    patterns_overlap,
)
from plangate.surfaces import ResolvedSurfaces
from plangate.verdict import Reason, Result

INCONCLUSIVE = "INCONCLUSIVE"
DENIED = PolicyVerdict.DENIED.value
HUMAN_REQUIRED = PolicyVerdict.HUMAN_REQUIRED.value
AUTO_APPROVED = PolicyVerdict.AUTO_APPROVED.value

# Severity order of the gate's verdicts (higher wins).
_SEVERITY = {AUTO_APPROVED: 0, HUMAN_REQUIRED: 1, DENIED: 2}

# Surface families (plangate.surfaces) -> independence classes.
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
    """Changed symlinks of the candidate tree: path -> target."""
    tree_symlinks: Mapping[str, str] = field(default_factory=dict)
    """Every other symlink of the candidate tree (path -> target), for physical resolution."""
    tree_symlinks_complete: bool = True
    """False when the tree held more links than the service reads: every changed link is
    then undecidable."""
    diff_method: str = ""


def implicit_protected(
    plan: Mapping[str, Any], definition: HarnessDefinition, plan_digest: str
) -> list[ProtectedPattern]:
    """Protected authority that exists whatever the surfaces file says.

    The sealed fixtures, runner and grader files pinned in the registered plan,
    the protected-surfaces definition, the policy profile files and every
    ``eval`` component of the baseline definition are the evaluation harness
    itself. The harness definition file is *not* implied:
    it describes the candidate's own pipeline (adding a verifier stage is a
    legitimate candidate); weakening it is caught by the ``gates_weakened`` row instead.
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
            if match_any(comp.paths, path, casefold=True) is not None or (
                below is not None and any(patterns_overlap(p, below) for p in comp.paths)
            ):
                hits.add((comp.id, comp.type))
    return hits


@dataclass(frozen=True)
class Finding:
    """What a row found: the verdict it asks for (None: informational) and its reasons."""

    verdict: str | None
    reasons: tuple[Reason, ...]


@dataclass(frozen=True)
class LinkJudgement:
    """One changed symlink: where it lands (lexically and physically) or why it cannot."""

    link: str
    targets: tuple[str, ...]
    unsafe: bool


class GateCase:
    """The facts plus every value several rows read, computed once (pure)."""

    def __init__(self, facts: GateFacts) -> None:
        self.facts = facts
        self.candidate = facts.candidate

    # -- bindings (row 1 guarantees these are present for every later row) --------
    @property
    def plan(self) -> Mapping[str, Any]:
        assert self.facts.plan is not None  # noqa: S101 -- the bindings row stops before
        return self.facts.plan

    @property
    def baseline(self) -> HarnessDefinition:
        assert self.facts.baseline_definition is not None  # noqa: S101
        return self.facts.baseline_definition

    @property
    def surfaces(self) -> ResolvedSurfaces:
        assert self.facts.surfaces is not None  # noqa: S101
        return self.facts.surfaces

    @cached_property
    def protected(self) -> list[ProtectedPattern]:
        return _surface_patterns(self.surfaces, self.facts.surfaces_source) + implicit_protected(
            self.plan, self.baseline, self.facts.plan_digest
        )

    # -- declared scope ----------------------------------------------------------
    @cached_property
    def allowed_or_problem(self) -> tuple[list[str] | None, Reason | None]:
        try:
            return check_allowed_paths(self.candidate.get("allowed_paths")), None
        except PlanGateError as exc:
            return None, Reason(exc.code, exc.message, exc.hint)

    @property
    def allowed(self) -> list[str] | None:
        return self.allowed_or_problem[0]

    @cached_property
    def declared_hits(self) -> list[dict[str, Any]]:
        hits: list[dict[str, Any]] = []
        included, excluded = split_scope(self.allowed or [])
        for pattern in included:
            for prot in self.protected:
                if patterns_overlap(pattern, prot.pattern) and not excludes(
                    excluded, prot.pattern
                ):
                    hits.append({"allowed_path": pattern, **prot.to_json()})
        return hits

    # -- observed diff -----------------------------------------------------------
    @cached_property
    def canonical_diff(self) -> list[str]:
        return [p for p in self.facts.observed_diff if is_canonical_path(p)]

    @cached_property
    def noncanonical(self) -> list[str]:
        return [p for p in self.facts.observed_diff if not is_canonical_path(p)]

    @cached_property
    def links(self) -> list[LinkJudgement]:
        every = {**self.facts.tree_symlinks, **self.facts.symlink_targets}
        complete = self.facts.tree_symlinks_complete
        out: list[LinkJudgement] = []
        for link, target in sorted(self.facts.symlink_targets.items()):
            lexical = lexical_target(link, target)
            physical = physical_target(link, every)
            targets = tuple(dict.fromkeys(t for t in (lexical, physical) if t is not None))
            unsafe = (
                not complete
                or lexical is None
                or physical is None
                or "" in targets
                or not all(is_canonical_path(t) for t in targets)
            )
            out.append(LinkJudgement(link, targets, unsafe))
        return out

    @cached_property
    def matched(self) -> list[dict[str, Any]]:
        matched: list[dict[str, Any]] = []
        for path in self.facts.observed_diff:
            if is_canonical_path(path):
                for prot in _matches_protected(path, self.protected):
                    matched.append({"path": path, "via": "path", **prot.to_json()})
                continue
            # A non-NFC name may address the same file as its NFC twin on some file
            # systems: judge the normalised form too (over-matching is the safe side).
            normal = unicodedata.normalize("NFC", path)
            if is_canonical_path(normal):
                for prot in _matches_protected(normal, self.protected):
                    matched.append({"path": path, "via": "nfc", **prot.to_json()})
        for judged in self.links:
            for resolved in judged.targets if not judged.unsafe else ():
                for prot in self._protected_at_or_below(resolved):
                    matched.append(
                        {"path": judged.link, "via": f"symlink->{resolved}", **prot.to_json()}
                    )
        return matched

    def _protected_at_or_below(self, resolved: str) -> list[ProtectedPattern]:
        try:
            return [
                p
                for p in self.protected
                if glob_match(p.pattern, resolved, casefold=True)
                or patterns_overlap(p.pattern, f"{resolved}/**")
            ]
        except PathRejected:  # pragma: no cover - resolved targets are canonical
            return list(self.protected)

    @cached_property
    def outside(self) -> list[str]:
        allowed = self.allowed
        if allowed is None:
            return []
        included, excluded = split_scope(allowed)
        patterns = [e for e in excluded if e != ANYWHERE]
        anywhere = [p.pattern for p in self.protected if p.pattern.startswith("**/")]
        if ANYWHERE in excluded:
            patterns.extend(anywhere)
        # An excluded path is outside the scope whatever its case (never over-allowing).
        return [
            p
            for p in self.canonical_diff
            if match_any(included, p) is None or match_any(patterns, p, casefold=True)
        ]

    # -- components ----------------------------------------------------------------
    @property
    def definitions(self) -> list[HarnessDefinition]:
        cand = self.facts.candidate_definition
        return [self.baseline] if cand is None else [self.baseline, cand]

    @cached_property
    def base_by_id(self) -> dict[str, ComponentDef]:
        return {c.id: c for c in self.baseline.components}

    @cached_property
    def cand_by_id(self) -> dict[str, ComponentDef]:
        cand = self.facts.candidate_definition
        return {} if cand is None else {c.id: c for c in cand.components}

    @cached_property
    def changed(self) -> dict[str, set[str]]:
        """Changed component id -> its type(s): by a changed path, a changed link's
        target, or a changed declaration."""
        changed: dict[str, set[str]] = {}
        targets = [t for judged in self.links if not judged.unsafe for t in judged.targets]
        for path in [*self.canonical_diff, *targets]:
            for comp_id, comp_type in _components_touching(path, self.definitions):
                changed.setdefault(comp_id, set()).add(comp_type)
        for resolved in targets:
            for comp_id, comp_type in _components_below(resolved, self.definitions):
                changed.setdefault(comp_id, set()).add(comp_type)
        if self.facts.candidate_definition is not None:
            for comp_id, comp in self.base_by_id.items():
                other = self.cand_by_id.get(comp_id)
                if other != comp:
                    changed.setdefault(comp_id, set()).add(comp.type)
                    if other is not None:
                        changed[comp_id].add(other.type)
            for comp_id, comp in self.cand_by_id.items():
                if comp_id not in self.base_by_id:
                    changed.setdefault(comp_id, set()).add(comp.type)
        return changed

    @cached_property
    def participation(self) -> list[dict[str, Any]]:
        raw = self.plan.get("verifier_set")
        plan_set_ok = isinstance(raw, list) and all(isinstance(x, str) for x in raw)
        plan_set = set(raw) if plan_set_ok and isinstance(raw, list) else set()
        baseline_manifest = self.facts.baseline_manifest or {}
        baseline_set = set(baseline_manifest.get("verifier_set", []))
        rows: list[dict[str, Any]] = []
        for comp_id in sorted(self.changed):
            types = self.changed[comp_id]
            if not types & JUDGE_TYPES:
                continue
            in_plan, in_baseline = comp_id in plan_set, comp_id in baseline_set
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
            rows.append(
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
        return rows

    @cached_property
    def weakened(self) -> list[str]:
        if self.facts.candidate_definition is None:
            return []
        return [
            *_components_weakened(self.baseline, self.cand_by_id, self.facts.removed_paths),
            *_registry_weakened(self.baseline, self.facts.candidate_definition, self.cand_by_id),
            *_stages_weakened(self.baseline, self.facts.candidate_definition),
        ]

    @cached_property
    def eval_changed(self) -> list[str]:
        return sorted(cid for cid, types in self.changed.items() if "eval" in types)

    @property
    def declaration(self) -> object:
        return self.candidate.get("changes_evaluation_harness")


def _components_below(path: str, definitions: Sequence[HarnessDefinition]) -> set[tuple[str, str]]:
    """Components with a path pattern that can lie below directory ``path`` (a link to it)."""
    hits: set[tuple[str, str]] = set()
    for definition in definitions:
        for comp in definition.components:
            if any(patterns_overlap(p, f"{path}/**") for p in comp.paths):
                hits.add((comp.id, comp.type))
    return hits


def _components_weakened(
    baseline: HarnessDefinition, cand_by_id: Mapping[str, ComponentDef], removed: frozenset[str]
) -> list[str]:
    out: list[str] = []
    for comp in baseline.components:
        if comp.type not in JUDGE_TYPES:
            continue
        other = cand_by_id.get(comp.id)
        if other is None or other.type not in JUDGE_TYPES:
            out.append(f"{comp.id}: component removed")
            continue
        lost = [p for p in comp.paths if p not in other.paths]
        if lost:
            out.append(f"{comp.id}: paths removed {lost}")
        gone = sorted(
            p
            for p in removed
            if is_canonical_path(p) and match_any(comp.paths, p) is not None
        )
        if gone:
            out.append(f"{comp.id}: files deleted {gone[:5]}")
    return out


def _registry_weakened(
    baseline: HarnessDefinition,
    candidate: HarnessDefinition,
    cand_by_id: Mapping[str, ComponentDef],
) -> list[str]:
    """Switching a verifier/gate off in the runtime registry deletes it in effect."""
    base_by_id = {c.id: c for c in baseline.components}
    out: list[str] = []
    for comp_id in baseline.registry_enabled:
        base_comp = base_by_id.get(comp_id)
        if (
            base_comp is not None
            and base_comp.type in JUDGE_TYPES
            and comp_id in cand_by_id
            and comp_id not in candidate.registry_enabled
        ):
            out.append(f"{comp_id}: removed from the registry (disabled)")
    return out


def _stages_weakened(baseline: HarnessDefinition, candidate: HarnessDefinition) -> list[str]:
    cand_stages = {s.component: s for s in candidate.stages}
    out: list[str] = []
    for stage in baseline.stages:
        other = cand_stages.get(stage.component)
        if other is None:
            out.append(f"{stage.component}: removed from the verifier set")
            continue
        if BLOCKING_RANK[other.blocking] < BLOCKING_RANK[stage.blocking]:
            out.append(f"{stage.component}: blocking {stage.blocking} -> {other.blocking}")
        if UNAVAILABLE_RANK[other.on_unavailable] < UNAVAILABLE_RANK[stage.on_unavailable]:
            out.append(
                f"{stage.component}: on_unavailable {stage.on_unavailable} -> "
                f"{other.on_unavailable}"
            )
        if "**" not in other.applies_to:
            narrowed = [p for p in stage.applies_to if p not in other.applies_to]
            if narrowed:
                out.append(f"{stage.component}: applies_to no longer covers {narrowed}")
    return out


# -- the rows ---------------------------------------------------------------------
#
# Each row reads the case and returns a Finding, or None when it has nothing to say.


def _found(
    verdict: str | None, code: str, message: str, hint: str, evidence: Sequence[str] = ()
) -> Finding:
    return Finding(verdict, (Reason(code, message, hint, tuple(evidence)),))


def _bindings(case: GateCase) -> Finding | None:
    """Identity and plan bindings: anything missing stops the gate with INCONCLUSIVE."""
    facts = case.facts
    problems = list(facts.binding_problems)
    if problems:
        return Finding(INCONCLUSIVE, tuple(problems))
    if facts.plan is None or facts.baseline_manifest is None or facts.baseline_definition is None:
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
        problem = facts.surfaces.problem
        problems.append(
            Reason(
                "PROTECTED_SURFACES_UNRESOLVED",
                f"the baseline's protected-surfaces definition is unusable: "
                f"{problem.code}: {problem.message}",
                problem.hint
                or "fix the definition at the baseline commit (a new baseline means a new plan)",
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
    return Finding(INCONCLUSIVE, tuple(problems)) if problems else None


def _allowed_paths_readable(case: GateCase) -> Finding | None:
    problem = case.allowed_or_problem[1]
    return None if problem is None else Finding(DENIED, (problem,))


def excludes(excluded: Sequence[str], protected: str) -> bool:
    """Whether an exclusion removes every path ``protected`` matches (pure, conservative):
    the same pattern (case-folded), ``X/**`` excluding a pattern that starts with ``X/``,
    or ``protected-anywhere`` excluding a pattern that starts with ``**/``."""
    folded = protected.casefold()
    for pattern in excluded:
        if pattern == ANYWHERE:
            if protected.startswith("**/"):
                return True
            continue
        own = pattern.casefold()
        if own in (folded, "**"):
            return True
        if own.endswith("/**") and folded.startswith(own[:-2]):
            return True
    return False


def _declared_scope_protected(case: GateCase) -> Finding | None:
    hits = case.declared_hits
    if not hits:
        return None
    pairs = sorted({(h["allowed_path"], h["pattern"]) for h in hits})
    to_exclude = sorted({h["pattern"] for h in hits})
    return _found(
        DENIED,
        "DECLARED_SCOPE_INTERSECTS_PROTECTED_AUTHORITY",
        f"allowed_paths overlap protected authority: {pairs[:5]}"
        + (f" and {len(pairs) - 5} more" if len(pairs) > 5 else ""),
        "narrow allowed_paths, or exclude the protected patterns explicitly by adding: "
        + ", ".join(f'"{EXCLUDE}{p}"' for p in to_exclude)
        + (
            f' (or "{EXCLUDE}{ANYWHERE}" for every pattern starting with **/)'
            if any(p.startswith("**/") for p in to_exclude)
            else ""
        ),
        sorted({h["allowed_path"] for h in hits}),
    )


def _observed_diff_protected(case: GateCase) -> Finding | None:
    paths = sorted({m["path"] for m in case.matched})
    if not paths:
        return None
    return _found(
        DENIED,
        "PROTECTED_AUTHORITY_CHANGED",
        f"the observed diff touches protected authority: {paths[:5]}",
        "a candidate cannot modify the authority that judges it",
        paths,
    )


def _symlink_targets_safe(case: GateCase) -> Finding | None:
    unsafe = [j.link for j in case.links if j.unsafe]
    if not unsafe:
        return None
    return _found(
        DENIED,
        "SYMLINK_TARGET_UNSAFE",
        "changed symlink(s) point outside the repository, at its root, into a link loop, or "
        f"at an undecidable target: {unsafe[:5]}",
        "replace the symlink with a regular file inside allowed_paths",
        unsafe,
    )


def _changed_paths_canonical(case: GateCase) -> Finding | None:
    if not case.noncanonical:
        return None
    return _found(
        HUMAN_REQUIRED,
        "NON_CANONICAL_CHANGED_PATH",
        f"changed path(s) are not canonical and cannot be scoped: {case.noncanonical[:5]!r}",
        "rename them to canonical repository-relative paths",
        case.noncanonical,
    )


def _within_allowed_paths(case: GateCase) -> Finding | None:
    if not case.outside:
        return None
    return _found(
        HUMAN_REQUIRED,
        "ACTUAL_DELTA_OUTSIDE_ALLOWED_PATHS",
        f"the observed diff exceeds allowed_paths: {case.outside[:5]}",
        "a human must decide, or register a new candidate whose scope covers it",
        case.outside,
    )


def _participating_verifiers(case: GateCase) -> Finding | None:
    ids = [row["component"] for row in case.participation if row["participating"]]
    if not ids:
        return None
    return _found(
        DENIED,
        "PARTICIPATING_VERIFIER_CHANGED",
        f"the candidate changes verifier/gate component(s) that judge it: {ids}",
        "a verifier that judges the candidate cannot be changed by it; propose the verifier "
        "change as its own candidate under a plan that it does not judge",
        ids,
    )


def _verifier_candidate_procedure(case: GateCase) -> Finding | None:
    ids = [row["component"] for row in case.participation if not row["participating"]]
    if not ids:
        return None
    return _found(
        None,
        "VERIFIER_CANDIDATE_PROCEDURE_REQUIRED",
        f"non-participating verifier/gate change(s) {ids}: admitted only into the "
        "verifier-candidate procedure (stable meta-verifier, known mutants, baseline "
        "detection power)",
        "eval run applies the known-mutant procedure to a verifier candidate",
        ids,
    )


def _candidate_definition_readable(case: GateCase) -> Finding | None:
    if case.facts.candidate_definition is not None:
        return None
    problem = case.facts.candidate_definition_problem
    return _found(
        HUMAN_REQUIRED,
        "HARNESS_DEFINITION_UNREADABLE_AT_CANDIDATE",
        "the candidate's harness definition cannot be read, so deletion or relaxation of "
        "its gates cannot be ruled out"
        + (f" ({problem.code}: {problem.message})" if problem else ""),
        "restore a valid harness definition in the candidate commit",
    )


def _gates_weakened(case: GateCase) -> Finding | None:
    if not case.weakened:
        return None
    return _found(
        HUMAN_REQUIRED,
        "GATE_OR_VERIFIER_WEAKENED",
        f"a gate or verifier is deleted, relaxed or narrowed: {case.weakened[:5]}",
        "deleting, relaxing or narrowing a gate/verifier always needs the human gate",
        case.weakened,
    )


def _evaluation_harness_declaration(case: GateCase) -> Finding | None:
    if case.declaration is True:
        return _found(
            HUMAN_REQUIRED,
            "EVALUATION_HARNESS_CHANGE_I4_ONLY",
            "the candidate declares a change of the evaluation harness itself; ordinary "
            "paired evaluation never adopts it",
            "the only route is I4: human decision plus machine-independent evidence",
        )
    if case.declaration is not False:
        return _found(
            HUMAN_REQUIRED,
            "EVALUATION_HARNESS_DECLARATION_MISSING",
            "the candidate does not declare whether it changes the evaluation harness",
            "set changes_evaluation_harness to true or false",
        )
    # Declared "no", but an eval component changes (baseline eval paths are already
    # protected, so this catches eval components the candidate adds or redeclares):
    # the declaration is a claim, the diff is the observation.
    if case.eval_changed:
        return _found(
            HUMAN_REQUIRED,
            "EVALUATION_HARNESS_CHANGE_UNDECLARED",
            f"eval component(s) {case.eval_changed} change although the candidate declares "
            "no change of the evaluation harness",
            "the evaluation harness is changed only on the I4 route; declare it or drop the change",
            case.eval_changed,
        )
    return None


@dataclass(frozen=True)
class GateRow:
    """One row of the gate: its documented step, its name and its rule."""

    step: str
    name: str
    check: Callable[[GateCase], Finding | None]


GATE_ROWS: tuple[GateRow, ...] = (
    GateRow("1", "bindings", _bindings),
    GateRow("2", "allowed_paths_readable", _allowed_paths_readable),
    GateRow("3", "declared_scope_protected", _declared_scope_protected),
    GateRow("4", "observed_diff_protected", _observed_diff_protected),
    GateRow("4", "symlink_targets_safe", _symlink_targets_safe),
    GateRow("5", "changed_paths_canonical", _changed_paths_canonical),
    GateRow("5", "within_allowed_paths", _within_allowed_paths),
    GateRow("6", "participating_verifiers", _participating_verifiers),
    GateRow("6", "verifier_candidate_procedure", _verifier_candidate_procedure),
    GateRow("7", "candidate_definition_readable", _candidate_definition_readable),
    GateRow("7", "gates_weakened", _gates_weakened),
    GateRow("8", "evaluation_harness_declaration", _evaluation_harness_declaration),
)
"""The gate in order. ``bindings`` stops with INCONCLUSIVE; every other row runs."""

GATE_ORDER: tuple[str, ...] = tuple(row.name for row in GATE_ROWS)
"""The documented order, generated from :data:`GATE_ROWS`."""


def _base_facts(facts: GateFacts) -> dict[str, Any]:
    plan = facts.plan
    return {
        "candidate_digest": facts.candidate_digest,
        "candidate_id": facts.candidate.get("candidate_id"),
        "candidate_commit": facts.candidate.get("candidate_commit"),
        "plan_digest": facts.plan_digest,
        "diff_method": facts.diff_method,
        "baseline_commit": plan.get("baseline_commit") if plan else None,
        "baseline_manifest_ref": plan.get("baseline_manifest_ref") if plan else None,
        "declares_evaluation_harness_change": facts.candidate.get("changes_evaluation_harness"),
        "observed_diff": list(facts.observed_diff),
    }


def _row_record(row: GateRow, found: Finding | None) -> dict[str, Any]:
    return {
        "step": row.step,
        "rule": row.name,
        "outcome": "pass" if found is None else (found.verdict or "note"),
        "codes": [] if found is None else [r.code for r in found.reasons],
    }


def _judged_facts(case: GateCase) -> dict[str, Any]:
    classes: set[str] = set()
    for types in case.changed.values():
        classes |= types
    for item in case.matched + case.declared_hits:
        classes.add(_FAMILY_TO_CLASS.get(item["family"], item["family"]))
    if case.declaration is not False:
        classes.add("evaluation_harness")
    level, drivers = required_level(classes)
    allowed = case.allowed
    return {
        "allowed_paths": allowed if allowed is not None else case.candidate.get("allowed_paths"),
        "outside_allowed_paths": case.outside,
        "declared_scope_hits": case.declared_hits,
        "matched_surfaces": case.matched,
        "surfaces_provenance": case.surfaces.provenance_json()
        | {"source": case.facts.surfaces_source},
        "changed_components": sorted(case.changed),
        "participation": case.participation,
        "requires_verifier_candidate_procedure": any(
            not row["participating"] for row in case.participation
        ),
        "weakened": case.weakened,
        "surface_classes": sorted(classes),
        "required_independence": level.value,
        "independence_drivers": list(drivers),
        "route": "I4_ONLY" if case.declaration is True or case.eval_changed else None,
    }


def decide(facts: GateFacts) -> Result:
    """Decide the Policy Verdict (or INCONCLUSIVE) for one candidate (pure)."""
    case = GateCase(facts)
    base = _base_facts(facts)
    verdict = AUTO_APPROVED
    reasons: list[Reason] = []
    rows: list[dict[str, Any]] = []
    for row in GATE_ROWS:
        found = row.check(case)
        rows.append(_row_record(row, found))
        if found is None:
            continue
        if found.verdict == INCONCLUSIVE:
            return Result(INCONCLUSIVE, found.reasons, {**base, "rows": rows})
        if found.verdict is not None and _SEVERITY[found.verdict] > _SEVERITY[verdict]:
            verdict = found.verdict
        reasons.extend(found.reasons)
    if verdict == AUTO_APPROVED:
        reasons.insert(
            0,
            Reason(
                "POLICY_GATE_PASSED",
                "the candidate may proceed to paired evaluation (and nothing more)",
            ),
        )
    return Result(verdict, tuple(reasons), {**base, **_judged_facts(case), "rows": rows})
