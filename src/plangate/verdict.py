"""One vocabulary: verdict words, reasons, results and the exit-code mapping.

Verdict words are fixed: every command prints exactly these. Reason codes are stable
``UPPER_SNAKE`` identifiers documented in docs/reason-codes.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType
from typing import Any

from plangate.records import NamedTuple


class ExitCode(IntEnum):
    """Exit codes of every command (ARCHITECTURE.md)."""

    ACCEPTED = 0
    REJECTED = 1
    USAGE = 2
    HUMAN = 3
    INCONCLUSIVE = 4
    INTERNAL = 5


# The one mapping from verdict words to exit codes. Anything not listed is a
# rejection (fail closed), never an acceptance.
_EXIT_BY_VERDICT: dict[str, ExitCode] = {
    "ACCEPTED": ExitCode.ACCEPTED,
    "AUTO_APPROVED": ExitCode.ACCEPTED,
    "PASS": ExitCode.ACCEPTED,
    "MERGE_READY": ExitCode.ACCEPTED,
    "ALLOW": ExitCode.ACCEPTED,
    "COMPLETE": ExitCode.ACCEPTED,
    # An isolated run whose result changed nothing: accepted, nothing to apply.
    "NO_CHANGES": ExitCode.ACCEPTED,
    "INTACT": ExitCode.ACCEPTED,
    "HUMAN_ESCALATED": ExitCode.HUMAN,
    "HUMAN_REQUIRED": ExitCode.HUMAN,
    "INCONCLUSIVE": ExitCode.INCONCLUSIVE,
    "PARTIAL": ExitCode.INCONCLUSIVE,
    "NOT_READY": ExitCode.INCONCLUSIVE,
    # Delivery's waiting and repair states: not yet ready.
    "WAITING_FOR_CHECKS": ExitCode.INCONCLUSIVE,
    "WAITING_FOR_REVIEW": ExitCode.INCONCLUSIVE,
    "CHECKS_FAILED": ExitCode.INCONCLUSIVE,
    "CONFLICT": ExitCode.INCONCLUSIVE,
    "REVIEW_REPAIR": ExitCode.INCONCLUSIVE,
    "MERGE_READY_CANDIDATE": ExitCode.INCONCLUSIVE,
}


def exit_code_for(verdict: str) -> ExitCode:
    """Map a verdict word to its exit code; unknown words are rejections."""
    return _EXIT_BY_VERDICT.get(verdict, ExitCode.REJECTED)


_NO_FACTS: Mapping[str, Any] = MappingProxyType({})


class Reason(NamedTuple):
    """Why a verdict was reached: a stable code, a message, optional hint and evidence."""

    code: str
    message: str
    hint: str = ""
    evidence: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON form: always ``code`` and ``message``; ``hint``/``evidence`` when set."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out


class Result(NamedTuple):
    """A decision: the verdict word, the reasons and the facts it was decided from."""

    verdict: str
    reasons: tuple[Reason, ...] = ()
    facts: Mapping[str, Any] = _NO_FACTS

    @property
    def exit_code(self) -> ExitCode:
        """Exit code of this verdict (ARCHITECTURE.md)."""
        return exit_code_for(self.verdict)

    @property
    def accepted(self) -> bool:
        """True only for verdicts that map to exit 0."""
        return self.exit_code == ExitCode.ACCEPTED

    @property
    def codes(self) -> tuple[str, ...]:
        """The reason codes, in order."""
        return tuple(r.code for r in self.reasons)

    def to_json(self) -> dict[str, Any]:
        """JSON form used by every ``--json`` output."""
        return {
            "verdict": self.verdict,
            "reasons": [r.to_json() for r in self.reasons],
            "facts": dict(self.facts),
        }
