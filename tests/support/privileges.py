"""Run plangate where file permissions bind: without the capabilities that let root ignore them.

As root, a read-only directory or a mode-000 file does not stop a write or a
read (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``). :func:`unprivileged_prefix`
is the argv prefix that starts a child without them (``setpriv`` dropping both
from the bounding set, so the exec'd interpreter never has them), or nothing
when the tests already run as an unprivileged user. A test that needs
permission semantics calls :func:`require_permission_semantics` and is skipped,
with the reason, only when neither is possible.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

import plangate

SRC = Path(plangate.__file__).resolve().parents[1]
"""The sources this process imported plangate from (the child imports the very same copy:
this tree's ``src/``, or the scratch copy holding a mutant under mutation testing)."""

_DROP = "-dac_override,-dac_read_search"


def interpreter() -> str:
    """The real interpreter binary (a venv's own ``python`` is kept: resolving it leaves the venv)."""
    if sys.prefix != sys.base_prefix:
        return sys.executable
    return os.path.realpath(sys.executable)


@functools.cache
def unprivileged_prefix() -> tuple[str, ...] | None:
    """argv prefix that drops the DAC capabilities, ``()`` when not root, None when impossible."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, f"--bounding-set={_DROP}")
    probe = subprocess.run(
        [*prefix, interpreter(), "-c", "import os; os.open('/proc/1/environ', os.O_RDONLY)"],
        capture_output=True,
        check=False,
    )
    # Reading another process's environment needs the capabilities: failing proves the drop.
    if probe.returncode == 0:
        return None
    return prefix


def require_permission_semantics() -> tuple[str, ...]:
    """The prefix of :func:`unprivileged_prefix`, or skip the test with the reason."""
    prefix = unprivileged_prefix()
    if prefix is None:
        pytest.skip("running as root and cannot drop CAP_DAC_OVERRIDE (setpriv unavailable)")
    return prefix


def run_plangate(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m plangate ARGS`` in ``cwd`` without the DAC capabilities."""
    prefix = require_permission_semantics()
    child_env = dict(os.environ if env is None else env)
    child_env["PYTHONPATH"] = str(SRC)
    return subprocess.run(
        [*prefix, interpreter(), "-m", "plangate", *args],
        cwd=cwd,
        env=child_env,
        input=stdin.decode(),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def run_unprivileged(argv: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (a Python snippet's argv, say) without the DAC capabilities."""
    prefix = require_permission_semantics()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC)
    return subprocess.run(
        [*prefix, *argv], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120
    )
