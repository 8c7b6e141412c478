"""The host sandbox of a task session: what ``plangate task start`` writes, ``stop`` removes.

The hooks allow programs that run project code only where the operating system
confines their writes (:mod:`plangate.hooks.confinement`). For an agent that
``plangate exec`` did not start, that confinement is the host's own sandbox, and
``task start`` configures it for the active task, in files no commit carries:

- **Claude Code**: the ``sandbox`` key of ``.claude/settings.local.json``:
  ``enabled``, ``failIfUnavailable`` true, ``allowUnsandboxedCommands`` false,
  ``excludedCommands`` removed, ``filesystem.allowWrite`` the task's writable
  directories, ``filesystem.denyWrite`` PlanGate's state, git, the hosts'
  configuration, the task directories (plan packages and ``approvals/``) and every
  protected-surface pattern. Paths are written absolute with ``//`` (absolute in
  every Claude Code version; a single ``/`` meant "relative to the settings
  file" before some versions). The hook's check accepts exactly this.
- **Codex**: ``sandbox_mode = "workspace-write"`` with
  ``sandbox_workspace_write.writable_roots`` (the task's writable directories) and
  ``network_access = false`` in the project's ``.codex/config.toml`` (Codex reads
  it only in a trusted project). Codex does not tell its hooks which sandbox a call
  runs in, so the hooks never rely on it; it still narrows what commands write.

Rules of the writes: a file that is tracked by git, or that git does not ignore,
is never written (``TASK_SANDBOX_NOT_IGNORED``); a settings file that is a link,
malformed or not a JSON object is refused and left alone
(``TASK_SANDBOX_SETTINGS_INVALID``); a Codex configuration that already sets the
sandbox is refused (``TASK_SANDBOX_CODEX_CONFLICT``). What start changed (the
previous values and the bytes it wrote) is kept in ``.plangate/session/host-sandbox.json``
(no agent may write there), whose digest the ledger's ``task_started`` entry
holds; ``stop`` restores the previous values, only those, and refuses when the
state does not match the ledger (``TASK_SANDBOX_STATE_CHANGED``). A file still
byte-for-byte what start wrote gets its old bytes back; a file changed since
(Claude Code adds permissions to the same file) gets each value start set back,
and the user's other keys stay.

The pure parts (what to write, how to undo it) are in
:mod:`plangate.hooks.sandbox_settings`; this module reads and writes the files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.errors import InputRejected
from plangate.hooks.confinement import path_facts
from plangate.hooks.sandbox_settings import (
    CLAUDE_LOCAL,
    CODEX_CONFIG,
    MARKER,
    PathFacts,
    apply_claude,
    apply_codex,
    claude_paths,
    claude_plan,
    claude_plan_wanted,
    codex_block,
    has_glob,
    invalid,
    revert_claude,
    revert_codex,
    writable_dirs,
)
from plangate.records import NamedTuple

if TYPE_CHECKING:
    from plangate.fsutil import FileRead
    from plangate.hooks.decision import TaskFacts

STATE_DIR = ".plangate/session"
STATE_NAME = "host-sandbox.json"
PAYLOAD_HOSTS = "host_sandbox"
PAYLOAD_DIGEST = "host_sandbox_sha256"
MAX_SETTINGS_BYTES = 1024 * 1024


def installed_hosts(root: Path) -> tuple[str, ...]:
    """The hosts whose PlanGate hooks are installed in the repository (for ``auto``)."""
    from plangate.fsutil import read_below

    files = {
        "claude": (".claude/settings.json", CLAUDE_LOCAL),
        "codex": (".codex/hooks.json",),
    }
    out: list[str] = []
    for host, rels in files.items():
        for rel in rels:
            read = read_below(root, rel, MAX_SETTINGS_BYTES)
            if read.ok and read.data is not None and MARKER.encode() in read.data:
                out.append(host)
                break
    return tuple(out)


# -- IO ----------------------------------------------------------------------------------


def _directory(root: Path, rel: str, *, create: bool) -> Any:
    from plangate.fsutil import open_verified_dir

    return open_verified_dir(root, rel, create=create)


def _read(root: Path, rel: str) -> bytes | None:
    """The file's bytes, ``None`` when absent; a link or unreadable file is refused."""
    from plangate.errors import PlanGateError
    from plangate.fsutil import FileState, read_at

    directory, name = os.path.split(rel)
    try:
        handle = _directory(root, directory, create=False)
    except PlanGateError as exc:
        if exc.code == "PATH_COMPONENT_MISSING":
            return None
        raise invalid(rel, exc.message) from None
    with handle:
        read = read_at(handle, name, MAX_SETTINGS_BYTES)
    if read.state is FileState.MISSING:
        return None
    if not read.ok or read.data is None:
        raise invalid(rel, f"it {read.detail}")
    return read.data


def _write(root: Path, rel: str, data: bytes | None) -> None:
    """Replace ``rel`` atomically (``None``: remove it), through verified directories."""
    from plangate.fsutil import atomic_write_at, remove_at

    directory, name = os.path.split(rel)
    with _directory(root, directory, create=data is not None) as handle:
        if data is None:
            remove_at(handle, name)
        else:
            atomic_write_at(handle, name, data)


def _commit_problem(root: Path, rel: str) -> InputRejected | None:
    """Why ``rel`` may not be written (git tracks it or does not ignore it), or ``None``.

    A task start writes no file a commit could carry.
    """
    from plangate.git import Git

    git = Git(root)
    tracked = git.run(["ls-files", "--", rel], ok_codes=(0,)).stdout.strip()
    ignored = git.run(["check-ignore", "-q", "--", rel], ok_codes=(0, 1, 128)).returncode == 0
    if not tracked and ignored:
        return None
    state = "is tracked by git" if tracked else "is not ignored by git"
    return InputRejected(
        "TASK_SANDBOX_NOT_IGNORED",
        f"{rel} {state}: a task start writes no file a commit could carry",
        f"add '/{rel}' to .gitignore ('plangate setup' ignores {CLAUDE_LOCAL}) and "
        "untrack it, or start with --sandbox none",
    )


def _claude_json(data: bytes | None) -> dict[str, Any]:
    from plangate.canonical import StrictJSONError, strict_loads_object

    if data is None:
        return {}
    try:
        return strict_loads_object(data, "settings")
    except (StrictJSONError, ValueError) as exc:
        raise invalid(CLAUDE_LOCAL, f"it is not a strict JSON object ({exc})") from None


def _dump(settings: Mapping[str, Any]) -> bytes:
    return (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode()


class HostSandbox:
    """Writes the host sandboxes for a starting session and takes them back on failure."""

    def __init__(
        self, root: Path, env: Mapping[str, str], hosts: tuple[str, ...] | None
    ) -> None:
        """``hosts`` ``None`` (``--sandbox auto``) means the hosts whose hooks are installed.

        In that mode a host whose file git would carry (tracked, not ignored) is
        skipped with a note (:attr:`skipped`); a host named explicitly is refused.
        """
        self.root = root
        self.env = env
        self.auto = hosts is None
        self.hosts = installed_hosts(root) if hosts is None else hosts
        self.skipped: list[str] = []
        self.gaps: list[str] = []
        """What the Claude Code sandbox cannot deny, and what protects it instead."""
        self._written: list[tuple[str, bytes | None]] = []

    def _writable(self, host: str, rel: str) -> bool:
        problem = _commit_problem(self.root, rel)
        if problem is None:
            return True
        if not self.auto:
            raise problem
        self.skipped.append(f"{host}: {problem.message} ({problem.code}; {problem.hint})")
        return False

    def apply(self, facts: TaskFacts) -> dict[str, Any]:
        """Write every chosen host's sandbox; return the ledger fields that record it.

        Everything is checked before the first write; a leftover state (a session
        that expired without 'task stop') is restored first.
        """
        from plangate.fsutil import atomic_write_at

        leftover = pending_restore(self.root, self.env)
        if leftover is not None:
            write_restore(self.root, leftover)
        if not self.hosts:
            return {}
        root = str(self.root)
        allowed = list(facts.allowed_paths or ())
        plan: list[tuple[str, bytes | None, bytes]] = []
        state: dict[str, Any] = {"task_id": facts.task_id, "hosts": {}}
        if "claude" in self.hosts and self._writable("claude", CLAUDE_LOCAL):
            before = _read(self.root, CLAUDE_LOCAL)
            protected = _protected(root)
            matches = _glob_matches(self.root, protected)
            present = path_facts(root, claude_plan_wanted(facts.task_id, protected))
            present = present.with_file(CLAUDE_LOCAL)  # written below
            allow, deny = claude_paths(
                root, facts.task_id, allowed, protected, matches, facts=present
            )
            self.gaps = [
                f"{gap.path}: {gap.why}"
                for gap in claude_plan(facts.task_id, protected, present).gaps
            ]
            new, record = apply_claude(_claude_json(before), allow, deny)
            data = _dump(new)
            plan.append((CLAUDE_LOCAL, before, data))
            state["hosts"]["claude"] = {"file": CLAUDE_LOCAL, "record": record}
        if "codex" in self.hosts and self._writable("codex", CODEX_CONFIG):
            before = _read(self.root, CODEX_CONFIG)
            try:
                text = (before or b"").decode("utf-8")
            except UnicodeDecodeError:
                raise invalid(CODEX_CONFIG, "it is not UTF-8") from None
            present_dirs = PathFacts(frozenset(
                d for d in writable_dirs(allowed)
                if (self.root / d).is_dir() and not (self.root / d).is_symlink()
            ))
            block = codex_block(root, allowed, present_dirs)
            data = apply_codex(text, block).encode()
            plan.append((CODEX_CONFIG, before, data))
            state["hosts"]["codex"] = {"file": CODEX_CONFIG, "block": block}
        for rel, before, data in plan:
            host = "claude" if rel == CLAUDE_LOCAL else "codex"
            state["hosts"][host]["before"] = None if before is None else before.decode("utf-8")
            state["hosts"][host]["written_sha256"] = hashlib.sha256(data).hexdigest()
        self.hosts = tuple(state["hosts"])
        if not plan:
            return {}
        document = (json.dumps(state, sort_keys=True, indent=1) + "\n").encode()
        with _directory(self.root, STATE_DIR, create=True) as handle:
            atomic_write_at(handle, STATE_NAME, document)
        self._written.append((f"{STATE_DIR}/{STATE_NAME}", None))
        for rel, before, data in plan:
            _write(self.root, rel, data)
            self._written.append((rel, before))
        return {
            PAYLOAD_HOSTS: list(state["hosts"]),
            PAYLOAD_DIGEST: hashlib.sha256(document).hexdigest(),
        }

    def revert(self) -> None:
        """Put back every file :meth:`apply` wrote (the session did not start)."""
        for rel, before in reversed(self._written):
            _write(self.root, rel, before)
        self._written.clear()


MAX_GLOB_MATCHES = 500
"""At most this many existing files are named for the glob patterns (a long list
makes Claude Code's sandbox command line too long)."""


def _glob_matches(root: Path, protected: Sequence[str]) -> list[str]:
    """Tracked and untracked (not ignored) files matching a protected pattern with a glob."""
    from plangate.git import Git
    from plangate.paths import PathRejected, match_any

    globs = [p for p in protected if has_glob(p)]
    if not globs:
        return []
    listed = Git(root).run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    out: list[str] = []
    for raw in listed.stdout.split(b"\0"):
        path = raw.decode("utf-8", "surrogateescape")
        try:
            hit = bool(path) and match_any(globs, path, casefold=True) is not None
        except PathRejected:
            continue  # not a canonical path: the hook denies it whatever the sandbox says
        if hit:
            out.append(path)
            if len(out) >= MAX_GLOB_MATCHES:
                break
    return out


def _protected(root: str) -> list[str]:
    from plangate.hooks.service import load_surfaces

    surfaces, _problem = load_surfaces(root)
    return [entry.pattern for entry in surfaces.entries] if surfaces is not None else []


class Restore(NamedTuple):
    """What ``task stop`` writes back: ``(path, bytes or None to remove)`` per file."""

    files: tuple[tuple[str, bytes | None], ...]
    hosts: tuple[str, ...]
    note: str = ""


def _read_state(root: Path) -> FileRead:
    """The state file, read through verified directories (a link anywhere is not read)."""
    from plangate.errors import PlanGateError
    from plangate.fsutil import FileRead, FileState, read_at

    try:
        handle = _directory(root, STATE_DIR, create=False)
    except PlanGateError as exc:
        missing = exc.code == "PATH_COMPONENT_MISSING"
        return FileRead(FileState.MISSING if missing else FileState.UNREADABLE, None, exc.message)
    with handle:
        return read_at(handle, STATE_NAME, 4 * MAX_SETTINGS_BYTES)


def _open_session_payload(root: Path, env: Mapping[str, str]) -> Mapping[str, Any]:
    """The ``task_started`` payload of the open session (expired or not); ``{}`` without one."""
    from plangate.ledger import open_ledger
    from plangate.session.state import KIND_STARTED, open_session

    with open_ledger(root, env, must_exist=True) as ledger:
        session = open_session(ledger)
        if session is None:
            return {}
        entry = next((e for e in ledger.entries(kind=KIND_STARTED) if e.seq == session.seq), None)
    return entry.payload if entry is not None else {}


def _recorded_digest(root: Path, env: Mapping[str, str]) -> str | None:
    """The state digest the open session's ``task_started`` entry holds."""
    digest = _open_session_payload(root, env).get(PAYLOAD_DIGEST)
    return digest if isinstance(digest, str) else None


def session_hosts(root: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    """The hosts whose sandbox the open session's start configured (for ``task show``)."""
    hosts = _open_session_payload(root, env).get(PAYLOAD_HOSTS)
    return tuple(h for h in hosts if isinstance(h, str)) if isinstance(hosts, list) else ()


def pending_restore(root: Path, env: Mapping[str, str]) -> Restore | None:
    """What stopping the open session puts back (``None``: no host sandbox is configured).

    A session that expired without 'task stop' is restored by the next start.
    Read-only: refuses (``TASK_SANDBOX_STATE_CHANGED``, ``TASK_SANDBOX_SETTINGS_INVALID``)
    before anything is written or the session is stopped.
    """
    from plangate.fsutil import FileState

    read = _read_state(root)
    expected = _recorded_digest(root, env)
    if read.state is FileState.MISSING:
        if expected is None:
            return None
        return Restore((), (), f"{STATE_DIR}/{STATE_NAME} was removed: the host sandbox "
                       f"settings were left as they are ({CLAUDE_LOCAL}, {CODEX_CONFIG})")
    if not read.ok or read.data is None or hashlib.sha256(read.data).hexdigest() != expected:
        raise InputRejected(
            "TASK_SANDBOX_STATE_CHANGED",
            f"{STATE_DIR}/{STATE_NAME} is not what the ledger's task_started entry recorded",
            f"restore the sandbox settings in {CLAUDE_LOCAL} and {CODEX_CONFIG} by hand, "
            f"remove {STATE_DIR}/{STATE_NAME}, then try again",
        )
    state = json.loads(read.data)
    files: list[tuple[str, bytes | None]] = [(f"{STATE_DIR}/{STATE_NAME}", None)]
    for host, info in sorted(state.get("hosts", {}).items()):
        rel = info["file"]
        current = _read(root, rel)
        before = info["before"].encode("utf-8") if info["before"] is not None else None
        if current is None:
            continue  # removed by hand: nothing of PlanGate's is left to take out
        if hashlib.sha256(current).hexdigest() == info["written_sha256"]:
            files.append((rel, before))
        elif host == "claude":
            reverted = revert_claude(_claude_json(current), info["record"])
            files.append((rel, _dump(reverted) if reverted or before is not None else None))
        else:
            try:
                text = current.decode("utf-8")
            except UnicodeDecodeError:
                raise invalid(rel, "it is not UTF-8") from None
            files.append((rel, revert_codex(text, info["block"]).encode()))
    return Restore(tuple(files), tuple(sorted(state.get("hosts", {}))))


def write_restore(root: Path, restore: Restore) -> None:
    """Write what :func:`pending_restore` computed, the state file last."""
    for rel, data in reversed(restore.files):
        _write(root, rel, data)


def claude_relied_on(
    root: Path, env: Mapping[str, str], hosts: Sequence[str]
) -> tuple[bool | None, str]:
    """Whether the hooks now rely on Claude Code's sandbox (``None`` when not configured).

    The same check the hook makes, over every settings layer: a user or managed
    layer can still weaken what task start wrote (``excludedCommands``, say).
    """
    from plangate.hooks.confinement import claude_sandbox

    if "claude" not in hosts:
        return None, ""
    established, why = claude_sandbox(str(root), env, _protected(str(root)), bypass=False)
    return bool(established), why


def describe(
    hosts: Sequence[str],
    relied: bool | None,
    why: str,
    skipped: Sequence[str] = (),
    gaps: Sequence[str] = (),
) -> list[str]:
    """What ``task start`` and ``task show`` print about the host sandboxes."""
    out = [f"host sandbox skipped for {note}" for note in skipped]
    out += [f"Claude Code sandbox cannot deny {gap}" for gap in gaps]
    if not hosts:
        return [
            *out,
            "host sandbox: none configured (project code runs only inside 'plangate exec')",
        ]
    if relied is not None:
        state = "the hooks rely on it" if relied else f"the hooks do NOT rely on it: {why}"
        out.append(f"Claude Code sandbox written to {CLAUDE_LOCAL}: {state}")
    if "codex" in hosts:
        out.append(
            f"Codex sandbox (workspace-write) written to {CODEX_CONFIG}: read only in a "
            "trusted project; the hooks cannot see it, so they never rely on it"
        )
    return out
