"""Write signatures: the record's (``approvals/c3.json.sig``) and signed review statements.

The signer is identified by the key's public half: its principal is looked up
in the trust root in force (the trust branch's tip) or, before one is
committed, in the working tree's ``.plangate/allowed_signers``; a key listed
nowhere is refused (``AUTH_SIGNER_NOT_LISTED``). Signing itself is
``ssh-keygen``'s (:mod:`plangate.authority.sshkeygen`): PlanGate never reads
the private key.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from plangate.authority.approval import RECORD_SIG_RELPATH, SIG_SUFFIX
from plangate.authority.root import NAMESPACE_C3, NAMESPACE_REVIEW
from plangate.authority.signers import AllowedSigners, parse_allowed_signers
from plangate.authority.statement import (
    REVIEWS,
    Statement,
    statement_bytes,
    statement_relpath,
)
from plangate.errors import InputRejected
from plangate.fsutil import (
    atomic_write_at,
    atomic_write_in,
    open_verified_dir,
    read_at,
    read_regular_file,
)
from plangate.layout import MAX_RECORD_BYTES, RECORD_RELPATH, WORKING_DIR
from plangate.snapshot import task_dir_for


def _signers(repo_root: Path) -> AllowedSigners:
    from plangate.authority.consumer import trust_root_for

    root = trust_root_for(repo_root, "local")
    if root is not None:
        return root.signers
    read = read_regular_file(repo_root / ".plangate/allowed_signers", 256 * 1024)
    if not read.ok or read.data is None:
        raise InputRejected(
            "AUTH_SIGNER_NOT_LISTED",
            "there is no trust root to name the signer",
            "run 'plangate trust init' and 'plangate trust add' first",
        )
    return parse_allowed_signers(read.data)


def principal_of_key(repo_root: Path, key: Path) -> str:
    """The principal whose allowed_signers line holds ``key``'s public half."""
    from plangate.authority.sshkeygen import public_key_of

    public = public_key_of(key).split()
    blob = base64.b64decode(public[1])
    entry = _signers(repo_root).by_key(blob)
    if entry is None:
        raise InputRejected(
            "AUTH_SIGNER_NOT_LISTED",
            f"the key {key} is not in .plangate/allowed_signers",
            "sign with your own listed key ('plangate trust show')",
        )
    return entry.principal


def sign_record(repo_root: Path, task_id: str, key: Path) -> str:
    """Sign the exact bytes of the task's ``approvals/c3.json``; return the signature's path."""
    from plangate.authority.sshkeygen import sign

    task_dir_for(repo_root, task_id)  # the task id is checked
    record_dir, record_name = RECORD_RELPATH.rsplit("/", 1)
    sig_dir, sig_name = RECORD_SIG_RELPATH.rsplit("/", 1)
    # The record is read, and its signature written, through the task directory
    # opened from the repository root with no link followed: the bytes signed
    # are the bytes in the repository.
    with open_verified_dir(repo_root, f"{WORKING_DIR}/{task_id}/{record_dir}") as approvals:
        read = read_at(approvals, record_name, MAX_RECORD_BYTES)
        if not read.ok or read.data is None:
            raise InputRejected(
                "C3_RECORD_MISSING", f"{RECORD_RELPATH} {read.detail}", "issue the record first"
            )
        principal_of_key(repo_root, key)
        signature = sign(key, NAMESPACE_C3, read.data)
        if sig_dir == record_dir:
            atomic_write_at(approvals, sig_name, signature)
        else:
            atomic_write_in(repo_root, f"{WORKING_DIR}/{task_id}/{RECORD_SIG_RELPATH}", signature)
    return f"docs/working/{task_id}/{RECORD_SIG_RELPATH}"


def sign_review(
    repo_root: Path,
    task_id: str,
    *,
    review: str,
    verdict: str,
    plan_hash: str,
    evidence_sha256: str,
    key: Path,
    scope_digest: str | None = None,
) -> str:
    """Write and sign the review statement of ``review`` (c1/c2); return its path.

    ``scope_digest`` (the derived scope the reviewer approved) makes it a version 2
    statement.
    """
    from plangate.authority.sshkeygen import sign

    statement = Statement(
        task_id,
        review,
        verdict,
        plan_hash,
        REVIEWS[review][0],
        evidence_sha256,
        principal_of_key(repo_root, key),
        scope_digest,
    )
    data = statement_bytes(statement)
    task_dir_for(repo_root, task_id)  # the task id is checked
    signature = sign(key, NAMESPACE_REVIEW, data)
    rel = f"{WORKING_DIR}/{task_id}/{statement_relpath(review)}"
    atomic_write_in(repo_root, rel, data)
    atomic_write_in(repo_root, rel + SIG_SUFFIX, signature)
    return rel


def sign_continuation(repo_root: Path, task_id: str, base_rev: str, key: Path) -> str:
    """Write and sign ``approvals/continuation.json`` for continuing ``task_id`` on this branch.

    Binds the task, its current plan, the approval's ``source_sha`` and the merge
    base of ``base_rev`` and HEAD (where the pull request starts). Returns its path.
    """
    from plangate.authority.continuation import (
        RELPATH,
        SIG_RELPATH,
        Continuation,
        continuation_bytes,
    )
    from plangate.authority.root import NAMESPACE_CONTINUE
    from plangate.authority.sshkeygen import sign
    from plangate.canonical import StrictJSONError, sha256_digest, strict_loads_object
    from plangate.git import Git
    from plangate.layout import MAX_ARTIFACT_BYTES

    task_dir_for(repo_root, task_id)  # the task id is checked
    record_dir, record_name = RECORD_RELPATH.rsplit("/", 1)
    with open_verified_dir(repo_root, f"{WORKING_DIR}/{task_id}") as task:
        plan = read_at(task, "plan.md", MAX_ARTIFACT_BYTES)
        record_missing = not os.path.lexists(f"{repo_root}/{WORKING_DIR}/{task_id}/{record_dir}")
    if record_missing:
        raise InputRejected(
            "C3_RECORD_MISSING",
            f"{task_id} has no {record_dir}/ directory: it was never approved",
            "only an approved task can be continued",
        )
    with open_verified_dir(repo_root, f"{WORKING_DIR}/{task_id}/{record_dir}") as approvals:
        record = read_at(approvals, record_name, MAX_RECORD_BYTES)
    if not record.ok or record.data is None or not plan.ok or plan.data is None:
        raise InputRejected(
            "C3_RECORD_MISSING",
            f"{task_id} has no approval record or plan to continue",
            "only an approved task can be continued",
        )
    try:
        source = strict_loads_object(record.data, "approval record").get("source_sha")
    except StrictJSONError as exc:
        raise InputRejected(exc.code, exc.message, "issue the record again") from None
    if not isinstance(source, str):
        raise InputRejected(
            "C3_RECORD_MISSING", f"{task_id}'s record names no source_sha", "issue it again"
        )
    git = Git(repo_root)
    statement = Continuation(
        task_id,
        sha256_digest(plan.data),
        git.resolve_commit(source),
        git.merge_base(git.resolve_commit(base_rev), git.head()),
        principal_of_key(repo_root, key),
    )
    data = continuation_bytes(statement)
    signature = sign(key, NAMESPACE_CONTINUE, data)
    rel = f"{WORKING_DIR}/{task_id}/{RELPATH}"
    atomic_write_in(repo_root, rel, data)
    atomic_write_in(repo_root, f"{WORKING_DIR}/{task_id}/{SIG_RELPATH}", signature)
    return rel


def sign_opt_out(
    repo_root: Path, task_id: str, command: list[str], key: Path, *, minutes: int
) -> str:
    """Write and sign the exec opt-out statement of ``task_id`` for ``command`` at HEAD.

    Valid from now for ``minutes`` (at most an hour). Returns the statement's path.
    """
    from datetime import timedelta

    from plangate.authority.optout import (
        MAX_VALIDITY_SECONDS,
        STATEMENT_DIR,
        OptOut,
        opt_out_bytes,
        statement_relpath,
    )
    from plangate.authority.root import NAMESPACE_EXEC_OPT_OUT
    from plangate.authority.sshkeygen import sign
    from plangate.canonical import command_digest
    from plangate.clock import format_utc, utc_now
    from plangate.errors import UsageError
    from plangate.git import Git

    if not 0 < minutes * 60 <= MAX_VALIDITY_SECONDS:
        raise UsageError(
            "EXEC_OPT_OUT_VALIDITY_TOO_LONG",
            f"--minutes {minutes}: a statement is valid for 1 to "
            f"{MAX_VALIDITY_SECONDS // 60} minutes",
            "sign again just before you run the command",
        )
    task_dir_for(repo_root, task_id)  # the task id is checked
    now = utc_now().replace(microsecond=0)
    statement = OptOut(
        task_id,
        command_digest(command),
        Git(repo_root).head(),
        principal_of_key(repo_root, key),
        format_utc(now),
        format_utc(now + timedelta(minutes=minutes)),
    )
    data = opt_out_bytes(statement)
    signature = sign(key, NAMESPACE_EXEC_OPT_OUT, data)
    rel = statement_relpath(task_id)
    # The statements are kept for the run, never committed: the directory ignores itself.
    atomic_write_in(repo_root, f"{STATEMENT_DIR}/.gitignore", b"# written by plangate\n*\n")
    atomic_write_in(repo_root, rel, data, mode=0o600)
    atomic_write_in(repo_root, rel + SIG_SUFFIX, signature, mode=0o600)
    return rel
