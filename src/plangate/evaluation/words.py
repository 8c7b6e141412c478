"""The evaluation trust boundary's words: Policy Verdict, Promotion Decision and
Independence Level values (the exit code of each verdict word is in :mod:`plangate.verdict`).

They live here, not in :mod:`plangate.verdict`, so that a hook or a record check does not
build enum classes it never uses (each costs about 0.2 ms at import).
"""

from __future__ import annotations

from enum import StrEnum


class PolicyVerdict(StrEnum):
    """Policy Verdict values of the evaluation trust boundary."""

    AUTO_APPROVED = "AUTO_APPROVED"
    HUMAN_REQUIRED = "HUMAN_REQUIRED"
    DENIED = "DENIED"


class PromotionDecision(StrEnum):
    """Promotion Decision values of a paired evaluation."""

    PASS = "PASS"  # noqa: S105 -- a verdict word, not a password
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


class IndependenceLevel(StrEnum):
    """Independence Levels I0..I4 (computed from who authored and who reviewed)."""

    I0 = "I0"
    I1 = "I1"
    I2 = "I2"
    I3 = "I3"
    I4 = "I4"
