"""Helpers for tests that run real boxes: a plain policy, a world-readable scratch directory."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from plangate.isolation.backend import Backend, probe_all, select_backend
from plangate.isolation.policy import (
    Hidden,
    Limits,
    Mount,
    ProxyAccess,
    SandboxPolicy,
    allowed_env,
)
from plangate.isolation.views import system_view

SRC = str(Path(__file__).resolve().parents[2] / "src")
SYSTEM_PYTHON = "/usr/bin/python3"


def backend_or_fail() -> Backend:
    """The backend of this machine; a Linux test machine without one is a failure, not a skip."""
    if not sys.platform.startswith(("linux", "darwin")):
        pytest.skip("no sandbox backend exists for this platform")
    statuses = probe_all()
    if not any(s.available for s in statuses):
        pytest.fail(
            "no sandbox backend works here: "
            + "; ".join(s.detail for s in statuses)
            + " (scripts/test.sh installs bubblewrap)"
        )
    return select_backend()


def policy(
    writable: tuple[Mount, ...] = (),
    *,
    visible_extra: tuple[str, ...] = (),
    hidden: tuple[Hidden, ...] = (),
    read_only: tuple[Mount, ...] = (),
    network: bool = False,
    proxy: ProxyAccess | None = None,
    limits: Limits | None = None,
    cwd: str = "/",
    env: dict[str, str] | None = None,
) -> SandboxPolicy:
    """A box showing the system (and ``visible_extra``) with the given writable mounts."""
    base_env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"}
    return SandboxPolicy(
        visible=system_view(visible_extra),
        writable=writable,
        read_only=read_only,
        hidden=hidden,
        network=network,
        limits=limits or Limits(wall_seconds=60, output_bytes=1 << 20),
        env=allowed_env(env or base_env, tuple((env or base_env).keys())),
        cwd=cwd,
        proxy=proxy,
    )


@contextmanager
def shared_dir() -> Iterator[Path]:
    """A scratch directory every local user can enter (for boxes run as another user)."""
    path = Path(tempfile.mkdtemp(prefix="plangate-box-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def unprivileged_prefix() -> list[str] | None:
    """The command prefix that runs a program as ``nobody`` (None when that is impossible)."""
    if os.getuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--reset-env"]
