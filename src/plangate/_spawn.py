"""Process mechanics: run a child with captured, bounded output and a deadline.

One home for how PlanGate runs a program it does not trust to be small or quick
(git today): standard output is read up to a limit (more is refused and the child
killed), standard error is kept up to a small bound and the rest dropped, the
child is killed and reaped when it outlives its deadline, and no zombie or
descriptor is left behind on any path.

Two implementations give the same guarantees. On Linux the child is spawned with
``os.posix_spawnp`` and drained with ``poll``: importing :mod:`subprocess` (with
locale, signal and selectors) costs more than the git process it starts on the
``c3 verify`` hot path. Everywhere else, and whenever the spawn path cannot give
``subprocess.run``'s guarantees, :mod:`subprocess` runs the child and reader
threads drain its pipes into the same bounded sinks.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from plangate.records import NamedTuple

STDERR_KEPT = 64 * 1024
"""Bytes of a child's standard error kept for messages; the rest is read and dropped."""


class SpawnTimeout(Exception):
    """The child ran longer than its deadline and was killed."""


class SpawnOutputTooLarge(Exception):
    """The child printed more than the output limit and was killed."""


class Captured(NamedTuple):
    """What a finished child left: its exit code, standard output and (kept) standard error."""

    returncode: int
    stdout: bytes
    stderr: bytes


class _BoundedSink:
    """Collects one pipe's bytes up to a limit: over it, refuse (stdout) or drop (stderr)."""

    def __init__(self, limit: int, *, drop_excess: bool) -> None:
        self.limit = limit
        self.drop_excess = drop_excess
        self.size = 0
        self.chunks: list[bytes] = []

    def add(self, data: bytes) -> None:
        """Keep ``data``; raise :class:`SpawnOutputTooLarge` when a strict limit is passed."""
        room = self.limit - self.size
        if len(data) > room:
            if not self.drop_excess:
                raise SpawnOutputTooLarge
            data = data[: max(room, 0)]
        self.size += len(data)
        if data:
            self.chunks.append(data)

    def value(self) -> bytes:
        """Everything kept, in order."""
        return b"".join(self.chunks)


def capture(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    *,
    input_data: bytes | None,
    timeout: float,
    output_limit: int,
    cwd_as_argument: str | None = None,
) -> Captured:
    """Run ``argv`` in ``cwd`` and capture its output within ``output_limit`` and ``timeout``.

    ``cwd_as_argument`` names an option of the program that sets its working
    directory (git's ``-C``): the fast spawn path then passes the directory that
    way instead of changing directory in the child. Raises FileNotFoundError
    (``filename`` = ``argv[0]``) when the program is missing, :class:`SpawnTimeout`
    and :class:`SpawnOutputTooLarge` after killing the child.
    """
    if cwd_as_argument is not None:
        spawned = _spawn_capture(argv, cwd, env, input_data=input_data, timeout=timeout,
                                 output_limit=output_limit, cwd_option=cwd_as_argument)
        if spawned is not None:
            return spawned
    return subprocess_capture(argv, cwd, env, input_data=input_data, timeout=timeout,
                              output_limit=output_limit)


def subprocess_capture(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    *,
    input_data: bytes | None,
    timeout: float,
    output_limit: int,
    stderr_to_terminal: bool = False,
) -> Captured:
    """Run ``argv`` with :mod:`subprocess` (the general path), output bounded.

    Both pipes are drained by reader threads into bounded sinks, so a child that
    prints without end is killed at ``output_limit`` instead of filling memory.
    ``stderr_to_terminal`` leaves standard error to the caller's (a prompt the
    user must see, such as a hardware key's touch request); ``stderr`` is then empty.
    """
    import contextlib
    import subprocess
    import threading

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if input_data is not None else None,
        stdout=subprocess.PIPE,
        stderr=None if stderr_to_terminal else subprocess.PIPE,
    )
    sinks = (_BoundedSink(output_limit, drop_excess=False),
             _BoundedSink(STDERR_KEPT, drop_excess=True))
    overflowed = threading.Event()

    def drain(stream: Any, sink: _BoundedSink) -> None:
        try:
            while data := stream.read1(65536):
                sink.add(data)
        except SpawnOutputTooLarge:
            overflowed.set()
            proc.kill()

    readers = [threading.Thread(target=drain, args=(stream, sink), daemon=True)
               for stream, sink in ((proc.stdout, sinks[0]), (proc.stderr, sinks[1]))
               if stream is not None]
    for reader in readers:
        reader.start()
    try:
        if proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):  # the child stopped reading
                proc.stdin.write(input_data or b"")
            with contextlib.suppress(BrokenPipeError):  # closing flushes what is left
                proc.stdin.close()
        returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise SpawnTimeout from None
    finally:
        for reader in readers:
            reader.join(timeout)
    if overflowed.is_set():
        raise SpawnOutputTooLarge
    return Captured(returncode, sinks[0].value(), sinks[1].value())


class _Child(NamedTuple):
    pid: int
    out_r: int
    err_r: int
    in_w: int  # -1 when no input is written


def _inheritable_fds_to_close(pipes: list[int]) -> list[tuple[int, ...]] | None:
    """posix_spawn file actions closing every inheritable descriptor above 2 (None: no /proc)."""
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]  # noqa: PTH208 -- names only
    except (OSError, ValueError):
        return None
    actions: list[tuple[int, ...]] = []
    for fd in open_fds:
        if fd > 2 and fd not in pipes:
            try:
                if os.get_inheritable(fd):
                    actions.append((os.POSIX_SPAWN_CLOSE, fd))
            except OSError:
                pass  # the descriptor listdir itself used, already closed
    return actions


def _start_child(
    argv: list[str], cwd: Path, env: dict[str, str], *, with_input: bool, cwd_option: str
) -> _Child | None:
    """Spawn ``argv`` with its pipes wired; None when the guarantees cannot be met."""
    # _signal is the C module behind signal; importing signal would build its
    # enums just to read two constants.
    import _signal  # type: ignore[import-not-found]

    pipes = [*os.pipe(), *os.pipe(), *(os.pipe() if with_input else ())]
    actions = _inheritable_fds_to_close(pipes) if min(pipes) > 2 else None
    if actions is None:  # a closed standard descriptor or no /proc: let subprocess sort it out
        for fd in pipes:
            os.close(fd)
        return None
    out_r, out_w, err_r, err_w = pipes[:4]
    in_r, in_w = (pipes[4], pipes[5]) if with_input else (-1, -1)
    if in_r != -1:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    actions.append((os.POSIX_SPAWN_DUP2, out_w, 1))
    actions.append((os.POSIX_SPAWN_DUP2, err_w, 2))
    child_argv = [argv[0], cwd_option, os.fspath(cwd), *argv[1:]]
    sys.audit("subprocess.Popen", argv[0], argv, cwd, env)
    try:
        pid = os.posix_spawnp(argv[0], child_argv, env, file_actions=actions,
                              setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ))
    except FileNotFoundError:
        for fd in pipes:
            os.close(fd)
        raise FileNotFoundError(2, "No such file or directory", argv[0]) from None
    except BaseException:
        for fd in pipes:
            os.close(fd)
        raise
    for fd in (out_w, err_w, in_r):
        if fd != -1:
            os.close(fd)
    return _Child(pid, out_r, err_r, in_w)


def _spawn_capture(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    *,
    input_data: bytes | None,
    timeout: float,
    output_limit: int,
    cwd_option: str,
) -> Captured | None:
    """Run ``argv`` like :func:`subprocess_capture`, with ``os.posix_spawnp`` on Linux.

    The child gets what ``subprocess.run`` would give it: stdout and stderr
    captured, stdin inherited unless ``input_data`` is given, SIGPIPE and SIGXFSZ
    reset to their defaults, every inheritable descriptor above 2 closed, and the
    working directory passed as ``cwd_option``. Returns None whenever those
    guarantees cannot be met (another platform, no /proc, ``cwd`` not a
    directory, a standard descriptor closed): the caller then uses
    :mod:`subprocess` itself, so odd cases behave exactly as before.
    """
    if sys.platform != "linux" or not hasattr(os, "posix_spawnp") or not cwd.is_dir():
        return None
    child = _start_child(argv, cwd, env, with_input=input_data is not None,
                         cwd_option=cwd_option)
    if child is None:
        return None
    return _pump(child, input_data or b"", timeout, output_limit)


def _pump(child: _Child, input_data: bytes, timeout: float, output_limit: int) -> Captured:
    """Feed the child's input and drain its output until it exits; kill it on any failure."""
    import select
    import time
    from _signal import SIGKILL  # the C module: see _start_child

    sinks = {child.out_r: _BoundedSink(output_limit, drop_excess=False),
             child.err_r: _BoundedSink(STDERR_KEPT, drop_excess=True)}
    poller = select.poll()
    for fd in (child.out_r, child.err_r):
        poller.register(fd, select.POLLIN)
    pending = memoryview(input_data)
    in_w = child.in_w
    if in_w != -1:
        if pending:
            os.set_blocking(in_w, False)
            poller.register(in_w, select.POLLOUT)
        else:
            os.close(in_w)
            in_w = -1
    live = [fd for fd in (child.out_r, child.err_r, in_w) if fd != -1]
    deadline = time.monotonic() + timeout
    status: int | None = None
    try:
        while live or status is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SpawnTimeout  # the finally clause kills and reaps the child
            if not live:
                # Both pipes are closed: the child is exiting; reap it (within the timeout).
                reaped, wait_status = os.waitpid(child.pid, os.WNOHANG)
                if reaped:
                    status = wait_status
                else:
                    time.sleep(0.0002)
                continue
            for fd, _event in poller.poll(remaining * 1000):
                if fd == in_w:
                    pending = _feed(in_w, pending)
                    if not pending:
                        poller.unregister(in_w)
                        os.close(in_w)
                        live.remove(in_w)
                        in_w = -1
                    continue
                data = os.read(fd, 65536)
                if data:
                    sinks[fd].add(data)
                else:
                    poller.unregister(fd)
                    os.close(fd)
                    live.remove(fd)
    finally:
        for fd in live:
            os.close(fd)
        if status is None:  # timeout, too much output or an error: kill, leave no zombie
            os.kill(child.pid, SIGKILL)
            os.waitpid(child.pid, 0)
    return Captured(os.waitstatus_to_exitcode(status), sinks[child.out_r].value(),
                    sinks[child.err_r].value())


def _feed(fd: int, pending: memoryview) -> memoryview:
    """Write what the child's input pipe takes now; the rest is returned."""
    try:
        written = os.write(fd, pending[:65536])
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        written = len(pending)  # the child stopped reading: as subprocess does
    return pending[written:]
