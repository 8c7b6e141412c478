"""``plangate arbiter``: run the C-3' decision table on an input file or on a task.

Two forms:

- ``plangate arbiter --input FILE|- [--surfaces FILE] [--timestamp T] [--json]``
  decides from an arbiter input document (docs/arbiter.md: the input contract);
- ``plangate arbiter TASK --target-sha SHA --base REV --reviewers FILE
  --loopspec-actors MAKER,CHECKER --class CLASS [--lite AXES] [...] [--issue]``
  builds that document from the repository first (see
  :mod:`plangate.approval.arbiter_input`).

Exit codes: 0 AUTO_APPROVED, 3 HUMAN_ESCALATED, 1 BLOCKED or malformed input,
2 usage error. Parse, call one service of :mod:`plangate.approval.arbiter_service`
(which also records the decision in the ledger), print.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from plangate.approval.arbiter import LITE_AXES, provenance_record
from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.errors import UsageError
from plangate.snapshot import check_task_id
from plangate.verdict import Result

EPILOG = (
    "exit codes: 0 AUTO_APPROVED; 3 HUMAN_ESCALATED; 1 BLOCKED, malformed input or a refused "
    "--issue; 2 usage error. See docs/arbiter.md for the decision table."
)


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Run the C-3' arbiter decision table.", epilog=EPILOG
    )
    parser.add_argument("task", nargs="?", metavar="TASK",
                        help="build the input from this task and the repository")
    parser.add_argument("--input", metavar="FILE", help="arbiter input JSON ('-' = stdin)")
    parser.add_argument("--surfaces", metavar="FILE",
                        help="explicit protected-surface definition (never falls back)")
    parser.add_argument("--timestamp", help="YYYY-MM-DDTHH:MM:SSZ (default: now, UTC)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-ledger", action="store_true",
                        help="do not append the decision to the ledger")
    task = parser.add_argument_group("TASK form")
    task.add_argument("--target-sha", help="the commit being judged")
    task.add_argument("--base", help="the commit the change started from (an ancestor)")
    task.add_argument("--reviewers", metavar="FILE",
                      help='{"model_a": {"verdict", "evidence_ref"}, "model_b": {...}}')
    task.add_argument("--loopspec-actors", metavar="MAKER,CHECKER",
                      help="actors of the LoopSpec whose allowed_paths scope the change")
    task.add_argument("--class", dest="cls", choices=("merge", "no-merge"))
    task.add_argument("--lite", default="",
                      help=f"comma list of lite axes that hold ({','.join(LITE_AXES)}) or 'all'")
    task.add_argument("--breakdown", choices=("pass", "fail"), help="breakdown gate result")
    task.add_argument("--reject-category", help="category of model B's reject")
    task.add_argument("--model-c", choices=("approve", "reject"))
    task.add_argument("--model-d", choices=("approve", "reject"))
    task.add_argument("--run-id")
    task.add_argument("--round-index", type=int)
    task.add_argument("--cost-cap", type=int)
    task.add_argument("--print-input", action="store_true",
                      help="print the built input document instead of deciding")
    task.add_argument("--issue", action="store_true",
                      help="then write approvals/c3.json with the decision (c3 issue)")
    task.add_argument("--force", action="store_true", help="with --issue: replace a record")
    task.add_argument("--sign", metavar="KEY",
                      help="with --issue: sign the record with this SSH key (an approver's)")
    return parser


def _print_decision(ctx: Context, result: Result, as_json: bool,
                    extra: dict[str, Any] | None = None) -> None:
    record = provenance_record(result)
    if extra:
        record.update(extra)
    if as_json:
        print_json(ctx, record)
        return
    decided = result.facts["decided_by"]
    ctx.out(f"arbiter: {result.verdict} (priority {decided['priority']}: {decided['code']})")
    for reason in result.reasons:
        ctx.out(f"  - {reason.code}: {reason.message}")
        if reason.hint:
            ctx.out(f"    hint: {reason.hint}")
    s = result.facts["surfaces"]
    ctx.out(f"  surfaces: {s['provenance']} {s['path']} ({s['pattern_count']} patterns, "
            f"{s['digest']})")
    ctx.out(f"  policy: {result.facts['policy_ref']}  timestamp: {result.facts['timestamp']}")


def _run_input_form(ctx: Context, args: argparse.Namespace) -> int:
    from plangate.approval.arbiter_service import decide_input_form

    outcome = decide_input_form(ctx.cwd, ctx.env, input_name=args.input, stdin=ctx.stdin,
                                surfaces=args.surfaces, timestamp=args.timestamp,
                                ledger=not args.no_ledger)
    _print_decision(ctx, outcome.result, args.json)
    for warning in outcome.warnings:
        ctx.err(warning)
    return outcome.exit_code


def _run_task_form(ctx: Context, args: argparse.Namespace) -> int:
    from plangate.approval.arbiter_service import TaskForm, decide_task_form
    from plangate.approval.service import parse_actors

    task_id = check_task_id(args.task)
    missing = [flag for flag, value in (("--target-sha", args.target_sha), ("--base", args.base),
                                        ("--reviewers", args.reviewers),
                                        ("--loopspec-actors", args.loopspec_actors),
                                        ("--class", args.cls)) if value is None]
    if missing:
        raise UsageError("ARBITER_TASK_ARGS_MISSING", f"the TASK form needs {', '.join(missing)}",
                         "see 'plangate arbiter --help'")
    actors = parse_actors(args.loopspec_actors, "e.g. --loopspec-actors impl-agent,qa-agent")
    outcome = decide_task_form(ctx.cwd, ctx.env, TaskForm(
        task_id=task_id, target_sha=args.target_sha, base=args.base,
        reviewers_file=args.reviewers, actors=actors, cls=args.cls, lite=args.lite,
        breakdown=args.breakdown, reject_category=args.reject_category, model_c=args.model_c,
        model_d=args.model_d, run_id=args.run_id, round_index=args.round_index,
        cost_cap=args.cost_cap, surfaces=args.surfaces, timestamp=args.timestamp,
        print_input=args.print_input, issue=args.issue, force=args.force,
        ledger=not args.no_ledger,
    ))
    if outcome.document is not None:
        ctx.out(json.dumps(outcome.document, indent=2, sort_keys=True, ensure_ascii=False))
        return outcome.exit_code
    for warning in outcome.warnings:
        ctx.err(warning)
    _print_decision(ctx, outcome.result, args.json, outcome.extra if args.json else None)
    issue_json = outcome.extra.get("issue")
    if issue_json is not None and not args.json:
        ctx.out(f"c3 issue: {issue_json['verdict']}")
        for reason in issue_json["reasons"]:
            ctx.out(f"  - {reason['code']}: {reason['message']}")
    if args.sign and issue_json is not None and issue_json["verdict"] == "ACCEPTED":
        from plangate.authority.signing import sign_record
        from plangate.snapshot import find_repo_root

        path = sign_record(find_repo_root(ctx.cwd), task_id, ctx.cwd / args.sign)
        if not args.json:
            ctx.out(f"signed: {path}")
    return outcome.exit_code


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate arbiter``."""
    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    if args.input is not None and args.task is not None:
        raise UsageError("ARBITER_FORM_AMBIGUOUS", "give either --input or TASK, not both",
                         "see 'plangate arbiter --help'")
    if args.input is not None:
        return _run_input_form(ctx, args)
    if args.task is not None:
        return _run_task_form(ctx, args)
    raise UsageError("ARBITER_FORM_MISSING", "give --input FILE|- or a TASK",
                     "see 'plangate arbiter --help'")
