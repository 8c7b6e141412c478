"""Known mutants and sealed positive/negative fixtures: detection power (pure).

Every number here is measured from the judgements of the *baseline's* grader
(the stable meta-verifier, run from the baseline worktree), never from what
the candidate's own verifiers claim about themselves.

- a known mutant is *detected* by a side when the grader judged the side's run
  on it ``stopped``;
- a sealed positive ("must pass") that is stopped is a false positive;
- a sealed negative ("must fail") that passes is a false negative;
- the candidate must detect every mutant the baseline detects
  (``BASELINE_DETECTION_POWER_REGRESSION``); a test-strategy candidate must
  detect every mutant (its new tests must fail against the baseline
  implementation with each injected mutant).

When trials of one side disagree, the reading that favours the baseline is
taken: the baseline is credited with a detection seen in any trial (and a
false positive/negative only when every trial shows it), the candidate only
with a detection seen in every trial (and a false positive/negative as soon as
one trial shows it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plangate.evaluation.run.protocol import TrialOutcome
from plangate.verdict import Reason


@dataclass
class SideJudgements:
    """The grader's judgements of one side on one fixture, plus failed-trial count."""

    judgements: list[str] = field(default_factory=list)
    failed: int = 0

    @property
    def completed(self) -> int:
        """Completed (judged) trials."""
        return len(self.judgements)

    @property
    def all_stopped(self) -> bool:
        """Judged ``stopped`` in every completed trial (and at least one)."""
        return bool(self.judgements) and all(j == "stopped" for j in self.judgements)

    @property
    def any_stopped(self) -> bool:
        """Judged ``stopped`` in at least one trial."""
        return "stopped" in self.judgements

    @property
    def all_passed(self) -> bool:
        """Judged ``passed`` in every completed trial (and at least one)."""
        return bool(self.judgements) and all(j == "passed" for j in self.judgements)

    @property
    def any_passed(self) -> bool:
        """Judged ``passed`` in at least one trial."""
        return "passed" in self.judgements


Judgements = Mapping[tuple[str, str], SideJudgements]
"""(side, fixture id) -> judgements."""


def group_judgements(trials: Iterable[TrialOutcome]) -> dict[tuple[str, str], SideJudgements]:
    """Group trial outcomes by (side, fixture id); failed trials are counted, not judged."""
    out: dict[tuple[str, str], SideJudgements] = {}
    for outcome in trials:
        slot = out.setdefault((outcome.side, outcome.fixture_id), SideJudgements())
        if outcome.completed:
            slot.judgements.append(str(outcome.judgement))
        else:
            slot.failed += 1
    return out


def _get(sides: Judgements, side: str, fixture_id: str) -> SideJudgements:
    return sides.get((side, fixture_id)) or SideJudgements()


@dataclass(frozen=True)
class DetectionReport:
    """Detection power and false positives/negatives of both sides."""

    mutants: tuple[str, ...]
    baseline_detected: frozenset[str]
    candidate_detected: frozenset[str]
    baseline_false_positives: int
    candidate_false_positives: int
    baseline_false_negatives: int
    candidate_false_negatives: int
    reasons: tuple[Reason, ...]

    def to_json(self) -> dict[str, Any]:
        """JSON form for the experiment result."""
        return {
            "known_mutants": list(self.mutants),
            "baseline_detected": sorted(self.baseline_detected),
            "candidate_detected": sorted(self.candidate_detected),
            "baseline_false_positives": self.baseline_false_positives,
            "candidate_false_positives": self.candidate_false_positives,
            "baseline_false_negatives": self.baseline_false_negatives,
            "candidate_false_negatives": self.candidate_false_negatives,
            "measured_by": "baseline grader (stable meta-verifier)",
        }


def measure_detection(
    fixtures_by_role: Mapping[str, Sequence[Mapping[str, Any]]],
    sides: Judgements,
    *,
    test_strategy: bool,
) -> DetectionReport:
    """Detection power, false positives/negatives and the FAIL reasons they give."""
    ids = {role: [str(f["id"]) for f in items] for role, items in fixtures_by_role.items()}
    mutants = tuple(ids.get("known_mutant", []))
    base_detected = frozenset(m for m in mutants if _get(sides, "baseline", m).any_stopped)
    cand_detected = frozenset(m for m in mutants if _get(sides, "candidate", m).all_stopped)
    positives = ids.get("sealed_positive", [])
    negatives = ids.get("sealed_negative", [])
    base_fp = sum(1 for f in positives if _get(sides, "baseline", f).all_stopped)
    cand_fp = sum(1 for f in positives if _get(sides, "candidate", f).any_stopped)
    base_fn = sum(1 for f in negatives if _get(sides, "baseline", f).all_passed)
    cand_fn = sum(1 for f in negatives if _get(sides, "candidate", f).any_passed)
    reasons: list[Reason] = []
    lost = sorted(base_detected - cand_detected)
    if lost or len(cand_detected) < len(base_detected):
        reasons.append(
            Reason(
                "BASELINE_DETECTION_POWER_REGRESSION",
                f"the candidate detects {len(cand_detected)} of {len(mutants)} known mutants, the "
                f"baseline {len(base_detected)}; lost: {', '.join(lost) or 'none'}",
            )
        )
    if test_strategy:
        undetected = sorted(set(mutants) - cand_detected)
        if undetected:
            reasons.append(
                Reason(
                    "TEST_STRATEGY_MUTANT_NOT_DETECTED",
                    "the new tests do not fail against the baseline implementation with mutant(s) "
                    f"{', '.join(undetected)}",
                )
            )
    if cand_fp > base_fp:
        reasons.append(
            Reason(
                "FALSE_POSITIVE_REGRESSION",
                f"the candidate stops {cand_fp} sealed positive fixture(s), the baseline {base_fp}",
            )
        )
    if cand_fn > base_fn:
        reasons.append(
            Reason(
                "FALSE_NEGATIVE_REGRESSION",
                f"the candidate lets {cand_fn} sealed negative fixture(s) through, "
                f"the baseline {base_fn}",
            )
        )
    return DetectionReport(
        mutants=mutants,
        baseline_detected=base_detected,
        candidate_detected=cand_detected,
        baseline_false_positives=base_fp,
        candidate_false_positives=cand_fp,
        baseline_false_negatives=base_fn,
        candidate_false_negatives=cand_fn,
        reasons=tuple(reasons),
    )
