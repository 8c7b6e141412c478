"""The six-file Plan Package: presence gate, hashes and evidence (pure).

Pure functions over a :class:`~plangate.snapshot.TaskSnapshot`:

- every artifact must be a regular, readable, non-empty file within the size
  bound (``ARTIFACT_*`` reasons; 0 bytes is an integrity failure);
- ``artifact_hashes`` maps each name to ``sha256:`` of its raw bytes,
  ``plan_hash`` is ``artifact_hashes["plan.md"]`` and ``plan_package_hash`` is
  the digest of the RFC 8785 canonical form of ``artifact_hashes`` (for this
  ASCII string map, byte-identical to a sorted compact ``json.dumps``);
- both evidence markers are judged against the current plan hash.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping

from plangate.canonical import digest, is_digest, sha256_digest
from plangate.fsutil import FileRead, FileState
from plangate.plan.markers import C1, C2, MarkerResult, read_marker
from plangate.records import NamedTuple
from plangate.snapshot import ARTIFACTS, TaskSnapshot
from plangate.verdict import Reason

ARTIFACT_SET = frozenset(ARTIFACTS)

_STATE_CODES = {
    FileState.MISSING: ("ARTIFACT_MISSING", "does not exist"),
    FileState.SYMLINK: ("ARTIFACT_SYMLINK", "is a symbolic link (links are never followed)"),
    FileState.NOT_REGULAR: ("ARTIFACT_NOT_REGULAR", "is not a regular file"),
    FileState.TOO_LARGE: ("ARTIFACT_TOO_LARGE", "is larger than the size bound"),
    FileState.UNREADABLE: ("ARTIFACT_UNREADABLE", "cannot be read"),
}


def artifact_reason(name: str, read: FileRead) -> Reason | None:
    """The presence/integrity reason for one artifact, or None when it is usable."""
    if read.ok:
        if not read.data:
            return Reason(
                "ARTIFACT_EMPTY",
                f"{name} is 0 bytes (integrity failure)",
                f"write the content of {name}",
            )
        return None
    code, what = _STATE_CODES.get(read.state, ("ARTIFACT_UNREADABLE", "cannot be read"))
    detail = f" ({read.detail})" if read.detail else ""
    return Reason(
        code, f"{name} {what}{detail}", f"make {name} a regular file in the task directory"
    )


def presence_reasons(artifacts: Mapping[str, FileRead]) -> list[Reason]:
    """Presence gate over the six artifacts, in contract order."""
    out = []
    for name in ARTIFACTS:
        reason = artifact_reason(name, artifacts.get(name, FileRead(FileState.MISSING)))
        if reason is not None:
            out.append(reason)
    return out


def plan_package_hash(artifact_hashes: Mapping[str, str]) -> str:
    """Digest of the canonical JSON of ``artifact_hashes``.

    For the usual map (the six artifact names to well-formed digests, all plain
    ASCII needing no escapes) the canonical text is built directly; anything
    else goes through :func:`plangate.canonical.digest`. A test pins the two.
    """
    if artifact_hashes.keys() <= ARTIFACT_SET and all(
        is_digest(v) for v in artifact_hashes.values()
    ):
        return plan_package_hash_of_digests(artifact_hashes)
    return digest(dict(artifact_hashes))


def plan_package_hash_of_digests(artifact_hashes: Mapping[str, str]) -> str:
    """:func:`plan_package_hash` of a map already known to be artifact names to digests.

    The caller guarantees what :func:`plan_package_hash` checks before taking
    this path (keys among the six artifact names, every value
    :func:`~plangate.canonical.is_digest`), so the canonical text needs no
    escaping and is built directly.
    """
    if len(artifact_hashes) == len(ARTIFACTS):  # all six: the one usual shape
        text = _SIX_TEMPLATE % _SIX_VALUES(artifact_hashes)
    else:
        body = ",".join(f'"{k}":"{artifact_hashes[k]}"' for k in sorted(artifact_hashes))
        text = "{" + body + "}"
    return sha256_digest(text.encode("ascii"))


# The canonical text of the six-name map, keys in RFC 8785 order (for these
# ASCII names, plain sorted order), values filled in by one C-level call.
_SIX_NAMES = tuple(sorted(ARTIFACTS))
_SIX_TEMPLATE = "{" + ",".join(f'"{name}":"%s"' for name in _SIX_NAMES) + "}"
_SIX_VALUES = operator.itemgetter(*_SIX_NAMES)


class PackageState(NamedTuple):
    """Everything known about one task's Plan Package."""

    task_id: str
    presence: tuple[Reason, ...]
    artifact_hashes: Mapping[str, str]
    plan_hash: str | None
    plan_package_hash: str | None
    c1: MarkerResult
    c2: MarkerResult

    @property
    def complete(self) -> bool:
        """All six artifacts present, regular and non-empty."""
        return not self.presence

    @property
    def evidence_ok(self) -> bool:
        """Both markers valid, accepted and current."""
        return self.c1.valid and self.c2.valid

    @property
    def evidence_reasons(self) -> tuple[Reason, ...]:
        """Reasons of the markers that are not valid."""
        return tuple(m.reason for m in (self.c1, self.c2) if m.reason is not None)

    def to_json(self) -> dict[str, object]:
        """JSON form for ``plangate package --json``."""
        return {
            "task_id": self.task_id,
            "complete": self.complete,
            "presence": [r.to_json() for r in self.presence],
            "artifact_hashes": dict(self.artifact_hashes),
            "plan_hash": self.plan_hash,
            "plan_package_hash": self.plan_package_hash,
            "markers": {"c1": self.c1.to_json(), "c2": self.c2.to_json()},
        }


def compute_package(snapshot: TaskSnapshot) -> PackageState:
    """Presence, hashes and both markers of ``snapshot`` (pure)."""
    # One pass over the six reads (this runs for every task of 'plangate
    # status'); the same results as presence_reasons() and
    # snapshot.artifact_hashes().
    artifacts = snapshot.artifacts
    presence: list[Reason] = []
    hashes: dict[str, str] = {}
    for name in ARTIFACTS:
        read = artifacts.get(name)
        if read is None:
            read = FileRead(FileState.MISSING)
        elif read.state is FileState.OK and read.data:
            hashes[name] = sha256_digest(read.data)
            continue
        reason = artifact_reason(name, read)
        if reason is not None:
            presence.append(reason)
        if read.state is FileState.OK and read.data is not None:
            hashes[name] = sha256_digest(read.data)  # an empty file still has a hash
    # An empty plan.md is hashed above but has no plan hash (no data).
    plan_hash = hashes.get("plan.md") if snapshot.artifact("plan.md") else None
    def current_scope() -> str | None:
        # asked only for a marker that names a scope: the plan is parsed only then
        from plangate.plan.scope import derive_scope

        return derive_scope(snapshot.artifact("plan.md")).digest

    c1 = read_marker(C1, snapshot.artifact(C1.filename), plan_hash, current_scope)
    c2 = read_marker(C2, snapshot.artifact(C2.filename), plan_hash, current_scope)
    if presence:
        return PackageState(snapshot.task_id, tuple(presence), {}, plan_hash, None, c1, c2)
    # Without presence reasons all six are hashed above: well-formed digests.
    package_hash = plan_package_hash_of_digests(hashes)
    return PackageState(snapshot.task_id, (), hashes, plan_hash, package_hash, c1, c2)

