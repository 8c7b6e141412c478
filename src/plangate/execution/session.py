"""Task sessions: ``plangate task start TASK | stop | show``, the active task of every host.

``plangate exec`` gives the agent it starts an active task (``PLANGATE_TASK``), but an
IDE's agent (Cursor, an IDE-launched Claude Code) is not started by exec. A human starts
a **task session** instead; the hooks of every host, and git's, then use its task.

- ``task start TASK`` refuses a task whose approval does not hold for HEAD (the hooks'
  rule: HEAD descends from the approved commit through in-scope commits), refuses while
  another session is active, and refuses under agent markers. It records a **baseline**
  of the working tree (every changed, untracked and watched ignored file with its
  digest) in ``.plangate/session/<session id>.json``, a directory no agent may write,
  and appends ``task_started`` (task, session id, HEAD, expiry, the baseline's path and
  digest) to the ledger.
- ``task stop`` appends ``task_stopped``; ``task show`` reports the session.
- A session ends by itself at its expiry (default 8 hours, at most 24): an abandoned
  session does not stay active.

Effect checks (PostToolUse, Stop, Cursor's ``afterFileEdit``/``stop``) of a session
compare against the baseline: a file that was already changed, untracked or ignored at
start (a human's notes, their own ``.claude/settings.local.json``) and is byte-for-byte
the same is not a change of the task. A baseline whose digest does not match the ledger,
or that cannot be read, counts as empty: every change is judged.

The lookup order of the active task is in :mod:`plangate.hooks.service`: the
environment, then a live ``plangate exec`` run, then a session. A run is live while its
exec process holds the task's lock (``.plangate/locks/TASK.lock``, held for the whole
run): a killed exec releases it, so its run no longer lends its task.
"""

# ruff: noqa: PTH115, PTH118
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.errors import InputRejected, UsageError
from plangate.records import NamedTuple
from plangate.shapes import is_task_id

if TYPE_CHECKING:
    from plangate.hooks.decision import TaskFacts
    from plangate.hooks.host_sandbox import HostSandbox
    from plangate.ledger import Ledger

KIND_STARTED = "task_started"
KIND_STOPPED = "task_stopped"
SESSION_DIR = ".plangate/session"
DEFAULT_HOURS = 8
MAX_HOURS = 24
MAX_BASELINE_FILES = 20000
MAX_BASELINE_BYTES = 16 * 1024 * 1024


class Session(NamedTuple):
    """One started session, as its ``task_started`` entry records it."""

    session_id: str
    task_id: str
    started_at: str
    expires_at: str
    head: str
    baseline: str
    baseline_sha256: str
    seq: int

    def expired(self, now: datetime) -> bool:
        """True at or after the session's expiry (an unreadable expiry has expired)."""
        from plangate.clock import parse_utc

        expiry = parse_utc(self.expires_at)
        return expiry is None or now >= expiry


def _session(entry_seq: int, payload: Mapping[str, Any]) -> Session | None:
    fields = (
        "session_id",
        "task_id",
        "started_at",
        "expires_at",
        "head",
        "baseline",
        "baseline_sha256",
    )
    values = [payload.get(name) for name in fields]
    texts = [v for v in values if isinstance(v, str) and v]
    if len(texts) != len(fields):
        return None
    session_id, task_id, started_at, expires_at, head, baseline, digest = texts
    return Session(session_id, task_id, started_at, expires_at, head, baseline, digest, entry_seq)


def open_session(ledger: Ledger) -> Session | None:
    """The newest started session with no later ``task_stopped`` for it (expired or not)."""
    started = ledger.entries(kind=KIND_STARTED)
    if not started:
        return None
    stopped = {str(e.payload.get("session_id")): e.seq for e in ledger.entries(kind=KIND_STOPPED)}
    newest = started[-1]
    session = _session(newest.seq, newest.payload)
    if session is None:
        return None  # a malformed entry lends no task
    if stopped.get(session.session_id, 0) > newest.seq:
        return None
    return session


def active_session(ledger: Ledger, now: datetime) -> Session | None:
    """The open session when it has not expired at ``now``."""
    session = open_session(ledger)
    if session is None or session.expired(now):
        return None
    return session


def exec_run_alive(root: str, task_id: str) -> bool:
    """True while a ``plangate exec`` process holds the task's lock (see the module doc).

    The lock is tried shared and without waiting, then released at once. A lock file
    that is missing, a link, or cannot be opened counts as no live run: the stricter
    answer (the run lends no task).
    """
    import errno
    import fcntl

    from plangate.layout import LOCK_DIR_RELPATH

    path = os.path.join(root, LOCK_DIR_RELPATH, f"{task_id}.lock")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)  # closing releases a lock this process took
    return False


# -- the baseline ------------------------------------------------------------------------


def _digest(root: str, path: str) -> str:
    """What ``path`` is now: ``sha256:<hex>`` of a regular file, ``link:<hex>`` of a link's
    target text, ``dir``, ``missing`` or ``other`` (a device, a FIFO, an unreadable file)."""
    full = os.path.join(root, path)
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    import stat

    if stat.S_ISLNK(info.st_mode):
        try:
            return "link:" + hashlib.sha256(os.fsencode(os.readlink(full))).hexdigest()
        except OSError:
            return "other"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return "other"
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "other"
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    except OSError:
        return "other"
    finally:
        os.close(fd)
    return "sha256:" + digest.hexdigest()


def baseline_files(root: str) -> dict[str, str]:
    """Every path an effect check would see now, with its digest."""
    from plangate.hooks.service import effect_paths

    paths = effect_paths(root)
    if len(paths) > MAX_BASELINE_FILES:
        raise InputRejected(
            "TASK_BASELINE_TOO_LARGE",
            f"the working tree has {len(paths)} changed, untracked or watched ignored files "
            f"(limit {MAX_BASELINE_FILES})",
            "commit, remove or ignore them (outside .claude, .codex, .cursor, .plangate and "
            "docs/working), then start the task again",
        )
    return {path: _digest(root, path) for path in paths}


def unchanged_since_baseline(root: str, session: Session, paths: list[str]) -> set[str]:
    """The ``paths`` that are in the session's baseline with the same digest as now.

    The baseline is read only when its bytes match the digest the ledger recorded;
    otherwise nothing counts as unchanged.
    """
    from plangate.fsutil import read_regular_file

    if not paths:
        return set()
    read = read_regular_file(Path(os.path.join(root, session.baseline)), MAX_BASELINE_BYTES)
    if not read.ok or read.data is None:
        return set()
    if hashlib.sha256(read.data).hexdigest() != session.baseline_sha256:
        return set()
    try:
        document = json.loads(read.data)
    except ValueError:
        return set()
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, dict):
        return set()
    return {p for p in paths if isinstance(files.get(p), str) and files[p] == _digest(root, p)}


# -- start, stop, show -------------------------------------------------------------------


def _refuse_agents(env: Mapping[str, str]) -> None:
    from plangate.errors import HumanRequired
    from plangate.hooks.override import agent_markers_present

    markers = agent_markers_present(env)
    if markers:
        raise HumanRequired(
            "TASK_AGENT_ENVIRONMENT",
            "refused: agent or automation markers are set: " + ", ".join(markers),
            "a human starts and stops task sessions, in their own terminal",
        )


def _verified(root: Path, task_id: str) -> TaskFacts:
    from plangate.hooks.service import task_facts

    if not is_task_id(task_id):
        raise UsageError("TASK_ID_INVALID", f"{task_id!r} is not a task id", "name a TASK-0000")
    return task_facts(str(root), task_id, "session")


@contextlib.contextmanager
def _host_sandbox_applied(
    host_sandbox: HostSandbox | None, facts: TaskFacts
) -> Iterator[dict[str, Any]]:
    """The host sandbox written for the block's duration; taken back when the block fails."""
    if host_sandbox is None:
        yield {}
        return
    recorded = host_sandbox.apply(facts)
    try:
        yield recorded
    except BaseException:
        host_sandbox.revert()
        raise


def start(
    root: Path,
    env: Mapping[str, str],
    task_id: str,
    *,
    hours: int = DEFAULT_HOURS,
    now: datetime | None = None,
    host_sandbox: HostSandbox | None = None,
) -> tuple[Session, TaskFacts, int]:
    """Start a session for ``task_id``; return it, the task's facts and the baseline size.

    ``host_sandbox`` writes the hosts' sandbox settings before the baseline is taken
    (so the baseline holds them) and takes them back when the start fails.
    """
    from plangate.clock import format_utc, utc_now
    from plangate.fsutil import atomic_write_at, open_verified_dir
    from plangate.ledger import open_ledger

    _refuse_agents(env)
    if not 1 <= hours <= MAX_HOURS:
        raise UsageError(
            "TASK_BAD_DURATION",
            f"--hours must be between 1 and {MAX_HOURS}",
            "start a session for a working day at most; start again later",
        )
    facts = _verified(root, task_id)
    if not facts.verified:
        raise InputRejected(
            "TASK_APPROVAL_NOT_HELD",
            f"{task_id}'s approval does not hold for HEAD: {facts.verification_message}",
            f"run 'plangate c3 verify {task_id}'; a stale plan is re-approved first",
        )
    moment = now or utc_now()
    with open_ledger(root, env, must_exist=True) as ledger:
        current = active_session(ledger, moment)
        if current is not None:
            raise InputRejected(
                "TASK_ALREADY_ACTIVE",
                f"{current.task_id} is active (session {current.session_id}, until "
                f"{current.expires_at})",
                "run 'plangate task stop' first",
            )
        with _host_sandbox_applied(host_sandbox, facts) as recorded:
            files = baseline_files(str(root))
            import secrets

            session_id = secrets.token_hex(8)
            from plangate.hooks.service import current_head

            head = current_head(str(root))
            document = {"session_id": session_id, "task_id": task_id, "head": head, "files": files}
            data = (json.dumps(document, sort_keys=True, indent=1) + "\n").encode()
            if len(data) > MAX_BASELINE_BYTES:
                raise InputRejected(
                    "TASK_BASELINE_TOO_LARGE",
                    f"the baseline would be {len(data)} bytes",
                    "commit, remove or ignore untracked files, then start again",
                )
            with open_verified_dir(root, SESSION_DIR, create=True) as directory:
                atomic_write_at(directory, f"{session_id}.json", data, overwrite=False)
            payload = {
                "session_id": session_id,
                "task_id": task_id,
                "started_at": format_utc(moment),
                "expires_at": format_utc(moment + timedelta(hours=hours)),
                "head": head,
                "baseline": f"{SESSION_DIR}/{session_id}.json",
                "baseline_sha256": hashlib.sha256(data).hexdigest(),
                "baseline_files": len(files),
            }
            entry = ledger.append(KIND_STARTED, task_id, {**payload, **recorded})
    session = _session(entry.seq, payload)
    assert session is not None  # noqa: S101 -- built from the fields just written
    return session, facts, len(files)


def stop(root: Path, env: Mapping[str, str]) -> Session:
    """End the open session (expired or not); refuse when there is none."""
    from plangate.ledger import open_ledger

    _refuse_agents(env)
    with open_ledger(root, env, must_exist=True) as ledger:
        session = open_session(ledger)
        if session is None:
            raise InputRejected(
                "TASK_NOT_ACTIVE",
                "no task session is open",
                "start one with 'plangate task start TASK'",
            )
        ledger.append(
            KIND_STOPPED,
            session.task_id,
            {"session_id": session.session_id, "task_id": session.task_id},
        )
    return session


class SessionView(NamedTuple):
    """What ``task show`` reports."""

    session: Session | None
    expired: bool
    facts: TaskFacts | None


def show(root: Path, env: Mapping[str, str], now: datetime | None = None) -> SessionView:
    """The open session, whether it has expired, and its task's facts now."""
    from plangate.clock import utc_now
    from plangate.ledger import open_ledger

    with open_ledger(root, env, create=False) as ledger:
        session = open_session(ledger)
    if session is None:
        return SessionView(None, False, None)
    expired = session.expired(now or utc_now())
    return SessionView(session, expired, _verified(root, session.task_id))
