"""The per-task run log ``run.ndjson``: one canonical JSON object per line, fsynced."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.canonical import canonical_bytes
from plangate.errors import EnvironmentFailure
from plangate.layout import RUN_LOG_NAME
from plangate.snapshot import task_dir_for

__all__ = ["RUN_LOG_NAME", "append_run_log", "run_log_path"]


def run_log_path(repo_root: Path, task_id: str) -> Path:
    """Where ``task_id``'s run log lives (inside its task directory)."""
    return task_dir_for(repo_root, task_id) / RUN_LOG_NAME


def append_run_log(path: Path, entry: Mapping[str, Any]) -> None:
    """Append one canonical JSON line to ``path`` and fsync it.

    Refuses a symlink, FIFO or any non-regular file in the log's place
    (``EXEC_RUNLOG_UNWRITABLE``); never blocks on a FIFO.
    """
    line = canonical_bytes(dict(entry)) + b"\n"
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise EnvironmentFailure(
            "EXEC_RUNLOG_UNWRITABLE",
            f"cannot open {path.name}: {exc.strerror or exc}",
            f"make {path.name} a regular, writable file in the task directory (or remove it)",
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise EnvironmentFailure(
                "EXEC_RUNLOG_UNWRITABLE",
                f"{path.name} is not a regular file",
                f"remove {path.name}; plangate recreates it",
            )
        os.write(fd, line)
        os.fsync(fd)
    except OSError as exc:
        raise EnvironmentFailure(
            "EXEC_RUNLOG_UNWRITABLE",
            f"cannot write {path.name}: {exc.strerror or exc}",
            "check free space and permissions",
        ) from None
    finally:
        os.close(fd)
