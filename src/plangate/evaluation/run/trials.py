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

Runner and grader kinds are rows of :data:`RUNNER_STEPS` and :data:`GRADER_STEPS`.
Besides the plan's pinned programs (``command``), an agent kind (``claude``,
``codex``: :data:`~plangate.evaluation.run.agents.AGENT_HOSTS`) runs the real host
headless in the trial's box (:func:`run_agent`):

1. finds the host program on the ``PATH`` of the machine that runs the trial and
   reads its version: a missing host is ``EVAL_AGENT_HOST_MISSING``, a version
   other than the pinned one (``resources/pinned-hosts.toml``)
   ``EVAL_AGENT_HOST_UNPINNED``; both before anything starts;
2. reads the API key **by name** from this process's environment
   (``EVAL_AGENT_CREDENTIAL_MISSING`` when it is not set); the value is given to
   the box's environment only, never to a file, an argument or a record;
3. writes the task's files into ``OUT/workspace`` and the side's harness files
   (the host's row says which: ``CLAUDE.md``, ``.claude/skills/``, ``AGENTS.md``)
   over them, where the host reads them; the plan's prompt files become the
   host's appended instructions;
4. starts the box's egress proxy (:mod:`plangate.isolation.proxy`) with exactly
   one rule, the plan's model endpoint, and runs the host headless in a box:
   the system directories and the host's installation read-only, the workspace
   and a private home writable, nothing else; every other destination is refused
   by the proxy and recorded;
5. keeps the host's output as ``OUT/transcript.jsonl`` and writes ``OUT/result.json``
   itself (:func:`~plangate.evaluation.run.agents.agent_result`).

The ``fixture-checks`` grader (:func:`run_checks`) writes the task's check files
over a copy of the agent's work and runs each check command in a box with the
network off; all exiting 0 means the work meets the bar.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, TextIO

from plangate.canonical import canonical_bytes, sha256_digest
from plangate.errors import PlanGateError
from plangate.evaluation.harness.definition import (
    DEFAULT_DEFINITION_PATH,
    DefinitionRejected,
    parse_definition,
)
from plangate.evaluation.run.agents import (
    AGENT_HOSTS,
    CHECKS_KIND,
    COMMAND_KIND,
    TRANSCRIPT_FILE,
    WORKSPACE_DIR,
    AgentHost,
    AgentRunRejected,
    AgentTask,
    agent_host,
    agent_result,
    endpoint_address,
    harness_components,
    judgement_for,
    parse_task,
    transcript_digest,
)
from plangate.evaluation.run.protocol import (
    GRADE_FILE,
    GRADE_PROTOCOL,
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
from plangate.fsutil import atomic_write, read_regular_file
from plangate.hooks.doctor_versions import PIN_RESOURCE, VERSION_RE, pinned_versions
from plangate.isolation.backend import Backend
from plangate.isolation.config import EgressRule
from plangate.isolation.policy import Limits, Mount, SandboxPolicy
from plangate.isolation.proxy import proxy_env, start_proxy
from plangate.isolation.runner import BoxResult, run_in_box
from plangate.isolation.views import narrowest
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


# -- agent runners and the fixture-checks grader -------------------------------------

AGENT_OUTPUT_BYTES = 32 * 1024 * 1024
"""The host's stdout and stderr together (its JSON events); past it the trial crashed."""

AGENT_PROCESSES = 512
MAX_HARNESS_FILE_BYTES = 1024 * 1024
MAX_HARNESS_FILES = 2000
MAX_WORK_FILE_BYTES = 16 * 1024 * 1024
VERSION_TIMEOUT_SECONDS = 20


class StepResult(NamedTuple):
    """How a runner or grader step ended (``status`` completed: its document is written)."""

    status: TrialStatus
    code: str = ""
    detail: str = ""
    exit_code: int | None = None
    agent: Mapping[str, Any] | None = None


class AgentOptions(NamedTuple):
    """The agent section of the registered plan, as a trial needs it."""

    endpoint: str
    api_key_env: str
    prompt_files: tuple[str, ...]
    model: str = ""


def _read_pins() -> dict[str, dict[str, str]]:
    return pinned_versions(resources.files("plangate").joinpath(*PIN_RESOURCE).read_text("utf-8"))


def host_version(program: str) -> str:
    """The version ``program --version`` prints (``""`` when it prints none)."""
    try:
        proc = subprocess.run([program, "--version"], capture_output=True, check=False,
                              timeout=VERSION_TIMEOUT_SECONDS,
                              env={"PATH": os.environ.get("PATH", os.defpath), "HOME": "/"})
    except (OSError, subprocess.TimeoutExpired):
        return ""
    match = VERSION_RE.search(proc.stdout.decode("utf-8", "replace"))
    return match.group(1) if match else ""


def find_host(host: AgentHost, path: str) -> tuple[str, str] | StepResult:
    """``(program's real path, version)`` of the pinned host on ``path``, or why not."""
    found = shutil.which(host.program, path=path)
    if found is None:
        return StepResult(TrialStatus.NOT_STARTED, "EVAL_AGENT_HOST_MISSING",
                          f"{host.program} is not on PATH on this machine; install the pinned "
                          "version (scripts/install-hosts.sh) and put its bin directory on PATH")
    version = host_version(found)
    pinned = _read_pins().get(host.kind, {}).get("version", "")
    if not version or version != pinned:
        return StepResult(TrialStatus.NOT_STARTED, "EVAL_AGENT_HOST_UNPINNED",
                          f"{found} is version {version or '(unreadable)'}, not the pinned "
                          f"{pinned or '(none)'}; install the pinned version "
                          "(src/plangate/resources/pinned-hosts.toml)")
    return os.path.realpath(found), version


def install_root(program: str) -> str:
    """The directory a host's installation is shown from: the parent of its
    ``node_modules`` when it has one (a Node host needs its package and siblings),
    else the program's own directory."""
    parts = Path(program).parts
    if "node_modules" in parts:
        return str(Path(*parts[: parts.index("node_modules")]))
    return str(Path(program).parent)


def _write_files(root: Path, files: Sequence[tuple[str, bytes]]) -> None:
    for rel, data in files:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
        atomic_write(target, data)


def _no_link_on_the_way(root: Path, rel: str) -> bool:
    """True when no directory between ``root`` and ``root/rel`` is a symbolic link: a tree
    under test could otherwise point a harness path at any file of this machine."""
    current = root
    for part in rel.split("/")[:-1]:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def tree_files(root: Path, rel: str, limit: int) -> list[tuple[str, bytes]]:
    """Regular files at ``root/rel`` (a file or a directory walked without following a
    link), as ``(relative path, bytes)``; links, devices and oversized files are left out,
    and so is everything under a directory that is a link."""
    start = root / rel
    if not _no_link_on_the_way(root, rel):
        return []
    try:
        mode = os.lstat(start).st_mode
    except OSError:
        return []
    if stat.S_ISREG(mode):
        read = read_regular_file(start, limit)
        return [(rel, read.data)] if read.ok and read.data is not None else []
    if not stat.S_ISDIR(mode):
        return []
    out: list[tuple[str, bytes]] = []
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath, name)
            read = read_regular_file(full, limit)
            if read.ok and read.data is not None:
                out.append((full.relative_to(root).as_posix(), read.data))
            if len(out) >= MAX_HARNESS_FILES:
                return out
    return out


def _components(harness_dir: Path, placed: Sequence[str]) -> list[str]:
    read = read_regular_file(harness_dir / DEFAULT_DEFINITION_PATH, MAX_HARNESS_FILE_BYTES)
    if not read.ok or read.data is None:
        return []
    try:
        definition = parse_definition(read.data)
    except DefinitionRejected:
        return []
    return harness_components([(c.id, c.paths) for c in definition.components], placed)


def _tail(data: bytes) -> str:
    return data.decode("utf-8", "replace").strip()[-300:]


def _box_failure(done: BoxResult, what: str, timeout: float) -> StepResult | None:
    if done.error:
        return StepResult(TrialStatus.CRASHED, f"TRIAL_{what}_UNAVAILABLE", done.error,
                          done.exit_code)
    if done.timed_out:
        return StepResult(TrialStatus.TIMEOUT, f"TRIAL_{what}_TIMEOUT",
                          f"exceeded {timeout:g}s")
    if done.output_exceeded:
        return StepResult(TrialStatus.CRASHED, f"TRIAL_{what}_OUTPUT_FLOOD",
                          "wrote more output than a trial may", done.exit_code)
    return None


def run_agent(
    host: AgentHost,
    options: AgentOptions,
    *,
    backend: Any,
    system: tuple[Mount, ...],
    harness_dir: str,
    fixture: bytes,
    work: Path,
    out_dir: Path,
    trial_id: str,
    timeout: float,
    environ: Mapping[str, str] | None = None,
) -> StepResult:
    """The runner step of an agent kind (see the module docstring); never raises for a
    trial-level problem."""
    source = os.environ if environ is None else environ
    search = source.get("PATH", os.defpath)
    found = find_host(host, search)
    if isinstance(found, StepResult):
        return found
    program, version = found
    key = source.get(options.api_key_env, "")
    if not key:
        return StepResult(TrialStatus.NOT_STARTED, "EVAL_AGENT_CREDENTIAL_MISSING",
                          f"{options.api_key_env} is not set for the evaluator")
    try:
        task = parse_task(fixture)
    except AgentRunRejected as exc:
        return StepResult(TrialStatus.NOT_STARTED, exc.code, exc.message)
    address = endpoint_address(options.endpoint)
    if address is None:
        return StepResult(TrialStatus.NOT_STARTED, "EVAL_AGENT_ENDPOINT_INVALID",
                          f"{options.endpoint!r} is not an http(s) URL")
    harness = Path(harness_dir)
    workspace, home = out_dir / WORKSPACE_DIR, work / "home"
    workspace.mkdir()
    home.mkdir(mode=0o700)
    _write_files(workspace, task.files)
    placed_files: list[tuple[str, bytes]] = []
    for rel in host.harness_paths:
        placed_files += tree_files(harness, rel, MAX_HARNESS_FILE_BYTES)
    _write_files(workspace, placed_files)
    instructions: list[str] = []
    for rel in options.prompt_files:
        prompt = tree_files(harness, rel, MAX_HARNESS_FILE_BYTES)
        if [path for path, _ in prompt] == [rel]:  # a regular file, nothing else
            instructions.append(prompt[0][1].decode("utf-8", "replace"))
            placed_files.append(prompt[0])
    _write_files(home, [(rel, text.encode()) for rel, text in
                        host.config(options.endpoint, options.api_key_env, options.model).items()])
    proxy, access, proxy_dir = start_proxy(
        (EgressRule(*address),), private_network=backend.private_network,
        python=os.path.realpath(sys.executable),
    )
    env = {
        "PATH": f"{Path(program).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": source.get("LANG", "C.UTF-8"),
        "TMPDIR": "/tmp",  # noqa: S108 -- the box's private /tmp
        **host.env(options.endpoint, options.api_key_env, str(home)),
        **proxy_env(access.port),
        options.api_key_env: key,
    }
    policy = SandboxPolicy(
        visible=(*system, *(Mount.same(p) for p in narrowest([install_root(program)]))),
        writable=(Mount.same(str(workspace)), Mount.same(str(home))),
        read_only=(),
        hidden=(),
        network=True,
        limits=Limits(wall_seconds=timeout, output_bytes=AGENT_OUTPUT_BYTES,
                      file_size_bytes=MAX_WORK_FILE_BYTES, processes=AGENT_PROCESSES),
        env=tuple(sorted(env.items())),
        cwd=str(workspace),
        proxy=access,
    )
    argv = host.argv(program, task.prompt, "\n\n".join(instructions), options.model)
    try:
        done = run_in_box(backend, policy, argv, capture=True)
    except PlanGateError as exc:
        return StepResult(TrialStatus.CRASHED, exc.code, exc.message)
    finally:
        egress = proxy.stop()
        if proxy_dir:
            shutil.rmtree(proxy_dir, ignore_errors=True)
    facts: dict[str, Any] = {
        "host": host.kind,
        "version": version,
        "transcript_digest": transcript_digest(done.stdout),
        "egress": egress.to_json(),
    }
    atomic_write(out_dir / TRANSCRIPT_FILE, done.stdout)
    failed = _box_failure(done, "AGENT", timeout)
    if failed is not None:
        return failed._replace(agent=facts)
    if done.exit_code != 0:
        refused = ", ".join(f"{d.host}:{d.port}" for d in egress.refused)
        note = f"; the proxy refused {refused} (not the plan's endpoint)" if refused else ""
        return StepResult(TrialStatus.CRASHED, "TRIAL_AGENT_FAILED",
                          f"{host.program} exited {done.exit_code}{note}: {_tail(done.stderr)}",
                          done.exit_code, facts)
    result = agent_result(
        trial_id, exit_code=done.exit_code, transcript=done.stdout,
        components=_components(harness, [rel for rel, _ in placed_files]),
    )
    atomic_write(out_dir / RESULT_FILE, canonical_bytes(result))
    return StepResult(TrialStatus.COMPLETED, exit_code=0, agent=facts)


def run_checks(
    *,
    backend: Any,
    system: tuple[Mount, ...],
    fixture: bytes,
    out_dir: Path,
    grade_dir: Path,
    check_dir: Path,
    echo: Mapping[str, Any],
    timeout: float,
    resolve: Any,
) -> StepResult:
    """The ``fixture-checks`` grader: writes ``GRADE/grade.json`` (see the module
    docstring); a check that cannot run or does not end leaves no grade."""
    try:
        task: AgentTask = parse_task(fixture)
    except AgentRunRejected as exc:
        return StepResult(TrialStatus.CRASHED, exc.code, exc.message)
    check_dir.mkdir()
    _write_files(check_dir, tree_files(out_dir, WORKSPACE_DIR, MAX_WORK_FILE_BYTES))
    work = check_dir / WORKSPACE_DIR
    work.mkdir(exist_ok=True)
    _write_files(work, task.check_files)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
           "HOME": "/tmp", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"}  # noqa: S108
    meets_bar = True
    for command in task.check_commands:
        policy = SandboxPolicy(
            visible=system, writable=(Mount.same(str(work)),), read_only=(), hidden=(),
            network=False,
            limits=Limits(wall_seconds=timeout, output_bytes=1024 * 1024,
                          file_size_bytes=MAX_WORK_FILE_BYTES, processes=256),
            env=tuple(sorted(env.items())), cwd=str(work),
        )
        try:
            done = run_in_box(backend, policy, list(resolve(list(command))), capture=True)
        except PlanGateError as exc:
            return StepResult(TrialStatus.CRASHED, exc.code, exc.message)
        failed = _box_failure(done, "GRADER", timeout)
        if failed is not None:
            return failed
        if done.exit_code != 0:
            meets_bar = False
    grade = {"protocol": GRADE_PROTOCOL, **echo,
             "judgement": judgement_for(str(echo["role"]), meets_bar)}
    atomic_write(grade_dir / GRADE_FILE, canonical_bytes(grade))
    return StepResult(TrialStatus.COMPLETED, exit_code=0)


class _StepInput(NamedTuple):
    """What a runner or grader step of any kind is given."""

    spec: TrialSpec
    box: TrialBox | None
    fixture_copy: Path
    fixture: bytes
    work: Path
    out_dir: Path
    grade_dir: Path
    trial_id: str
    runner_argv: list[str]
    grader_argv: list[str]

    @property
    def trees(self) -> tuple[str, ...]:
        return (self.spec.runner.cwd, self.spec.harness_dir, self.spec.grader.cwd)


def _command_runner(step: _StepInput) -> StepResult:
    """The plan's pinned runner program (``plangate-trial/2``), boxed with the network off."""
    spec = step.spec
    ran = _run_command(step.runner_argv, spec.runner.cwd, spec.runner.timeout_seconds, "RUNNER",
                       box=step.box, mounts=_Mounts((*step.trees, str(step.fixture_copy)),
                                                    (str(step.out_dir),)))
    return StepResult(ran.status, ran.code, ran.detail, ran.exit_code)


def _agent_runner(step: _StepInput) -> StepResult:
    """An agent host run headless on the task (:func:`run_agent`)."""
    spec = step.spec
    host = agent_host(spec.runner.kind)
    if host is None or step.box is None:
        return StepResult(TrialStatus.NOT_STARTED, "SANDBOX_UNAVAILABLE",
                          "an agent runs only in a box")
    options = dict(spec.runner.options)
    return run_agent(
        host,
        AgentOptions(str(options["endpoint"]), str(options["api_key_env"]),
                     tuple(options.get("prompt_files", ())), str(options.get("model", ""))),
        backend=step.box.backend, system=step.box.system, harness_dir=spec.harness_dir,
        fixture=step.fixture, work=step.work, out_dir=step.out_dir, trial_id=step.trial_id,
        timeout=spec.runner.timeout_seconds,
    )


def _command_grader(step: _StepInput) -> StepResult:
    """The plan's pinned grader program (``plangate-grade/1``), boxed with the network off."""
    spec = step.spec
    ran = _run_command(step.grader_argv, spec.grader.cwd, spec.grader.timeout_seconds, "GRADER",
                       box=step.box, mounts=_Mounts(
                           (*step.trees, str(step.fixture_copy), str(step.out_dir)),
                           (str(step.grade_dir),)))
    return StepResult(ran.status, ran.code, ran.detail, ran.exit_code)


def _checks_grader(step: _StepInput) -> StepResult:
    """The fixture's own checks on the agent's work (``fixture-checks``)."""
    spec = step.spec
    if step.box is None:
        return StepResult(TrialStatus.NOT_STARTED, "SANDBOX_UNAVAILABLE",
                          "checks run only in a box")
    return run_checks(
        backend=step.box.backend, system=step.box.system, fixture=step.fixture,
        out_dir=step.out_dir, grade_dir=step.grade_dir, check_dir=step.work / "check",
        echo={"side": spec.side, "fixture_id": spec.fixture_id, "role": spec.role,
              "trial": spec.trial},
        timeout=spec.grader.timeout_seconds, resolve=resolve_argv,
    )


RUNNER_STEPS: dict[str, Callable[[_StepInput], StepResult]] = {
    COMMAND_KIND: _command_runner,
    **{host.kind: _agent_runner for host in AGENT_HOSTS},
}
"""Every runner kind a plan may name, and the step that runs it."""

GRADER_STEPS: dict[str, Callable[[_StepInput], StepResult]] = {
    COMMAND_KIND: _command_grader,
    CHECKS_KIND: _checks_grader,
}
"""Every grader kind a plan may name, and the step that runs it."""


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
    step = _StepInput(spec, box, fixture_copy, read.data, work, out_dir, grade_dir, trial_id,
                      argv, grader_argv)
    runner_step = RUNNER_STEPS.get(spec.runner.kind)
    grader_step = GRADER_STEPS.get(spec.grader.kind)
    if runner_step is None or grader_step is None:
        return _outcome(spec, TrialStatus.NOT_STARTED, error_code="TRIAL_COMMAND_INVALID",
                        detail=f"no runner {spec.runner.kind!r} or grader {spec.grader.kind!r} "
                        "kind in this PlanGate")
    ran = runner_step(step)
    agent = ran.agent
    if ran.status is not TrialStatus.COMPLETED:
        return _outcome(
            spec,
            ran.status,
            error_code=ran.code,
            detail=ran.detail,
            exit_code=ran.exit_code,
            duration_seconds=time.monotonic() - started,
            observed_fixture_digest=observed,
            agent=agent,
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
            agent=agent,
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
            agent=agent,
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
            agent=agent,
        )
    # The grader (the baseline's stable meta-verifier) judges the trial; the
    # runner's own claims are never the judgement.
    graded = grader_step(step)
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
        agent=agent,
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the runner's own process group (started by us), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        proc.kill()
