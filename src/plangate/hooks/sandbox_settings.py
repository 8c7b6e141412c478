"""The host sandbox settings of a task session, as data: what to write and how to undo it.

Pure functions over parsed settings (no IO; :mod:`plangate.hooks.host_sandbox` reads
and writes the files):

- :func:`writable_dirs`: the task's writable directories from its allowed paths;
- :func:`deny_plan`: which paths a ``denyWrite`` list may name so that bubblewrap
  still starts (the rule below), and how each path it cannot name is protected;
- :func:`claude_paths`: Claude Code's ``sandbox.filesystem.allowWrite`` and
  ``denyWrite`` entries, absolute with ``//`` (absolute in every Claude Code
  version; a single ``/`` meant "relative to the settings file" in older ones);
- :func:`apply_claude` / :func:`revert_claude`: merge PlanGate's ``sandbox`` into the
  user's settings with a record of the previous values, and take exactly that back;
- :func:`codex_block` / :func:`apply_codex` / :func:`revert_codex`: PlanGate's lines
  in ``.codex/config.toml`` (``sandbox_mode``, ``sandbox_workspace_write.*`` as
  dotted keys before any table), refused when the file already sets the sandbox;
- :func:`parse_hosts`: the ``--sandbox`` option.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from plangate.errors import InputRejected, UsageError
from plangate.records import NamedTuple

HOSTS = ("claude", "codex")
CLAUDE_LOCAL = ".claude/settings.local.json"
CODEX_CONFIG = ".codex/config.toml"
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


def has_glob(pattern: str) -> bool:
    """True when ``pattern`` still holds a glob once a trailing ``/**`` is read as its directory."""
    text = pattern[: -len("/**")] if pattern.endswith("/**") else pattern
    return any(c in text for c in "*?[{")


# -- which paths a denyWrite list may name ------------------------------------------------
#
# How Claude Code's sandbox turns ``denyWrite`` into bubblewrap mounts on Linux (measured
# with Claude Code 2.1.197): an existing path is bound read-only onto itself; a missing
# path gets a read-only mount at its *first missing component* (``/dev/null`` when that
# component is the path itself, else an empty directory), so nothing can be created there
# or below. bubblewrap creates that mount point in the parent directory, so it fails, and
# every sandboxed command with it ("Can't create file at ...: Read-only file system"),
# when the parent is already read-only: a missing path under a denied path. The same
# happens when two entries share a missing first component in different shapes (``/dev/null``
# at ``.cursor``, then a directory wanted at ``.cursor``). Claude Code adds entries of its
# own, some after the user's: those must be counted too.

CLAUDE_OWN_DENY_AFTER = (".claude/commands", ".claude/agents")
"""Paths Claude Code denies itself *after* the settings' entries (measured with 2.1.197).

When one of them is missing, a read-only directory above it makes bubblewrap fail: such a
directory (``.claude``) is never denied whole; its existing entries are, one by one. The
paths Claude Code denies before the settings' entries (``.claude/settings.json``,
``.claude/skills``, ``.claude/hooks``, ``.git/hooks``, ``.git/config.lock`` ...) do not
stop a read-only parent."""


class PathFacts(NamedTuple):
    """What exists in the working tree, for :func:`deny_plan` (repository-relative paths).

    ``existing`` holds the paths that exist (the wanted paths, their ancestors, the
    host's own entries); ``children`` the entries of each existing directory that
    cannot be denied whole. ``everything`` is a stand-in for a tree where every path
    exists (what the settings alone can say, without looking at the disk).
    """

    existing: frozenset[str] = frozenset()
    children: Mapping[str, tuple[str, ...]] = {}
    everything: bool = False

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` exists (the root ``""`` always does)."""
        return self.everything or not rel or rel in self.existing

    def with_file(self, rel: str) -> PathFacts:
        """These facts once ``rel`` (whose directory exists) is written."""
        directory, _, name = rel.rpartition("/")
        children = dict(self.children)
        if directory in children or not self.exists(directory):
            children[directory] = tuple(sorted({*children.get(directory, ()), name}))
        parts = rel.split("/")
        made = {"/".join(parts[:count]) for count in range(1, len(parts) + 1)}
        return PathFacts(self.existing | made, children, self.everything)


EVERYTHING_EXISTS = PathFacts(everything=True)


class DenyGap(NamedTuple):
    """A path the sandbox cannot deny as a whole, and what protects it instead."""

    path: str
    why: str


class DenyPlan(NamedTuple):
    """What ``denyWrite`` names (repository-relative) and the gaps left to other layers."""

    entries: tuple[str, ...]
    gaps: tuple[DenyGap, ...]


def _under(path: str, ancestor: str) -> bool:
    return path == ancestor or path.startswith(ancestor + "/")


def _first_missing(path: str, facts: PathFacts) -> str:
    """The shortest prefix of ``path`` that does not exist (``path`` has a missing part)."""
    parts = path.split("/")
    for count in range(1, len(parts) + 1):
        prefix = "/".join(parts[:count])
        if not facts.exists(prefix):
            return prefix
    return path


GAP_HOOKS = (
    "the PreToolUse hook denies agent writes there and the commit and CI checks "
    "reject changes to it; a sandboxed command can still create it"
)


def deny_plan(
    wanted: Sequence[str], facts: PathFacts, host_after: Sequence[str] = CLAUDE_OWN_DENY_AFTER
) -> DenyPlan:
    """The ``denyWrite`` paths that protect ``wanted`` and keep every command startable.

    Rules, in order, for each wanted path (outermost first; repository-relative, no glob):

    1. already under a named path: nothing to add (its parent is read-only already);
    2. it exists and no host entry that is missing lies below it: name it;
    3. it exists but a missing host entry lies below it: name its existing entries one
       by one (the same rules); new names directly inside it are a gap;
    4. it is missing: name its first missing component (the mount Claude Code makes
       anyway), unless a missing host entry lies below that component: then a gap.

    No entry names a missing path below another named or missing path, so bubblewrap
    can make every mount point.
    """
    entries: list[str] = []
    gaps: list[DenyGap] = []

    def covered(path: str) -> bool:
        return any(_under(path, entry) for entry in entries)

    def blockers(path: str) -> list[str]:
        return [h for h in host_after if h != path and _under(h, path) and not facts.exists(h)]

    def place(path: str) -> None:
        if covered(path):
            return
        if facts.exists(path):
            blocking = blockers(path)
            if not blocking:
                entries.append(path)
                return
            gaps.append(DenyGap(path, (
                f"new entries directly in {path}/ (the sandbox cannot deny {path}/ as a "
                f"whole while {blocking[0]} is missing: Claude Code mounts that path "
                f"itself after PlanGate's): {GAP_HOOKS}"
            )))
            for child in sorted(facts.children.get(path, ())):
                place(f"{path}/{child}")
            return
        component = _first_missing(path, facts)
        if covered(component):
            return
        blocking = blockers(component)
        if blocking:
            gaps.append(DenyGap(path, (
                f"{path} is missing and {blocking[0]} below it is mounted by Claude Code "
                f"itself: {GAP_HOOKS}"
            )))
            return
        entries.append(component)

    for path in sorted(dict.fromkeys(wanted), key=lambda p: (p.count("/"), p)):
        place(path)
    return DenyPlan(tuple(entries), tuple(gaps))


def literal_path(pattern: str) -> str:
    """The repository-relative path a glob-free pattern names (``a/b/**`` is ``a/b``)."""
    text = pattern
    while text.startswith("./"):
        text = text[2:]
    if text.endswith("/**"):
        text = text[: -len("/**")]
    return text.strip("/")


def fact_paths(wanted: Sequence[str], host_after: Sequence[str] = CLAUDE_OWN_DENY_AFTER) -> tuple[
    list[str], list[str]
]:
    """``(paths to test for existence, directories to list)`` for :func:`deny_plan`.

    The wanted paths and the host's entries with all their ancestors; the existing
    proper ancestors of a host entry are the directories that may need listing.
    """
    paths: dict[str, None] = {}
    for path in (*wanted, *host_after):
        parts = path.split("/")
        for count in range(1, len(parts) + 1):
            paths["/".join(parts[:count])] = None
    listed = {h.rsplit("/", 1)[0] for h in host_after if "/" in h}
    ancestors: dict[str, None] = {}
    for directory in listed:
        parts = directory.split("/")
        for count in range(1, len(parts) + 1):
            ancestors["/".join(parts[:count])] = None
    return list(paths), list(ancestors)


def claude_plan_wanted(task_id: str, protected: Sequence[str]) -> list[str]:
    """The literal paths the Claude Code sandbox protects: PlanGate's required paths,
    the task's directory (none for an empty id) and every glob-free protected pattern."""
    from plangate.hooks.confinement import SANDBOX_DENY_REQUIRED

    task_dir = (f"docs/working/{task_id}",) if task_id else ()
    literal = (literal_path(p) for p in (*SANDBOX_DENY_REQUIRED, *task_dir, *protected)
               if not has_glob(p))
    return [path for path in dict.fromkeys(literal) if path]


def claude_plan(task_id: str, protected: Sequence[str], facts: PathFacts) -> DenyPlan:
    """The deny plan for a task (:func:`claude_plan_wanted` through :func:`deny_plan`);
    the protected patterns with a glob are named as they are, outside the plan."""
    return deny_plan(claude_plan_wanted(task_id, protected), facts)


def claude_paths(
    root: str,
    task_id: str,
    allowed_paths: Sequence[str],
    protected: Sequence[str],
    matches: Sequence[str] = (),
    *,
    facts: PathFacts = EVERYTHING_EXISTS,
) -> tuple[list[str], list[str]]:
    """``(allowWrite, denyWrite)`` entries for the task, absolute with ``//``.

    ``denyWrite`` holds :func:`claude_plan`'s paths for ``facts`` (PlanGate's required
    paths, the task's directory and the glob-free protected patterns, shaped so that
    bubblewrap starts), every protected pattern with a glob as it is, then
    ``matches``: the files that exist now and match a pattern with a glob (Claude Code
    on Linux does not apply a glob in the middle of a path, so each such file is named
    as well) unless a named path already holds them.
    """
    allow = [_absolute(root, d) for d in writable_dirs(allowed_paths)]
    plan = claude_plan(task_id, protected, facts)
    named = list(plan.entries)
    deny: list[str] = []
    globs = [p for p in protected if has_glob(p)]
    kept = [m for m in matches if not any(_under(literal_path(m), e) for e in named)]
    for path in (*named, *globs, *kept):
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
        raise invalid(CLAUDE_LOCAL, "its 'sandbox' is not an object")
    filesystem = sandbox.setdefault("filesystem", {})
    if not isinstance(filesystem, dict):
        raise invalid(CLAUDE_LOCAL, "its 'sandbox.filesystem' is not an object")
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
            raise invalid(CLAUDE_LOCAL, f"its 'sandbox.filesystem.{key}' is not a list of paths")
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


def codex_block(
    root: str, allowed_paths: Sequence[str], facts: PathFacts = EVERYTHING_EXISTS
) -> str:
    """PlanGate's lines at the top of ``.codex/config.toml`` (dotted keys: no table header).

    ``writable_roots`` names only the task's writable directories that exist: Codex's
    sandbox on Linux bind-mounts each root, and one that is missing makes bubblewrap
    fail every command ("Can't bind mount ... No such file or directory", measured with
    Codex 0.171.0). A missing one loses nothing: ``workspace-write`` lets commands
    write the working directory (the repository) anyway, except ``.git`` and
    ``.codex``.
    """
    roots = ", ".join(
        _toml_string(root.rstrip("/") + "/" + d)
        for d in writable_dirs(allowed_paths)
        if facts.exists(d)
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
        raise invalid(CODEX_CONFIG, f"it is not TOML ({exc})") from None
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
        raise invalid(CODEX_CONFIG, "PlanGate's block would not be read as written")
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


def invalid(rel: str, why: str) -> InputRejected:
    """``TASK_SANDBOX_SETTINGS_INVALID`` for ``rel``: the file is left as it is."""
    return InputRejected(
        "TASK_SANDBOX_SETTINGS_INVALID",
        f"{rel} cannot be used: {why}; it was left as it is",
        f"fix or remove {rel} (or start with --sandbox none), then try again",
    )


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
