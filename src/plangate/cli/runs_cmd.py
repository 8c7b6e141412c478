"""``plangate runs``: list, show, apply the in-scope part of, and prune exec's runs.

::

    plangate runs list [--json]
    plangate runs show RUN [--json]                 the diff and the verdict of each path
    plangate runs apply RUN --in-scope [--json]     a person only: land the in-scope paths
    plangate runs prune [--older-than AGE] [--dry-run] [--json]

The rules are in :mod:`plangate.execution.salvage`, the IO in
:mod:`plangate.execution.runs`; docs/isolation.md explains the commands.
"""

from __future__ import annotations

import argparse
from typing import Any

from plangate.agents import HumanOnly, refuse_unless_human
from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.clock import utc_now
from plangate.errors import PlanGateError, UsageError
from plangate.execution import runs, salvage
from plangate.snapshot import find_repo_root
from plangate.verdict import ExitCode

APPLY_GATE = HumanOnly(
    "RUNS_APPLY_AGENT_ENVIRONMENT",
    "RUNS_APPLY_NOT_INTERACTIVE",
    "runs apply refused",
    "a person runs 'plangate runs apply RUN --in-scope' in their own terminal, outside the "
    "agent session",
)
"""How ``runs apply`` refuses an agent or a caller without a terminal."""

APPLIED_BY = (
    "a person at a terminal (no agent marker and an interactive terminal were seen; "
    "neither is a proof)"
)
"""What the ledger says of who asked for a partial apply."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plangate runs",
        description="The runs of 'plangate exec': list them, show one (its diff and the "
        "verdict of each changed path), land the in-scope part of a refused run, and prune "
        "finished runs' directories (.plangate/runs/) and branches (plangate/runs/*).",
        epilog="exit codes: 0 done; 1 refused (an unknown run, a result that does not match "
        "the ledger, a rewritten branch, nothing in scope, the approval no longer holds); "
        "3 apply asked for by an agent or without a terminal; 2 usage error",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    listing = sub.add_parser("list", help="every run: its task, verdict, directory and branch")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    show = sub.add_parser("show", help="a run's diff and the verdict of each changed path")
    show.add_argument("run", help="the run id (plangate runs list)")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    apply = sub.add_parser(
        "apply",
        help="land the in-scope part of a refused run (a person only; recorded)",
        description="Build one commit on the run's approved commit from the paths of its "
        "result that are in scope on their own, judge it as exec judges a result, write it to "
        "branch plangate/runs/RUN (and fast-forward the current branch when it is still at "
        "the approved commit with no tracked change), and record exec_partial_apply in the "
        "ledger with the paths left out. Only a person at a terminal, outside any agent, "
        "may run it.",
    )
    apply.add_argument("run", help="the run id (plangate runs list)")
    apply.add_argument("--in-scope", action="store_true", required=True,
                       help="apply only the paths that are in scope on their own (required)")
    apply.add_argument("--json", action="store_true", help="print one JSON object")
    prune = sub.add_parser(
        "prune",
        help="remove finished runs' directories and their plangate/runs/* branches",
        description="Remove the directory and the branch of every finished run. A run whose "
        "task is locked (a run or an apply in progress) is never touched; a branch no other "
        "local branch contains (the only reference to that work) and the branch checked out "
        "are kept. Recorded in the ledger (runs_pruned).",
    )
    prune.add_argument("--older-than", default="0", metavar="AGE",
                       help="only runs started longer ago than AGE: 30m, 12h, 14d, 2w "
                       "(default 0: every finished run)")
    prune.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    prune.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate runs``."""
    args = _parser().parse_args(argv[1:])
    root = find_repo_root(ctx.cwd)
    try:
        if args.action == "list":
            return _list(ctx, root, as_json=args.json)
        if args.action == "show":
            return _show(ctx, root, args.run, as_json=args.json)
        if args.action == "apply":
            refuse_unless_human(ctx.env, ctx.stdin, APPLY_GATE)
            return _apply(ctx, root, args.run, as_json=args.json)
        return _prune(ctx, root, args.older_than, dry_run=args.dry_run, as_json=args.json)
    except UsageError:
        raise
    except PlanGateError as exc:
        if args.json:
            verdict = "HUMAN_REQUIRED" if exc.exit_code == ExitCode.HUMAN else "REJECTED"
            print_json(ctx, {"verdict": verdict, "reasons": [
                {"code": exc.code, "message": exc.message, "hint": exc.hint}]})
        else:
            ctx.err(f"plangate runs {args.action}: {exc.code}: {exc.message}")
            if exc.hint:
                ctx.err(f"  hint: {exc.hint}")
        return int(exc.exit_code) if exc.exit_code != ExitCode.ACCEPTED else 1


def _list(ctx: Context, root: Any, *, as_json: bool) -> int:
    found = runs.list_runs(root, ctx.env)
    if as_json:
        print_json(ctx, {"runs": [r.to_json() for r in found]})
        return 0
    if not found:
        ctx.out("no runs")
        return 0
    for r in found:
        branch = {"none": "-", "intact": r.branch or "-", "rewritten": f"{r.branch} (REWRITTEN)"}
        extras = []
        if r.partially_applied:
            extras.append("in-scope part applied")
        if not r.directory:
            extras.append("directory pruned")
        changed = "?" if r.changed_count is None else str(r.changed_count)
        ctx.out(f"{r.run_id}  {r.verdict:<14} {changed:>4} path(s)  "
                f"{branch[r.branch_state]}" + (f"  ({'; '.join(extras)})" if extras else ""))
    return 0


def _verdicts_json(verdicts: tuple[salvage.PathVerdict, ...]) -> list[dict[str, Any]]:
    return [{"path": v.path, "verdict": v.verdict, "reasons": list(v.codes)} for v in verdicts]


def _show(ctx: Context, root: Any, run_id: str, *, as_json: bool) -> int:
    loaded = runs.load_run(root, ctx.env, run_id)
    in_scope = [v for v in loaded.verdicts if v.in_scope]
    if as_json:
        print_json(ctx, {
            "run_id": run_id,
            "task_id": loaded.run.task_id,
            "verdict": loaded.verdict,
            "approved": loaded.approved,
            "result": loaded.result,
            "approval_holds": loaded.verification.accepted,
            "paths": _verdicts_json(loaded.verdicts),
            "in_scope_count": len(in_scope),
            "branch_problem": loaded.branch_problem.to_json() if loaded.branch_problem else None,
            "partial_apply": dict(loaded.partial) if loaded.partial else None,
            "diff": loaded.diff.decode("utf-8", "replace"),
        })
        return 0
    ctx.out(f"run {run_id} of {loaded.run.task_id}: {loaded.verdict}")
    ctx.out(f"  approved commit {loaded.approved}")
    ctx.out(f"  result          {loaded.result}")
    if not loaded.verification.accepted:
        ctx.out(f"  the approval no longer holds: {', '.join(loaded.verification.codes)}")
    if loaded.branch_problem is not None:
        ctx.out(f"  {loaded.branch_problem.code}: {loaded.branch_problem.message}")
    if loaded.partial is not None:
        ctx.out(f"  in-scope part applied as {str(loaded.partial.get('applied'))[:12]}")
    ctx.out("paths:")
    for v in loaded.verdicts:
        codes = f" ({', '.join(v.codes)})" if v.codes else ""
        ctx.out(f"  {v.verdict:<14} {v.path}{codes}")
    if in_scope and loaded.verdict not in ("ACCEPTED", "NO_CHANGES") and loaded.partial is None:
        ctx.out(f"{len(in_scope)} path(s) in scope: a person may land them with "
                f"'plangate runs apply {run_id} --in-scope'")
    ctx.out("diff:")
    ctx.out(loaded.diff.decode("utf-8", "replace").rstrip("\n"))
    return 0


def _apply(ctx: Context, root: Any, run_id: str, *, as_json: bool) -> int:
    done = runs.apply_in_scope(root, ctx.env, run_id, by=APPLIED_BY)
    if as_json:
        print_json(ctx, {
            "verdict": "ACCEPTED",  # the commit of the in-scope paths, judged as a whole
            "partial": True,
            "run_id": run_id,
            "commit": done.commit,
            "branch": done.landed.branch,
            "fast_forwarded": done.landed.fast_forwarded,
            "applied_paths": list(done.applied),
            "left_out": _verdicts_json(done.left_out),
        })
    else:
        ctx.out(f"plangate runs apply: {len(done.applied)} in-scope path(s) of {run_id} "
                f"committed as {done.commit[:12]} on branch {done.landed.branch}; "
                f"{done.landed.note}")
        ctx.out(f"  left out ({len(done.left_out)}): " + ", ".join(
            f"{v.path} ({', '.join(v.codes) or v.verdict})" for v in done.left_out))
        ctx.out("  recorded in the ledger as exec_partial_apply")
    return 0


def _prune(ctx: Context, root: Any, older_than: str, *, dry_run: bool, as_json: bool) -> int:
    age = salvage.parse_duration(older_than)
    if age is None:
        raise UsageError(
            "RUNS_AGE_MALFORMED",
            f"--older-than {older_than!r} is not an age",
            "write a number and a unit: 30m, 12h, 14d, 2w (or 0)",
        )
    done = runs.prune(root, ctx.env, older_than=age, now=utc_now(), dry_run=dry_run)
    if as_json:
        print_json(ctx, {"dry_run": dry_run, **done.to_json()})
        return 0
    verb = "would remove" if dry_run else "removed"
    ctx.out(f"plangate runs prune: {verb} the directories of {len(done.removed_dirs)} run(s) "
            f"and {len(done.removed_branches)} branch(es)")
    for name in done.removed_branches:
        ctx.out(f"  {verb} branch {name}")
    for run_id, what, reason in done.kept:
        ctx.out(f"  kept {what} {run_id}: {reason}")
    return 0
