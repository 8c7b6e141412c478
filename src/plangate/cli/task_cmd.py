"""``plangate task start TASK [--hours N] [--sandbox HOSTS] | stop | show [--json]``.

A task session is the active task of every host's hooks and of git's hooks when the
agent was not started by ``plangate exec`` (an IDE's agent, a human's own commits).
``start`` refuses a task whose approval does not hold for HEAD, another open session
and agent markers, and writes the host sandbox for the task (``--sandbox``: ``auto``,
the hosts whose hooks are installed; ``none``; or ``claude``, ``codex``); ``stop``
ends it and takes the host sandbox back out; it also ends at its expiry. The work is
in :mod:`plangate.execution.session` and :mod:`plangate.hooks.host_sandbox`.
"""

from __future__ import annotations

import argparse

from plangate.cli.context import Context
from plangate.cli.output import print_json


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Start, stop or show the task session: the active task of every host's "
        "hooks and of git's hooks when no 'plangate exec' run provides one.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    start = sub.add_parser("start", help="start a session for an approved task")
    start.add_argument("task", metavar="TASK", help="task id, e.g. TASK-0001")
    start.add_argument(
        "--hours",
        type=int,
        default=8,
        help="the session ends by itself after this many hours (1-24, default 8)",
    )
    start.add_argument(
        "--sandbox",
        default="auto",
        metavar="HOSTS",
        help="host sandboxes to configure for the task: auto (the hosts whose hooks are "
        "installed, the default), none, claude, codex or claude,codex",
    )
    start.add_argument("--json", action="store_true", help="print one JSON object")
    stop = sub.add_parser("stop", help="end the open session")
    stop.add_argument("--json", action="store_true", help="print one JSON object")
    show = sub.add_parser("show", help="the open session, its scope and its verdict now")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate task``."""
    from plangate.execution import session as sessions
    from plangate.git import Git

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    root = Git(ctx.cwd).toplevel()
    if args.action == "start":
        from plangate.hooks import host_sandbox
        from plangate.hooks.sandbox_settings import parse_hosts

        hosts = host_sandbox.HostSandbox(root, ctx.env, parse_hosts(args.sandbox))
        started, facts, count = sessions.start(
            root, ctx.env, args.task, hours=args.hours, host_sandbox=hosts
        )
        scope = list(facts.allowed_paths or ())
        relied, why = host_sandbox.claude_relied_on(root, ctx.env, hosts.hosts)
        if args.json:
            print_json(
                ctx,
                {
                    "verdict": "ACCEPTED",
                    "reasons": [],
                    "session": started._asdict(),
                    "allowed_paths": scope,
                    "baseline_files": count,
                    "host_sandbox": list(hosts.hosts),
                    "host_sandbox_skipped": hosts.skipped,
                    "claude_sandbox_gaps": hosts.gaps,
                    "claude_sandbox_relied_on": relied,
                    "claude_sandbox_problem": why,
                },
            )
            return 0
        ctx.out(
            f"{started.task_id} is the active task until {started.expires_at} "
            f"(session {started.session_id})"
        )
        ctx.out("scope: " + (", ".join(scope) or "(none)"))
        ctx.out(
            f"baseline: {count} file(s) already changed, untracked or ignored are left "
            "out of the effect checks while unchanged"
        )
        lines = host_sandbox.describe(hosts.hosts, relied, why, hosts.skipped, hosts.gaps)
        for line in lines:
            ctx.out(line)
        ctx.out("end it with 'plangate task stop'")
        return 0
    if args.action == "stop":
        from plangate.hooks import host_sandbox

        pending = host_sandbox.pending_restore(root, ctx.env)
        stopped = sessions.stop(root, ctx.env)
        if pending is not None:
            host_sandbox.write_restore(root, pending)
        restored = list(pending.hosts) if pending is not None else []
        note = pending.note if pending is not None else ""
        if args.json:
            print_json(
                ctx,
                {
                    "verdict": "ACCEPTED",
                    "reasons": [],
                    "session": stopped._asdict(),
                    "host_sandbox_restored": restored,
                    "host_sandbox_note": note,
                },
            )
            return 0
        ctx.out(f"stopped {stopped.task_id} (session {stopped.session_id})")
        if restored:
            ctx.out("host sandbox settings taken back out: " + ", ".join(restored))
        if note:
            ctx.out(note)
        return 0
    from plangate.hooks import host_sandbox

    view = sessions.show(root, ctx.env)
    configured = host_sandbox.session_hosts(root, ctx.env) if view.session is not None else ()
    relied, why = host_sandbox.claude_relied_on(root, ctx.env, configured)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "ACCEPTED",
                "reasons": [],
                "session": view.session._asdict() if view.session is not None else None,
                "active": view.session is not None and not view.expired,
                "expired": view.expired,
                "approval_holds": view.facts.verified if view.facts is not None else None,
                "allowed_paths": list(view.facts.allowed_paths or ()) if view.facts else [],
                "verification": view.facts.verification_message if view.facts else "",
                "host_sandbox": list(configured),
                "claude_sandbox_relied_on": relied,
                "claude_sandbox_problem": why,
            },
        )
        return 0
    if view.session is None:
        ctx.out("no task session is open")
        return 0
    state = "expired" if view.expired else "active"
    ctx.out(
        f"{view.session.task_id}: {state} until {view.session.expires_at} "
        f"(session {view.session.session_id}, started {view.session.started_at})"
    )
    if view.facts is not None:
        holds = (
            "holds"
            if view.facts.verified
            else "does NOT hold: " + (view.facts.verification_message)
        )
        ctx.out(f"approval {holds}")
        ctx.out("scope: " + (", ".join(view.facts.allowed_paths or ()) or "(none)"))
    for line in host_sandbox.describe(configured, relied, why):
        ctx.out(line)
    return 0
