"""``plangate eval``: pre-register plans, register candidates, run the policy gate.

``eval run`` and ``eval review`` belong to part 2 of the evaluation trust
boundary and are delegated to :mod:`plangate.cli.eval_run_cmd`.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from plangate.cli.context import Context
from plangate.cli.output import print_json, print_result
from plangate.errors import InputRejected, UsageError
from plangate.fsutil import FileState, read_regular_file
from plangate.verdict import ExitCode

MAX_INPUT_BYTES = 1_000_000
DELEGATED = ("run", "review")


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Evaluation trust boundary: plans are registered before candidates, and a "
        "candidate enters paired evaluation only through the policy gate (docs/evaluation.md).",
    )
    sub = parser.add_subparsers(dest="group", required=True)
    plan = sub.add_parser("plan", help="pre-register or show an evaluation plan")
    plan_sub = plan.add_subparsers(dest="action", required=True)
    reg = plan_sub.add_parser(
        "register",
        help="pin a plan (YAML/JSON) and write it to the ledger",
        description="The evaluator registers plans. Where a trust root is in force, FILE.sig "
        "(ssh-keygen -Y sign -n plangate-eval-plan) by a principal holding the evaluator role "
        "must sit beside FILE; without one the plan is recorded as unauthenticated and callers "
        "with agent markers are refused. A plan less strict than a plan it replaces that has a "
        "recorded FAIL needs a human evaluator's signature.",
    )
    reg.add_argument("file", metavar="FILE")
    reg.add_argument("--json", action="store_true", help="print one JSON object")
    show = plan_sub.add_parser("show", help="print a registered plan")
    show.add_argument("digest", metavar="DIGEST")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    cand = sub.add_parser("candidate", help="register a harness improvement candidate")
    cand_sub = cand.add_subparsers(dest="action", required=True)
    creg = cand_sub.add_parser(
        "register",
        help="register a candidate (YAML/JSON)",
        description="The evaluator selects the plan that judges the candidate: the newest "
        "registered plan whose covers match every path the candidate changes. "
        "evaluation_plan_digest may be left out; a digest given must be the selected plan. "
        "allowed_paths items starting with '!' exclude ('!protected-anywhere': every protected "
        "pattern starting with **/).",
    )
    creg.add_argument("file", metavar="FILE")
    creg.add_argument("--json", action="store_true", help="print one JSON object")
    from plangate.evaluation.gate.rules import GATE_ORDER

    gate = sub.add_parser(
        "gate",
        help="policy gate: may the candidate enter paired evaluation?",
        description="The policy gate applies its rules in this order (docs/evaluation.md): "
        + ", ".join(GATE_ORDER)
        + ". Exit 0 AUTO_APPROVED, 3 HUMAN_REQUIRED, 1 DENIED, 4 INCONCLUSIVE.",
    )
    gate.add_argument("candidate", metavar="CANDIDATE", help="candidate digest or candidate_id")
    gate.add_argument("--json", action="store_true", help="print one JSON object")
    sub.add_parser("run", help="paired evaluation (see 'plangate eval run --help')", add_help=False)
    sub.add_parser(
        "review", help="review records (see 'plangate eval review --help')", add_help=False
    )
    return parser


def _read_input(ctx: Context, name: str) -> tuple[bytes, str]:
    if name == "-":
        return ctx.stdin.read(MAX_INPUT_BYTES + 1)[: MAX_INPUT_BYTES + 1], "<stdin>"
    read = read_regular_file(Path(ctx.cwd) / name, MAX_INPUT_BYTES)
    if read.state is not FileState.OK or read.data is None:
        raise InputRejected(
            "EVAL_INPUT_UNREADABLE",
            f"cannot read {name}: {read.detail}",
            "give a regular file (symlinks and FIFOs are refused)",
        )
    return read.data, name


def _plan_register(ctx: Context, args: argparse.Namespace) -> int:
    from plangate.evaluation.registry.service import register_plan_bytes

    data, source = _read_input(ctx, args.file)
    plan_path = None if args.file == "-" else Path(ctx.cwd) / args.file
    registered = register_plan_bytes(ctx.cwd, ctx.env, data, source, plan_path)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "ACCEPTED",
                "reasons": [],
                "warnings": [w.to_json() for w in registered.warnings],
                "plan_digest": registered.digest,
                "newly_registered": registered.newly_registered,
                "ledger_seq": registered.entry_seq,
                "baseline_manifest_ref": registered.plan["baseline_manifest_ref"],
                "plan": dict(registered.plan),
            },
        )
    else:
        state = "registered" if registered.newly_registered else "already registered"
        ctx.out(registered.digest)
        ctx.err(f"plan {registered.plan['plan_id']} {state} (ledger seq {registered.entry_seq})")
        for warning in registered.warnings:
            ctx.err(f"warning: {warning.code}: {warning.message}")
            ctx.err(f"  hint: {warning.hint}")
    return int(ExitCode.ACCEPTED)


def _plan_show(ctx: Context, args: argparse.Namespace) -> int:
    from plangate.canonical import pretty_bytes
    from plangate.evaluation.registry.service import show_plan

    registered = show_plan(ctx.cwd, ctx.env, args.digest)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "ACCEPTED",
                "reasons": [],
                "plan_digest": registered.digest,
                "ledger_seq": registered.entry_seq,
                "plan": dict(registered.plan),
            },
        )
    else:
        ctx.stdout.write(pretty_bytes(dict(registered.plan)).decode("utf-8"))
    return int(ExitCode.ACCEPTED)


def _candidate_register(ctx: Context, args: argparse.Namespace) -> int:
    from plangate.evaluation.registry.service import register_candidate_bytes

    data, source = _read_input(ctx, args.file)
    registered = register_candidate_bytes(ctx.cwd, ctx.env, data, source)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "ACCEPTED",
                "reasons": [],
                "candidate_digest": registered.digest,
                "candidate_id": registered.candidate["candidate_id"],
                "evaluation_plan_digest": registered.candidate["evaluation_plan_digest"],
                "newly_registered": registered.newly_registered,
                "ledger_seq": registered.entry_seq,
            },
        )
    else:
        ctx.out(registered.digest)
        ctx.err(
            f"candidate {registered.candidate['candidate_id']} registered "
            f"(ledger seq {registered.entry_seq}); the evaluator selected plan "
            f"{registered.candidate['evaluation_plan_digest']}"
        )
    return int(ExitCode.ACCEPTED)


def _print_gate(ctx: Context, facts: dict[str, Any]) -> None:
    ctx.out(f"  observed diff: {len(facts.get('observed_diff', []))} path(s)")
    for path in facts.get("observed_diff", [])[:20]:
        ctx.out(f"    {path}")
    for item in facts.get("matched_surfaces", []):
        ctx.out(
            f"  protected: {item['path']} by {item['pattern']} [{item['class']}] "
            f"({item['provenance']}: {item['source']})"
        )
    for row in facts.get("participation", []):
        ctx.out(
            f"  participation: {row['component']} -> "
            f"{'participating' if row['participating'] else 'not participating'} "
            f"({row['basis']})"
        )
    if "required_independence" in facts:
        ctx.out(f"  required independence: {facts['required_independence']}")


def _gate(ctx: Context, args: argparse.Namespace) -> int:
    from plangate.evaluation.gate.service import gate_candidate

    result = gate_candidate(ctx.cwd, ctx.env, args.candidate)
    code = print_result(ctx, result, as_json=args.json, title="policy gate")
    if not args.json:
        _print_gate(ctx, dict(result.facts))
    return code


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate eval``."""
    if len(argv) > 1 and argv[1] in DELEGATED:
        from plangate.cli import eval_run_cmd

        return eval_run_cmd.run(argv, ctx)
    # argparse prints usage errors and --help itself: route them to this context.
    with contextlib.redirect_stderr(ctx.stderr), contextlib.redirect_stdout(ctx.stdout):
        args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    if args.group == "plan" and args.action == "register":
        return _plan_register(ctx, args)
    if args.group == "plan" and args.action == "show":
        return _plan_show(ctx, args)
    if args.group == "candidate":
        return _candidate_register(ctx, args)
    if args.group == "gate":
        return _gate(ctx, args)
    raise UsageError("EVAL_USAGE", f"unknown eval command {argv[1:]}", "see plangate eval --help")
