"""Signed review statements: who reviewed which plan, with which verdict (pure).

``plangate review mark --sign KEY`` writes, beside the marker, the statement
``approvals/review-c1.json`` (or ``review-c2.json``) as canonical JSON and its
signature ``approvals/review-c1.json.sig`` (namespace ``plangate-review``)::

    {"evidence_file": "review-self.md", "evidence_sha256": "sha256:...",
     "kind": "plangate-review-statement", "plan_hash": "sha256:...",
     "principal": "alice@example.com", "review": "c1", "role": "reviewer",
     "task_id": "TASK-0001", "verdict": "PASS", "version": 1}

The statement binds the whole evidence file (marker line included) by its
digest, and the plan by ``plan_hash``; the principal it names must be the one
whose key signed it.
"""

from __future__ import annotations

from typing import Any

from plangate.canonical import StrictJSONError, canonical_bytes, is_digest, strict_loads
from plangate.records import NamedTuple

KIND = "plangate-review-statement"
REVIEWS = {"c1": ("review-self.md", "PASS"), "c2": ("review-external.md", "approve")}
"""Review -> (evidence file, the verdict that lets a task proceed)."""

KEYS = frozenset(
    {
        "kind",
        "version",
        "task_id",
        "review",
        "verdict",
        "plan_hash",
        "evidence_file",
        "evidence_sha256",
        "role",
        "principal",
    }
)
MAX_STATEMENT_BYTES = 16 * 1024


def statement_relpath(review: str) -> str:
    """The statement's path inside the task directory."""
    return f"approvals/review-{review}.json"


class Statement(NamedTuple):
    """A parsed review statement."""

    task_id: str
    review: str
    verdict: str
    plan_hash: str
    evidence_file: str
    evidence_sha256: str
    principal: str


def statement_bytes(statement: Statement) -> bytes:
    """The canonical bytes that are signed and written."""
    value: dict[str, Any] = dict(statement._asdict())
    value.update(kind=KIND, version=1, role="reviewer")
    return canonical_bytes(value) + b"\n"


def parse_statement(data: bytes) -> Statement | str:
    """The statement, or why it is not one (a message)."""
    if len(data) > MAX_STATEMENT_BYTES:
        return f"larger than {MAX_STATEMENT_BYTES} bytes"
    try:
        value = strict_loads(data)
    except StrictJSONError as exc:
        return f"{exc.code}: {exc.message}"
    if not isinstance(value, dict) or value.keys() != KEYS:
        return f"must hold exactly the keys {', '.join(sorted(KEYS))}"
    if value["kind"] != KIND or value["version"] != 1 or value["role"] != "reviewer":
        return "kind, version or role is not a review statement's"
    review = value["review"]
    if review not in REVIEWS or value["evidence_file"] != REVIEWS[review][0]:
        return "review must be c1 (review-self.md) or c2 (review-external.md)"
    strings = ("task_id", "verdict", "plan_hash", "evidence_sha256", "principal")
    if not all(isinstance(value[k], str) and value[k] for k in strings):
        return "every field must be a non-empty string"
    if not (is_digest(value["plan_hash"]) and is_digest(value["evidence_sha256"])):
        return "plan_hash and evidence_sha256 must be sha256 digests"
    if statement_bytes(Statement(**{k: value[k] for k in Statement._fields})) != data:
        return "not in canonical form (written by 'plangate review mark --sign')"
    return Statement(**{k: value[k] for k in Statement._fields})
