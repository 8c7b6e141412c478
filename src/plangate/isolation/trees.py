"""Trees for boxes: a commit extracted as plain files, and checked file by file against git.

:func:`extract_commit` writes a commit's tree into an empty directory as raw
bytes (no ``.git``, nothing linking back to the repository): a bare scratch
repository borrows the repository's objects read-only (``alternates``), turns
every filter, end-of-line conversion and ``ident`` expansion off
(``info/attributes``) and checks the tree out into the directory; the scratch
repository is removed afterwards.

:func:`tree_differences` hashes every file of such a directory as git hashes a
blob and compares it with the commit's tree: a changed, missing, added or
retyped entry is a difference. Nothing in the directory (no ``.git``, no
index, no ``.gitignore``) can hide one, unlike ``git status``.

:func:`pack_tree` and :func:`unpack_tree` ship a directory by content to another
machine (a trial on a cluster worker): the receiver hashes every entry and
refuses a tree that does not hash to the digest it was sent under.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from plangate.fsutil import atomic_write
from plangate.git import Git
from plangate.records import NamedTuple

RAW_ATTRIBUTES = b"* -text -filter -ident -working-tree-encoding\n"
"""``info/attributes`` of every scratch repository that writes a tree (raw bytes)."""

_REGULAR = {"100644": False, "100755": True}


def scratch_repository(repo_root: Path, where: Path) -> Git:
    """A bare repository at ``where`` that borrows ``repo_root``'s objects read-only."""
    objects = Git(repo_root).common_dir() / "objects"
    # No template: nothing (sample hooks, description) is copied that the repository never uses.
    Git(where.parent).run(["init", "-q", "--bare", "--template=", str(where)])
    # A scratch repository does not outlive its run: no fsync.
    alternates = (str(objects) + "\n").encode()
    atomic_write(where / "objects" / "info" / "alternates", alternates, durable=False)
    atomic_write(where / "info" / "attributes", RAW_ATTRIBUTES, durable=False)
    return Git(where)


def extract_commit(repo_root: Path, commit: str, dest: Path) -> None:
    """Write ``commit``'s tree into the empty directory ``dest`` (created when missing)."""
    dest.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="plangate-extract-"))
    try:
        git = scratch_repository(repo_root, scratch / "repo.git")
        git.run([f"--work-tree={dest}", "read-tree", "-u", "--reset", commit])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _blob_id(data: bytes, algorithm: str) -> str:
    header = b"blob " + str(len(data)).encode() + b"\x00"
    return hashlib.new(algorithm, header + data).hexdigest()


def tree_differences(repo_root: Path, commit: str, directory: Path) -> list[str]:
    """Paths where ``directory`` differs from ``commit``'s tree, sorted (empty: identical)."""
    git = Git(repo_root)
    algorithm = git.run(["rev-parse", "--show-object-format"]).stdout.decode().strip() or "sha1"
    expected = {e.path: e for e in git.ls_tree(commit)}
    found: dict[str, str] = {}
    for current, dirs, files in os.walk(directory):
        base = Path(current)
        for name in [*dirs, *files]:
            path = base / name
            rel = path.relative_to(directory).as_posix()
            info = path.lstat()
            if stat.S_ISDIR(info.st_mode):
                if rel in expected and expected[rel].kind == "commit":
                    found[rel] = "gitlink"
                continue
            found[rel] = "other"
            if stat.S_ISLNK(info.st_mode):
                target = os.fsencode(path.readlink())
                found[rel] = f"120000 {_blob_id(target, algorithm)}"
            elif stat.S_ISREG(info.st_mode):
                mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
                found[rel] = f"{mode} {_blob_id(path.read_bytes(), algorithm)}"
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
    differences = []
    for rel in sorted(set(expected) | set(found)):
        entry = expected.get(rel)
        want = (
            ("gitlink" if entry.kind == "commit" else f"{entry.mode} {entry.object_id}")
            if entry is not None
            else None
        )
        if found.get(rel) != want:
            differences.append(rel)
    return differences


# -- trees shipped by content ------------------------------------------------------------

MAX_PACKED_BYTES = 512 * 1024 * 1024
"""The most a packed tree may hold (all its files together)."""


class TreeMismatch(ValueError):
    """A shipped tree whose bytes do not hash to the digest it was sent under."""


class TreePack(NamedTuple):
    """A directory as content: ``(path, mode, bytes)`` per entry, and the digest of them all.

    ``mode`` is git's: ``100644``, ``100755`` or ``120000`` (a link; its bytes are the
    target). The digest (:func:`tree_digest`) names the content, so a tree shipped to
    another machine is checked there by hashing what arrived.
    """

    digest: str
    entries: tuple[tuple[str, str, bytes], ...]


def tree_digest(entries: tuple[tuple[str, str, bytes], ...]) -> str:
    """``sha256:`` over one line ``MODE SHA256 PATH`` per entry, sorted by path (pure)."""
    lines = b"".join(
        f"{mode} {hashlib.sha256(data).hexdigest()} {path}\n".encode()
        for path, mode, data in sorted(entries)
    )
    return "sha256:" + hashlib.sha256(lines).hexdigest()


def pack_tree(directory: Path) -> TreePack:
    """Every regular file and link under ``directory`` (no link followed), with its digest."""
    entries: list[tuple[str, str, bytes]] = []
    total = 0
    for current, dirs, files in os.walk(directory):
        base = Path(current)
        for name in [*dirs, *files]:
            path = base / name
            info = path.lstat()
            rel = path.relative_to(directory).as_posix()
            if stat.S_ISLNK(info.st_mode):
                entries.append((rel, "120000", os.fsencode(path.readlink())))
            elif stat.S_ISREG(info.st_mode):
                data = path.read_bytes()
                total += len(data)
                if total > MAX_PACKED_BYTES:
                    raise TreeMismatch(f"{directory} holds more than {MAX_PACKED_BYTES} bytes")
                entries.append((rel, "100755" if info.st_mode & stat.S_IXUSR else "100644", data))
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
    packed = tuple(sorted(entries))
    return TreePack(tree_digest(packed), packed)


def _safe_relative(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def unpack_tree(pack: TreePack, expected: str, dest: Path) -> None:
    """Write ``pack`` into the empty directory ``dest`` after checking it hashes to
    ``expected`` (raises :class:`TreeMismatch` before writing anything otherwise)."""
    if tree_digest(pack.entries) != expected or pack.digest != expected:
        raise TreeMismatch(f"the shipped tree does not hash to {expected}")
    if not all(_safe_relative(p) and m in ("100644", "100755", "120000")
               for p, m, _ in pack.entries):
        raise TreeMismatch("the shipped tree names a path outside its directory")
    links = {p for p, m, _ in pack.entries if m == "120000"}
    if any(p.startswith(link + "/") for p, _, _ in pack.entries for link in links):
        raise TreeMismatch("the shipped tree puts a path under a link (it would write through it)")
    dest.mkdir(parents=True, exist_ok=True)
    for rel, mode, data in pack.entries:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.symlink_to(os.fsdecode(data))
            continue
        atomic_write(target, data, overwrite=False, mode=0o755 if mode == "100755" else 0o644)
