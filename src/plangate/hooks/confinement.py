"""Is this shell call confined by the operating system? Only what the hook can see.

Programs that run project code, and commands the classifier cannot read, are
allowed only where the operating system confines what they write. The hook
establishes one of two confinements, and assumes neither:

- **exec's isolated run** (:func:`plangate.isolation.contract.observe_box`): ``PLANGATE_TASK`` and
  :data:`BOX_ENV` (the run id) are set by ``plangate exec`` for the command it
  runs, *and* the hook observes the box: ``.plangate/`` and ``.git`` of the
  working tree are read-only mounts (``statvfs`` reports ``ST_RDONLY``), the
  run's box directory :data:`BOX_DIR` is a writable mount point of its own
  (another device than its parent's, or listed in ``/proc/self/mountinfo``:
  an unprivileged process outside a mount namespace can make neither, and
  cannot create the directory under ``/run`` at all), and its ``run.json`` (bound
  read-only by exec) names the same run and task. A variable alone proves
  nothing; mounts are what the box makes. Only then does the hook trust
  :data:`BOX_LEDGER_ENV`, the box-local ledger it records in.
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

# ruff: noqa: PTH111, PTH112, PTH114, PTH118, PTH208
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from plangate.errors import EnvironmentFailure

if TYPE_CHECKING:
    from plangate.hooks.sandbox_settings import PathFacts

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


def _normal(entry: str, root: str, *, home: str = "", relative_ok: bool = True) -> str:
    """The repository-relative path a ``denyWrite`` entry names, or ``""`` when it does
    not certainly name one.

    Claude Code reads ``//path`` as the absolute ``/path`` and ``~/path`` under the home
    directory. A single leading ``/`` meant "relative to the settings file" in some
    versions and "absolute" in others, so it is ambiguous and names nothing here. A
    relative entry resolves against the settings file's own base: the repository for
    its project files, ``~/.claude`` for the user file; only ``relative_ok`` layers (the
    project's) may count one as a repository path.
    """
    if entry.startswith("//"):
        text = entry[1:]
    elif entry.startswith("~/"):
        if not home:
            return ""
        text = home.rstrip("/") + entry[1:]
    elif entry.startswith("/") or entry.startswith("~") or not relative_ok:
        return ""
    else:
        text = entry
    if text.startswith("/"):
        prefix = root.rstrip("/") + "/"
        if not text.startswith(prefix):
            return ""
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
    home: str = "",
    project_layers: Sequence[bool] | None = None,
    facts: PathFacts | None = None,
) -> str:
    """Why Claude Code's sandbox is not established for this call (``""`` when it is).

    ``layers`` are the parsed settings files, lowest precedence first; ``None``
    for a file that exists but cannot be read. ``project_layers`` says, per layer,
    whether it is one of the repository's own settings files (the only ones whose
    relative ``denyWrite`` entries name repository paths); all of them by default.
    ``facts`` says what exists in the working tree (every path, by default): a path
    counts as named when the deny plan for those facts is (see
    :func:`plangate.hooks.sandbox_settings.deny_plan`).
    """
    from plangate.hooks.sandbox_settings import EVERYTHING_EXISTS

    facts = EVERYTHING_EXISTS if facts is None else facts
    if bypass:
        return "the tool call asks to run outside the sandbox (dangerouslyDisableSandbox)"
    effective: dict[str, Any] = {}
    excluded: list[Any] = []
    denied: set[str] = set()
    flags = [True] * len(layers) if project_layers is None else list(project_layers)
    if len(flags) != len(layers):
        return "the settings layers and their kinds do not match"
    for layer, in_project in zip(layers, flags, strict=True):
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
        denied.update(_normal(d, root, home=home, relative_ok=in_project) for d in deny)
    denied.discard("")
    for key, wanted in SANDBOX_REQUIRED.items():
        if effective.get(key) is not wanted:
            return f"sandbox.{key} is not {str(wanted).lower()}"
    if excluded:
        return "sandbox.excludedCommands runs some commands outside the sandbox"
    from plangate.hooks.sandbox_settings import claude_plan, has_glob

    # The literal paths: what task start names for these facts (a missing path by its
    # first missing component, a directory bubblewrap cannot mount read-only by its
    # entries), each named or under a named path. A glob pattern: named as it is.
    plan = claude_plan("", [p for p in protected if not has_glob(p)], facts)
    needed = [*plan.entries, *(p for p in protected if has_glob(p))]
    unnamed = [p for p in needed if not _named(_normal(p, root), denied, facts)]
    if unnamed:
        return f"sandbox.filesystem.denyWrite does not name {unnamed[0]!r}"
    return ""


def _named(path: str, denied: set[str], facts: PathFacts) -> bool:
    """Whether ``denied`` protects ``path``: it names the path or a directory above it,
    or, for a missing path, a path below it (Claude Code mounts any missing path at
    its first missing component, which the plan names)."""
    for name in denied:
        if name == path or path.startswith(name + "/"):
            return True
        if name.startswith(path + "/") and not facts.exists(path):
            return True
    return False


def path_facts(root: str, wanted: Sequence[str]) -> PathFacts:
    """What exists of ``wanted`` (repository-relative), for the deny plan (lstat only)."""
    from plangate.hooks.sandbox_settings import PathFacts, fact_paths

    tested, listed = fact_paths(wanted)
    existing = frozenset(p for p in tested if os.path.lexists(os.path.join(root, p)))
    children: dict[str, tuple[str, ...]] = {}
    for directory in listed:
        full = os.path.join(root, directory)
        if directory in existing and os.path.isdir(full) and not os.path.islink(full):
            try:
                children[directory] = tuple(sorted(os.listdir(full)))
            except OSError as exc:
                # An unlisted directory would leave its entries undenied: refuse instead.
                raise EnvironmentFailure(
                    "SANDBOX_PATHS_UNREADABLE",
                    f"{directory} cannot be listed ({exc.strerror or exc}), so the sandbox "
                    "settings cannot deny its entries",
                    f"make {directory} readable to you, then start the task again",
                ) from None
    return PathFacts(existing | {f"{d}/{c}" for d, cs in children.items() for c in cs},
                     children)


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
    project_files = set(paths[1:3])
    layers: list[Mapping[str, Any] | None] = []
    kinds: list[bool] = []
    for path in paths:
        read = _read_settings(path)
        if read is False:
            continue
        layers.append(read if isinstance(read, Mapping) else None)
        kinds.append(path in project_files)
    from plangate.hooks.sandbox_settings import claude_plan_wanted

    problem = sandbox_problem(
        layers, root=root, protected=protected, bypass=bypass, home=home,
        project_layers=kinds, facts=path_facts(root, claude_plan_wanted("", protected)),
    )
    return ("", problem) if problem else ("claude-sandbox", "")
