"""What a box lets its command see, write and use: the sandbox policy as data (pure).

A :class:`SandboxPolicy` names, as absolute paths *inside the box*:

- ``visible``: mounts the command may read (read-only);
- ``writable``: mounts the command may read and write;
- ``read_only``: paths inside a writable mount that stay read-only (the plan
  package inside a workspace, say);
- ``hidden``: paths that are not there at all inside the box (``~/.ssh``, the
  ledger, the user's repository and its ``.git``); an empty directory or a
  placeholder that cannot be opened takes their place;

and ``network``: off (loopback only) or through PlanGate's egress proxy
(``proxy``), never the host's network; the resource :class:`Limits` and the environment
the command receives (nothing else is inherited).

A mount has a ``source`` (the host path) and a ``target`` (the path inside the
box); they differ when a backend can place a directory elsewhere (bubblewrap
places the workspace over the repository's own path). :func:`check_policy`
is the table of rules every backend applies before it builds a box; a policy
with a problem is refused (``ISOLATION_POLICY_INVALID``), never narrowed or
widened silently.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping

from plangate.records import NamedTuple
from plangate.verdict import Reason

POLICY_INVALID = "ISOLATION_POLICY_INVALID"


class Limits(NamedTuple):
    """Resource limits of one box; ``None`` means "not limited".

    - ``cpu_seconds``: CPU time of each process (``RLIMIT_CPU``);
    - ``memory_bytes``: address space of each process (``RLIMIT_AS``);
    - ``file_size_bytes``: the largest file a process may write (``RLIMIT_FSIZE``);
    - ``processes``: how many more processes the user may start while the box
      runs (``RLIMIT_NPROC``, set to the user's current count plus this number);
    - ``output_bytes``: stdout and stderr together, when they are captured; past
      it the whole box is killed;
    - ``wall_seconds``: real time; past it the whole box is killed.
    """

    cpu_seconds: int | None = None
    memory_bytes: int | None = None
    file_size_bytes: int | None = None
    processes: int | None = None
    output_bytes: int | None = None
    wall_seconds: float | None = None


class Mount(NamedTuple):
    """A host path (``source``) shown at ``target`` inside the box."""

    source: str
    target: str

    @classmethod
    def same(cls, path: str) -> Mount:
        """A mount shown at its own path."""
        return cls(path, path)


class Hidden(NamedTuple):
    """A path that must not exist inside the box; ``kind`` is what stands in its place.

    ``kind`` is ``"dir"`` (an empty, read-only directory), ``"file"`` (a
    placeholder that cannot be opened, also used for sockets) or ``"missing"``
    (nothing is there on the host either; nothing to mask).
    """

    target: str
    kind: str


HIDDEN_KINDS = ("dir", "file", "missing")


class ProxyAccess(NamedTuple):
    """How a box reaches PlanGate's egress proxy (:mod:`plangate.isolation.proxy`).

    ``socket``: the host path of the proxy's unix socket (a backend with its own
    network namespace binds it into the box and starts the bridge with
    ``python``); ``port``: the loopback port the box's programs connect to.
    """

    socket: str
    port: int
    python: str = ""


class SandboxPolicy(NamedTuple):
    """Everything a backend needs to build one box (see the module docstring)."""

    visible: tuple[Mount, ...]
    writable: tuple[Mount, ...]
    read_only: tuple[Mount, ...]
    hidden: tuple[Hidden, ...]
    network: bool
    limits: Limits
    env: tuple[tuple[str, str], ...]
    cwd: str
    proxy: ProxyAccess | None = None
    """The egress proxy, the box's only way out (``network`` must be true); None: no network."""

    @property
    def env_map(self) -> dict[str, str]:
        """The command's environment as a dict."""
        return dict(self.env)


def _is_clean_absolute(path: str) -> bool:
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return False
    return "//" not in path and posixpath.normpath(path) == path


def path_within(path: str, parent: str) -> bool:
    """``path`` is ``parent`` or lies below it (both clean absolute paths)."""
    return parent in (path, "/") or path.startswith(parent.rstrip("/") + "/")


def _paths_clean(policy: SandboxPolicy) -> tuple[Reason, ...]:
    bad: list[str] = []
    for mount in (*policy.visible, *policy.writable, *policy.read_only):
        bad += [p for p in (mount.source, mount.target) if not _is_clean_absolute(p)]
    bad += [h.target for h in policy.hidden if not _is_clean_absolute(h.target)]
    if not _is_clean_absolute(policy.cwd):
        bad.append(policy.cwd)
    if not bad:
        return ()
    named = ", ".join(map(repr, bad[:4]))
    return (
        Reason(
            POLICY_INVALID,
            f"{len(bad)} path(s) are not clean absolute paths: {named}",
            "give absolute paths without '..', '.', '//' or control characters",
        ),
    )


def _hidden_kinds_known(policy: SandboxPolicy) -> tuple[Reason, ...]:
    unknown = [h for h in policy.hidden if h.kind not in HIDDEN_KINDS]
    if not unknown:
        return ()
    return (
        Reason(
            POLICY_INVALID,
            f"unknown hidden kind {unknown[0].kind!r}",
            f"use one of {', '.join(HIDDEN_KINDS)}",
        ),
    )


def _writable_not_over_hidden(policy: SandboxPolicy) -> tuple[Reason, ...]:
    """A writable mount may not be, or contain, a hidden path nor be the root itself.

    bubblewrap would still mask the hidden path, but a writable parent of a
    secret is a configuration mistake worth refusing (and Seatbelt's rule order
    must never be what keeps a secret hidden).
    """
    bad = [
        m.target
        for m in policy.writable
        if m.target == "/" or any(path_within(h.target, m.target) for h in policy.hidden)
    ]
    if not bad:
        return ()
    return (
        Reason(
            POLICY_INVALID,
            f"writable path {bad[0]} is the root or contains a hidden path",
            "make a narrower directory writable",
        ),
    )


def _read_only_inside_writable(policy: SandboxPolicy) -> tuple[Reason, ...]:
    stray = [
        m.target
        for m in policy.read_only
        if not any(path_within(m.target, w.target) for w in policy.writable)
    ]
    if not stray:
        return ()
    return (
        Reason(
            POLICY_INVALID,
            f"read-only path {stray[0]} lies outside every writable mount",
            "list it as visible instead",
        ),
    )


def _limits_positive(policy: SandboxPolicy) -> tuple[Reason, ...]:
    bad = [
        name
        for name, value in policy.limits._asdict().items()
        if value is not None and (isinstance(value, bool) or not value > 0)
    ]
    if not bad:
        return ()
    return (
        Reason(
            POLICY_INVALID,
            f"limit(s) not positive: {', '.join(bad)}",
            "give a positive number, or leave the limit out",
        ),
    )


def _env_names_valid(policy: SandboxPolicy) -> tuple[Reason, ...]:
    bad = [
        name
        for name, value in policy.env
        if not name or "=" in name or "\x00" in name or "\x00" in value
    ]
    if not bad:
        return ()
    return (
        Reason(
            POLICY_INVALID, f"bad environment entry {bad[0]!r}", "variable names without '=' or NUL"
        ),
    )


def _network_only_through_proxy(policy: SandboxPolicy) -> tuple[Reason, ...]:
    """A box reaches the network through the proxy or not at all."""
    if policy.network == (policy.proxy is not None) and (
        policy.proxy is None or 0 < policy.proxy.port < 65536
    ):
        return ()
    return (
        Reason(
            POLICY_INVALID,
            "network access without PlanGate's egress proxy (or a proxy without network)",
            "start the egress proxy and give the box its address, or turn the network off",
        ),
    )


RULES: tuple[tuple[str, Callable[[SandboxPolicy], tuple[Reason, ...]]], ...] = (
    ("paths_clean", _paths_clean),
    ("hidden_kinds_known", _hidden_kinds_known),
    ("writable_not_over_hidden", _writable_not_over_hidden),
    ("read_only_inside_writable", _read_only_inside_writable),
    ("limits_positive", _limits_positive),
    ("env_names_valid", _env_names_valid),
    ("network_only_through_proxy", _network_only_through_proxy),
)
"""The policy rules in order; every failing rule is reported."""


def check_policy(policy: SandboxPolicy) -> tuple[Reason, ...]:
    """Every problem of ``policy`` (empty: the policy may be built)."""
    return tuple(reason for _, rule in RULES for reason in rule(policy))


# -- the environment ------------------------------------------------------------------

ENV_ALLOWED: tuple[str, ...] = (
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TZ",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "NO_COLOR",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
)
"""Variables a box receives from the caller's environment by default.

None names a host directory or a credential: ``XDG_*``, proxies, certificate
files, agent sockets and tokens pass only when named (``pass_env``)."""

ENV_ALLOWED_PREFIXES: tuple[str, ...] = ("LC_",)
"""Name prefixes a box receives by default (locale settings)."""


def allowed_env(
    env: Mapping[str, str],
    extra_names: tuple[str, ...] = (),
    fixed: Mapping[str, str] | None = None,
) -> tuple[tuple[str, str], ...]:
    """The caller's variables on the allowlist (plus ``extra_names``), then ``fixed``.

    Everything else (``SSH_AUTH_SOCK``, ``GIT_*``, ledger URLs, tokens not
    named) stays outside the box. The result is sorted by name.
    """
    names = set(ENV_ALLOWED) | set(extra_names)
    out = {k: v for k, v in env.items() if k in names or k.startswith(ENV_ALLOWED_PREFIXES)}
    out.update(fixed or {})
    return tuple(sorted(out.items()))
