"""The authority of one task's approval for a consumer (verify, exec, delivery, CI).

:func:`approval_authority` picks the trust root (the local trust branch's, or
the one a caller read from a pull request's base), and when it requires
signatures gathers the facts the authority rules read. Without a trust root,
or with one that does not require signatures, it returns None: the approval is
checked as before and reported as unauthenticated.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from plangate.authority.approval import ApprovalAuthority
    from plangate.authority.continuation import ContinuationFacts
    from plangate.authority.optout import OptOut
    from plangate.authority.root import TrustRoot
    from plangate.authority.verify import Verified
    from plangate.verdict import Reason

LOCAL_TRUST: Final = "local"
"""Read the trust root at the tip of the local trust branch."""


def trust_root_for(repo_root: Path, trust: TrustRoot | str | None) -> TrustRoot | None:
    """The trust root in force: ``trust`` itself, or the local trust branch's."""
    # Not an isinstance test on TrustRoot: importing the trust root's modules
    # (signers, sshsig, base64, datetime) is only needed once there is a root.
    if not isinstance(trust, str):
        return trust
    from plangate.authority.source import local_root
    from plangate.git import Git

    return local_root(Git(repo_root), repo_root).root


def approval_authority(
    repo_root: Path,
    task_dir: Path,
    record_bytes: bytes | None,
    record: dict[str, Any] | None,
    *,
    head: str | None,
    trust: TrustRoot | str | None = LOCAL_TRUST,
) -> ApprovalAuthority | None:
    """The authority facts of one task, or None when signatures are not required.

    A trust root that cannot be read or parsed raises its reason (fail closed).
    """
    root = trust_root_for(repo_root, trust)
    if root is None or not root.require_signatures:
        return None
    from plangate.authority.approval import TaskFiles, gather
    from plangate.authority.verify import ssh_keygen_crypto
    from plangate.clock import utc_now
    from plangate.git import Git, GitError

    git = Git(repo_root)
    if head is None:
        try:
            head = git.head()
        except GitError:
            head = None
    files = TaskFiles(repo_root, task_dir, record_bytes, record)
    return gather(git, files, root, head, now=utc_now(), crypto=ssh_keygen_crypto)


def read_continuation(task_dir: Path, root: TrustRoot) -> ContinuationFacts | None:
    """The task's continuation statement and its signature's check (None: there is none).

    The signature is checked under ``root`` (the pull request's base) for the
    ``approver`` role, namespace ``plangate-continue``.
    """
    from plangate.authority.continuation import (
        MAX_CONTINUATION_BYTES,
        RELPATH,
        SIG_RELPATH,
        ContinuationFacts,
        parse_continuation,
    )
    from plangate.authority.root import NAMESPACE_CONTINUE
    from plangate.authority.verify import SignatureCase, check_signature, ssh_keygen_crypto
    from plangate.clock import utc_now
    from plangate.fsutil import FileState, read_regular_file

    read = read_regular_file(task_dir / RELPATH, MAX_CONTINUATION_BYTES)
    if read.state is FileState.MISSING:
        return None
    if not read.ok or read.data is None:
        return ContinuationFacts(None, read.detail or read.state.value, None)
    parsed = parse_continuation(read.data)
    if isinstance(parsed, str):
        return ContinuationFacts(None, parsed, None)
    sig = read_regular_file(task_dir / SIG_RELPATH, 16 * 1024)
    signature = sig.data if sig.ok else None
    check = check_signature(
        SignatureCase(
            "CONTINUATION",
            SIG_RELPATH,
            signature,
            "" if sig.ok else (sig.detail or sig.state.value),
            read.data,
            NAMESPACE_CONTINUE,
            "approver",
            root,
            utc_now(),
            ssh_keygen_crypto,
        )
    )
    return ContinuationFacts(parsed, "", check)


def check_detached(
    root: TrustRoot,
    data: bytes,
    signature: bytes | None,
    *,
    namespace: str,
    prefix: str,
    label: str,
    role: str | None = None,
) -> Verified | Reason:
    """A detached signature of ``data`` checked under ``root`` with the signature rules, now."""
    from plangate.authority.verify import SignatureCase, check_signature, ssh_keygen_crypto
    from plangate.clock import utc_now

    return check_signature(
        SignatureCase(
            prefix,
            label,
            signature,
            "",
            data,
            namespace,
            role,
            root,
            utc_now(),
            ssh_keygen_crypto,
        )
    )


def read_opt_out(
    repo_root: Path, task_id: str, root: TrustRoot
) -> tuple[OptOut | None, str, Verified | Reason | None, bytes | None, bytes | None]:
    """The task's exec opt-out statement as found: ``(statement, problem, check, bytes, sig)``.

    ``problem`` is ``"missing"`` when there is no statement, a message when it is not
    one; the signature is checked under ``root`` for the ``override`` role, namespace
    ``plangate-exec-opt-out``.
    """
    from plangate.authority.approval import SIG_SUFFIX
    from plangate.authority.optout import (
        MAX_STATEMENT_BYTES,
        MISSING,
        PREFIX,
        ROLE,
        parse_opt_out,
        statement_relpath,
    )
    from plangate.authority.root import NAMESPACE_EXEC_OPT_OUT
    from plangate.fsutil import FileState, read_regular_file

    rel = statement_relpath(task_id)
    read = read_regular_file(repo_root / rel, MAX_STATEMENT_BYTES)
    if read.state is FileState.MISSING:
        return None, MISSING, None, None, None
    if not read.ok or read.data is None:
        return None, read.detail or read.state.value, None, None, None
    parsed = parse_opt_out(read.data)
    if isinstance(parsed, str):
        return None, parsed, None, read.data, None
    sig = read_regular_file(repo_root / (rel + SIG_SUFFIX), 16 * 1024)
    signature = sig.data if sig.ok else None
    check = check_detached(
        root,
        read.data,
        signature,
        namespace=NAMESPACE_EXEC_OPT_OUT,
        prefix=PREFIX,
        label=rel + SIG_SUFFIX,
        role=ROLE,
    )
    return parsed, "", check, read.data, signature
