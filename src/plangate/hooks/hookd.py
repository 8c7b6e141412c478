"""The hook helper (``plangate hookd``): one warm process per repository answering hooks.

A hook process pays for interpreter start-up and imports on every call. The
helper pays once: it imports the decision code, compiles the shell grammar and
patterns, then answers the clients of :mod:`plangate.hooks.hookd_client` on a
unix socket. It does not remember decisions: every request runs the same
:func:`plangate.hooks.entry.run_host` the in-process hook runs, with the
client's environment and working directory, so the surfaces, plan, record,
HEAD and ledger are read afresh and the decision is appended to the ledger
(durably, inside :func:`plangate.hooks.service.evaluate`) before the answer is
sent. What stays warm is only what is a pure function of its input: imported
modules, the parser, compiled patterns (``lru_cache`` keyed by the pattern),
and the trust root read at a commit and a branch's commit, keyed by the bytes
they come from (:mod:`plangate.hooks.hookd_cache`).

The socket lives in :func:`~plangate.hooks.hookd_client.socket_dir` (mode 0700,
owned by the user, outside every repository), named by the digest of the
repository's real path, next to a lock file held for the helper's lifetime.
Requests are served one at a time; each one is checked: the peer's uid
(``SO_PEERCRED``) is the helper's, the frame is complete, the host is an
agent host, the repository and the package digest are the helper's own, the
call is not inside exec's isolated run. Anything else gets a ``refuse`` (the
client then decides in-process) or no answer at all.

The helper stops by itself after :data:`IDLE_SECONDS` without a request, when
the repository's ``.git`` is replaced or removed, when the installed package
changes (its digest is recomputed before each request and every poll), when
its socket is removed or replaced, on SIGTERM/SIGINT/SIGHUP and on ``plangate
hookd stop``.
"""

# ruff: noqa: PTH100, PTH102, PTH103, PTH109, PTH118, PTH120
from __future__ import annotations

import json
import os
import signal
import socket
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from plangate.errors import EnvironmentFailure, InputRejected
from plangate.hooks.hookd_client import (
    AGENT_HOSTS,
    ANSWER_FIELDS,
    BOX_ENV,
    MAX_ANSWER_BYTES,
    REQUEST_FIELDS,
    environment_field,
    exchange,
    find_root,
    frame,
    inside,
    package_digest,
    peer_uid,
    socket_address,
    socket_dir,
    socket_name,
    socket_trusted,
    trusted_dir_fd,
    unframe,
)
from plangate.records import NamedTuple

IDLE_SECONDS = 300.0
"""A helper with no request for this long exits (``--idle-seconds`` changes it)."""
POLL_SECONDS = 1.0
"""How often an idle helper checks its stop conditions."""
REQUEST_TIMEOUT = 5.0
"""Seconds a client has to send its whole request."""
STATUS = b"!status"
STOP = b"!stop"
WARM_MODULES = (
    "plangate.hooks.hosts.claude",
    "plangate.hooks.hosts.codex",
    "plangate.hooks.hosts.cursor",
    "plangate.hooks.hosts.claude_protocol",
    "plangate.hooks.hosts.requests",
    "plangate.hooks.hosts.patch",
    "plangate.hooks.hosts.tool_policy",
    "plangate.hooks.service",
    "plangate.hooks.shell",
    "plangate.hooks.shell.order",
    "plangate.hooks.confinement",
    "plangate.isolation.contract",
    "plangate.githead",
    "plangate.ledger",
    "plangate.surfaces",
    "plangate.snapshot",
    "plangate.plan.scope",
    "plangate.approval.holds",
    "plangate.session.state",
    "plangate.session.baseline",
    "plangate.session.openrun",
    "plangate.git",
    "plangate.fsutil",
)
"""Imported once at start: what a decision would otherwise import on every call."""


class Location(NamedTuple):
    """Where the helper of one repository listens."""

    root: str
    directory: str
    name: str

    @property
    def path(self) -> str:
        """The socket's full path."""
        return os.path.join(self.directory, self.name)

    @property
    def lock_name(self) -> str:
        """The lock file held while the helper runs."""
        return self.name.removesuffix(".sock") + ".lock"


def locate(cwd: str, env: Mapping[str, str]) -> Location:
    """The helper location for the repository holding ``cwd``."""
    root = find_root(cwd)
    if root is None:
        raise InputRejected(
            "HOOKD_NOT_IN_REPOSITORY",
            f"{cwd!r} is not inside a git working tree",
            "run 'plangate hookd' inside the repository whose hooks it should answer",
        )
    directory = socket_dir(env)
    if directory is None:
        raise EnvironmentFailure(
            "HOOKD_DIRECTORY_UNSAFE",
            "neither XDG_RUNTIME_DIR, XDG_CACHE_HOME nor HOME names an absolute directory",
            "set XDG_RUNTIME_DIR (or HOME) for the user running the helper",
        )
    if inside(directory, root):
        raise _unsafe(directory, f"lies inside the repository {root}")
    return Location(root, directory, socket_name(root))


def _unsafe(directory: str, why: str) -> EnvironmentFailure:
    return EnvironmentFailure(
        "HOOKD_DIRECTORY_UNSAFE",
        f"the helper's socket directory {directory} {why}",
        "it must be a directory (not a link) owned by you with mode 0700, in a parent "
        "only you or root can write; fix or remove it",
    )


def open_directory(location: Location, *, create: bool) -> int:
    """A verified ``O_NOFOLLOW`` handle on the socket directory (created 0700 if asked)."""
    uid = os.getuid()
    if create:
        parent = os.path.dirname(location.directory)
        try:
            os.makedirs(parent, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise _unsafe(location.directory, f"cannot be created: {exc.strerror}") from None
        try:
            os.mkdir(location.directory, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise _unsafe(location.directory, f"cannot be created: {exc.strerror}") from None
    fd = trusted_dir_fd(location.directory, uid=uid)
    if fd is None:
        raise _unsafe(location.directory, "failed the owner/mode/link checks")
    return fd


def _git_identity(root: str) -> tuple[int, int, int] | None:
    """``.git`` as the helper first saw it: device, inode and file type (not its contents:
    a commit changes those, a re-clone or removal changes this)."""
    try:
        info = os.lstat(os.path.join(root, ".git"))
    except OSError:
        return None
    return (info.st_dev, info.st_ino, stat.S_IFMT(info.st_mode))


def warm_up() -> None:
    """Import the decision code and build the shell parser once."""
    import importlib

    for module in WARM_MODULES:
        importlib.import_module(module)
    from plangate.hooks.shell import analyse

    analyse("true > /dev/null")


@contextmanager
def client_context(env: Mapping[str, str], cwd: str) -> Iterator[None]:
    """The client's environment and working directory for one decision, then the helper's."""
    saved = dict(os.environ)
    try:
        home = os.getcwd()
    except OSError:
        home = "/"
    os.environ.clear()
    os.environ.update(env)
    try:
        os.chdir(cwd)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        try:
            os.chdir(home)
        except OSError:
            os.chdir("/")


def _decode_env(blob: bytes) -> dict[str, str] | None:
    env: dict[str, str] = {}
    if not blob:
        return env
    for item in blob.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if not sep or not key:
            return None
        env[os.fsdecode(key)] = os.fsdecode(value)
    return env


def _encode(text: str, spec: bytes) -> bytes:
    encoding, _, errors = spec.decode("ascii", "replace").partition(":")
    return text.encode(encoding or "utf-8", errors or "strict")


class Helper:
    """One listening helper: its socket, its stop conditions, its counters."""

    def __init__(self, location: Location, idle: float) -> None:
        self.location = location
        self.idle = idle
        self.digest = package_digest()
        self.git = _git_identity(location.root)
        self.started = time.time()
        self.requests = 0
        self.abandoned = 0
        self.last = time.monotonic()
        self.stopping = ""
        self.dir_fd = -1
        self.lock_fd = -1
        self.sock: socket.socket | None = None
        self.inode = 0

    # -- life cycle -------------------------------------------------------------------

    def bind(self) -> None:
        """Take the lock, replace a stale socket, bind and listen (mode 0600)."""
        import fcntl

        os.umask(0o077)
        self.dir_fd = open_directory(self.location, create=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            self.lock_fd = os.open(self.location.lock_name, flags, 0o600, dir_fd=self.dir_fd)
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputRejected(
                "HOOKD_ALREADY_RUNNING",
                f"a helper already serves {self.location.root}",
                "'plangate hookd status' shows it; 'plangate hookd stop' stops it",
            ) from None
        except OSError as exc:
            raise _unsafe(self.location.directory, f"lock: {exc.strerror}") from None
        with suppress(FileNotFoundError):
            os.unlink(self.location.name, dir_fd=self.dir_fd)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(socket_address(self.dir_fd, self.location.directory, self.location.name))
        os.chmod(self.location.name, 0o600, dir_fd=self.dir_fd)
        sock.listen(64)
        self.sock = sock
        info = os.stat(self.location.name, dir_fd=self.dir_fd, follow_symlinks=False)
        self.inode = info.st_ino
        os.ftruncate(self.lock_fd, 0)
        os.write(self.lock_fd, f"{os.getpid()}\n".encode())

    def close(self) -> None:
        """Remove the socket (when it still is this helper's) and release the lock."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.dir_fd >= 0:
            try:
                info = os.stat(self.location.name, dir_fd=self.dir_fd, follow_symlinks=False)
                if info.st_ino == self.inode:
                    os.unlink(self.location.name, dir_fd=self.dir_fd)
            except OSError:
                pass
            os.close(self.dir_fd)
            self.dir_fd = -1
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1

    def stop_reason(self, *, package: bool = True) -> str:
        """Why the helper must stop now (``""``: it may go on). ``package``: also
        recompute the package digest (each request does it in :meth:`handle`)."""
        if self.stopping:
            return self.stopping
        if time.monotonic() - self.last > self.idle:
            return "idle"
        if _git_identity(self.location.root) != self.git:
            return "the repository's .git changed"
        if package and package_digest() != self.digest:
            return "the installed package changed"
        try:
            info = os.stat(self.location.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except OSError:
            return "its socket was removed"
        if info.st_ino != self.inode:
            return "its socket was replaced"
        return ""

    def serve(self) -> str:
        """Answer requests until a stop condition holds; return it."""
        assert self.sock is not None  # noqa: S101 -- bind() ran
        self.sock.settimeout(POLL_SECONDS)
        polled = True
        while True:
            reason = self.stop_reason(package=polled)
            if reason:
                return reason
            try:
                conn, _addr = self.sock.accept()
            except (TimeoutError, InterruptedError):
                polled = True
                continue
            polled = False
            try:
                self.handle(conn)
            except Exception:  # noqa: BLE001, S110 -- one bad request never ends the helper
                pass  # the client gets no answer and decides in-process
            finally:
                conn.close()
            self.last = time.monotonic()

    # -- one request ------------------------------------------------------------------

    def handle(self, conn: socket.socket) -> None:
        """Read one request, check it, answer it (or close without a word)."""
        if peer_uid(conn) != os.getuid():
            return
        # One deadline for the whole request, not per read: a client that sends a byte
        # now and then must not hold the helper (it serves one request at a time).
        deadline = time.monotonic() + REQUEST_TIMEOUT
        chunks: list[bytes] = []
        total = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            conn.settimeout(left)
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_ANSWER_BYTES:
                return
            chunks.append(chunk)
        fields = unframe(b"".join(chunks), REQUEST_FIELDS)
        if fields is None:
            return
        host, root, package, cwd, env_blob, out_spec, err_spec, payload = fields
        payload_digest = _sha256_hex(payload).encode()
        if host in (STATUS, STOP):
            if host == STOP:
                self.stopping = "stopped on request"
            conn.sendall(self._answer(b"answer", payload_digest, 0, self.status_json(), ""))
            return
        refusal = self._refusal(host, root, package, env_blob)
        env = _decode_env(env_blob)
        if refusal or env is None:
            conn.sendall(self._answer(b"refuse", payload_digest, 2, "", refusal or "environment"))
            return
        if client_gone(conn):
            # The client stopped waiting (its deadline passed while this request was
            # queued) and decides in-process: deciding here too would record the call twice.
            self.abandoned += 1
            return
        from plangate.hooks.entry import run_host

        self.requests += 1
        try:
            with client_context(env, os.fsdecode(cwd)):
                output = run_host(host.decode(), payload, Path(os.fsdecode(cwd)), env)
            out = _encode(output.stdout, out_spec)
            err = _encode(output.stderr, err_spec)
        except (OSError, UnicodeError, LookupError, ValueError) as exc:
            conn.sendall(self._answer(b"refuse", payload_digest, 2, "", str(exc)))
            return
        conn.sendall(
            frame([b"answer", self.digest.encode(), payload_digest, b"%d" % output.exit_code,
                   out, err])
        )

    def _refusal(self, host: bytes, root: bytes, package: bytes, env_blob: bytes) -> str:
        if host.decode("ascii", "replace") not in AGENT_HOSTS:
            return "not an agent host"
        if os.fsdecode(root) != self.location.root:
            return "another repository"
        if package.decode("ascii", "replace") != self.digest:
            return "another package digest"
        if package_digest() != self.digest:
            self.stopping = "the installed package changed"
            return "the installed package changed"
        if _git_identity(self.location.root) != self.git:
            self.stopping = "the repository's .git changed"
            return "the repository's .git changed"
        if any(item.startswith(BOX_ENV.encode() + b"=") for item in env_blob.split(b"\0")):
            return "inside exec's isolated run"
        return ""

    def _answer(self, status: bytes, payload_digest: bytes, code: int, out: str, err: str) -> bytes:
        return frame([status, self.digest.encode(), payload_digest, b"%d" % code,
                      out.encode(), err.encode()])

    def status_json(self) -> str:
        """What ``plangate hookd status`` prints about this helper."""
        return json.dumps(
            {
                "pid": os.getpid(),
                "root": self.location.root,
                "socket": self.location.path,
                "package_digest": self.digest,
                "started": int(self.started),
                "requests": self.requests,
                "abandoned": self.abandoned,
                "cache_hits": _cache_hits(),
                "idle_seconds": self.idle,
            },
            sort_keys=True,
        )


def client_gone(conn: socket.socket) -> bool:
    """True when the client has closed its end: it gave up waiting for this answer.

    The client shuts down only its sending side after the request, so a hang-up
    (both sides shut) means it closed the socket, which it does only when it stops
    waiting and decides in-process.
    """
    import select

    poller = select.poll()
    poller.register(conn.fileno(), select.POLLHUP)
    return any(events & (select.POLLHUP | select.POLLERR) for _fd, events in poller.poll(0))


def _cache_hits() -> int:
    from plangate.hooks import hookd_cache

    return hookd_cache.hits()


def _sha256_hex(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def run(location: Location, *, idle: float, ready: Any = None) -> str:
    """Serve in this process until a stop condition; return why it stopped.

    ``ready`` (a text stream) gets one line ``ready PID SOCKET`` once the socket
    listens; standard output and error are then pointed at ``/dev/null``.
    """
    warm_up()
    from plangate.hooks import hookd_cache

    hookd_cache.install()
    helper = Helper(location, idle)

    def _on_signal(signum: int, _frame: object) -> None:
        helper.stopping = f"signal {signum}"

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _on_signal)
    try:
        helper.bind()
        if ready is not None:
            ready.write(f"ready {os.getpid()} {location.path}\n")
            ready.flush()
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.close(null)
        return helper.serve()
    finally:
        helper.close()


class Probe(NamedTuple):
    """What a client would see of the helper of one repository."""

    location: Location
    directory_ok: bool
    socket_ok: bool
    socket_owner: int | None
    socket_mode: int | None
    status: dict[str, Any] | None


def probe(location: Location, command: bytes = STATUS) -> Probe:
    """Check the directory and socket as a client does, then ask ``command``."""
    uid = os.getuid()
    owner: int | None = None
    mode: int | None = None
    try:
        info = os.lstat(location.path)
        owner, mode = info.st_uid, stat.S_IMODE(info.st_mode)
    except OSError:
        pass
    fd = trusted_dir_fd(location.directory, uid=uid)
    if fd is None:
        return Probe(location, False, False, owner, mode, None)
    try:
        if not socket_trusted(fd, location.name, uid=uid):
            return Probe(location, True, False, owner, mode, None)
        request = frame([command, os.fsencode(location.root), b"", b"/",
                         environment_field({}), b"utf-8:strict", b"utf-8:strict", b""])
        answer = exchange(fd, location.directory, location.name, request, uid=uid,
                          timeout=5.0)
    finally:
        os.close(fd)
    fields = unframe(answer, ANSWER_FIELDS) if answer is not None else None
    status: dict[str, Any] | None = None
    if fields is not None and fields[0] == b"answer":
        try:
            loaded = json.loads(fields[4])
        except ValueError:
            loaded = None
        status = loaded if isinstance(loaded, dict) else None
    return Probe(location, True, True, owner, mode, status)


def describe(location: Location) -> dict[str, Any]:
    """The helper's state for ``hookd status`` and ``doctor``."""
    found = probe(location)
    installed = package_digest()
    status = found.status
    return {
        "running": status is not None,
        "socket": location.path,
        "directory_trusted": found.directory_ok,
        "socket_trusted": found.socket_ok,
        "socket_owner": found.socket_owner,
        "socket_mode": None if found.socket_mode is None else f"{found.socket_mode:04o}",
        "pid": status.get("pid") if status else None,
        "package_digest": status.get("package_digest") if status else None,
        "installed_package_digest": installed,
        "same_package": status is not None and status.get("package_digest") == installed,
        "requests": status.get("requests") if status else None,
        "abandoned": status.get("abandoned") if status else None,
        "cache_hits": status.get("cache_hits") if status else None,
    }


BOOT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from plangate.cli.main import entrypoint; entrypoint()"
)
"""The detached helper runs this very package (its parent directory first on ``sys.path``)."""


def start(location: Location, *, idle: float, wait: float = 30.0) -> dict[str, Any]:
    """Start a detached helper for ``location`` (or report the running one)."""
    import select
    import subprocess

    current = describe(location)
    if current["running"] and current["same_package"]:
        return {**current, "started": False}
    if current["running"]:
        stop(location)
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    argv = [sys.executable, "-P", "-c", BOOT, src, "hookd", "run",
            "--idle-seconds", repr(idle)]
    proc = subprocess.Popen(
        argv, cwd=location.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
    )
    assert proc.stdout is not None  # noqa: S101 -- stdout=PIPE
    deadline = time.monotonic() + wait
    text = b""
    while time.monotonic() < deadline and b"\n" not in text:
        ready, _w, _x = select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            break
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        text += chunk
    proc.stdout.close()
    if not text.startswith(b"ready "):
        if proc.poll() is None:
            proc.terminate()
        detail = text.decode("utf-8", "replace").strip() or "no answer in time"
        raise EnvironmentFailure(
            "HOOKD_START_FAILED",
            f"the helper did not start: {detail}",
            "run 'plangate hookd run' in the repository to see why; hooks keep deciding "
            "in-process meanwhile",
        )
    return {**describe(location), "started": True}


DEFAULT_IDLE_SECONDS = 300.0
"""How long a helper started by ``hookd start`` or ``setup --hookd`` waits for a request."""


def start_helper(
    cwd: str, env: Mapping[str, str], *, idle: float = DEFAULT_IDLE_SECONDS, native: bool = True
) -> dict[str, Any]:
    """Start the helper of the repository holding ``cwd`` (or report the running one) and,
    unless ``native`` is false, link the native client beside this installation's
    ``plangate-hook`` launcher: what ``plangate hookd start`` and ``plangate setup --hookd``
    do. The state of :func:`describe`, with ``started`` and ``launcher_native``."""
    location = locate(cwd, env)
    state = start(location, idle=idle)
    if native:
        # Only a start links; the helper's own process never loads the builder.
        from plangate.hooks.native_build import link_beside_launcher

        linked = link_beside_launcher(location.root, env)
        state["launcher_native"] = {"path": linked.path, "code": linked.code,
                                    "detail": linked.detail}
    return state


def stop(location: Location, *, wait: float = 10.0) -> bool:
    """Ask the helper to stop and wait until its socket is gone; False: none was running."""
    found = probe(location, STOP)
    if found.status is None:
        return False
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and os.path.lexists(location.path):
        time.sleep(0.05)
    return True
