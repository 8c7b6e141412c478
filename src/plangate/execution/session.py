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
compare against the baseline (:mod:`plangate.session.baseline`).

The lookup order of the active task is in :mod:`plangate.hooks.service`: the
environment, then a live ``plangate exec`` run, then a session. The session as the hooks
read it back (which one is open, its baseline) is :mod:`plangate.session`; this module
writes it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.agents import agent_markers_present
from plangate.errors import HumanRequired, InputRejected, UsageError
from plangate.hooks.service import current_head, effect_paths, task_facts
from plangate.records import NamedTuple
from plangate.session.baseline import MAX_BASELINE_BYTES, path_digest
from plangate.session.state import (
    KIND_STARTED,
    KIND_STOPPED,
    SESSION_DIR,
    Session,
    active_session,
    open_session,
    session_of,
)
from plangate.shapes import is_task_id

if TYPE_CHECKING:
    from plangate.hooks.decision import TaskFacts
    from plangate.hooks.host_sandbox import HostSandbox

DEFAULT_HOURS = 8
MAX_HOURS = 24
MAX_BASELINE_FILES = 20000


# -- the baseline ------------------------------------------------------------------------


def baseline_files(root: str) -> dict[str, str]:
    """Every path an effect check would see now, with its digest."""
    paths = effect_paths(root)
    if len(paths) > MAX_BASELINE_FILES:
        raise InputRejected(
            "TASK_BASELINE_TOO_LARGE",
            f"the working tree has {len(paths)} changed, untracked or watched ignored files "
            f"(limit {MAX_BASELINE_FILES})",
            "commit, remove or ignore them (outside .claude, .codex, .cursor, .plangate and "
            "docs/working), then start the task again",
        )
    return {path: path_digest(root, path) for path in paths}


# -- start, stop, show -------------------------------------------------------------------


def _refuse_agents(env: Mapping[str, str]) -> None:
    markers = agent_markers_present(env)
    if markers:
        raise HumanRequired(
            "TASK_AGENT_ENVIRONMENT",
            "refused: agent or automation markers are set: " + ", ".join(markers),
            "a human starts and stops task sessions, in their own terminal",
        )


def _verified(root: Path, task_id: str) -> TaskFacts:
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
    session = session_of(entry.seq, payload)
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
