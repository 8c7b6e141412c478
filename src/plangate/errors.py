"""Error families. Every error carries a stable reason code, a message and a hint.

The CLI's single error boundary (:mod:`plangate.cli.main`) maps each family to
an exit code of ARCHITECTURE.md; nothing else decides exit codes for errors.
"""

from __future__ import annotations

from plangate.verdict import ExitCode


class PlanGateError(Exception):
    """Base of every error PlanGate raises on purpose.

    ``code`` is a stable ``UPPER_SNAKE`` identifier (see docs/reason-codes.md),
    ``hint`` tells the user what to do next.
    """

    exit_code: ExitCode = ExitCode.REJECTED

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class UsageError(PlanGateError):
    """The command line itself is wrong (exit 2)."""

    exit_code = ExitCode.USAGE


class InputRejected(PlanGateError):
    """An input (file, record, payload) is malformed, stale or tampered (exit 1)."""

    exit_code = ExitCode.REJECTED


class EnvironmentFailure(PlanGateError):
    """The environment cannot support a decision (git missing, unreadable file...).

    Fails closed: exit 1 unless a caller maps it to something stricter.
    """

    exit_code = ExitCode.REJECTED


class HumanRequired(PlanGateError):
    """A human must decide (exit 3)."""

    exit_code = ExitCode.HUMAN


class Inconclusive(PlanGateError):
    """Evidence is missing; no verdict can stand (exit 4)."""

    exit_code = ExitCode.INCONCLUSIVE
