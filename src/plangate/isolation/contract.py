"""The box's contract: what a command inside exec's isolated run observes, and how.

``plangate exec`` (bubblewrap) makes the box; a hook inside it observes the
box before it believes any variable (:func:`observe_box`): ``PLANGATE_TASK``
and :data:`BOX_ENV` (the run id) are set for the command, *and* ``.plangate/``
and ``.git`` of the working tree are read-only mounts (``statvfs`` reports
``ST_RDONLY``), the run's box directory :data:`BOX_DIR` is a writable mount
point of its own (another device than its parent's, or listed in
``/proc/self/mountinfo``: an unprivileged process outside a mount namespace
can make neither, and cannot create the directory under ``/run`` at all), and
its ``run.json`` (bound read-only by exec) names the same run and task. A
variable alone proves nothing; mounts are what the box makes. Only then is
:data:`BOX_LEDGER_ENV`, the box-local ledger, trusted.

The contract lives with the box that makes it (this package); the hooks and
exec both read it from here. It is on the hook's hot path: it imports nothing
heavy at module level.
"""

# ruff: noqa: PTH116, PTH118, PTH120
from __future__ import annotations

import os
import re
from collections.abc import Mapping

from plangate.records import NamedTuple

BOX_ENV = "PLANGATE_BOX"
"""Set by ``plangate exec``'s isolated run for its command: the run id."""

BOX_LEDGER_ENV = "PLANGATE_BOX_LEDGER"
"""Set by ``plangate exec`` (bubblewrap): the box-local ledger, a file in :data:`BOX_DIR`.
Trusted only when the box is observed."""

BOX_DIR = "/run/plangate-box"
"""Where a bubblewrap box of ``plangate exec`` shows its run's box directory (writable)."""

BOX_LEDGER_NAME = "ledger.sqlite3"
"""The box-local ledger's file name in the run's box directory."""

BOX_FACTS_NAME = "run.json"
"""The run's facts in :data:`BOX_DIR`, written by exec and bound read-only."""

MAX_BOX_FACTS_BYTES = 16 * 1024
BOX_READ_ONLY = (".plangate", ".git")
"""Paths the isolated run mounts read-only; the hook checks each is."""

_RUN_ID_TAIL = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")
_BOX_FACT_KEYS = ("run_id", "task_id", "approved", "plan_hash", "backend")


class BoxFacts(NamedTuple):
    """exec's isolated run as the hook observed it (see :func:`observe_box`)."""

    run_id: str
    task_id: str
    approved: str
    plan_hash: str
    backend: str


def _read_only(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _mount_points() -> set[str]:
    """Mount points of this process's mount namespace (``/proc/self/mountinfo``)."""
    from plangate.fsutil import read_regular_file

    read = read_regular_file("/proc/self/mountinfo", 4 * 1024 * 1024)
    if not read.ok or read.data is None:
        return set()
    points = set()
    for line in read.data.decode("utf-8", "replace").splitlines():
        fields = line.split(" ")
        if len(fields) > 4:
            points.add(fields[4])
    return points


def _own_writable_mount(path: str) -> bool:
    """``path`` is a directory, mounted writable, and a mount point of its own.

    A mount point: on another device than its parent, or listed as one in
    ``/proc/self/mountinfo`` (a bind mount from the parent's file system).
    """
    import stat

    try:
        here = os.stat(path, follow_symlinks=False)
        parent = os.stat(os.path.dirname(path), follow_symlinks=False)
        writable = not os.statvfs(path).f_flag & os.ST_RDONLY
    except OSError:
        return False
    if not stat.S_ISDIR(here.st_mode) or not writable:
        return False
    return here.st_dev != parent.st_dev or path in _mount_points()


def read_box_facts(data: bytes) -> BoxFacts | None:
    """The box's ``run.json`` parsed strictly (``None`` when it is not exactly that)."""
    from plangate.canonical import StrictJSONError, strict_loads_object

    try:
        body = strict_loads_object(data, BOX_FACTS_NAME)
    except (StrictJSONError, ValueError):
        return None
    if sorted(body) != sorted(_BOX_FACT_KEYS):
        return None
    values = [body[key] for key in _BOX_FACT_KEYS]
    if not all(isinstance(v, str) and v and v.isprintable() for v in values):
        return None
    return BoxFacts(*values)


def run_id_matches(run_id: str, task_id: str) -> bool:
    """``run_id`` is a run id of ``task_id`` (``TASK-0001-<UTC stamp>-<8 hex>``)."""
    prefix = task_id + "-"
    return run_id.startswith(prefix) and _RUN_ID_TAIL.fullmatch(run_id[len(prefix) :]) is not None


def observe_box(root: str, env: Mapping[str, str]) -> BoxFacts | None:
    """exec's isolated run, when the hook runs inside one and can see it (else ``None``).

    Every observation must hold (see the module docstring); the variables are
    only the question, the mounts are the answer.
    """
    run_id = env.get(BOX_ENV, "")
    task_id = env.get("PLANGATE_TASK", "")
    if not run_id or not task_id or not run_id_matches(run_id, task_id):
        return None
    if not all(_read_only(os.path.join(root, rel)) for rel in BOX_READ_ONLY):
        return None
    if not _own_writable_mount(BOX_DIR):
        return None
    facts_path = os.path.join(BOX_DIR, BOX_FACTS_NAME)
    if not _read_only(facts_path):
        return None
    from plangate.fsutil import read_regular_file

    read = read_regular_file(facts_path, MAX_BOX_FACTS_BYTES)
    facts = read_box_facts(read.data) if read.ok and read.data is not None else None
    if facts is None or facts.run_id != run_id or facts.task_id != task_id:
        return None
    return facts


def box_ledger_path(env: Mapping[str, str]) -> str | None:
    """The box-local ledger :data:`BOX_LEDGER_ENV` names: a plain file name in
    :data:`BOX_DIR` (``None`` for anything else). Ask only once the box is observed."""
    value = env.get(BOX_LEDGER_ENV, "")
    directory, _, name = value.rpartition("/")
    if directory != BOX_DIR or not name or name in (".", "..") or not name.isprintable():
        return None
    return value


def exec_box(root: str, env: Mapping[str, str]) -> str:
    """``"exec:<backend>"`` when the hook runs inside exec's isolated run, else ``""``."""
    facts = observe_box(root, env)
    return "" if facts is None else f"exec:{facts.backend}"
