"""Registry IO for the commands: register and show plans, register candidates, reviews.

Each function opens the repository's ledger, calls the store, and returns what
the command prints; the command module only parses arguments and prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.agents import agent_markers_present
from plangate.canonical import StrictJSONError, strict_loads_object
from plangate.errors import InputRejected
from plangate.evaluation.gate.service import actual_diff
from plangate.evaluation.independence import (
    ReviewRecord,
    ReviewRecordError,
    check_independence,
    parse_review_record,
)
from plangate.evaluation.registry.authority import PREFIX as AUTHORITY_PREFIX
from plangate.evaluation.registry.authority import ROLE as EVALUATOR_ROLE
from plangate.evaluation.registry.authority import PlanAuthorityFacts
from plangate.evaluation.registry.store import (
    RegisteredCandidate,
    RegisteredPlan,
    append_review,
    independence_of,
    lookup_candidate,
    lookup_registered_plan,
    register_candidate,
    register_plan,
)
from plangate.evaluation.words import IndependenceLevel, PromotionDecision
from plangate.fsutil import read_regular_file
from plangate.git import Git
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.authority.root import TrustRoot

MAX_REVIEW_BYTES = 64 * 1024


def plan_authority(
    root: Path, env: Mapping[str, str], data: bytes, signature_path: Path | None
) -> PlanAuthorityFacts:
    """The facts the registration rules read: the trust root, the plan's signature
    (``FILE.sig`` beside the plan, checked for the ``evaluator`` role) and the markers."""
    from plangate.authority.consumer import check_detached
    from plangate.authority.root import NAMESPACE_EVAL_PLAN
    from plangate.fsutil import FileState

    trust = trust_for_reviews(root)
    markers = tuple(agent_markers_present(env))
    if trust is None:
        return PlanAuthorityFacts(False, None, markers, ())
    signature: bytes | None = None
    if signature_path is not None:
        read = read_regular_file(signature_path, 16 * 1024)
        if read.state is not FileState.MISSING:
            signature = read.data if read.ok else b""
    if signature is None:
        return PlanAuthorityFacts(True, None, markers, ())
    check = check_detached(
        trust,
        data,
        signature,
        namespace=NAMESPACE_EVAL_PLAN,
        prefix=AUTHORITY_PREFIX,
        label=str(signature_path),
        role=EVALUATOR_ROLE,
    )
    return PlanAuthorityFacts(True, check, markers, ())


def register_plan_bytes(
    cwd: Path, env: Mapping[str, str], data: bytes, source: str, plan_path: Path | None = None
) -> RegisteredPlan:
    """``eval plan register``: check who registers, pin the plan at its baseline, record it.

    ``plan_path`` is the plan file (its signature is ``plan_path`` + ``.sig``); a plan
    read from stdin carries no signature.
    """
    from plangate.ledger import open_ledger

    git = Git(cwd)
    root = git.toplevel()
    sig_path = plan_path.with_name(plan_path.name + ".sig") if plan_path is not None else None
    authority = plan_authority(root, env, data, sig_path)
    with open_ledger(root, env) as ledger:
        return register_plan(git, ledger, data, source, authority)


def show_plan(cwd: Path, env: Mapping[str, str], pdigest: str) -> RegisteredPlan:
    """``eval plan show``: the registered plan, re-verified (the ledger must exist)."""
    from plangate.ledger import open_ledger

    with open_ledger(Git(cwd).toplevel(), env, create=False) as ledger:
        return lookup_registered_plan(ledger, pdigest)


def register_candidate_bytes(
    cwd: Path, env: Mapping[str, str], data: bytes, source: str
) -> RegisteredCandidate:
    """``eval candidate register``: its plan must already be in the ledger."""
    from plangate.ledger import open_ledger

    git = Git(cwd)

    def diff_of(base: str, head: str) -> tuple[str, ...]:
        return actual_diff(git, base, head)

    with open_ledger(git.toplevel(), env) as ledger:
        return register_candidate(git, ledger, data, source, diff_of)


def read_review_file(path: Path) -> tuple[bytes, ReviewRecord, dict[str, Any]]:
    """Read and strictly parse a review record file (regular file, bounded, JSON)."""
    read = read_regular_file(path, MAX_REVIEW_BYTES)
    if not read.ok or read.data is None:
        raise InputRejected(
            "REVIEW_FILE_UNREADABLE", f"{path} {read.detail}", "give a regular JSON file"
        )
    try:
        doc = strict_loads_object(read.data, "review record")
        record = parse_review_record(doc)
    except StrictJSONError as exc:
        raise InputRejected(exc.code, f"{path}: {exc.message}", exc.hint) from None
    except ReviewRecordError as exc:
        raise InputRejected(
            exc.code, f"{path}: {exc.message}", "see docs/evaluation-run.md (review records)"
        ) from None
    return read.data, record, doc


def trust_for_reviews(root: Path) -> TrustRoot | None:
    """The trust root signed review records are verified under: the trust branch's tip."""
    from plangate.authority.consumer import trust_root_for

    return trust_root_for(root, "local")


def read_review_signature(
    path: Path, raw: bytes, trust: TrustRoot | None
) -> tuple[bytes, bytes] | None:
    """``FILE.sig`` beside the review file, checked now when a trust root exists.

    None when there is no signature file. A signature that does not verify
    under the trust root is refused with its reason (nothing is recorded).
    """
    from plangate.authority.consumer import check_detached
    from plangate.authority.root import NAMESPACE_EVAL_REVIEW
    from plangate.fsutil import FileState

    sig_path = path.with_name(path.name + ".sig")
    read = read_regular_file(sig_path, 16 * 1024)
    if read.state is FileState.MISSING:
        return None
    if not read.ok or read.data is None:
        raise InputRejected(
            "REVIEW_SIGNATURE_MALFORMED", f"{sig_path} {read.detail}", "give a regular file"
        )
    if trust is not None:
        check = check_detached(
            trust,
            raw,
            read.data,
            namespace=NAMESPACE_EVAL_REVIEW,
            prefix="REVIEW",
            label=str(sig_path),
        )
        if isinstance(check, Reason):
            raise InputRejected(check.code, check.message, check.hint)
    return raw, read.data


def add_review(repo_root: Path, env: Mapping[str, str], candidate_ref: str, path: Path) -> Result:
    """Attach a review record to a registered candidate (ledger kind ``eval_review_added``).

    A signature beside the file (``FILE.sig``, namespace ``plangate-eval-review``)
    is checked under the trust root and kept with the record: the level then
    reads the verified principal instead of the record's claims.
    """
    from plangate.ledger import open_ledger

    raw, record, doc = read_review_file(path)
    root = Git(repo_root).toplevel()
    trust = trust_for_reviews(root)
    signed = read_review_signature(path, raw, trust)
    with open_ledger(root, env) as ledger:
        cdigest, candidate = lookup_candidate(ledger, candidate_ref)
        if record.candidate_id != candidate["candidate_id"]:
            raise InputRejected(
                "REVIEW_CANDIDATE_MISMATCH",
                f"the review is for {record.candidate_id!r}, not {candidate['candidate_id']!r}",
                "attach the review to the candidate it reviews",
            )
        if record.reviewed_commit != candidate["candidate_commit"]:
            raise InputRejected(
                "REVIEW_COMMIT_MISMATCH",
                f"the review covers commit {record.reviewed_commit[:12]}, the candidate is "
                f"{str(candidate['candidate_commit'])[:12]}",
                "a review binds to the exact commit it reviewed; review the candidate commit",
            )
        rdigest, seq = append_review(ledger, cdigest, doc, signed)
        level = independence_of(ledger, cdigest, candidate, None, trust)
    facts = {
        "candidate_digest": cdigest,
        "review_digest": rdigest,
        "ledger_seq": seq,
        "level": level.verdict,
        "records": level.facts.get("records", []),
        "authority": level.facts.get("authority"),
    }
    return Result("ACCEPTED", level.reasons, facts)


def required_level_of(gate: Result) -> str:
    """The gate's required level; anything unreadable requires I4 (fail closed)."""
    value = gate.facts.get("required_independence")
    try:
        return IndependenceLevel(str(value)).value
    except ValueError:
        return IndependenceLevel.I4.value


def review_level(repo_root: Path, env: Mapping[str, str], candidate_ref: str) -> Result:
    """The candidate's computed Independence Level against the level its surfaces require."""
    from plangate.evaluation.gate.service import gate_candidate
    from plangate.ledger import open_ledger

    root = Git(repo_root).toplevel()
    with open_ledger(root, env) as ledger:
        cdigest, candidate = lookup_candidate(ledger, candidate_ref)
        level = independence_of(ledger, cdigest, candidate, None, trust_for_reviews(root))
    gate = gate_candidate(root, env, cdigest, record=False)
    required = required_level_of(gate)
    shortfall = check_independence(level.verdict, required)
    verdict = "ACCEPTED" if shortfall is None else PromotionDecision.INCONCLUSIVE.value
    reasons = (*level.reasons, *([shortfall] if shortfall else []))
    facts = {
        "candidate_digest": cdigest,
        "level": level.verdict,
        "required": required,
        "independence_drivers": gate.facts.get("independence_drivers", []),
        **{k: v for k, v in level.facts.items() if k != "level"},
    }
    return Result(verdict, reasons, facts)
