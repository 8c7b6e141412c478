"""Harness IO: read the definition and build the manifest of a commit from git objects.

Everything here reads through the git door at a commit, never from a working
tree, so the same commit always gives the same definition and manifest.
"""

from __future__ import annotations

from pathlib import Path

from plangate.errors import InputRejected
from plangate.evaluation.harness.definition import (
    DEFAULT_DEFINITION_PATH,
    MAX_DEFINITION_BYTES,
    DefinitionRejected,
    HarnessDefinition,
    parse_definition,
)
from plangate.evaluation.harness.manifest import (
    MAX_POLICY_FILE_BYTES,
    HarnessManifest,
    build_manifest_from_tree,
    load_manifest_bytes,
)
from plangate.fsutil import FileState, atomic_write, read_regular_file
from plangate.git import Git
from plangate.paths import canonical_path


def load_definition_at(
    git: Git, commit: str, path: str = DEFAULT_DEFINITION_PATH
) -> HarnessDefinition:
    """Read and parse the harness definition blob at ``commit``.

    A definition that is missing or not a regular file at that commit raises
    ``HARNESS_DEFINITION_UNREADABLE``; git failures propagate as ``GitError``.
    """
    from plangate.git import GitError

    canonical_path(path)
    try:
        data = git.read_blob(commit, path, MAX_DEFINITION_BYTES)
    except GitError as exc:
        if exc.code in ("GIT_PATH_NOT_A_FILE", "GIT_BLOB_TOO_LARGE"):
            raise DefinitionRejected(
                "HARNESS_DEFINITION_UNREADABLE",
                f"harness definition {path} cannot be read at {commit[:12]}: {exc.message}",
                f"commit a harness definition at {path} (see docs/evaluation.md)",
            ) from None
        raise
    return parse_definition(data, f"{commit[:12]}:{path}")


def build_manifest(
    git: Git, commit: str, definition_path: str = DEFAULT_DEFINITION_PATH
) -> HarnessManifest:
    """Build the HarnessManifest of ``commit`` from git objects (service).

    Raises :class:`ManifestRejected` / ``DefinitionRejected`` (exit 1) with a
    reason when the definition is unreadable or a component matches nothing,
    and ``GitError`` when git cannot answer. Never returns an empty manifest.
    """
    return build_manifest_and_definition(git, commit, definition_path)[0]


def build_manifest_and_definition(
    git: Git, commit: str, definition_path: str = DEFAULT_DEFINITION_PATH
) -> tuple[HarnessManifest, HarnessDefinition]:
    """:func:`build_manifest` plus the parsed definition it was built from."""
    full = git.resolve_commit(commit)
    definition = load_definition_at(git, full, definition_path)
    tree = git.ls_tree(full)
    by_path = {e.path: e for e in tree}
    policy_blobs: dict[str, tuple[str, bytes]] = {}
    for path in definition.policy_files:
        entry = by_path.get(path)
        if entry is None or entry.kind != "blob" or entry.mode not in ("100644", "100755"):
            continue  # reported as HARNESS_POLICY_FILE_MISSING by the pure builder
        policy_blobs[path] = (entry.mode, git.read_blob(full, path, MAX_POLICY_FILE_BYTES))
    manifest = build_manifest_from_tree(definition, definition_path, full, tree, policy_blobs)
    return manifest, definition


MAX_MANIFEST_BYTES = 16_000_000
"""Largest manifest file ``harness verify`` reads."""


def write_manifest(
    cwd: Path, commit: str, definition_path: str, out: str | None
) -> HarnessManifest:
    """``harness manifest``: build the manifest of ``commit``; write it to ``out`` if given."""
    manifest = build_manifest(Git(cwd), commit, definition_path)
    if out:
        atomic_write(cwd / out, manifest.to_bytes())
    return manifest


def verify_manifest_file(path: Path, shown: str) -> HarnessManifest:
    """``harness verify``: read a stored manifest and re-check its schema and ``harness_id``."""
    read = read_regular_file(path, MAX_MANIFEST_BYTES)
    if read.state is not FileState.OK or read.data is None:
        raise InputRejected(
            "HARNESS_MANIFEST_UNREADABLE",
            f"cannot read {shown}: {read.detail}",
            "give a regular file",
        )
    return load_manifest_bytes(read.data)
