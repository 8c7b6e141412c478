"""``plangate loopspec TASK --maker M --checker C``: derive, print or check the LoopSpec."""

from __future__ import annotations

import argparse
import json

from plangate.canonical import StrictJSONError, strict_loads_object
from plangate.cli.context import Context
from plangate.cli.output import print_result
from plangate.errors import InputRejected
from plangate.layout import RECORD_RELPATH
from plangate.plan.loopspec import derive_loopspec, is_loopspec_hash, loopspec_hash, normalised_yaml
from plangate.snapshot import (
    ARTIFACTS,
    TaskSnapshot,
    check_task_id,
    find_repo_root,
    read_task_snapshot,
    task_dir_for,
)
from plangate.verdict import ExitCode, Reason, Result


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Derive the LoopSpec {loop: ...} of a task from its plan.md (seed 004 "
        "mapping table). --check recomputes derived_loopspec_hash and compares it with "
        "approvals/c3.json (exit 0 equal, 1 otherwise).",
    )
    parser.add_argument("task", metavar="TASK", help="task id, e.g. TASK-0001")
    parser.add_argument("--maker", required=True, help="the implementing actor")
    parser.add_argument("--checker", required=True, help="the checking actor (not the maker)")
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml",
                        help="output form of the LoopSpec (yaml = the normalised, hashed bytes)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the record's derived_loopspec_hash")
    parser.add_argument("--json", action="store_true", help="with --check: one JSON object")
    return parser


def require_package(snapshot: TaskSnapshot) -> bytes:
    """Bytes of plan.md after checking that all six artifacts are present and non-empty."""
    for name in ARTIFACTS:
        read = snapshot.artifacts[name]
        if not read.ok:
            raise InputRejected(
                "LOOPSPEC_PACKAGE_INCOMPLETE",
                f"{name} of {snapshot.task_id} cannot be read: {read.detail or read.state.value}",
                "the LoopSpec is derived only from a complete Plan Package (six artifacts)",
            )
        if not read.data:
            raise InputRejected(
                "LOOPSPEC_PACKAGE_INCOMPLETE",
                f"{name} of {snapshot.task_id} is 0 bytes",
                "write the artifact; an empty artifact fails the package",
            )
    data = snapshot.artifact("plan.md")
    assert data is not None  # checked above  # noqa: S101
    return data


def check_against_record(snapshot: TaskSnapshot, computed: str) -> Result:
    """Compare ``computed`` with the record's ``derived_loopspec_hash`` (pure over the snapshot)."""
    facts = {"task_id": snapshot.task_id, "computed": computed, "recorded": None}
    record = snapshot.record
    if not record.ok or record.data is None:
        return Result("REJECTED", (Reason(
            "LOOPSPEC_RECORD_MISSING",
            f"{RECORD_RELPATH} cannot be read: {record.detail or record.state.value}",
            "issue the record with 'plangate c3 issue ... --loopspec-actors MAKER,CHECKER'"),),
            facts)
    try:
        doc = strict_loads_object(record.data, RECORD_RELPATH)
    except StrictJSONError as exc:
        return Result("REJECTED", (Reason(exc.code, f"{RECORD_RELPATH}: {exc.message}",
                                          exc.hint),), facts)
    if "derived_loopspec_hash" not in doc:
        return Result("REJECTED", (Reason(
            "LOOPSPEC_HASH_NOT_RECORDED",
            f"{RECORD_RELPATH} has no derived_loopspec_hash field: there is nothing to compare",
            "issue the record with --loopspec-actors MAKER,CHECKER to stamp the hash"),), facts)
    recorded = doc["derived_loopspec_hash"]
    facts["recorded"] = recorded
    if not is_loopspec_hash(recorded):
        return Result("REJECTED", (Reason(
            "LOOPSPEC_HASH_MALFORMED",
            f"recorded derived_loopspec_hash {recorded!r} is not sha256:<64 lowercase hex>",
            "re-issue the record"),), facts)
    if recorded != computed:
        return Result("REJECTED", (Reason(
            "LOOPSPEC_HASH_MISMATCH",
            f"derived LoopSpec hash {computed} differs from the recorded {recorded}",
            "plan.md or the actors changed since the record was issued; re-plan and re-issue"),),
            facts)
    return Result("ACCEPTED", (), facts)


def run(argv: list[str], ctx: Context) -> int:
    """Entry point of ``plangate loopspec``."""
    args = _parser(f"plangate {argv[0]}").parse_args(argv[1:])
    task_id = check_task_id(args.task)
    snapshot = read_task_snapshot(task_dir_for(find_repo_root(ctx.cwd), task_id))
    plan = require_package(snapshot)
    spec = derive_loopspec(plan, task_id, args.maker, args.checker)
    computed = loopspec_hash(spec)
    if args.check:
        return print_result(ctx, check_against_record(snapshot, computed), as_json=args.json,
                            title=f"loopspec check {task_id}")
    if args.format == "json":
        ctx.out(json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        ctx.stdout.write(normalised_yaml(spec).decode("utf-8"))
    ctx.err(f"derived_loopspec_hash: {computed}")
    return int(ExitCode.ACCEPTED)
