"""Continuation statements: an approver lets a pull request use a task approved before it (pure).

Where the base's trust root requires signatures, ``ci check`` refuses a pull
request that touches a task whose approval is already on the base
(``CI_APPROVAL_NOT_FRESH``): a merged task cannot lend its scope to new
changes. A team that does mean to continue such a task says so with a
statement an agent cannot write alone: ``approvals/continuation.json``,
canonical JSON, and its signature ``approvals/continuation.json.sig``
(namespace ``plangate-continue``) by a principal holding ``approver``::

    {"base": "<merge base, 40 hex>", "kind": "plangate-continuation",
     "plan_hash": "sha256:...", "principal": "carol@example.com",
     "source_sha": "<the approval's source_sha, 40 hex>", "task_id": "TASK-0001",
     "version": 1}

It binds the task, its approved plan, the approval it continues (the record's
``source_sha``) and the commit the pull request starts from (the merge base of
base and head): a statement made for one starting point never counts for
another, and a plan changed since is not continued.

:func:`continuation_reasons` decides, over the parsed statement, its
signature's check and the pull request's facts, whether it holds.
"""

from __future__ import annotations

import re

from plangate.authority.statement import one_version_bytes, read_one_version
from plangate.authority.verify import Verified
from plangate.canonical import is_digest
from plangate.records import NamedTuple
from plangate.verdict import Reason

KIND = "plangate-continuation"
RELPATH = "approvals/continuation.json"
SIG_RELPATH = RELPATH + ".sig"
MAX_CONTINUATION_BYTES = 16 * 1024
_SHA_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_FIELDS = ("task_id", "plan_hash", "source_sha", "base", "principal")
KEYS = frozenset({"kind", "version", *_FIELDS})
_SIGN = "an approver signs a new one: plangate trust continue TASK --base REF --sign KEY"


class Continuation(NamedTuple):
    """A parsed continuation statement."""

    task_id: str
    plan_hash: str
    source_sha: str
    base: str
    principal: str


def continuation_bytes(statement: Continuation) -> bytes:
    """The canonical bytes that are signed and written."""
    return one_version_bytes(statement._asdict(), KIND)


def parse_continuation(data: bytes) -> Continuation | str:
    """The statement, or why it is not one (a message)."""
    value = read_one_version(data, kind=KIND, fields=_FIELDS,
                             max_bytes=MAX_CONTINUATION_BYTES, what="a continuation statement's")
    if isinstance(value, str):
        return value
    if not is_digest(value["plan_hash"]):
        return "plan_hash must be a sha256 digest"
    if not (_SHA_RE.fullmatch(value["source_sha"]) and _SHA_RE.fullmatch(value["base"])):
        return "source_sha and base must be full commit ids"
    statement = Continuation(*(value[k] for k in _FIELDS))
    if continuation_bytes(statement) != data:
        return "not in canonical form (written by 'plangate trust continue')"
    return statement


class ContinuationFacts(NamedTuple):
    """One task's continuation as read: the statement (or why not) and its signature's check."""

    statement: Continuation | None
    problem: str
    signature: Verified | Reason | None


class Expected(NamedTuple):
    """What a continuation must bind, from the pull request being judged."""

    task_id: str
    plan_hash: str | None
    source_sha: str
    base: str


def continuation_reasons(facts: ContinuationFacts, expected: Expected) -> list[Reason]:
    """Why the continuation does not hold (empty: it holds). Every failure is listed."""
    where = f"{expected.task_id}/{RELPATH}"
    st = facts.statement
    if st is None:
        return [Reason("CONTINUATION_MALFORMED", f"{where}: {facts.problem}", _SIGN)]
    reasons: list[Reason] = []
    if isinstance(facts.signature, Reason):
        reasons.append(facts.signature)
    stale = [
        name
        for name, have, want in (
            ("task", st.task_id, expected.task_id),
            ("plan", st.plan_hash, expected.plan_hash),
            ("approval (source_sha)", st.source_sha, expected.source_sha),
            ("starting point (merge base)", st.base, expected.base),
        )
        if have != want
    ]
    if stale:
        reasons.append(
            Reason(
                "CONTINUATION_STALE",
                f"{where} names another {', '.join(stale)} than this pull request's "
                f"(merge base {expected.base[:12]})",
                _SIGN,
            )
        )
    signer = facts.signature
    if isinstance(signer, Verified) and signer.principal != st.principal:
        reasons.append(
            Reason(
                "CONTINUATION_PRINCIPAL_MISMATCH",
                f"{where} names {st.principal} but {signer.principal} signed it",
                "the approver signs their own statement",
            )
        )
    return reasons
