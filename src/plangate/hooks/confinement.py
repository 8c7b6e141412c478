"""Is this shell call confined by the operating system? Only what the hook can see.

Programs that run project code, and commands the classifier cannot read, are
allowed only where the operating system confines what they write. The hook
establishes one of two confinements, and assumes neither:

- **exec's isolated run**: ``PLANGATE_TASK`` and :data:`BOX_ENV` (the sandbox
  backend, ``bwrap`` or ``seatbelt``) are set by ``plangate exec`` for the
  command it runs, *and* the hook observes the box: ``.plangate/`` and ``.git``
  of the working tree are read-only mounts (``statvfs`` reports ``ST_RDONLY``).
  A variable alone proves nothing; a read-only mount is what the box makes.
- **Claude Code's sandbox** (``sandbox`` in its settings files): effective
  ``enabled: true``, ``failIfUnavailable: true`` and
  ``allowUnsandboxedCommands: false``, no ``excludedCommands`` in any layer,
  ``filesystem.denyWrite`` naming every path of :data:`SANDBOX_DENY_REQUIRED`
  and every protected-surface pattern, and a tool call that does not ask for
  ``dangerouslyDisableSandbox``. Layers, lowest first: the user's
  ``~/.claude/settings.json``, the project's ``.claude/settings.json``, its
  ``.claude/settings.local.json``, then the managed settings file. A file that
  cannot be read strictly, or a value of the wrong type, establishes nothing.

Codex and Cursor do not tell their hooks which sandbox a call runs in, so no
confinement is established there.
"""

# ruff: noqa: PTH111, PTH118
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

BOX_ENV = "PLANGATE_BOX"
"""Set by ``plangate exec``'s isolated run for its command: the backend's name."""

BOX_BACKENDS = frozenset({"bwrap", "seatbelt"})
BOX_READ_ONLY = (".plangate", ".git")
"""Paths the isolated run mounts read-only; the hook checks each is."""

SANDBOX_REQUIRED: dict[str, bool] = {
    "enabled": True,
    "failIfUnavailable": True,
    "allowUnsandboxedCommands": False,
}
SANDBOX_DENY_REQUIRED = (".plangate", ".git", ".claude", ".codex", ".cursor", "docs/working")
"""Paths the Claude Code sandbox must deny writes to before the hook relies on it."""

MANAGED_SETTINGS = (
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
)
MAX_SETTINGS_BYTES = 1024 * 1024


def exec_box(root: str, env: Mapping[str, str]) -> str:
    """``"exec:<backend>"`` when the hook runs inside exec's isolated run, else ``""``."""
    backend = env.get(BOX_ENV, "")
    if backend not in BOX_BACKENDS or not env.get("PLANGATE_TASK"):
        return ""
    for relative in BOX_READ_ONLY:
        try:
            info = os.statvfs(os.path.join(root, relative))
        except OSError:
            return ""
        if not info.f_flag & os.ST_RDONLY:
            return ""
    return f"exec:{backend}"


def _normal(entry: str, root: str) -> str:
    text = entry[1:] if entry.startswith("//") else entry  # '//path' is the absolute '/path'
    prefix = root.rstrip("/") + "/"
    if text.startswith(prefix):
        text = text[len(prefix) :]
    while text.startswith("./"):
        text = text[2:]
    for suffix in ("/**", "/"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
    return text


def sandbox_problem(
    layers: Sequence[Mapping[str, Any] | None],
    *,
    root: str,
    protected: Sequence[str],
    bypass: bool,
) -> str:
    """Why Claude Code's sandbox is not established for this call (``""`` when it is).

    ``layers`` are the parsed settings files, lowest precedence first; ``None``
    for a file that exists but cannot be read.
    """
    if bypass:
        return "the tool call asks to run outside the sandbox (dangerouslyDisableSandbox)"
    effective: dict[str, Any] = {}
    excluded: list[Any] = []
    denied: set[str] = set()
    for layer in layers:
        if layer is None:
            return "a Claude Code settings file cannot be read"
        sandbox = layer.get("sandbox")
        if sandbox is None:
            continue
        if not isinstance(sandbox, dict):
            return "a settings file's 'sandbox' is not an object"
        for key in SANDBOX_REQUIRED:
            if key in sandbox:
                effective[key] = sandbox[key]
        commands = sandbox.get("excludedCommands", [])
        if not isinstance(commands, list):
            return "sandbox.excludedCommands is not a list"
        excluded.extend(commands)
        filesystem = sandbox.get("filesystem", {})
        if not isinstance(filesystem, dict):
            return "sandbox.filesystem is not an object"
        deny = filesystem.get("denyWrite", [])
        if not isinstance(deny, list) or not all(isinstance(d, str) for d in deny):
            return "sandbox.filesystem.denyWrite is not a list of paths"
        denied.update(_normal(d, root) for d in deny)
    for key, wanted in SANDBOX_REQUIRED.items():
        if effective.get(key) is not wanted:
            return f"sandbox.{key} is not {str(wanted).lower()}"
    if excluded:
        return "sandbox.excludedCommands runs some commands outside the sandbox"
    missing = [p for p in (*SANDBOX_DENY_REQUIRED, *protected) if _normal(p, root) not in denied]
    if missing:
        return f"sandbox.filesystem.denyWrite does not name {missing[0]!r}"
    return ""


def _read_settings(path: str) -> Mapping[str, Any] | bool | None:
    """The parsed file; ``False`` when it does not exist; ``None`` when unreadable."""
    from plangate.canonical import StrictJSONError, strict_loads_object
    from plangate.fsutil import read_regular_file

    if not os.path.lexists(path):
        return False
    read = read_regular_file(path, MAX_SETTINGS_BYTES)
    if not read.ok or read.data is None:
        return None
    try:
        return strict_loads_object(read.data, "settings")
    except (StrictJSONError, ValueError):
        return None


def claude_sandbox(
    root: str, env: Mapping[str, str], protected: Sequence[str], *, bypass: bool
) -> tuple[str, str]:
    """``("claude-sandbox", "")`` when established, else ``("", why not)``."""
    home = env.get("HOME") or os.path.expanduser("~")
    paths = [
        os.path.join(home, ".claude", "settings.json"),
        os.path.join(root, ".claude", "settings.json"),
        os.path.join(root, ".claude", "settings.local.json"),
        *MANAGED_SETTINGS,
    ]
    layers: list[Mapping[str, Any] | None] = []
    for path in paths:
        read = _read_settings(path)
        if read is False:
            continue
        layers.append(read if isinstance(read, Mapping) else None)
    problem = sandbox_problem(layers, root=root, protected=protected, bypass=bypass)
    return ("", problem) if problem else ("claude-sandbox", "")
