"""Where plans and candidates live: their ledger entries, written once and re-verified on read.

A plan is registered before its candidate: registration pins every fixture,
runner and grader file at the baseline commit and writes the registered plan
to the ledger. A candidate names the digest of a plan already in the ledger.
Every lookup recomputes the digest of what the ledger holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plangate.canonical import digest, is_digest, sha256_digest
from plangate.errors import PlanGateError
from plangate.evaluation.independence import (
    ReviewRecord,
    ReviewRecordError,
    compute_level,
    parse_review_record,
)
from plangate.evaluation.registry.authority import (
    PlanAuthorityFacts,
    authority_label,
    plan_authority_reasons,
)
from plangate.evaluation.registry.candidate import (
    CandidateRejected,
    candidate_digest,
    parse_candidate,
    validate_candidate_object,
)
from plangate.evaluation.registry.plan import (
    PlanRejected,
    check_verifier_set,
    fixture_warnings,
    parse_plan,
    pin_plan,
    plan_digest,
    plan_paths,
    validate_plan_object,
)
from plangate.evaluation.registry.selection import (
    PlanOnRecord,
    overlapping_plans,
    relaxations,
    select_plan,
)
from plangate.layout import MAX_FIXTURE_BYTES
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.authority.root import TrustRoot
    from plangate.git import Git
    from plangate.ledger import Ledger

LEDGER_KIND_PLAN = "eval_plan_registered"
LEDGER_KIND_CANDIDATE = "eval_candidate_registered"
LEDGER_KIND_REVIEW = "eval_review_added"
LEDGER_KIND_GATE = "eval_gate_verdict"
LEDGER_KIND_RUN_STARTED = "eval_run_started"
LEDGER_KIND_EXPERIMENT = "eval_experiment_result"
LEDGER_KIND_DECISION = "eval_promotion_decision"
"""The ledger kinds of the evaluation journey (docs/ledger.md lists them)."""


def _candidate_bad(
    code: str, message: str, hint: str = "see docs/evaluation-formats.md"
) -> CandidateRejected:
    return CandidateRejected(code, message, hint)


@dataclass(frozen=True)
class RegisteredPlan:
    """A plan as the ledger holds it, re-verified on lookup."""

    digest: str
    plan: Mapping[str, Any]
    baseline_manifest: Mapping[str, Any]
    entry_seq: int
    newly_registered: bool = False
    warnings: tuple[Reason, ...] = ()


UNAUTHENTICATED = PlanAuthorityFacts(False, None, (), ())
"""A registration with no trust root, no signature and no agent markers."""


def plans_on_record(ledger: Ledger) -> list[PlanOnRecord]:
    """Every registered plan that re-verifies, oldest first (one that does not judges nothing)."""
    plans: list[PlanOnRecord] = []
    for entry in ledger.entries(kind=LEDGER_KIND_PLAN):
        try:
            registered = lookup_registered_plan(ledger, entry.subject)
        except PlanGateError:
            continue
        if registered.entry_seq == entry.seq:
            plans.append(PlanOnRecord(registered.digest, registered.plan, entry.seq))
    return plans


def failed_plans(ledger: Ledger) -> set[str]:
    """Digests of the plans under which a FAIL is recorded (trial evidence)."""
    return {
        str(e.payload.get("plan_digest"))
        for e in ledger.entries(kind=LEDGER_KIND_DECISION)
        if e.payload.get("decision") == "FAIL"
    }


def plan_relaxations(ledger: Ledger, registered: Mapping[str, Any]) -> list[str]:
    """How ``registered`` relaxes a plan it replaces that has a recorded FAIL."""
    failed = failed_plans(ledger)
    found: list[str] = []
    for old in overlapping_plans(list(registered["covers"]), plans_on_record(ledger)):
        if old.digest in failed:
            label = old.plan.get("plan_id")
            found.extend(f"{label}: {r}" for r in relaxations(old.plan, registered))
    return found


def register_plan(
    git: Git,
    ledger: Ledger,
    data: bytes,
    source: str,
    authority: PlanAuthorityFacts = UNAUTHENTICATED,
) -> RegisteredPlan:
    """Register a plan: pin it against the baseline commit and write it to the ledger.

    ``authority`` holds the trust root's verdict on the plan's signature and the
    caller's markers; the registration rules
    (:mod:`plangate.evaluation.registry.authority`) run here, with the plan's
    relaxations of failed plans it replaces. Re-registering the same plan
    returns the existing entry. Raises :class:`PlanRejected` with a reason code
    on any refusal.
    """
    from plangate.evaluation.harness.service import build_manifest
    from plangate.git import GitError

    draft = parse_plan(data, source).plan
    commit = draft["baseline_commit"]
    try:
        resolved = git.resolve_commit(commit)
    except GitError as exc:
        raise PlanRejected(
            "EVAL_PLAN_BASELINE_UNKNOWN",
            f"baseline_commit {commit} is not a commit here ({exc.code})",
            "register the plan in the repository that holds the baseline",
        ) from None
    if resolved != commit:
        raise PlanRejected(
            "EVAL_PLAN_INVALID",
            "baseline_commit must be the full id of a commit",
            "fix the plan; see docs/evaluation-formats.md",
        )
    try:
        manifest = build_manifest(git, commit, draft["harness_definition"])
    except PlanGateError as exc:
        raise PlanRejected(
            "EVAL_PLAN_BASELINE_MANIFEST_UNOBTAINABLE",
            f"the baseline manifest cannot be built: {exc.code}: {exc.message}",
            exc.hint or "fix the harness definition at the baseline commit",
        ) from None
    if manifest.harness_id != draft["baseline_manifest_ref"]:
        raise PlanRejected(
            "EVAL_PLAN_BASELINE_MANIFEST_MISMATCH",
            f"baseline_manifest_ref {draft['baseline_manifest_ref']} is not the harness_id "
            f"{manifest.harness_id} of commit {commit[:12]}",
            f"run 'plangate harness manifest --commit {commit}' and copy its harness_id",
        )
    check_verifier_set(list(draft["verifier_set"]), manifest)
    blobs: dict[str, bytes] = {}
    for path in plan_paths(draft):
        try:
            blobs[path] = git.read_blob(commit, path, MAX_FIXTURE_BYTES)
        except GitError as exc:
            if exc.code not in ("GIT_PATH_NOT_A_FILE", "GIT_BLOB_TOO_LARGE"):
                raise
    registered = pin_plan(draft, blobs)
    warnings = tuple(fixture_warnings(registered, blobs))
    pdigest = plan_digest(registered)
    existing = ledger.entries(kind=LEDGER_KIND_PLAN, subject=pdigest)
    if existing:
        return dataclasses.replace(lookup_registered_plan(ledger, pdigest), warnings=warnings)
    facts = authority._replace(relaxed=tuple(plan_relaxations(ledger, registered)))
    refused = plan_authority_reasons(facts)
    if refused:
        first = refused[0]
        also = "".join(f"; also {r.code}: {r.message}" for r in refused[1:])
        raise PlanRejected(first.code, first.message + also, first.hint)
    entry = ledger.append(
        LEDGER_KIND_PLAN,
        pdigest,
        {
            "plan_digest": pdigest,
            "plan": registered,
            "baseline_manifest": dict(manifest.data),
            "source_file_sha256": sha256_digest(data),
            "authority": authority_label(facts),
            "relaxed": list(facts.relaxed),
            "warnings": [w.code + ": " + w.message for w in warnings],
        },
    )
    return RegisteredPlan(
        pdigest, registered, dict(manifest.data), entry.seq, True, warnings
    )


def lookup_registered_plan(ledger: Ledger, pdigest: str) -> RegisteredPlan:
    """The registered plan with digest ``pdigest`` from the ledger, re-verified.

    Raises ``EVAL_PLAN_NOT_REGISTERED`` when absent and
    ``EVAL_PLAN_LEDGER_MISMATCH`` when the stored plan does not re-digest to
    ``pdigest`` or its stored baseline manifest fails verification.
    """
    from plangate.evaluation.harness.manifest import validate_manifest

    if not is_digest(pdigest):
        raise PlanRejected(
            "EVAL_PLAN_DIGEST_INVALID", f"{pdigest!r} is not a sha256: digest", "copy the digest"
        )
    entries = ledger.entries(kind=LEDGER_KIND_PLAN, subject=pdigest)
    if not entries:
        raise PlanRejected(
            "EVAL_PLAN_NOT_REGISTERED",
            f"no evaluation plan with digest {pdigest} is registered in the ledger",
            "register the plan first: plangate eval plan register FILE",
        )
    entry = entries[0]
    payload = entry.payload
    try:
        plan = validate_plan_object(payload["plan"], registered=True)
        manifest = validate_manifest(payload["baseline_manifest"])
    except (KeyError, TypeError, PlanGateError) as exc:
        raise PlanRejected(
            "EVAL_PLAN_LEDGER_MISMATCH",
            f"the ledger entry for plan {pdigest} is malformed: {exc}",
            "run 'plangate ledger verify'; the ledger may have been tampered with",
        ) from None
    if plan_digest(plan) != pdigest or payload.get("plan_digest") != pdigest:
        raise PlanRejected(
            "EVAL_PLAN_LEDGER_MISMATCH",
            f"the plan stored under {pdigest} does not re-digest to it",
            "run 'plangate ledger verify'; the ledger may have been tampered with",
        )
    if manifest.harness_id != plan["baseline_manifest_ref"]:
        raise PlanRejected(
            "EVAL_PLAN_LEDGER_MISMATCH",
            "the stored baseline manifest is not the plan's baseline_manifest_ref",
            "run 'plangate ledger verify'",
        )
    return RegisteredPlan(pdigest, plan, dict(manifest.data), entry.seq)


@dataclass(frozen=True)
class RegisteredCandidate:
    """A candidate as the ledger holds it."""

    digest: str
    candidate: Mapping[str, Any]
    entry_seq: int
    newly_registered: bool = False


DiffOf = Callable[[str, str], Sequence[str]]
"""The actual diff between a baseline commit and a candidate commit (the gate's method)."""


def select_for(ledger: Ledger, commit: str, diff_of: DiffOf) -> PlanOnRecord:
    """The plan the evaluator selects for ``commit``: the newest covering every changed path.

    Raises ``EVAL_NO_PLAN_REGISTERED`` or ``CANDIDATE_PATHS_NOT_COVERED``.
    """
    from plangate.git import GitError

    plans = plans_on_record(ledger)
    changed: dict[str, Sequence[str] | None] = {}
    for record in plans:
        try:
            changed[record.digest] = diff_of(str(record.plan["baseline_commit"]), commit)
        except (GitError, PlanGateError):
            changed[record.digest] = None
    selection = select_plan(plans, changed)
    if selection.plan is None:
        problem = selection.problem
        assert problem is not None  # noqa: S101 -- select_plan gives one or the other
        raise _candidate_bad(problem.code, problem.message, problem.hint)
    return selection.plan


def register_candidate(
    git: Git, ledger: Ledger, data: bytes, source: str, diff_of: DiffOf
) -> RegisteredCandidate:
    """Register a candidate under the plan the evaluator selects (service).

    A candidate that names a plan must name the selected one
    (``CANDIDATE_PLAN_NOT_SELECTED``): it cannot pick an older, more lenient judge.
    """
    from plangate.git import GitError

    candidate = parse_candidate(data, source)
    try:
        resolved = git.resolve_commit(candidate["candidate_commit"])
    except GitError as exc:
        raise _candidate_bad(
            "CANDIDATE_COMMIT_UNKNOWN",
            f"candidate_commit {candidate['candidate_commit']} is not a commit here ({exc.code})",
            "commit the candidate and give its full id",
        ) from None
    if resolved != candidate["candidate_commit"]:
        raise _candidate_bad(
            "CANDIDATE_INVALID", "candidate_commit must be the full id of a commit"
        )
    selected = select_for(ledger, candidate["candidate_commit"], diff_of)
    named = candidate.get("evaluation_plan_digest")
    if named is not None and named != selected.digest:
        raise _candidate_bad(
            "CANDIDATE_PLAN_NOT_SELECTED",
            f"the candidate names plan {named}, but the evaluator selects {selected.digest} "
            f"({selected.plan.get('plan_id')}), the newest plan covering every changed path",
            "leave evaluation_plan_digest out (the evaluator fills it in) or name the "
            "selected plan; a candidate cannot choose its judge",
        )
    candidate = {**candidate, "evaluation_plan_digest": selected.digest}
    cdigest = candidate_digest(candidate)
    existing = ledger.entries(kind=LEDGER_KIND_CANDIDATE, subject=cdigest)
    if existing:
        return RegisteredCandidate(cdigest, candidate, existing[0].seq)
    entry = ledger.append(
        LEDGER_KIND_CANDIDATE,
        cdigest,
        {
            "candidate_digest": cdigest,
            "candidate": candidate,
            "evaluation_plan_digest": candidate["evaluation_plan_digest"],
            "candidate_tree": commit_tree(git, candidate["candidate_commit"]),
        },
    )
    return RegisteredCandidate(cdigest, candidate, entry.seq, newly_registered=True)


def lookup_registered_candidate(
    ledger: Ledger, ref: str, *, check_scope: bool = True
) -> RegisteredCandidate:
    """Find a registered candidate by digest or ``candidate_id`` and re-verify it.

    An id registered with two different digests is ambiguous
    (``CANDIDATE_AMBIGUOUS``): give the digest.
    """
    if is_digest(ref):
        entries = ledger.entries(kind=LEDGER_KIND_CANDIDATE, subject=ref)
    else:
        entries = [
            e
            for e in ledger.entries(kind=LEDGER_KIND_CANDIDATE)
            if isinstance(e.payload.get("candidate"), Mapping)
            and e.payload["candidate"].get("candidate_id") == ref
        ]
        if len({e.subject for e in entries}) > 1:
            raise _candidate_bad(
                "CANDIDATE_AMBIGUOUS",
                f"candidate id {ref!r} was registered with {len({e.subject for e in entries})} "
                "different digests",
                "name the candidate by its digest",
            )
    if not entries:
        raise _candidate_bad(
            "CANDIDATE_NOT_REGISTERED",
            f"no registered candidate {ref!r}",
            "register it first: plangate eval candidate register FILE",
        )
    entry = entries[0]
    try:
        candidate = validate_candidate_object(entry.payload["candidate"], check_scope=check_scope)
    except (KeyError, TypeError, PlanGateError) as exc:
        raise _candidate_bad(
            "CANDIDATE_LEDGER_MISMATCH",
            f"the ledger entry for candidate {entry.subject} is malformed: {exc}",
            "run 'plangate ledger verify'",
        ) from None
    if candidate_digest(candidate) != entry.subject:
        raise _candidate_bad(
            "CANDIDATE_LEDGER_MISMATCH",
            f"the candidate stored under {entry.subject} does not re-digest to it",
            "run 'plangate ledger verify'",
        )
    return RegisteredCandidate(entry.subject, candidate, entry.seq)


# -- reviews and what the evaluator can vouch for ------------------------------------


def commit_tree(git: Git, commit: str) -> str | None:
    """The tree id of ``commit`` (its content), or None when git cannot tell."""
    try:
        proc = git.run(["rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"])
    except PlanGateError:
        return None
    tree = proc.stdout.decode("ascii", "replace").strip()
    return tree or None


def lookup_candidate(
    ledger: Ledger, ref: str, *, check_scope: bool = True
) -> tuple[str, Mapping[str, Any]]:
    """(digest, candidate) of a registered candidate (see :func:`lookup_registered_candidate`)."""
    registered = lookup_registered_candidate(ledger, ref, check_scope=check_scope)
    return registered.digest, registered.candidate


def append_review(
    ledger: Ledger,
    cdigest: str,
    doc: Mapping[str, Any],
    signed: tuple[bytes, bytes] | None = None,
) -> tuple[str, int]:
    """Record a review document for a candidate; returns (review digest, ledger seq).

    ``signed`` is (the file's exact bytes, its detached signature): both are kept
    so the signature can be checked again, under the trust root of the day.
    """
    import base64

    rdigest = digest(dict(doc))
    payload: dict[str, Any] = {
        "review_digest": rdigest,
        "review": dict(doc),
        "candidate_digest": cdigest,
    }
    if signed is not None:
        payload["signed"] = {
            "bytes": base64.b64encode(signed[0]).decode("ascii"),
            "signature": signed[1].decode("ascii", "replace"),
        }
    entry = ledger.append(LEDGER_KIND_REVIEW, cdigest, payload)
    return rdigest, entry.seq


def _kept_signature(signed: object, doc: object) -> tuple[bytes, bytes] | str:
    """(signed bytes, signature) kept in a ledger review entry, or what is wrong with them."""
    import base64
    import binascii

    from plangate.canonical import StrictJSONError, strict_loads

    if not isinstance(signed, Mapping):
        return "'signed' is not an object"
    try:
        data = base64.b64decode(str(signed.get("bytes")), validate=True)
        signature = str(signed.get("signature")).encode("ascii")
        same = strict_loads(data) == doc
    except (ValueError, binascii.Error, StrictJSONError, UnicodeError) as exc:
        return str(exc)
    return (data, signature) if same else "the signed bytes are another record"


def _signed_record(
    record: ReviewRecord, doc: object, signed: object, trust: TrustRoot, seq: int
) -> ReviewRecord:
    """``record`` with its verified signer, or with why its signature does not hold."""
    from dataclasses import replace

    from plangate.authority.consumer import check_detached
    from plangate.authority.root import NAMESPACE_EVAL_REVIEW
    from plangate.authority.verify import Verified
    from plangate.evaluation.independence import Signer

    label = f"eval review entry {seq}"
    kept = _kept_signature(signed, doc)
    if isinstance(kept, str):
        problem = Reason("REVIEW_SIGNATURE_MALFORMED", f"{label}: {kept}", "sign the record again")
        return replace(record, signature_problem=problem)
    data, signature = kept
    check = check_detached(
        trust, data, signature, namespace=NAMESPACE_EVAL_REVIEW, prefix="REVIEW", label=label
    )
    if isinstance(check, Verified):
        return replace(record, signer=Signer(check.principal, check.key_fingerprint, check.human))
    return replace(record, signature_problem=check)


def review_records(
    ledger: Ledger, cdigest: str, trust: TrustRoot | None = None
) -> tuple[list[ReviewRecord], list[Reason]]:
    """The candidate's review records that re-digest and parse; the others as reasons.

    Under a trust root (``trust``), a record kept with a signature carries its
    verified signer (or why the signature does not hold); without one, every
    record is an unsigned claim.
    """
    records: list[ReviewRecord] = []
    problems: list[Reason] = []
    for entry in ledger.entries(kind=LEDGER_KIND_REVIEW, subject=cdigest):
        doc = entry.payload.get("review")
        try:
            same = digest(doc) == entry.payload.get("review_digest")
            record = parse_review_record(doc)
        except (ReviewRecordError, PlanGateError, TypeError) as exc:
            problems.append(
                Reason(
                    "REVIEW_RECORD_IGNORED", f"ledger review entry {entry.seq} is unusable: {exc}"
                )
            )
            continue
        if not same:
            problems.append(
                Reason(
                    "REVIEW_RECORD_IGNORED",
                    f"ledger review entry {entry.seq} does not re-digest to its review_digest",
                )
            )
            continue
        signed = entry.payload.get("signed")
        if signed is not None and trust is not None:
            record = _signed_record(record, doc, signed, trust, entry.seq)
        records.append(record)
    return records, problems


def verified_refs(ledger: Ledger, cdigest: str, plan: Mapping[str, Any] | None) -> set[str]:
    """Machine evidence the evaluator can vouch for: pinned fixtures, runner/grader files
    of the plan, and experiment results of this candidate."""
    refs: set[str] = set()
    if plan is not None:
        refs |= {str(f.get("digest")) for f in plan.get("fixtures", [])}
        for key in ("runner", "grader"):
            for item in plan.get(key, {}).get("files", []):
                if isinstance(item, Mapping):
                    refs.add(str(item.get("digest")))
    for entry in ledger.entries(kind=LEDGER_KIND_EXPERIMENT, subject=cdigest):
        refs.add(str(entry.payload.get("experiment_digest")))
    return {r for r in refs if is_digest(r)}


def plan_or_problem(ledger: Ledger, pdigest: str) -> tuple[RegisteredPlan | None, Reason | None]:
    """The registered plan, or the reason it cannot be read (never raises a plan error)."""
    try:
        return lookup_registered_plan(ledger, pdigest), None
    except PlanGateError as exc:
        return None, Reason(exc.code, exc.message, exc.hint)


def independence_of(
    ledger: Ledger,
    cdigest: str,
    candidate: Mapping[str, Any],
    plan: Mapping[str, Any] | None,
    trust: TrustRoot | None = None,
) -> Result:
    """The candidate's computed Independence Level from its recorded reviews.

    ``trust`` is the trust root signed reviews are verified under (None: every
    review counts as an unsigned claim, and the result says so).
    """
    if plan is None:
        registered, _problem = plan_or_problem(ledger, str(candidate["evaluation_plan_digest"]))
        plan = registered.plan if registered is not None else None
    records, problems = review_records(ledger, cdigest, trust)
    level = compute_level(
        records,
        candidate_id=str(candidate["candidate_id"]),
        candidate_commit=str(candidate["candidate_commit"]),
        verified_refs=verified_refs(ledger, cdigest, plan),
    )
    return Result(level.verdict, (*problems, *level.reasons), level.facts)
