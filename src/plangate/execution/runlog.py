"""The per-task run log ``run.ndjson``: one canonical JSON object per line, fsynced.

The log is appended relative to the task directory opened from the repository
root with no link followed, at the moment of writing: a task directory (or
``docs/``, ``docs/working/``) swapped for a link is never written through, and
a log with another hard link is never appended to.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.canonical import canonical_bytes
from plangate.errors import EnvironmentFailure, PlanGateError
from plangate.fsutil import VerifiedDir, append_at, open_verified_dir
from plangate.layout import RUN_LOG_NAME, WORKING_DIR
from plangate.snapshot import check_task_id

__all__ = ["RUN_LOG_NAME", "append_run_log", "open_task_dir", "unwritable"]


def open_task_dir(repo_root: Path, task_id: str) -> VerifiedDir:
    """The task directory of ``task_id``, opened from ``repo_root`` with no link followed."""
    return open_verified_dir(repo_root, f"{WORKING_DIR}/{check_task_id(task_id)}")


def unwritable(exc: PlanGateError) -> EnvironmentFailure:
    """``EXEC_RUNLOG_UNWRITABLE`` carrying the file-system reason (its code in the message)."""
    return EnvironmentFailure(
        "EXEC_RUNLOG_UNWRITABLE",
        f"cannot append to {RUN_LOG_NAME}: {exc.code}: {exc.message}",
        exc.hint or f"make {RUN_LOG_NAME} a regular, writable file in the task directory",
    )


def append_run_log(task: VerifiedDir, entry: Mapping[str, Any]) -> None:
    """Append one canonical JSON line to ``run.ndjson`` inside the verified ``task`` and fsync.

    Refuses a symlink, FIFO or any non-regular file in the log's place, a log
    with another hard link, and a write the file system refuses
    (``EXEC_RUNLOG_UNWRITABLE``, the precise reason in the message); never
    blocks on a FIFO.
    """
    line = canonical_bytes(dict(entry)) + b"\n"
    try:
        append_at(task, RUN_LOG_NAME, line)
    except PlanGateError as exc:
        raise unwritable(exc) from None
