"""``plangate override grant|list|revoke``: the human-only escape hatch.

::

    plangate override grant --paths GLOB... --minutes N --reason TEXT [--one-shot]
    plangate override list [--json]
    plangate override revoke GRANT_ID

``grant`` and ``revoke`` refuse (exit 3, a human is required) when stdin is not
an interactive terminal or an agent/automation marker is in the environment;
``grant`` then asks the human to type ``GRANT`` to confirm.
"""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.clock import utc_now
from plangate.errors import HumanRequired, InputRejected, UsageError

CONFIRM_WORD = "GRANT"


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Human-only, time-boxed, "
                                     "path-scoped overrides of the hook decisions.")
    sub = parser.add_subparsers(dest="action", required=True)
    grant = sub.add_parser("grant", help="grant an override (interactive terminal only)")
    grant.add_argument("--paths", nargs="+", required=True, metavar="GLOB")
    grant.add_argument("--minutes", type=int, required=True)
    grant.add_argument("--reason", required=True)
    grant.add_argument("--one-shot", action="store_true", help="spent by its first use")
    listing = sub.add_parser("list", help="list grants and whether they are active")
    listing.add_argument("--json", action="store_true")
    revoke = sub.add_parser("revoke", help="revoke a grant")
    revoke.add_argument("grant_id")
    return parser


def _require_human(ctx: Context) -> None:
    from plangate.hooks.override import agent_markers_present

    markers = agent_markers_present(ctx.env)
    if markers:
        raise HumanRequired("OVERRIDE_AGENT_ENVIRONMENT",
                            "refused: agent or automation markers are set: " + ", ".join(markers),
                            "run this yourself in your own terminal, outside the agent session")
    isatty = getattr(ctx.stdin, "isatty", None)
    if not callable(isatty) or not isatty():
        raise HumanRequired("OVERRIDE_NOT_INTERACTIVE",
                            "refused: stdin is not an interactive terminal",
                            "run this yourself in your own terminal, outside the agent session")


def _root(ctx: Context) -> Path:
    from plangate.git import Git

    return Git(ctx.cwd).toplevel()


def _states(root: Path, ctx: Context) -> list:  # type: ignore[type-arg]
    from plangate.hooks.override import KIND_GRANTED, KIND_REVOKED, KIND_USED, grant_states
    from plangate.ledger import open_ledger

    with open_ledger(root, ctx.env, create=False) as ledger:
        entries = [(e.kind, e.subject, e.payload)
                   for kind in (KIND_GRANTED, KIND_REVOKED, KIND_USED)
                   for e in ledger.entries(kind=kind)]
    return grant_states(entries)


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate override``."""
    from plangate.hooks.override import KIND_GRANTED, KIND_REVOKED, grant_payload, validate_request
    from plangate.ledger import open_ledger

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    now = utc_now()
    root = _root(ctx)
    if args.action == "list":
        states = _states(root, ctx)
        if args.json:
            print_json(ctx, {"verdict": "ACCEPTED", "reasons": [],
                             "grants": [s.to_json(now) for s in states]})
            return 0
        if not states:
            ctx.out("no overrides")
        for state in states:
            status = "active" if state.active(now) else "inactive"
            ctx.out(f"{state.grant_id} {status} until {state.expires_at} "
                    f"{'one-shot ' if state.one_shot else ''}{' '.join(state.patterns)}"
                    f" -- {state.reason}")
        return 0
    _require_human(ctx)
    if args.action == "revoke":
        known = {s.grant_id for s in _states(root, ctx)}
        if args.grant_id not in known:
            raise InputRejected("OVERRIDE_UNKNOWN", f"no grant {args.grant_id!r}",
                                "see 'plangate override list'")
        with open_ledger(root, ctx.env) as ledger:
            ledger.append(KIND_REVOKED, args.grant_id,
                          {"grant_id": args.grant_id, "revoked_by": getpass.getuser()})
        ctx.out(f"revoked {args.grant_id}")
        return 0
    request = validate_request(args.paths, args.minutes, args.reason, args.one_shot)
    ctx.out(f"Grant an override for {' '.join(request.patterns)} for {request.minutes} minutes"
            f"{' (one use)' if request.one_shot else ''}.")
    ctx.out("It lifts only 'no active task', 'outside scope', 'scope undefined' and 'record does "
            "not verify'; protected surfaces and approvals stay denied.")
    ctx.stdout.write(f"Type {CONFIRM_WORD} to confirm: ")
    ctx.stdout.flush()
    answer = ctx.stdin.readline().decode("utf-8", "replace").strip()
    if answer != CONFIRM_WORD:
        raise UsageError("OVERRIDE_NOT_CONFIRMED", "not confirmed; nothing granted",
                         f"type {CONFIRM_WORD} exactly")
    payload = grant_payload(request, now, getpass.getuser())
    with open_ledger(root, ctx.env) as ledger:
        ledger.append(KIND_GRANTED, payload["grant_id"], payload)
    ctx.out(f"granted {payload['grant_id']} until {payload['expires_at']}")
    return 0
