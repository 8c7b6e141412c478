"""Trials on a Ray cluster: ``plangate eval run --executor ray[:ADDRESS]`` (docs/evaluation-ray.md).

Each trial is one Ray task that runs :func:`~plangate.evaluation.run.trials.execute_trial`
in its own box on the worker (the same isolation package as a local run). What the
evaluator trusts, and why:

- **Trees go by content.** The evaluator packs the baseline and candidate trees
  (:func:`plangate.isolation.trees.pack_tree`) and puts each in Ray's object store
  once; a task is sent the digests with the references. The worker hashes what
  arrived and refuses a tree that does not hash to its digest
  (``TRIAL_TREE_DIGEST_MISMATCH``) before anything runs; the sealed fixture's bytes
  are checked against the plan's pin by the trial itself (``SEALED_FIXTURE_MUTATION``).
  After the trial the worker hashes the trees again: a changed baseline tree (it
  holds the pinned runner and grader) is ``EVAL_HARNESS_FILE_MUTATION``, tampering;
  a changed candidate tree is ``TRIAL_TREE_MODIFIED``, a trial that does not count.
- **Only the evaluator decides.** A worker returns the bytes of ``result.json`` and
  ``grade.json`` with their digests and its own status; the evaluator checks each
  digest (``TRIAL_RESULT_DIGEST_MISMATCH``) and parses both documents itself with
  the trial's identity (:func:`accept_report`). The worker's reading of them is
  never used.
- **A lost worker is never a pass.** A task whose worker or node dies is retried
  by Ray up to ``retries`` times; a trial still without a report is recorded as
  ``TRIAL_WORKER_LOST`` (not completed), so the evaluation is INCONCLUSIVE
  (``TRIALS_INCOMPLETE``).

Without Ray installed, :func:`ray_available` says why, and ``--executor ray`` is
refused before any record (``EVAL_EXECUTOR_UNAVAILABLE``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plangate import __version__
from plangate.canonical import StrictJSONError, sha256_digest, strict_loads_object
from plangate.errors import EnvironmentFailure, UsageError
from plangate.evaluation.run.protocol import (
    GRADE_FILE,
    MAX_RESULT_BYTES,
    RESULT_FILE,
    CommandSpec,
    ResultRejectedError,
    TrialOutcome,
    TrialSpec,
    TrialStatus,
    parse_grade,
    parse_result,
)
from plangate.evaluation.run.trials import ProgressCallback, TrialBox, execute_trial
from plangate.fsutil import atomic_write, read_regular_file
from plangate.isolation.trees import TreeMismatch, TreePack, pack_tree, tree_digest, unpack_tree
from plangate.records import NamedTuple

DEFAULT_RETRIES = 1
"""How often Ray runs a trial again whose worker was lost."""

LOST_ERRORS = (
    "WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError",
    "ObjectReconstructionFailedError", "TaskUnschedulableError", "RaySystemError",
    "ActorDiedError", "LocalRayletDiedError", "TaskCancelledError",
)
"""Ray's errors for a task whose worker went away (the trial is lost, never failed by it)."""


def ray_available() -> str | None:
    """``None`` when Ray can be imported here, else why not (for the refusal)."""
    try:
        found = importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # a module entry of None: imports of it are refused
        found = False
    return None if found else "Ray is not installed where plangate runs"


class TrialReport(NamedTuple):
    """What a worker sends back for one trial: its status and the raw documents."""

    key: str
    status: str
    trial_id: str
    result: bytes | None
    result_digest: str
    grade: bytes | None
    grade_digest: str
    error_code: str
    detail: str
    exit_code: int | None
    duration_seconds: float
    observed_fixture_digest: str | None
    agent: dict[str, Any] | None
    plangate_version: str


class ShippedTrial(NamedTuple):
    """One trial as sent to a worker: the spec, and the digests of the trees it names."""

    spec: TrialSpec
    trees: tuple[tuple[str, str], ...]
    """``(evaluator's path, tree digest)`` of every tree the spec names."""
    fixture: bytes


# -- on the worker ---------------------------------------------------------------------


def _rebase(spec: TrialSpec, places: dict[str, str], fixture: str, work: str) -> TrialSpec:
    """``spec`` with the evaluator's paths replaced by where the worker unpacked them."""

    def moved(path: str) -> str:
        for old, new in places.items():
            if path == old or path.startswith(old + "/"):
                return new + path[len(old):]
        return path

    def command(spec_: CommandSpec) -> CommandSpec:
        return dataclasses.replace(
            spec_, argv=tuple(moved(a) for a in spec_.argv), cwd=moved(spec_.cwd),
            pinned_files=tuple((moved(p), d) for p, d in spec_.pinned_files),
        )

    return dataclasses.replace(
        spec, runner=command(spec.runner), grader=command(spec.grader),
        harness_dir=moved(spec.harness_dir), fixture_source=fixture, work_dir=work,
    )


def _report(spec: TrialSpec, outcome: TrialOutcome, work: Path, trial_id: str) -> TrialReport:
    def raw(path: Path) -> bytes | None:
        read = read_regular_file(path, MAX_RESULT_BYTES)
        return read.data if read.ok else None

    result, grade = raw(work / "out" / RESULT_FILE), raw(work / "grade" / GRADE_FILE)
    return TrialReport(
        spec.key, outcome.status.value, trial_id, result,
        sha256_digest(result) if result is not None else "", grade,
        sha256_digest(grade) if grade is not None else "", outcome.error_code, outcome.detail,
        outcome.exit_code, outcome.duration_seconds, outcome.observed_fixture_digest,
        dict(outcome.agent) if outcome.agent is not None else None, __version__,
    )


def run_shipped_trial(shipped: ShippedTrial, *packs: TreePack) -> TrialReport:
    """The Ray task: check the shipped trees, unpack them, run the trial in a box here,
    check the trees again and report the raw documents (never a decision)."""
    spec = shipped.spec
    root = Path(tempfile.mkdtemp(prefix="plangate-ray-"))
    try:
        places: dict[str, str] = {}
        try:
            for index, ((path, digest), pack) in enumerate(zip(shipped.trees, packs, strict=True)):
                dest = root / f"tree{index}"
                unpack_tree(pack, digest, dest)
                places[path] = str(dest)
        except (TreeMismatch, ValueError) as exc:
            return _refused(spec, "TRIAL_TREE_DIGEST_MISMATCH", str(exc))
        fixture = root / "sealed-fixture"
        atomic_write(fixture, shipped.fixture)
        work = root / "trial"
        local = _rebase(spec, places, str(fixture), str(work))
        try:
            box: TrialBox | None = TrialBox.here()
        except Exception as exc:  # noqa: BLE001 -- no box on this worker: the trial does not run
            return _refused(spec, "SANDBOX_UNAVAILABLE", f"no sandbox on this worker: {exc}")
        outcome = execute_trial(local, box)
        # The trial ran harness code under test: the trees it could see must be unchanged.
        for (path, digest), index in zip(shipped.trees, range(len(packs)), strict=True):
            if pack_tree(root / f"tree{index}").digest != digest:
                # The baseline tree holds the pinned runner and grader: tampering, as a
                # pin that no longer holds. A changed candidate tree makes the trial
                # unrepeatable: not completed.
                judges = path in (spec.runner.cwd, spec.grader.cwd)
                outcome = dataclasses.replace(
                    outcome, status=TrialStatus.FIXTURE_MISMATCH,
                    error_code="EVAL_HARNESS_FILE_MUTATION" if judges else "TRIAL_TREE_MODIFIED",
                    detail=f"the trial changed the tree of {path} on the worker",
                )
        trial_id = _trial_id_of(work / "out" / RESULT_FILE)
        return _report(spec, outcome, work, trial_id)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _trial_id_of(result: Path) -> str:
    """The trial id the trial's runner was given, as the worker saw it (checked again by
    the evaluator: a result that does not echo it is refused there)."""
    read = read_regular_file(result, MAX_RESULT_BYTES)
    if not read.ok or read.data is None:
        return ""
    try:
        value = strict_loads_object(read.data, "result").get("trial_id")
    except StrictJSONError:
        return ""
    return value if isinstance(value, str) else ""


def _refused(spec: TrialSpec, code: str, detail: str) -> TrialReport:
    return TrialReport(spec.key, TrialStatus.NOT_STARTED.value, "", None, "", None, "", code,
                       detail, None, 0.0, None, None, __version__)


# -- on the evaluator ------------------------------------------------------------------


def _outcome(spec: TrialSpec, status: TrialStatus, **kw: Any) -> TrialOutcome:
    return TrialOutcome(key=spec.key, side=spec.side, fixture_id=spec.fixture_id, role=spec.role,
                        trial=spec.trial, status=status, **kw)


def accept_report(spec: TrialSpec, report: TrialReport) -> TrialOutcome:
    """The evaluator's reading of a worker's report: digests checked, documents parsed here.

    The worker's own status stands only for a trial that did not complete; a completed
    trial is rebuilt from the verified bytes, so a worker can make a trial fail but can
    never make one pass that its documents do not show.
    """
    try:
        status = TrialStatus(report.status)
    except ValueError:
        return _outcome(spec, TrialStatus.CRASHED, error_code="TRIAL_REPORT_INVALID",
                        detail=f"the worker reported the status {report.status!r}")
    common: dict[str, Any] = {"exit_code": report.exit_code,
                              "duration_seconds": report.duration_seconds,
                              "observed_fixture_digest": report.observed_fixture_digest,
                              "agent": report.agent}
    if report.key != spec.key:
        return _outcome(spec, TrialStatus.CRASHED, error_code="TRIAL_REPORT_INVALID",
                        detail=f"the worker answered for {report.key}")
    if report.plangate_version != __version__:
        return _outcome(spec, TrialStatus.NOT_STARTED, error_code="TRIAL_WORKER_VERSION",
                        detail=f"the worker runs plangate {report.plangate_version}, the "
                        f"evaluator {__version__}")
    for data, digest, what in ((report.result, report.result_digest, RESULT_FILE),
                               (report.grade, report.grade_digest, GRADE_FILE)):
        if data is not None and sha256_digest(data) != digest:
            return _outcome(spec, TrialStatus.CRASHED, error_code="TRIAL_RESULT_DIGEST_MISMATCH",
                            detail=f"the worker's {what} does not hash to {digest}", **common)
    if status is not TrialStatus.COMPLETED:
        return _outcome(spec, status, error_code=report.error_code or "TRIAL_REPORT_INVALID",
                        detail=report.detail, **common)
    if report.result is None or report.grade is None or not report.trial_id:
        return _outcome(spec, TrialStatus.MALFORMED, error_code="TRIAL_RESULT_MISSING",
                        detail="the worker sent no result or no grade", **common)
    try:
        parsed = parse_result(report.result, trial_id=report.trial_id, side=spec.side,
                              fixture_id=spec.fixture_id, role=spec.role, trial=spec.trial)
    except ResultRejectedError as exc:
        return _outcome(spec, TrialStatus.MALFORMED, error_code=exc.code, detail=exc.message,
                        **common)
    try:
        judgement = parse_grade(report.grade, side=spec.side, fixture_id=spec.fixture_id,
                                role=spec.role, trial=spec.trial)
    except ResultRejectedError as exc:
        return _outcome(spec, TrialStatus.COMPLETED, report=parsed, judgement="unavailable",
                        error_code="EVAL_GRADER_UNAVAILABLE", detail=f"{exc.code}: {exc.message}",
                        **common)
    code, detail = report.error_code, report.detail
    if judgement == "unavailable" and not code:
        code, detail = "EVAL_GRADER_UNAVAILABLE", "the grader could not judge this trial"
    return _outcome(spec, TrialStatus.COMPLETED, report=parsed, judgement=judgement,
                    error_code=code, detail=detail, **common)


def lost(spec: TrialSpec, detail: str) -> TrialOutcome:
    """A trial whose worker went away (after Ray's retries): not completed, never a pass."""
    return _outcome(spec, TrialStatus.NOT_STARTED, error_code="TRIAL_WORKER_LOST", detail=detail)


def _trees_of(spec: TrialSpec) -> list[str]:
    return list(dict.fromkeys([spec.runner.cwd, spec.grader.cwd, spec.harness_dir]))


class RayExecutor:
    """Runs each trial as a Ray task on the cluster at ``address`` (``None``: Ray's own
    choice: ``RAY_ADDRESS``, or a cluster on this machine)."""

    runs_here = False
    """Trials run on the workers: the agent hosts and credentials are checked there."""

    def __init__(
        self, address: str | None = None, *, retries: int = DEFAULT_RETRIES,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.address = address
        self.retries = retries
        self.progress = progress

    def connect(self) -> RayExecutor:
        """Join the cluster now, before anything is recorded: a cluster that cannot be
        reached is ``EVAL_EXECUTOR_UNAVAILABLE`` (fix it and run again), never an
        evaluation interrupted after its trials started."""
        import ray  # an optional dependency: the executor is chosen only when it imports

        if ray.is_initialized():
            return self
        try:
            ray.init(address=self.address, log_to_driver=False, include_dashboard=False,
                     configure_logging=False)
        except Exception as exc:  # noqa: BLE001 -- Ray reports an unreachable cluster many ways
            raise EnvironmentFailure(
                "EVAL_EXECUTOR_UNAVAILABLE",
                f"cannot join the Ray cluster at {self.address or 'RAY_ADDRESS'}: "
                f"{type(exc).__name__}: {str(exc)[:300]}",
                "start the cluster (ray start) and give its head's address; with token "
                "authentication set RAY_AUTH_MODE and the token here too "
                "(docs/evaluation-ray.md)",
            ) from None
        return self

    def run(self, trials: Sequence[TrialSpec]) -> list[TrialOutcome]:
        """Ship every trial, wait for the reports, accept each one (never raises for a trial)."""
        import ray  # an optional dependency: the executor is chosen only when it imports

        self.connect()
        packs: dict[str, tuple[str, Any]] = {}
        for spec in trials:
            for path in _trees_of(spec):
                if path not in packs:
                    pack = pack_tree(Path(path))
                    packs[path] = (tree_digest(pack.entries), ray.put(pack))
        remote = ray.remote(num_cpus=1, max_retries=self.retries,
                            retry_exceptions=False)(run_shipped_trial)
        pending: dict[Any, int] = {}
        outcomes: list[TrialOutcome | None] = [None] * len(trials)
        for index, spec in enumerate(trials):
            fixture = read_regular_file(Path(spec.fixture_source), MAX_RESULT_BYTES * 64)
            paths = _trees_of(spec)
            shipped = ShippedTrial(spec, tuple((p, packs[p][0]) for p in paths),
                                   fixture.data if fixture.ok and fixture.data else b"")
            pending[remote.remote(shipped, *(packs[p][1] for p in paths))] = index
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                collected = self._collect(ray, ref, trials[index])
                outcomes[index] = collected
                done += 1
                if self.progress is not None:
                    self.progress(done, len(trials), collected)
        return [o if o is not None else lost(trials[i], "no report") for i, o in
                enumerate(outcomes)]

    def _collect(self, ray: Any, ref: Any, spec: TrialSpec) -> TrialOutcome:
        try:
            report = ray.get(ref)
        except Exception as exc:  # noqa: BLE001 -- every way a task can end without a report
            name = type(exc).__name__
            cause = getattr(exc, "cause", None)
            names = {name, type(cause).__name__ if cause is not None else ""}
            if names & set(LOST_ERRORS):
                return lost(spec, f"the worker running this trial was lost ({name}); Ray ran "
                            f"it {self.retries + 1} time(s)")
            return _outcome(spec, TrialStatus.CRASHED, error_code="TRIAL_EXECUTOR_ERROR",
                            detail=f"{name}: {str(exc)[:300]}")
        if not isinstance(report, TrialReport):
            return _outcome(spec, TrialStatus.CRASHED, error_code="TRIAL_REPORT_INVALID",
                            detail=f"the worker sent {type(report).__name__}")
        return accept_report(spec, report)


# -- choosing an executor ----------------------------------------------------------------


class ExecutorKind(NamedTuple):
    """One way to run trials (a row of :data:`EXECUTORS`)."""

    name: str
    takes_address: bool
    missing: Any
    """``() -> str | None``: why this executor cannot run here (None: it can)."""
    make: Any
    """``(address, jobs, progress) -> Executor | None`` (None: the local pool of ``eval run``)."""


EXECUTORS: tuple[ExecutorKind, ...] = (
    ExecutorKind("local", False, lambda: None, lambda _address, _jobs, _progress: None),
    ExecutorKind(
        "ray", True, ray_available,
        lambda address, _jobs, progress: RayExecutor(address, progress=progress).connect(),
    ),
)
"""Every executor ``--executor`` may name: ``local`` (the default pool, ``--jobs``) and
``ray[:ADDRESS]``."""


def choose_executor(text: str, jobs: int, progress: ProgressCallback | None) -> Any:
    """The executor ``--executor TEXT`` names (None: the local pool); refuses an unknown
    name (``EVAL_EXECUTOR_UNKNOWN``) and one that cannot run here
    (``EVAL_EXECUTOR_UNAVAILABLE``) with a hint, before anything is recorded."""
    name, _, address = text.partition(":")
    kind = next((k for k in EXECUTORS if k.name == name), None)
    if kind is None or (address and not kind.takes_address):
        raise UsageError(
            "EVAL_EXECUTOR_UNKNOWN", f"--executor {text!r} is not an executor PlanGate knows",
            "use --executor local or --executor ray[:ADDRESS] (docs/evaluation-ray.md)",
        )
    why = kind.missing()
    if why is not None:
        raise EnvironmentFailure(
            "EVAL_EXECUTOR_UNAVAILABLE", f"--executor {name}: {why}",
            "install the extra (pip install 'plangate[ray]') on the evaluator and every "
            "worker, or run without --executor (docs/evaluation-ray.md)",
        )
    return kind.make(address or None, jobs, progress)
