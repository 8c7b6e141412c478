"""RunEvidence at the IO edge: read the task once, run the acceptor, call the pure core.

The task directory is read once (:func:`plangate.snapshot.read_task_snapshot`)
and the acceptor runs on that same snapshot, so the record checks of the
producer and the acceptor judge identical bytes. The delivery record is read
with the same defensive reader. Nothing here reads the clock: the CLI injects
``--now``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from plangate.delivery.log import RECORD_RELPATH as DELIVERY_RELPATH
from plangate.delivery.log import check_delivery_dir
from plangate.errors import InputRejected
from plangate.evidence.producer import EvidenceOutcome, Injected, TaskInputs, produce
from plangate.evidence.verifier import verify_document
from plangate.fsutil import FileState, read_regular_file
from plangate.layout import MAX_DELIVERY_RECORD_BYTES as MAX_DELIVERY_BYTES
from plangate.layout import RECORD_RELPATH, WORKING_DIR
from plangate.snapshot import ARTIFACTS, check_task_id, read_task_snapshot, task_dir_for
from plangate.verdict import Result


def load_inputs(repo_root: Path, task_id: str, env: Mapping[str, str]) -> TaskInputs:
    """Read the task, its record and its delivery log once; run the acceptor on them."""
    from plangate.approval.service import verify_task

    check_task_id(task_id)
    task_dir = task_dir_for(repo_root, task_id)
    snapshot = read_task_snapshot(task_dir)
    acceptor = verify_task(repo_root, task_id, snapshot=snapshot)
    check_delivery_dir(task_dir)
    read = read_regular_file(task_dir / DELIVERY_RELPATH, MAX_DELIVERY_BYTES)
    if read.state is FileState.MISSING:
        delivery = None
    elif read.ok and read.data is not None:
        delivery = read.data
    else:
        raise InputRejected(
            "DELIVERY_RECORD_UNREADABLE",
            f"{DELIVERY_RELPATH} {read.detail}",
            "the record must be a regular file written by plangate delivery",
        )
    from plangate.delivery.service import ledger_entry_ids

    # Read even when record.jsonl is absent: a deleted record whose rows the ledger
    # still holds is a mismatch, not an empty run.
    ledger_ids = ledger_entry_ids(repo_root, task_id, env)
    base = f"{WORKING_DIR}/{task_id}"
    return TaskInputs(
        task_id=task_id,
        record_bytes=snapshot.record.data if snapshot.record.ok else None,
        artifacts={name: snapshot.artifact(name) for name in ARTIFACTS},
        acceptor=acceptor,
        delivery_bytes=delivery,
        c3_path=f"{base}/{RECORD_RELPATH}",
        delivery_path=f"{base}/{DELIVERY_RELPATH}",
        ledger_entry_ids=tuple(ledger_ids) if ledger_ids is not None else None,
    )


def produce_evidence(
    repo_root: Path, task_id: str, injected: Injected, env: Mapping[str, str]
) -> EvidenceOutcome:
    """``plangate evidence produce``: the EV document for one run, or a refusal."""
    return produce(load_inputs(repo_root, task_id, env), injected)


def verify_evidence(
    repo_root: Path, task_id: str, ev_bytes: bytes, env: Mapping[str, str]
) -> Result:
    """``plangate evidence verify``: COMPLETE (0), PARTIAL (4) or REJECTED (1)."""
    return verify_document(ev_bytes, load_inputs(repo_root, task_id, env))
