"""Approval services: the IO edge around the pure acceptor and producer.

- :func:`verify_task` reads one task snapshot, resolves the record's
  ``source_sha`` with git to exactly one full commit id, and calls the pure
  acceptor. Static validate passes no expected SHA; exec passes HEAD.
- :func:`issue_record` builds the record, runs the acceptor on the exact
  bytes it is about to write, writes the refusal or the issue to the ledger
  first; then, after that wait, re-reads the artifacts through verified
  directory handles and writes ``approvals/c3.json`` atomically only if they
  are the bytes it judged (``C3_ISSUE_STALE`` otherwise).
- :func:`issue_task` is ``plangate c3 issue``: it reads the task once and
  derives ``derived_loopspec_hash`` from the same plan.md bytes the record's
  ``plan_hash`` binds.
- :func:`check_task_loopspec` is ``plangate loopspec --check``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.approval.acceptor import (
    ACCEPTED,
    HUMAN_ESCALATED,
    REJECTED,
    SourceResolution,
    decision_only,
    extract_source_sha,
    parse_record,
    source_sha_of,
    verify_snapshot,
)
from plangate.canonical import sha256_digest
from plangate.errors import InputRejected, PlanGateError, UsageError
from plangate.fsutil import FileRead, FileState, read_regular_file
from plangate.git import Git, GitError
from plangate.layout import RECORD_RELPATH
from plangate.plan.package import compute_package
from plangate.records import NamedTuple
from plangate.shapes import is_full_sha
from plangate.snapshot import TaskSnapshot, read_task_snapshot, task_dir_for
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.approval.record import ReviewerEvidence
    from plangate.authority.root import TrustRoot

REVIEWERS_MAX_BYTES = 1024 * 1024
"""Size bound of a ``--reviewers`` file."""


def check_expected_sha(expected_sha: str) -> str:
    """An expected SHA must be a full lowercase commit id; anything else is a usage error.

    An empty or abbreviated expected SHA is never a match.
    """
    if not isinstance(expected_sha, str) or not is_full_sha(expected_sha):
        raise UsageError(
            "C3_EXPECTED_SHA_INVALID",
            f"expected SHA {expected_sha!r} is not a full 40- or 64-hex commit id",
            "pass the full object id, e.g. $(git rev-parse HEAD)",
        )
    return expected_sha


def resolve_expected_sha(repo_root: Path, rev: str) -> str:
    """The full commit id ``rev`` names (a full id, an abbreviation, ``HEAD``, a branch name or
    a full ``refs/...`` name; see :meth:`plangate.git.Git.resolve_commit`).

    Resolved once, through the git door, exactly as ``c3 issue --target-sha``
    resolves its revision; a full lowercase id is taken as given (the acceptor
    compares it with the record). A revision git cannot resolve to exactly one
    commit is a usage error (``C3_EXPECTED_SHA_INVALID``) naming git's reason.
    """
    from plangate.git import Git, GitError

    if isinstance(rev, str) and is_full_sha(rev):
        return rev
    try:
        full = Git(repo_root).resolve_commit(rev)
    except GitError as exc:
        raise UsageError(
            "C3_EXPECTED_SHA_INVALID",
            f"expected revision {rev!r} does not name exactly one commit ({exc.code}: "
            f"{exc.message})",
            "pass a full commit id, HEAD or a branch name (a tag as refs/tags/NAME)",
        ) from None
    return check_expected_sha(full)


def resolve_source(repo_root: Path, snapshot: TaskSnapshot) -> SourceResolution:
    """Resolve the record's ``source_sha`` with git (exactly one commit) or say why not."""
    return _resolve_sha(
        repo_root, extract_source_sha(snapshot.record.data if snapshot.record.ok else None)
    )


SOURCE_SHA_CODES = {
    "GIT_COMMIT_AMBIGUOUS": "C3_SOURCE_SHA_AMBIGUOUS",
    "GIT_COMMIT_UNKNOWN": "C3_SOURCE_SHA_UNKNOWN",
}
"""git's answer about a record's ``source_sha`` -> the acceptor's reason code
(anything else is ``C3_SOURCE_SHA_UNRESOLVED``)."""


def source_resolution(sha: str, answer: str | GitError | None) -> SourceResolution:
    """The acceptor's view of git's answer for a record's ``source_sha``.

    The one mapping used by every command (verify, exec, status): an answer
    that is not a 40-hex commit id is refused. A SHA-256 repository's 64-hex id
    is refused too, also when the record holds an abbreviation of it: the
    record's contract binds 40-hex SHA-1 commits only, and a 12-hex
    abbreviation must not slip past that limit.
    """
    if isinstance(answer, str):
        if len(answer) != 40:
            return SourceResolution(
                None,
                Reason(
                    "C3_SOURCE_SHA_UNRESOLVED",
                    f"source_sha {sha} resolves to a {len(answer)}-hex object id: approvals bind "
                    "SHA-1 (40-hex) commits only",
                    "approve in a SHA-1 repository; SHA-256 repositories are not supported",
                ),
            )
        return SourceResolution(answer)
    code, message, hint = "C3_SOURCE_SHA_UNRESOLVED", "not resolved", ""
    if isinstance(answer, GitError):
        code = SOURCE_SHA_CODES.get(answer.code, code)
        message, hint = answer.message, answer.hint
    return SourceResolution(None, Reason(code, f"source_sha {sha}: {message}", hint))


def _resolve_sha(repo_root: Path, sha: str | None) -> SourceResolution:
    if sha is None:
        return SourceResolution(None, None)
    try:
        answer: str | GitError = Git(repo_root).resolve_commit(sha)
    except GitError as exc:
        answer = exc
    return source_resolution(sha, answer)


def _source_and_trust(
    repo_root: Path, sha: str | None, trust: TrustRoot | str | None
) -> tuple[SourceResolution, TrustRoot | str | None]:
    """The record's source commit resolved, and the trust root to judge by.

    Both questions go to git in one process when they can: a full source id and
    the local trust branch (``"local"``) are asked with one ``cat-file --batch``
    (the source commit; the trust branch's commit, root tree and trust directory).
    Only a source answered as exactly that commit is taken from it, and only a
    trust branch the answers prove to hold no trust file becomes ``None`` (no trust
    root). Everything else, a failure of that git process included, takes the
    exact paths (:meth:`Git.resolve_commit`; :func:`plangate.authority.source.local_root`),
    which decide and refuse as they always do.
    """
    from plangate.authority.consumer import LOCAL_TRUST

    if sha is None or trust != LOCAL_TRUST or not is_full_sha(sha):
        return _resolve_sha(repo_root, sha), trust
    from plangate.authority.source import no_root_probe, proves_no_trust_files

    probe = no_root_probe(repo_root)
    if probe is None:
        return _resolve_sha(repo_root, sha), trust
    try:
        answers = Git(repo_root).read_objects([f"{sha}^{{commit}}", *probe])
    except GitError:
        answers = None
    if answers is None:
        return _resolve_sha(repo_root, sha), trust
    source_object = answers[0]
    if source_object is not None and source_object[:2] == (sha, "commit"):
        source = source_resolution(sha, sha)
    else:
        source = _resolve_sha(repo_root, sha)
    return source, (None if proves_no_trust_files(answers[1:]) else trust)


def with_bound_digests(result: Result, snapshot: TaskSnapshot) -> Result:
    """``result`` with the digests a verification binds: the snapshot and the record bytes."""
    facts = dict(result.facts)
    facts["snapshot_digest"] = snapshot.digest()
    record = snapshot.record
    facts["record_digest"] = sha256_digest(record.data) if record.ok and record.data else None
    return Result(result.verdict, result.reasons, facts)


def verify_task(
    repo_root: Path,
    task_id: str,
    *,
    expected_sha: str | None = None,
    snapshot: TaskSnapshot | None = None,
    trust: TrustRoot | str | None = "local",
) -> Result:
    """Verify ``approvals/c3.json`` of ``task_id``; see :mod:`plangate.approval.acceptor`.

    Never raises for a bad task or record: those are ``REJECTED`` results. A
    malformed ``expected_sha`` or task id is a :class:`UsageError`. ``trust``
    is the trust root to judge authority by: ``"local"`` (the trust branch's
    tip), a root read elsewhere (a pull request's base), or None (none).
    """
    if expected_sha is not None:
        check_expected_sha(expected_sha)
    task_dir = task_dir_for(repo_root, task_id)
    if snapshot is None:
        try:
            snapshot = read_task_snapshot(task_dir)
        except PlanGateError as exc:
            return Result(
                REJECTED, (Reason(exc.code, exc.message, exc.hint),), {"task_id": task_id}
            )
    # Parsed once: for the git resolution of source_sha and for the acceptor.
    parsed = parse_record(snapshot.record.data if snapshot.record.ok else None)
    source, trust = _source_and_trust(repo_root, source_sha_of(parsed), trust)
    from plangate.authority.consumer import approval_authority

    try:
        authority = approval_authority(
            repo_root,
            task_dir,
            snapshot.record.data if snapshot.record.ok else None,
            parsed.value if parsed is not None else None,
            head=expected_sha,
            trust=trust,
        )
    except PlanGateError as exc:  # a trust root that cannot be read: fail closed
        return with_bound_digests(
            Result(REJECTED, (Reason(exc.code, exc.message, exc.hint),), {"task_id": task_id}),
            snapshot,
        )
    result = verify_snapshot(
        snapshot, expected_sha=expected_sha, source=source, parsed=parsed, authority=authority
    )
    return with_bound_digests(result, snapshot)


class IssueRequest(NamedTuple):
    """Inputs of ``plangate c3 issue`` after command-line parsing."""

    task_id: str
    target_sha: str
    reviewers: Mapping[str, ReviewerEvidence]
    decision: str
    policy_ref: str
    issued_at: str
    issued_by: str
    force: bool = False
    derived_loopspec_hash: str | None = None


def _ledger_append(
    repo_root: Path, env: Mapping[str, str], kind: str, subject: str, payload: Mapping[str, Any]
) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(repo_root, env) as ledger:
        ledger.append(kind, subject, dict(payload))


class _Built(NamedTuple):
    """The producer's record and its bytes, or the verdict and reasons of its refusal."""

    record: dict[str, Any]
    data: bytes
    verdict: str = ACCEPTED
    reasons: tuple[Reason, ...] = ()


def _build_checked(snapshot: TaskSnapshot, request: IssueRequest, target_full: str) -> _Built:
    """Build the record and run the acceptor on its exact bytes against the same snapshot."""
    # Lazy: the producer is not needed by the verify hot path.
    from plangate.approval.record import RecordRefused, build_record, serialize_record
    from plangate.plan.scope import derive_scope

    try:
        record = build_record(
            compute_package(snapshot),
            task_dir_name=snapshot.task_dir.name,
            source_sha=target_full,
            target_sha=target_full,
            reviewers=request.reviewers,
            decision=request.decision,
            policy_ref=request.policy_ref,
            issued_at=request.issued_at,
            issued_by=request.issued_by,
            derived_loopspec_hash=request.derived_loopspec_hash,
            scope_digest=derive_scope(snapshot.artifact("plan.md")).digest,
        )
    except RecordRefused as refused:
        return _Built({}, b"", HUMAN_ESCALATED if refused.evidence else REJECTED, refused.reasons)
    data = serialize_record(record)
    # The producer never writes what the acceptor would reject.
    probe = TaskSnapshot(
        task_id=snapshot.task_id,
        task_dir=snapshot.task_dir,
        artifacts=snapshot.artifacts,
        record=FileRead(FileState.OK, data=data),
    )
    check = verify_snapshot(probe, expected_sha=None, source=SourceResolution(target_full))
    if check.verdict != ACCEPTED and not decision_only(check):
        return _Built(record, data, REJECTED, check.reasons)
    return _Built(record, data)


def _target_problem(snapshot: TaskSnapshot, record_path: Path, force: bool) -> Reason | None:
    """Why ``approvals/c3.json`` cannot be written (or replaced), or None."""
    approvals_dir = record_path.parent
    approvals_is_dir_or_absent = approvals_dir.is_dir() or not (
        approvals_dir.exists() or approvals_dir.is_symlink()
    )
    if snapshot.record.state in (FileState.SYMLINK, FileState.NOT_REGULAR) or not (
        approvals_is_dir_or_absent
    ):
        # approvals/ (or c3.json) is a link, a file, or c3.json is not a regular
        # file: writing would follow the link out of the task directory or fail,
        # and the acceptor would refuse the result anyway. --force does not
        # change that.
        code = (
            "C3_RECORD_SYMLINK"
            if snapshot.record.state is FileState.SYMLINK or approvals_dir.is_symlink()
            else "C3_RECORD_NOT_REGULAR"
        )
        detail = snapshot.record.detail or snapshot.record.state.value
        if not approvals_is_dir_or_absent:
            detail = "approvals/ is not a directory"
        return Reason(
            code,
            f"{RECORD_RELPATH}: {detail}",
            "make approvals/ a real directory and remove what is in c3.json's place",
        )
    if (record_path.exists() or record_path.is_symlink()) and not force:
        return Reason(
            "C3_RECORD_EXISTS",
            f"{RECORD_RELPATH} already exists",
            "pass --force to replace it explicitly (the old record is overwritten)",
        )
    return None


def issue_record(
    repo_root: Path,
    request: IssueRequest,
    env: Mapping[str, str],
    *,
    snapshot: TaskSnapshot | None = None,
) -> Result:
    """Produce ``approvals/c3.json`` for one task.

    Verdicts: ``ACCEPTED`` = issued (exit 0); ``HUMAN_ESCALATED`` = evidence or
    presence failure, no record (exit 3); ``REJECTED`` = any other refusal
    (exit 1). Refusals and issues both go to the ledger; if the ledger cannot
    be written the record is not written either. ``snapshot`` passes the task's
    snapshot when the caller already read it (every hash then comes from it).
    """
    task_dir = task_dir_for(repo_root, request.task_id)
    target_full = Git(repo_root).resolve_commit(request.target_sha)
    if snapshot is None or snapshot.task_dir != task_dir:
        snapshot = read_task_snapshot(task_dir)
    facts: dict[str, Any] = {
        "task_id": request.task_id,
        "target_sha": target_full,
        "decision": request.decision,
        "policy_ref": request.policy_ref,
    }

    def refuse(verdict: str, reasons: tuple[Reason, ...]) -> Result:
        refused = Result(verdict, reasons, facts)
        _ledger_append(
            repo_root, env, "c3_issue_refused", request.task_id, _ledger_payload(refused)
        )
        return refused

    built = _build_checked(snapshot, request, target_full)
    if built.reasons:
        return refuse(built.verdict, built.reasons)
    record_path = task_dir / RECORD_RELPATH
    problem = _target_problem(snapshot, record_path, request.force)
    if problem is not None:
        return refuse(REJECTED, (problem,))
    facts["record_digest"] = sha256_digest(built.data)
    facts["plan_hash"] = built.record["plan_hash"]
    facts["plan_package_hash"] = built.record["plan_package_hash"]
    facts["path"] = f"docs/working/{request.task_id}/{RECORD_RELPATH}"
    result = Result(ACCEPTED, (), facts)
    _ledger_append(repo_root, env, "c3_issue", request.task_id, _ledger_payload(result))
    try:
        # After the last wait (the ledger's lock): verified handles, the bytes
        # judged compared with the bytes there now, then the write.
        write_verified_record(repo_root, snapshot, built.data, force=request.force)
    except PlanGateError as exc:
        # The file system changed under us (or refuses the write): a reason, not
        # a traceback; the ledger's c3_issue is followed by this refusal.
        return refuse(REJECTED, (Reason(exc.code, exc.message, exc.hint),))
    return result


def write_verified_record(
    repo_root: Path, snapshot: TaskSnapshot, data: bytes, *, force: bool
) -> None:
    """Write ``approvals/c3.json`` only if the artifacts are still the bytes ``snapshot`` judged.

    The task directory is opened from the repository root with no link
    followed (``PATH_COMPONENT_LINK`` for a link swapped in on the way), the six
    artifacts are re-read through that handle (``C3_ISSUE_STALE`` when any
    differs from ``snapshot``: nothing is written), and the record is written
    relative to the verified ``approvals/`` handle (never over an existing
    record without ``force``: ``FILE_EXISTS``).
    """
    from plangate.fsutil import atomic_write_at, mkdir_at, open_verified_dir, remove_at
    from plangate.layout import WORKING_DIR
    from plangate.snapshot import read_artifacts_at, same_reads

    approvals_name, record_name = RECORD_RELPATH.split("/")
    with open_verified_dir(repo_root, f"{WORKING_DIR}/{snapshot.task_id}") as task:
        if not same_reads(read_artifacts_at(task), snapshot.artifacts):
            raise InputRejected(
                "C3_ISSUE_STALE",
                "the Plan Package changed after it was judged (while waiting for the ledger); "
                "no record was written",
                "issue again: the record must bind the package as it is now",
            )
        with mkdir_at(task, approvals_name) as approvals:
            atomic_write_at(approvals, record_name, data, overwrite=force)
            if not task.still_in_place():
                # The task directory was moved away between opening and writing:
                # take back the record just written there (ours) and refuse.
                remove_at(approvals, record_name)
                raise InputRejected(
                    "PATH_MOVED_DURING_WRITE",
                    f"{task.shown()} was moved while {RECORD_RELPATH} was written; "
                    "the record was taken back",
                    "issue again when nothing else is moving the task directory",
                )


def _ledger_payload(result: Result) -> dict[str, Any]:
    return {
        "verdict": result.verdict,
        "reasons": [r.to_json() for r in result.reasons],
        "facts": {k: v for k, v in result.facts.items() if k != "record"},
    }


def read_reviewers(path: Path, shown: str | None = None) -> Mapping[str, ReviewerEvidence]:
    """Read and strictly parse a ``--reviewers`` file (``REVIEWERS_UNREADABLE`` otherwise).

    ``shown`` is the name the user gave (messages name it, not the resolved path).
    """
    from plangate.approval.record import parse_reviewers

    read = read_regular_file(path, REVIEWERS_MAX_BYTES)
    if not read.ok or read.data is None:
        raise InputRejected(
            "REVIEWERS_UNREADABLE",
            f"reviewers file {shown or path} {read.detail or read.state.value}",
            "check the path",
        )
    return parse_reviewers(read.data)


def loopspec_hash_of(snapshot: TaskSnapshot, actors: tuple[str, str]) -> str:
    """``derived_loopspec_hash`` of the plan.md bytes in ``snapshot`` with ``actors``."""
    from plangate.plan.loopspec import derive_loopspec, loopspec_hash

    read = snapshot.artifacts["plan.md"]
    if not read.ok or read.data is None:
        raise InputRejected("ARTIFACT_MISSING", f"plan.md {read.detail}", "write plan.md")
    maker, checker = actors
    return loopspec_hash(derive_loopspec(read.data, snapshot.task_id, maker, checker))


def parse_actors(text: str, hint: str = "e.g. agent,qa") -> tuple[str, str]:
    """``MAKER,CHECKER`` as two stripped names (``LOOPSPEC_ACTORS_INVALID``, exit 2, otherwise)."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise UsageError("LOOPSPEC_ACTORS_INVALID", "--loopspec-actors takes MAKER,CHECKER", hint)
    return parts[0].strip(), parts[1].strip()


def issue_task(
    repo_root: Path,
    request: IssueRequest,
    env: Mapping[str, str],
    *,
    reviewers_file: Path,
    reviewers_shown: str | None = None,
    loopspec_actors: str | None = None,
) -> Result:
    """``plangate c3 issue``: read the reviewers file and the task once, then issue.

    ``derived_loopspec_hash`` (with ``loopspec_actors``, ``MAKER,CHECKER``) and
    every hash of the record come from one snapshot of the task directory: the
    LoopSpec a record names is always the one of the plan.md bytes its
    ``plan_hash`` binds.
    """
    reviewers = read_reviewers(reviewers_file, reviewers_shown)
    actors = parse_actors(loopspec_actors) if loopspec_actors else None
    snapshot = read_task_snapshot(task_dir_for(repo_root, request.task_id))
    loopspec_hash = (
        loopspec_hash_of(snapshot, actors) if actors is not None else request.derived_loopspec_hash
    )
    request = request._replace(reviewers=reviewers, derived_loopspec_hash=loopspec_hash)
    return issue_record(repo_root, request, env, snapshot=snapshot)


def check_task_loopspec(repo_root: Path, task_id: str, maker: str, checker: str) -> Result:
    """``plangate loopspec --check``: derive the LoopSpec and compare with the record.

    The LoopSpec and the record come from one snapshot of the task directory.
    """
    from plangate.approval.loopspec_binding import check_against_record
    from plangate.plan.service import derive_task_loopspec

    derived = derive_task_loopspec(repo_root, task_id, maker, checker)
    return check_against_record(derived.snapshot, derived.hash)
