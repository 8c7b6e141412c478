"""``plangate ledger``: read, verify and export the decision ledger.

::

    plangate ledger log [--kind K] [--subject S] [--json]
    plangate ledger verify [--anchor HASH] [--json]          exit 0 intact, 1 first bad seq
    plangate ledger verify --jsonl FILE [--anchor HASH] [--json]
    plangate ledger export --jsonl FILE [--force]
    plangate ledger init [--force] [--json]                  create it; --force starts over
    plangate ledger checkpoint --sign KEY                    sign {seq, head, time}

``verify`` also checks the chain against the newest signed checkpoint the
repository keeps (``.plangate/ledger-checkpoint.json``): see docs/ledger.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plangate.canonical import canonical_text, is_digest
from plangate.cli.context import Context
from plangate.cli.output import print_json, print_result
from plangate.errors import InputRejected, UsageError
from plangate.fsutil import atomic_write, read_regular_file
from plangate.snapshot import find_repo_root
from plangate.verdict import Result

MAX_EXPORT_BYTES = 2 * 1024 * 1024 * 1024
"""Largest export file ``ledger verify --jsonl`` reads (about four million entries)."""


MAX_LOG_PAYLOAD_CHARS = 240
"""Payloads longer than this are shortened in the human ``ledger log`` output."""


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Read, verify and export the tamper-evident decision ledger."
    )
    sub = parser.add_subparsers(dest="action", required=True)

    log = sub.add_parser("log", help="list entries in sequence order")
    log.add_argument("--kind", help="only entries of this kind (e.g. c3_issue)")
    log.add_argument("--subject", help="only entries about this subject (task id or digest)")
    log.add_argument("--json", action="store_true", help="print one JSON object")

    verify = sub.add_parser("verify", help="verify the hash chain (exit 0 intact, 1 broken)")
    verify.add_argument("--jsonl", metavar="FILE", help="verify an export file instead")
    verify.add_argument(
        "--anchor",
        metavar="HASH",
        help="an entry_hash known from earlier (an archived export's head): it must be present",
    )
    verify.add_argument("--json", action="store_true", help="print one JSON object")

    init = sub.add_parser(
        "init",
        help="create the ledger (a human's --force starts a new chain, recorded)",
        description=(
            "Create the repository's ledger. An intact ledger is left alone. An absent ledger "
            "is created only when nothing says one existed: for a SQLite ledger (one per "
            "clone) this clone's witness in its git directory or a trace not yet committed "
            "(an issued c3-prime record, a run log, a delivery log, a configured ledger, the "
            "ledger's ignore file; what HEAD holds came with the clone and does not count), "
            "so a fresh clone or CI checkout creates its own; for a shared PostgreSQL ledger "
            "any of those traces. Otherwise it is missing, and --force is the explicit way "
            "to start over: what is in its place is moved aside (never deleted) and the new "
            "chain's first entry (ledger_reinitialised) records the previous head, when it "
            "could be read."
        ),
    )
    init.add_argument(
        "--force", action="store_true", help="start a new chain, moving what is there aside"
    )
    init.add_argument("--json", action="store_true", help="print one JSON object")

    checkpoint = sub.add_parser(
        "checkpoint",
        help="sign the verified ledger's {seq, head, time} into .plangate/ledger-checkpoint.json",
        description="Verify the ledger, then write .plangate/ledger-checkpoint.json and its SSH "
        "signature (namespace plangate-ledger) by KEY, a key the trust root lists. Commit both: "
        "'ledger verify' then refuses a ledger that is shorter than the newest checkpoint "
        "(truncated, deleted, rolled back, re-initialised) or that rewrote the entry it names.",
    )
    checkpoint.add_argument("--sign", required=True, metavar="KEY", help="your key (or its .pub)")

    export = sub.add_parser("export", help="write a verified JSONL copy of the ledger")
    export.add_argument("--jsonl", metavar="FILE", required=True, help="file to write")
    export.add_argument("--force", action="store_true", help="replace an existing file")
    return parser


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate ledger``."""
    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    if args.action == "log":
        return _log(ctx, args.kind, args.subject, as_json=args.json)
    if args.action == "verify":
        if args.anchor is not None and not is_digest(args.anchor):
            raise UsageError(
                "LEDGER_ANCHOR_INVALID",
                f"--anchor {args.anchor!r} is not a sha256:<64 hex> digest",
                "pass the head_hash printed by 'plangate ledger verify' or an export header",
            )
        if args.jsonl is not None:
            return _verify_file(ctx, Path(args.jsonl), args.anchor, as_json=args.json)
        return _verify(ctx, args.anchor, as_json=args.json)
    if args.action == "init":
        return _init(ctx, force=args.force, as_json=args.json)
    if args.action == "checkpoint":
        from plangate.ledger.checkpoint_store import write_checkpoint

        path, written = write_checkpoint(_repo_root(ctx), ctx.env, ctx.cwd / args.sign)
        ctx.out(
            f"wrote {path} and its signature: seq {written.seq}, head {written.head}, "
            f"signed by {written.principal}"
        )
        ctx.out("commit both files; 'ledger verify' checks the ledger against the newest one")
        return 0
    return _export(ctx, Path(args.jsonl), force=args.force)


def _init(ctx: Context, *, force: bool, as_json: bool) -> int:
    from plangate.ledger import resolve_location
    from plangate.ledger.initialise import initialise

    location = resolve_location(_repo_root(ctx), ctx.env)
    outcome = initialise(location, force=force)
    head = outcome.previous_head
    if as_json:
        print_json(
            ctx,
            {
                "action": outcome.action,
                "location": outcome.location,
                "previous_state": outcome.previous_state,
                "previous_head": None
                if head is None
                else {"seq": head.seq, "hash": head.entry_hash},
                "moved_to": outcome.moved_to,
                "witness": outcome.witness,
            },
        )
        return 0
    if outcome.action == "exists":
        ctx.out(
            f"ledger {outcome.location}: already initialised (head seq {head.seq if head else '?'})"
        )
    elif outcome.action == "created" and outcome.witness is not None:
        ctx.out(f"ledger {outcome.location}: created (this clone's own ledger; the clone "
                f"records it in {outcome.witness})")
    elif outcome.action == "created":
        ctx.out(f"ledger {outcome.location}: created")
    else:
        previous = "unknown" if head is None else f"seq {head.seq} ({head.entry_hash})"
        ctx.out(
            f"ledger {outcome.location}: re-initialised; previous state {outcome.previous_state}, "
            f"previous head {previous}"
        )
        if outcome.moved_to:
            ctx.out(f"  the previous ledger was moved aside to {outcome.moved_to}")
        ctx.out("  the new chain's first entry (ledger_reinitialised) records the restart")
    return 0


def _repo_root(ctx: Context) -> Path:
    return find_repo_root(ctx.cwd)


def _log(ctx: Context, kind: str | None, subject: str | None, *, as_json: bool) -> int:
    from plangate.ledger import open_ledger

    with open_ledger(_repo_root(ctx), ctx.env, create=False) as ledger:
        entries = ledger.entries(kind=kind, subject=subject)
        location, backend = ledger.location, ledger.backend
    if as_json:
        print_json(
            ctx,
            {
                "backend": backend,
                "location": location,
                "filters": {"kind": kind, "subject": subject},
                "count": len(entries),
                "entries": [entry.to_json() for entry in entries],
            },
        )
        return 0
    if not entries:
        ctx.out(f"ledger {location}: no entries" + (" match" if kind or subject else ""))
        return 0
    for entry in entries:
        ctx.out(f"{entry.seq:>6}  {entry.at}  {entry.kind}  {entry.subject}")
        payload = canonical_text(dict(entry.payload))
        if len(payload) > MAX_LOG_PAYLOAD_CHARS:  # the full payload is in --json
            payload = payload[:MAX_LOG_PAYLOAD_CHARS] + " ..."
        ctx.out(f"        {payload}")
        ctx.out(f"        {entry.entry_hash}")
    return 0


def _print_verify(ctx: Context, result: Result, *, as_json: bool, title: str) -> int:
    code = print_result(ctx, result, as_json=as_json, title=title)
    if not as_json:
        facts = result.facts
        checkpoint = facts.get("checkpoint")
        if isinstance(checkpoint, dict):
            ctx.out(
                f"  checkpoint: seq {checkpoint.get('seq')} signed by "
                f"{checkpoint.get('principal')} at {checkpoint.get('time')}"
            )
        for place in facts.get("checkpoints_unread") or ():
            ctx.out(f"  checkpoints not read: {place}")
        if result.accepted:
            ctx.out(f"  {facts.get('entries')} entries, head {facts.get('head_hash')}")
        elif facts.get("first_bad_seq") is None:
            ctx.out(f"  {facts.get('entries')} entries verified, but not the anchored history")
        else:
            ctx.out(
                f"  first bad seq: {facts.get('first_bad_seq')} "
                f"({facts.get('entries')} entries before it verified)"
            )
    return code


def _verify(ctx: Context, anchor: str | None, *, as_json: bool) -> int:
    from plangate.ledger import open_ledger
    from plangate.ledger.checkpoint_store import verify_against_checkpoints

    root = _repo_root(ctx)
    with open_ledger(root, ctx.env, create=False) as ledger:
        result = verify_against_checkpoints(ledger, root, anchor)
        location = ledger.location
    return _print_verify(ctx, result, as_json=as_json, title=f"ledger {location}")


def _verify_file(ctx: Context, path: Path, anchor: str | None, *, as_json: bool) -> int:
    from plangate.ledger.chain import verify_export_bytes

    target = path if path.is_absolute() else ctx.cwd / path
    read = read_regular_file(target, MAX_EXPORT_BYTES)
    if not read.ok or read.data is None:
        raise InputRejected(
            "LEDGER_EXPORT_UNREADABLE",
            f"ledger export {target} cannot be read: {read.detail}",
            "pass a regular file written by 'plangate ledger export --jsonl'",
        )
    result = verify_export_bytes(read.data, anchor=anchor)
    facts = dict(result.facts)
    facts["location"] = str(target)
    result = Result(result.verdict, result.reasons, facts)
    return _print_verify(ctx, result, as_json=as_json, title=f"ledger export {target}")


def _export(ctx: Context, path: Path, *, force: bool) -> int:
    from plangate.ledger import open_ledger
    from plangate.ledger.chain import export_bytes, verify_rows

    target = path if path.is_absolute() else ctx.cwd / path
    with open_ledger(_repo_root(ctx), ctx.env, create=False) as ledger:
        rows, head = ledger.stored_rows()
        location = ledger.location
    # Export only what verifies: an archive is a copy a team can trust.
    result = verify_rows(rows, head)
    if not result.accepted:
        _print_verify(ctx, result, as_json=False, title=f"ledger {location}")
        raise InputRejected(
            "LEDGER_TAMPERED",
            f"ledger {location} does not verify (first bad seq "
            f"{result.facts.get('first_bad_seq')}); nothing was exported",
            "investigate the broken entry; restore from an earlier verified export",
        )
    atomic_write(target, export_bytes(rows, head), overwrite=force)
    ctx.out(
        f"exported {result.facts.get('entries')} entries to {target} "
        f"(head {result.facts.get('head_hash')})"
    )
    return 0
