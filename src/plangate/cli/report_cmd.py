"""``plangate report [--since DATE] [--task TASK ...] [-o FILE] [--format html|markdown]``.

Parse, call :func:`plangate.report.service.make_report`, write or print. Exit
0 when the ledger verified; 1 when it did not (the report is still written, and
says so in red) or the report could not be made.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plangate.cli.context import Context
from plangate.snapshot import find_repo_root


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plangate report",
        description=(
            "Write one self-contained page of what PlanGate decided: each task's state as exec "
            "would judge it now (approval, signer, scope, runs, delivery), ledger entries per "
            "kind per day, hook and exec refusals, and evaluations (Policy Verdict, paired "
            "trials, known-mutant detection, independence, Promotion Decision). The ledger is "
            "verified first: one that does not verify is shown in red and no ledger figures "
            "are shown. The HTML page has inline SVG charts and no script; it fetches nothing."
        ),
        epilog="exit codes: 0 written from a ledger that verified; 1 the ledger does not verify "
        "or cannot be read (the report still says so), or the report could not be made; "
        "2 usage error",
    )
    parser.add_argument(
        "--since", metavar="DATE", help="count ledger entries from this UTC day on (YYYY-MM-DD)"
    )
    parser.add_argument(
        "--task",
        action="append",
        default=[],
        metavar="TASK",
        help="only this task (repeatable); evaluations are then left out",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE (replaced if it exists); default: stdout",
    )
    parser.add_argument(
        "--format",
        choices=("html", "markdown"),
        default="html",
        help="html (default): the full page; markdown: a short summary for a CI job summary",
    )
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate report``."""
    from plangate.report.service import check_since, make_report, write_report

    args = _parser().parse_args(argv[1:])
    if args.since is not None:
        check_since(args.since)
    report, text = make_report(
        find_repo_root(ctx.cwd), ctx.env, fmt=args.format, since=args.since, tasks=args.task
    )
    if args.output is None:
        ctx.out(text.rstrip("\n"))
    else:
        target = Path(args.output)
        target = target if target.is_absolute() else ctx.cwd / target
        write_report(target, text)
        ctx.out(f"report written: {target}")
    if not report.ledger.verified:
        ctx.err(f"plangate report: the ledger is {report.ledger.verdict}: {report.withheld}")
        for reason in report.ledger.reasons:
            ctx.err(f"  - {reason.code}: {reason.message}")
        return 1
    return 0
