"""Run one command in one box: the only place a sandboxed process is started.

:func:`run_in_box` checks the policy (``ISOLATION_POLICY_INVALID``), builds the
backend's argument list, and starts it:

- with only the policy's environment (nothing is inherited);
- as the leader of a new process group, with the policy's resource limits set
  in the child before the backend starts (``RLIMIT_CPU``, ``RLIMIT_AS``,
  ``RLIMIT_FSIZE``, ``RLIMIT_NPROC``), so every process of the box inherits them;
- with stdout and stderr either passed through (an interactive agent) or
  captured up to ``limits.output_bytes`` together: one byte more ends the box
  (``output_exceeded``);
- past ``limits.wall_seconds`` the whole box is killed (``timed_out``).

Ending a box kills its process group with SIGKILL; under bubblewrap the pid
namespace's first process then dies with its parent and the kernel ends every
other process of the namespace, daemons included. SIGINT, SIGTERM and SIGHUP
sent to PlanGate while a box runs (from the main thread) are forwarded to the
box's process group, and the box is killed if it has not ended
:data:`GRACE_SECONDS` later; the signal is reported.

A program that cannot be found (inside the box's view of ``PATH``) or run is
reported as 127 or 126 without starting anything, as a shell does.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from plangate.errors import EnvironmentFailure
from plangate.isolation.backend import Backend
from plangate.isolation.policy import POLICY_INVALID, Limits, SandboxPolicy, check_policy
from plangate.records import NamedTuple

GRACE_SECONDS = 5.0
"""How long a box may take to end after a forwarded signal before it is killed."""

_READ_CHUNK = 65536


class BoxResult(NamedTuple):
    """How a box ended: the exit code as a shell reports it (128+N: signal N), and why."""

    exit_code: int
    signal: int | None = None
    timed_out: bool = False
    output_exceeded: bool = False
    forwarded_signal: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    error: str | None = None


def host_path(policy: SandboxPolicy, box_path: str) -> str | None:
    """The host path shown at ``box_path`` inside the box (None: no mount shows it)."""
    best: tuple[int, str] | None = None
    for mount in (*policy.visible, *policy.writable, *policy.read_only):
        target = mount.target.rstrip("/") or "/"
        if target in (box_path, "/") or box_path.startswith(target + "/"):
            rest = box_path[len(target) :] if target != "/" else box_path
            candidate = mount.source.rstrip("/") + rest if rest else mount.source
            if best is None or len(target) >= best[0]:
                best = (len(target), candidate or "/")
    for hidden in policy.hidden:
        if box_path == hidden.target or box_path.startswith(hidden.target.rstrip("/") + "/"):
            return None
    return best[1] if best else None


def locate_program(policy: SandboxPolicy, program: str) -> tuple[str | None, int]:
    """``(box path, 0)`` of ``program`` as the box would find it, else ``(None, 127|126)``."""
    import posixpath

    if "/" in program:
        candidates = [posixpath.normpath(posixpath.join(policy.cwd, program))]
    else:
        search = policy.env_map.get("PATH", "/usr/bin:/bin")
        candidates = [posixpath.join(d, program) for d in search.split(":") if d.startswith("/")]
    found_not_executable = False
    for box_path in candidates:
        host = host_path(policy, box_path)
        if host is None or not Path(host).is_file():
            continue
        if os.access(host, os.X_OK):
            return box_path, 0
        found_not_executable = True
    return None, 126 if found_not_executable else 127


def user_process_count(uid: int) -> int:
    """How many processes ``uid`` runs now (read from /proc; 0 when unreadable)."""
    count = 0
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return 0
    for entry in entries:
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


def rlimits(limits: Limits, current_processes: int) -> list[tuple[int, int]]:
    """The ``(resource, value)`` pairs a box's first process sets (pure)."""
    import resource

    out: list[tuple[int, int]] = []
    if limits.cpu_seconds is not None:
        out.append((resource.RLIMIT_CPU, int(limits.cpu_seconds)))
    if limits.memory_bytes is not None:
        out.append((resource.RLIMIT_AS, int(limits.memory_bytes)))
    if limits.file_size_bytes is not None:
        out.append((resource.RLIMIT_FSIZE, int(limits.file_size_bytes)))
    if limits.processes is not None and hasattr(resource, "RLIMIT_NPROC"):
        out.append((resource.RLIMIT_NPROC, current_processes + int(limits.processes)))
    return out


def _preexec(pairs: list[tuple[int, int]]) -> Callable[[], None]:
    import resource

    def apply() -> None:
        for res, value in pairs:
            _soft, hard = resource.getrlimit(res)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(res, (cap, cap))

    return apply


def backend_argv(backend: Backend, policy: SandboxPolicy, command: Sequence[str]) -> list[str]:
    """The argument list that runs ``command`` in a box of ``backend``."""
    return backend.argv(policy, command)


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


class _SignalForwarder:
    """Forward SIGINT/SIGTERM/SIGHUP to the box while it runs (main thread only)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.received: int | None = None
        self.at: float | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _SignalForwarder:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, _frame: object) -> None:
        if self.received is None:
            self.received = signum
            self.at = time.monotonic()
        _kill_group(self.pid, signum)

    def overdue(self) -> bool:
        return self.at is not None and time.monotonic() - self.at > GRACE_SECONDS

    def __exit__(self, *_exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)


def run_in_box(
    backend: Backend,
    policy: SandboxPolicy,
    command: Sequence[str],
    *,
    capture: bool = False,
    stdin: bytes | None = None,
) -> BoxResult:
    """Run ``command`` in a box of ``backend`` under ``policy`` (see the module docstring).

    ``capture`` collects stdout and stderr (bounded by ``limits.output_bytes``);
    otherwise they are the caller's. ``stdin`` is the command's input when given
    (else the caller's own stdin when not capturing, /dev/null when capturing).
    """
    problems = check_policy(policy)
    if problems:
        first = problems[0]
        raise EnvironmentFailure(first.code, first.message, first.hint)
    if not command:
        raise EnvironmentFailure(POLICY_INVALID, "no command to run", "give a command")
    program, missing_code = locate_program(policy, command[0])
    if program is None:
        what = "not found" if missing_code == 127 else "not executable"
        return BoxResult(missing_code, error=f"command {what} in the box: {command[0]}")
    argv = backend_argv(backend, policy, [program, *command[1:]])
    pairs = rlimits(
        policy.limits, user_process_count(os.getuid()) if policy.limits.processes is not None else 0
    )
    stdin_arg: Any = (
        subprocess.PIPE if stdin is not None else (subprocess.DEVNULL if capture else None)
    )
    out_arg: Any = subprocess.PIPE if capture else None
    try:
        # preexec_fn only calls setrlimit (async-signal-safe) before the exec.
        proc = subprocess.Popen(
            argv,
            env=policy.env_map,
            cwd="/" if backend.remaps else policy.cwd,
            stdin=stdin_arg,
            stdout=out_arg,
            stderr=out_arg,
            start_new_session=True,
            preexec_fn=_preexec(pairs),  # noqa: PLW1509
            close_fds=True,
        )
    except OSError as exc:
        raise EnvironmentFailure(
            "SANDBOX_START_FAILED",
            f"cannot start {backend.name}: {exc.strerror or exc}",
            "run 'plangate doctor' to see which sandbox backend works here",
        ) from None
    with _SignalForwarder(proc.pid) as forwarder:
        outcome = _wait(proc, policy.limits, forwarder, capture=capture, stdin=stdin)
    _kill_group(proc.pid)  # nothing of the box outlives it
    return outcome


def _wait(
    proc: subprocess.Popen[bytes],
    limits: Limits,
    forwarder: _SignalForwarder,
    *,
    capture: bool,
    stdin: bytes | None,
) -> BoxResult:
    deadline = (time.monotonic() + limits.wall_seconds) if limits.wall_seconds else None
    if stdin is not None and proc.stdin is not None:
        _feed(proc, stdin)
    timed_out = exceeded = False
    out: list[bytes] = []
    err: list[bytes] = []
    if capture:
        timed_out, exceeded = _drain(
            proc, limits.output_bytes, deadline, forwarder, out=out, err=err
        )
    with _exit_watch(proc) as exited:
        while not exited(0.05):
            if (deadline is not None and time.monotonic() > deadline) or forwarder.overdue():
                timed_out = timed_out or (deadline is not None and time.monotonic() > deadline)
                _kill_group(proc.pid)
    code = proc.returncode
    if code < 0:
        code = 128 - code
    # bubblewrap reports a command killed by signal N as 128+N, like a shell.
    sig = code - 128 if 128 < code <= 128 + 64 else None
    return BoxResult(
        code, sig, timed_out, exceeded, forwarder.received, b"".join(out), b"".join(err)
    )


@contextlib.contextmanager
def _exit_watch(proc: subprocess.Popen[bytes]) -> Iterator[Callable[[float], bool]]:
    """``exited(seconds)``: wait up to ``seconds`` for ``proc`` to end (reaped: True).

    On Linux a process file descriptor (``pidfd_open``) wakes the wait the moment the
    box ends; elsewhere :meth:`subprocess.Popen.wait` polls, sleeping up to the timeout."""
    pidfd = -1
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(proc.pid)

    def exited(seconds: float) -> bool:
        if pidfd >= 0:
            ready, _, _ = select.select([pidfd], [], [], seconds)
            if not ready:
                return False
            proc.wait()
            return True
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    try:
        yield exited
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    pipe = proc.stdin
    if pipe is None:
        return

    def writer() -> None:
        with contextlib.suppress(OSError):
            pipe.write(data)
        with contextlib.suppress(OSError):
            pipe.close()

    threading.Thread(target=writer, daemon=True).start()


def _drain(
    proc: subprocess.Popen[bytes],
    bound: int | None,
    deadline: float | None,
    forwarder: _SignalForwarder,
    *,
    out: list[bytes],
    err: list[bytes],
) -> tuple[bool, bool]:
    """Read stdout and stderr until both close; ``(timed_out, output_exceeded)``."""
    import select

    if proc.stdout is None or proc.stderr is None:
        return False, False
    sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    poller = select.poll()
    for fd in sinks:
        poller.register(fd, select.POLLIN)
    live = set(sinks)
    total = 0
    timed_out = exceeded = False
    while live:
        wait_ms = 100
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                _kill_group(proc.pid)
                break
            wait_ms = int(min(remaining, 0.1) * 1000) + 1
        if forwarder.overdue():
            _kill_group(proc.pid)
        for fd, _event in poller.poll(wait_ms):
            data = os.read(fd, _READ_CHUNK)
            if not data:
                poller.unregister(fd)
                live.discard(fd)
                continue
            if bound is not None and total + len(data) > bound:
                sinks[fd].append(data[: max(bound - total, 0)])
                total = bound
                exceeded = True
                _kill_group(proc.pid)
                live.clear()
                break
            sinks[fd].append(data)
            total += len(data)
    proc.stdout.close()
    proc.stderr.close()
    return timed_out, exceeded
