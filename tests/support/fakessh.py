"""Fake ``ssh-keygen`` / ``ssh`` programs: a missing or too-old OpenSSH.

:func:`fake_path` builds a directory holding ``git`` (a link to the real one, so
repositories still work) and only the fake programs asked for. PlanGate never
looks on ``PATH``; :func:`use_fakes` makes its program lookup
(:mod:`plangate.sysbin`) see that directory alone, the way a person would: the
system directories are swapped for an empty one, and the person's own
``programs.toml`` names the fake ``ssh-keygen`` when there is one.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from plangate import sysbin


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


def use_fakes(monkeypatch: pytest.MonkeyPatch, directory: str) -> None:
    """Make PlanGate find its programs only in ``directory`` (built by :func:`fake_path`)."""
    monkeypatch.setenv("PATH", directory)
    empty = Path(directory).parent / "no-system-programs"
    empty.mkdir(exist_ok=True)
    config = Path(directory).parent / "person-config"
    config.mkdir(exist_ok=True)
    monkeypatch.setattr(sysbin, "SYSTEM_BIN_DIRS", (os.fspath(empty),))
    monkeypatch.setattr(sysbin, "user_config_dir", lambda: config)
    # git is found as ssh-keygen is: the person's programs.toml names the real one here.
    real_git = os.path.realpath(Path(directory) / "git")
    lines = [f'git = "{real_git}"']
    keygen = Path(directory) / "ssh-keygen"
    if keygen.exists():
        lines.append(f'ssh-keygen = "{keygen}"')
    programs = config / sysbin.PROGRAMS_FILE
    programs.write_text("\n".join(lines) + "\n")
    programs.chmod(0o644)
