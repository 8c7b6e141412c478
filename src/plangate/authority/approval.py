"""Authority of one approval: the facts (gathered with git and ssh-keygen) and the rules (pure).

Applies when the trust root in force requires signatures. :func:`gather`
reads, for one task snapshot: the record's signature
(``approvals/c3.json.sig``) checked over the snapshot's exact record bytes for
the ``approver`` role; both review statements (``approvals/review-c1.json``,
``review-c2.json``) and their signatures for the ``reviewer`` role; and the
record's binding to git: the task directory's blobs at ``source_sha``, each
reviewer's ``evidence_ref`` (``path#sha256:<hex>``) at ``source_sha``, and
whether ``source_sha`` is an ancestor of the head being judged.

:data:`AUTHORITY_RULES` decide over those facts; every failing rule is
reported. The acceptor runs them as one of its record rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from plangate.authority.root import NAMESPACE_C3, NAMESPACE_REVIEW, TrustRoot
from plangate.authority.statement import (
    MAX_STATEMENT_BYTES,
    REVIEWS,
    Statement,
    parse_statement,
    statement_relpath,
)
from plangate.authority.verify import CryptoCheck, SignatureCase, Verified, check_signature
from plangate.canonical import sha256_digest
from plangate.fsutil import read_regular_file
from plangate.records import NamedTuple
from plangate.verdict import Reason

SIG_SUFFIX = ".sig"
RECORD_SIG_RELPATH = "approvals/c3.json.sig"
EVIDENCE_REF_RE = re.compile(r"([^#]+)#(sha256:[0-9a-f]{64})")
REISSUE = "re-run the reviews and issue a signed record ('--sign KEY')"


class ReviewFacts(NamedTuple):
    """One review statement: parsed (or why not) and its signature's check."""

    statement: Statement | None
    problem: str
    signature: Verified | Reason | None


class TreeFacts(NamedTuple):
    """The record's binding to git (None fields: not decidable, reported by other rules)."""

    source: str | None
    blob_digests: Mapping[str, str] | None
    evidence_refs: Mapping[str, str | None]
    ancestor: bool | None
    head: str | None


class ApprovalAuthority(NamedTuple):
    """Everything the authority rules read for one task."""

    root: TrustRoot
    record: Verified | Reason
    reviews: Mapping[str, ReviewFacts]
    tree: TreeFacts

    def summary(self) -> dict[str, Any]:
        """JSON facts: who signed what."""

        def who(check: Verified | Reason | None) -> str | None:
            return check.principal if isinstance(check, Verified) else None

        return {
            "trust_root": self.root.commit,
            "trust_root_digest": self.root.digest,
            "approved_by": who(self.record),
            "reviewed_by": {k: who(v.signature) for k, v in self.reviews.items()},
        }


class _Case(NamedTuple):
    auth: ApprovalAuthority
    record: Mapping[str, Any]
    task_id: str
    plan_hash: str | None
    artifact_digests: Mapping[str, str]


def _record_signature(case: _Case) -> list[Reason]:
    return [case.auth.record] if isinstance(case.auth.record, Reason) else []


def _review_signatures(case: _Case) -> list[Reason]:
    reasons: list[Reason] = []
    for review, facts in case.auth.reviews.items():
        if facts.statement is None:
            code = (
                "REVIEW_STATEMENT_MISSING"
                if facts.problem == "missing"
                else ("REVIEW_STATEMENT_MALFORMED")
            )
            reasons.append(
                Reason(
                    code,
                    f"{statement_relpath(review)}: {facts.problem}",
                    "plangate review mark --sign KEY writes it",
                )
            )
        elif isinstance(facts.signature, Reason):
            reasons.append(facts.signature)
    return reasons


def _statements_current(case: _Case) -> list[Reason]:
    reasons: list[Reason] = []
    for review, facts in case.auth.reviews.items():
        st = facts.statement
        if st is None:
            continue
        filename, accepted = REVIEWS[review]
        stale = []
        if st.task_id != case.task_id:
            stale.append(f"task {st.task_id}")
        if case.plan_hash is not None and st.plan_hash != case.plan_hash:
            stale.append("plan_hash")
        if st.evidence_sha256 != case.artifact_digests.get(filename):
            stale.append(f"{filename} digest")
        if st.scope_digest is not None and st.scope_digest != case.record.get("scope_digest"):
            stale.append("scope_digest (the record approves another derived scope)")
        if stale:
            reasons.append(
                Reason(
                    "REVIEW_STATEMENT_STALE",
                    f"{statement_relpath(review)} binds another {', '.join(stale)}",
                    "the review must be marked and signed again",
                )
            )
        if st.verdict != accepted:
            reasons.append(
                Reason(
                    "REVIEW_VERDICT_NOT_ACCEPTED",
                    f"{statement_relpath(review)} records {st.verdict}",
                    f"only {accepted} lets the task proceed",
                )
            )
        signer = facts.signature
        if isinstance(signer, Verified) and signer.principal != st.principal:
            reasons.append(
                Reason(
                    "REVIEW_STATEMENT_PRINCIPAL_MISMATCH",
                    f"{statement_relpath(review)} names {st.principal} but "
                    f"{signer.principal} signed it",
                    "each reviewer signs their own statement",
                )
            )
    return reasons


def _distinct_reviewers(case: _Case) -> list[Reason]:
    signers = [
        f.signature.principal
        for f in case.auth.reviews.values()
        if isinstance(f.signature, Verified)
    ]
    if len(signers) == 2 and signers[0] == signers[1]:
        return [
            Reason(
                "C3_REVIEWERS_NOT_DISTINCT",
                f"both reviews are signed by {signers[0]}",
                "two different reviewers must each sign one review",
            )
        ]
    return []


def _approver_not_reviewer(case: _Case) -> list[Reason]:
    approver = case.auth.record
    if not isinstance(approver, Verified) or case.auth.root.config.approver_may_review:
        return []
    reviewers = {
        f.signature.principal
        for f in case.auth.reviews.values()
        if isinstance(f.signature, Verified)
    }
    if approver.principal in reviewers:
        return [
            Reason(
                "C3_APPROVER_IS_REVIEWER",
                f"{approver.principal} reviewed and approved the same work",
                "another approver signs the record",
            )
        ]
    return []


def _in_source_tree(case: _Case) -> list[Reason]:
    tree = case.auth.tree
    recorded = case.record.get("artifact_hashes")
    if tree.source is None or not isinstance(recorded, dict):
        return []
    blobs = tree.blob_digests or {}
    differing = sorted(name for name, value in recorded.items() if blobs.get(name) != value)
    if not differing:
        return []
    return [
        Reason(
            "C3_NOT_IN_SOURCE_TREE",
            f"at source_sha {tree.source[:12]} the task directory's "
            f"{', '.join(differing)} differ from the record (or are missing)",
            "commit the reviewed Plan Package, then issue the record for that commit",
        )
    ]


def _evidence_refs_in_tree(case: _Case) -> list[Reason]:
    tree = case.auth.tree
    return [
        Reason(
            "C3_EVIDENCE_REF_NOT_IN_TREE",
            f"reviewers.{model}.evidence_ref: {problem}",
            "cite path#sha256:<hex> of a file committed at source_sha",
        )
        for model, problem in tree.evidence_refs.items()
        if problem is not None
    ]


def _source_ancestor(case: _Case) -> list[Reason]:
    tree = case.auth.tree
    if tree.source is None or tree.ancestor is not False:
        return []
    return [
        Reason(
            "C3_SOURCE_NOT_ANCESTOR",
            f"source_sha {tree.source[:12]} is not an ancestor of the head judged "
            f"{(tree.head or '')[:12]}",
            "approve a commit on this branch's history",
        )
    ]


class AuthorityRule(NamedTuple):
    """One rule: documented text, codes, check."""

    text: str
    codes: tuple[str, ...]
    check: Callable[[_Case], list[Reason]]


AUTHORITY_RULES: tuple[AuthorityRule, ...] = (
    AuthorityRule(
        "the record's signature verifies for an approver",
        ("C3_SIGNATURE_*", "C3_SIGNER_*"),
        _record_signature,
    ),
    AuthorityRule(
        "both review statements are present, well-formed and signed by reviewers",
        (
            "REVIEW_STATEMENT_MISSING",
            "REVIEW_STATEMENT_MALFORMED",
            "REVIEW_SIGNATURE_*",
            "REVIEW_SIGNER_*",
        ),
        _review_signatures,
    ),
    AuthorityRule(
        "each statement binds this task, the current plan and evidence, an accepted "
        "verdict, and names its signer",
        (
            "REVIEW_STATEMENT_STALE",
            "REVIEW_VERDICT_NOT_ACCEPTED",
            "REVIEW_STATEMENT_PRINCIPAL_MISMATCH",
        ),
        _statements_current,
    ),
    AuthorityRule(
        "the two reviews are signed by distinct principals",
        ("C3_REVIEWERS_NOT_DISTINCT",),
        _distinct_reviewers,
    ),
    AuthorityRule(
        "the approver did not review (unless approver_may_review)",
        ("C3_APPROVER_IS_REVIEWER",),
        _approver_not_reviewer,
    ),
    AuthorityRule(
        "the record's artifact hashes equal the task directory's blobs at source_sha",
        ("C3_NOT_IN_SOURCE_TREE",),
        _in_source_tree,
    ),
    AuthorityRule(
        "each evidence_ref is path#sha256:<hex> of a file at source_sha",
        ("C3_EVIDENCE_REF_NOT_IN_TREE",),
        _evidence_refs_in_tree,
    ),
    AuthorityRule(
        "source_sha is an ancestor of the head judged",
        ("C3_SOURCE_NOT_ANCESTOR",),
        _source_ancestor,
    ),
)
"""The authority rules, in order; every failure is reported."""


def authority_reasons(
    auth: ApprovalAuthority,
    record: Mapping[str, Any],
    task_id: str,
    plan_hash: str | None,
    artifact_digests: Mapping[str, str],
) -> list[Reason]:
    """Run :data:`AUTHORITY_RULES` over one task's facts."""
    case = _Case(auth, record, task_id, plan_hash, artifact_digests)
    reasons: list[Reason] = []
    for rule in AUTHORITY_RULES:
        reasons.extend(rule.check(case))
    return reasons


# --- gathering the facts (IO: the task directory, git, ssh-keygen) ---------------------


def _read_optional(path: Path, limit: int) -> tuple[bytes | None, str]:
    read = read_regular_file(path, limit)
    if read.ok and read.data is not None:
        return read.data, ""
    return None, "missing" if read.state.value == "missing" else (read.detail or read.state.value)


class _Signing(NamedTuple):
    root: TrustRoot
    now: datetime
    crypto: CryptoCheck


def _signature(
    ctx: _Signing, doc: tuple[str, str, Path, bytes], namespace: str, role: str
) -> Verified | Reason:
    prefix, label, sig_path, data = doc
    sig, problem = _read_optional(sig_path, 16 * 1024)
    return check_signature(
        SignatureCase(
            prefix, label, sig, problem, data, namespace, role, ctx.root, ctx.now, ctx.crypto
        )
    )


def _tree_facts(git: Any, task_path: str, record: Mapping[str, Any], head: str | None) -> TreeFacts:
    from plangate.git import GitError
    from plangate.layout import MAX_ARTIFACT_BYTES

    sha = record.get("source_sha")
    try:
        source = git.resolve_commit(sha) if isinstance(sha, str) else None
    except GitError:
        source = None  # the acceptor's source_sha rules report it
    if source is None:
        return TreeFacts(None, None, {}, None, head)
    recorded = record.get("artifact_hashes")
    names = list(recorded) if isinstance(recorded, dict) else []
    digests: dict[str, str] = {}
    present = {e.path for e in git.ls_tree(source, [task_path])}
    for name in names:
        path = f"{task_path}/{name}"
        if path in present:
            try:
                digests[name] = sha256_digest(git.read_blob(source, path, MAX_ARTIFACT_BYTES))
            except GitError:
                continue
    refs: dict[str, str | None] = {}
    reviewers = record.get("reviewers")
    for model, snap in reviewers.items() if isinstance(reviewers, dict) else []:
        ref = snap.get("evidence_ref") if isinstance(snap, dict) else None
        refs[model] = _ref_problem(git, source, ref)
    ancestor = None
    if head is not None:
        try:
            ancestor = git.is_ancestor(source, head)
        except GitError:
            ancestor = False
    return TreeFacts(source, digests, refs, ancestor, head)


def _ref_problem(git: Any, source: str, ref: object) -> str | None:
    from plangate.git import GitError
    from plangate.layout import MAX_ARTIFACT_BYTES

    match = EVIDENCE_REF_RE.fullmatch(ref) if isinstance(ref, str) else None
    if match is None:
        return f"{ref!r} is not path#sha256:<64 hex>"
    path, digest = match.groups()
    try:
        data = git.read_blob(source, path, MAX_ARTIFACT_BYTES)
    except GitError:
        return f"{path} is not a file at {source[:12]}"
    if sha256_digest(data) != digest:
        return f"{path} at {source[:12]} has another digest"
    return None


class TaskFiles(NamedTuple):
    """Where one task lives and the record bytes of its snapshot."""

    repo_root: Path
    task_dir: Path
    record_bytes: bytes | None
    record: Mapping[str, Any] | None


def gather(
    git: Any,
    task: TaskFiles,
    root: TrustRoot,
    head: str | None,
    *,
    now: datetime,
    crypto: CryptoCheck,
) -> ApprovalAuthority:
    """Read every fact the authority rules need for one task (see the module docstring)."""
    task_dir = task.task_dir
    ctx = _Signing(root, now, crypto)
    record_check = _signature(
        ctx,
        ("C3", RECORD_SIG_RELPATH, task_dir / RECORD_SIG_RELPATH, task.record_bytes or b""),
        NAMESPACE_C3,
        "approver",
    )
    reviews: dict[str, ReviewFacts] = {}
    for review in REVIEWS:
        rel = statement_relpath(review)
        data, problem = _read_optional(task_dir / rel, MAX_STATEMENT_BYTES)
        if data is None:
            reviews[review] = ReviewFacts(None, problem, None)
            continue
        parsed = parse_statement(data)
        if isinstance(parsed, str):
            reviews[review] = ReviewFacts(None, parsed, None)
            continue
        check = _signature(
            ctx,
            ("REVIEW", rel + SIG_SUFFIX, task_dir / (rel + SIG_SUFFIX), data),
            NAMESPACE_REVIEW,
            "reviewer",
        )
        reviews[review] = ReviewFacts(parsed, "", check)
    task_path = task_dir.relative_to(task.repo_root).as_posix()
    tree = _tree_facts(git, task_path, task.record or {}, head)
    return ApprovalAuthority(root, record_check, reviews, tree)
