"""A real Ray cluster on loopback for the ``ray`` tests: a head and a worker node, each
started by ``ray start`` as its own processes, in a private temporary directory, and
always stopped (``ray stop --force``) however the test ends.

The head takes one CPU and the worker node one, so two trials run at once. Each node's
processes get ``TMPDIR`` set to a directory of the test, so a test can find a trial's
working directory there (``trial_dirs``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_BESIDE = Path(sys.executable).parent / "ray"
RAY = str(_BESIDE) if _BESIDE.exists() else (shutil.which("ray") or "ray")
"""Ray's command line: the one installed with this interpreter (a virtual environment's),
else the one on PATH (a system Python's scripts live in /usr/local/bin)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    """A running cluster: its address and the worker processes' temporary directory."""

    address: str
    node_tmps: tuple[Path, ...]
    auth: dict[str, str]
    """What a driver needs to connect (Ray's token authentication, on as in production)."""

    def trial_dirs(self) -> list[Path]:
        """Working directories of trials running on the cluster's nodes now."""
        found: list[Path] = []
        for base in self.node_tmps:
            found += sorted(base.glob("plangate-ray-*/trial"))
        return found


def _env(tmp: Path, extra: dict[str, str] | None = None,
         auth: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ | (extra or {})
    env = {k: v for k, v in env.items() if not k.startswith("RAY_")} | (auth or {})
    return env | {
        "TMPDIR": str(tmp),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_DISABLE_DOCKER_CPU_WARNING": "1",
    }


def _start(args: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run([RAY, "start", *args], env=env, capture_output=True, text=True,
                          check=False, stdin=subprocess.DEVNULL, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"ray start {' '.join(args)} failed: {proc.stdout}{proc.stderr}")


@contextlib.contextmanager
def ray_cluster(env: dict[str, str] | None = None) -> Iterator[Cluster]:
    """Start the head, then the worker node (both with ``env`` over this process's
    environment: what a team's nodes hold, such as an agent host on PATH and its key);
    stop both (and the driver) at the end."""
    # Unix socket paths must stay short: a private directory directly under /tmp.
    root = Path(tempfile.mkdtemp(prefix="pgray-", dir="/tmp"))
    head_tmp, worker_tmp = root / "h", root / "w"
    head_tmp.mkdir()
    worker_tmp.mkdir()
    port = _free_port()
    address = f"127.0.0.1:{port}"
    token = root / "auth_token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    try:
        _start(["--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
                "--num-cpus", "1", "--temp-dir", str(head_tmp), "--include-dashboard", "false",
                "--disable-usage-stats"], _env(head_tmp, env, auth))
        _start(["--address", address, "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
                "--disable-usage-stats"], _env(worker_tmp, env, auth))
        yield Cluster(address, (head_tmp, worker_tmp), auth)
    finally:
        with contextlib.suppress(Exception):
            import ray

            ray.shutdown()
        subprocess.run([RAY, "stop", "--force"], env=_env(head_tmp, None, auth),
                       capture_output=True,
                       check=False, timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def ray_worker_running(marker: Path) -> int | None:
    """The pid of the Ray worker process whose trial has ``marker``'s directory on its
    command line (None: no such process)."""
    needle = str(marker.parent)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or needle not in _cmdline(int(entry.name)):
            continue
        pid = int(entry.name)
        while pid > 1:
            if _cmdline(pid).startswith("ray::"):
                return pid
            pid = _parent(pid)
    return None


def kill(pid: int) -> None:
    """SIGKILL ``pid`` (a Ray worker: its box dies with it)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
