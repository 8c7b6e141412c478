"""The authority of one task's approval for a consumer (verify, exec, delivery, CI).

:func:`approval_authority` picks the trust root (the local trust branch's, or
the one a caller read from a pull request's base), and when it requires
signatures gathers the facts the authority rules read. Without a trust root,
or with one that does not require signatures, it returns None: the approval is
checked as before and reported as unauthenticated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from plangate.authority.approval import ApprovalAuthority, TaskFiles, gather
from plangate.authority.root import TrustRoot

LOCAL_TRUST: Final = "local"
"""Read the trust root at the tip of the local trust branch."""


def trust_root_for(repo_root: Path, trust: TrustRoot | str | None) -> TrustRoot | None:
    """The trust root in force: ``trust`` itself, or the local trust branch's."""
    if trust is None or isinstance(trust, TrustRoot):
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
