"""Fake ``ssh-keygen`` / ``ssh`` programs on a private PATH: a missing or too-old OpenSSH.

The PATH built here holds ``git`` (a link to the real one, so repositories still
work) and only the fake programs asked for; nothing else of the system's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def fake_path(
    directory: Path,
    *,
    ssh_version: str | None = None,
    keygen: str | None = None,
) -> str:
    """A PATH value: ``git``, plus ``ssh`` printing ``ssh_version`` and ``ssh-keygen`` running
    ``keygen`` (a shell body) when they are given."""
    directory.mkdir(parents=True, exist_ok=True)
    real_git = shutil.which("git")
    assert real_git is not None
    (directory / "git").symlink_to(real_git)
    if ssh_version is not None:
        _script(directory / "ssh", f"echo '{ssh_version}' >&2")
    if keygen is not None:
        _script(directory / "ssh-keygen", keygen)
    return os.fspath(directory)
