"""The workspace of an isolated run: made from the approved commit, read back by PlanGate.

Layout, under the repository's ``.plangate/runs/<run id>/`` (ignored by git):

- ``workspace/``: the approved commit's tree, extracted (the only directory the
  command may write), with a fresh repository of its own (``workspace/.git``,
  one commit holding the approved tree) so that the agent's ``git diff``
  works; nothing links it back to the user's repository;
- ``state.git``: PlanGate's own bare repository, never shown in the box. It
  borrows the user's objects read-only (``objects/info/alternates``), so the
  approved commit is its parent without a copy, and holds what the run made.
  Its ``info/attributes`` turns off every filter, end-of-line conversion and
  ``ident`` expansion: files are extracted and recorded as raw bytes, and no
  filter program named by the workspace's own ``.gitattributes`` ever runs.

:func:`record_state` records the workspace as PlanGate sees it on disk
(committed or not, whatever the workspace's own ``.git`` says: it is never
read) as one commit on top of the approved commit. Every git call goes through
:class:`plangate.git.Git`, with hooks, fsmonitor and replacement objects off.

:func:`exec_policy` (pure) is what the box of ``plangate exec`` may see, write
and reach: see docs/isolation.md. What the box is granted is read from
``.plangate/isolation.toml`` by :mod:`plangate.isolation.config`.
"""

from __future__ import annotations

import posixpath
import secrets
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from plangate.errors import EnvironmentFailure
from plangate.git import Git, GitError
from plangate.hooks.hookd_client import socket_dir
from plangate.isolation.config import expand_home
from plangate.isolation.contract import (
    BOX_DIR,
    BOX_ENV,
    BOX_FACTS_NAME,
    BOX_LEDGER_ENV,
    BOX_LEDGER_NAME,
)
from plangate.isolation.policy import (
    Hidden,
    Limits,
    Mount,
    ProxyAccess,
    SandboxPolicy,
    allowed_env,
    path_within,
)
from plangate.isolation.proxy import proxy_env
from plangate.isolation.trees import RAW_ATTRIBUTES, scratch_repository
from plangate.layout import PLANGATE_DIR, WORKING_DIR
from plangate.records import NamedTuple

RUNS_DIR_RELPATH = ".plangate/runs"
"""Where isolated runs keep their workspace, PlanGate's record of it and refused patches."""

HOST_SECRETS: tuple[str, ...] = ("~/.ssh", "~/.gnupg", "~/.aws", "~/.config/gh")
"""Secrets hidden by rule where the box's home cannot be remapped (Seatbelt shows no host
home anyway; these are denied as well, so a read-only grant cannot reach them)."""

IDENTITY_NAME = "PlanGate exec"
IDENTITY_EMAIL = "plangate-exec@localhost"


class Workspace(NamedTuple):
    """One isolated run's directories and the commit it starts from."""

    run_id: str
    run_dir: Path
    tree: Path
    git_dir: Path
    approved: str

    def git(self) -> Git:
        """PlanGate's own repository of this run."""
        return Git(self.git_dir)


def new_run_id(task_id: str, at: str) -> str:
    """``TASK-0001-20250101T120000Z-1a2b3c4d``: the task, the start time and a random part."""
    stamp = "".join(c for c in at if c.isalnum())
    return f"{task_id}-{stamp}-{secrets.token_hex(4)}"


RUNS_GITIGNORE = b"# written by plangate: isolated runs are not source\n*\n"
"""``.plangate/runs/.gitignore``: every run's directory stays out of ``git status``."""


def _ignore_runs(root: Path) -> None:
    """Write ``.plangate/runs/.gitignore`` unless a file is already in its place.

    Parallel first runs all create it: a concurrent creator that wrote the same
    bytes is no failure (:func:`plangate.fsutil.create_if_absent_at`). Written
    relative to the verified directory, never through a link.
    """
    from plangate.fsutil import FileState, create_if_absent_at, open_verified_dir, read_at

    with open_verified_dir(root, RUNS_DIR_RELPATH, create=True) as runs:
        if read_at(runs, ".gitignore", len(RUNS_GITIGNORE)).state is FileState.MISSING:
            create_if_absent_at(runs, ".gitignore", RUNS_GITIGNORE)


class LeftOut(NamedTuple):
    """A path of the caller's working tree the run does not see: ``modified`` (tracked,
    changed or deleted since HEAD, staged or not) or ``untracked``."""

    path: str
    kind: str


def left_out_of_run(status: bytes, *, own: tuple[str, ...] = ()) -> list[LeftOut]:
    """The uncommitted and untracked paths of ``git status --porcelain=v1 -z --no-renames``.

    The workspace is made from the approved commit, so each of them stays out of
    the run. ``own`` names directories that are not the caller's work for this
    run (the task's own Plan Package and PlanGate's state, which the box shows
    read-only and a run may never change): paths below them are not listed.
    Ignored files are never listed.
    """
    out: list[LeftOut] = []
    for record in status.split(b"\x00"):
        if len(record) < 4:
            continue
        path = record[3:].decode("utf-8", "surrogateescape")
        if any(path == d or path.startswith(d + "/") for d in own):
            continue
        out.append(LeftOut(path, "untracked" if record[:2] == b"??" else "modified"))
    return sorted(out)


def caller_status(root: Path) -> bytes:
    """``git status`` of the caller's working tree, as :func:`left_out_of_run` reads it."""
    proc = Git(root).run(
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
    )
    return proc.stdout


def _wrap(exc: GitError, what: str) -> EnvironmentFailure:
    return EnvironmentFailure(
        "EXEC_WORKSPACE_FAILED",
        f"{what}: {exc.code}: {exc.message}",
        exc.hint or "check the repository, then retry",
    )


def commit_identity(root: Path) -> list[str]:
    """``-c user.name=... -c user.email=...`` from the repository's configuration (one git call).

    PlanGate's own commits of a run (its result, a partial apply) carry the
    repository's identity, or PlanGate's when none is configured."""
    proc = Git(root).run(
        ["config", "--null", "--get-regexp", r"^user\.(name|email)$"], ok_codes=(0, 1)
    )
    found: dict[str, str] = {}
    for item in proc.stdout.split(b"\x00"):
        key, _, value = item.decode("utf-8", "replace").partition("\n")
        if key and value.strip():
            found[key] = value.strip()  # the last one wins, as with --get
    out = []
    for key, fallback in (("user.name", IDENTITY_NAME), ("user.email", IDENTITY_EMAIL)):
        out += ["-c", f"{key}={found.get(key, fallback)}"]
    return out


def create_workspace(root: Path, task_id: str, approved: str, at: str) -> Workspace:
    """Extract ``approved`` into a fresh workspace beside PlanGate's own repository of it."""
    runs = root / RUNS_DIR_RELPATH
    try:
        _ignore_runs(root)
        run_id = new_run_id(task_id, at)
        run_dir = runs / run_id
        run_dir.mkdir(mode=0o700)
        tree = run_dir / "workspace"
        tree.mkdir()
    except OSError as exc:
        raise EnvironmentFailure(
            "EXEC_WORKSPACE_FAILED",
            f"cannot create the run directory: {exc.strerror or exc}",
            f"make {RUNS_DIR_RELPATH} writable",
        ) from None
    ws = Workspace(run_id, run_dir, tree, run_dir / "state.git", approved)
    try:
        scratch_repository(root, ws.git_dir)
        ws.git().run([f"--work-tree={tree}", "read-tree", "-u", "--reset", approved])
        _init_agent_repository(tree, approved, commit_identity(root))
    except GitError as exc:
        raise _wrap(exc, "cannot extract the approved commit") from None
    _ensure_state_dir(tree)
    return ws


def _ensure_state_dir(tree: Path) -> None:
    """``.plangate/`` in the workspace (empty when the commit has none), so the box can
    mount it read-only and the hooks can observe that mount; git records no empty
    directory, so it never shows up in the result."""
    state = tree / PLANGATE_DIR
    if not state.exists() and not state.is_symlink():
        try:
            state.mkdir()
        except OSError as exc:
            raise EnvironmentFailure(
                "EXEC_WORKSPACE_FAILED",
                f"cannot create {PLANGATE_DIR} in the workspace: {exc.strerror or exc}",
                f"make {RUNS_DIR_RELPATH} writable",
            ) from None


def _init_agent_repository(tree: Path, approved: str, identity: list[str]) -> None:
    """The workspace's own repository: one commit holding the approved tree."""
    from plangate.fsutil import atomic_write

    git = Git(tree)
    git.run(["init", "-q", "--template="])  # no sample hooks: the box cannot run them anyway
    atomic_write(tree / ".git" / "info" / "attributes", RAW_ATTRIBUTES, durable=False)
    git.run(["add", "-A"])
    git.run(
        [
            *identity,
            "-c",
            "commit.gpgsign=false",
            "-c",
            "maintenance.auto=false",  # a throwaway repository: no background upkeep
            "commit",
            "-q",
            "--no-verify",
            "--allow-empty",
            "-m",
            f"approved commit {approved}",
        ]
    )


def record_state(ws: Workspace, root: Path, message: str) -> str:
    """The workspace as it is on disk, as one commit on top of the approved commit.

    Returns the approved commit itself when nothing changed.
    """
    git = ws.git()
    work = f"--work-tree={ws.tree}"
    try:
        git.run([work, "read-tree", "--reset", ws.approved])
        git.run([work, "add", "-A", "--ignore-errors"], ok_codes=(0, 1))
        tree = git.run(["write-tree"]).stdout.decode().strip()
        approved_tree = git.run(["rev-parse", f"{ws.approved}^{{tree}}"]).stdout.decode().strip()
        if tree == approved_tree:
            return ws.approved
        proc = git.run(
            [
                *commit_identity(root),
                "-c",
                "commit.gpgsign=false",
                "commit-tree",
                tree,
                "-p",
                ws.approved,
                "-m",
                message,
            ]
        )
        commit = proc.stdout.decode().strip()
        git.run(["update-ref", "refs/heads/result", commit])
    except GitError as exc:
        raise _wrap(exc, "cannot record the workspace") from None
    return commit


def discard_tree(ws: Workspace) -> None:
    """Remove the extracted workspace (its state is recorded in ``state.git``)."""
    shutil.rmtree(ws.tree, ignore_errors=True)


# -- the box of plangate exec ------------------------------------------------------


class ExecBoxFacts(NamedTuple):
    """What :func:`exec_policy` builds a box from (gathered by the caller)."""

    root: str
    cwd: str
    workspace: str
    home: str
    """The host's home directory (``HOME`` of the caller)."""
    box_home: str
    """The box's private home (host path), copied in by :mod:`plangate.isolation.home`."""
    system: tuple[Mount, ...]
    """System directories, Python's installation and the ``read_only`` grants."""
    read_only: tuple[str, ...]
    """Repository paths inside the workspace that stay read-only."""
    hidden: tuple[Hidden, ...]
    env: Mapping[str, str]
    env_names: tuple[str, ...]
    task_id: str
    remaps: bool
    run_id: str = ""
    """The run's id, passed to the command as ``PLANGATE_BOX``."""
    box_dir: str = ""
    """The run's box directory (host path; ``""``: none), shown writable at
    :data:`plangate.isolation.contract.BOX_DIR` with its ``run.json`` read-only."""
    proxy: ProxyAccess | None = None
    """The egress proxy (network on); None: no network, loopback only."""


def exec_policy(facts: ExecBoxFacts) -> SandboxPolicy:
    """The box of ``plangate exec`` (pure; see docs/isolation.md).

    The box's home is a private directory: with a backend that remaps
    (bubblewrap) it is shown at the host's home path (tools find their usual
    paths, and nothing of the host's home is there unless granted read-only);
    otherwise (Seatbelt) ``HOME`` names it at its own path. With a remapping
    backend the workspace is shown at the repository's own path, so the
    repository and its ``.git`` are simply not there; otherwise the workspace
    keeps its own path and the repository is hidden by rule. The command
    learns that it runs in the box (``PLANGATE_BOX``: the run id); with a box
    directory (bubblewrap) it is shown at the fixed
    :data:`~plangate.isolation.contract.BOX_DIR`, writable, and
    ``PLANGATE_BOX_LEDGER`` names the box-local ledger in it. The network is
    the egress proxy's (``HTTP(S)_PROXY``) or none.
    """
    target = facts.root if facts.remaps else facts.workspace
    home = facts.home if facts.remaps and facts.home not in ("", "/") else facts.box_home
    rel = posixpath.relpath(facts.cwd, facts.root) if facts.cwd != facts.root else "."
    cwd = target if rel == "." else posixpath.join(target, rel)
    hidden = list(facts.hidden)
    if facts.remaps:  # the private home covers the host's: nothing of it needs hiding there
        hidden = [h for h in hidden if not path_within(h.target, home)]
    else:
        hidden.append(Hidden(facts.root, "dir"))
    fixed = {"PLANGATE_TASK": facts.task_id, "HOME": home}
    if facts.run_id:
        fixed[BOX_ENV] = facts.run_id
    if facts.proxy is not None:
        fixed.update(proxy_env(facts.proxy.port))
    writable = [Mount(facts.box_home, home), Mount(facts.workspace, target)]
    read_only = [
        Mount(posixpath.join(facts.workspace, p), posixpath.join(target, p))
        for p in facts.read_only
    ]
    if facts.box_dir and facts.remaps:
        writable.append(Mount(facts.box_dir, BOX_DIR))
        read_only.append(
            Mount(posixpath.join(facts.box_dir, BOX_FACTS_NAME), f"{BOX_DIR}/{BOX_FACTS_NAME}")
        )
        fixed[BOX_LEDGER_ENV] = f"{BOX_DIR}/{BOX_LEDGER_NAME}"
    return SandboxPolicy(
        visible=facts.system,
        writable=tuple(writable),
        read_only=tuple(read_only),
        hidden=tuple(hidden),
        network=facts.proxy is not None,
        limits=Limits(),
        env=allowed_env(facts.env, facts.env_names, fixed),
        cwd=cwd,
        proxy=facts.proxy,
    )


def protected_paths(root: Path, approved: str, task_id: str) -> tuple[str, ...]:
    """The repository paths :func:`read_only_paths` keeps read-only, read from git alone
    (so they can be read while the workspace is being made)."""
    from plangate.surfaces import REPO_SURFACES_RELPATH, surfaces_at_commit

    git = Git(root)
    wanted: list[str] = [f"{WORKING_DIR}/{task_id}", PLANGATE_DIR, ".git"]
    try:
        # One listing answers both the definition's entry and its size for the read.
        surfaces = surfaces_at_commit(git.listed_at(approved, [REPO_SURFACES_RELPATH]),
                                      approved)
        entries = git.ls_tree(approved)
    except GitError as exc:
        raise _wrap(exc, "cannot read the protected surfaces") from None
    if surfaces.entries:
        wanted += [e.path for e in entries if surfaces.protecting(e.path) is not None]
    return tuple(dict.fromkeys(wanted))


def read_only_paths(
    root: Path,
    approved: str,
    task_id: str,
    ws: Workspace,
    wanted: tuple[str, ...] | None = None,
) -> tuple[str, ...]:
    """Repository paths that stay read-only in the workspace.

    The task's own directory, ``.plangate/``, the workspace's own ``.git`` (the
    agent cannot commit in the box: PlanGate records the workspace itself after
    the run) and every file of the approved commit a protected surface (as
    committed there) covers, when it exists in the workspace. ``wanted``:
    :func:`protected_paths`, when already read.
    """
    if wanted is None:
        wanted = protected_paths(root, approved, task_id)
    out = []
    for path in wanted:
        local = ws.tree / path
        if local.exists() and not local.is_symlink():
            out.append(path)
    return _outermost(out)


def _outermost(paths: Iterable[str]) -> tuple[str, ...]:
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path == k or path.startswith(k + "/") for k in kept):
            kept.append(path)
    return tuple(kept)


def secret_paths(
    root: Path,
    env: Mapping[str, str],
    home: str,
    ledger_path: str | None,
) -> tuple[str, ...]:
    """Host paths never visible in the box (hidden whatever else is shown).

    The box's home is private, so these matter where a path lies outside it:
    the repository's git directories and worktrees, the ledger, the SSH agent's
    socket, the runtime directory's key agents, git's signing key, and the
    directory of the hook helper's socket.
    """
    git = Git(root)
    paths = [expand_home(p, home) for p in HOST_SECRETS]
    sock = env.get("SSH_AUTH_SOCK", "")
    if sock.startswith("/"):
        paths.append(posixpath.normpath(sock))
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        paths += [posixpath.join(runtime, name) for name in ("gnupg", "keyring", "plangate")]
    helper = socket_dir(env)
    if helper is not None:
        paths.append(helper)
    try:
        dirs = git.run(
            ["rev-parse", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir"]
        ).stdout.decode("utf-8", "surrogateescape")
        paths += [line for line in dirs.splitlines() if line.startswith("/")]
        listing = git.run(["worktree", "list", "--porcelain", "-z"]).stdout
        paths += [
            item[len(b"worktree ") :].decode("utf-8", "surrogateescape")
            for item in listing.split(b"\x00")
            if item.startswith(b"worktree ")
        ]
        key = git.run(["config", "--get", "user.signingkey"], ok_codes=(0, 1)).stdout
    except GitError as exc:
        raise _wrap(exc, "cannot list the repository's git directories") from None
    signing = key.decode("utf-8", "replace").strip()
    if signing:
        expanded = expand_home(signing, home) if signing.startswith("~/") else signing
        if expanded.startswith("/"):
            paths += [expanded, expanded.removesuffix(".pub")]
    if ledger_path:
        paths.append(ledger_path)
    root_text = str(root)
    return tuple(
        dict.fromkeys(
            posixpath.normpath(p)
            for p in paths
            if p.startswith("/") and posixpath.normpath(p) != root_text
        )
    )


def existing(paths: Iterable[str]) -> tuple[str, ...]:
    """The paths that exist (a symbolic link counts when its target exists)."""
    return tuple(p for p in paths if Path(p).exists())
