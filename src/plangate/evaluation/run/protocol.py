"""The trial runner protocol ``plangate-trial/2`` (docs/evaluation-run.md).

For every fixture, trial and side the evaluator starts the runner named by the
registered plan, *from the baseline tree*, with a fixed argument list::

    <runner command...> --trial-id ID --harness-dir DIR --fixture FILE --out DIR

under a timeout, and reads ``OUT/result.json``, parsed strictly by
:func:`parse_result` (unknown keys refused). The trial id is opaque (random,
fresh for every trial): the runner, and the candidate code it runs, never
learn the fixture's id, its role, the side or a mutant's identity; the result
echoes the trial id and the evaluator attributes it. A crash, a timeout, a
missing or malformed result, or a result that does not echo the trial id it
was given is a *failed trial*: it is recorded, and it never counts as a
completed trial. The grader (the baseline's judge) is told everything.

This module is pure (documents in, models out); :mod:`plangate.evaluation.run.trials`
runs the processes. Just before the runner starts it re-reads the sealed
fixture, re-checks its digest against the pin of the registered plan and hands
the runner a private copy of exactly the bytes it checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from plangate.canonical import StrictJSONError, sha256_digest, strict_loads_object
from plangate.forbidden_keys import SECRETS_ONLY, is_refused

PROTOCOL = "plangate-trial/2"
"""Protocol version echoed by every result document."""

RESULT_FILE = "result.json"
MAX_RESULT_BYTES = 256 * 1024
DEFAULT_TIMEOUT_SECONDS = 60.0

SIDES = ("baseline", "candidate")
OUTCOMES = ("MERGE_READY", "BLOCKED", "HUMAN_ESCALATED")
"""Terminal Outcomes of a run (taxonomy); a trial ends in exactly one."""

STOP_REASONS = frozenset(
    {
        "NO_PROGRESS",
        "REPEATED_FAILURE",
        "OSCILLATION",
        "BUDGET_EXHAUSTED",
        "POLICY_DENIED",
        "VERIFIER_UNAVAILABLE",
        "REQUIREMENT_CONFLICT",
        "STATE_CONFLICT",
        "HUMAN_REJECTED",
    }
)
"""Stop Reasons of the taxonomy; nothing else is accepted."""

ACTIVATION_LEVELS: tuple[str, ...] = (
    "installed",
    "registered",
    "selected",
    "fired",
    "produced_evidence",
    "influenced_decision",
)
"""Runtime activation stages in order (reference 2.6)."""

DETECTION_STATUSES = frozenset({"detected", "not_detected", "error"})
"""Per-verifier detection words; ``error`` = the verifier could not run."""

GRADE_PROTOCOL = "plangate-grade/1"
"""Protocol version echoed by every grade document."""

GRADE_FILE = "grade.json"
JUDGEMENTS = frozenset({"stopped", "passed", "unavailable"})
"""The grader's word on a trial: the harness stopped the input, let it pass, or
the grader could not judge (``unavailable``: INCONCLUSIVE, never a pass)."""

_GRADE_KEYS = frozenset({"protocol", "side", "fixture_id", "role", "trial", "judgement"})
_PLACEHOLDER_RE = re.compile(r"\{[a-z_]+\}")

_RESULT_KEYS = frozenset(
    {
        "protocol",
        "trial_id",
        "outcome",
        "stop_reasons",
        "metrics",
        "activation",
        "detections",
    }
)
_ACTIVATION_KEYS = frozenset({"level", "evidence_refs"})
_METRIC_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_COMPONENT_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._/@+-]{0,199}")


def activation_rank(level: str | None) -> int:
    """Ordinal of an activation level: 1..6; unknown or absent counts as 0."""
    if level in ACTIVATION_LEVELS:
        return ACTIVATION_LEVELS.index(level) + 1
    return 0


class TrialStatus(StrEnum):
    """How one trial ended, from the evaluator's point of view."""

    COMPLETED = "completed"
    CRASHED = "crashed"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"
    FIXTURE_MISMATCH = "fixture_mismatch"
    NOT_STARTED = "not_started"


class ResultRejectedError(ValueError):
    """A ``result.json`` does not follow ``plangate-trial/1``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Activation:
    """Activation evidence of one component in one trial."""

    level: str
    evidence_refs: tuple[str, ...]


@dataclass(frozen=True)
class TrialReport:
    """A parsed, validated ``result.json``."""

    side: str
    fixture_id: str
    role: str
    trial: int
    outcome: str
    stop_reasons: tuple[str, ...]
    metrics: Mapping[str, float]
    activation: Mapping[str, Activation]
    detections: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        """JSON form (the ledger record of the trial)."""
        return {
            "outcome": self.outcome,
            "stop_reasons": list(self.stop_reasons),
            "metrics": dict(self.metrics),
            "activation": {
                cid: {"level": a.level, "evidence_refs": list(a.evidence_refs)}
                for cid, a in sorted(self.activation.items())
            },
            "detections": dict(sorted(self.detections.items())),
        }


def _reject(code: str, message: str) -> ResultRejectedError:
    return ResultRejectedError(code, message)


def _string_list(value: Any, where: str, allowed: frozenset[str] | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > 64:
        raise _reject("TRIAL_RESULT_INVALID", f"{where} must be a list of at most 64 strings")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item or len(item) > 500:
            raise _reject("TRIAL_RESULT_INVALID", f"{where} holds a non-string or empty item")
        if allowed is not None and item not in allowed:
            raise _reject("TRIAL_RESULT_INVALID", f"{where}: unknown value {item!r}")
        out.append(item)
    if len(set(out)) != len(out):
        raise _reject("TRIAL_RESULT_INVALID", f"{where} repeats an item")
    return tuple(out)


def _component_map(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > 256:
        raise _reject("TRIAL_RESULT_INVALID", f"{where} must be an object of at most 256 entries")
    for key in value:
        if not _COMPONENT_ID_RE.fullmatch(key):
            raise _reject("TRIAL_RESULT_INVALID", f"{where}: bad component id {key!r}")
    return value


def parse_result(
    data: bytes, *, trial_id: str, side: str, fixture_id: str, role: str, trial: int,
) -> TrialReport:
    """Parse ``result.json`` bytes strictly and check they answer the trial id that was given.

    The report is attributed to ``side``, ``fixture_id``, ``role`` and ``trial``
    by the evaluator (the runner never knew them). Raises
    :class:`ResultRejectedError` (``TRIAL_RESULT_INVALID``,
    ``TRIAL_RESULT_UNKNOWN_KEY``, ``TRIAL_RESULT_MISMATCH``...) on any defect.
    """
    echo: dict[str, object] = {"trial_id": trial_id}
    doc = _parse_envelope(
        data, what="trial result", prefix="TRIAL_RESULT",
        protocol_code="TRIAL_PROTOCOL_UNSUPPORTED", keys=_RESULT_KEYS, protocol=PROTOCOL,
        echo=echo,
    )  # fmt: skip
    outcome = doc["outcome"]
    if not isinstance(outcome, str) or outcome not in OUTCOMES:
        raise _reject("TRIAL_RESULT_INVALID", f"outcome must be one of {list(OUTCOMES)}")
    stop_reasons = _string_list(doc["stop_reasons"], "stop_reasons", STOP_REASONS)
    if outcome == "MERGE_READY" and stop_reasons:
        raise _reject("TRIAL_RESULT_INVALID", "MERGE_READY carries no stop reason")
    if outcome != "MERGE_READY" and not stop_reasons:
        raise _reject("TRIAL_RESULT_INVALID", f"{outcome} needs at least one stop reason")
    metrics_raw = doc["metrics"]
    if not isinstance(metrics_raw, dict) or len(metrics_raw) > 64:
        raise _reject("TRIAL_RESULT_INVALID", "metrics must be an object of at most 64 numbers")
    metrics: dict[str, float] = {}
    for name, value in metrics_raw.items():
        if not _METRIC_NAME_RE.fullmatch(name) or is_refused(name, SECRETS_ONLY):
            raise _reject("TRIAL_RESULT_INVALID", f"metric name {name!r} is not allowed")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _reject("TRIAL_RESULT_INVALID", f"metric {name} must be a number")
        try:
            metrics[name] = float(value)
        except OverflowError:  # an integer literal beyond a float's range
            raise _reject("TRIAL_RESULT_INVALID", f"metric {name} is out of range") from None
    activation: dict[str, Activation] = {}
    for cid, item in _component_map(doc["activation"], "activation").items():
        if not isinstance(item, dict) or set(item) != _ACTIVATION_KEYS:
            raise _reject(
                "TRIAL_RESULT_INVALID", f"activation[{cid}] must be {{level, evidence_refs}}"
            )
        if not isinstance(item["level"], str) or item["level"] not in ACTIVATION_LEVELS:
            raise _reject(
                "TRIAL_RESULT_INVALID", f"activation[{cid}].level {item['level']!r} is unknown"
            )
        refs = _string_list(item["evidence_refs"], f"activation[{cid}].evidence_refs")
        if activation_rank(item["level"]) >= activation_rank("fired") and not refs:
            # "presence of configuration is not evidence of effect": a claim of
            # firing or more must point at its evidence.
            raise _reject(
                "TRIAL_RESULT_INVALID", f"activation[{cid}] claims {item['level']} without evidence"
            )
        activation[cid] = Activation(item["level"], refs)
    detections: dict[str, str] = {}
    for vid, status in _component_map(doc["detections"], "detections").items():
        if not isinstance(status, str) or status not in DETECTION_STATUSES:
            raise _reject(
                "TRIAL_RESULT_INVALID",
                f"detections[{vid}] must be one of {sorted(DETECTION_STATUSES)}",
            )
        detections[vid] = status
    return TrialReport(
        side=side,
        fixture_id=fixture_id,
        role=role,
        trial=trial,
        outcome=outcome,
        stop_reasons=stop_reasons,
        metrics=metrics,
        activation=activation,
        detections=detections,
    )


def _parse_envelope(
    data: bytes,
    *,
    what: str,
    prefix: str,
    protocol_code: str,
    keys: frozenset[str],
    protocol: str,
    echo: dict[str, object],
) -> dict[str, Any]:
    """Strict JSON object with exactly ``keys``, the expected ``protocol``, and the
    trial's identity echoed back with the same types (``{prefix}_INVALID``,
    ``{prefix}_UNKNOWN_KEY``, ``{protocol_code}``, ``{prefix}_MISMATCH``)."""
    try:
        doc = strict_loads_object(data, what)
    except StrictJSONError as exc:
        raise _reject(f"{prefix}_INVALID", f"{exc.code}: {exc.message}") from None
    unknown = sorted(set(doc) - set(keys))
    if unknown:
        raise _reject(f"{prefix}_UNKNOWN_KEY", f"unknown keys {unknown}")
    missing = sorted(set(keys) - set(doc))
    if missing:
        raise _reject(f"{prefix}_INVALID", f"missing keys {missing}")
    if doc["protocol"] != protocol:
        raise _reject(protocol_code, f"protocol must be {protocol!r}")
    for key, expected in echo.items():
        got = doc[key]
        if type(got) is not type(expected) or got != expected:
            raise _reject(
                f"{prefix}_MISMATCH", f"{key} is {got!r}, the trial asked for {expected!r}"
            )
    return doc


def parse_grade(data: bytes, *, side: str, fixture_id: str, role: str, trial: int) -> str:
    """Parse ``grade.json`` strictly; return the judgement word."""
    echo = {"side": side, "fixture_id": fixture_id, "role": role, "trial": trial}
    doc = _parse_envelope(
        data, what="grade", prefix="GRADE", protocol_code="GRADE_PROTOCOL_UNSUPPORTED",
        keys=_GRADE_KEYS, protocol=GRADE_PROTOCOL, echo=echo,
    )  # fmt: skip
    judgement = doc["judgement"]
    if not isinstance(judgement, str) or judgement not in JUDGEMENTS:
        raise _reject("GRADE_INVALID", f"judgement must be one of {sorted(JUDGEMENTS)}")
    return str(judgement)


def fixture_digest(data: bytes) -> str:
    """Digest of fixture bytes as the plan pins it: sha256 of the raw bytes."""
    return sha256_digest(data)


def substitute(argv: tuple[str, ...], values: Mapping[str, str]) -> list[str]:
    """Replace ``{name}`` placeholders in ``argv``; an unknown placeholder is refused.

    Placeholders are optional: the protocol flags are always appended, so a
    command may ignore them. Known names: for the runner ``harness``,
    ``fixture``, ``out`` and ``trial_id``; for the grader also ``fixture_id``,
    ``role``, ``side``, ``trial`` and ``result``.
    """
    out: list[str] = []
    for arg in argv:
        text = arg
        for name, value in values.items():
            text = text.replace("{" + name + "}", value)
        leftover = _PLACEHOLDER_RE.search(text)
        if leftover:
            raise _reject("TRIAL_COMMAND_INVALID", f"unknown placeholder {leftover.group(0)}")
        out.append(text)
    return out


@dataclass(frozen=True)
class CommandSpec:
    """A runner or grader command from the registered plan, bound to the baseline worktree."""

    argv: tuple[str, ...]
    cwd: str
    timeout_seconds: float
    pinned_files: tuple[tuple[str, str], ...]  # (absolute path in the baseline worktree, digest)
    kind: str = "command"
    """``command`` (the pinned program) or a built-in kind (docs/evaluation-run.md)."""
    options: tuple[tuple[str, Any], ...] = ()
    """A built-in kind's settings from the plan (an agent's endpoint, key name, prompt files)."""


@dataclass(frozen=True)
class TrialSpec:
    """Everything needed to run one trial; plain data, so any executor can ship it."""

    side: str
    fixture_id: str
    role: str
    trial: int
    runner: CommandSpec
    grader: CommandSpec
    harness_dir: str
    fixture_source: str
    fixture_digest: str
    work_dir: str

    @property
    def key(self) -> str:
        """Stable identifier of the trial: side/fixture/trial."""
        return f"{self.side}/{self.fixture_id}/{self.trial}"

    def runner_argv(self, fixture_file: str, out_dir: str, trial_id: str) -> list[str]:
        """The full argument list of ``plangate-trial/2`` for this trial.

        Only the opaque ``trial_id``, the harness directory, the fixture copy and
        the output directory: a placeholder naming anything else (``{role}``,
        ``{fixture_id}``, ``{side}``, ``{trial}``) is refused.
        """
        values = {
            "harness": self.harness_dir,
            "fixture": fixture_file,
            "out": out_dir,
            "trial_id": trial_id,
        }
        return [
            *substitute(self.runner.argv, values),
            "--trial-id",
            trial_id,
            "--harness-dir",
            self.harness_dir,
            "--fixture",
            fixture_file,
            "--out",
            out_dir,
        ]

    def grader_argv(self, fixture_file: str, result_file: str, out_dir: str) -> list[str]:
        """The grader's argument list (``plangate-grade/1``)."""
        values = {
            "harness": self.harness_dir,
            "fixture": fixture_file,
            "fixture_id": self.fixture_id,
            "role": self.role,
            "side": self.side,
            "trial": str(self.trial),
            "out": out_dir,
            "result": result_file,
        }
        return [
            *substitute(self.grader.argv, values),
            "--result",
            result_file,
            "--fixture",
            fixture_file,
            "--fixture-id",
            self.fixture_id,
            "--role",
            self.role,
            "--side",
            self.side,
            "--trial",
            str(self.trial),
            "--out",
            out_dir,
        ]


@dataclass(frozen=True)
class TrialOutcome:
    """What one trial produced: its status, the runner's report and the grader's judgement."""

    key: str
    side: str
    fixture_id: str
    role: str
    trial: int
    status: TrialStatus
    report: TrialReport | None = None
    judgement: str | None = None
    error_code: str = ""
    detail: str = ""
    exit_code: int | None = None
    duration_seconds: float = 0.0
    observed_fixture_digest: str | None = None
    agent: Mapping[str, Any] | None = None
    """An agent trial's host, its version, the transcript digest and the egress seen."""

    @property
    def completed(self) -> bool:
        """True only for a trial with an accepted result and a grader judgement."""
        return (
            self.status is TrialStatus.COMPLETED
            and self.report is not None
            and self.judgement in ("stopped", "passed")
        )

    def to_json(self) -> dict[str, Any]:
        """JSON form for the experiment result (no timing: results are reproducible)."""
        out: dict[str, Any] = {
            "key": self.key,
            "side": self.side,
            "fixture_id": self.fixture_id,
            "role": self.role,
            "trial": self.trial,
            "status": self.status.value,
        }
        if self.report is not None:
            out["result"] = self.report.to_json()
        if self.judgement is not None:
            out["judgement"] = self.judgement
        if self.error_code:
            out["error_code"] = self.error_code
            out["detail"] = self.detail[:500]
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        if self.agent is not None:
            out["agent"] = dict(self.agent)
        return out
