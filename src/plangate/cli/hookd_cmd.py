"""``plangate hookd start|stop|status|run``: the warm hook helper of one repository."""

from __future__ import annotations

import argparse
from typing import Any

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.hooks.hookd import DEFAULT_IDLE_SECONDS

DESCRIPTION = (
    "The hook helper: one long-lived process per repository that keeps PlanGate's "
    "decision code loaded and answers agent hooks (Claude Code, Codex, Cursor) on a unix "
    "socket in a directory only you can write ($XDG_RUNTIME_DIR/plangate, else "
    "~/.cache/plangate/hookd). Every decision is still computed from the current files and "
    "recorded in the ledger before the answer; a hook that cannot use the helper decides "
    "in-process, with the same answer. The git hooks and 'ci check' never use it. It stops "
    "by itself when idle, when .git or the installed package changes. Hooks ask it when "
    "installed with 'plangate hooks install --claude --local-python --hookd' (the fast "
    "client) and through 'plangate-hook'. See docs/hookd.md."
)


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    start = sub.add_parser("start", help="start the helper in the background (or report "
                           "the running one)", description="Start a detached helper for "
                           "this repository and wait until it listens.")
    run = sub.add_parser("run", help="serve in the foreground until a stop condition",
                         description="Serve in this process (for a service manager or a "
                         "terminal); prints one line 'ready PID SOCKET', then nothing.")
    start.add_argument("--no-native", action="store_true",
                       help="do not build and link the native client beside this "
                       "installation's plangate-hook launcher (docs/hookd.md)")
    for each in (start, run):
        each.add_argument("--idle-seconds", type=float, default=DEFAULT_IDLE_SECONDS,
                          metavar="SECONDS",
                          help="stop after this long without a request (default 300; "
                          "1 to 86400)")
    stop = sub.add_parser("stop", help="stop the helper of this repository",
                          description="Ask the helper to stop and wait until its socket "
                          "is gone.")
    status = sub.add_parser("status", help="is a helper running; its package digest, "
                            "socket owner and mode", description="Check the socket as a "
                            "hook would and ask the helper for its state. Exit 0 when one "
                            "runs, 1 when none does.")
    for each in (start, stop, status):
        each.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _lines(ctx: Context, state: dict[str, Any]) -> None:
    if state["running"]:
        same = "same as installed" if state["same_package"] else "NOT the installed package"
        ctx.out(f"hookd: running, pid {state['pid']}, {state['requests']} requests")
        ctx.out(f"  package  {state['package_digest']} ({same})")
    else:
        ctx.out("hookd: not running (hooks decide in-process)")
    owner = "-" if state["socket_owner"] is None else state["socket_owner"]
    mode = state["socket_mode"] or "-"
    trusted = "trusted" if state["socket_trusted"] else "not trusted"
    ctx.out(f"  socket   {state['socket']} (owner {owner}, mode {mode}, {trusted})")
    for client in state.get("native_clients", []):
        ctx.out(f"  native   {native_line(client)}")


def native_line(client: dict[str, Any]) -> str:
    """One native client the local hook entries run: path, checks, staleness."""
    if not client["exists"]:
        return f"{client['path']} MISSING (every call blocks: run the install again)"
    owner = "owner ok" if client["owner_ok"] else "NOT owned by you or writable by others"
    if client["stale"] is None:
        baked = "no readable baked values"
    elif client["stale"]:
        baked = ("STALE: built for another package digest, every call decides in-process; "
                 "rebuild: plangate hooks install --claude --local-python --hookd")
    else:
        baked = "baked digest = installed package"
    return f"{client['path']} (mode {client['mode']}, {owner}, {baked})"


def _native_clients(root: str) -> list[dict[str, Any]]:
    """The native clients named by this repository's local hook entries (never raises)."""
    from pathlib import Path

    from plangate.errors import PlanGateError
    from plangate.hooks.doctor import native_clients
    from plangate.hooks.install import installed_commands

    try:
        return native_clients(installed_commands(Path(root)))
    except (PlanGateError, OSError):
        return []


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate hookd``."""
    from plangate.errors import UsageError
    from plangate.hooks import hookd

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    location = hookd.locate(str(ctx.cwd), ctx.env)
    if args.action in ("start", "run") and not 1 <= args.idle_seconds <= 86400:
        raise UsageError("HOOKD_IDLE_INVALID", "--idle-seconds must be between 1 and 86400",
                         "pass a number of seconds, e.g. --idle-seconds 300")
    if args.action == "run":
        import sys

        reason = hookd.run(location, idle=args.idle_seconds, ready=sys.stdout)
        ctx.err(f"hookd: stopped ({reason})")
        return 0
    if args.action == "start":
        state = hookd.start_helper(str(ctx.cwd), ctx.env, idle=args.idle_seconds,
                                   native=not args.no_native)
        if args.json:
            print_json(ctx, state)
        else:
            ctx.out("hookd: started" if state["started"] else "hookd: already running")
            _lines(ctx, state)
            if "launcher_native" in state:
                native = state["launcher_native"]
                ctx.out(f"  launcher {native['code']}: {native['detail']}")
        return 0
    if args.action == "stop":
        stopped = hookd.stop(location)
        if args.json:
            print_json(ctx, {"stopped": stopped, "socket": location.path})
        else:
            ctx.out("hookd: stopped" if stopped else "hookd: not running")
        return 0
    state = hookd.describe(location)
    state["native_clients"] = _native_clients(location.root)
    if args.json:
        print_json(ctx, state)
    else:
        _lines(ctx, state)
    return 0 if state["running"] else 1
