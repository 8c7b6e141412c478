"""``plangate exec TASK [--json] -- COMMAND [ARGS]``: exec preflight, then run.

The preflight fails closed on everything upstream let through (DECISIONS 5/6):

1. HEAD is resolved with git; no repository, an unborn HEAD or a detached HEAD
   blocks (``EXEC_NO_HEAD`` / ``EXEC_HEAD_DETACHED``).
2. An exclusive lock on the task (``<repo>/.plangate/locks/TASK-XXXX.lock``) is
   held for the whole run; a second exec of the same task fails at once
   (``LOCK_HELD``).
3. One task snapshot is read and verified with HEAD as the expected SHA
   (:func:`plangate.approval.service.verify_task`). Anything but ``ACCEPTED``
   blocks: exit 1, or 3 when a human must decide.
4. ``exec_started`` with the verified digests goes to the ledger and to the
   task's ``run.ndjson``; if either cannot be written the command does not start.
5. The command runs (argument list, no shell, inherited stdio, environment plus
   ``PLANGATE_TASK``). Afterwards the task is verified again and
   ``exec_ended`` records the exit code and any drift (which digests changed).

Exit code: the preflight's (1 or 3) when it fails, else the command's own
(127 when it cannot be found, 126 when it cannot be executed, 128+N when it
died of signal N). If ``exec_ended`` cannot be recorded, a command that
succeeded exits 1 instead (the run is not fully accounted for).

plangate's own messages go to stderr, so the command's stdout stays its own;
``--json`` prints one JSON object on stdout after the command has finished.
"""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.canonical import canonical_bytes, digest
from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.clock import utc_now_text
from plangate.errors import EnvironmentFailure, PlanGateError, UsageError
from plangate.snapshot import check_task_id, find_repo_root, task_dir_for
from plangate.verdict import ExitCode, Reason, Result

RUN_LOG_NAME = "run.ndjson"
"""Per-task run log inside the task directory: one JSON object per line."""

LOCK_DIR = Path(".plangate") / "locks"

# Digests recorded in exec_started and compared after the run to report drift.
BOUND_FACTS: tuple[str, ...] = (
    "snapshot_digest",
    "record_digest",
    "plan_hash",
    "plan_package_hash",
    "source_sha_full",
)

EXIT_HELP = (
    "exit codes: the command's own exit code when the preflight passed; 1 preflight rejected "
    "(no HEAD, lock held, record not accepted, ledger or run log not writable); 3 a human "
    "must decide (HUMAN_ESCALATED, legacy CONDITIONAL); 2 usage error (missing '--' or command)"
)


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="plangate exec",
        usage="plangate exec TASK [--json] -- COMMAND [ARGS...]",
        description="Verify the task's approval against HEAD under a lock, record the run "
        "in the ledger and run.ndjson, run COMMAND, then re-verify and record drift.",
        epilog=EXIT_HELP,
    )
    parser.add_argument("task", help="task id, e.g. TASK-0001")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    if "--" not in argv:
        if any(a in ("-h", "--help") for a in argv):
            parser.parse_args(argv)
        raise UsageError(
            "EXEC_COMMAND_MISSING",
            "no command given: put it after '--'",
            "plangate exec TASK-0001 -- make test",
        )
    split = argv.index("--")
    own, command = argv[:split], argv[split + 1 :]
    args = parser.parse_args(own)
    if not command or command[0] == "":
        raise UsageError(
            "EXEC_COMMAND_MISSING",
            "no command after '--'",
            "plangate exec TASK-0001 -- make test",
        )
    return args, command


def _now() -> str:
    return utc_now_text()


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


def _ledger_append(root: Path, env: Mapping[str, str], kind: str, task_id: str,
                   payload: Mapping[str, Any]) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(root, env) as ledger:
        ledger.append(kind, task_id, dict(payload))


def _reason_json(reasons: tuple[Reason, ...]) -> list[dict[str, Any]]:
    return [r.to_json() for r in reasons]


def _bound(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The digests a run is bound to, as computed from the files (not as recorded).

    Before the run they equal the record's values (the acceptor checked that);
    after it, a difference is drift.
    """
    out = {key: facts.get(key) for key in BOUND_FACTS}
    for key in ("plan_hash", "plan_package_hash"):
        current = facts.get(f"current_{key}")
        if current is not None or f"current_{key}" in facts:
            out[key] = current
    return out


def _ignore_lock_files(lock_dir: Path) -> None:
    """Keep lock files out of ``git status`` (best effort, never blocks a run)."""
    from plangate.fsutil import atomic_write

    target = lock_dir / ".gitignore"
    if target.exists() or target.is_symlink():
        return
    try:
        atomic_write(target, b"# written by plangate: exec locks are not source\n*\n",
                     overwrite=False)
    except (PlanGateError, OSError):
        return


def _head(root: Path) -> str:
    from plangate.git import Git, GitError

    try:
        git = Git(root)
        toplevel = git.toplevel()
        state = git.head_state()
    except GitError as exc:
        raise EnvironmentFailure(
            "EXEC_NO_HEAD", f"cannot resolve HEAD: {exc.message}", exc.hint
        ) from None
    if os.path.realpath(toplevel) != os.path.realpath(root):
        # The nearest ".git" (found by a file-system walk) is not the repository
        # git uses (an empty or stray .git directory, core.worktree): the task
        # directory read under it would not be the repository's own.
        raise EnvironmentFailure(
            "EXEC_REPO_ROOT_MISMATCH",
            f"{root} holds a .git entry but git's working tree is {toplevel}",
            "run plangate exec from the repository's working tree; remove stray .git entries",
        )
    if state.commit is None:
        raise EnvironmentFailure(
            "EXEC_NO_HEAD",
            "HEAD has no commit yet (unborn branch); an approval binds to a commit",
            "commit first, then issue the approval for that commit",
        )
    if state.branch is None:
        where = (f"names {state.ref}, not a local branch" if state.ref
                 else f"is detached at {state.commit[:12]}")
        raise EnvironmentFailure(
            "EXEC_HEAD_DETACHED",
            f"HEAD {where}; exec runs on a branch",
            "check out the branch the approval was issued for",
        )
    return state.commit


def _run_command(command: list[str], cwd: Path, env: Mapping[str, str], task_id: str
                 ) -> tuple[int, str | None]:
    """Run ``command``; return its exit code and an error note when it could not start."""
    child_env = dict(env)
    child_env["PLANGATE_TASK"] = task_id
    try:
        proc = subprocess.run(command, cwd=cwd, env=child_env, check=False)
    except FileNotFoundError:
        return 127, f"command not found: {command[0]}"
    except PermissionError:
        return 126, f"command not executable: {command[0]}"
    except OSError as exc:
        return 126, f"cannot run {command[0]}: {exc.strerror or exc}"
    code = proc.returncode
    if code < 0:  # killed by a signal: report it as a shell would
        code = 128 - code
    return code, None


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate exec``."""
    args, command = _parse(argv[1:])
    task_id = check_task_id(args.task)
    root = find_repo_root(ctx.cwd)
    try:
        return _exec(ctx, root, task_id, command, as_json=args.json)
    except PlanGateError as exc:
        # A preflight failure: the command never started.
        reason = Reason(exc.code, exc.message, exc.hint)
        result = Result("REJECTED", (reason,), {"task_id": task_id, "started": False})
        return _report_refusal(ctx, result, as_json=args.json)


def _report_refusal(ctx: Context, result: Result, *, as_json: bool) -> int:
    code = ExitCode.HUMAN if result.exit_code == ExitCode.HUMAN else ExitCode.REJECTED
    if as_json:
        out = result.to_json()
        out["exit_code"] = int(code)
        out["facts"] = {k: v for k, v in result.facts.items() if k != "record"}
        print_json(ctx, out)
    else:
        ctx.err(f"plangate exec: {result.verdict}: the command was not started")
        for reason in result.reasons:
            ctx.err(f"  - {reason.code}: {reason.message}")
            if reason.hint:
                ctx.err(f"    hint: {reason.hint}")
    return int(code)


def _exec(ctx: Context, root: Path, task_id: str, command: list[str], *, as_json: bool) -> int:
    from plangate.approval.service import verify_task
    from plangate.fsutil import exclusive_lock

    head = _head(root)
    task_dir = task_dir_for(root, task_id)
    lock_dir = root / LOCK_DIR
    with exclusive_lock(lock_dir / f"{task_id}.lock", wait=False):
        _ignore_lock_files(lock_dir)
        before = verify_task(root, task_id, expected_sha=head)
        if not before.accepted:
            # Best effort: a refusal is worth recording, but failing to record it
            # changes nothing (the command does not start either way).
            try:
                _ledger_append(root, ctx.env, "exec_refused", task_id, {
                    "head": head,
                    "verdict": before.verdict,
                    "reasons": [r.code for r in before.reasons],
                    **_bound(before.facts),
                })
            except PlanGateError as exc:
                ctx.err(f"plangate exec: note: refusal not recorded in the ledger ({exc.code})")
            facts = dict(before.facts)
            facts.update({"head": head, "started": False})
            return _report_refusal(ctx, Result(before.verdict, before.reasons, facts),
                                   as_json=as_json)

        started_at = _now()
        bound = _bound(before.facts)
        command_digest = digest(command)
        started = {
            "event": "exec_started",
            "task_id": task_id,
            "at": started_at,
            "head": head,
            "kind": before.facts.get("kind"),
            "decision": before.facts.get("decision"),
            # The program name and a digest of the full argument list: arguments may
            # carry secrets, which never enter the ledger.
            "program": Path(command[0]).name,
            "command_digest": command_digest,
            **bound,
        }
        ledger_payload = {k: v for k, v in started.items() if k not in ("event", "at")}
        try:
            _ledger_append(root, ctx.env, "exec_started", task_id, ledger_payload)
        except PlanGateError as exc:
            raise EnvironmentFailure(
                "EXEC_LEDGER_UNAVAILABLE",
                f"exec_started could not be written to the ledger: {exc.code}: {exc.message}",
                exc.hint or "fix the ledger (plangate ledger verify), then retry",
            ) from None
        run_log = task_dir / RUN_LOG_NAME
        try:
            append_run_log(run_log, started)
        except PlanGateError:
            try:
                _ledger_append(root, ctx.env, "exec_ended", task_id, {
                    "head": head, "exit_code": None, "started": False,
                    "error": "run.ndjson not writable", "command_digest": command_digest,
                })
            except PlanGateError as exc:
                ctx.err(f"plangate exec: note: ledger not updated ({exc.code})")
            raise

        if not as_json:
            ctx.err(f"plangate exec: {task_id} verified against HEAD {head[:12]}; running "
                    f"{Path(command[0]).name}")
        exit_code, error = _run_command(command, ctx.cwd, ctx.env, task_id)

        after = verify_task(root, task_id, expected_sha=head)
        after_bound = _bound(after.facts)
        drift = [key for key in BOUND_FACTS if after_bound.get(key) != bound.get(key)]
        head_after: str | None
        try:
            from plangate.git import Git

            head_after = Git(root).head_state().commit
        except PlanGateError:
            head_after = None
        ended = {
            "event": "exec_ended",
            "task_id": task_id,
            "at": _now(),
            "head": head,
            "head_after": head_after,
            "exit_code": exit_code,
            "error": error,
            "command_digest": command_digest,
            "post_verdict": after.verdict,
            "post_reasons": [r.code for r in after.reasons],
            "drift": drift,
            **{f"{key}_after": value for key, value in after_bound.items()},
        }
        recorded = True
        try:
            append_run_log(run_log, ended)
        except PlanGateError as exc:
            recorded = False
            ctx.err(f"plangate exec: {exc.code}: exec_ended not written to {RUN_LOG_NAME}")
        try:
            _ledger_append(root, ctx.env, "exec_ended", task_id,
                           {k: v for k, v in ended.items() if k not in ("event", "at")})
        except PlanGateError as exc:
            recorded = False
            ctx.err(f"plangate exec: {exc.code}: exec_ended not written to the ledger")

    final = exit_code if (recorded or exit_code != 0) else int(ExitCode.REJECTED)
    if error:
        ctx.err(f"plangate exec: {error}")
    if drift:
        ctx.err(f"plangate exec: WARNING: the approved package changed during the run: "
                f"{', '.join(drift)} (post-run verdict {after.verdict})")
    if as_json:
        facts = {k: v for k, v in before.facts.items() if k != "record"}
        facts.update({"head": head, "started": True, "head_after": head_after})
        print_json(ctx, {
            "verdict": before.verdict,
            "reasons": _reason_json(before.reasons),
            "facts": facts,
            "exit_code": final,
            "command_exit_code": exit_code,
            "drift": drift,
            "post_verdict": after.verdict,
            "post_reasons": _reason_json(after.reasons),
            "recorded": recorded,
        })
    else:
        ctx.err(f"plangate exec: command exited {exit_code}; post-run verdict {after.verdict}"
                + (f"; drift: {', '.join(drift)}" if drift else ""))
    return final
