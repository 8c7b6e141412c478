"""HarnessManifest: the content-addressed identity of a harness at one commit.

Built from git objects only (``git ls-tree -r`` of the commit and blobs read
at that commit), never from the working tree, so the same commit always gives
the same bytes. ``harness_id`` is the digest of the manifest with the
``harness_id`` key removed and is recomputed on every read.

Field definitions are in docs/evaluation-formats.md section 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plangate.canonical import digest, is_digest, pretty_bytes, sha256_digest, strict_loads_object
from plangate.errors import InputRejected
from plangate.evaluation.harness.definition import COMPONENT_TYPES, HarnessDefinition
from plangate.git import TreeEntry
from plangate.paths import glob_match, is_canonical_path
from plangate.shapes import is_full_sha

SCHEMA_VERSION = "1"
MAX_POLICY_FILE_BYTES = 1_000_000

_MANIFEST_KEYS = frozenset(
    {
        "schema_version",
        "harness_id",
        "source_commit",
        "definition_path",
        "definition_sha256",
        "distribution_digest",
        "verifier_set_sha",
        "policy_profile_sha",
        "verifier_set",
        "components",
    }
)
_COMPONENT_KEYS = frozenset(
    {"id", "type", "paths", "files", "content_sha", "installed", "registered"}
)


class ManifestRejected(InputRejected):
    """A manifest cannot be built or read."""


@dataclass(frozen=True)
class HarnessManifest:
    """A verified manifest: the JSON object, its record bytes and its id."""

    data: Mapping[str, Any]

    @property
    def harness_id(self) -> str:
        """The content-addressed identity (verified when the object was made)."""
        return str(self.data["harness_id"])

    @property
    def source_commit(self) -> str:
        """Full id of the commit the manifest describes."""
        return str(self.data["source_commit"])

    @property
    def verifier_set(self) -> tuple[str, ...]:
        """Ids of the verifier/gate pipeline stages, in order."""
        return tuple(self.data["verifier_set"])

    def components(self) -> list[Mapping[str, Any]]:
        """The component entries, sorted by id."""
        return list(self.data["components"])

    def component(self, component_id: str) -> Mapping[str, Any] | None:
        """The component entry with ``component_id``, or None."""
        for comp in self.data["components"]:
            if comp["id"] == component_id:
                return dict(comp)
        return None

    def to_bytes(self) -> bytes:
        """The record form: sorted keys, indent 2, trailing newline (same commit, same bytes)."""
        return pretty_bytes(dict(self.data))


def compute_harness_id(manifest: Mapping[str, Any]) -> str:
    """Digest of ``manifest`` without its ``harness_id`` key."""
    body = {k: v for k, v in manifest.items() if k != "harness_id"}
    return digest(body)


def _entry_json(entry: TreeEntry) -> dict[str, str]:
    return {"path": entry.path, "mode": entry.mode, "object": entry.object_id}


def _matches(pattern: str, path: str) -> bool:
    return glob_match(pattern, path)


def build_manifest_from_tree(
    definition: HarnessDefinition,
    definition_path: str,
    commit: str,
    tree: Sequence[TreeEntry],
    policy_blobs: Mapping[str, tuple[str, bytes]],
) -> HarnessManifest:
    """Build the manifest from already-read git facts (pure).

    ``tree`` is the recursive tree listing of ``commit``; ``policy_blobs`` maps
    each policy file path to ``(mode, bytes)`` read at that commit.
    """
    if not is_full_sha(commit):
        raise ManifestRejected(
            "HARNESS_COMMIT_NOT_FULL", f"{commit!r} is not a full commit id", "resolve it first"
        )
    bad = sorted(e.path for e in tree if not is_canonical_path(e.path))
    if bad:
        raise ManifestRejected(
            "HARNESS_TREE_PATH_NONCANONICAL",
            f"commit {commit[:12]} contains non-canonical path(s) {bad[:3]!r}",
            "rename them; component membership of such paths cannot be decided",
        )
    components: list[dict[str, Any]] = []
    all_entries: dict[str, TreeEntry] = {}
    for comp in definition.components:
        matched: list[TreeEntry] = []
        unmatched: list[str] = []
        for pattern in comp.paths:
            hits = [e for e in tree if _matches(pattern, e.path)]
            if not hits:
                unmatched.append(pattern)
            matched.extend(hits)
        unique = sorted({e.path: e for e in matched}.values(), key=lambda e: e.path)
        if not unique:
            raise ManifestRejected(
                "HARNESS_COMPONENT_UNMATCHED",
                f"component {comp.id!r}: none of its paths {list(comp.paths)!r} exists "
                f"at {commit[:12]}",
                "fix the component's paths in the harness definition, or commit its files",
            )
        for entry in unique:
            all_entries[entry.path] = entry
        installed = not unmatched
        registered = installed and (
            comp.id in definition.registry_enabled or comp.id in definition.verifier_set_ids
        )
        components.append(
            {
                "id": comp.id,
                "type": comp.type,
                "paths": list(comp.paths),
                "files": [e.path for e in unique],
                "content_sha": digest([_entry_json(e) for e in unique]),
                "installed": installed,
                "registered": registered,
            }
        )
    content_by_id = {c["id"]: c["content_sha"] for c in components}
    verifier_set_sha = digest(
        {
            "stages": [s.to_json() for s in definition.stages],
            "content": {cid: content_by_id[cid] for cid in definition.verifier_set_ids},
        }
    )
    policy: list[dict[str, str]] = []
    for path in definition.policy_files:
        if path not in policy_blobs:
            raise ManifestRejected(
                "HARNESS_POLICY_FILE_MISSING",
                f"policy file {path} is not a regular file at {commit[:12]}",
                "commit it; the policy profile (incl. protected surfaces) is part of the identity",
            )
        mode, data = policy_blobs[path]
        policy.append({"path": path, "mode": mode, "sha256": sha256_digest(data)})
    policy_profile_sha = digest(policy)
    distribution_digest = digest(
        {
            "definition": {"path": definition_path, "sha256": definition.sha256},
            "entries": [_entry_json(all_entries[p]) for p in sorted(all_entries)],
            "policy": policy,
        }
    )
    body: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source_commit": commit,
        "definition_path": definition_path,
        "definition_sha256": definition.sha256,
        "distribution_digest": distribution_digest,
        "verifier_set_sha": verifier_set_sha,
        "policy_profile_sha": policy_profile_sha,
        "verifier_set": list(definition.verifier_set_ids),
        "components": components,
    }
    body["harness_id"] = compute_harness_id(body)
    return HarnessManifest(body)


def _bad(message: str) -> ManifestRejected:
    return ManifestRejected(
        "HARNESS_MANIFEST_INVALID", message, "rebuild it with 'plangate harness manifest'"
    )


def validate_manifest(obj: Mapping[str, Any]) -> HarnessManifest:
    """Check a manifest object's shape and recompute its ``harness_id`` (pure)."""
    keys = set(obj)
    if keys != _MANIFEST_KEYS:
        missing = sorted(_MANIFEST_KEYS - keys)
        unknown = sorted(keys - _MANIFEST_KEYS)
        raise _bad(f"manifest keys differ from the contract: missing {missing}, unknown {unknown}")
    if obj["schema_version"] != SCHEMA_VERSION:
        raise _bad(f"schema_version must be {SCHEMA_VERSION!r}")
    if not isinstance(obj["source_commit"], str) or not is_full_sha(obj["source_commit"]):
        raise _bad("source_commit must be a full lowercase commit id")
    for key in (
        "harness_id",
        "definition_sha256",
        "distribution_digest",
        "verifier_set_sha",
        "policy_profile_sha",
    ):
        if not is_digest(obj[key]):
            raise _bad(f"{key} must be a sha256: digest")
    if not isinstance(obj["definition_path"], str) or not is_canonical_path(obj["definition_path"]):
        raise _bad("definition_path must be a canonical path")
    comps = obj["components"]
    if not isinstance(comps, list) or not comps:
        raise _bad("components must be a non-empty list")
    seen: set[str] = set()
    for comp in comps:
        if not isinstance(comp, dict) or set(comp) != _COMPONENT_KEYS:
            raise _bad("a component entry does not have exactly the contract's keys")
        if not isinstance(comp["id"], str) or comp["id"] in seen:
            raise _bad(f"component id {comp.get('id')!r} is missing or duplicated")
        seen.add(comp["id"])
        if comp["type"] not in COMPONENT_TYPES:
            raise _bad(f"component {comp['id']!r} has unknown type {comp['type']!r}")
        if not is_digest(comp["content_sha"]):
            raise _bad(f"component {comp['id']!r} content_sha is not a digest")
        if not isinstance(comp["installed"], bool) or not isinstance(comp["registered"], bool):
            raise _bad(f"component {comp['id']!r} installed/registered must be booleans")
        for key in ("paths", "files"):
            value = comp[key]
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(p, str) for p in value)
            ):
                raise _bad(f"component {comp['id']!r} {key} must be a non-empty list of strings")
    vset = obj["verifier_set"]
    if not isinstance(vset, list) or not vset or not all(v in seen for v in vset):
        raise _bad("verifier_set must be a non-empty list of component ids")
    recomputed = compute_harness_id(obj)
    if recomputed != obj["harness_id"]:
        raise ManifestRejected(
            "HARNESS_ID_MISMATCH",
            f"harness_id {obj['harness_id']} does not match the recomputed {recomputed}",
            "the manifest was edited after it was built; rebuild it from the commit",
        )
    return HarnessManifest(dict(obj))


def load_manifest_bytes(data: bytes) -> HarnessManifest:
    """Strictly parse manifest bytes and verify ``harness_id`` by recomputation."""
    return validate_manifest(strict_loads_object(data, "HarnessManifest"))
