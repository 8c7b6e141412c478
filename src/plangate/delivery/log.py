"""The delivery record: ``<task_dir>/delivery/record.jsonl``, append-only and tamper-evident.

One JSON object per line, in RFC 8785 canonical form, each line ending in
``\\n``. Every row carries:

- ``prev``: the ``entry_id`` of the row before it (``null`` for the first row),
  so rows cannot be reordered, dropped from the middle or inserted silently;
- ``at``: the injected time of the assessment (``--now``), never the clock;
- ``entry_id``: ``sha256:`` digest of the canonical row without ``entry_id``.

:func:`parse_record_bytes` (pure) refuses a corrupt line, a missing or
recomputed-differently ``entry_id`` (tamper), a broken ``prev`` chain and any
known-kind row that violates its shape. Rows of unknown kinds are kept (and
counted) so that RunEvidence can report them as anomalies; delivery ignores
them. :func:`append_entries` is the only writer: under an exclusive lock it
re-reads the file, refuses if the bytes changed since they were judged, and
atomically writes the old bytes plus the new rows; rows are never rewritten.
Idempotency lives in the machine: assessing the same snapshot twice yields no
new rows, so nothing is appended.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.canonical import (
    StrictJSONError,
    canonical_text,
    digest,
    is_digest,
    strict_loads_object,
)
from plangate.delivery.machine import ACTION_KINDS, EXITS, STATES, action_id
from plangate.errors import InputRejected
from plangate.fsutil import (
    FileState,
    VerifiedDir,
    atomic_write_at,
    mkdir_at,
    open_verified_dir,
    read_at,
    read_regular_file,
    repo_lock,
)
from plangate.layout import MAX_DELIVERY_RECORD_BYTES as MAX_RECORD_BYTES
from plangate.layout import WORKING_DIR
from plangate.shapes import is_full_sha

RECORD_RELPATH = "delivery/record.jsonl"
"""Where the delivery record lives inside a task directory."""

LOCK_DIR = Path(".plangate") / "locks"
"""Lock files live with PlanGate's other runtime locks (ignored by git and the hooks)."""
ISO_Z_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
KNOWN_KINDS = ("state", "intent", "receipt", "merge_ready")
CHAIN_KEYS = ("prev", "at", "entry_id")

_KEYS: Mapping[str, frozenset[str]] = {
    "state": frozenset({"kind", "state", "pr_number", "head_sha", "reasons", *CHAIN_KEYS}),
    "intent": frozenset({"kind", "action_id", "action_kind", "payload", *CHAIN_KEYS}),
    "receipt": frozenset(
        {
            "kind",
            "action_id",
            "action_kind",
            "pr_number",
            "head_sha",
            "round",
            "result_ref",
            "finding_type",
            *CHAIN_KEYS,
        }
    ),
    "merge_ready": frozenset({"kind", "record", *CHAIN_KEYS}),
}
MERGE_READY_RECORD_KEYS = frozenset(
    {
        "pr_number",
        "head_sha",
        "check_summary",
        "review_disposition",
        "round",
        "plan_hash",
        "plan_package_hash",
        "source_sha",
    }
)


class DeliveryRecordError(InputRejected):
    """The delivery record is corrupt or tampered; nothing is decided from it."""


@dataclass(frozen=True)
class DeliveryLog:
    """The delivery record read once: exact bytes and the validated entries."""

    raw: bytes
    entries: tuple[dict[str, Any], ...]
    exists: bool

    @property
    def last_entry_id(self) -> str | None:
        """``entry_id`` of the last row (the next row's ``prev``)."""
        return self.entries[-1]["entry_id"] if self.entries else None

    def unknown_kinds(self) -> list[str]:
        """Kinds of rows delivery does not know, in record order."""
        return [e["kind"] for e in self.entries if e["kind"] not in KNOWN_KINDS]


def entry_id_of(row: Mapping[str, Any]) -> str:
    """Digest of a row without its ``entry_id`` (the row's identity)."""
    return digest({k: v for k, v in row.items() if k != "entry_id"})


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shape_problems(row: Mapping[str, Any]) -> list[str]:
    """Problems of a known-kind row's shape (rows of unknown kinds are kept as they are)."""
    kind = row["kind"]
    allowed = _KEYS.get(kind)
    if allowed is None:
        return []
    problems = []
    extra = sorted(set(row) - allowed)
    if extra:
        problems.append(f"unknown key(s) {extra}")
    required = allowed - ({"finding_type"} if kind == "receipt" else set())
    missing = sorted(required - set(row))
    if missing:
        return [*problems, f"missing key(s) {missing}"]
    return [*problems, *_KIND_SHAPES[kind](row)]


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _full_sha(value: object) -> bool:
    return isinstance(value, str) and is_full_sha(value)


def _state_shape(row: Mapping[str, Any]) -> list[str]:
    problems = []
    if row["state"] not in (*STATES, *EXITS):
        problems.append(f"unknown state {row['state']!r}")
    if not _positive(row["pr_number"]):
        problems.append("pr_number is not a positive integer")
    if not _full_sha(row["head_sha"]):
        problems.append("head_sha is not a full commit id")
    reasons = row["reasons"]
    if not isinstance(reasons, list) or not all(
        isinstance(r, dict)
        and set(r) == {"code", "message"}
        and all(isinstance(v, str) for v in r.values())
        for r in reasons
    ):
        problems.append("reasons must be a list of {code, message}")
    return problems


def _intent_shape(row: Mapping[str, Any]) -> list[str]:
    problems = []
    if row["action_kind"] not in ACTION_KINDS:
        problems.append(f"unknown action_kind {row['action_kind']!r}")
    if not isinstance(row["payload"], dict):
        problems.append("payload is not an object")
    elif row["action_id"] != action_id(str(row["action_kind"]), row["payload"]):
        problems.append("action_id does not match the digest of the payload (tampered)")
    return problems


def _receipt_shape(row: Mapping[str, Any]) -> list[str]:
    problems = []
    if row["action_kind"] not in ACTION_KINDS:
        problems.append(f"unknown action_kind {row['action_kind']!r}")
    if not is_digest(row["action_id"]):
        problems.append("action_id is not a sha256 digest")
    if not _positive(row["pr_number"]):
        problems.append("pr_number is not a positive integer")
    if not isinstance(row["head_sha"], str):
        problems.append("head_sha is not a string")
    if row["round"] is not None and not (_int(row["round"]) and row["round"] >= 0):
        problems.append("round is neither null nor a non-negative integer")
    if not (isinstance(row["result_ref"], str) and row["result_ref"]):
        problems.append("result_ref is empty")
    if "finding_type" in row and not isinstance(row["finding_type"], str):
        problems.append("finding_type is not a string")
    return problems


def _merge_ready_shape(row: Mapping[str, Any]) -> list[str]:
    record = row["record"]
    if not isinstance(record, dict) or set(record) != MERGE_READY_RECORD_KEYS:
        return [f"record must have exactly the keys {sorted(MERGE_READY_RECORD_KEYS)}"]
    problems = []
    if not _positive(record["pr_number"]):
        problems.append("record.pr_number is not a positive integer")
    if not _full_sha(record["head_sha"]):
        problems.append("record.head_sha is not a full commit id")
    if not (_int(record["round"]) and record["round"] >= 0):
        problems.append("record.round is not a non-negative integer")
    summary = record["check_summary"]
    if (
        not isinstance(summary, dict)
        or not summary
        or not all(isinstance(v, str) for v in summary.values())
    ):
        problems.append("record.check_summary must be a non-empty name -> conclusion map")
    if not isinstance(record["review_disposition"], dict):
        problems.append("record.review_disposition is not an object")
    for key in ("plan_hash", "plan_package_hash"):
        if not is_digest(record[key]):
            problems.append(f"record.{key} is not a sha256 digest")
    if not isinstance(record["source_sha"], str):
        problems.append("record.source_sha is not a string")
    return problems


_KIND_SHAPES: Mapping[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "state": _state_shape,
    "intent": _intent_shape,
    "receipt": _receipt_shape,
    "merge_ready": _merge_ready_shape,
}
"""The shape rule of each known row kind."""


def parse_record_bytes(data: bytes) -> tuple[dict[str, Any], ...]:
    """Validate the record's bytes and return its rows, oldest first; pure.

    Raises :class:`DeliveryRecordError` with ``DELIVERY_RECORD_CORRUPT``,
    ``DELIVERY_RECORD_TAMPERED`` or ``DELIVERY_RECORD_CHAIN_BROKEN``.
    """
    if not data:
        return ()
    if not data.endswith(b"\n"):
        raise DeliveryRecordError(
            "DELIVERY_RECORD_CORRUPT",
            "the delivery record does not end with a newline (truncated or hand-edited)",
            "restore record.jsonl from version control; it is append-only",
        )
    rows: list[dict[str, Any]] = []
    prev: str | None = None
    for number, line in enumerate(data[:-1].split(b"\n"), start=1):
        try:
            row = strict_loads_object(line, f"record.jsonl line {number}")
        except StrictJSONError as exc:
            raise DeliveryRecordError(
                "DELIVERY_RECORD_CORRUPT",
                f"record.jsonl line {number} is not a JSON object ({exc.code}: {exc.message})",
                "restore record.jsonl from version control; it is append-only",
            ) from None
        missing = [k for k in ("kind", *CHAIN_KEYS) if k not in row]
        if missing:
            raise DeliveryRecordError(
                "DELIVERY_RECORD_CORRUPT",
                f"record.jsonl line {number} lacks {', '.join(missing)}",
                "rows are written only by plangate delivery; restore the file",
            )
        if not isinstance(row["kind"], str) or not row["kind"]:
            raise DeliveryRecordError(
                "DELIVERY_RECORD_CORRUPT",
                f"record.jsonl line {number}: kind is not a string",
                "restore the file",
            )
        if not is_digest(row["entry_id"]) or row["entry_id"] != entry_id_of(row):
            raise DeliveryRecordError(
                "DELIVERY_RECORD_TAMPERED",
                f"record.jsonl line {number}: entry_id does not match the row's content",
                "the record was edited after it was written; restore it from version control",
            )
        if row["prev"] != prev:
            raise DeliveryRecordError(
                "DELIVERY_RECORD_CHAIN_BROKEN",
                f"record.jsonl line {number}: prev does not name the row before it "
                "(rows were removed, reordered or inserted)",
                "restore record.jsonl from version control",
            )
        if not (isinstance(row["at"], str) and ISO_Z_RE.fullmatch(row["at"])):
            raise DeliveryRecordError(
                "DELIVERY_RECORD_CORRUPT",
                f"record.jsonl line {number}: at is not YYYY-MM-DDTHH:MM:SSZ",
                "restore the file",
            )
        problems = _shape_problems(row)
        if problems:
            raise DeliveryRecordError(
                "DELIVERY_RECORD_CORRUPT",
                f"record.jsonl line {number} ({row['kind']}): {'; '.join(problems)}",
                "restore record.jsonl from version control",
            )
        rows.append(row)
        prev = row["entry_id"]
    return tuple(rows)


def seal_entries(
    bodies: Sequence[Mapping[str, Any]], *, prev: str | None, at: str
) -> list[dict[str, Any]]:
    """Chain new entry bodies after ``prev`` at time ``at`` and give each its ``entry_id``."""
    if not ISO_Z_RE.fullmatch(at):
        raise InputRejected(
            "DELIVERY_TIME_INVALID", f"time {at!r} is not YYYY-MM-DDTHH:MM:SSZ", "pass --now in UTC"
        )
    rows = []
    for body in bodies:
        row = {**body, "prev": prev, "at": at}
        row["entry_id"] = entry_id_of(row)
        rows.append(row)
        prev = row["entry_id"]
    return rows


def rows_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """Serialised rows: canonical JSON, one per line."""
    return "".join(canonical_text(dict(r)) + "\n" for r in rows).encode("utf-8")


def check_delivery_dir(task_dir: Path) -> None:
    """``delivery/`` must be absent or a real directory (never a symlink or a file).

    A regular file in its place used to read as "no record" and then crash the
    append after the ledger write.
    """
    where = task_dir / "delivery"
    if where.is_symlink():
        raise DeliveryRecordError(
            "DELIVERY_RECORD_UNREADABLE",
            "delivery/ is a symbolic link",
            "replace it with a directory",
        )
    if where.exists() and not where.is_dir():
        raise DeliveryRecordError(
            "DELIVERY_RECORD_UNREADABLE",
            "delivery/ is not a directory",
            "remove the file; delivery/ holds the record written by plangate delivery",
        )


def read_log(task_dir: Path) -> DeliveryLog:
    """Read and validate ``<task_dir>/delivery/record.jsonl`` (absent = empty record)."""
    path = task_dir / RECORD_RELPATH
    check_delivery_dir(task_dir)
    read = read_regular_file(path, MAX_RECORD_BYTES)
    if read.state is FileState.MISSING:
        return DeliveryLog(b"", (), False)
    if not read.ok or read.data is None:
        raise DeliveryRecordError(
            "DELIVERY_RECORD_UNREADABLE",
            f"{RECORD_RELPATH} {read.detail}",
            "the record must be a regular file written by plangate delivery",
        )
    return DeliveryLog(read.data, parse_record_bytes(read.data), True)


def record_lock(repo_root: Path, task_dir: Path) -> Any:
    """Exclusive lock serialising every reader-then-writer of one task's record.

    The lock file is ``<repo>/.plangate/locks/delivery-<TASK>.lock``, not inside the
    task directory, so it never shows up as a change of the task.
    """
    check_delivery_dir(task_dir)
    return repo_lock(repo_root, LOCK_DIR.as_posix(), f"delivery-{task_dir.name}.lock", wait=True)


def _open_task(task_dir: Path) -> VerifiedDir:
    """``task_dir`` opened from its repository root (``docs/working/<task>``) with no link
    followed; a directory outside that layout is opened as its own root."""
    working = task_dir.parent
    if f"{working.parent.name}/{working.name}" == WORKING_DIR:
        return open_verified_dir(working.parent.parent, f"{WORKING_DIR}/{task_dir.name}")
    return open_verified_dir(task_dir)


def append_entries(task_dir: Path, judged: DeliveryLog, rows: Sequence[Mapping[str, Any]]) -> None:
    """Append sealed ``rows`` after the bytes that were judged; refuse if they changed.

    The caller holds :func:`record_lock`. The write is atomic (old bytes plus
    the new rows, renamed into place), so a crash never leaves a torn line.
    """
    if not rows:
        return
    if rows[0].get("prev") != judged.last_entry_id:
        raise DeliveryRecordError(
            "DELIVERY_RECORD_CHAIN_BROKEN", "new rows do not continue the record", "re-run"
        )
    # The task directory and delivery/ are opened from the repository root with
    # no link followed; the bytes compared and the bytes replaced are the ones
    # in that verified directory.
    directory, name = RECORD_RELPATH.split("/")
    with _open_task(task_dir) as task, mkdir_at(task, directory) as delivery:
        current = read_at(delivery, name, MAX_RECORD_BYTES)
        current_raw = b"" if current.state is FileState.MISSING else current.data
        if current_raw != judged.raw:
            raise DeliveryRecordError(
                "DELIVERY_RECORD_CHANGED",
                "record.jsonl changed while it was being assessed",
                "re-run the command",
            )
        atomic_write_at(delivery, name, judged.raw + rows_bytes(rows))


@dataclass(frozen=True)
class Anchor:
    """How the record's rows relate to the ledger's ``delivery_transition`` entries.

    ``anchored``: every row is in the ledger, in order. ``unanchored``: no row
    is and the ledger holds no row of the task (another machine's ledger), or
    the ledger was not readable. ``partially_anchored``: an older prefix is
    not, every later row is. ``mismatch``: a row after an anchored one is
    missing from the ledger, the order differs, or the ledger holds a row of
    the task that the record lacks: the record was edited, forged, truncated
    or deleted after the fact.
    """

    status: str
    detail: str = ""


def ledger_anchor(entries: Sequence[Mapping[str, Any]], ledger_ids: Sequence[str] | None) -> Anchor:
    """Compare the record's rows with the entry ids the ledger holds for the task (pure).

    Both directions count: a record row after an anchored one must be in the
    ledger, and every row the ledger holds for the task must still be in the
    record. Without the second rule, deleting, truncating or replacing
    record.jsonl would silently forget receipts (resetting the repair-round
    limit) and later states.
    """
    if ledger_ids is None:
        if not entries:
            return Anchor("anchored", "the record is empty")
        return Anchor("unanchored", "the ledger could not be read")
    record_ids = {e["entry_id"] for e in entries}
    lost = [entry_id for entry_id in ledger_ids if entry_id not in record_ids]
    if lost:
        return Anchor(
            "mismatch",
            f"the ledger holds {len(lost)} row(s) of the task that record.jsonl lacks "
            "(the record was deleted, truncated or replaced, or a write was interrupted)",
        )
    if not entries:
        return Anchor("anchored", "the record is empty")
    position = {entry_id: index for index, entry_id in enumerate(ledger_ids)}
    anchored = [e["entry_id"] in position for e in entries]
    if not any(anchored):
        return Anchor("unanchored", f"none of {len(entries)} rows is in this ledger")
    first = anchored.index(True)
    missing = [i + 1 for i in range(first, len(entries)) if not anchored[i]]
    if missing:
        return Anchor(
            "mismatch",
            f"row(s) {missing} follow ledger-anchored rows but are not in the ledger",
        )
    order = [position[e["entry_id"]] for e in entries[first:]]
    if order != sorted(order):
        return Anchor("mismatch", "rows are in a different order than in the ledger")
    if first:
        return Anchor("partially_anchored", f"the first {first} row(s) are not in this ledger")
    return Anchor("anchored", f"all {len(entries)} rows are in the ledger")
