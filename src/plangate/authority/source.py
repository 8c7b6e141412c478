"""Read the trust root from a commit (the authority step's only IO besides ssh-keygen).

The trust root is read from a commit the change being judged cannot have
written: in CI the pull request's base (:func:`root_at`), locally the tip of
the trust branch (:func:`local_root`). Neither ever reads the working tree's
trust files as the root: an agent can write those.

- no ``.plangate/trust.toml`` and no ``.plangate/allowed_signers`` at the
  commit: there is no trust root (None) and approvals are unauthenticated;
- one without the other: ``AUTH_TRUST_INCOMPLETE``;
- a symlink, a directory or an oversized blob in their place:
  ``AUTH_TRUST_NOT_A_FILE``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from plangate.authority.trustpaths import (
    DEFAULT_TRUST_BRANCH,
    MAX_SIGNERS_BYTES,
    MAX_TRUST_BYTES,
    REVOKED_RELPATH,
    SIGNERS_RELPATH,
    TRUST_FILES,
    TRUST_RELPATH,
)
from plangate.errors import InputRejected
from plangate.fsutil import FileState, read_regular_file
from plangate.git import Git, GitError

if TYPE_CHECKING:
    from plangate.authority.root import TrustRoot

# The parsers (and the signature code they load) are imported only when a trust
# root is really there: most repositories have none, and every local command asks.


def _blob(git: Git, commit: str, path: str, present: set[str], limit: int) -> bytes | None:
    if path not in present:
        return None
    try:
        return git.read_blob(commit, path, limit)
    except GitError as exc:
        if exc.code in ("GIT_PATH_NOT_A_FILE", "GIT_BLOB_TOO_LARGE"):
            raise InputRejected(
                "AUTH_TRUST_NOT_A_FILE",
                f"{path} at {commit[:12]}: {exc.message}",
                "commit it as a regular file",
            ) from None
        raise


def root_at(git: Git, commit: str) -> TrustRoot | None:
    """The trust root committed at ``commit`` (a full id), or None when there is none."""
    present = {e.path for e in git.ls_tree(commit, list(TRUST_FILES))}
    trust = _blob(git, commit, TRUST_RELPATH, present, MAX_TRUST_BYTES)
    signers = _blob(git, commit, SIGNERS_RELPATH, present, MAX_SIGNERS_BYTES)
    revoked = _blob(git, commit, REVOKED_RELPATH, present, MAX_SIGNERS_BYTES)
    if trust is None and signers is None:
        if revoked is not None:
            raise InputRejected(
                "AUTH_TRUST_INCOMPLETE",
                f"{REVOKED_RELPATH} without a trust root at {commit[:12]}",
                "'plangate trust init' writes both trust files",
            )
        return None
    if trust is None or signers is None:
        missing = TRUST_RELPATH if trust is None else SIGNERS_RELPATH
        raise InputRejected(
            "AUTH_TRUST_INCOMPLETE",
            f"{missing} is missing at {commit[:12]}",
            "commit both .plangate/trust.toml and .plangate/allowed_signers",
        )
    from plangate.authority.root import build_root

    return build_root(trust, signers, revoked, commit)


class LocalRoot:
    """What a local command knows about the trust root."""

    __slots__ = ("branch", "root", "worktree_has_root")

    def __init__(self, root: TrustRoot | None, branch: str, worktree_has_root: bool) -> None:
        self.root = root
        self.branch = branch
        self.worktree_has_root = worktree_has_root


def local_root(git: Git, top: Path) -> LocalRoot:
    """The trust root at the tip of the trust branch.

    The branch is the working tree's ``trust_branch`` (default ``main``); the
    root read there must name the same branch (``AUTH_TRUST_BRANCH_MISMATCH``).
    A working tree with a trust.toml whose branch does not exist is
    ``AUTH_TRUST_BRANCH_MISSING``: the root is not in force until it is
    committed there.
    """
    read = read_regular_file(top / TRUST_RELPATH, MAX_TRUST_BYTES)
    branch = DEFAULT_TRUST_BRANCH
    has_local = read.state is not FileState.MISSING
    if has_local:
        if not read.ok or read.data is None:
            raise InputRejected(
                "AUTH_TRUST_NOT_A_FILE", f"{TRUST_RELPATH} {read.detail}", "make it a regular file"
            )
        from plangate.authority.trustfile import parse_trust

        branch = parse_trust(read.data).trust_branch
    else:
        # The common case, no trust root on the default branch, in one git process: the
        # trust files listed at the branch's tip. Any other answer (a file there, no such
        # branch, a failure) takes the exact path below, which resolves the tip first.
        listed = git.ls_tree_at_ref(f"refs/heads/{branch}", list(TRUST_FILES))
        if listed == []:
            return LocalRoot(None, branch, has_local)
    try:
        tip = git.resolve_commit(f"refs/heads/{branch}")
    except GitError as exc:
        if exc.code != "GIT_COMMIT_UNKNOWN":
            raise
        if has_local:
            raise InputRejected(
                "AUTH_TRUST_BRANCH_MISSING",
                f"the trust branch {branch!r} does not exist here",
                f"commit the trust root on {branch} (or fetch it)",
            ) from None
        return LocalRoot(None, branch, has_local)
    root = root_at(git, tip)
    if root is not None and root.config.trust_branch != branch:
        raise InputRejected(
            "AUTH_TRUST_BRANCH_MISMATCH",
            f"the trust root on {branch} names trust_branch {root.config.trust_branch!r}",
            "make both agree, on the trust branch",
        )
    return LocalRoot(root, branch, has_local)
