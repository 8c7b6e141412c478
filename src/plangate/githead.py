"""Read HEAD from the ``.git`` files directly (no subprocess on the hook hot path).

Handles a ``.git`` directory, a ``.git`` file (linked worktrees and
submodules: ``gitdir: <path>`` plus ``commondir``), symbolic refs, loose refs
and ``packed-refs``. Anything unexpected (reftable storage, an unreadable
file, a ref chain that is too long, a value that is not a full object id)
returns None and the caller falls back to the git adapter, which is
authoritative. The helper never guesses.
"""

# ruff: noqa: PTH112, PTH117, PTH118, PTH123
# Plain string paths on purpose: realpath/relpath semantics and the
# hook hot path; pathlib would add conversions without changing the meaning.
from __future__ import annotations

import os

from plangate.shapes import is_full_sha

_MAX_SMALL_FILE = 64 * 1024
_MAX_PACKED_REFS = 32 * 1024 * 1024


def _read(path: str, limit: int) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return None if len(data) > limit else data


def git_dirs(worktree_root: str) -> tuple[str, str] | None:
    """``(git_dir, common_dir)`` of the worktree at ``worktree_root``, or None."""
    dotgit = os.path.join(worktree_root, ".git")
    if os.path.isdir(dotgit):
        git_dir = dotgit
    else:
        data = _read(dotgit, _MAX_SMALL_FILE)
        if data is None or not data.startswith(b"gitdir: "):
            return None
        target = data[len(b"gitdir: "):].strip().decode("utf-8", "surrogateescape")
        git_dir = target if os.path.isabs(target) else os.path.join(worktree_root, target)
    common = git_dir
    commondir = _read(os.path.join(git_dir, "commondir"), _MAX_SMALL_FILE)
    if commondir is not None:
        text = commondir.strip().decode("utf-8", "surrogateescape")
        common = text if os.path.isabs(text) else os.path.join(git_dir, text)
    return os.path.normpath(git_dir), os.path.normpath(common)


def _packed_ref(common_dir: str, ref: bytes) -> bytes | None:
    data = _read(os.path.join(common_dir, "packed-refs"), _MAX_PACKED_REFS)
    if data is None:
        return None
    for line in data.splitlines():
        if line.startswith((b"#", b"^")):
            continue
        value, _, name = line.partition(b" ")
        if name == ref:
            return value
    return None


def read_head(worktree_root: str) -> str | None:
    """Full object id HEAD points to, or None when it cannot be read with certainty."""
    dirs = git_dirs(worktree_root)
    if dirs is None:
        return None
    git_dir, common_dir = dirs
    config = _read(os.path.join(common_dir, "config"), _MAX_SMALL_FILE)
    if config is None or b"reftable" in config.lower():
        return None
    value = _read(os.path.join(git_dir, "HEAD"), _MAX_SMALL_FILE)
    for _depth in range(5):
        if value is None:
            return None
        value = value.strip()
        if value.isascii() and is_full_sha(value.decode("ascii")):
            return value.decode("ascii")
        if not value.startswith(b"ref: "):
            return None
        ref = value[len(b"ref: "):].strip()
        if not ref.startswith(b"refs/") or b".." in ref or b"\x00" in ref:
            return None
        ref_text = ref.decode("utf-8", "surrogateescape")
        # Per-worktree refs live in the worktree's git dir, shared refs in the common dir.
        per_worktree = ref_text.startswith(("refs/worktree/", "refs/bisect/", "refs/rewritten/"))
        base = git_dir if per_worktree else common_dir
        loose = _read(os.path.join(base, ref_text), _MAX_SMALL_FILE)
        value = loose if loose is not None else _packed_ref(common_dir, ref)
    return None
