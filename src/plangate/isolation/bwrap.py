"""The bubblewrap backend's argument list (pure): a policy becomes one ``bwrap`` command line.

The box has its own user, pid, IPC, UTS and cgroup namespaces, no capabilities
(``--cap-drop ALL``, also when PlanGate runs as root), no way to create further
user namespaces (``--disable-userns``), a new session (``--new-session``: the
command cannot push keystrokes into the caller's terminal) and dies with
PlanGate (``--die-with-parent``: when PlanGate is killed, the pid namespace's
first process gets SIGKILL and the kernel ends every other process in it).
It always has its own network namespace (loopback only; abstract unix sockets
of the host are per namespace, so none is reachable). With network access the
egress proxy's unix socket is bound at
:data:`~plangate.isolation.proxy.BOX_PROXY_SOCKET` and the command starts
behind the bridge (:func:`~plangate.isolation.proxy.bridge_argv`), which
listens on ``127.0.0.1`` inside the box.

Mounts, in this order (a later mount covers an earlier one):

1. a fresh ``/proc``, a minimal ``/dev`` and a private ``/tmp``, then every
   visible (read-only) and writable mount, outermost target first (a
   read-only toolchain inside the box's private home lands on top of it; a
   visible directory under ``/tmp`` stays visible);
2. every read-only path inside a writable mount, bound again read-only;
3. the proxy's socket, when the box has network access;
4. every hidden path: an empty read-only directory (``--tmpfs`` then
   ``--remount-ro``) or, for files and sockets, ``/dev/null`` on a ``nodev``
   mount (it cannot even be opened) in its place; a hidden path that no mount
   shows is left out (it is not there anyway).

The environment is not on the command line (``/proc/PID/cmdline`` is readable
by every local user): the runner passes the policy's environment, and only it,
when it starts ``bwrap``.
"""

from __future__ import annotations

from collections.abc import Sequence

from plangate.isolation.policy import SandboxPolicy, path_within
from plangate.isolation.proxy import BOX_PROXY_SOCKET, bridge_argv

NAMESPACE_ARGS: tuple[str, ...] = (
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
)
"""Namespace and privilege options of every box."""


def _shown(policy: SandboxPolicy, target: str) -> bool:
    return any(path_within(target, m.target) for m in (*policy.visible, *policy.writable))


def bwrap_argv(bwrap: str, policy: SandboxPolicy, command: Sequence[str]) -> list[str]:
    """The full ``bwrap`` argument list running ``command`` under ``policy``.

    The policy must have passed :func:`plangate.isolation.policy.check_policy`.
    """
    argv = [bwrap, *NAMESPACE_ARGS, "--unshare-net"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108 -- the box's own
    mounts = [("--ro-bind", m) for m in policy.visible] + [("--bind", m) for m in policy.writable]
    # Outermost first (stable): a mount inside another one is made after it, so it shows.
    for option, mount in sorted(mounts, key=lambda om: _depth(om[1].target)):
        argv += [option, mount.source, mount.target]
    for mount in policy.read_only:
        argv += ["--ro-bind", mount.source, mount.target]
    for hidden in policy.hidden:
        if hidden.kind == "missing" or not _shown(policy, hidden.target):
            continue
        if hidden.kind == "dir":
            argv += ["--tmpfs", hidden.target, "--remount-ro", hidden.target]
        else:
            argv += ["--ro-bind", "/dev/null", hidden.target]
    if policy.proxy is not None:
        argv += ["--ro-bind", policy.proxy.socket, BOX_PROXY_SOCKET]
        command = bridge_argv(policy.proxy, command)
    argv += ["--chdir", policy.cwd, "--", *command]
    return argv


def _depth(path: str) -> int:
    return 0 if path == "/" else path.count("/")
