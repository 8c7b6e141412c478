"""Independence Levels I0..I4, computed from review records.

A level is never read from a field: it is derived from *who* authored and *who*
reviewed (model, context id, run id, role, human identity) plus machine evidence
that the evaluator itself can verify (a sealed fixture digest pinned in the
registered plan, or an experiment result digest in the ledger).

Per-record rules, in order (the first that applies decides; see
docs/evaluation-run.md "Independence levels"):

1. The reviewer shares the author's context id -> **I0**, before anything else
   (a shared context is one mind, whatever the other fields say); the reviewer is
   the implementing agent (role ``implementer``/``author``), or shares the author's
   run id, or is the same human -> **I0** (self-review; never counts).
2. A human reviewer (``human_identity`` set, different from the author's) with
   at least one verified machine evidence ref -> **I4**; without such evidence
   -> **I2** (a different judge than the model, but no machine backing).
3. A model reviewer with a different model, context, run and role:
   with verified evidence -> **I3**; without -> **I2**.
4. The same model with a different context, run *and* role -> **I1**.
5. Anything else (a missing field, the same role...) -> **I0**.

Identities (models, context and run ids, roles, human names) are compared by what
a reader sees (:func:`plangate.text.identity_skeleton`: NFKC, invisible characters
removed, case-folded, accents dropped, look-alike letters of other scripts mapped
to Latin), so a zero-width, full-width or Cyrillic spelling of the author's own
model is the author's model.

The candidate's level is the highest level among its counted records, with one
combination rule: a human record (I2 or better) together with a separate
machine-backed record at I3 gives I4 ("Human + machine independent evidence").
Records bound to another commit than the candidate's are ignored (stale).

Signed records. A review record may carry a verified signer (its SSHSIG
signature checked against the trust root in force, namespace
``plangate-eval-review``): the reviewer is then the verified principal, not
what the record claims.

- The reviewer counts as a human only when the trust root marks its principal
  human, and its human identity is the principal; a signed record that claims a
  human identity for a principal not marked human is read as a model review
  (without a model: **I0**).
- One key counts once: a second record signed by the same key is not counted
  (a reviewer cannot multiply itself), so the human + machine combination
  needs two distinct keys when both records are signed.
- A record whose signature does not verify is not counted (its reason is
  reported).

Unsigned records keep the rules above, and the result says the level is
unauthenticated (``facts["authority"]``): who reviewed is then only a claim.

The minimum level per surface class is protected policy:
:data:`MINIMUM_LEVEL_BY_CLASS`. Unknown classes and empty class sets require
I4 (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plangate.canonical import is_digest
from plangate.evaluation.words import IndependenceLevel
from plangate.text import identity_skeleton
from plangate.verdict import Reason, Result

REVIEW_SCHEMA = "plangate-review/1"
"""The ``schema`` value of a review record."""

LEVEL_ORDER: tuple[IndependenceLevel, ...] = (
    IndependenceLevel.I0,
    IndependenceLevel.I1,
    IndependenceLevel.I2,
    IndependenceLevel.I3,
    IndependenceLevel.I4,
)

SELF_REVIEW_ROLES = frozenset({"implementer", "author", "implementing_agent"})
"""Reviewer roles that mark a review as the implementing agent's own (I0)."""

EVIDENCE_KINDS = frozenset({"oracle", "sealed_fixture"})

# Protected policy. Component types plus gate and policy, and protected-surface
# classes as the arbiter names them: agent/flow/routing are conditional areas (I2);
# hooks and the human-owned boundary are human-gate areas (I4); the evaluation
# harness itself is adopted only at I4 (nothing above it could judge it).
MINIMUM_LEVEL_BY_CLASS: Mapping[str, IndependenceLevel] = {
    "prompt": IndependenceLevel.I1,
    "context": IndependenceLevel.I1,
    "skill": IndependenceLevel.I1,
    "agent": IndependenceLevel.I2,
    "flow": IndependenceLevel.I2,
    "routing": IndependenceLevel.I2,
    "verifier": IndependenceLevel.I3,
    "gate": IndependenceLevel.I3,
    "policy": IndependenceLevel.I3,
    "test_strategy": IndependenceLevel.I3,
    "hook": IndependenceLevel.I4,
    "human_owned": IndependenceLevel.I4,
    "human_owned_boundary": IndependenceLevel.I4,
    "eval": IndependenceLevel.I4,
    "evaluation_harness": IndependenceLevel.I4,
}


class ReviewRecordError(ValueError):
    """A review record does not follow the ``plangate-review/1`` contract."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def rank(level: IndependenceLevel) -> int:
    """Ordinal of a level (I0 = 0 .. I4 = 4)."""
    return LEVEL_ORDER.index(level)


@dataclass(frozen=True)
class Party:
    """One side of a review: who wrote or who reviewed."""

    model: str | None
    context_id: str
    run_id: str
    role: str
    human_identity: str | None


@dataclass(frozen=True)
class EvidenceRef:
    """A machine evidence reference claimed by a review record."""

    kind: str
    ref: str


@dataclass(frozen=True)
class Signer:
    """The verified signer of a review record, as the trust root names it."""

    principal: str
    key_fingerprint: str
    human: bool


@dataclass(frozen=True)
class ReviewRecord:
    """A parsed review record (the exact bytes stay with the caller).

    ``signer`` is its verified signer; ``signature_problem`` says why a
    signature it carries does not verify (such a record never counts).
    """

    candidate_id: str
    reviewed_commit: str
    author: Party
    reviewer: Party
    evidence: tuple[EvidenceRef, ...]
    signer: Signer | None = None
    signature_problem: Reason | None = None


_PARTY_KEYS = frozenset({"model", "context_id", "run_id", "role", "human_identity"})
_RECORD_KEYS = frozenset(
    {"schema", "candidate_id", "reviewed_commit", "author", "reviewer", "evidence"}
)


def _text(value: Any, where: str, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise ReviewRecordError(
            "REVIEW_RECORD_INVALID", f"{where} must be a non-empty string without outer spaces"
        )
    return value


def _party(value: Any, where: str) -> Party:
    if not isinstance(value, dict):
        raise ReviewRecordError("REVIEW_RECORD_INVALID", f"{where} must be an object")
    unknown = sorted(set(value) - _PARTY_KEYS)
    missing = sorted(_PARTY_KEYS - set(value))
    if unknown:
        raise ReviewRecordError("REVIEW_RECORD_UNKNOWN_KEY", f"{where} has unknown keys {unknown}")
    if missing:
        raise ReviewRecordError("REVIEW_RECORD_INVALID", f"{where} lacks {missing}")
    model = _text(value["model"], f"{where}.model", nullable=True)
    human = _text(value["human_identity"], f"{where}.human_identity", nullable=True)
    if model is None and human is None:
        raise ReviewRecordError(
            "REVIEW_RECORD_INVALID", f"{where} names neither a model nor a human identity"
        )
    return Party(
        model=model,
        context_id=str(_text(value["context_id"], f"{where}.context_id")),
        run_id=str(_text(value["run_id"], f"{where}.run_id")),
        role=str(_text(value["role"], f"{where}.role")),
        human_identity=human,
    )


def parse_review_record(doc: Any) -> ReviewRecord:
    """Validate a decoded review record; raise :class:`ReviewRecordError` on any defect.

    Every key is required (``model`` / ``human_identity`` may be null, not both);
    unknown keys are refused; evidence refs must be ``sha256:`` digests.
    """
    if not isinstance(doc, dict):
        raise ReviewRecordError("REVIEW_RECORD_INVALID", "a review record must be an object")
    unknown = sorted(set(doc) - _RECORD_KEYS)
    if unknown:
        raise ReviewRecordError("REVIEW_RECORD_UNKNOWN_KEY", f"unknown keys {unknown}")
    missing = sorted(_RECORD_KEYS - set(doc))
    if missing:
        raise ReviewRecordError("REVIEW_RECORD_INVALID", f"missing keys {missing}")
    if doc["schema"] != REVIEW_SCHEMA:
        raise ReviewRecordError(
            "REVIEW_RECORD_SCHEMA", f"schema must be {REVIEW_SCHEMA!r}, got {doc['schema']!r}"
        )
    evidence_raw = doc["evidence"]
    if not isinstance(evidence_raw, list):
        raise ReviewRecordError("REVIEW_RECORD_INVALID", "evidence must be a list")
    evidence: list[EvidenceRef] = []
    for index, item in enumerate(evidence_raw):
        if not isinstance(item, dict) or set(item) != {"kind", "ref"}:
            raise ReviewRecordError(
                "REVIEW_RECORD_INVALID", f"evidence[{index}] must be {{kind, ref}} exactly"
            )
        if item["kind"] not in EVIDENCE_KINDS:
            raise ReviewRecordError(
                "REVIEW_RECORD_INVALID",
                f"evidence[{index}].kind must be one of {sorted(EVIDENCE_KINDS)}",
            )
        if not isinstance(item["ref"], str) or not is_digest(item["ref"]):
            raise ReviewRecordError(
                "REVIEW_RECORD_INVALID", f"evidence[{index}].ref must be a sha256: digest"
            )
        evidence.append(EvidenceRef(item["kind"], item["ref"]))
    commit = _text(doc["reviewed_commit"], "reviewed_commit")
    return ReviewRecord(
        candidate_id=str(_text(doc["candidate_id"], "candidate_id")),
        reviewed_commit=str(commit),
        author=_party(doc["author"], "author"),
        reviewer=_party(doc["reviewer"], "reviewer"),
        evidence=tuple(evidence),
    )


def _same(a: str | None, b: str | None) -> bool:
    """Identity comparison of ids and names by what a reader sees: NFKC, invisible
    characters removed, case-folded (over-matching is the safe side). A name that shows
    nothing at all is the same as anything: it cannot be told apart."""
    if a is None or b is None:
        return False
    left, right = identity_skeleton(a), identity_skeleton(b)
    return left == right or not left or not right


def _as_signed(reviewer: Party, signer: Signer) -> Party | None:
    """The reviewer as its verified signer makes it (None: no identity left to judge)."""
    from dataclasses import replace

    if signer.human:
        return replace(reviewer, human_identity=signer.principal)
    if reviewer.model is None:
        return None
    return replace(reviewer, human_identity=None)


def record_level(
    record: ReviewRecord, verified_refs: frozenset[str]
) -> tuple[IndependenceLevel, str]:
    """Level of one review record and a one-line explanation (rules in the module doc)."""
    author, reviewer = record.author, record.reviewer
    if record.signer is not None:
        signed = _as_signed(reviewer, record.signer)
        if signed is None:
            return IndependenceLevel.I0, (
                f"signed by {record.signer.principal}, whom the trust root does not mark human, "
                "and names no model"
            )
        reviewer = signed
    if _same(reviewer.context_id, author.context_id):
        return IndependenceLevel.I0, "same context as the author"
    if identity_skeleton(reviewer.role) in SELF_REVIEW_ROLES or _same(reviewer.role, author.role):
        return IndependenceLevel.I0, "the reviewer has the author's role (self-review)"
    if _same(reviewer.run_id, author.run_id):
        return IndependenceLevel.I0, "same run as the author"
    if _same(reviewer.human_identity, author.human_identity):
        return IndependenceLevel.I0, "the same human reviewed their own work"
    backed = any(e.ref in verified_refs for e in record.evidence)
    if reviewer.human_identity is not None:
        if backed:
            return IndependenceLevel.I4, "human reviewer with verified machine evidence"
        return IndependenceLevel.I2, "human reviewer without verified machine evidence"
    if _same(reviewer.model, author.model):
        return IndependenceLevel.I1, "same model, separate context, run and role"
    if reviewer.model is not None:
        # A different model than the author (or an author with no model: a human
        # author reviewed by a model) spreads the model's blind spots.
        if backed:
            return IndependenceLevel.I3, "separate model with verified oracle/sealed evidence"
        return IndependenceLevel.I2, "separate model, no verified machine evidence"
    # The parser refuses a party with neither model nor human identity.
    return IndependenceLevel.I0, "reviewer identity undecidable"  # pragma: no cover


def compute_level(
    records: Sequence[ReviewRecord],
    *,
    candidate_id: str,
    candidate_commit: str,
    verified_refs: Iterable[str],
) -> Result:
    """The candidate's Independence Level from its review records (pure).

    ``verdict`` is the level word (``I0``..``I4``); ``facts`` list every record
    with its own level and why, and which records were ignored.
    """
    verified = frozenset(verified_refs)
    per_record: list[dict[str, Any]] = []
    counted: list[tuple[IndependenceLevel, ReviewRecord]] = []
    reasons: list[Reason] = []
    keys_seen: dict[str, int] = {}
    for index, record in enumerate(records):
        entry: dict[str, Any] = {"index": index}
        if record.candidate_id != candidate_id:
            entry.update(level=None, counted=False, why="record is for another candidate")
        elif record.reviewed_commit != candidate_commit:
            entry.update(level=None, counted=False, why="record reviews another commit (stale)")
        elif record.signature_problem is not None:
            entry.update(
                level=None,
                counted=False,
                signed_by=None,
                why=f"signature does not verify ({record.signature_problem.code})",
            )
            reasons.append(record.signature_problem)
        elif record.signer is not None and record.signer.key_fingerprint in keys_seen:
            entry.update(
                level=None,
                counted=False,
                signed_by=record.signer.principal,
                why=f"signed by the same key as record {keys_seen[record.signer.key_fingerprint]}:"
                " one key counts once",
            )
        else:
            level, why = record_level(record, verified)
            entry.update(
                level=level.value,
                counted=level != IndependenceLevel.I0,
                why=why,
                signed_by=record.signer.principal if record.signer else None,
            )
            if record.signer is not None:
                keys_seen[record.signer.key_fingerprint] = index
            if level != IndependenceLevel.I0:
                counted.append((level, record))
            else:
                reasons.append(
                    Reason(
                        "REVIEW_SELF_REVIEW_IGNORED",
                        f"review record {index} is I0 ({why}); it never counts",
                    )
                )
        per_record.append(entry)
    best = IndependenceLevel.I0
    for level, _record in counted:
        if rank(level) > rank(best):
            best = level
    has_human = any(_is_human(r) for _l, r in counted)
    has_machine_i3 = any(level == IndependenceLevel.I3 and not _is_human(r) for level, r in counted)
    combined = False
    if has_human and has_machine_i3 and rank(best) < rank(IndependenceLevel.I4):
        best, combined = IndependenceLevel.I4, True
    facts = {
        "level": best.value,
        "records": per_record,
        "counted_records": len(counted),
        "human_plus_machine_combined": combined,
        "authority": _authority(counted),
    }
    return Result(best.value, tuple(reasons), facts)


def _is_human(record: ReviewRecord) -> bool:
    """A human review: the trust root says so for a signed record, the record for an unsigned."""
    if record.signer is not None:
        return record.signer.human
    return record.reviewer.human_identity is not None


def _authority(counted: Sequence[tuple[IndependenceLevel, ReviewRecord]]) -> str:
    signed = sum(1 for _l, r in counted if r.signer is not None)
    if counted and signed == len(counted):
        return "verified principals"
    if signed:
        return "partly unauthenticated: some counted records are unsigned claims"
    return "unauthenticated: no counted record is signed; who reviewed is a claim"


def required_level(surface_classes: Iterable[str]) -> tuple[IndependenceLevel, tuple[str, ...]]:
    """Minimum level for a set of changed surface classes (protected policy).

    Returns the level and the classes that drove it. An unknown class or an
    empty set requires I4: an undecidable requirement is the strictest one.
    """
    classes = sorted({c.casefold() for c in surface_classes})
    if not classes:
        return IndependenceLevel.I4, ("<none: undecidable>",)
    best = IndependenceLevel.I0
    drivers: list[str] = []
    for cls in classes:
        level = MINIMUM_LEVEL_BY_CLASS.get(cls, IndependenceLevel.I4)
        if rank(level) > rank(best):
            best, drivers = level, [cls]
        elif rank(level) == rank(best):
            drivers.append(cls)
    return best, tuple(drivers)


def check_independence(observed: str, required: str) -> Reason | None:
    """``INDEPENDENCE_INSUFFICIENT`` when ``observed`` is below ``required`` (or unknown)."""
    try:
        obs = IndependenceLevel(observed)
        req = IndependenceLevel(required)
    except ValueError:
        return Reason(
            "INDEPENDENCE_INSUFFICIENT",
            f"independence level undecidable (observed {observed!r}, required {required!r})",
            "attach review records with 'plangate eval review add'",
        )
    if obs == IndependenceLevel.I0 or rank(obs) < rank(req):
        return Reason(
            "INDEPENDENCE_INSUFFICIENT",
            f"independence {obs.value} is below the required {req.value}",
            "attach an independent review (separate model/context/run/role, "
            "a human for I4) with 'plangate eval review add'",
        )
    return None
