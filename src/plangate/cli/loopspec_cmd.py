"""``plangate loopspec TASK --maker M --checker C``: derive, print or check the LoopSpec.

Parse, call one service (:func:`plangate.plan.service.derive_task_loopspec`, or
:func:`plangate.approval.service.check_task_loopspec` with ``--check``), print.
"""

from __future__ import annotations

import argparse
import json

from plangate.cli.context import Context
from plangate.cli.output import print_json, print_result
from plangate.errors import PlanGateError
from plangate.plan.loopspec import normalised_yaml
from plangate.snapshot import check_task_id, find_repo_root
from plangate.verdict import ExitCode, Reason, Result


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Derive the LoopSpec {loop: ...} of a task from its plan.md (docs/loopspec.md "
        "mapping table). --check recomputes derived_loopspec_hash and compares it with "
        "approvals/c3.json (exit 0 equal, 1 otherwise).",
    )
    parser.add_argument("task", metavar="TASK", help="task id, e.g. TASK-0001")
    parser.add_argument("--maker", required=True, help="the implementing actor")
    parser.add_argument("--checker", required=True, help="the checking actor (not the maker)")
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml",
                        help="output form of the LoopSpec (yaml = the normalised, hashed bytes)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the record's derived_loopspec_hash")
    parser.add_argument("--json", action="store_true",
                        help="with --check: one JSON object, also when the LoopSpec cannot be "
                        "derived (verdict REJECTED and the reason)")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate loopspec``."""
    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    task_id = check_task_id(args.task)
    root = find_repo_root(ctx.cwd)
    if args.check:
        from plangate.approval.service import check_task_loopspec

        title = f"loopspec check {task_id}"
        try:
            result = check_task_loopspec(root, task_id, args.maker, args.checker)
        except PlanGateError as exc:
            if not args.json:
                raise
            # --json promises one object, also when the LoopSpec cannot be derived.
            failed = Result("REJECTED", (Reason(exc.code, exc.message, exc.hint),),
                            {"task_id": task_id})
            print_json(ctx, failed.to_json())
            return int(exc.exit_code)
        return print_result(ctx, result, as_json=args.json, title=title)
    from plangate.plan.service import derive_task_loopspec

    derived = derive_task_loopspec(root, task_id, args.maker, args.checker)
    if args.format == "json":
        ctx.out(json.dumps(derived.spec, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        ctx.stdout.write(normalised_yaml(derived.spec).decode("utf-8"))
    ctx.err(f"derived_loopspec_hash: {derived.hash}")
    return int(ExitCode.ACCEPTED)
