"""``plangate hooks install|uninstall``: merge PlanGate's entries into host configuration.

Every entry PlanGate writes carries the marker :data:`MARKER` in its command
line (a trailing shell comment), so install replaces exactly its own entries
and uninstall removes exactly them; nobody else's entries are touched, and
running either twice changes nothing the second time.

The command line is ``'<python>' -P -m plangate.hooks <host> || exit 2 # plangate-managed``
(``-P``: the repository, the hook's working directory, is not put on ``sys.path``, so a
repository-local ``plangate`` package cannot replace the gate):
whatever goes wrong before PlanGate's own fail-closed boundary runs (the
interpreter is gone, the package is not importable, a signal), the shell turns
the failure into exit 2, which Claude Code and Codex treat as a block. The
interpreter is ``sys.executable`` (not its real path: a virtual environment's
``python`` is a link whose real target does not see the environment's packages).

Files written (atomically):

- ``--claude``: ``.claude/settings.json`` ``hooks.PreToolUse`` (matcher ``*``),
  ``hooks.PostToolUse`` (matcher ``*``), ``hooks.Stop``, ``hooks.SubagentStop``;
- ``--codex``: ``.codex/hooks.json`` ``hooks.PreToolUse``, ``hooks.PostToolUse``,
  ``hooks.Stop`` (no matcher: every tool, ``apply_patch`` included);
- ``--cursor``: ``.cursor/hooks.json`` (``version: 1``) ``beforeShellExecution``,
  ``preToolUse``, ``beforeMCPExecution``, ``afterFileEdit``, ``stop``, each with
  ``failClosed: true`` (Cursor otherwise lets a failed hook pass);
- ``--git``: ``pre-commit`` and ``pre-push`` in git's hooks directory (as git
  resolves it: ``core.hooksPath``, linked worktrees). An existing hook that is
  not PlanGate's is never overwritten: install refuses and says how to chain it.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.deadlines import HOOK_TIMEOUT_SECONDS
from plangate.errors import InputRejected

if TYPE_CHECKING:
    from plangate.fsutil import VerifiedDir

MARKER = "plangate-managed"
MAX_CONFIG_BYTES = 1024 * 1024

CLAUDE_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("PreToolUse", "*"),
    ("PostToolUse", "*"),
    ("Stop", None),
    ("SubagentStop", None),
)
CODEX_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("PreToolUse", None),
    ("PostToolUse", None),
    ("Stop", None),
)
CURSOR_EVENTS: tuple[str, ...] = (
    "beforeShellExecution",
    "preToolUse",
    "beforeMCPExecution",
    "afterFileEdit",
    "stop",
)
GIT_HOOKS: tuple[tuple[str, str], ...] = (
    ("pre-commit", "git-pre-commit"),
    ("pre-push", "git-pre-push"),
)

CONFIG_FILES = {
    "claude": Path(".claude") / "settings.json",
    "codex": Path(".codex") / "hooks.json",
    "cursor": Path(".cursor") / "hooks.json",
}


@dataclass(frozen=True)
class Change:
    """One file install/uninstall touched (or would have touched)."""

    host: str
    path: str
    action: str  # "written", "unchanged", "removed"


def hook_command(host: str, python: str | None = None) -> str:
    """The marked command line for ``host``."""
    interpreter = shlex.quote(python or sys.executable)
    # -P: the working directory (the repository, which the agent writes) is not put
    # on sys.path, so a repository-local 'plangate' package cannot stand in for the gate.
    return f"{interpreter} -P -m plangate.hooks {host} || exit 2 # {MARKER}"


def is_managed(entry: object) -> bool:
    """True for a hook entry whose command carries :data:`MARKER`."""
    return isinstance(entry, dict) and MARKER in str(entry.get("command", ""))


def _load_json(directory: VerifiedDir, name: str, path: Path) -> dict[str, Any] | None:
    """The config file ``name`` in the verified ``directory``; None when it does not exist."""
    from plangate.canonical import StrictJSONError, strict_loads_object
    from plangate.fsutil import FileState, read_at

    read = read_at(directory, name, MAX_CONFIG_BYTES)
    if read.state is FileState.MISSING:
        return None
    if not read.ok or read.data is None:
        raise InputRejected(
            "HOOKS_CONFIG_UNREADABLE",
            f"{path} {read.detail}",
            "fix or remove the file, then install again",
        )
    if read.data.strip() == b"":
        return {}
    try:
        return strict_loads_object(read.data, str(path))
    except StrictJSONError as exc:
        raise InputRejected(
            "HOOKS_CONFIG_INVALID",
            f"{path}: {exc.message}",
            "fix the JSON by hand; PlanGate never overwrites a file it cannot read",
        ) from None


def _read_config(root: Path, host: str) -> dict[str, Any]:
    """``host``'s config file read through its verified directory (``{}`` when absent)."""
    from plangate.errors import PlanGateError
    from plangate.fsutil import open_verified_dir

    rel = CONFIG_FILES[host]
    try:
        directory = open_verified_dir(root, rel.parent.as_posix())
    except PlanGateError as exc:
        if exc.code == "PATH_COMPONENT_MISSING":
            return {}
        raise
    with directory:
        return _load_json(directory, rel.name, root / rel) or {}


def _write_json(directory: VerifiedDir, name: str, data: Mapping[str, Any]) -> None:
    from plangate.fsutil import atomic_write_at

    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    atomic_write_at(directory, name, text.encode("utf-8"))


def _hooks_map(config: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = config.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputRejected(
            "HOOKS_CONFIG_INVALID", f"{path}: 'hooks' is not an object", "fix the file by hand"
        )
    return hooks


def _strip_grouped(groups: object, path: Path) -> list[Any]:
    """Claude/Codex shape: remove managed hooks from every group; drop groups we emptied."""
    if not isinstance(groups, list):
        raise InputRejected(
            "HOOKS_CONFIG_INVALID",
            f"{path}: an event's value is not a list",
            "fix the file by hand",
        )
    out: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [h for h in group["hooks"] if not is_managed(h)]
            # Drop only a group that PlanGate's removal emptied; keep everyone else's.
            if kept or len(kept) == len(group["hooks"]):
                out.append({**group, "hooks": kept})
        else:
            out.append(group)
    return out


def _grouped_config(
    config: dict[str, Any],
    path: Path,
    host: str,
    events: tuple[tuple[str, str | None], ...],
    *,
    install: bool,
    python: str | None,
) -> dict[str, Any]:
    hooks = _hooks_map(config, path)
    for event, matcher in events:
        groups = _strip_grouped(hooks.get(event, []), path)
        if install:
            entry = {
                "type": "command",
                "command": hook_command(host, python),
                "timeout": HOOK_TIMEOUT_SECONDS,
            }
            group: dict[str, Any] = {"hooks": [entry]}
            if matcher is not None:
                group = {"matcher": matcher, **group}
            groups.append(group)
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if not hooks:
        config.pop("hooks", None)
    return config


def _cursor_config(
    config: dict[str, Any], path: Path, *, install: bool, python: str | None
) -> dict[str, Any]:
    version = config.setdefault("version", 1)
    if version != 1:
        raise InputRejected(
            "HOOKS_CONFIG_INVALID",
            f"{path}: version {version!r} is not 1",
            "PlanGate writes Cursor hooks format version 1",
        )
    hooks = _hooks_map(config, path)
    for event in CURSOR_EVENTS:
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise InputRejected(
                "HOOKS_CONFIG_INVALID", f"{path}: {event} is not a list", "fix the file by hand"
            )
        kept = [e for e in entries if not is_managed(e)]
        if install:
            # failClosed: a hook that crashes or prints no answer blocks instead of passing.
            kept.append({"command": hook_command("cursor", python), "failClosed": True})
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if not hooks:
        config.pop("hooks", None)
    return config


def _apply_json(root: Path, host: str, *, install: bool, python: str | None) -> Change:
    """Install or remove ``host``'s hooks in its config file inside the repository.

    The config directory (``.claude/``...) is opened from the repository root with
    no link followed (``PATH_COMPONENT_LINK``), and the file is read, replaced or
    removed relative to that verified handle, never through a link.
    """
    from plangate.fsutil import open_verified_dir

    rel = CONFIG_FILES[host]
    with open_verified_dir(root, rel.parent.as_posix(), create=install) as directory:
        return _apply_json_in(directory, rel.name, root / rel, host, install=install, python=python)


def _apply_json_in(
    directory: VerifiedDir, name: str, path: Path, host: str, *, install: bool, python: str | None
) -> Change:
    loaded = _load_json(directory, name, path)
    existed = loaded is not None
    config = loaded if loaded is not None else {}
    before = json.dumps(config, sort_keys=True)
    if host == "claude":
        config = _grouped_config(config, path, host, CLAUDE_EVENTS, install=install, python=python)
    elif host == "codex":
        config = _grouped_config(config, path, host, CODEX_EVENTS, install=install, python=python)
    else:
        config = _cursor_config(config, path, install=install, python=python)
    if host == "cursor" and not install and set(config) <= {"version"}:
        config = {}
    after = json.dumps(config, sort_keys=True)
    if before == after and (existed or not install):
        return Change(host, str(path), "unchanged")
    if not install and not config and existed:
        from plangate.fsutil import remove_at

        remove_at(directory, name)
        return Change(host, str(path), "removed")
    _write_json(directory, name, config)
    return Change(host, str(path), "written")


def git_hooks_dir(root: Path) -> Path:
    """git's hooks directory for the repository at ``root`` (``core.hooksPath`` aware)."""
    from plangate.git import Git

    return Git(root).configured_hooks_dir()


def git_hook_script(host: str, python: str | None = None) -> str:
    """The script installed as a git hook."""
    interpreter = shlex.quote(python or sys.executable)
    return (
        "#!/bin/sh\n"
        f"# {MARKER}: installed by 'plangate hooks install --git'; remove with uninstall\n"
        f"exec {interpreter} -P -m plangate.hooks {host}\n"
    )


def _apply_git(root: Path, *, install: bool, python: str | None) -> list[Change]:
    """Install or remove the git hook scripts in git's hooks directory.

    The directory is the one git names (``core.hooksPath`` aware); each script is
    read and written relative to that opened directory, never through a link in
    the script's place.
    """
    import contextlib

    directory = git_hooks_dir(root)
    with contextlib.ExitStack() as stack:
        hooks: VerifiedDir | None = None
        if install or directory.is_dir():
            hooks = stack.enter_context(_open_hooks_dir(root, directory, create=install))
        return [
            _apply_git_hook(hooks, directory, name, host, install=install, python=python)
            for name, host in GIT_HOOKS
        ]


def _open_hooks_dir(root: Path, directory: Path, *, create: bool) -> VerifiedDir:
    """git's hooks directory: verified from the repository root when it lies inside it."""
    from plangate.fsutil import open_verified_dir, path_unavailable

    rel: Path | None = None
    # As git names it first (a link on the way inside the repository is then
    # refused), resolved second (the repository root itself may be reached via a link).
    for there, here in ((directory, root), (directory.resolve(), root.resolve())):
        try:
            rel = there.relative_to(here)
            break
        except ValueError:
            continue
    if rel is not None and rel.parts:
        return open_verified_dir(root, rel.as_posix(), create=create)
    if create:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise path_unavailable(str(directory), exc) from None
    return open_verified_dir(directory)


def _apply_git_hook(
    hooks: VerifiedDir | None,
    directory: Path,
    name: str,
    host: str,
    *,
    install: bool,
    python: str | None,
) -> Change:
    from plangate.fsutil import FileState, atomic_write_at, read_at, remove_at

    path = directory / name
    if hooks is None:
        return Change("git", str(path), "unchanged")
    read = read_at(hooks, name, MAX_CONFIG_BYTES)
    current = read.data.decode("utf-8", "replace") if read.ok and read.data is not None else None
    managed = current is not None and MARKER in current
    if install and read.state is not FileState.MISSING and not managed:
        raise InputRejected(
            "HOOKS_GIT_HOOK_EXISTS",
            f"{path} exists and is not PlanGate's",
            f"call 'plangate hook {host}' from your hook yourself, or move it away and "
            "install again",
        )
    if install:
        script = git_hook_script(host, python)
        if current == script:
            return Change("git", str(path), "unchanged")
        atomic_write_at(hooks, name, script.encode(), mode=0o755)
        return Change("git", str(path), "written")
    if managed:
        remove_at(hooks, name)
        return Change("git", str(path), "removed")
    return Change("git", str(path), "unchanged")


def ensure_ledger(root: Path, env: Mapping[str, str], hosts: list[str]) -> None:
    """Create the ledger if needed and record the installation (hooks never create it)."""
    from plangate.ledger import open_ledger

    with open_ledger(root, env) as ledger:
        ledger.append("hooks_installed", "-", {"hosts": sorted(hosts)})


def apply(
    root: Path,
    hosts: list[str],
    *,
    install: bool,
    python: str | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Change]:
    """Install (or uninstall) PlanGate's hooks for ``hosts`` in the repository at ``root``.

    Installing also creates the ledger (when missing) and records the installation:
    the hooks themselves refuse to start a new ledger.
    """
    if install:
        ensure_ledger(root, {} if env is None else env, hosts)
    changes: list[Change] = []
    for host in hosts:
        if host == "git":
            changes += _apply_git(root, install=install, python=python)
        else:
            changes.append(_apply_json(root, host, install=install, python=python))
    return changes


def installed_commands(root: Path) -> list[tuple[str, str, str]]:
    """``(host, event, command)`` for every configured hook command in the repository.

    Reads the three JSON files (unreadable ones raise) and the git hooks.
    """
    out: list[tuple[str, str, str]] = []
    for host in ("claude", "codex"):
        config = _read_config(root, host)
        hooks = config.get("hooks", {})
        if not isinstance(hooks, dict):
            continue
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else []:
                for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                    if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                        out.append((host, str(event), hook["command"]))
    config = _read_config(root, "cursor")
    hooks = config.get("hooks", {})
    if isinstance(hooks, dict):
        for event, entries in hooks.items():
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                    out.append(("cursor", str(event), entry["command"]))
    directory = git_hooks_dir(root)
    for name, _host in GIT_HOOKS:
        path = directory / name
        if path.is_file():
            out.append(("git", name, str(path)))
    return out
