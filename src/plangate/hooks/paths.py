"""Resolve the raw paths a host hands a hook into canonical repository paths.

A host sends whatever its tool was given: an absolute path inside or outside
the repository, a relative path against the tool's working directory, a path
through a symbolic link, ``..`` or ``./`` segments, or a different letter case
on a case-insensitive file system. Matching must see the file that would really
be written, so every target is resolved first:

1. ``~`` and ``~/...`` are expanded (``~user`` is refused: not resolvable here);
2. a relative path is joined to the tool's working directory;
3. symbolic links are resolved with :func:`os.path.realpath` (a link pointing
   out of the repository resolves out of it, a link to a protected file
   resolves to that file);
4. the result must lie strictly inside the repository's working tree root (the
   root of a linked worktree is its own root; its git directory is outside);
5. an existing regular file with more than one hard link is refused
   (``HOOK_TARGET_HARDLINK``): another of its names may be protected;
6. on a case-insensitive file system each existing segment takes its on-disk
   spelling, so ``SRC/A.py`` is judged as ``src/a.py``;
7. the relative remainder must be a canonical path (:func:`plangate.paths.canonical_path`).

A target whose last component is itself a symbolic link names two paths: the
file it points to (above) and the link (:func:`named_link_path`, its parent
directories resolved). A write that replaces or removes the link changes the
link's own path, so callers judge both.

Any failure is a :class:`TargetRejected` with a reason code; callers deny.
"""

# ruff: noqa: PTH111, PTH114, PTH117, PTH118, PTH208
# Plain string paths on purpose: realpath/relpath semantics and the
# hook hot path; pathlib would add conversions without changing the meaning.
from __future__ import annotations

import os
import stat

from plangate.paths import PathRejected, canonical_path

DEVICE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
"""Redirection targets that write no file (shell parsers drop them)."""


class TargetRejected(Exception):
    """A raw target path could not be resolved to a canonical repository path."""

    def __init__(self, code: str, message: str, raw: str) -> None:
        super().__init__(code, message, raw)
        self.code = code
        self.message = message
        self.raw = raw

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def is_device_sink(raw: str) -> bool:
    """True for ``/dev/null``-like sinks and ``/dev/fd/N``, which write no file."""
    if raw in DEVICE_SINKS:
        return True
    return raw.startswith("/dev/fd/") and raw[len("/dev/fd/"):].isdigit()


def filesystem_is_case_insensitive(root: str) -> bool:
    """True when ``root`` lives on a case-insensitive file system.

    Probed with the repository's own ``.git`` entry: if ``.GIT`` names the same
    file, case does not distinguish names here.
    """
    probe = os.path.join(root, ".git")
    swapped = os.path.join(root, ".GIT")
    try:
        a = os.lstat(probe)
        b = os.lstat(swapped)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _on_disk_case(root: str, relative: str) -> str:
    """Spell each existing segment of ``relative`` as the directory lists it.

    Only used on case-insensitive file systems. A segment with no entry, or
    with several entries equal under case folding, is kept as given (matching
    then stays case-sensitive for scope: the safe side).
    """
    parts = relative.split("/")
    current = root
    out: list[str] = []
    for index, part in enumerate(parts):
        try:
            names = os.listdir(current)
        except OSError:
            out.extend(parts[index:])
            break
        if part in names:
            chosen = part
        else:
            folded = [n for n in names if n.casefold() == part.casefold()]
            chosen = folded[0] if len(folded) == 1 else part
        out.append(chosen)
        current = os.path.join(current, chosen)
    return "/".join(out)


def _absolute(raw: str, cwd: str) -> str:
    """``raw`` with ``~`` expanded and joined to ``cwd`` (not yet resolved)."""
    text = raw
    if text == "~" or text.startswith("~/"):
        text = os.path.expanduser(text)
    elif text.startswith("~"):
        raise TargetRejected(
            "HOOK_TARGET_UNRESOLVABLE", f"cannot resolve {raw!r} (another user's home)", raw
        )
    if not os.path.isabs(text):
        if not os.path.isabs(cwd):
            raise TargetRejected(
                "HOOK_TARGET_UNRESOLVABLE",
                f"cannot resolve relative path {raw!r}: the tool's directory is unknown",
                raw,
            )
        text = os.path.join(cwd, text)
    return text


def resolve_target(
    raw: object,
    *,
    cwd: str,
    repo_root: str,
    case_insensitive: bool = False,
) -> str:
    """Canonical repository-relative path of ``raw``, or raise :class:`TargetRejected`.

    ``cwd`` is the tool's working directory (absolute); ``repo_root`` is the
    working tree root, already resolved with :func:`os.path.realpath`.
    """
    if not isinstance(raw, str) or raw == "":
        raise TargetRejected(
            "HOOK_TARGET_INVALID", "the target path is empty or not text", repr(raw)
        )
    if "\x00" in raw:
        raise TargetRejected("HOOK_TARGET_INVALID", "the target path contains a NUL byte", raw)
    text = _absolute(raw, cwd)
    real = os.path.realpath(text)
    root = repo_root.rstrip("/") or "/"
    if real == root:
        raise TargetRejected(
            "HOOK_TARGET_IS_ROOT", f"{raw!r} is the repository root itself", raw
        )
    relative = _relative_to_root(raw, real, root, "resolves to")
    try:
        info = os.lstat(real)
    except OSError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        # Another name for the same bytes may be a protected file: writing this
        # name would write that one, and no path rule can see it.
        raise TargetRejected(
            "HOOK_TARGET_HARDLINK",
            f"{raw!r} is a hard link ({info.st_nlink} names for the same file)",
            raw,
        )
    return _canonical_relative(raw, root, relative, case_insensitive)


def named_link_path(
    raw: str,
    *,
    cwd: str,
    repo_root: str,
    case_insensitive: bool = False,
) -> str | None:
    """Canonical path of ``raw`` as named, when its last component is a symbolic link.

    A write that replaces or removes the link (``rm``, ``mv``/``ln -sf`` onto it,
    ``sed -i``, an editor's write-and-rename) changes the link's own path, not the
    file it points to: that path must be judged too. The parent directories are
    resolved (a link among them moves the name), the last component is not. None
    when the last component is no link (or the path ends in ``/``, ``.`` or ``..``,
    which follow it). Raises :class:`TargetRejected` when the link itself lies
    outside the repository or its path is not canonical.
    """
    text = _absolute(raw, cwd)
    head, tail = os.path.split(text)
    if tail in ("", ".", ".."):
        return None
    named = os.path.join(os.path.realpath(head), tail)
    if not os.path.islink(named):
        return None
    root = repo_root.rstrip("/") or "/"
    relative = _relative_to_root(raw, named, root, "is a link at")
    return _canonical_relative(raw, root, relative, case_insensitive)


def _relative_to_root(raw: str, path: str, root: str, how: str) -> str:
    """``path`` (absolute) relative to the repository ``root``; outside it is refused."""
    prefix = root if root.endswith("/") else root + "/"
    if not path.startswith(prefix):
        raise TargetRejected(
            "HOOK_TARGET_OUTSIDE_REPO", f"{raw!r} {how} {path}, outside the repository {root}", raw
        )
    return path[len(prefix):]


def _canonical_relative(raw: str, root: str, relative: str, case_insensitive: bool) -> str:
    """The canonical repository path of ``relative`` (on-disk case when asked)."""
    if case_insensitive:
        relative = _on_disk_case(root, relative)
    try:
        return canonical_path(relative)
    except PathRejected as exc:
        raise TargetRejected(exc.code, f"{raw!r}: {exc.message}", raw) from None
