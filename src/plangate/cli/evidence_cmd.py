"""``plangate evidence produce|verify``: RunEvidence for one run."""

from __future__ import annotations

import argparse
import contextlib

from plangate.canonical import pretty_bytes
from plangate.cli.context import Context
from plangate.cli.output import print_result
from plangate.errors import UsageError
from plangate.fsutil import atomic_write, read_regular_file
from plangate.snapshot import check_task_id, find_repo_root

PRODUCE_EXIT_HELP = (
    "exit codes: 0 evidence written; 1 refused (legacy or unverified record, broken binding, "
    "privacy, harness drift, corrupt delivery record); 2 bad command line; 4 the run is not "
    "terminal yet (no evidence)"
)
VERIFY_EXIT_HELP = (
    "exit codes: 0 complete; 4 partial (the unavailable fields are named); 1 fail-closed "
    "(a binding differs, malformed, privacy violation)"
)
MAX_EV_BYTES = 4 * 1024 * 1024


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plangate evidence", description="Produce or verify RunEvidence."
    )
    sub = parser.add_subparsers(dest="action", required=True)
    produce = sub.add_parser(
        "produce",
        help="produce the RunEvidence of one finished run",
        description="Build one RunEvidence document from the verified c3-prime record and the "
        "delivery record. Values the producer cannot observe are 'unavailable'.",
        epilog=PRODUCE_EXIT_HELP,
    )
    produce.add_argument("task", help="task id, e.g. TASK-0001")
    produce.add_argument("--run-id", required=True)
    produce.add_argument("--started-at", required=True, help="YYYY-MM-DDTHH:MM:SSZ")
    produce.add_argument("--now", required=True, help="completion time, YYYY-MM-DDTHH:MM:SSZ")
    produce.add_argument("--repository", required=True, help="repository name without owner")
    produce.add_argument(
        "--harness-version",
        required=True,
        help='JSON {"plugin_version", "cli_version", "corpus_hash"} at the start of the run',
    )
    produce.add_argument("--harness-version-end", help="the same JSON at the end of the run")
    produce.add_argument("--routing-decisions", help="JSON array of routing decisions")
    produce.add_argument("--observation", help="observation text (redacted)")
    produce.add_argument("--cause-hypothesis", help="cause hypothesis text (redacted)")
    produce.add_argument(
        "--evidence-ref", action="append", default=[], help="repository-relative path (repeatable)"
    )
    produce.add_argument("--pr-number", help="cross-check against the delivery record")
    produce.add_argument("--out", help="write the document to FILE.json instead of stdout")

    verify = sub.add_parser(
        "verify",
        help="verify a RunEvidence document against the task",
        description="Re-read the record and the delivery log, re-derive every binding and the "
        "completeness.",
        epilog=VERIFY_EXIT_HELP,
    )
    verify.add_argument("file", help="the RunEvidence JSON file")
    verify.add_argument("task", help="task id, e.g. TASK-0001")
    verify.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate evidence``."""
    # argparse prints usage errors and --help itself: route them to this context.
    with contextlib.redirect_stderr(ctx.stderr), contextlib.redirect_stdout(ctx.stdout):
        args = _parser().parse_args(argv[1:])
    task_id = check_task_id(args.task)
    repo_root = find_repo_root(ctx.cwd)
    if args.action == "verify":
        from plangate.evidence.service import verify_evidence

        read = read_regular_file(ctx.cwd / args.file, MAX_EV_BYTES)
        if not read.ok or read.data is None:
            raise UsageError(
                "EVIDENCE_FILE_UNREADABLE",
                f"{args.file} {read.detail}",
                "pass the RunEvidence file",
            )
        result = verify_evidence(repo_root, task_id, read.data, ctx.env)
        return print_result(ctx, result, as_json=args.json, title=f"{task_id} evidence")

    from plangate.evidence.producer import Injected
    from plangate.evidence.service import produce_evidence

    if args.out is not None and not args.out.endswith(".json"):
        raise UsageError(
            "EVIDENCE_OUT_INVALID",
            f"--out {args.out!r} must end in .json (one run, one JSON document)",
            "e.g. --out evidence/run-1.json",
        )
    injected = Injected(
        run_id=args.run_id,
        started_at=args.started_at,
        now=args.now,
        repository=args.repository,
        harness_version=args.harness_version,
        harness_version_end=args.harness_version_end,
        routing_decisions=args.routing_decisions,
        observation=args.observation,
        cause_hypothesis=args.cause_hypothesis,
        evidence_refs=tuple(args.evidence_ref),
        pr_number=args.pr_number,
    )
    outcome = produce_evidence(repo_root, task_id, injected, ctx.env)
    if outcome.document is None:
        ctx.err(f"plangate evidence: {outcome.result.verdict}")
        for reason in outcome.result.reasons:
            ctx.err(f"  - {reason.code}: {reason.message}")
            if reason.hint:
                ctx.err(f"    hint: {reason.hint}")
        return int(outcome.result.exit_code)
    data = pretty_bytes(outcome.document)
    if args.out is not None:
        atomic_write(ctx.cwd / args.out, data, overwrite=False)
        ctx.err(
            f"plangate evidence: wrote {args.out} "
            f"(terminal_state {outcome.document['terminal_state']})"
        )
    else:
        ctx.stdout.write(data.decode("utf-8"))
    return 0
