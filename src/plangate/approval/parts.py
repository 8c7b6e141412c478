"""A task's approval parts: which files under ``approvals/`` belong to a task's approval (pure).

A task's approval is more than its record. Under ``docs/working/TASK-XXXX/approvals/``:

- ``c3.json``, the record, and ``c3.json.sig``, the approver's signature;
- ``review-c1.json``, ``review-c2.json``, the reviewers' signed statements, and their
  ``.sig`` files;
- ``continuation.json`` and its ``.sig``: an approver's continuation
  (:func:`continuation_verdicts`; ``ci check`` also judges the starting point it names).

No agent ever writes them (every hook denies a tool call that would). The post-hoc
checks (PostToolUse, Stop, the git hooks, ``ci check``) do not count a part as a
change when it verifies for **its own** task, by one of two routes:

1. :func:`verified_parts`: the task's record verifies (the acceptor, at HEAD or at the
   pull request's head): the record and the artifacts it covers; and when the trust
   root requires signatures, the acceptor verified the signature and both statements
   too, so they are parts.
2. one statement at a time (:func:`statement_verdicts`, :func:`continuation_verdicts`),
   for example before any record exists (the plan commit). A review statement is a
   part when it is a well-formed statement of this task and this review, binds the
   task's current plan (``plan_hash``), and its signature verifies for a reviewer under
   the trust root in force and names the principal the statement names. A record's
   signature is a part when it verifies for an approver over the record's bytes. The
   hooks take this route; ``ci check`` judges the signatures through the acceptor.

A part that verifies by neither route stays what it was: an approval file nobody may
change (the hooks' ``HOOK_APPROVAL_FILE``, a protected surface), with the reason it
did not verify (``HOOK_APPROVAL_PART_UNVERIFIED``): a forged signature, a statement of
another task or another plan, a file with no trust root to verify it against.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from plangate.authority.approval import ReviewFacts
from plangate.authority.continuation import ContinuationFacts, Expected, continuation_reasons
from plangate.authority.statement import REVIEWS, statement_relpath
from plangate.layout import RECORD_RELPATH, WORKING_DIR
from plangate.verdict import Reason

SIG_SUFFIX = ".sig"
RECORD_SIG_RELPATH = RECORD_RELPATH + SIG_SUFFIX
STATEMENT_RELPATHS = tuple(statement_relpath(review) for review in REVIEWS)
SIGNED_RELPATHS: tuple[str, ...] = (
    RECORD_SIG_RELPATH,
    *(rel + suffix for rel in STATEMENT_RELPATHS for suffix in ("", SIG_SUFFIX)),
)
"""The signature and statement files the acceptor verifies when signatures are required."""
CONTINUATION_RELPATHS = ("approvals/continuation.json", "approvals/continuation.json.sig")
"""A task's continuation statement (judged by ``ci check``'s ``approvals_fresh``)."""
PART_RELPATHS: tuple[str, ...] = (RECORD_RELPATH, *SIGNED_RELPATHS, *CONTINUATION_RELPATHS)
"""Every approval part, inside a task directory."""

_PART_RE = re.compile(
    re.escape(WORKING_DIR) + r"/(TASK-[0-9]{4})/("
    + "|".join(re.escape(rel) for rel in PART_RELPATHS) + ")"
)

UNVERIFIED = "HOOK_APPROVAL_PART_UNVERIFIED"
_HINT = (
    "approval parts are written by 'plangate review mark --sign' and 'plangate c3 issue "
    "--sign' for their own task; re-run them, or remove the file"
)


def part_of(path: str) -> tuple[str, str] | None:
    """``(task_id, relpath)`` when ``path`` names an approval part of a task, else None."""
    match = _PART_RE.fullmatch(path)
    return None if match is None else (match.group(1), match.group(2))


def verified_parts(
    task_id: str, authority: object, artifacts: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """The files of ``task_id`` a verified record covers (route 1 above).

    Call it only for a record that verified; ``authority`` is the acceptor's
    ``authority`` fact (a mapping once signatures verified under a trust root that
    requires them), ``artifacts`` the artifact names its verification covers.
    """
    base = f"{WORKING_DIR}/{task_id}/"
    out = [base + RECORD_RELPATH, *(base + name for name in artifacts)]
    if isinstance(authority, Mapping):
        out += [base + rel for rel in SIGNED_RELPATHS]
    return tuple(out)


def continuation_parts(task_id: str) -> tuple[str, ...]:
    """The continuation statement of ``task_id`` and its signature (parts once it holds)."""
    return tuple(f"{WORKING_DIR}/{task_id}/{rel}" for rel in CONTINUATION_RELPATHS)


def continuation_verdicts(
    task_id: str, plan_hash: str | None, source_sha: str | None, facts: ContinuationFacts | None
) -> dict[str, Reason | None]:
    """Per path of ``task_id``'s continuation statement and signature: None when it is a
    part of the task's approval, else why not (route 2 for a continuation).

    It must be a continuation of this task, its current plan and its record's
    ``source_sha``, signed by the approver it names under the trust root in force. The
    starting point it names is ``ci check``'s to judge (a hook knows no pull request).
    """
    if facts is None or facts.statement is None:
        problem = "no trust root is in force to verify it against" if facts is None else (
            f"not a continuation statement ({facts.problem})")
    elif facts.signature is None:
        problem = "no trust root is in force to verify it against"
    elif source_sha is None:
        problem = f"{task_id} has no readable record to continue"
    else:
        expected = Expected(task_id, plan_hash, source_sha, facts.statement.base)
        problem = "; ".join(
            f"{r.code}: {r.message}" for r in continuation_reasons(facts, expected))
    verdict = None if not problem else Reason(
        UNVERIFIED, f"approvals/continuation.json is not a part of {task_id}'s approval: "
        + problem, _HINT)
    return dict.fromkeys(continuation_parts(task_id), verdict)


def _statement_problem(
    task_id: str, review: str, plan_hash: str | None, facts: ReviewFacts
) -> str:
    """Why the statement of ``review`` is not a part of ``task_id`` ('' when it is)."""
    st = facts.statement
    if st is None:
        return f"not a review statement ({facts.problem})"
    if st.task_id != task_id:
        return f"it is a statement of {st.task_id}, not of {task_id}"
    if st.review != review:
        return f"it is the statement of review {st.review}, not of {review}"
    if plan_hash is None:
        return f"the plan of {task_id} cannot be read"
    if st.plan_hash != plan_hash:
        return f"it binds another plan than {task_id}'s current plan.md"
    signature = facts.signature
    if signature is None:
        return "no trust root is in force to verify its signature against"
    if isinstance(signature, Reason):
        return f"its signature does not verify ({signature.code}: {signature.message})"
    if signature.principal != st.principal:
        return f"it names {st.principal} but {signature.principal} signed it"
    return ""


def statement_verdicts(
    task_id: str, plan_hash: str | None, statements: Mapping[str, ReviewFacts]
) -> dict[str, Reason | None]:
    """Per part path of ``task_id``'s review statements (route 2 above): None when the
    statement and its signature are parts of the task's approval, else why not.

    ``statements`` maps a review (``c1``, ``c2``) to what was read; ``plan_hash`` is the
    digest of the task's current ``plan.md`` (None: unreadable).
    """
    out: dict[str, Reason | None] = {}
    base = f"{WORKING_DIR}/{task_id}/"
    for review, facts in statements.items():
        rel = statement_relpath(review)
        problem = _statement_problem(task_id, review, plan_hash, facts)
        verdict = None if not problem else Reason(
            UNVERIFIED, f"{rel} is not a part of {task_id}'s approval: {problem}", _HINT
        )
        out[base + rel] = verdict
        out[base + rel + SIG_SUFFIX] = verdict
    return out


def unverified(path: str, why: str) -> Reason:
    """The reason an approval part at ``path`` is not accepted as part of its task."""
    return Reason(UNVERIFIED, f"{path} is not a part of its task's approval: {why}", _HINT)
