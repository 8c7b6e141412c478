"""``plangate c3 issue`` and ``plangate c3 verify``: parse, call one approval service, print."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from plangate import __version__
from plangate.cli.context import Context
from plangate.cli.output import print_json, print_result
from plangate.clock import utc_now_text
from plangate.snapshot import check_task_id, find_repo_root
from plangate.verdict import Result

if TYPE_CHECKING:
    import argparse

VERIFY_EXIT_HELP = (
    "exit codes: 0 accepted (c3-prime AUTO_APPROVED, or legacy APPROVED with a current "
    "plan_hash); "
    "1 rejected (malformed, stale, tampered, BLOCKED, legacy REJECTED, unknown approval_kind); "
    "3 a human must decide (HUMAN_ESCALATED, legacy CONDITIONAL)"
)
ISSUE_EXIT_HELP = (
    "exit codes: 0 record written; 1 refused (inconsistent inputs, existing record "
    "without --force, the acceptor would reject the bytes); 3 no record: a Plan Package "
    "artifact or a C-1/C-2 evidence marker failed (a human must act)"
)


def _parser() -> argparse.ArgumentParser:
    import argparse  # lazy: the common 'verify' form never needs it (see _fast_verify_args)

    parser = argparse.ArgumentParser(
        prog="plangate c3", description="Issue or verify the c3-prime record approvals/c3.json."
    )
    sub = parser.add_subparsers(dest="action", required=True)

    verify = sub.add_parser(
        "verify",
        help="verify approvals/c3.json (the acceptor)",
        description="Verify a task's approvals/c3.json against its Plan Package and git.",
        epilog=VERIFY_EXIT_HELP,
    )
    verify.add_argument("task", help="task id, e.g. TASK-0001")
    verify.add_argument(
        "--expected-sha",
        metavar="REV",
        help="commit the record must bind: a full id, an abbreviation, HEAD, a branch or a "
        "tag, resolved once to a full commit id (exec passes HEAD's id); without it the "
        "commit named by source_sha must exist but is not compared",
    )
    verify.add_argument("--json", action="store_true", help="print one JSON object")

    issue = sub.add_parser(
        "issue",
        help="produce approvals/c3.json (the producer)",
        description="Build the c3-prime record, check it with the acceptor, write it atomically.",
        epilog=ISSUE_EXIT_HELP,
    )
    issue.add_argument("task", help="task id, e.g. TASK-0001")
    issue.add_argument("--target-sha", required=True, help="commit the approval binds (source_sha)")
    issue.add_argument(
        "--reviewers",
        required=True,
        type=Path,
        help='JSON file: {"model_a": {"verdict": "approve", "evidence_ref": "..."}, '
        '"model_b": {...}}',
    )
    issue.add_argument(
        "--decision", required=True, help="AUTO_APPROVED, HUMAN_ESCALATED or BLOCKED"
    )
    issue.add_argument(
        "--policy-ref", required=True, help="arbiter policy id, e.g. plangate-arbiter@v1"
    )
    issue.add_argument("--issued-at", help="YYYY-MM-DDTHH:MM:SSZ (default: now, UTC)")
    issue.add_argument("--issued-by", default=f"plangate-{__version__}", help="issuer name")
    issue.add_argument(
        "--loopspec-actors",
        metavar="MAKER,CHECKER",
        help="also stamp derived_loopspec_hash of the LoopSpec derived with these actors",
    )
    issue.add_argument("--force", action="store_true", help="replace an existing record")
    issue.add_argument("--sign", metavar="KEY",
                       help="sign the record with this SSH key (approvals/c3.json.sig)")
    issue.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _fast_verify_args(args: list[str]) -> tuple[str, str | None, bool] | None:
    """``(task, expected_sha, as_json)`` for the plain ``verify`` form, else None.

    ``c3 verify`` is on the exec and hook hot path, where building the argparse
    parser (and its gettext lookups) costs more than the decision itself. This
    recognises only ``verify TASK [--json] [--expected-sha SHA | --expected-sha=SHA]``
    in any order, each option at most once, where no value starts with ``-``;
    argparse parses exactly these the same way. Anything else (help, abbreviated
    or repeated options, ``--``, dash-leading values, errors) returns None and
    goes through argparse, so messages and exit codes stay argparse's own.
    """
    if len(args) < 2 or args[0] != "verify":
        return None
    task: str | None = None
    expected_sha: str | None = None
    seen_sha = as_json = False
    index = 1
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--json" and not as_json:
            as_json = True
        elif word == "--expected-sha" and not seen_sha and index < len(args):
            expected_sha, seen_sha = args[index], True
            index += 1
            if expected_sha.startswith("-"):
                return None
        elif word.startswith("--expected-sha=") and not seen_sha:
            expected_sha, seen_sha = word[len("--expected-sha="):], True
        elif not word.startswith("-") and task is None:
            task = word
        else:
            return None
    if task is None:
        return None
    return task, expected_sha, as_json


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate c3``."""
    fast = _fast_verify_args(argv[1:])
    if fast is not None:
        task, expected_sha, as_json = fast
        repo_root = find_repo_root(ctx.cwd)
        task_id = check_task_id(task)
        return _verify(ctx, repo_root, task_id, expected_sha=expected_sha, as_json=as_json)
    args = _parser().parse_args(argv[1:])
    repo_root = find_repo_root(ctx.cwd)
    task_id = check_task_id(args.task)
    if args.action == "verify":
        return _verify(ctx, repo_root, task_id, expected_sha=args.expected_sha, as_json=args.json)
    return _issue(ctx, repo_root, task_id, args)


def _verify(
    ctx: Context, repo_root: Path, task_id: str, *, expected_sha: str | None, as_json: bool
) -> int:
    from plangate.approval.service import resolve_expected_sha, verify_task

    if expected_sha is not None:
        expected_sha = resolve_expected_sha(repo_root, expected_sha)
    result = verify_task(repo_root, task_id, expected_sha=expected_sha)
    if as_json:
        out = result.to_json()
        out["kind"] = result.facts.get("kind")
        out["facts"] = {k: v for k, v in result.facts.items() if k != "record"}
        print_json(ctx, out)
        return int(result.exit_code)
    kind = result.facts.get("kind") or "unknown"
    return print_result(ctx, result, as_json=False, title=f"{task_id} c3 verify ({kind})")


def _issue(ctx: Context, repo_root: Path, task_id: str, args: argparse.Namespace) -> int:
    from plangate.approval.service import IssueRequest, issue_task

    request = IssueRequest(
        task_id=task_id,
        target_sha=args.target_sha,
        reviewers={},
        decision=args.decision,
        policy_ref=args.policy_ref,
        issued_at=args.issued_at or utc_now_text(),
        issued_by=args.issued_by,
        force=args.force,
    )
    result: Result = issue_task(
        repo_root, request, ctx.env, reviewers_file=ctx.cwd / args.reviewers,
        reviewers_shown=str(args.reviewers), loopspec_actors=args.loopspec_actors,
    )
    code = print_result(ctx, result, as_json=args.json, title=f"{task_id} c3 issue")
    if args.sign and result.verdict == "ACCEPTED":
        from plangate.authority.signing import sign_record

        path = sign_record(repo_root, task_id, ctx.cwd / args.sign)
        if not args.json:
            ctx.out(f"signed: {path}")
    return code
