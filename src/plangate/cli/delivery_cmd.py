"""``plangate delivery assess|receipt|contract``: merge readiness of a pull request."""

from __future__ import annotations

import argparse
import contextlib

from plangate.cli.context import Context
from plangate.cli.output import print_json, print_result
from plangate.errors import UsageError
from plangate.fsutil import read_regular_file
from plangate.snapshot import check_task_id, find_repo_root

ASSESS_EXIT_HELP = (
    "exit codes: 0 MERGE_READY; 4 not yet ready (WAITING_FOR_CHECKS, WAITING_FOR_REVIEW, "
    "CHECKS_FAILED, CONFLICT, REVIEW_REPAIR, MERGE_READY_CANDIDATE: the requested actions are in "
    "--json); 3 HUMAN_ESCALATED; 1 EXEC_RETURN (plan deviation) or the c3-prime record does not "
    "verify; 2 malformed snapshot or command line"
)


def _parser() -> argparse.ArgumentParser:
    from plangate.delivery.machine import PRIORITY_ORDER

    parser = argparse.ArgumentParser(
        prog="plangate delivery",
        description="Assess merge readiness of a pull request against the approved plan. "
        "Nothing here merges: MERGE_READY is the last state.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    assess = sub.add_parser(
        "assess",
        help="assess a PR snapshot",
        description="Re-verify the c3-prime record, measure ancestry with git and assess "
        "the PR snapshot; the first rule that applies decides, in this order: "
        + ", ".join(PRIORITY_ORDER)
        + ".",
        epilog=ASSESS_EXIT_HELP,
    )
    assess.add_argument("task", help="task id, e.g. TASK-0001")
    assess.add_argument("--snapshot", required=True, help="PR snapshot JSON file ('-' = stdin)")
    assess.add_argument("--now", required=True, help="time of the assessment, YYYY-MM-DDTHH:MM:SSZ")
    assess.add_argument("--json", action="store_true", help="print one JSON object")

    receipt = sub.add_parser(
        "receipt",
        help="record that a requested action was executed",
        description="Record a receipt for an action delivery requested (a recorded intent).",
        epilog="exit codes: 0 recorded (or already recorded identically); 1 no such intent, "
        "conflicting receipt or the record does not verify; 2 malformed arguments",
    )
    receipt.add_argument("task", help="task id, e.g. TASK-0001")
    receipt.add_argument("--action-id", required=True, help="action_id from 'assess --json'")
    receipt.add_argument("--result-ref", required=True, help="what the action produced")
    receipt.add_argument("--now", required=True, help="YYYY-MM-DDTHH:MM:SSZ")
    receipt.add_argument("--json", action="store_true", help="print one JSON object")

    sub.add_parser("contract", help="print the state machine contract as JSON")
    return parser


def _read_snapshot(ctx: Context, name: str) -> bytes:
    from plangate.delivery.pr_snapshot import MAX_SNAPSHOT_BYTES

    if name == "-":
        data = ctx.stdin.read(MAX_SNAPSHOT_BYTES + 1)
        if len(data) > MAX_SNAPSHOT_BYTES:
            raise UsageError(
                "DELIVERY_SNAPSHOT_UNREADABLE", "snapshot on stdin exceeds 4 MiB", "shrink it"
            )
        return bytes(data)
    read = read_regular_file(ctx.cwd / name, MAX_SNAPSHOT_BYTES)
    if not read.ok or read.data is None:
        raise UsageError(
            "DELIVERY_SNAPSHOT_UNREADABLE",
            f"snapshot file {name} {read.detail}",
            "pass a regular JSON file (or '-' for stdin)",
        )
    return read.data


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate delivery``."""
    # argparse prints usage errors and --help itself: route them to this context.
    with contextlib.redirect_stderr(ctx.stderr), contextlib.redirect_stdout(ctx.stdout):
        args = _parser().parse_args(argv[1:])
    if args.action == "contract":
        from plangate.delivery.machine import contract_text

        ctx.stdout.write(contract_text())
        return 0
    from plangate.delivery.service import assess_task, record_receipt

    task_id = check_task_id(args.task)
    repo_root = find_repo_root(ctx.cwd)
    if args.action == "assess":
        data = _read_snapshot(ctx, args.snapshot)
        outcome = assess_task(repo_root, task_id, data, args.now, ctx.env)
        title = f"{task_id} delivery"
    else:
        outcome = record_receipt(
            repo_root,
            task_id,
            action_id_value=args.action_id,
            result_ref=args.result_ref,
            now=args.now,
            env=ctx.env,
        )
        title = f"{task_id} delivery receipt"
    result = outcome.result
    if args.json:
        doc = result.to_json()
        doc["exit_code"] = outcome.exit_code
        print_json(ctx, doc)
    else:
        print_result(ctx, result, as_json=False, title=title)
        for action in result.facts.get("requested_actions") or []:
            ctx.out(f"  requested: {action['action_kind']} {action['action_id']}")
    return outcome.exit_code
