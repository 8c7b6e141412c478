"""The box-local ledger of an isolated run: made before the box, imported after it.

Hooks that run inside ``plangate exec``'s box cannot see the repository's
ledger (it is hidden), so the run gets a ledger of its own:
``.plangate/runs/<run id>/box/`` holds an empty SQLite ledger and ``run.json``
(the run id, the task, the approved commit, the verified plan hash, the
backend). With bubblewrap the directory is shown writable at the fixed
:data:`plangate.isolation.contract.BOX_DIR`, ``run.json`` bound read-only.

After the box ends, outside it, :func:`import_box_ledger` reads the box ledger
as untrusted input (:func:`plangate.ledger.foreign.read_foreign_sqlite`) and
writes to the repository's ledger:

- one ``exec_box_entry`` per entry of an intact box ledger: the entry as the
  box reported it, tied to the run id, ``reported_from: "exec_box"`` (an
  observation, not authority: the boundary is the diff exec judges);
- then one ``exec_box_ledger`` entry (unless the box ledger is intact and
  empty: no hook ran, nothing to say beyond ``exec_result``): the status (``INTACT``, ``MISSING``,
  ``OVERSIZED``, ``MALFORMED``, ``TAMPERED``, or ``IMPORT_FAILED`` when the
  repository's ledger refused the import), why, the file's digest and size,
  and how many entries were imported. A box ledger that is not intact, or
  holds anything but hook decisions, is recorded as such and nothing of it
  is imported.

Nothing here raises: the import never stops exec from recording its own result.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.errors import EnvironmentFailure, PlanGateError

BOX_DIR_NAME = "box"
"""The run's box directory inside ``.plangate/runs/<run id>/``."""

BOX_ENTRY_KIND = "exec_box_entry"
BOX_LEDGER_KIND = "exec_box_ledger"
REPORTED_FROM = "exec_box"
BOX_ENTRY_KINDS = frozenset({"hook_decision"})
"""The only kinds a box ledger may hold (what the hooks record)."""

MAX_BOX_LEDGER_BYTES = 32 * 1024 * 1024
MAX_BOX_ENTRIES = 10000
IMPORT_FAILED = "IMPORT_FAILED"


def prepare_box_dir(
    run_dir: Path, *, run_id: str, task_id: str, approved: str, plan_hash: str, backend: str
) -> Path:
    """Make ``run_dir/box`` with an empty box ledger and ``run.json``; return its path."""
    from plangate.canonical import canonical_bytes
    from plangate.fsutil import atomic_write_at, open_verified_dir
    from plangate.isolation.contract import BOX_FACTS_NAME, BOX_LEDGER_NAME
    from plangate.ledger.sqlite import create_file

    facts = {
        "run_id": run_id,
        "task_id": task_id,
        "approved": approved,
        "plan_hash": plan_hash,
        "backend": backend,
    }
    try:
        with open_verified_dir(run_dir, BOX_DIR_NAME, create=True, mode=0o700) as box:
            # Both live as long as the run (read back before its directory goes): no fsync.
            create_file(box, BOX_LEDGER_NAME, durable=False)
            atomic_write_at(
                box, BOX_FACTS_NAME, canonical_bytes(facts) + b"\n", mode=0o444, durable=False
            )
    except PlanGateError as exc:
        raise EnvironmentFailure(
            "EXEC_WORKSPACE_FAILED",
            f"cannot prepare the run's box directory: {exc.message}",
            exc.hint or "make .plangate/runs writable",
        ) from None
    return run_dir / BOX_DIR_NAME


def _entry_payload(entry: Any, run_id: str, task_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "task_id": task_id,
        "reported_from": REPORTED_FROM,
        "box_seq": entry.seq,
        "box_kind": entry.kind,
        "box_subject": entry.subject,
        "box_at": entry.at,
        "box_entry_hash": entry.entry_hash,
        "entry": dict(entry.payload),
    }


def box_payloads(
    entries: tuple[Any, ...], run_id: str, task_id: str
) -> tuple[list[dict[str, Any]], str]:
    """The payloads to import, or ``([], why not)`` when one entry cannot be imported."""
    from plangate.ledger.chain import LedgerError, prepare_payload

    out: list[dict[str, Any]] = []
    for entry in entries:
        if entry.kind not in BOX_ENTRY_KINDS:
            return [], f"entry {entry.seq} is a {entry.kind!r}; a box ledger holds hook decisions"
        payload = _entry_payload(entry, run_id, task_id)
        try:
            prepare_payload(payload)
        except LedgerError as exc:
            return [], f"entry {entry.seq}: {exc.code}: {exc.message}"
        out.append(payload)
    return out, ""


def pristine_digest(box_dir: Path) -> str:
    """The digest of the box ledger as :func:`prepare_box_dir` made it (taken before the
    box runs; ``""`` when it cannot be read): the import knows an untouched one by it."""
    from plangate.canonical import sha256_digest
    from plangate.fsutil import read_regular_file
    from plangate.isolation.contract import BOX_LEDGER_NAME

    read = read_regular_file(box_dir / BOX_LEDGER_NAME, MAX_BOX_LEDGER_BYTES)
    if not read.ok or read.data is None or (box_dir / f"{BOX_LEDGER_NAME}-wal").exists():
        return ""
    return sha256_digest(read.data)


def import_box_ledger(
    root: Path,
    env: Mapping[str, str],
    box_dir: Path,
    *,
    run_id: str,
    task_id: str,
    pristine: str = "",
) -> dict[str, Any]:
    """Import the box ledger into the repository's ledger; return the recorded summary.

    ``pristine`` is :func:`pristine_digest` taken before the run (no hook wrote: the
    file is not opened)."""
    from plangate.isolation.contract import BOX_LEDGER_NAME
    from plangate.ledger.foreign import INTACT, MALFORMED, read_foreign_sqlite

    summary: dict[str, Any] = {
        "run_id": run_id,
        "task_id": task_id,
        "reported_from": REPORTED_FROM,
        "imported": 0,
    }
    payloads: list[dict[str, Any]] = []
    try:
        read = read_foreign_sqlite(
            box_dir, BOX_LEDGER_NAME, max_bytes=MAX_BOX_LEDGER_BYTES, max_entries=MAX_BOX_ENTRIES,
            pristine=pristine,
        )
        status, detail = read.status, read.detail
        if status == INTACT:
            payloads, why = box_payloads(read.entries, run_id, task_id)
            if why:
                status, detail = MALFORMED, why
        summary.update({"status": status, "detail": detail[:500], "digest": read.digest,
                        "bytes": read.size})
    except Exception as exc:  # noqa: BLE001 -- untrusted input: any failure is recorded, never raised
        summary.update({"status": MALFORMED, "detail": f"unreadable: {type(exc).__name__}"})
    if summary.get("status") == INTACT and not payloads:
        summary["recorded"] = True  # nothing to import; exec_result carries the status
        return summary
    return _write(root, env, summary, payloads, task_id)


def _write(
    root: Path,
    env: Mapping[str, str],
    summary: dict[str, Any],
    payloads: list[dict[str, Any]],
    task_id: str,
) -> dict[str, Any]:
    from plangate.ledger import open_ledger

    try:
        with open_ledger(root, env) as ledger:
            try:
                for payload in payloads:
                    ledger.append(BOX_ENTRY_KIND, task_id, payload)
                    summary["imported"] += 1
            except PlanGateError as exc:
                summary.update({"status": IMPORT_FAILED, "detail": f"{exc.code}: {exc.message}"})
            ledger.append(BOX_LEDGER_KIND, task_id, summary)
        summary["recorded"] = True
    except Exception as exc:  # noqa: BLE001 -- exec still records its own result
        summary["recorded"] = False
        summary.setdefault("error", getattr(exc, "code", type(exc).__name__))
    return summary
