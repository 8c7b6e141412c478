"""Read and check a task's approval parts one file at a time (the IO of :mod:`.parts`).

Used where a task's record does not cover a part by itself: before the record
exists (the plan commit carries the review statements), and when the trust root
in force does not require signatures (the acceptor then checks none, so each
signature is checked here, under that root). The hooks read the trust root of the
local trust branch; ``ci check`` the one committed at the pull request's base.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plangate.approval.parts import (
    RECORD_SIG_RELPATH,
    SIG_SUFFIX,
    continuation_parts,
    continuation_verdicts,
    part_of,
    statement_verdicts,
    unverified,
)
from plangate.verdict import Reason

if TYPE_CHECKING:
    from plangate.authority.approval import ReviewFacts
    from plangate.authority.root import TrustRoot


def single_parts(
    repo_root: Path,
    task_id: str,
    paths: Sequence[str],
    trust: TrustRoot | None,
    *,
    record_verified: bool,
) -> dict[str, Reason | None]:
    """Per part among ``paths`` (all of ``task_id``) that can be checked on its own: None
    when it verifies under ``trust``, else why not. A path with no check of its own (the
    record itself) is left out. ``record_verified``: the task's record verified, so its
    signature may be checked over its bytes."""
    from plangate.authority.consumer import read_continuation
    from plangate.authority.statement import REVIEWS, statement_relpath
    from plangate.layout import WORKING_DIR

    task_dir = repo_root / WORKING_DIR / task_id
    wanted = {rel for p in paths if (hit := part_of(p)) is not None and hit[0] == task_id
              for rel in (hit[1],)}
    out: dict[str, Reason | None] = {}
    reviews = [r for r in REVIEWS
               if {statement_relpath(r), statement_relpath(r) + SIG_SUFFIX} & wanted]
    if reviews:
        plan_hash = plan_digest(task_dir)
        statements = {r: read_review(task_dir, r, trust) for r in reviews}
        out.update(statement_verdicts(task_id, plan_hash, statements))
    if set(continuation_parts(task_id)) & set(paths):
        continued = read_continuation(task_dir, trust) if trust is not None else None
        out.update(continuation_verdicts(task_id, plan_digest(task_dir), record_source(task_dir),
                                         continued))
    if RECORD_SIG_RELPATH in wanted:
        path = f"{WORKING_DIR}/{task_id}/{RECORD_SIG_RELPATH}"
        out[path] = (record_signature(task_dir, trust, path) if record_verified
                     else unverified(path, f"no record of {task_id} verifies"))
    return out


def plan_digest(task_dir: Path) -> str | None:
    """Digest of the task's current ``plan.md`` (None: unreadable)."""
    from plangate.canonical import sha256_digest
    from plangate.fsutil import read_regular_file
    from plangate.layout import MAX_ARTIFACT_BYTES

    read = read_regular_file(task_dir / "plan.md", MAX_ARTIFACT_BYTES)
    return sha256_digest(read.data) if read.ok and read.data is not None else None


def record_source(task_dir: Path) -> str | None:
    """The ``source_sha`` the task's record names (None: no readable record)."""
    from plangate.canonical import StrictJSONError, strict_loads
    from plangate.fsutil import read_regular_file
    from plangate.layout import MAX_RECORD_BYTES, RECORD_RELPATH

    read = read_regular_file(task_dir / RECORD_RELPATH, MAX_RECORD_BYTES)
    if not read.ok or read.data is None:
        return None
    try:
        record = strict_loads(read.data)
    except StrictJSONError:
        return None
    source = record.get("source_sha") if isinstance(record, dict) else None
    return source if isinstance(source, str) else None


def read_review(task_dir: Path, review: str, trust: TrustRoot | None) -> ReviewFacts:
    """One review statement as read, its signature checked under ``trust`` (None: no root,
    no check)."""
    from plangate.authority.approval import ReviewFacts
    from plangate.authority.consumer import check_detached
    from plangate.authority.root import NAMESPACE_REVIEW
    from plangate.authority.statement import MAX_STATEMENT_BYTES, parse_statement, statement_relpath
    from plangate.fsutil import read_regular_file

    rel = statement_relpath(review)
    read = read_regular_file(task_dir / rel, MAX_STATEMENT_BYTES)
    if not read.ok or read.data is None:
        return ReviewFacts(None, read.detail or read.state.value, None)
    parsed = parse_statement(read.data)
    if isinstance(parsed, str):
        return ReviewFacts(None, parsed, None)
    if trust is None:
        return ReviewFacts(parsed, "", None)
    sig = read_regular_file(task_dir / (rel + SIG_SUFFIX), 16 * 1024)
    check = check_detached(trust, read.data, sig.data if sig.ok else None,
                           namespace=NAMESPACE_REVIEW, prefix="REVIEW", label=rel + SIG_SUFFIX,
                           role="reviewer")
    return ReviewFacts(parsed, "", check)


def record_signature(task_dir: Path, trust: TrustRoot | None, path: str) -> Reason | None:
    """None when the record's signature verifies for an approver under ``trust``."""
    from plangate.authority.consumer import check_detached
    from plangate.authority.root import NAMESPACE_C3
    from plangate.fsutil import read_regular_file
    from plangate.layout import MAX_RECORD_BYTES, RECORD_RELPATH

    if trust is None:
        return unverified(path, "no trust root is in force to verify it against")
    record = read_regular_file(task_dir / RECORD_RELPATH, MAX_RECORD_BYTES)
    sig = read_regular_file(task_dir / RECORD_SIG_RELPATH, 16 * 1024)
    check = check_detached(trust, record.data or b"", sig.data if sig.ok else None,
                           namespace=NAMESPACE_C3, prefix="C3", label=RECORD_SIG_RELPATH,
                           role="approver")
    if isinstance(check, Reason):
        return unverified(path, f"its signature does not verify ({check.code}: {check.message})")
    return None
