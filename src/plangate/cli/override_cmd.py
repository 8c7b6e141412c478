"""``plangate override grant|list|revoke``: the human-only escape hatch.

::

    plangate override grant --paths GLOB... --minutes N --reason TEXT [--one-shot]
    plangate override list [--json]
    plangate override revoke GRANT_ID

``grant`` and ``revoke`` refuse (exit 3, a human is required) when stdin is not
an interactive terminal or an agent/automation marker is in the environment;
``grant`` then asks the human to type ``GRANT`` to confirm. The ledger work is
in :mod:`plangate.hooks.override_service`.
"""

from __future__ import annotations

import argparse
import getpass

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.clock import utc_now
from plangate.errors import UsageError
from plangate.hooks import override_service
from plangate.hooks.override import validate_request
from plangate.hooks.override_service import CONFIRM_WORD


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


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate override``."""
    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    now = utc_now()
    root = override_service.repo_root(ctx.cwd)
    if args.action == "list":
        states = override_service.list_grants(root, ctx.env)
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
    override_service.require_human(ctx.env, ctx.stdin)
    if args.action == "revoke":
        override_service.revoke_grant(root, ctx.env, args.grant_id, getpass.getuser())
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
    payload = override_service.record_grant(root, ctx.env, request, now, getpass.getuser())
    ctx.out(f"granted {payload['grant_id']} until {payload['expires_at']}")
    return 0
