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
    MAX_TRUST_BRANCH_RECORD_BYTES,
    MAX_TRUST_BYTES,
    REVOKED_RELPATH,
    SIGNERS_RELPATH,
    TRUST_BRANCH_RECORD,
    TRUST_FILES,
    TRUST_RELPATH,
    is_branch_name,
)
from plangate.errors import InputRejected
from plangate.fsutil import FileState, atomic_write, read_regular_file
from plangate.git import Git, GitError, GitObject, tree_entries_of
from plangate.githead import git_dirs

if TYPE_CHECKING:
    from collections.abc import Sequence

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


def _common_dir(top: Path) -> Path:
    """The common git directory of the working tree at ``top`` (no subprocess when the
    ``.git`` files can be read directly; git itself otherwise)."""
    dirs = git_dirs(str(top))
    return Path(dirs[1]) if dirs is not None else Git(top).common_dir()


def recorded_trust_branch(top: Path) -> str:
    """The local trust branch recorded at setup (:data:`TRUST_BRANCH_RECORD`), or
    ``main`` where nothing is recorded.

    Never read from a working tree's or a commit's ``trust.toml``: one commit on an
    agent's branch could name that very branch. The record lives in the git
    directory, which only a person's own setup writes. An unreadable record, or one
    that is not a branch name, is ``AUTH_TRUST_BRANCH_RECORD_BAD``.
    """
    where = _common_dir(top) / TRUST_BRANCH_RECORD
    read = read_regular_file(where, MAX_TRUST_BRANCH_RECORD_BYTES)
    if read.state is FileState.MISSING:
        return DEFAULT_TRUST_BRANCH
    name = ""
    if read.ok and read.data is not None:
        name = read.data.decode("utf-8", "replace").strip()
    if not is_branch_name(name):
        raise InputRejected(
            "AUTH_TRUST_BRANCH_RECORD_BAD",
            f"{where} does not hold a branch name ({read.detail or repr(name)})",
            f"write the trust branch's name into {where}, or remove the file (then: main)",
        )
    return name


def record_trust_branch(top: Path, branch: str) -> None:
    """Record ``branch`` as the local trust branch, once (setup and ``trust init``).

    An existing record naming another branch is never replaced by a command:
    ``AUTH_TRUST_BRANCH_RECORDED``. A person changes it by editing the file.
    """
    current = recorded_trust_branch(top)
    where = _common_dir(top) / TRUST_BRANCH_RECORD
    if read_regular_file(where, MAX_TRUST_BRANCH_RECORD_BYTES).state is FileState.MISSING:
        atomic_write(where, f"{branch}\n".encode(), overwrite=False, mode=0o644)
        return
    if current != branch:
        raise InputRejected(
            "AUTH_TRUST_BRANCH_RECORDED",
            f"this repository's trust branch is recorded as {current!r} ({where})",
            f"keep {current}, or change the record yourself: edit {where}",
        )


def local_root(git: Git, top: Path) -> LocalRoot:
    """The trust root at the tip of the recorded trust branch.

    The branch is the one recorded in the git directory
    (:func:`recorded_trust_branch`, default ``main``), never one a working tree
    or a commit names; the root read there must name the same branch
    (``AUTH_TRUST_BRANCH_MISMATCH``). A working tree with a trust.toml while the
    branch does not exist is ``AUTH_TRUST_BRANCH_MISSING``: the root is not in
    force until it is committed there.
    """
    branch = recorded_trust_branch(top)
    has_local = read_regular_file(top / TRUST_RELPATH, MAX_TRUST_BYTES).state is not (
        FileState.MISSING)
    if not has_local:
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
                f"commit the trust root on {branch} (or fetch it); if this repository's "
                f"trust branch has another name, record it in .git/{TRUST_BRANCH_RECORD}",
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


# The trust files share one directory at the top of the tree (checked here, once): the
# proof below reads that directory's entries.
_TRUST_DIRS = {path.rpartition("/")[0] for path in TRUST_FILES}
_TRUST_DIR = next(iter(_TRUST_DIRS)) if len(_TRUST_DIRS) == 1 else ""
_TRUST_NAMES = frozenset(path.rpartition("/")[2].encode() for path in TRUST_FILES)


def no_root_probe(top: Path) -> list[str] | None:
    """The object names to hand :meth:`plangate.git.Git.read_objects` so that
    :func:`proves_no_trust_files` can show, in the same git process as other questions,
    that the recorded trust branch holds no trust file.

    None when this cannot apply: the working tree holds a trust.toml (its own branch,
    and :func:`local_root`'s exact path, decide), or the trust files do not share one
    top-level directory.
    """
    if not _TRUST_DIR or "/" in _TRUST_DIR:
        return None
    if read_regular_file(top / TRUST_RELPATH, MAX_TRUST_BYTES).state is not FileState.MISSING:
        return None
    try:
        ref = f"refs/heads/{recorded_trust_branch(top)}"
    except InputRejected:
        return None  # the exact path refuses the record with its reason

    return [f"{ref}^{{commit}}", f"{ref}^{{tree}}", f"{ref}:{_TRUST_DIR}"]


def proves_no_trust_files(answers: Sequence[GitObject | None]) -> bool:
    """True only when the answers to :func:`no_root_probe`'s names prove, from trees
    received whole, that the branch's tip commit holds none of the trust files.

    The tip must be a commit whose tree is the root tree received (the same commit
    answered both names); then either that tree has no entry for the trust
    directory, or the entry is a directory whose tree was received too (the same
    object) and lists none of the trust files. Anything else proves nothing (a
    missing answer, an unexpected type, a trust directory that is a file or a link,
    a malformed tree): the caller takes :func:`local_root`, which reads the branch
    exactly and refuses what it cannot read.
    """
    if len(answers) != 3:
        return False
    commit, root_tree, trust_dir = answers
    if commit is None or commit.kind != "commit" or root_tree is None:
        return False
    first_line = commit.data.partition(b"\n")[0]
    if first_line != b"tree " + root_tree.object_id.encode("ascii"):
        return False
    entries = tree_entries_of(root_tree)
    if entries is None:
        return False
    listed = entries.get(_TRUST_DIR.encode())
    if listed is None:
        return True  # read from the root tree itself: no trust directory
    mode, object_id = listed
    if mode != b"40000" or trust_dir is None or trust_dir.object_id != object_id:
        return False
    inside = tree_entries_of(trust_dir)
    return inside is not None and not (_TRUST_NAMES & inside.keys())
