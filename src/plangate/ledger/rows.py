"""The stored-row type of the ledger (imported lazily: see ``plangate.ledger.chain``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StoredRow:
    """A row exactly as a backend returned it: the payload is still canonical JSON text.

    Fields are typed loosely on purpose: verification must cope with whatever
    someone wrote into the database, not only with what PlanGate writes.
    """

    seq: Any
    kind: Any
    subject: Any
    payload_text: Any
    at: Any
    prev_hash: Any
    entry_hash: Any
