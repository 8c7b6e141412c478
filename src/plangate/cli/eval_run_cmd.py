"""``plangate eval run`` and ``plangate eval review``: paired evaluation and independence.

``eval_cmd`` delegates here with ``argv`` starting ``["eval", "run", ...]`` or
``["eval", "review", ...]``.

- ``plangate eval run CANDIDATE [--jobs N] [--executor local|ray[:ADDRESS]] [--json]``:
  exit 0 PASS, 1 FAIL, 4 INCONCLUSIVE.
- ``plangate eval review add CANDIDATE FILE``: attach a review record.
- ``plangate eval review level CANDIDATE [--json]``: the computed level against
  the required one (exit 0 sufficient, 4 insufficient).
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from plangate.cli.context import Context
from plangate.cli.output import print_json, print_result
from plangate.errors import UsageError
from plangate.verdict import ExitCode, Result

MAX_JOBS = 64


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs must be an integer, got {text!r}") from None
    if not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"--jobs must be between 1 and {MAX_JOBS}")
    return value


def run(argv: list[str], ctx: Context) -> int:
    """Entry point (``argv[0] == "eval"``, ``argv[1]`` is ``run`` or ``review``)."""
    if len(argv) < 2 or argv[1] not in ("run", "review"):
        raise UsageError(
            "EVAL_SUBCOMMAND_UNKNOWN",
            f"unknown eval subcommand {argv[1:2]}",
            "use 'plangate eval run CANDIDATE' or 'plangate eval review add|level ...'",
        )
    if argv[1] == "run":
        return _run(argv, ctx)
    return _review(argv, ctx)


def _run(argv: list[str], ctx: Context) -> int:
    from plangate.evaluation.run.decision import DECISION_ORDER

    parser = argparse.ArgumentParser(
        prog=f"plangate {argv[0]} run",
        description="Paired evaluation of a registered candidate against its baseline; "
        "prints the Promotion Decision (PASS / FAIL / INCONCLUSIVE). Exit 0 / 1 / 4. "
        "Rules in order (docs/evaluation-run.md): " + ", ".join(DECISION_ORDER) + ".",
    )
    parser.add_argument("candidate", help="candidate digest or candidate_id")
    parser.add_argument("--jobs", type=_jobs, default=1, help="trials run at once (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--executor", default="local", metavar="local|ray[:ADDRESS]",
        help="where trials run: the local pool (default) or a Ray cluster, one task per "
        "trial (docs/evaluation-ray.md)",
    )
    # argparse prints usage errors and --help itself: route them to this context.
    with contextlib.redirect_stderr(ctx.stderr), contextlib.redirect_stdout(ctx.stdout):
        args = parser.parse_args(argv[2:])
    from plangate.evaluation.run.distributed import choose_executor
    from plangate.evaluation.run.service import run_evaluation
    from plangate.evaluation.run.trials import ProgressLine

    executor = choose_executor(
        args.executor, args.jobs, None if args.json else ProgressLine(ctx.stderr)
    )
    outcome = run_evaluation(
        ctx.cwd,
        ctx.env,
        args.candidate,
        jobs=args.jobs,
        executor=executor,
        progress=None if args.json else ctx.stderr,
    )
    result = outcome.result
    if args.json:
        body = result.to_json()
        body["decision"] = dict(outcome.decision)
        body["decision_digest"] = outcome.decision_digest
        body["experiment_result_ref"] = outcome.experiment_digest
        print_json(ctx, body)
        return _exit(result)
    print_result(ctx, result, as_json=False, title="Promotion Decision")
    facts = result.facts
    ctx.out(f"  candidate: {facts.get('candidate_id')} ({facts.get('candidate_ref')})")
    ctx.out(f"  plan: {facts.get('evaluation_plan_digest')}")
    ctx.out(f"  trials: {facts.get('trials_completed')}/{facts.get('trials_total')} completed")
    ind = facts.get("independence", {})
    ctx.out(f"  independence: {ind.get('observed')} (required {ind.get('required')})")
    for row in facts.get("fixtures", []):
        b, c = row["baseline"], row["candidate"]
        ctx.out(
            f"  {row['role']:<17} {row['id']:<20} baseline stopped {b['stopped']}/{b['completed']}"
            f"  candidate stopped {c['stopped']}/{c['completed']}"
        )
    _print_trial_errors(ctx, outcome.experiment.get("trials", []))
    if facts.get("preflight"):
        ctx.out(
            "  preflight: no trial ran; this INCONCLUSIVE is not final: fix the above and run again"
        )
    ctx.out(f"  experiment result: {outcome.experiment_digest}")
    ctx.out(f"  decision record:   {outcome.decision_digest}")
    ctx.out("  production_promotion_executed: false")
    return _exit(result)


MAX_TRIAL_ERRORS_SHOWN = 10


def _print_trial_errors(ctx: Context, trials: object) -> None:
    """Each runner or grader error with its detail (the ledger keeps them all)."""
    errors = (
        [t for t in trials if isinstance(t, dict) and t.get("error_code")]
        if isinstance(trials, list)
        else []
    )
    for trial in errors[:MAX_TRIAL_ERRORS_SHOWN]:
        exit_code = f" (exit {trial['exit_code']})" if "exit_code" in trial else ""
        ctx.out(
            f"  trial error: {trial.get('side')} {trial.get('fixture_id')} #{trial.get('trial')}: "
            f"{trial['error_code']}{exit_code}: {str(trial.get('detail', '')).strip()}"
        )
    if len(errors) > MAX_TRIAL_ERRORS_SHOWN:
        ctx.out(f"  ... {len(errors) - MAX_TRIAL_ERRORS_SHOWN} more trial error(s) in the ledger")


def _exit(result: Result) -> int:
    """PASS 0, INCONCLUSIVE 4, anything else 1 (fail closed)."""
    if result.verdict == "PASS":
        return int(ExitCode.ACCEPTED)
    if result.verdict == "INCONCLUSIVE":
        return int(ExitCode.INCONCLUSIVE)
    return int(ExitCode.REJECTED)


def _review(argv: list[str], ctx: Context) -> int:
    parser = argparse.ArgumentParser(
        prog=f"plangate {argv[0]} review",
        description="Attach review records to a candidate and show its computed "
        "Independence Level (I0..I4).",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    add = sub.add_parser(
        "add",
        help="attach a review record (JSON, plangate-review/1); FILE.sig beside it, an SSH "
        "signature in namespace plangate-eval-review, makes the reviewer a verified principal",
    )
    add.add_argument("candidate")
    add.add_argument("file")
    add.add_argument("--json", action="store_true")
    level = sub.add_parser("level", help="the computed level against the required one")
    level.add_argument("candidate")
    level.add_argument("--json", action="store_true")
    # argparse prints usage errors and --help itself: route them to this context.
    with contextlib.redirect_stderr(ctx.stderr), contextlib.redirect_stdout(ctx.stdout):
        args = parser.parse_args(argv[2:])
    from plangate.evaluation.registry import service as registry

    if args.action == "add":
        review_file = ctx.cwd / Path(args.file)
        result = registry.add_review(ctx.cwd, ctx.env, args.candidate, review_file)
        if args.json:
            print_json(ctx, result.to_json())
        else:
            ctx.out(f"review recorded: {result.facts['review_digest']}")
            ctx.out(f"candidate level now: {result.facts['level']} ({result.facts['authority']})")
            for reason in result.reasons:
                ctx.out(f"  - {reason.code}: {reason.message}")
        return 0
    result = registry.review_level(ctx.cwd, ctx.env, args.candidate)
    if args.json:
        print_json(ctx, result.to_json())
    else:
        ctx.out(
            f"independence: {result.facts['level']} (required {result.facts['required']}; "
            f"{result.facts.get('authority', 'unauthenticated')})"
        )
        for record in result.facts.get("records", []):
            ctx.out(f"  record {record['index']}: {record['level']} - {record['why']}")
        for reason in result.reasons:
            ctx.out(f"  - {reason.code}: {reason.message}")
    return 0 if result.verdict == "ACCEPTED" else int(ExitCode.INCONCLUSIVE)
