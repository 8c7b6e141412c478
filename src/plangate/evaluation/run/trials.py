"""Trials: the one module that runs trial processes.

:func:`execute_trial` runs one trial (re-check the pins, the runner, then the
baseline's grader) and never raises for a trial-level problem. An
:class:`Executor` takes trial specifications and returns one
:class:`~plangate.evaluation.run.protocol.TrialOutcome` per specification, in
the same order. The decision code only ever sees outcomes, so a distributed
engine (a queue, a cluster) plugs in by implementing :meth:`Executor.run`
without touching :mod:`plangate.evaluation.run.decision`.

:class:`LocalPoolExecutor` runs trials in a local pool (``--jobs N``) and draws
a progress line on stderr for long runs.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from plangate.canonical import sha256_digest
from plangate.evaluation.run.protocol import (
    GRADE_FILE,
    MAX_RESULT_BYTES,
    PROTOCOL,
    RESULT_FILE,
    ResultRejectedError,
    TrialOutcome,
    TrialSpec,
    TrialStatus,
    fixture_digest,
    parse_grade,
    parse_result,
)
from plangate.fsutil import read_regular_file
from plangate.isolation.backend import Backend
from plangate.isolation.policy import Limits, Mount
from plangate.layout import MAX_FIXTURE_BYTES
from plangate.records import NamedTuple

BOX_OUTPUT_BYTES = 1024 * 1024
"""A boxed runner's or grader's stdout and stderr together; past it the trial crashed."""

BOX_FILE_SIZE_BYTES = 64 * 1024 * 1024
"""The largest file a boxed runner or grader may write."""

BOX_PROCESSES = 256
"""How many more processes a boxed runner or grader may start."""


class TrialBox(NamedTuple):
    """The sandbox trials run in: a working backend and the system directories it shows.

    Each runner and each grader gets a fresh box with the network off: the
    baseline tree and the side's harness tree read-only, the fixture copy
    read-only, and only its own output directory writable (the grader sees the
    runner's output read-only). Nothing else of the machine is there: no
    repository, no ledger, no home directory.
    """

    backend: Backend
    system: tuple[Mount, ...]

    @classmethod
    def here(cls) -> TrialBox:
        """The box of this machine; raises ``SANDBOX_UNAVAILABLE`` when no backend works."""
        from plangate.isolation.backend import select_backend
        from plangate.isolation.views import system_view

        backend = select_backend()
        return cls(backend, system_view(remaps=backend.remaps))

ProgressCallback = Callable[[int, int, TrialOutcome], None]
"""Called after each finished trial with (done, total, outcome)."""


class Executor(Protocol):
    """Runs trials; returns one outcome per spec, in the order of ``trials``."""

    def run(self, trials: Sequence[TrialSpec]) -> list[TrialOutcome]:
        """Run every trial; never raise for a trial-level failure (record it instead)."""
        ...


class ProgressLine:
    """Progress of the trials (only when ``total`` is large enough).

    On a terminal, one line that overwrites itself (``\r``); anywhere else (a log
    file, a pipe, CI) plain lines, one per tenth of the trials and one at the end, so
    a log never fills with carriage returns. A stream that goes away (a closed pipe)
    ends the progress output, never the run.
    """

    def __init__(self, stream: TextIO | None, *, min_total: int = 8) -> None:
        self.stream = stream
        self.min_total = min_total
        self.started = time.monotonic()
        self.failed = 0
        isatty = getattr(stream, "isatty", None)
        try:
            self.terminal = bool(callable(isatty) and isatty())
        except (OSError, ValueError):
            self.terminal = False
        self._tenth = -1

    def __call__(self, done: int, total: int, outcome: TrialOutcome) -> None:
        """Print ``trials done/total, failed, rate``."""
        if not outcome.completed:
            self.failed += 1
        if self.stream is None or total < self.min_total:
            return
        elapsed = max(time.monotonic() - self.started, 1e-9)
        text = f"trials {done}/{total}  failed {self.failed}  {done / elapsed:.1f}/s"
        if self.terminal:
            line = "\r" + text + ("\n" if done == total else "")
        else:
            tenth = done * 10 // total
            if tenth == self._tenth and done != total:
                return
            self._tenth = tenth
            line = text + "\n"
        try:
            self.stream.write(line)
            self.stream.flush()
        except (OSError, ValueError):
            self.stream = None  # the reader went away: stop reporting, keep running


class LocalPoolExecutor:
    """A local process pool of ``jobs`` workers (``jobs == 1`` runs in-process)."""

    def __init__(
        self, jobs: int = 1, progress: ProgressCallback | None = None,
        box: TrialBox | None = None,
    ) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.jobs = jobs
        self.progress = progress
        self.box = box

    def run(self, trials: Sequence[TrialSpec]) -> list[TrialOutcome]:
        """Run ``trials``; each trial is its own subprocess, the pool only schedules them."""
        total = len(trials)
        results: list[TrialOutcome | None] = [None] * total
        done = 0
        if self.jobs == 1 or total <= 1:
            for index, spec in enumerate(trials):
                results[index] = _safe_execute(spec, self.box)
                done += 1
                self._report(done, total, results[index])
        else:
            # Threads are enough: every trial is an external process, the
            # worker only waits on it. A thread pool avoids pickling and fork
            # hazards while still running `jobs` runners at once.
            with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
                futures = {
                    pool.submit(_safe_execute, spec, self.box): i for i, spec in enumerate(trials)
                }
                for future in concurrent.futures.as_completed(futures):
                    index = futures[future]
                    results[index] = future.result()
                    done += 1
                    self._report(done, total, results[index])
        return [r if r is not None else _lost(trials[i]) for i, r in enumerate(results)]

    def _report(self, done: int, total: int, outcome: TrialOutcome | None) -> None:
        if self.progress is not None and outcome is not None:
            self.progress(done, total, outcome)


def _safe_execute(spec: TrialSpec, box: TrialBox | None = None) -> TrialOutcome:
    """Run one trial; an unexpected exception is a recorded failed trial, never a pass."""
    try:
        return execute_trial(spec, box)
    except Exception as exc:  # noqa: BLE001 -- a trial failure is data, not a crash
        return TrialOutcome(
            key=spec.key,
            side=spec.side,
            fixture_id=spec.fixture_id,
            role=spec.role,
            trial=spec.trial,
            status=TrialStatus.CRASHED,
            error_code="TRIAL_EXECUTOR_ERROR",
            detail=f"{type(exc).__name__}: {exc}",
        )


def _lost(spec: TrialSpec) -> TrialOutcome:
    return TrialOutcome(
        key=spec.key,
        side=spec.side,
        fixture_id=spec.fixture_id,
        role=spec.role,
        trial=spec.trial,
        status=TrialStatus.NOT_STARTED,
        error_code="TRIAL_LOST",
        detail="the executor returned no outcome for this trial",
    )


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


def new_trial_id() -> str:
    """An opaque, random trial id: nothing about the trial can be read from it."""
    import secrets

    return secrets.token_hex(16)


class _Mounts(NamedTuple):
    visible: tuple[str, ...]
    writable: tuple[str, ...]


def _boxed(
    box: TrialBox, argv: list[str], cwd: str, timeout: float, *, what: str, mounts: _Mounts,
) -> _Run:
    """Run one protocol command in a fresh box (see :class:`TrialBox`)."""
    from plangate.errors import PlanGateError
    from plangate.isolation.policy import SandboxPolicy
    from plangate.isolation.runner import run_in_box
    from plangate.isolation.views import narrowest

    env = trial_environment()
    env.update({"HOME": "/tmp", "TMPDIR": "/tmp"})  # noqa: S108 -- the box's private /tmp
    policy = SandboxPolicy(
        visible=(*box.system, *(Mount.same(p) for p in narrowest(mounts.visible))),
        writable=tuple(Mount.same(p) for p in mounts.writable),
        read_only=(),
        hidden=(),
        network=False,
        limits=Limits(wall_seconds=timeout, output_bytes=BOX_OUTPUT_BYTES,
                      file_size_bytes=BOX_FILE_SIZE_BYTES, processes=BOX_PROCESSES),
        env=tuple(sorted(env.items())),
        cwd=cwd,
    )
    try:
        done = run_in_box(box.backend, policy, argv, capture=True)
    except PlanGateError as exc:
        return _Run(TrialStatus.CRASHED, exc.code, exc.message)
    if done.error:
        return _Run(TrialStatus.CRASHED, f"TRIAL_{what}_UNAVAILABLE", done.error,
                    done.exit_code)
    if done.timed_out:
        return _Run(TrialStatus.TIMEOUT, f"TRIAL_{what}_TIMEOUT", f"exceeded {timeout:g}s")
    if done.output_exceeded:
        return _Run(TrialStatus.CRASHED, f"TRIAL_{what}_OUTPUT_FLOOD",
                    f"wrote more than {BOX_OUTPUT_BYTES} bytes of output", done.exit_code)
    if done.exit_code != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return _Run(TrialStatus.CRASHED, f"TRIAL_{what}_CRASHED",
                    f"exited {done.exit_code}: {tail}", done.exit_code)
    return _Run(TrialStatus.COMPLETED, exit_code=0)


def _run_command(
    argv: list[str], cwd: str, timeout: float, what: str,
    *, box: TrialBox | None = None, mounts: _Mounts | None = None,
) -> _Run:
    """Start one protocol command in its own process group, under ``timeout`` (boxed if given)."""
    if box is not None and mounts is not None:
        return _boxed(box, argv, cwd, timeout, what=what, mounts=mounts)
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


def execute_trial(spec: TrialSpec, box: TrialBox | None = None) -> TrialOutcome:
    """Run one trial: re-check the pins, run the runner, then the grader; parse both strictly.

    Never raises for a trial-level problem: every failure becomes a recorded
    :class:`TrialOutcome` with a status other than ``completed``. With ``box``
    the runner and the grader each run in a fresh box (:class:`TrialBox`).
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
    trial_id = new_trial_id()
    try:
        argv = spec.runner_argv(str(fixture_copy), str(out_dir), trial_id)
        grader_argv = spec.grader_argv(
            str(fixture_copy), str(out_dir / RESULT_FILE), str(grade_dir)
        )
    except ResultRejectedError as exc:
        return _outcome(spec, TrialStatus.NOT_STARTED, error_code=exc.code, detail=exc.message)
    trees = (spec.runner.cwd, spec.harness_dir, spec.grader.cwd)
    ran = _run_command(argv, spec.runner.cwd, spec.runner.timeout_seconds, "RUNNER", box=box,
                       mounts=_Mounts((*trees, str(fixture_copy)), (str(out_dir),)))
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
            trial_id=trial_id,
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
    graded = _run_command(grader_argv, spec.grader.cwd, spec.grader.timeout_seconds, "GRADER",
                          box=box, mounts=_Mounts((*trees, str(fixture_copy), str(out_dir)),
                                                  (str(grade_dir),)))
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
