"""The bubblewrap backend's argument list (pure): a policy becomes one ``bwrap`` command line.

The box has its own user, pid, IPC, UTS and cgroup namespaces, no capabilities
(``--cap-drop ALL``, also when PlanGate runs as root), no way to create further
user namespaces (``--disable-userns``), a new session (``--new-session``: the
command cannot push keystrokes into the caller's terminal) and dies with
PlanGate (``--die-with-parent``: when PlanGate is killed, the pid namespace's
first process gets SIGKILL and the kernel ends every other process in it).
With the network off it also has its own network namespace (loopback only).

Mounts, in this order (a later mount covers an earlier one):

1. a fresh ``/proc``, a minimal ``/dev`` and a private ``/tmp``, then every
   visible mount read-only (a visible directory under ``/tmp`` stays visible);
2. every writable mount;
3. every read-only path inside a writable mount, bound again read-only;
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
    argv = [bwrap, *NAMESPACE_ARGS]
    if not policy.network:
        argv.append("--unshare-net")
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108 -- the box's own
    for mount in policy.visible:
        argv += ["--ro-bind", mount.source, mount.target]
    for mount in policy.writable:
        argv += ["--bind", mount.source, mount.target]
    for mount in policy.read_only:
        argv += ["--ro-bind", mount.source, mount.target]
    for hidden in policy.hidden:
        if hidden.kind == "missing" or not _shown(policy, hidden.target):
            continue
        if hidden.kind == "dir":
            argv += ["--tmpfs", hidden.target, "--remount-ro", hidden.target]
        else:
            argv += ["--ro-bind", "/dev/null", hidden.target]
    argv += ["--chdir", policy.cwd, "--", *command]
    return argv
