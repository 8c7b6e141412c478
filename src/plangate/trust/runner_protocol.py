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

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from plangate.canonical import StrictJSONError, sha256_digest, strict_loads_object
from plangate.forbidden_keys import SECRETS_ONLY, is_refused
from plangate.fsutil import read_regular_file
from plangate.layout import MAX_FIXTURE_BYTES

PROTOCOL = "plangate-trial/1"
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
        "side",
        "fixture_id",
        "role",
        "trial",
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


def parse_result(data: bytes, *, side: str, fixture_id: str, role: str, trial: int) -> TrialReport:
    """Parse ``result.json`` bytes strictly and check they answer the trial that was asked.

    Raises :class:`ResultRejectedError` (``TRIAL_RESULT_INVALID``,
    ``TRIAL_RESULT_UNKNOWN_KEY``, ``TRIAL_RESULT_MISMATCH``...) on any defect.
    """
    echo = {"side": side, "fixture_id": fixture_id, "role": role, "trial": trial}
    doc = _parse_envelope(
        data, what="trial result", prefix="TRIAL_RESULT",
        protocol_code="TRIAL_PROTOCOL_UNSUPPORTED", keys=_RESULT_KEYS, protocol=PROTOCOL,
        echo=echo,
    )  # fmt: skip
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
    if judgement not in JUDGEMENTS:
        raise _reject("GRADE_INVALID", f"judgement must be one of {sorted(JUDGEMENTS)}")
    return str(judgement)


def fixture_digest(data: bytes) -> str:
    """Digest of fixture bytes as the plan pins it: sha256 of the raw bytes."""
    return sha256_digest(data)


def substitute(argv: tuple[str, ...], values: Mapping[str, str]) -> list[str]:
    """Replace ``{name}`` placeholders in ``argv``; an unknown placeholder is refused.

    Placeholders are optional: the protocol flags are always appended, so a
    runner may ignore them. Known names: ``harness``, ``fixture``, ``fixture_id``,
    ``role``, ``side``, ``trial``, ``out`` and, for the grader, ``result``.
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

    def runner_argv(self, fixture_file: str, out_dir: str) -> list[str]:
        """The full argument list of ``plangate-trial/1`` for this trial."""
        values = {
            "harness": self.harness_dir,
            "fixture": fixture_file,
            "fixture_id": self.fixture_id,
            "role": self.role,
            "side": self.side,
            "trial": str(self.trial),
            "out": out_dir,
        }
        return [
            *substitute(self.runner.argv, values),
            "--side",
            self.side,
            "--harness-dir",
            self.harness_dir,
            "--fixture",
            fixture_file,
            "--fixture-id",
            self.fixture_id,
            "--role",
            self.role,
            "--trial",
            str(self.trial),
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
        return out


def trial_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The runner's environment: a short allowlist, never ledger URLs or credentials."""
    source = os.environ if base is None else base
    env = {k: source[k] for k in ("PATH", "HOME", "LANG", "TMPDIR", "SYSTEMROOT") if k in source}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PLANGATE_TRIAL_PROTOCOL"] = PROTOCOL
    return env


def resolve_argv(command: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """A plan command with ``python``/``python3`` bound to this interpreter.

    Binding the interpreter keeps trials on the Python that runs plangate
    instead of whatever ``python3`` the PATH offers.
    """
    if not command:
        return ()
    head = command[0]
    if head in ("python", "python3"):
        return (sys.executable, *command[1:])
    return tuple(command)


def _outcome(spec: TrialSpec, status: TrialStatus, **kw: Any) -> TrialOutcome:
    return TrialOutcome(
        key=spec.key,
        side=spec.side,
        fixture_id=spec.fixture_id,
        role=spec.role,
        trial=spec.trial,
        status=status,
        **kw,
    )


@dataclass(frozen=True)
class _Run:
    status: TrialStatus
    code: str = ""
    detail: str = ""
    exit_code: int | None = None


def _run_command(argv: list[str], cwd: str, timeout: float, what: str) -> _Run:
    """Start one protocol command in its own process group, under ``timeout``."""
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=trial_environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so a timeout kills all of it
        )
    except OSError as exc:
        return _Run(TrialStatus.CRASHED, f"TRIAL_{what}_UNAVAILABLE", f"cannot start: {exc}")
    try:
        _out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return _Run(TrialStatus.TIMEOUT, f"TRIAL_{what}_TIMEOUT", f"exceeded {timeout:g}s")
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip()[-300:]
        return _Run(
            TrialStatus.CRASHED,
            f"TRIAL_{what}_CRASHED",
            f"exited {proc.returncode}: {tail}",
            proc.returncode,
        )
    return _Run(TrialStatus.COMPLETED, exit_code=0)


def _check_pinned(spec: TrialSpec) -> tuple[str, str] | None:
    """Re-check the runner's and grader's pinned files; (code, detail) on a mismatch."""
    for path, pinned in (*spec.runner.pinned_files, *spec.grader.pinned_files):
        read = read_regular_file(Path(path), MAX_FIXTURE_BYTES)
        if not read.ok or read.data is None:
            return "EVAL_HARNESS_FILE_MISSING", f"{path} {read.detail}"
        if sha256_digest(read.data) != pinned:
            return "EVAL_HARNESS_FILE_MUTATION", f"{path} no longer has its pinned digest {pinned}"
    return None


def execute_trial(spec: TrialSpec) -> TrialOutcome:
    """Run one trial: re-check the pins, run the runner, then the grader; parse both strictly.

    Never raises for a trial-level problem: every failure becomes a recorded
    :class:`TrialOutcome` with a status other than ``completed``.
    """
    work = Path(spec.work_dir)
    out_dir, grade_dir = work / "out", work / "grade"
    started = time.monotonic()
    try:
        out_dir.mkdir(parents=True, exist_ok=False)
        grade_dir.mkdir(parents=True, exist_ok=False)
    except OSError as exc:
        return _outcome(
            spec, TrialStatus.NOT_STARTED, error_code="TRIAL_WORKDIR_UNAVAILABLE", detail=str(exc)
        )
    # Re-check the sealed fixture just before use, then pass a private copy of
    # the checked bytes: what the runner reads is what was verified.
    read = read_regular_file(Path(spec.fixture_source), MAX_FIXTURE_BYTES)
    if not read.ok or read.data is None:
        return _outcome(
            spec,
            TrialStatus.FIXTURE_MISMATCH,
            error_code="SEALED_FIXTURE_MUTATION",
            detail=f"fixture {spec.fixture_id} {read.detail}",
        )
    observed = fixture_digest(read.data)
    if observed != spec.fixture_digest:
        return _outcome(
            spec,
            TrialStatus.FIXTURE_MISMATCH,
            error_code="SEALED_FIXTURE_MUTATION",
            detail=f"fixture {spec.fixture_id} digest {observed} differs from the pinned "
            f"{spec.fixture_digest}",
            observed_fixture_digest=observed,
        )
    pinned_problem = _check_pinned(spec)
    if pinned_problem is not None:
        return _outcome(
            spec,
            TrialStatus.FIXTURE_MISMATCH,
            error_code=pinned_problem[0],
            detail=pinned_problem[1],
            observed_fixture_digest=observed,
        )
    fixture_copy = work / "fixture"
    fixture_copy.write_bytes(read.data)
    fixture_copy.chmod(0o444)
    try:
        argv = spec.runner_argv(str(fixture_copy), str(out_dir))
        grader_argv = spec.grader_argv(
            str(fixture_copy), str(out_dir / RESULT_FILE), str(grade_dir)
        )
    except ResultRejectedError as exc:
        return _outcome(spec, TrialStatus.NOT_STARTED, error_code=exc.code, detail=exc.message)
    ran = _run_command(argv, spec.runner.cwd, spec.runner.timeout_seconds, "RUNNER")
    if ran.status is not TrialStatus.COMPLETED:
        return _outcome(
            spec,
            ran.status,
            error_code=ran.code,
            detail=ran.detail,
            exit_code=ran.exit_code,
            duration_seconds=time.monotonic() - started,
            observed_fixture_digest=observed,
        )
    result_read = read_regular_file(out_dir / RESULT_FILE, MAX_RESULT_BYTES)
    if not result_read.ok or result_read.data is None:
        return _outcome(
            spec,
            TrialStatus.MALFORMED,
            error_code="TRIAL_RESULT_MISSING",
            detail=f"{RESULT_FILE} {result_read.detail}",
            exit_code=0,
            observed_fixture_digest=observed,
        )
    try:
        report = parse_result(
            result_read.data,
            side=spec.side,
            fixture_id=spec.fixture_id,
            role=spec.role,
            trial=spec.trial,
        )
    except ResultRejectedError as exc:
        return _outcome(
            spec,
            TrialStatus.MALFORMED,
            error_code=exc.code,
            detail=exc.message,
            exit_code=0,
            observed_fixture_digest=observed,
        )
    # The runner executed harness code under test with the evaluator's rights: it
    # could have swapped the pinned grader (and put it back afterwards) or rewritten
    # the fixture copy. Re-check both just before the grader judges.
    pinned_problem = _check_pinned(spec)
    if pinned_problem is None:
        copy_read = read_regular_file(fixture_copy, MAX_FIXTURE_BYTES)
        if not copy_read.ok or copy_read.data is None or copy_read.data != read.data:
            pinned_problem = (
                "SEALED_FIXTURE_MUTATION",
                f"the copy of fixture {spec.fixture_id} handed to the trial changed during the "
                "runner",
            )
    if pinned_problem is not None:
        return _outcome(
            spec,
            TrialStatus.FIXTURE_MISMATCH,
            error_code=pinned_problem[0],
            detail=pinned_problem[1],
            exit_code=0,
            observed_fixture_digest=observed,
        )
    # The grader (the baseline's stable meta-verifier) judges the trial; the
    # runner's own claims are never the judgement.
    graded = _run_command(grader_argv, spec.grader.cwd, spec.grader.timeout_seconds, "GRADER")
    judgement: str = "unavailable"
    code, detail = "", ""
    if graded.status is not TrialStatus.COMPLETED:
        code, detail = "EVAL_GRADER_UNAVAILABLE", f"{graded.code}: {graded.detail}"
    else:
        grade_read = read_regular_file(grade_dir / GRADE_FILE, MAX_RESULT_BYTES)
        if not grade_read.ok or grade_read.data is None:
            code, detail = "EVAL_GRADER_UNAVAILABLE", f"{GRADE_FILE} {grade_read.detail}"
        else:
            try:
                judgement = parse_grade(
                    grade_read.data,
                    side=spec.side,
                    fixture_id=spec.fixture_id,
                    role=spec.role,
                    trial=spec.trial,
                )
            except ResultRejectedError as exc:
                code, detail = "EVAL_GRADER_UNAVAILABLE", f"{exc.code}: {exc.message}"
            if judgement == "unavailable" and not code:
                code, detail = "EVAL_GRADER_UNAVAILABLE", "the grader could not judge this trial"
    return _outcome(
        spec,
        TrialStatus.COMPLETED,
        report=report,
        judgement=judgement,
        error_code=code,
        detail=detail,
        exit_code=0,
        duration_seconds=time.monotonic() - started,
        observed_fixture_digest=observed,
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the runner's own process group (started by us), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        proc.kill()
