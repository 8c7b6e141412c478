"""Read the repository's traces of ledger entries (facts of :mod:`plangate.ledger.existence`).

Only read when a ledger is absent, so an ordinary command never pays for it.
For a SQLite ledger (one clone's), what HEAD's commit holds is left out: it came
with the clone (one ``git ls-tree`` call, only when there are traces at all).
Reads are bounded and never follow a link at the last component; a directory
that cannot be listed contributes nothing (the other traces still count).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from plangate.fsutil import read_below, read_regular_file
from plangate.layout import (
    DELIVERY_RECORD_RELPATH,
    LEDGER_CONFIG_RELPATH,
    MAX_RECORD_BYTES,
    PLANGATE_DIR,
    RECORD_RELPATH,
    RUN_LOG_NAME,
    WORKING_DIR,
)
from plangate.ledger.existence import Traces
from plangate.ledger.witness import Witness

C3_PRIME_KIND = "c3-prime"
"""``approval_kind`` of a record issued by ``plangate c3 issue``."""

IGNORE_FILE_HEADER = b"# written by plangate: the local ledger database is not source\n"
"""First line of the ``.plangate/.gitignore`` PlanGate writes beside a new default ledger."""

SQLITE_SIDECAR_SUFFIXES = ("-wal", "-shm", "-journal")

_MAX_CONFIG_BYTES = 256 * 1024


def _task_dirs(root: Path) -> list[str]:
    try:
        with os.scandir(root / WORKING_DIR) as entries:
            return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _is_issued_record(path: Path) -> bool:
    read = read_regular_file(path, MAX_RECORD_BYTES)
    if not read.ok or read.data is None:
        return False
    try:
        value = json.loads(read.data)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("approval_kind") == C3_PRIME_KIND


def _config_names_a_ledger(root: Path) -> bool:
    read = read_below(root, Path(LEDGER_CONFIG_RELPATH).as_posix(), _MAX_CONFIG_BYTES)
    if not read.ok or read.data is None:
        return False
    import tomllib

    try:
        config = tomllib.loads(read.data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    section = config.get("ledger")
    return isinstance(section, dict) and "url" in section


def _ignore_file(root: Path) -> bool:
    read = read_below(root, f"{PLANGATE_DIR}/.gitignore", 64 * 1024)
    return bool(read.ok and read.data is not None and read.data.startswith(IGNORE_FILE_HEADER))


def _committed(repo_root: Path, paths: list[str]) -> set[str]:
    """Which of ``paths`` HEAD's commit holds (nothing when there is no commit or no
    repository; everything counts when git cannot answer: fail closed)."""
    from plangate.git import Git, GitError
    from plangate.githead import git_dirs

    if not paths or git_dirs(str(repo_root)) is None:
        return set()
    git = Git(repo_root)
    try:
        head = git.resolve_commit("HEAD")
        return {entry.path for entry in git.ls_tree(head, paths)}
    except GitError:
        return set()


def gather_traces(
    repo_root: Path,
    sqlite_path: Path | None = None,
    *,
    default_location: bool = False,
    witness: Witness | None = None,
) -> Traces:
    """The traces in ``repo_root`` (and beside ``sqlite_path``, the SQLite ledger's file).

    The ledger's ignore file speaks only for the default SQLite ledger
    (``default_location``), the journal files only for ``sqlite_path``. A SQLite
    ledger is one clone's: the traces HEAD's commit holds are left out (they came
    with the clone); ``witness`` is that clone's witness as read.
    """
    issued: list[str] = []
    runs: list[str] = []
    deliveries: list[str] = []
    for name in _task_dirs(repo_root):
        task = repo_root / WORKING_DIR / name
        if os.path.lexists(task / RUN_LOG_NAME):
            runs.append(f"{WORKING_DIR}/{name}/{RUN_LOG_NAME}")
        if os.path.lexists(task / DELIVERY_RECORD_RELPATH):
            deliveries.append(f"{WORKING_DIR}/{name}/{DELIVERY_RECORD_RELPATH}")
        if _is_issued_record(task / RECORD_RELPATH):
            issued.append(f"{WORKING_DIR}/{name}/{RECORD_RELPATH}")
    sidecars: list[str] = []
    if sqlite_path is not None:
        for suffix in SQLITE_SIDECAR_SUFFIXES:
            candidate = f"{sqlite_path}{suffix}"
            if os.path.lexists(candidate):
                sidecars.append(candidate)
    config = LEDGER_CONFIG_RELPATH if _config_names_a_ledger(repo_root) else None
    ignore = f"{PLANGATE_DIR}/.gitignore" if default_location and _ignore_file(repo_root) else None
    if sqlite_path is not None:
        found = [*issued, *runs, *deliveries, *(p for p in (config, ignore) if p is not None)]
        committed = _committed(repo_root, found)
        issued, runs, deliveries = (
            [p for p in paths if p not in committed] for paths in (issued, runs, deliveries)
        )
        config = None if config in committed else config
        ignore = None if ignore in committed else ignore
    present = witness is not None and witness.state == "present"
    unreadable = witness is not None and witness.state == "unreadable"
    return Traces(
        witness=f"{witness.path} (created {witness.detail})"
        if present and witness is not None
        else None,
        witness_problem=f"{witness.path} cannot be used: {witness.detail}"
        if unreadable and witness is not None
        else None,
        issued_records=tuple(issued),
        run_logs=tuple(runs),
        delivery_logs=tuple(deliveries),
        ledger_config=config,
        ledger_ignore_file=ignore,
        sqlite_sidecars=tuple(sidecars),
    )
