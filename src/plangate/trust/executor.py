"""Executors: the one place that runs trial commands.

An :class:`Executor` takes trial specifications and returns one
:class:`~plangate.trust.runner_protocol.TrialOutcome` per specification, in the
same order. The decision code only ever sees outcomes, so a distributed engine
(a queue, a cluster) plugs in by implementing :meth:`Executor.run` without
touching :mod:`plangate.trust.evaluator`.

:class:`LocalPoolExecutor` runs trials in a local process pool (``--jobs N``)
and draws a progress line on stderr for long runs.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TextIO

from plangate.trust.runner_protocol import TrialOutcome, TrialSpec, TrialStatus, execute_trial

ProgressCallback = Callable[[int, int, TrialOutcome], None]
"""Called after each finished trial with (done, total, outcome)."""


class Executor(Protocol):
    """Runs trials; returns one outcome per spec, in the order of ``trials``."""

    def run(self, trials: Sequence[TrialSpec]) -> list[TrialOutcome]:
        """Run every trial; never raise for a trial-level failure (record it instead)."""
        ...


class ProgressLine:
    """A single self-overwriting progress line (only when ``total`` is large enough)."""

    def __init__(self, stream: TextIO | None, *, min_total: int = 8) -> None:
        self.stream = stream
        self.min_total = min_total
        self.started = time.monotonic()
        self.failed = 0

    def __call__(self, done: int, total: int, outcome: TrialOutcome) -> None:
        """Print ``trials done/total, failed, rate`` (on the same line)."""
        if self.stream is None or total < self.min_total:
            return
        if not outcome.completed:
            self.failed += 1
        elapsed = max(time.monotonic() - self.started, 1e-9)
        end = "\n" if done == total else ""
        self.stream.write(
            f"\rtrials {done}/{total}  failed {self.failed}  {done / elapsed:.1f}/s{end}"
        )
        self.stream.flush()


class LocalPoolExecutor:
    """A local process pool of ``jobs`` workers (``jobs == 1`` runs in-process)."""

    def __init__(self, jobs: int = 1, progress: ProgressCallback | None = None) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.jobs = jobs
        self.progress = progress

    def run(self, trials: Sequence[TrialSpec]) -> list[TrialOutcome]:
        """Run ``trials``; each trial is its own subprocess, the pool only schedules them."""
        total = len(trials)
        results: list[TrialOutcome | None] = [None] * total
        done = 0
        if self.jobs == 1 or total <= 1:
            for index, spec in enumerate(trials):
                results[index] = _safe_execute(spec)
                done += 1
                self._report(done, total, results[index])
        else:
            # Threads are enough: every trial is an external process, the
            # worker only waits on it. A thread pool avoids pickling and fork
            # hazards while still running `jobs` runners at once.
            with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
                futures = {pool.submit(_safe_execute, spec): i for i, spec in enumerate(trials)}
                for future in concurrent.futures.as_completed(futures):
                    index = futures[future]
                    results[index] = future.result()
                    done += 1
                    self._report(done, total, results[index])
        return [r if r is not None else _lost(trials[i]) for i, r in enumerate(results)]

    def _report(self, done: int, total: int, outcome: TrialOutcome | None) -> None:
        if self.progress is not None and outcome is not None:
            self.progress(done, total, outcome)


def _safe_execute(spec: TrialSpec) -> TrialOutcome:
    """Run one trial; an unexpected exception is a recorded failed trial, never a pass."""
    try:
        return execute_trial(spec)
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
