"""Where a changed symlink points, resolved inside the candidate tree (pure).

A link is judged by what the operating system would open through it: its
target is walked one component at a time, and every component that is itself
a symlink of the candidate tree is replaced by that link's target, so a chain
(``a -> x/grader.py`` with ``x -> eval``) lands where it really lands. The
purely lexical reading (``normpath`` of the target next to the link) is kept
beside it: the gate judges both, over-matching is the safe side.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Mapping

MAX_LINK_HOPS = 40
"""Symlinks followed while resolving one link (the usual kernel bound); more is a loop."""


def _usable(target: str) -> bool:
    return (
        bool(target) and not target.startswith("/") and "\\" not in target and "\x00" not in target
    )


def lexical_target(link: str, target: str) -> str | None:
    """``target`` joined to the link's directory and normalised; None if it leaves the tree.

    ``""`` names the repository root itself.
    """
    if not _usable(target):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../"):
        return None
    return joined


def physical_target(link: str, links: Mapping[str, str]) -> str | None:
    """Resolve ``link`` through every symlink of the tree (``links``: path -> target).

    Returns the repository-relative path the link designates (``""`` for the
    root), or None when the walk leaves the repository, meets an absolute or
    undecodable target, or follows more than :data:`MAX_LINK_HOPS` links.
    """
    target = links.get(link)
    if target is None or not _usable(target):
        return None
    resolved: list[str] = [p for p in posixpath.dirname(link).split("/") if p]
    parts = deque(target.split("/"))
    hops = 0
    while parts:
        part = parts.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return None
            resolved.pop()
            continue
        here = "/".join([*resolved, part])
        nested = links.get(here)
        if nested is None:
            resolved.append(part)
            continue
        hops += 1
        if hops > MAX_LINK_HOPS or not _usable(nested):
            return None
        # The nested target is relative to the directory holding that link: ``resolved``.
        parts.extendleft(reversed(nested.split("/")))
    return "/".join(resolved)
