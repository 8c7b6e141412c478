"""Signed ledger checkpoints: the format and what the chain must show against one (pure).

A checkpoint says, signed by a listed principal (namespace ``plangate-ledger``),
"the ledger had ``seq`` entries ending at ``head`` at ``time``". It is kept in
the repository as a committed file, ``.plangate/ledger-checkpoint.json`` with
its signature ``.plangate/ledger-checkpoint.json.sig``, canonical JSON::

    {"head": "sha256:...", "kind": "plangate-ledger-checkpoint",
     "principal": "carol@example.com", "seq": 42, "time": "2026-12-03T09:00:00Z",
     "version": 1}

A hash chain has no secret: whoever can write the database can truncate it,
delete and re-create it, restore an old copy or re-initialise it, and the
shorter chain still verifies. Against the newest valid checkpoint it does not:

1. the ledger holds at least ``seq`` entries; fewer means it was truncated,
   deleted and re-created, rolled back or re-initialised: ``LEDGER_BEHIND_CHECKPOINT``;
2. the entry at ``seq`` has the checkpoint's ``head`` hash; another means the
   history was rewritten, or re-initialised and grown past the checkpoint:
   ``LEDGER_CHECKPOINT_DIVERGED``.

The newest checkpoint is the one with the latest ``time`` (then the highest
``seq``): a human who re-initialises a ledger signs a new checkpoint, which
supersedes the old chain's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from plangate.canonical import StrictJSONError, canonical_bytes, is_digest, strict_loads
from plangate.records import NamedTuple
from plangate.verdict import Reason

KIND = "plangate-ledger-checkpoint"
RELPATH = ".plangate/ledger-checkpoint.json"
SIG_RELPATH = RELPATH + ".sig"
MAX_CHECKPOINT_BYTES = 4 * 1024
_TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_KEYS = frozenset({"kind", "version", "seq", "head", "time", "principal"})
_SIGN_AGAIN = "then sign a new checkpoint: plangate ledger checkpoint --sign KEY"


class Checkpoint(NamedTuple):
    """A parsed checkpoint."""

    seq: int
    head: str
    time: str
    principal: str


def checkpoint_bytes(checkpoint: Checkpoint) -> bytes:
    """The canonical bytes that are signed and written."""
    value: dict[str, Any] = dict(checkpoint._asdict())
    value.update(kind=KIND, version=1)
    return canonical_bytes(value) + b"\n"


def parse_checkpoint(data: bytes) -> Checkpoint | str:
    """The checkpoint, or why it is not one (a message)."""
    if len(data) > MAX_CHECKPOINT_BYTES:
        return f"larger than {MAX_CHECKPOINT_BYTES} bytes"
    try:
        value = strict_loads(data)
    except StrictJSONError as exc:
        return f"{exc.code}: {exc.message}"
    if not isinstance(value, dict) or value.keys() != _KEYS:
        return f"must hold exactly the keys {', '.join(sorted(_KEYS))}"
    if value["kind"] != KIND or value["version"] != 1:
        return "kind or version is not a ledger checkpoint's"
    seq = value["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return "seq must be a positive integer"
    if not (isinstance(value["head"], str) and is_digest(value["head"])):
        return "head must be a sha256 digest"
    if not (isinstance(value["time"], str) and _TIME_RE.fullmatch(value["time"])):
        return "time must be YYYY-MM-DDTHH:MM:SSZ"
    if not (isinstance(value["principal"], str) and value["principal"]):
        return "principal must be a non-empty string"
    checkpoint = Checkpoint(seq, value["head"], value["time"], value["principal"])
    if checkpoint_bytes(checkpoint) != data:
        return "not in canonical form (written by 'plangate ledger checkpoint')"
    return checkpoint


def newest(checkpoints: Iterable[Checkpoint]) -> Checkpoint | None:
    """The checkpoint with the latest time (then the highest seq), or None."""
    return max(checkpoints, key=lambda c: (c.time, c.seq), default=None)


class ChainSeen(NamedTuple):
    """What verifying the chain showed about one checkpoint."""

    entries: int
    """Entries in the chain (it verified up to its head)."""
    head_present: bool
    """An entry has the checkpoint's ``head`` hash (its seq is part of the hash)."""
    reinitialised: bool
    """The chain holds a ``ledger_reinitialised`` entry (it was started over)."""


def checkpoint_reasons(checkpoint: Checkpoint, seen: ChainSeen) -> list[Reason]:
    """The rules in the module docstring; empty when the chain extends the checkpoint."""
    restarted = " (the chain was re-initialised)" if seen.reinitialised else ""
    where = f"the checkpoint signed by {checkpoint.principal} at {checkpoint.time}"
    if seen.entries < checkpoint.seq:
        return [
            Reason(
                "LEDGER_BEHIND_CHECKPOINT",
                f"the ledger has {seen.entries} entries but {where} saw {checkpoint.seq}: "
                f"it was truncated, deleted and re-created, or rolled back{restarted}",
                "restore the ledger from a verified export; " + _SIGN_AGAIN,
            )
        ]
    if not seen.head_present:
        return [
            Reason(
                "LEDGER_CHECKPOINT_DIVERGED",
                f"entry {checkpoint.seq} is not the one {where} saw ({checkpoint.head}): "
                f"the history was rewritten{restarted}",
                "restore the ledger from a verified export; " + _SIGN_AGAIN,
            )
        ]
    return []
