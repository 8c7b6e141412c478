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
whose key signed it. Version 2 (written since the scope is part of the
approval) adds ``scope_digest``, the digest of the scope derived from the plan
(:func:`plangate.plan.scope.scope_digest`); it must equal the record's. A
version 1 statement (no scope) still parses: its marker line, bound through the
evidence digest, carries the scope when ``review mark`` wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
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
KEYS_V2 = KEYS | {"scope_digest"}
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
    scope_digest: str | None = None  # version 2 only


def statement_bytes(statement: Statement) -> bytes:
    """The canonical bytes that are signed and written."""
    value: dict[str, Any] = dict(statement._asdict())
    if statement.scope_digest is None:
        del value["scope_digest"]
    value.update(kind=KIND, version=1 if statement.scope_digest is None else 2, role="reviewer")
    return canonical_bytes(value) + b"\n"


def parse_statement(data: bytes) -> Statement | str:
    """The statement, or why it is not one (a message)."""
    if len(data) > MAX_STATEMENT_BYTES:
        return f"larger than {MAX_STATEMENT_BYTES} bytes"
    try:
        value = strict_loads(data)
    except StrictJSONError as exc:
        return f"{exc.code}: {exc.message}"
    if not isinstance(value, dict) or value.keys() not in (KEYS, KEYS_V2):
        return (f"must hold exactly the keys {', '.join(sorted(KEYS))} (version 1) or those "
                "and scope_digest (version 2)")
    version = 2 if value.keys() == KEYS_V2 else 1
    if value["kind"] != KIND or value["version"] != version or value["role"] != "reviewer":
        return "kind, version or role is not a review statement's"
    if version == 2 and not is_digest(value["scope_digest"]):
        return "scope_digest must be a sha256 digest"
    review = value["review"]
    if review not in REVIEWS or value["evidence_file"] != REVIEWS[review][0]:
        return "review must be c1 (review-self.md) or c2 (review-external.md)"
    strings = ("task_id", "verdict", "plan_hash", "evidence_sha256", "principal")
    if not all(isinstance(value[k], str) and value[k] for k in strings):
        return "every field must be a non-empty string"
    if not (is_digest(value["plan_hash"]) and is_digest(value["evidence_sha256"])):
        return "plan_hash and evidence_sha256 must be sha256 digests"
    statement = Statement(
        task_id=value["task_id"], review=review, verdict=value["verdict"],
        plan_hash=value["plan_hash"], evidence_file=value["evidence_file"],
        evidence_sha256=value["evidence_sha256"], principal=value["principal"],
        scope_digest=value.get("scope_digest"),
    )  # fmt: skip
    if statement_bytes(statement) != data:
        return "not in canonical form (written by 'plangate review mark --sign')"
    return statement


def one_version_bytes(fields: Mapping[str, str], kind: str) -> bytes:
    """The canonical bytes of a version 1 statement of ``kind`` holding ``fields``: what is
    signed and written (the opt-out and continuation statements)."""
    value: dict[str, Any] = dict(fields)
    value.update(kind=kind, version=1)
    return canonical_bytes(value) + b"\n"


def read_one_version(
    data: bytes, *, kind: str, fields: tuple[str, ...], max_bytes: int, what: str
) -> dict[str, str] | str:
    """The non-empty text ``fields`` of a version 1 statement of ``kind``, or why ``data``
    is not one (a message): too large, not strict JSON, other keys, another kind or
    version (``what`` names the statement in that message), or an empty or non-text field.
    The caller checks each field's form and that ``data`` is in canonical form."""
    if len(data) > max_bytes:
        return f"larger than {max_bytes} bytes"
    try:
        value = strict_loads(data)
    except StrictJSONError as exc:
        return f"{exc.code}: {exc.message}"
    keys = frozenset({"kind", "version", *fields})
    if not isinstance(value, dict) or value.keys() != keys:
        return f"must hold exactly the keys {', '.join(sorted(keys))}"
    if value["kind"] != kind or value["version"] != 1:
        return f"kind or version is not {what}"
    if not all(isinstance(value[k], str) and value[k] for k in fields):
        return "every field must be a non-empty string"
    return {k: value[k] for k in fields}
