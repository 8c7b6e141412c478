"""``plangate status [TASK ...] [--json]``: one line per task.

For every task directory under ``docs/working/`` (or only the named tasks) it
shows the presence gate, both evidence markers, the record kind, its decision,
the verdict the task would get at exec (the acceptor as ``plangate c3 verify
--expected-sha HEAD`` runs it) and the first reason for that verdict, and a last
line about authority: approvals are unauthenticated when no trust root requires
signatures, else the verified approver and reviewers are columns of the table.
It is a report: exit 0, except 1 when a named task does not exist. Verdicts are
read from the row, not the exit code.

Parse, call :func:`plangate.approval.status.status_report`, print.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plangate.cli.context import Context
from plangate.cli.output import print_json
from plangate.snapshot import check_task_id, find_repo_root

if TYPE_CHECKING:
    import argparse

    from plangate.approval.status import TrustState

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("task", "TASK"),
    ("package", "PACKAGE"),
    ("c1", "C-1"),
    ("c2", "C-2"),
    ("record", "RECORD"),
    ("decision", "DECISION"),
    ("verdict", "AT EXEC"),
    ("first_reason", "FIRST REASON"),
    ("package_reason", "PACKAGE REASON"),
)
_SIGNED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("approved_by", "APPROVED BY"),
    ("reviewed_by", "REVIEWED BY"),
)
"""Shown when the trust root requires signatures: the verified principals."""


def _parser() -> argparse.ArgumentParser:
    import argparse  # lazy: the plain forms never need it (see _fast_args)

    parser = argparse.ArgumentParser(
        prog="plangate status",
        description="Show every task's Plan Package, evidence markers, record, the verdict "
        "it would get at exec (the record must bind HEAD) and the first reason for that "
        "verdict; PACKAGE REASON (package_reason in JSON) is the first package or marker "
        "problem, shown beside it. Say whether approvals are authenticated (a trust root "
        "requiring signatures) and, when they are, name the verified approver and reviewers.",
        epilog="exit codes: 0 the report was produced (read the verdicts in it); 1 a named "
        "task does not exist; 2 bad task id",
    )
    parser.add_argument("tasks", nargs="*", metavar="TASK", help="only these tasks")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _fast_args(args: list[str]) -> tuple[list[str], bool] | None:
    """``(tasks, as_json)`` for ``[TASK ...] [--json]`` or ``--json [TASK ...]``, else None.

    Exactly the forms argparse parses the same way (task names not starting
    with ``-``, ``--json`` once, before or after the names); everything else,
    help and errors included, goes through argparse.
    """
    as_json = args.count("--json")
    if as_json > 1:
        return None
    if as_json:
        if args[0] == "--json":
            args = args[1:]
        elif args[-1] == "--json":
            args = args[:-1]
        else:
            return None
    if any(arg.startswith("-") for arg in args):
        return None
    return args, bool(as_json)


def _cell(value: object) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "-"
    return str(value or "-")


def format_table(rows: list[dict[str, Any]], *, signed: bool = False) -> list[str]:
    """Rows as aligned text lines with a header (and the signers' columns when ``signed``)."""
    columns = _COLUMNS + _SIGNED_COLUMNS if signed else _COLUMNS
    # Column by column (one comprehension per column, not one call per cell).
    texts = [
        [
            title,
            *(
                _cell(value) if type(value) is list else str(value or "-")
                for value in (row.get(key) for row in rows)
            ),
        ]
        for key, title in columns
    ]
    pads = [f"{{:<{max(map(len, column))}}}" for column in texts]
    line_format = "  ".join(pads)
    return [line_format.format(*line).rstrip() for line in zip(*texts, strict=True)]


def _authority_line(trust: TrustState) -> str:
    """One plain line: unauthenticated, signatures required (by which root), or unreadable."""
    from plangate.authority.wording import UNAUTHENTICATED

    if trust.problem is not None:
        return (
            f"authority: the trust root cannot be read ({trust.problem.code}): "
            "every approval is refused"
        )
    if trust.root is None:
        return f"authority: {UNAUTHENTICATED} (see 'plangate trust init')"
    return (
        f"authority: signatures required by the trust root on {trust.branch} "
        f"({trust.root.commit[:12]}); APPROVED BY / REVIEWED BY name verified keys"
    )


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate status``."""
    fast = _fast_args(argv[1:])
    if fast is not None:
        tasks, as_json = fast
    else:
        args = _parser().parse_args(argv[1:])
        tasks, as_json = args.tasks, args.json
    from plangate.approval.status import status_report

    root = find_repo_root(ctx.cwd)
    named = [check_task_id(t) for t in tasks]
    rows, missing, summary, trust = status_report(root, named)
    code = 1 if missing else 0
    if as_json:
        print_json(
            ctx,
            {
                "verdict": "REPORT" if not missing else "REJECTED",
                "reasons": [r.to_json() for r in missing],
                "tasks": rows,
                "summary": summary,
                "count": len(rows),
                "authority": trust.to_json(),
            },
        )
        return code
    if not rows and not missing:
        ctx.out("no tasks under docs/working/ (create one with 'plangate init TASK-0001')")
        ctx.out(_authority_line(trust))
        return code
    # One write for the whole table (the same text as one line per call).
    ctx.out("\n".join(format_table(rows, signed=trust.root is not None)))
    if rows:
        parts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(summary.items()))
        ctx.out(f"{len(rows)} task(s): {parts}")
    ctx.out(_authority_line(trust))
    for reason in missing:
        ctx.err(f"plangate status: {reason.code}: {reason.message}")
        ctx.err(f"  hint: {reason.hint}")
    return code
