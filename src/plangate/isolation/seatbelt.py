"""The Seatbelt backend (macOS ``sandbox-exec``): the profile and the argument list (pure).

Seatbelt has no mount or pid namespace, so a box on macOS differs from a
bubblewrap box:

- paths keep their host location (a mount whose source and target differ is
  refused: ``ISOLATION_POLICY_INVALID``); the workspace is seen at its own path;
- hidden paths are denied by rule (reading, writing and even ``stat`` fail
  with "operation not permitted"), they are not replaced by empty ones;
- the network is denied by rule (``network*``, unix sockets included), not by
  a separate namespace; with network access only the egress proxy's loopback
  port is allowed (``remote ip "localhost:PORT"``), and the proxy decides the rest;
- the process tree is ended by killing the process group PlanGate created:
  a process that leaves the group (``setsid``) survives a timeout.

The profile denies by default and allows reads of visible paths, reads and
writes of writable paths, then denies writes under read-only paths and
everything under hidden paths (in Seatbelt the later rule wins). Paths never
appear in the profile text: each is a ``-D`` parameter (``(param "W0")``), so
no path can change the profile's meaning, whatever characters it holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from plangate.errors import EnvironmentFailure
from plangate.isolation.policy import POLICY_INVALID, SandboxPolicy

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

_BASE = (
    "(version 1)",
    "(deny default)",
    "(allow process-exec)",
    "(allow process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-shm)",
    '(allow file-read-metadata (literal "/"))',
    '(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero")'
    ' (literal "/dev/random") (literal "/dev/urandom") (literal "/dev/tty"))',
)


def _refuse_remapped(policy: SandboxPolicy) -> None:
    for mount in (*policy.visible, *policy.writable, *policy.read_only):
        if mount.source != mount.target:
            raise EnvironmentFailure(
                POLICY_INVALID,
                f"Seatbelt cannot show {mount.source} at {mount.target}",
                "build the policy with paths at their own location on macOS",
            )


def seatbelt_profile(policy: SandboxPolicy) -> tuple[str, list[tuple[str, str]]]:
    """The profile text and its ``(name, path)`` parameters for ``policy``."""
    _refuse_remapped(policy)
    lines = list(_BASE)
    params: list[tuple[str, str]] = []

    def param(prefix: str, path: str) -> str:
        name = f"{prefix}{len([p for p in params if p[0].startswith(prefix)])}"
        params.append((name, path))
        return f'(param "{name}")'

    for mount in policy.visible:
        lines.append(f"(allow file-read* (subpath {param('V', mount.target)}))")
    for mount in policy.writable:
        lines.append(f"(allow file-read* file-write* (subpath {param('W', mount.target)}))")
    for mount in policy.read_only:
        lines.append(f"(deny file-write* (subpath {param('R', mount.target)}))")
    for hidden in policy.hidden:
        if hidden.kind == "missing":
            continue
        matcher = "subpath" if hidden.kind == "dir" else "literal"
        lines.append(f"(deny file-read* file-write* ({matcher} {param('H', hidden.target)}))")
    lines.append("(deny network*)")
    if policy.proxy is not None:  # a port is a number: it cannot change the profile's meaning
        port = int(policy.proxy.port)
        lines.append(f'(allow network-outbound (remote ip "localhost:{port}"))')
    return "\n".join(lines) + "\n", params


def seatbelt_argv(policy: SandboxPolicy, command: Sequence[str]) -> list[str]:
    """The full ``sandbox-exec`` argument list running ``command`` under ``policy``."""
    profile, params = seatbelt_profile(policy)
    argv = [SANDBOX_EXEC, "-p", profile]
    for name, path in params:
        argv += ["-D", f"{name}={path}"]
    return [*argv, *command]
