"""Which sandbox backend works here, and why the others do not (probing IO, pure choice).

Backends, by platform:

- **bubblewrap** (Linux): the ``bwrap`` binary of the distribution's
  ``bubblewrap`` package. It is looked for only in fixed system directories
  (:data:`plangate.sysbin.SYSTEM_BIN_DIRS`), never through ``PATH``, and must be a regular file
  owned by root that nobody else can write: a ``bwrap`` an agent could put in
  front of the real one would run the command without a box. It is then
  started once, with the namespace options every box uses, to prove that
  this kernel lets it create them (Ubuntu 24.04 restricts unprivileged user
  namespaces through AppArmor; Debian's ``kernel.unprivileged_userns_clone=0``
  and ``user.max_user_namespaces=0`` forbid them).
- **Seatbelt** (macOS): ``/usr/bin/sandbox-exec``, started once with a
  trivial profile.
- every other platform: no backend (``SANDBOX_UNAVAILABLE``).

Every backend is one row of :data:`BACKENDS` (its probe, how a policy becomes
its command line, and what it can do); callers ask a :class:`Backend` what it
can do and never compare names. Probes run at most once per process.
:func:`choose` (pure) picks the first available backend; nothing is ever run
without one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from plangate.errors import EnvironmentFailure
from plangate.isolation.bwrap import NAMESPACE_ARGS, bwrap_argv
from plangate.isolation.policy import SandboxPolicy
from plangate.isolation.seatbelt import SANDBOX_EXEC, seatbelt_argv
from plangate.records import NamedTuple
from plangate.sysbin import find_system_binary, trusted_binary
from plangate.verdict import Reason

SANDBOX_UNAVAILABLE = "SANDBOX_UNAVAILABLE"

BUBBLEWRAP = "bubblewrap"
SEATBELT = "seatbelt"


PROBE_TIMEOUT_SECONDS = 20

_TRUE_CANDIDATES = ("/usr/bin/true", "/bin/true")


class BackendStatus(NamedTuple):
    """One backend on this machine: whether it works, and why (not)."""

    name: str
    available: bool
    detail: str
    path: str | None = None

    def to_json(self) -> dict[str, object]:
        """JSON form."""
        return {
            "backend": self.name,
            "available": self.available,
            "detail": self.detail,
            "path": self.path,
        }


class Backend(NamedTuple):
    """A backend that works here."""

    name: str
    path: str

    @property
    def kind(self) -> BackendKind:
        """This backend's row of :data:`BACKENDS`."""
        return next(k for k in BACKENDS if k.name == self.name)

    @property
    def remaps(self) -> bool:
        """True when a mount can show a host directory at another path."""
        return self.kind.remaps

    @property
    def private_network(self) -> bool:
        """True when the box has a network namespace of its own (the egress proxy is then a
        unix socket bound into it, behind a bridge; otherwise a loopback port allowed by
        rule)."""
        return self.kind.private_network

    def argv(self, policy: SandboxPolicy, command: Sequence[str]) -> list[str]:
        """The argument list that runs ``command`` in a box of this backend under ``policy``."""
        return self.kind.argv(self.path, policy, command)


def choose(statuses: tuple[BackendStatus, ...]) -> Backend | Reason:
    """The first available backend, or the refusal naming why none works (pure)."""
    for status in statuses:
        if status.available and status.path is not None:
            return Backend(status.name, status.path)
    why = "; ".join(f"{s.name}: {s.detail}" for s in statuses) or "no backend is known"
    return Reason(
        SANDBOX_UNAVAILABLE,
        f"no sandbox backend works here ({why})",
        "install bubblewrap (Linux) and allow unprivileged user namespaces; see docs/isolation.md",
    )


def _find_bwrap() -> tuple[str | None, str]:
    path, problem = find_system_binary("bwrap")
    if path is None and "is not installed" in problem:
        problem = problem.replace(
            "bwrap is not installed", "bwrap is not installed (install the 'bubblewrap' package)"
        )
    return path, problem


def _read_sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", name).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None


def userns_hint() -> str:
    """What this kernel says about unprivileged user namespaces, for a refusal."""
    if _read_sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (
            "AppArmor restricts unprivileged user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 24.04 and later): "
            "allow them for bwrap with an AppArmor profile, see docs/isolation.md"
        )
    if _read_sysctl("kernel/unprivileged_userns_clone") == "0":
        return "unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0)"
    if _read_sysctl("user/max_user_namespaces") == "0":
        return "user namespaces are off (user.max_user_namespaces=0)"
    return ""


def _run_probe(argv: list[str]) -> str | None:
    """Run a probe; None when it exited 0, else what went wrong."""
    import subprocess

    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"did not finish within {PROBE_TIMEOUT_SECONDS}s"
    except OSError as exc:
        return exc.strerror or str(exc)
    if proc.returncode == 0:
        return None
    first = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"exit {proc.returncode}" + (f": {first[0][:200]}" if first else "")


def probe_bubblewrap(platform: str = sys.platform) -> BackendStatus:
    """Is bubblewrap usable here? (finds it, then starts one empty box)."""
    if not platform.startswith("linux"):
        return BackendStatus(BUBBLEWRAP, False, f"Linux only (this is {platform})")
    path, problem = _find_bwrap()
    if path is None:
        return BackendStatus(BUBBLEWRAP, False, problem)
    true = next((t for t in _TRUE_CANDIDATES if os.access(t, os.X_OK)), sys.executable)
    argv = [
        path,
        *NAMESPACE_ARGS,
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        true,
        *([] if true != sys.executable else ["-c", ""]),
    ]
    failure = _run_probe(argv)
    if failure is not None:
        hint = userns_hint()
        return BackendStatus(
            BUBBLEWRAP,
            False,
            f"{path} cannot create a box: {failure}" + (f" ({hint})" if hint else ""),
            path,
        )
    return BackendStatus(BUBBLEWRAP, True, f"{path} creates user, pid and network namespaces", path)


def probe_seatbelt(platform: str = sys.platform) -> BackendStatus:
    """Is Seatbelt usable here? (starts ``sandbox-exec`` once with a trivial profile)."""
    if platform != "darwin":
        return BackendStatus(SEATBELT, False, f"macOS only (this is {platform})")
    problem = trusted_binary(SANDBOX_EXEC)
    if problem is not None:
        return BackendStatus(SEATBELT, False, problem)
    failure = _run_probe([SANDBOX_EXEC, "-p", "(version 1)(allow default)", "/usr/bin/true"])
    if failure is not None:
        return BackendStatus(SEATBELT, False, f"sandbox-exec fails: {failure}", SANDBOX_EXEC)
    return BackendStatus(SEATBELT, True, "sandbox-exec applies a profile", SANDBOX_EXEC)


class BackendKind(NamedTuple):
    """One sandbox backend: how to probe it, how a policy becomes its command line, and
    what its boxes can do."""

    name: str
    probe: Callable[[str], BackendStatus]
    argv: Callable[[str, SandboxPolicy, Sequence[str]], list[str]]
    remaps: bool
    private_network: bool


BACKENDS: tuple[BackendKind, ...] = (
    BackendKind(BUBBLEWRAP, probe_bubblewrap, bwrap_argv, remaps=True, private_network=True),
    BackendKind(
        SEATBELT,
        probe_seatbelt,
        lambda _path, policy, command: seatbelt_argv(policy, command),
        remaps=False,
        private_network=False,
    ),
)
"""Every backend, in order of preference."""

_CACHE: dict[str, tuple[BackendStatus, ...]] = {}


def probe_all() -> tuple[BackendStatus, ...]:
    """Every backend's status on this machine (probed once per process)."""
    if sys.platform not in _CACHE:
        _CACHE[sys.platform] = tuple(kind.probe(sys.platform) for kind in BACKENDS)
    return _CACHE[sys.platform]


def select_backend() -> Backend:
    """The backend to use here; raises ``SANDBOX_UNAVAILABLE`` when none works."""
    chosen = choose(probe_all())
    if isinstance(chosen, Reason):
        raise EnvironmentFailure(chosen.code, chosen.message, chosen.hint)
    return chosen
