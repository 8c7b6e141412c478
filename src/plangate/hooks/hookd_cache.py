"""What the hook helper remembers between requests, each keyed by the bytes it came from.

Never by a name that can move.

A decision with an active task verifies its record against the trust root at
the tip of the trust branch; in-process that costs one git process per hook
call when the branch holds no trust file (``ls-tree`` at the branch), two when
it does (``rev-parse`` of the branch, ``ls-tree`` of the tip). The helper
answers them from memory when, and only when, their inputs are the same bytes:

- **the trust root at a commit** (:func:`plangate.authority.source.root_at`)
  is keyed by the repository and the full commit id. A commit id is the digest
  of the commit's bytes, which name its tree and so every blob read under it;
  git runs with replacement objects switched off (:mod:`plangate.git`), so the
  same id always yields the same files. Refusals (exceptions) are not kept.
- **a branch's commit** (``Git.resolve_commit("refs/heads/...")``) is keyed by
  the SHA-256 of the bytes git resolves it from: the loose ref file, the
  ``packed-refs`` file and the repository's ``config`` (a reftable repository,
  a linked worktree or any file that cannot be read plainly is never cached).
  Moving the branch changes those bytes, so the next call asks git again.
- **the trust files listed at a branch** (``Git.ls_tree_at_ref``) is keyed the
  same way, with the paths asked for. A listing git could not make (no such
  branch) is kept too: it only sends the caller down its exact path, which has
  its own memo.

Everything else a decision reads (surfaces, plan, record, HEAD, the ledger) is
read afresh on every call, exactly as in-process.
"""

# ruff: noqa: PTH118
from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from typing import Any

from plangate.shapes import is_full_sha

MAX_ENTRIES = 256
MAX_REF_FILE = 16 * 1024 * 1024


def _read_plain(path: str) -> bytes | None:
    """The bytes of a regular file opened without following a link; ``b""`` when absent,
    ``None`` when it cannot be read plainly (then nothing is cached)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return b""
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_REF_FILE:
            return None
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def ref_key(worktree: str, ref: str) -> str | None:
    """The digest of every byte ``ref`` is resolved from in ``worktree``'s repository,
    or ``None`` when it is not plainly cacheable."""
    if not ref.startswith("refs/heads/") or ".." in ref or "\0" in ref:
        return None
    git_dir = os.path.join(worktree, ".git")
    try:
        info = os.lstat(git_dir)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None  # a linked worktree or a link: ask git every time
    config = _read_plain(os.path.join(git_dir, "config"))
    if config is None or b"reftable" in config.lower():
        return None
    loose = _read_plain(os.path.join(git_dir, *ref.split("/")))
    packed = _read_plain(os.path.join(git_dir, "packed-refs"))
    if loose is None or packed is None:
        return None
    digest = hashlib.sha256()
    for part in (os.fsencode(git_dir), ref.encode(), config, loose, packed):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


class Memo:
    """A bounded map from keys to answers (the oldest entry goes first)."""

    def __init__(self) -> None:
        self.values: dict[Any, Any] = {}
        self.hits = 0

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        """The remembered answer for ``key``, else ``compute()`` (remembered if it returns)."""
        if key in self.values:
            self.hits += 1
            return self.values[key]
        value = compute()
        if len(self.values) >= MAX_ENTRIES:
            self.values.pop(next(iter(self.values)))
        self.values[key] = value
        return value


ROOTS = Memo()
REFS = Memo()
LISTINGS = Memo()


def hits() -> int:
    """How many answers came from memory since the helper started."""
    return ROOTS.hits + REFS.hits + LISTINGS.hits


def install() -> None:
    """Put the memos in front of ``root_at``, ``Git.resolve_commit`` and
    ``Git.ls_tree_at_ref`` (helper only)."""
    from plangate.authority import source
    from plangate.git import Git

    original_root_at = source.root_at
    original_resolve = Git.resolve_commit
    original_listing = Git.ls_tree_at_ref
    if getattr(original_root_at, "_hookd_memo", False):
        return

    def root_at(git: Git, commit: str) -> Any:
        if not is_full_sha(commit):
            return original_root_at(git, commit)
        key = (os.path.realpath(git.cwd), commit)
        return ROOTS.get(key, lambda: original_root_at(git, commit))

    def resolve_commit(self: Git, rev: str) -> str:
        key = ref_key(os.path.realpath(self.cwd), rev)
        if key is None:
            return original_resolve(self, rev)
        return str(REFS.get((key, rev), lambda: original_resolve(self, rev)))

    def ls_tree_at_ref(self: Git, ref: str, paths: list[str]) -> Any:
        key = ref_key(os.path.realpath(self.cwd), ref)
        if key is None:
            return original_listing(self, ref, paths)
        listed = LISTINGS.get(
            (key, ref, tuple(paths)), lambda: _frozen(original_listing(self, ref, paths))
        )
        return None if listed is None else list(listed)

    root_at._hookd_memo = True  # type: ignore[attr-defined]
    source.root_at = root_at
    Git.resolve_commit = resolve_commit  # type: ignore[method-assign]
    Git.ls_tree_at_ref = ls_tree_at_ref  # type: ignore[method-assign]


def _frozen(listing: list[Any] | None) -> tuple[Any, ...] | None:
    return None if listing is None else tuple(listing)
