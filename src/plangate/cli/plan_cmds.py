"""``plangate init``, ``plangate package``, ``plangate review mark`` and ``plangate plan lint``.

Parse, call one service of :mod:`plangate.plan.service`, print.

Exit codes:

- ``init``: 0 scaffolded; 1 the task (``TASK_EXISTS``) or a file (``FILE_EXISTS``)
  already exists, nothing is overwritten; 2 bad task id.
- ``package``: 0 only when all six artifacts are present, regular and non-empty
  AND both evidence markers are valid (accepted verdict, bound to the current
  plan.md); 1 otherwise (the output says which artifact or marker and why).
- ``review mark``: 0 marker written; 1 plan.md or the evidence file is unusable.
- ``plan lint``: 0 every plan linted derives its LoopSpec; 1 a plan does not
  (its scope or another field cannot be derived: the output names the smallest
  edit); 2 usage error.
"""

from __future__ import annotations

import argparse

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.errors import UsageError
from plangate.plan.lint import LINT_OK, PlanLint
from plangate.snapshot import ARTIFACTS, check_task_id, find_repo_root


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate init``, ``plangate package`` and ``plangate review``."""
    command, rest = argv[0], argv[1:]
    if command == "init":
        return _init(rest, ctx)
    if command == "package":
        return _package(rest, ctx)
    if command == "review":
        return _review(rest, ctx)
    if command == "plan":
        return _plan(rest, ctx)
    raise UsageError("UNKNOWN_COMMAND", f"plan_cmds does not handle {command!r}", "see --help")


# --- init ------------------------------------------------------------------------------


def _init(args_list: list[str], ctx: Context) -> int:
    from plangate.plan.service import init_task

    parser = argparse.ArgumentParser(
        prog="plangate init",
        description="Scaffold docs/working/TASK-XXXX/ with the six Plan Package artifacts "
        "as templates. Never overwrites anything.",
        epilog="exit codes: 0 created; 1 the task or a file already exists (TASK_EXISTS / "
        "FILE_EXISTS); 2 bad task id",
    )
    parser.add_argument("task", help="task id, e.g. TASK-0001")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(args_list)
    task_id = check_task_id(args.task)
    created = init_task(find_repo_root(ctx.cwd), task_id)
    if args.json:
        print_json(
            ctx, {"verdict": "CREATED", "reasons": [], "task_id": task_id, "created": created}
        )
        return 0
    ctx.out(f"{task_id}: created docs/working/{task_id}/ with the six Plan Package artifacts:")
    for path in created:
        ctx.out(f"  {path}")
    ctx.out("next: fill in the artifacts, then record both reviews:")
    ctx.out(f"  plangate review mark {task_id} --c1 PASS")
    ctx.out(f"  plangate review mark {task_id} --c2 approve")
    ctx.out(f"  plangate package {task_id}")
    return 0


# --- package ---------------------------------------------------------------------------


def _package(args_list: list[str], ctx: Context) -> int:
    parser = argparse.ArgumentParser(
        prog="plangate package",
        description="Presence gate, artifact hashes, plan_hash, plan_package_hash and the "
        "state of both evidence markers of one task.",
        epilog="exit codes: 0 all six artifacts present and both markers valid (accepted "
        "verdict bound to the current plan.md); 1 anything else; 2 bad task id",
    )
    parser.add_argument("task", help="task id, e.g. TASK-0001")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(args_list)
    from plangate.plan.service import package_report

    task_id = check_task_id(args.task)
    result, facts = package_report(find_repo_root(ctx.cwd), task_id)
    if args.json:
        out = {"verdict": result.verdict, "reasons": [r.to_json() for r in result.reasons]}
        out.update(facts)
        print_json(ctx, out)
        return int(result.exit_code)
    ctx.out(f"{task_id} package: {result.verdict}")
    width = max(len(name) for name in ARTIFACTS)
    for item in facts["artifacts"]:
        digest = item["sha256"] or "-"
        state = item["state"] if item["problem"] is None else f"{item['state']} ({item['problem']})"
        ctx.out(f"  {item['name'].ljust(width)}  {state.ljust(12)}  {digest}")
    ctx.out(f"  plan_hash          {facts['plan_hash'] or '-'}")
    ctx.out(f"  plan_package_hash  {facts['plan_package_hash'] or '-'}")
    for key, label in (("c1", "C-1 marker"), ("c2", "C-2 marker")):
        marker = facts["markers"][key]
        verdict = f" {marker['verdict']}" if marker["verdict"] else ""
        ctx.out(f"  {label}  ({marker['file']}): {marker['state']}{verdict}")
    for reason in result.reasons:
        ctx.out(f"  - {reason.code}: {reason.message}")
        if reason.hint:
            ctx.out(f"    hint: {reason.hint}")
    return int(result.exit_code)


# --- review mark -----------------------------------------------------------------------


def _review(args_list: list[str], ctx: Context) -> int:
    parser = argparse.ArgumentParser(
        prog="plangate review",
        description="Record a C-1 or C-2 review verdict as the one marker line of its "
        "evidence file, bound to the current plan.md.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    mark = sub.add_parser(
        "mark",
        help="write the C1-VERDICT / C2-VERDICT marker line",
        description="Write exactly one marker line bound to the sha256 of the current "
        "plan.md and to the digest of the scope derived from it (printed: the allowed and "
        "denied paths), replacing every earlier marker line, atomically.",
        epilog="exit codes: 0 written; 1 plan.md or the evidence file is unusable; 2 usage error",
    )
    mark.add_argument("task", help="task id, e.g. TASK-0001")
    which = mark.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--c1", choices=("PASS", "FAIL"), help="self review verdict (review-self.md)"
    )
    which.add_argument(
        "--c2", choices=("approve", "reject"), help="external review verdict (review-external.md)"
    )
    mark.add_argument("--sign", metavar="KEY",
                      help="also write approvals/review-c1.json|review-c2.json signed with this "
                      "SSH key (a reviewer's)")
    mark.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(args_list)
    from plangate.plan.service import mark_review

    which_review, verdict = ("c1", args.c1) if args.c1 is not None else ("c2", args.c2)
    task_id = check_task_id(args.task)
    repo_root = find_repo_root(ctx.cwd)
    if args.sign:  # a key listed nowhere is refused before anything is written
        from plangate.authority.signing import principal_of_key

        principal_of_key(repo_root, ctx.cwd / args.sign)
    marked = mark_review(repo_root, task_id, which_review, verdict)
    signed = None
    if args.sign:
        from plangate.authority.signing import sign_review

        signed = sign_review(repo_root, task_id, review=which_review, verdict=verdict,
                             plan_hash=marked.plan_hash, evidence_sha256=marked.evidence_sha256,
                             key=ctx.cwd / args.sign, scope_digest=marked.scope_digest)
    if args.json:
        print_json(
            ctx,
            {
                "verdict": "WRITTEN",
                "reasons": [],
                "task_id": marked.task_id,
                "file": marked.file,
                "marker": marked.marker,
                "plan_hash": marked.plan_hash,
                "evidence_sha256": marked.evidence_sha256,
                "scope": {
                    "allowed": list(marked.allowed),
                    "denied": list(marked.denied),
                    "digest": marked.scope_digest,
                    "problem": marked.scope_problem or None,
                },
                "statement": signed,
            },
        )
        return 0
    ctx.out(f"{marked.task_id}: wrote {marked.kind_name} marker to {marked.file}")
    ctx.out(f"  {marked.marker}")
    # the reviewer approves the derived scope: show exactly what the marker binds
    if marked.scope_digest is not None:
        ctx.out(f"  scope {marked.scope_digest}")
        ctx.out(f"    allowed: {', '.join(marked.allowed)}")
        ctx.out(f"    denied: {', '.join(marked.denied) or '(none)'}")
    else:
        ctx.out(f"  scope: undefined ({marked.scope_problem}); no task can run under this plan")
    if signed is not None:
        ctx.out(f"  signed statement: {signed}")
    if verdict != marked.accepted:
        ctx.out(f"  note: {verdict} is recorded, but only {marked.accepted} lets the task proceed")
    return 0


# --- plan lint -------------------------------------------------------------------------


def _plan(args_list: list[str], ctx: Context) -> int:
    parser = argparse.ArgumentParser(
        prog="plangate plan",
        description="Inspect plan.md the way the scope derivation reads it.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    lint = sub.add_parser(
        "lint",
        help="show what the scope derivation sees in plan.md and the smallest fix",
        description="Show what the derivation sees in plan.md, read as CommonMark: the "
        "sections, each path taken from '## Files / Components to Touch' with its line "
        "(allowed or denied), each span skipped and why, the text it refuses to guess at, "
        "the deny list, the scope digest a review approves, the verification commands and, "
        "for a plan that does not derive, the smallest edit that would make it derive. "
        "Never changes a file.",
        epilog="exit codes: 0 every plan linted derives its LoopSpec; 1 a plan does not "
        "(SCOPE_UNDERIVABLE or LOOPSPEC_UNDERIVABLE); 2 usage error",
    )
    target = lint.add_mutually_exclusive_group(required=True)
    target.add_argument("task", nargs="?", help="task id, e.g. TASK-0001")
    target.add_argument("--all", action="store_true", help="lint every task under docs/working/")
    lint.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(args_list)
    from plangate.plan.lint_service import lint_all, lint_task

    root = find_repo_root(ctx.cwd)
    if args.all:
        reports = lint_all(root)
    else:
        reports = [lint_task(root, check_task_id(args.task))]
    failed = [r for r in reports if r.verdict != LINT_OK]
    if args.json:
        if args.all:
            print_json(
                ctx,
                {
                    "verdict": "DERIVES" if not failed else "NOT_ALL_DERIVE",
                    "summary": _summary(reports),
                    "tasks": [r.to_json() for r in reports],
                },
            )
        else:
            print_json(ctx, reports[0].to_json())
        return 1 if failed else 0
    for report in reports:
        _print_lint(ctx, report, brief=args.all)
    if args.all:
        summary = _summary(reports)
        ctx.out(
            f"{summary['tasks']} task(s): {summary['derive_loopspec']} derive the LoopSpec, "
            f"{summary['derive_scope']} derive a scope, {summary['scope_underivable']} "
            "do not derive a scope"
        )
    return 1 if failed else 0


def _summary(reports: list[PlanLint]) -> dict[str, int]:
    return {
        "tasks": len(reports),
        "derive_loopspec": sum(r.verdict == LINT_OK for r in reports),
        "derive_scope": sum(r.derives_scope for r in reports),
        "scope_underivable": sum(not r.derives_scope for r in reports),
        "with_denied_paths": sum(bool(r.scope.denied) for r in reports),
    }


def _print_lint(ctx: Context, report: PlanLint, *, brief: bool) -> None:
    ctx.out(f"{report.task_id} plan lint: {report.verdict}")
    files = report.files
    if not brief:
        ctx.out(
            "  sections: " + (", ".join(f"{h!r} (line {n})" for n, h in report.sections) or "none")
        )
    if files is not None and files.found:
        note = f" [annotation: {files.annotation}]" if files.annotation else ""
        ctx.out(f"  files section: line {files.heading_lines[0]}{note}")
        if not brief:
            for line, title, denies in files.subsections:
                ctx.out(
                    f"    sub-section line {line}: {title!r}"
                    + (" (not to touch: its paths are denied)" if denies else "")
                )
            for taken in files.taken:
                kind = "denied " if taken.denied else "allowed"
                ctx.out(
                    f"    {kind} line {taken.line}: {taken.text} -> "
                    f"{', '.join(taken.patterns)} ({taken.form})"
                )
            for skipped in files.skipped:
                ctx.out(f"    skipped line {skipped.line}: `{skipped.text}`: {skipped.why}")
        for problem in files.problems:
            ctx.out(f"    not canonical line {problem.line}: {problem.text!r} ({problem.code})")
        for refusal in files.refusals:
            ctx.out(f"    refused line {refusal.line}: {refusal.code}: {refusal.message}")
    if report.scope.defined:
        ctx.out(f"  allowed: {', '.join(report.scope.patterns or ())}")
    else:
        ctx.out(f"  scope: undefined ({report.scope.problem_text})")
    if report.scope.denied:
        ctx.out(f"  denied: {', '.join(report.scope.denied)}")
    if report.scope.digest is not None:  # what review mark, the record and every check bind
        ctx.out(f"  scope digest: {report.scope.digest}")
    for allowed, denied in report.conflicts:
        ctx.out(f"  note: {allowed} is allowed but denied by {denied}: the task cannot change it")
    if report.verification:
        ctx.out(f"  verification: {' && '.join(report.verification)}")
    elif report.verification_problem:
        ctx.out(f"  verification: none ({report.verification_problem})")
    if not brief:
        for line, command in report.verification_subsection:
            ctx.out(f"    verification sub-section line {line} (not taken): `{command}`")
    for edit in report.edits:
        ctx.out(f"  edit: {edit}")
