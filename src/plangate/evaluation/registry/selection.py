"""Which registered plan judges a candidate, and when a new plan relaxes an old one (pure).

The candidate never chooses its judge. The evaluator selects the **newest**
registered plan whose ``covers`` patterns cover every path the candidate changes
against that plan's baseline (:func:`select_plan`). A plan registered for a
component replaces the plans registered earlier for it
(:func:`overlapping_plans`); when one of them has a recorded FAIL, a new plan
that is less strict in any item (:func:`relaxations`) needs a human's signature
(the registration rules in :mod:`plangate.evaluation.registry.authority`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plangate.evaluation.registry.plan import ACTIVATION_LEVELS
from plangate.paths import paths_outside, patterns_overlap
from plangate.records import NamedTuple
from plangate.verdict import Reason


class PlanOnRecord(NamedTuple):
    """A registered plan and where the ledger holds it (a higher ``seq`` is newer)."""

    digest: str
    plan: Mapping[str, Any]
    seq: int


class Selection(NamedTuple):
    """The selected plan, or why there is none."""

    plan: PlanOnRecord | None
    problem: Reason | None
    considered: tuple[dict[str, Any], ...]
    """Every plan looked at, newest first, with the changed paths it does not cover."""


def uncovered(covers: Sequence[str], paths: Sequence[str]) -> list[str]:
    """The paths no ``covers`` pattern matches (case-sensitive: never over-covering)."""
    return paths_outside(list(covers), paths)


def select_plan(
    plans: Sequence[PlanOnRecord], changed: Mapping[str, Sequence[str] | None]
) -> Selection:
    """The newest plan covering every changed path (``changed``: plan digest -> the
    candidate's diff against that plan's baseline, None when it cannot be computed).

    A plan newer than the selected one that covers *some* of the changed paths has
    replaced it for those components: the candidate then spans plans and is refused
    (``CANDIDATE_SPANS_PLANS``) instead of falling back to the older plan, so adding an
    unrelated change never buys an older, more lenient judge.
    """
    considered: list[dict[str, Any]] = []
    newest_first = sorted(plans, key=lambda p: p.seq, reverse=True)
    for index, record in enumerate(newest_first):
        diff = changed.get(record.digest)
        if diff is None:
            considered.append({"plan_digest": record.digest, "diff": "unavailable"})
            continue
        # An empty diff is covered by every plan (the gate then finds no delta to judge).
        outside = uncovered(list(record.plan.get("covers", [])), list(diff))
        if outside:
            considered.append({"plan_digest": record.digest, "uncovered": outside[:20]})
            continue
        newer = [
            (p.digest, path)
            for p in newest_first[:index]
            for path in diff
            if not uncovered(list(p.plan.get("covers", [])), [path])
        ]
        if newer:
            return Selection(
                None,
                Reason(
                    "CANDIDATE_SPANS_PLANS",
                    f"plan {record.digest} covers every changed path, but newer plans judge "
                    f"some of them: {sorted({path for _d, path in newer})[:10]} "
                    f"({', '.join(sorted({d for d, _p in newer}))})",
                    "split the candidate along the plans' components, or the evaluator "
                    "registers one plan covering all of them",
                ),
                tuple(considered),
            )
        return Selection(record, None, tuple(considered))
    if not plans:
        return Selection(
            None,
            Reason(
                "EVAL_NO_PLAN_REGISTERED",
                "no evaluation plan is registered: nothing can judge this candidate",
                "the evaluator registers a plan first: plangate eval plan register FILE",
            ),
            (),
        )
    newest = considered[0] if considered else {}
    return Selection(
        None,
        Reason(
            "CANDIDATE_PATHS_NOT_COVERED",
            "no registered plan covers every path this candidate changes "
            f"(newest plan leaves out: {newest.get('uncovered', newest.get('diff'))})",
            "the evaluator registers a plan whose covers include these components before "
            "the candidate is evaluated; a candidate cannot pick its judge",
        ),
        tuple(considered),
    )


def _threshold_relaxed(old: Mapping[str, Any], new: Sequence[Mapping[str, Any]]) -> bool:
    """Whether no item of ``new`` is at least as strict as the old threshold item."""
    for item in new:
        if item.get("metric") != old.get("metric") or item.get("op") != old.get("op"):
            continue
        value, bound = item.get("value"), old.get("value")
        if not isinstance(value, int | float) or not isinstance(bound, int | float):
            continue
        op = str(old.get("op"))
        if (op in (">=", ">") and value >= bound) or (op in ("<=", "<") and value <= bound):
            return False
        if op == "==" and value == bound:
            return False
    return True


def _activation_index(level: object) -> int:
    return ACTIVATION_LEVELS.index(str(level)) if level in ACTIVATION_LEVELS else -1


def relaxations(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """How ``new`` is less strict than ``old`` (empty: at least as strict in every item).

    Fewer trials; a fixture (by pinned digest) or a fixture role dropped; a
    verifier dropped; a threshold item lowered or missing; a critical regression
    condition dropped; a lower required activation.
    """
    found: list[str] = []
    if int(new.get("trials", 0)) < int(old.get("trials", 0)):
        found.append(f"trials {old.get('trials')} -> {new.get('trials')}")
    new_digests = {f.get("digest") for f in new.get("fixtures", [])}
    dropped = [f.get("id") for f in old.get("fixtures", []) if f.get("digest") not in new_digests]
    if dropped:
        found.append(f"fixtures dropped: {dropped}")
    for role in sorted({f.get("role") for f in old.get("fixtures", [])}):
        before = sum(1 for f in old.get("fixtures", []) if f.get("role") == role)
        after = sum(1 for f in new.get("fixtures", []) if f.get("role") == role)
        if after < before:
            found.append(f"fewer {role} fixtures ({before} -> {after})")
    verifiers = [v for v in old.get("verifier_set", []) if v not in new.get("verifier_set", [])]
    if verifiers:
        found.append(f"verifiers dropped: {verifiers}")
    for item in old.get("threshold", []):
        if _threshold_relaxed(item, list(new.get("threshold", []))):
            found.append(
                f"threshold relaxed: {item.get('metric')} {item.get('op')} {item.get('value')}"
            )
    conditions = [
        c
        for c in old.get("critical_regression_conditions", [])
        if c not in new.get("critical_regression_conditions", [])
    ]
    if conditions:
        found.append(f"critical regression conditions dropped: {conditions}")
    if _activation_index(new.get("required_activation")) < _activation_index(
        old.get("required_activation")
    ):
        found.append(
            f"required_activation {old.get('required_activation')} -> "
            f"{new.get('required_activation')}"
        )
    return found


def overlapping_plans(
    new_covers: Sequence[str], earlier: Sequence[PlanOnRecord]
) -> list[PlanOnRecord]:
    """Every earlier plan judging a component the new plan covers (oldest first).

    A relaxation is judged against all of them, not only the newest: registering an
    equally strict plan in between must not launder a later relaxation of a failed one.
    """
    return sorted(
        (
            record
            for record in earlier
            if any(
                patterns_overlap(pattern, c)
                for pattern in new_covers
                for c in record.plan.get("covers", [])
            )
        ),
        key=lambda p: p.seq,
    )
