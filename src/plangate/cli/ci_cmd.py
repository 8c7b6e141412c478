"""``plangate ci check --base REF --head REF [--json]``: check a pull request."""

from __future__ import annotations

import argparse

from plangate.cli.context import Context
from plangate.cli.output import print_result


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Verify every task a pull request touches, its scope and the "
        "protected surfaces (read from the base commit).")
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="check base..head")
    check.add_argument("--base", required=True, help="the pull request's base commit or ref")
    check.add_argument("--head", required=True, help="the pull request's head commit or ref")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate ci``."""
    from plangate.delivery.service import check_pull_request

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    result = check_pull_request(ctx.cwd, args.base, args.head)
    return print_result(ctx, result, as_json=args.json, title="plangate ci check")
