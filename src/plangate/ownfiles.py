"""Files PlanGate never blames: its own runtime state and a host's local settings (pure).

The post-hoc checks compare the working tree or a commit range with what an
agent may change: PostToolUse and Stop (the working tree against HEAD), the git
hooks (the staged paths, the pushed range) and ``ci check`` (the pull request).
Some files in those listings are nobody's change: PlanGate writes them itself
(the ledger, locks, the task session, exec's runs and run log, doctor's
canary), or a host writes them on a person's behalf (Claude Code's
``.claude/settings.local.json``, written when a person clicks "don't ask again"
and by ``task start`` for the host sandbox). :data:`OWN_FILES` lists them once,
as an ordered table; :func:`never_blamed` is the one rule every check asks.

Two kinds of row:

- ``LOCAL`` files live only in one working tree and are never committed:
  ``plangate setup`` git-ignores each of them (:func:`setup_ignore_lines`).
  The working-tree checks (``EFFECT``) skip them. A commit, push or pull
  request that carries one anyway (``git add -f``) is judged like any other
  path, so they cannot reach history unreviewed.
- ``COMMITTED`` files belong to the repository: PlanGate's own ignore file
  ``.plangate/.gitignore`` (it can only ignore files inside ``.plangate/``) and
  delivery's record of a task (written only by ``plangate delivery``; a row written
  behind its back is found against the ledger, ``DELIVERY_RECORD_NOT_IN_LEDGER``).
  No check counts them as changes.

This is no exemption for an agent's tool calls: a write an agent asks for is
judged before it runs (PreToolUse), where every path here stays guarded
(``HOOK_PLANGATE_STATE``, ``HOOK_CONFIG_FILE``). The table only stops the
after-the-fact comparisons from blaming state nobody's tool call wrote.

Not listed, on purpose: ``CLAUDE.local.md`` (a person's instructions to the
agent: a protected surface, and a file an escaped write could plant; a person
who keeps one ignores it in ``.git/info/exclude``), ``.codex/config.toml`` and
Cursor's files (team configuration that may be committed).
"""

from __future__ import annotations

from collections.abc import Sequence

from plangate.layout import (
    CLAUDE_LOCAL_SETTINGS_RELPATH,
    DELIVERY_RECORD_RELPATH,
    DOCTOR_CANARY_RELPATH,
    LOCK_DIR_RELPATH,
    PLANGATE_DIR,
    PLANGATE_IGNORE_RELPATH,
    RUN_LOG_NAME,
    RUNS_DIR_RELPATH,
    SESSION_DIR_RELPATH,
    SQLITE_LEDGER_RELPATH,
    WORKING_DIR,
)
from plangate.paths import CanonicalPath, compiled_patterns, match_any
from plangate.records import NamedTuple

LOCAL = "local"
"""Lives in one working tree only; setup git-ignores it."""
COMMITTED = "committed"
"""Part of the repository."""

WORKTREE = "worktree"
"""A check of the working tree against HEAD (PostToolUse, Stop)."""
HISTORY = "history"
"""A check of commits: the staged paths, the pushed range, a pull request."""


class OwnFile(NamedTuple):
    """One row: the files a pattern names, who writes them and how they are kept."""

    pattern: str
    writer: str
    what: str
    kept: str
    ignore_line: str = ""
    """The ``.gitignore`` line ``plangate setup`` writes for it (``LOCAL`` rows)."""


OWN_FILES: tuple[OwnFile, ...] = (
    OwnFile(SQLITE_LEDGER_RELPATH, "plangate", "the SQLite ledger", LOCAL,
            f"/{SQLITE_LEDGER_RELPATH}*"),
    OwnFile(f"{SQLITE_LEDGER_RELPATH}-*", "plangate", "the ledger's journal files", LOCAL,
            f"/{SQLITE_LEDGER_RELPATH}*"),
    OwnFile(f"{LOCK_DIR_RELPATH}/**", "plangate", "lock files of exec, delivery and overrides",
            LOCAL, f"/{LOCK_DIR_RELPATH}/"),
    OwnFile(f"{PLANGATE_DIR}/*.lock", "plangate", "lock files of evaluation runs", LOCAL,
            f"/{PLANGATE_DIR}/*.lock"),
    OwnFile(f"{SESSION_DIR_RELPATH}/**", "plangate", "task sessions and their baselines", LOCAL,
            f"/{SESSION_DIR_RELPATH}/"),
    OwnFile(f"{RUNS_DIR_RELPATH}/**", "plangate", "exec's isolated runs", LOCAL,
            f"/{RUNS_DIR_RELPATH}/"),
    OwnFile(DOCTOR_CANARY_RELPATH, "plangate", "doctor's canary", LOCAL,
            f"/{DOCTOR_CANARY_RELPATH}"),
    OwnFile(f"{WORKING_DIR}/*/{RUN_LOG_NAME}", "plangate", "exec's run log of a task", LOCAL,
            f"/{WORKING_DIR}/*/{RUN_LOG_NAME}"),
    OwnFile(CLAUDE_LOCAL_SETTINGS_RELPATH, "host",
            "Claude Code's local settings (a person's 'don't ask again', the task sandbox)",
            LOCAL, f"/{CLAUDE_LOCAL_SETTINGS_RELPATH}"),
    OwnFile(PLANGATE_IGNORE_RELPATH, "plangate", "PlanGate's own ignore file", COMMITTED),
    OwnFile(f"{WORKING_DIR}/*/{DELIVERY_RECORD_RELPATH}", "plangate",
            "delivery's chained record of a task (each row anchored in the ledger)", COMMITTED),
)
"""Files PlanGate never blames, in order (see the module docstring)."""

_WORKTREE_PATTERNS = tuple(row.pattern for row in OWN_FILES)
_HISTORY_PATTERNS = tuple(row.pattern for row in OWN_FILES if row.kept == COMMITTED)


def own_file(path: str) -> OwnFile | None:
    """The row naming ``path`` (case-sensitive, as git spells it), or None."""
    hit = match_any(_WORKTREE_PATTERNS, path)
    return None if hit is None else next(row for row in OWN_FILES if row.pattern == hit)


def never_blamed(path: str, check: str) -> bool:
    """True when ``path`` is not counted as a change by a ``check`` (:data:`WORKTREE` or
    :data:`HISTORY`): every row in the working tree, only ``COMMITTED`` rows in history."""
    patterns = _WORKTREE_PATTERNS if check == WORKTREE else _HISTORY_PATTERNS
    return match_any(patterns, path) is not None


def never_blamed_of(paths: Sequence[CanonicalPath], check: str) -> list[CanonicalPath]:
    """The paths of ``paths`` that :func:`never_blamed` names, in order, for paths
    :func:`plangate.paths.canonical_path` already accepted: the rows compiled once, each
    path matched as it is (a check that validated its paths once does not validate them
    again)."""
    patterns = _WORKTREE_PATTERNS if check == WORKTREE else _HISTORY_PATTERNS
    compiled = compiled_patterns(patterns)
    if compiled is None:  # a row that does not validate: the checking path refuses it
        return [path for path in paths if never_blamed(path, check)]
    return compiled.matching_canonical(paths)


def owned_directories() -> tuple[str, ...]:
    """Directories PlanGate owns whole (``X/**`` rows with a literal ``X``): a working-tree
    listing need not descend into them (exec's runs hold whole workspaces)."""
    out: list[str] = []
    for row in OWN_FILES:
        head, _sep, tail = row.pattern.rpartition("/")
        if tail == "**" and not any(c in head for c in "*?[]{}") and head not in out:
            out.append(head)
    return tuple(out)


def setup_ignore_lines() -> tuple[str, ...]:
    """The ``.gitignore`` lines that keep every ``LOCAL`` row out of commits, in order."""
    out: list[str] = []
    for row in OWN_FILES:
        if row.kept == LOCAL and row.ignore_line and row.ignore_line not in out:
            out.append(row.ignore_line)
    return tuple(out)
