"""``plangate delivery assess|receipt|contract``: merge readiness of a pull request."""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING

from plangate.cli.context import Context
from plangate.cli.output import print_json, print_result
from plangate.errors import UsageError
from plangate.fsutil import read_regular_file
from plangate.snapshot import check_task_id, find_repo_root

if TYPE_CHECKING:
    from plangate.delivery.pr_event import PullRequestEvent
    from plangate.delivery.service import DeliveryOutcome

ASSESS_EXIT_HELP = (
    "exit codes: 0 MERGE_READY; 4 not yet ready (WAITING_FOR_CHECKS, WAITING_FOR_REVIEW, "
    "CHECKS_FAILED, CONFLICT, REVIEW_REPAIR, MERGE_READY_CANDIDATE: the requested actions are in "
    "--json); 3 HUMAN_ESCALATED; 1 EXEC_RETURN (plan deviation) or the c3-prime record does not "
    "verify, or the pull request's commits are not in this repository; 2 malformed or missing "
    "snapshot or CI event, an event that is not about a pull request, or a bad command line"
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
        help="assess a pull request (its CI event, or a PR snapshot)",
        description="Read the pull request from its CI event (GITHUB_EVENT_PATH, or --event, "
        "or --base/--head/--pr) and git, or from a PR snapshot; verify the c3-prime record for "
        "its head as ci check does, measure ancestry with git and assess it; the first rule "
        "that applies decides, in this order: "
        + ", ".join(PRIORITY_ORDER)
        + ".",
        epilog=ASSESS_EXIT_HELP,
    )
    assess.add_argument("task", nargs="?",
                        help="task id, e.g. TASK-0001; from a CI event or --base/--head it may be "
                        "left out: the one task whose directory the pull request changes")
    assess.add_argument("--event", metavar="FILE",
                        help="the CI event of the pull request (default: the file named by "
                        "GITHUB_EVENT_PATH); the changed paths are measured with git")
    assess.add_argument("--base", metavar="REV", help="the pull request's base, with --head and "
                        "--pr instead of an event")
    assess.add_argument("--head", metavar="REV", help="the pull request's head commit")
    assess.add_argument("--pr", metavar="N", type=_positive, help="the pull request's number")
    assess.add_argument("--check", metavar="NAME=CONCLUSION", action="append", default=[],
                        help="a check that ran on the head and its conclusion (success, failure, "
                        "pending...); repeatable")
    assess.add_argument("--dod-evaluated", action="store_true",
                        help="the Definition of Done has been evaluated for the head")
    assess.add_argument("--snapshot", metavar="FILE",
                        help="a PR snapshot JSON file ('-' = stdin) instead of the event")
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


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive pull request number")
    return int(text)


def _read_event(ctx: Context, args: argparse.Namespace) -> PullRequestEvent:
    """The pull request: from ``--base``/``--head``/``--pr``, ``--event`` or the CI's event file."""
    from plangate.delivery.pr_event import MAX_EVENT_BYTES, PullRequestEvent, parse_event

    explicit = (args.base, args.head, args.pr)
    if any(v is not None for v in explicit):
        if args.event is not None or any(v is None for v in explicit):
            raise UsageError(
                "DELIVERY_PR_UNSPECIFIED",
                "--base, --head and --pr go together, without --event",
                "give all three, or the event file alone",
            )
        return PullRequestEvent("explicit", args.pr, "", "", args.base, args.head)
    name = args.event
    event_name = None
    if name is None:
        name = ctx.env.get("GITHUB_EVENT_PATH") or None
        event_name = ctx.env.get("GITHUB_EVENT_NAME")
    if name is None:
        raise UsageError(
            "DELIVERY_PR_UNSPECIFIED",
            "no pull request to assess: no --event, --base/--head/--pr or --snapshot, and "
            "GITHUB_EVENT_PATH is not set",
            "run it in a pull_request workflow, or pass --event FILE or --base/--head/--pr",
        )
    read = read_regular_file(ctx.cwd / name, MAX_EVENT_BYTES)
    if not read.ok or read.data is None:
        raise UsageError(
            "DELIVERY_EVENT_UNREADABLE",
            f"the CI event file {name} {read.detail}",
            "pass the event file of a pull_request workflow run (GITHUB_EVENT_PATH)",
        )
    return parse_event(read.data, event_name)


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


def _assess(ctx: Context, args: argparse.Namespace, task_id: str | None) -> DeliveryOutcome:
    from plangate.delivery.pr_event import parse_check
    from plangate.delivery.service import (
        PullRequestInputs,
        assess_pull_request,
        assess_task,
        check_now,
    )

    repo_root = find_repo_root(ctx.cwd)
    if args.snapshot is not None:
        pull = (args.event, args.base, args.head, args.pr)
        if any(v is not None for v in pull) or args.check or args.dod_evaluated:
            raise UsageError(
                "DELIVERY_PR_UNSPECIFIED",
                "--snapshot describes the whole pull request: it takes no --event, --base, "
                "--head, --pr, --check or --dod-evaluated",
                "give the snapshot alone, or the event and the checks",
            )
        if task_id is None:
            raise UsageError(
                "DELIVERY_TASK_UNSPECIFIED",
                "--snapshot needs the task id",
                "plangate delivery assess TASK-0001 --snapshot FILE --now TIME",
            )
        data = _read_snapshot(ctx, args.snapshot)
        return assess_task(repo_root, task_id, data, args.now, ctx.env)
    check_now(args.now)
    checks = tuple(parse_check(text) for text in args.check)
    event = _read_event(ctx, args)
    inputs = PullRequestInputs(checks, args.dod_evaluated)
    return assess_pull_request(repo_root, task_id, event, args.now, ctx.env, inputs=inputs)


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate delivery``."""
    # argparse prints usage errors and --help itself: route them to this context.
    with contextlib.redirect_stderr(ctx.stderr), contextlib.redirect_stdout(ctx.stdout):
        args = _parser().parse_args(argv[1:])
    if args.action == "contract":
        from plangate.delivery.machine import contract_text

        ctx.stdout.write(contract_text())
        return 0
    from plangate.delivery.service import record_receipt

    task_id = check_task_id(args.task) if args.task is not None else None
    repo_root = find_repo_root(ctx.cwd)
    if args.action == "assess":
        outcome = _assess(ctx, args, task_id)
        title = f"{outcome.result.facts.get('task_id') or task_id or 'pull request'} delivery"
    elif task_id is None:  # receipt's task is a required argument
        raise UsageError("DELIVERY_TASK_UNSPECIFIED", "no task id given", "name the task")
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
