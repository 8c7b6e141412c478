"""``plangate arbiter``: run the C-3' decision table on an input file or on a task.

Two forms:

- ``plangate arbiter --input FILE|- [--surfaces FILE] [--timestamp T] [--json]``
  decides from an arbiter input document (reference section 5.2 contract);
- ``plangate arbiter TASK --target-sha SHA --base REV --reviewers FILE
  --loopspec-actors MAKER,CHECKER --class CLASS [--lite AXES] [...] [--issue]``
  builds that document from the repository first (see
  :mod:`plangate.approval.arbiter_input`).

Exit codes: 0 AUTO_APPROVED, 3 HUMAN_ESCALATED, 1 BLOCKED or malformed input,
2 usage error. The decision is appended to the ledger (kind
``arbiter_decision``) when the ledger can be written; when it cannot, a warning
is printed and the decision stands unchanged.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from plangate.approval.arbiter import (
    LITE_AXES,
    POLICY_REF,
    decide,
    parse_input,
    parse_input_bytes,
    provenance_record,
)
from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.clock import is_utc_timestamp, utc_now_text
from plangate.errors import InputRejected, PlanGateError, UsageError
from plangate.fsutil import read_regular_file
from plangate.snapshot import TASK_ID_RE, check_task_id, find_repo_root
from plangate.surfaces import resolve_surfaces
from plangate.verdict import ExitCode, Result

MAX_INPUT_BYTES = 1024 * 1024
LEDGER_KIND = "arbiter_decision"

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
    return parser


def _timestamp(value: str | None) -> str:
    if value is None:
        return utc_now_text()
    if not is_utc_timestamp(value):
        raise UsageError("ARBITER_TIMESTAMP_INVALID",
                         f"--timestamp {value!r} is not YYYY-MM-DDTHH:MM:SSZ",
                         "e.g. --timestamp 2026-01-31T12:00:00Z")
    return value


def _read_input(ctx: Context, name: str) -> bytes:
    if name == "-":
        data = ctx.stdin.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise InputRejected("ARBITER_INPUT_UNREADABLE",
                                f"stdin input is larger than {MAX_INPUT_BYTES} bytes", "")
        return bytes(data)
    read = read_regular_file(ctx.cwd / name, MAX_INPUT_BYTES)
    if not read.ok or read.data is None:
        raise InputRejected("ARBITER_INPUT_UNREADABLE",
                            f"input file {name} {read.detail or read.state.value}",
                            "give a readable regular JSON file or '-' for stdin")
    return read.data


def _lite_axes(text: str) -> tuple[str, ...]:
    if text.strip() == "all":
        return LITE_AXES
    axes = tuple(a.strip() for a in text.split(",") if a.strip())
    unknown = [a for a in axes if a not in LITE_AXES]
    if unknown:
        raise UsageError("ARBITER_LITE_AXIS_UNKNOWN", f"unknown lite axis {unknown}",
                         f"use {', '.join(LITE_AXES)} or 'all'")
    return axes


def _write_ledger(ctx: Context, repo_root: Path, subject: str, payload: dict[str, Any]) -> None:
    """Append the decision; a failure is a warning and never changes the decision."""
    if not (repo_root / ".git").exists():
        ctx.err("plangate: warning: ARBITER_LEDGER_UNAVAILABLE: not inside a git repository; "
                "the decision was not written to the ledger")
        return
    try:
        from plangate.ledger import open_ledger

        with open_ledger(repo_root, ctx.env) as ledger:
            ledger.append(LEDGER_KIND, subject, payload)
    except (PlanGateError, ImportError, OSError) as exc:
        code = getattr(exc, "code", type(exc).__name__)
        ctx.err(f"plangate: warning: ARBITER_LEDGER_UNAVAILABLE: {code}: {exc}; "
                "the decision stands but is not in the ledger")


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


def _subject(document: dict[str, Any], fallback: str) -> str:
    run = document.get("run")
    if isinstance(run, dict) and isinstance(run.get("task_id"), str) \
            and TASK_ID_RE.fullmatch(run["task_id"]):
        return str(run["task_id"])
    return fallback


def _run_input_form(ctx: Context, args: argparse.Namespace) -> int:
    repo_root = find_repo_root(ctx.cwd)
    timestamp = _timestamp(args.timestamp)
    inp = parse_input_bytes(_read_input(ctx, args.input))
    surfaces = resolve_surfaces(repo_root, ctx.cwd / args.surfaces if args.surfaces else None)
    result = decide(inp, surfaces, timestamp=timestamp)
    _print_decision(ctx, result, args.json)
    if not args.no_ledger:
        _write_ledger(ctx, repo_root, _subject(dict(inp.document), inp.target_sha),
                      provenance_record(result))
    return int(result.exit_code)


def _run_task_form(ctx: Context, args: argparse.Namespace) -> int:
    from plangate.approval.arbiter_input import TaskArbiterRequest, build_task_input
    from plangate.approval.record import parse_reviewers

    task_id = check_task_id(args.task)
    missing = [flag for flag, value in (("--target-sha", args.target_sha), ("--base", args.base),
                                        ("--reviewers", args.reviewers),
                                        ("--loopspec-actors", args.loopspec_actors),
                                        ("--class", args.cls)) if value is None]
    if missing:
        raise UsageError("ARBITER_TASK_ARGS_MISSING", f"the TASK form needs {', '.join(missing)}",
                         "see 'plangate arbiter --help'")
    actors = args.loopspec_actors.split(",")
    if len(actors) != 2 or not all(a.strip() for a in actors):
        raise UsageError("LOOPSPEC_ACTORS_INVALID", "--loopspec-actors takes MAKER,CHECKER",
                         "e.g. --loopspec-actors impl-agent,qa-agent")
    timestamp = _timestamp(args.timestamp)
    read = read_regular_file(ctx.cwd / args.reviewers, MAX_INPUT_BYTES)
    if not read.ok or read.data is None:
        raise InputRejected("REVIEWERS_UNREADABLE",
                            f"reviewers file {args.reviewers} {read.detail or read.state.value}",
                            "check the path")
    reviewers = parse_reviewers(read.data)
    run = None
    if args.run_id is not None or args.round_index is not None or args.cost_cap is not None:
        if args.run_id is None or args.round_index is None:
            raise UsageError("ARBITER_TASK_ARGS_MISSING",
                             "a run needs both --run-id and --round-index",
                             "e.g. --run-id run-7 --round-index 2 --cost-cap 3")
        run = {"run_id": args.run_id, "round_index": args.round_index, "task_id": task_id,
               "repair_action": None, "cost_cap": args.cost_cap}
    repo_root = find_repo_root(ctx.cwd)
    request = TaskArbiterRequest(
        task_id=task_id, target_sha=args.target_sha, base=args.base, reviewers=reviewers,
        maker=actors[0].strip(), checker=actors[1].strip(), lite=_lite_axes(args.lite),
        cls=args.cls, breakdown=args.breakdown, reject_category=args.reject_category,
        model_c=args.model_c, model_d=args.model_d, run=run,
        explicit_surfaces=(ctx.cwd / args.surfaces) if args.surfaces else None,
    )
    built = build_task_input(repo_root, request)
    if args.print_input:
        ctx.out(json.dumps(built.document, indent=2, sort_keys=True, ensure_ascii=False))
        return int(ExitCode.ACCEPTED)
    inp = parse_input(built.document)
    result = decide(inp, built.surfaces, timestamp=timestamp)
    extra: dict[str, Any] = {
        "task_id": task_id,
        "base_sha": built.base_full,
        "derived_loopspec_hash": built.derived_loopspec_hash,
        "plan_package_problems": [r.to_json() for r in built.package_problems],
    }
    payload = provenance_record(result) | extra
    if not args.no_ledger:
        _write_ledger(ctx, repo_root, task_id, payload)
    exit_code = int(result.exit_code)
    if args.issue:
        issue = _issue(ctx, repo_root, task_id, target_full=built.target_full,
                       reviewers=reviewers, result=result, timestamp=timestamp,
                       loopspec_hash=built.derived_loopspec_hash, force=args.force)
        extra["issue"] = issue.to_json()
        if not issue.accepted:
            exit_code = int(issue.exit_code)
    _print_decision(ctx, result, args.json, extra if args.json else None)
    if args.issue and not args.json:
        issue_json = extra["issue"]
        ctx.out(f"c3 issue: {issue_json['verdict']}")
        for reason in issue_json["reasons"]:
            ctx.out(f"  - {reason['code']}: {reason['message']}")
    return exit_code


def _issue(ctx: Context, repo_root: Path, task_id: str, *, target_full: str, reviewers: Any,
           result: Result, timestamp: str, loopspec_hash: str, force: bool) -> Result:
    """Write approvals/c3.json with the arbiter's decision through the c3-prime producer."""
    from plangate.approval.arbiter import ISSUED_BY
    from plangate.approval.service import IssueRequest, issue_record

    request = IssueRequest(
        task_id=task_id, target_sha=target_full, reviewers=reviewers, decision=result.verdict,
        policy_ref=POLICY_REF, issued_at=timestamp, issued_by=ISSUED_BY, force=force,
        derived_loopspec_hash=loopspec_hash,
    )
    try:
        return issue_record(repo_root, request, ctx.env)
    except PlanGateError as exc:
        from plangate.verdict import Reason

        return Result("REJECTED", (Reason(exc.code, exc.message, exc.hint),), {"task_id": task_id})


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
