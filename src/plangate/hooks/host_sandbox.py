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

Pure functions build and undo the changes; :class:`HostSandbox` and
:func:`pending_restore` / :func:`write_restore` do the IO.
"""

# ruff: noqa: PTH118
from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from plangate.errors import InputRejected, UsageError

if TYPE_CHECKING:
    from plangate.hooks.decision import TaskFacts

HOSTS = ("claude", "codex")
CLAUDE_LOCAL = ".claude/settings.local.json"
CODEX_CONFIG = ".codex/config.toml"
STATE_DIR = ".plangate/session"
STATE_NAME = "host-sandbox.json"
PAYLOAD_HOSTS = "host_sandbox"
PAYLOAD_DIGEST = "host_sandbox_sha256"
MAX_SETTINGS_BYTES = 1024 * 1024
MARKER = "plangate-managed"
CODEX_BEGIN = f"# {MARKER}: begin (plangate task start; 'plangate task stop' removes it)\n"
CODEX_END = f"# {MARKER}: end\n"
CLAUDE_FLAGS: dict[str, bool] = {
    "enabled": True,
    "failIfUnavailable": True,
    "allowUnsandboxedCommands": False,
}
ABSENT = "absent"
"""How the state records a key that was not there."""


# -- what to write (pure) ----------------------------------------------------------------


def _glob_free_prefix(pattern: str) -> str:
    literal: list[str] = []
    for segment in pattern.strip("/").split("/"):
        if any(c in segment for c in "*?[{"):
            return "/".join(literal)
        literal.append(segment)
    return "/".join(literal[:-1]) if literal else ""  # a file: its directory


def writable_dirs(allowed_paths: Sequence[str]) -> list[str]:
    """The directories the task's scope lets it write, outermost only.

    Each allowed-path pattern gives its literal leading directory (``src/app/**``
    is ``src/app``, ``src/app.py`` is ``src``); the repository root itself is left
    out (both hosts already write there, below their denied paths).
    """
    dirs = sorted({d for d in (_glob_free_prefix(p) for p in allowed_paths) if d})
    out: list[str] = []
    for d in dirs:
        if not any(d.startswith(kept + "/") for kept in out):
            out.append(d)
    return out


def _absolute(root: str, relative: str) -> str:
    """``//root/relative`` (trailing ``/**`` as the directory itself)."""
    text = relative
    while text.startswith("./"):
        text = text[2:]
    if text.endswith("/**"):
        text = text[: -len("/**")]
    return "/" + root.rstrip("/") + "/" + text.strip("/")


def claude_paths(
    root: str, task_id: str, allowed_paths: Sequence[str], protected: Sequence[str]
) -> tuple[list[str], list[str]]:
    """``(allowWrite, denyWrite)`` entries for the task, absolute with ``//``."""
    from plangate.hooks.confinement import SANDBOX_DENY_REQUIRED

    allow = [_absolute(root, d) for d in writable_dirs(allowed_paths)]
    deny: list[str] = []
    for path in (*SANDBOX_DENY_REQUIRED, f"docs/working/{task_id}", *protected):
        entry = _absolute(root, path)
        if entry not in deny:
            deny.append(entry)
    return allow, deny


def _get(mapping: Mapping[str, Any], key: str) -> Any:
    return copy.deepcopy(mapping[key]) if key in mapping else ABSENT


def apply_claude(
    settings: Mapping[str, Any], allow: Sequence[str], deny: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings with PlanGate's sandbox merged in, and the record of what changed.

    Raises ``TASK_SANDBOX_SETTINGS_INVALID`` when ``sandbox`` (or its ``filesystem``,
    or their lists) has the wrong type: nothing of the user's is replaced blindly.
    """
    new = copy.deepcopy(dict(settings))
    sandbox = new.setdefault("sandbox", {})
    if not isinstance(sandbox, dict):
        raise _invalid(CLAUDE_LOCAL, "its 'sandbox' is not an object")
    filesystem = sandbox.setdefault("filesystem", {})
    if not isinstance(filesystem, dict):
        raise _invalid(CLAUDE_LOCAL, "its 'sandbox.filesystem' is not an object")
    record: dict[str, Any] = {
        "sandbox": "present" if "sandbox" in settings else ABSENT,
        "filesystem": "present"
        if isinstance(settings.get("sandbox"), dict) and "filesystem" in settings["sandbox"]
        else ABSENT,
        "flags": {key: _get(sandbox, key) for key in CLAUDE_FLAGS},
        "excludedCommands": _get(sandbox, "excludedCommands"),
        "added": {},
    }
    sandbox.update(CLAUDE_FLAGS)
    sandbox.pop("excludedCommands", None)
    for key, wanted in (("allowWrite", allow), ("denyWrite", deny)):
        current = filesystem.get(key, [])
        if not isinstance(current, list) or not all(isinstance(p, str) for p in current):
            raise _invalid(CLAUDE_LOCAL, f"its 'sandbox.filesystem.{key}' is not a list of paths")
        added = [p for p in wanted if p not in current]
        record["added"][key] = {"had_key": key in filesystem, "entries": added}
        filesystem[key] = [*current, *added]
    return new, record


def revert_claude(settings: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """The settings with what :func:`apply_claude` recorded taken back out.

    A value start set and that is unchanged gets its previous value (or goes); a
    value someone changed since stays; entries start added to the lists go; the
    ``sandbox`` and ``filesystem`` objects go when start created them and they are
    empty again.
    """
    new = copy.deepcopy(dict(settings))
    sandbox = new.get("sandbox")
    if not isinstance(sandbox, dict):
        return new
    for key, wanted in CLAUDE_FLAGS.items():
        if key in sandbox and sandbox[key] is wanted:
            previous = record["flags"].get(key, ABSENT)
            if previous == ABSENT:
                del sandbox[key]
            else:
                sandbox[key] = previous
    excluded = record.get("excludedCommands", ABSENT)
    if excluded != ABSENT and "excludedCommands" not in sandbox:
        sandbox["excludedCommands"] = excluded
    filesystem = sandbox.get("filesystem")
    if isinstance(filesystem, dict):
        for key, info in record.get("added", {}).items():
            current = filesystem.get(key)
            if not isinstance(current, list):
                continue
            kept = [p for p in current if p not in info["entries"]]
            if kept or info["had_key"]:
                filesystem[key] = kept
            else:
                del filesystem[key]
        if not filesystem and record.get("filesystem") == ABSENT:
            del sandbox["filesystem"]
    if not sandbox and record.get("sandbox") == ABSENT:
        del new["sandbox"]
    return new


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def codex_block(root: str, allowed_paths: Sequence[str]) -> str:
    """PlanGate's lines at the top of ``.codex/config.toml`` (dotted keys: no table header)."""
    roots = ", ".join(
        _toml_string(os.path.join(root, d)) for d in writable_dirs(allowed_paths)
    )
    return (
        CODEX_BEGIN
        + 'sandbox_mode = "workspace-write"\n'
        + f"sandbox_workspace_write.writable_roots = [{roots}]\n"
        + "sandbox_workspace_write.network_access = false\n"
        + CODEX_END
    )


def apply_codex(text: str, block: str) -> str:
    """``text`` with PlanGate's block first; refused when the file already sets the sandbox."""
    import tomllib

    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _invalid(CODEX_CONFIG, f"it is not TOML ({exc})") from None
    clash = [k for k in ("sandbox_mode", "sandbox_workspace_write") if k in parsed]
    if clash or MARKER in text:
        raise InputRejected(
            "TASK_SANDBOX_CODEX_CONFLICT",
            f"{CODEX_CONFIG} already sets {', '.join(clash) or 'a PlanGate block'}",
            f"remove those keys from {CODEX_CONFIG} (or start with --sandbox claude / none)",
        )
    new = block + text
    written = tomllib.loads(new)  # the result must be TOML with exactly these values
    if written.get("sandbox_mode") != "workspace-write":  # pragma: no cover - defensive
        raise _invalid(CODEX_CONFIG, "PlanGate's block would not be read as written")
    return new


def revert_codex(text: str, block: str) -> str:
    """``text`` without PlanGate's block; refused when the block was changed."""
    if block in text:
        return text.replace(block, "", 1)
    if MARKER in text:
        raise InputRejected(
            "TASK_SANDBOX_STATE_CHANGED",
            f"PlanGate's block in {CODEX_CONFIG} was changed since 'plangate task start'",
            f"remove the lines between the '{MARKER}' markers by hand, then stop again",
        )
    return text


def _invalid(rel: str, why: str) -> InputRejected:
    return InputRejected(
        "TASK_SANDBOX_SETTINGS_INVALID",
        f"{rel} cannot be used: {why}; it was left as it is",
        f"fix or remove {rel} (or start with --sandbox none), then try again",
    )


# -- choosing hosts ----------------------------------------------------------------------


def parse_hosts(option: str) -> tuple[str, ...] | None:
    """``--sandbox`` value: ``auto`` (``None``), ``none`` (no host) or a comma list."""
    if option == "auto":
        return None
    if option == "none":
        return ()
    names = tuple(dict.fromkeys(n.strip() for n in option.split(",") if n.strip()))
    unknown = [n for n in names if n not in HOSTS]
    if unknown or not names:
        raise UsageError(
            "TASK_SANDBOX_HOST_UNKNOWN",
            f"--sandbox {option!r}: unknown host {', '.join(unknown) or '(none)'}",
            "use auto, none, claude, codex or claude,codex",
        )
    return names


def installed_hosts(root: Path) -> tuple[str, ...]:
    """The hosts whose PlanGate hooks are installed in the repository (for ``auto``)."""
    from plangate.fsutil import read_regular_file

    files = {
        "claude": (".claude/settings.json", CLAUDE_LOCAL),
        "codex": (".codex/hooks.json",),
    }
    out: list[str] = []
    for host, rels in files.items():
        for rel in rels:
            read = read_regular_file(root / rel, MAX_SETTINGS_BYTES)
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
        raise _invalid(rel, exc.message) from None
    with handle:
        read = read_at(handle, name, MAX_SETTINGS_BYTES)
    if read.state is FileState.MISSING:
        return None
    if not read.ok or read.data is None:
        raise _invalid(rel, f"it {read.detail}")
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


def _not_committed(root: Path, rel: str) -> None:
    """Refuse a file git tracks or does not ignore: a task start writes no committed file."""
    from plangate.git import Git

    git = Git(root)
    tracked = git.run(["ls-files", "--", rel], ok_codes=(0,)).stdout.strip()
    ignored = git.run(["check-ignore", "-q", "--", rel], ok_codes=(0, 1, 128)).returncode == 0
    if tracked or not ignored:
        state = "is tracked by git" if tracked else "is not ignored by git"
        raise InputRejected(
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
        raise _invalid(CLAUDE_LOCAL, f"it is not a strict JSON object ({exc})") from None


def _dump(settings: Mapping[str, Any]) -> bytes:
    return (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode()


class HostSandbox:
    """Writes the host sandboxes for a starting session and takes them back on failure."""

    def __init__(
        self, root: Path, env: Mapping[str, str], hosts: tuple[str, ...] | None
    ) -> None:
        """``hosts`` ``None`` means the hosts whose hooks are installed."""
        self.root = root
        self.env = env
        self.hosts = installed_hosts(root) if hosts is None else hosts
        self._written: list[tuple[str, bytes | None]] = []

    def apply(self, facts: TaskFacts) -> dict[str, Any]:
        """Write every chosen host's sandbox; return the ledger fields that record it.

        Everything is checked before the first write; a leftover state (a session
        that expired without 'task stop') is restored first.
        """
        from plangate.fsutil import atomic_write_at

        if not self.hosts:
            return {}
        leftover = pending_restore(self.root, self.env)
        if leftover is not None:
            write_restore(self.root, leftover)
        root = str(self.root)
        allowed = list(facts.allowed_paths or ())
        plan: list[tuple[str, bytes | None, bytes]] = []
        state: dict[str, Any] = {"task_id": facts.task_id, "hosts": {}}
        if "claude" in self.hosts:
            _not_committed(self.root, CLAUDE_LOCAL)
            before = _read(self.root, CLAUDE_LOCAL)
            protected = _protected(root)
            allow, deny = claude_paths(root, facts.task_id, allowed, protected)
            new, record = apply_claude(_claude_json(before), allow, deny)
            data = _dump(new)
            plan.append((CLAUDE_LOCAL, before, data))
            state["hosts"]["claude"] = {"file": CLAUDE_LOCAL, "record": record}
        if "codex" in self.hosts:
            _not_committed(self.root, CODEX_CONFIG)
            before = _read(self.root, CODEX_CONFIG)
            try:
                text = (before or b"").decode("utf-8")
            except UnicodeDecodeError:
                raise _invalid(CODEX_CONFIG, "it is not UTF-8") from None
            block = codex_block(root, allowed)
            data = apply_codex(text, block).encode()
            plan.append((CODEX_CONFIG, before, data))
            state["hosts"]["codex"] = {"file": CODEX_CONFIG, "block": block}
        for rel, before, data in plan:
            host = "claude" if rel == CLAUDE_LOCAL else "codex"
            state["hosts"][host]["before"] = None if before is None else before.decode("utf-8")
            state["hosts"][host]["written_sha256"] = hashlib.sha256(data).hexdigest()
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


def _protected(root: str) -> list[str]:
    from plangate.hooks.service import load_surfaces

    surfaces, _problem = load_surfaces(root)
    return [entry.pattern for entry in surfaces.entries] if surfaces is not None else []


class Restore(NamedTuple):
    """What ``task stop`` writes back: ``(path, bytes or None to remove)`` per file."""

    files: tuple[tuple[str, bytes | None], ...]
    hosts: tuple[str, ...]


def _recorded_digest(root: Path, env: Mapping[str, str]) -> str | None:
    """The state digest the open session's ``task_started`` entry holds (expired or not)."""
    from plangate.execution.session import KIND_STARTED, open_session
    from plangate.ledger import open_ledger

    with open_ledger(root, env, must_exist=True) as ledger:
        session = open_session(ledger)
        if session is None:
            return None
        entry = next((e for e in ledger.entries(kind=KIND_STARTED) if e.seq == session.seq), None)
    digest = entry.payload.get(PAYLOAD_DIGEST) if entry is not None else None
    return digest if isinstance(digest, str) else None


def pending_restore(root: Path, env: Mapping[str, str]) -> Restore | None:
    """What stopping the open session puts back (``None``: no host sandbox is configured).

    A session that expired without 'task stop' is restored by the next start.
    Read-only: refuses (``TASK_SANDBOX_STATE_CHANGED``, ``TASK_SANDBOX_SETTINGS_INVALID``)
    before anything is written or the session is stopped.
    """
    from plangate.fsutil import FileState, read_regular_file

    path = root / STATE_DIR / STATE_NAME
    read = read_regular_file(path, 4 * MAX_SETTINGS_BYTES)
    expected = _recorded_digest(root, env)
    if read.state is FileState.MISSING and expected is None:
        return None
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
                raise _invalid(rel, "it is not UTF-8") from None
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


def describe(hosts: Sequence[str], relied: bool | None, why: str) -> list[str]:
    """What ``task start`` prints about the host sandboxes."""
    if not hosts:
        return ["host sandbox: none configured (project code runs only inside 'plangate exec')"]
    out: list[str] = []
    if relied is not None:
        state = "the hooks rely on it" if relied else f"the hooks do NOT rely on it: {why}"
        out.append(f"Claude Code sandbox written to {CLAUDE_LOCAL}: {state}")
    if "codex" in hosts:
        out.append(
            f"Codex sandbox (workspace-write) written to {CODEX_CONFIG}: read only in a "
            "trusted project; the hooks cannot see it, so they never rely on it"
        )
    return out
