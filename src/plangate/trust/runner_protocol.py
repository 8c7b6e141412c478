"""The trial runner protocol ``plangate-trial/1`` (docs/evaluation-run.md).

For every fixture, trial and side the evaluator starts the runner named by the
registered plan, *from the baseline worktree*, with a fixed argument list::

    <runner command...> --side baseline|candidate --harness-dir DIR
        --fixture FILE --fixture-id ID --role ROLE --trial N --out DIR

under a timeout, and reads ``OUT/result.json``, parsed strictly by
:func:`parse_result` (unknown keys refused). A crash, a timeout, a missing or
malformed result, or a result that does not echo the trial it was asked for is
a *failed trial*: it is recorded, and it never counts as a completed trial.

Just before the runner starts, :func:`execute_trial` re-reads the sealed
fixture, re-checks its digest against the pin of the registered plan and hands
the runner a private copy of exactly the bytes it checked.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from plangate.canonical import StrictJSONError, digest, sha256_digest, strict_loads_object
from plangate.fsutil import read_regular_file

PROTOCOL = "plangate-trial/1"
"""Protocol version echoed by every result document."""

RESULT_FILE = "result.json"
MAX_RESULT_BYTES = 256 * 1024
MAX_FIXTURE_BYTES = 4 * 1024 * 1024
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

GRADER_STATUSES = frozenset({"ok", "unavailable"})

_RESULT_KEYS = frozenset(
    {
        "protocol",
        "side",
        "fixture_id",
        "role",
        "trial",
        "outcome",
        "stop_reasons",
        "metrics",
        "activation",
        "detections",
        "grader",
    }
)
_ACTIVATION_KEYS = frozenset({"level", "evidence_refs"})
_METRIC_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_COMPONENT_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._/@+-]{0,199}")
# Metric names the ledger would refuse (secrets, transcripts) are refused here.
_FORBIDDEN_METRIC_NAMES = frozenset(
    {"api_key", "token", "password", "secret", "authorization", "raw_transcript", "transcript",
     "chain_of_thought"}
)


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


class ResultRejected(ValueError):
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
    grader: str

    @property
    def stopped(self) -> bool:
        """True when the harness under test did not let the input through."""
        return self.outcome != "MERGE_READY"

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
            "grader": self.grader,
        }


def _reject(code: str, message: str) -> ResultRejected:
    return ResultRejected(code, message)


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
    data: bytes, *, side: str, fixture_id: str, role: str, trial: int
) -> TrialReport:
    """Parse ``result.json`` bytes strictly and check they answer the trial that was asked.

    Raises :class:`ResultRejected` (``TRIAL_RESULT_INVALID``,
    ``TRIAL_RESULT_UNKNOWN_KEY``, ``TRIAL_RESULT_MISMATCH``...) on any defect.
    """
    try:
        doc = strict_loads_object(data, "trial result")
    except StrictJSONError as exc:
        raise _reject("TRIAL_RESULT_INVALID", f"{exc.code}: {exc.message}") from None
    unknown = sorted(set(doc) - _RESULT_KEYS)
    if unknown:
        raise _reject("TRIAL_RESULT_UNKNOWN_KEY", f"unknown keys {unknown}")
    missing = sorted(_RESULT_KEYS - set(doc))
    if missing:
        raise _reject("TRIAL_RESULT_INVALID", f"missing keys {missing}")
    if doc["protocol"] != PROTOCOL:
        raise _reject("TRIAL_PROTOCOL_UNSUPPORTED", f"protocol must be {PROTOCOL!r}")
    echo = {"side": side, "fixture_id": fixture_id, "role": role, "trial": trial}
    for key, expected in echo.items():
        got = doc[key]
        if type(got) is not type(expected) or got != expected:
            raise _reject(
                "TRIAL_RESULT_MISMATCH", f"{key} is {got!r}, the trial asked for {expected!r}"
            )
    outcome = doc["outcome"]
    if outcome not in OUTCOMES:
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
        if not _METRIC_NAME_RE.fullmatch(name) or name in _FORBIDDEN_METRIC_NAMES:
            raise _reject("TRIAL_RESULT_INVALID", f"metric name {name!r} is not allowed")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _reject("TRIAL_RESULT_INVALID", f"metric {name} must be a number")
        metrics[name] = float(value)
    activation: dict[str, Activation] = {}
    for cid, item in _component_map(doc["activation"], "activation").items():
        if not isinstance(item, dict) or set(item) != _ACTIVATION_KEYS:
            raise _reject(
                "TRIAL_RESULT_INVALID", f"activation[{cid}] must be {{level, evidence_refs}}"
            )
        if item["level"] not in ACTIVATION_LEVELS:
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
        if status not in DETECTION_STATUSES:
            raise _reject("TRIAL_RESULT_INVALID", f"detections[{vid}] must be one of "
                          f"{sorted(DETECTION_STATUSES)}")
        detections[vid] = status
    if doc["grader"] not in GRADER_STATUSES:
        raise _reject("TRIAL_RESULT_INVALID", f"grader must be one of {sorted(GRADER_STATUSES)}")
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
        grader=doc["grader"],
    )


def fixture_digest(data: bytes, method: str) -> str:
    """Digest of fixture bytes as the plan pinned it: ``raw`` bytes or ``canonical_json``."""
    if method == "canonical_json":
        return digest(strict_loads_object(data, "fixture"))
    return sha256_digest(data)


@dataclass(frozen=True)
class TrialSpec:
    """Everything needed to run one trial; picklable, so a process pool can take it."""

    side: str
    fixture_id: str
    role: str
    trial: int
    runner_argv: tuple[str, ...]
    runner_cwd: str
    harness_dir: str
    fixture_source: str
    fixture_digest: str
    digest_method: str
    work_dir: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS

    @property
    def key(self) -> str:
        """Stable identifier of the trial: side/fixture/trial."""
        return f"{self.side}/{self.fixture_id}/{self.trial}"

    def argv(self, fixture_file: str, out_dir: str) -> list[str]:
        """The full argument list of ``plangate-trial/1`` for this trial."""
        return [
            *self.runner_argv,
            "--side", self.side,
            "--harness-dir", self.harness_dir,
            "--fixture", fixture_file,
            "--fixture-id", self.fixture_id,
            "--role", self.role,
            "--trial", str(self.trial),
            "--out", out_dir,
        ]


@dataclass(frozen=True)
class TrialOutcome:
    """What one trial produced: its status, and the report when it completed."""

    key: str
    side: str
    fixture_id: str
    role: str
    trial: int
    status: TrialStatus
    report: TrialReport | None = None
    error_code: str = ""
    detail: str = ""
    exit_code: int | None = None
    duration_seconds: float = 0.0
    observed_fixture_digest: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def completed(self) -> bool:
        """True only for a trial whose result document was accepted."""
        return self.status is TrialStatus.COMPLETED and self.report is not None

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
        if self.error_code:
            out["error_code"] = self.error_code
            out["detail"] = self.detail[:500]
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        return out


def trial_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The runner's environment: a short allowlist, never ledger URLs or credentials."""
    source = os.environ if base is None else base
    env = {k: source[k] for k in ("PATH", "HOME", "LANG", "TMPDIR", "SYSTEMROOT") if k in source}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PLANGATE_TRIAL_PROTOCOL"] = PROTOCOL
    return env


def resolve_runner_argv(command: list[str]) -> tuple[str, ...]:
    """The runner command with ``python``/``python3`` bound to this interpreter.

    Binding the interpreter keeps trials on the Python that runs plangate
    instead of whatever ``python3`` the PATH offers.
    """
    if not command:
        return ()
    head = command[0]
    if head in ("python", "python3"):
        return (sys.executable, *command[1:])
    return tuple(command)


def _failed(spec: TrialSpec, status: TrialStatus, code: str, detail: str, **kw: Any) -> TrialOutcome:
    return TrialOutcome(
        key=spec.key,
        side=spec.side,
        fixture_id=spec.fixture_id,
        role=spec.role,
        trial=spec.trial,
        status=status,
        error_code=code,
        detail=detail,
        **kw,
    )


def execute_trial(spec: TrialSpec) -> TrialOutcome:
    """Run one trial: re-check the sealed fixture, start the runner, parse its result.

    Never raises for a trial-level problem: every failure becomes a recorded
    :class:`TrialOutcome` with a status other than ``completed``.
    """
    work = Path(spec.work_dir)
    out_dir = work / "out"
    started = time.monotonic()
    try:
        out_dir.mkdir(parents=True, exist_ok=False)
    except OSError as exc:
        return _failed(spec, TrialStatus.NOT_STARTED, "TRIAL_WORKDIR_UNAVAILABLE", str(exc))
    # Re-check the sealed fixture just before use, then pass a private copy of
    # the checked bytes: what the runner reads is what was verified.
    read = read_regular_file(Path(spec.fixture_source), MAX_FIXTURE_BYTES)
    if not read.ok or read.data is None:
        return _failed(
            spec, TrialStatus.FIXTURE_MISMATCH, "SEALED_FIXTURE_MISSING",
            f"fixture {spec.fixture_id} {read.detail}",
        )
    try:
        observed = fixture_digest(read.data, spec.digest_method)
    except StrictJSONError as exc:
        return _failed(
            spec, TrialStatus.FIXTURE_MISMATCH, "SEALED_FIXTURE_MUTATION",
            f"fixture {spec.fixture_id} is no longer valid JSON: {exc.message}",
        )
    if observed != spec.fixture_digest:
        return _failed(
            spec, TrialStatus.FIXTURE_MISMATCH, "SEALED_FIXTURE_MUTATION",
            f"fixture {spec.fixture_id} digest {observed} differs from the pinned "
            f"{spec.fixture_digest}",
            observed_fixture_digest=observed,
        )
    fixture_copy = work / "fixture"
    fixture_copy.write_bytes(read.data)
    fixture_copy.chmod(0o444)
    argv = spec.argv(str(fixture_copy), str(out_dir))
    try:
        proc = subprocess.Popen(
            argv,
            cwd=spec.runner_cwd,
            env=trial_environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so a timeout kills all of it
        )
    except OSError as exc:
        return _failed(spec, TrialStatus.CRASHED, "TRIAL_RUNNER_UNAVAILABLE",
                       f"cannot start the runner: {exc}")
    try:
        _out, err = proc.communicate(timeout=spec.timeout_seconds)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return _failed(
            spec, TrialStatus.TIMEOUT, "TRIAL_TIMEOUT",
            f"runner exceeded {spec.timeout_seconds:g}s",
            duration_seconds=time.monotonic() - started,
        )
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip()[-300:]
        return _failed(
            spec, TrialStatus.CRASHED, "TRIAL_RUNNER_CRASHED",
            f"runner exited {proc.returncode}: {tail}",
            exit_code=proc.returncode, duration_seconds=elapsed,
        )
    result_read = read_regular_file(out_dir / RESULT_FILE, MAX_RESULT_BYTES)
    if not result_read.ok or result_read.data is None:
        return _failed(
            spec, TrialStatus.MALFORMED, "TRIAL_RESULT_MISSING",
            f"{RESULT_FILE} {result_read.detail}", exit_code=0, duration_seconds=elapsed,
        )
    try:
        report = parse_result(
            result_read.data,
            side=spec.side,
            fixture_id=spec.fixture_id,
            role=spec.role,
            trial=spec.trial,
        )
    except ResultRejected as exc:
        return _failed(spec, TrialStatus.MALFORMED, exc.code, exc.message,
                       exit_code=0, duration_seconds=elapsed)
    return TrialOutcome(
        key=spec.key,
        side=spec.side,
        fixture_id=spec.fixture_id,
        role=spec.role,
        trial=spec.trial,
        status=TrialStatus.COMPLETED,
        report=report,
        exit_code=0,
        duration_seconds=elapsed,
        observed_fixture_digest=observed,
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the runner's own process group (started by us), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        proc.kill()
