"""``plangate ci check --base REF --head REF``: check a pull request; ``ci codeowners``."""

from __future__ import annotations

import argparse
from pathlib import Path

from plangate.cli.context import Context
from plangate.cli.output import print_result


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Verify every task a pull request touches, its scope, the "
        "protected surfaces and, for a pull request without a task, .plangate/policy.toml "
        "(all read from the base commit); print CODEOWNERS lines for what needs a human.")
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="check base..head")
    check.add_argument("--base", required=True,
                       help="the pull request's base: a commit id or a branch "
                       "(main, origin/main; a same-named tag makes it ambiguous)")
    check.add_argument("--head", required=True,
                       help="the pull request's head: a commit id, HEAD or a branch")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument("--sarif", metavar="FILE", type=Path,
                       help="also write a SARIF 2.1.0 log (one result per offending path)")
    check.add_argument("--summary", metavar="FILE", type=Path,
                       help="also append a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)")
    check.add_argument("--annotations", action="store_true",
                       help="also print GitHub workflow annotations (::error file=...) to stderr")
    owners = sub.add_parser(
        "codeowners", help="print a CODEOWNERS suggestion for the paths a human approves",
        description="Print CODEOWNERS lines naming OWNER for what ci check hands to a human: "
        "the protected surfaces and .plangate/policy.toml committed at --at, and the paths of "
        "its policy rules with human = true.")
    owners.add_argument("--owner", required=True,
                        help="the reviewers: @user, @org/team or an e-mail address")
    owners.add_argument("--at", default="HEAD", metavar="REF",
                        help="the commit to read (default HEAD; the base branch, e.g. origin/main)")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate ci``."""
    from plangate.delivery.ci_report import authority_lines, workflow_annotations
    from plangate.delivery.ci_service import check_pull_request, publish_ci_result

    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    if args.action == "codeowners":
        from plangate.delivery.ci_service import codeowners_at

        for line in codeowners_at(ctx.cwd, args.at, args.owner).splitlines():
            ctx.out(line)
        return 0
    result = check_pull_request(ctx.cwd, args.base, args.head)
    publish_ci_result(result, sarif_path=args.sarif, summary_path=args.summary)
    if args.annotations:
        for line in workflow_annotations(result):
            ctx.err(line)
    code = print_result(ctx, result, as_json=args.json, title="plangate ci check")
    if not args.json:
        for line in authority_lines(result):
            ctx.out(line)
    return code
