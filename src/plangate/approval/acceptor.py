"""The acceptor: verify ``approvals/c3.json`` against the task snapshot (pure).

The acceptor never trusts the record's ``decision``: it re-verifies every
binding (seed 004 section 4, #887 F-4, #889). It is a pure function of the
snapshot bytes and two facts resolved by the service layer: the commit the
record's ``source_sha`` names (resolved with git to exactly one full id) and,
for exec, the full HEAD id (``expected_sha``).

Verdicts:

- ``ACCEPTED`` (exit 0): a c3-prime AUTO_APPROVED record with every binding
  consistent, or a legacy APPROVED record whose ``plan_hash`` is current;
- ``HUMAN_ESCALATED`` (exit 3): an otherwise consistent c3-prime record whose
  decision is HUMAN_ESCALATED, or a consistent legacy CONDITIONAL record;
- ``REJECTED`` (exit 1): everything else.

Unlike upstream, the acceptor reports *every* failing rule in the documented
order (docs/plan-first.md), not only the first, so a record whose only problem
is its decision is recognisable (reason list == [C3_DECISION_NOT_APPROVED]).
Parse-level failures (file unreadable, invalid JSON, not an object, unknown
``approval_kind``) stop evaluation at once.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any, NamedTuple

from plangate.approval import contract as c
from plangate.canonical import StrictJSONError, is_digest, strict_loads
from plangate.clock import is_utc_timestamp
from plangate.fsutil import FileState
from plangate.plan.package import (
    ARTIFACT_SET,
    PackageState,
    compute_package,
    plan_package_hash_of_digests,
)
from plangate.snapshot import ARTIFACTS, TASK_ID_RE, TaskSnapshot
from plangate.text import is_blank, visible_text
from plangate.verdict import Reason, Result

ACCEPTED = "ACCEPTED"
REJECTED = "REJECTED"
HUMAN_ESCALATED = "HUMAN_ESCALATED"

DECISION_ONLY_CODE = "C3_DECISION_NOT_APPROVED"


class SourceResolution(NamedTuple):
    """What git said about the record's ``source_sha``: the full id, or why not."""

    full_sha: str | None
    reason: Reason | None = None


def _r(code: str, message: str, hint: str = "") -> Reason:
    return Reason(code, message, hint)


REISSUE = "re-run the reviews and issue a new record with 'plangate c3 issue'"


class ParsedRecord:
    """Record bytes with their strict parse, made by :func:`parse_record`.

    Lets a caller that needs the record before verifying it (to resolve
    ``source_sha`` with git) hand the parse to :func:`verify_snapshot` instead
    of parsing the same bytes twice. The acceptor uses it only for the very
    bytes object of the snapshot it verifies (an identity check).
    """

    __slots__ = ("data", "value")

    def __init__(self, data: bytes, value: dict[str, Any]) -> None:
        self.data = data
        self.value = value


def parse_record(record_bytes: bytes | None) -> ParsedRecord | None:
    """The strict parse of record bytes holding a JSON object, else None.

    None covers every parse-level failure (no bytes, invalid JSON, not an
    object); :func:`verify_snapshot` parses again and reports why.
    """
    if record_bytes is None:
        return None
    try:
        value = strict_loads(record_bytes)
    except StrictJSONError:
        return None
    if not isinstance(value, dict):
        return None
    return ParsedRecord(record_bytes, value)


def source_sha_of(parsed: ParsedRecord | None) -> str | None:
    """The parsed record's ``source_sha`` when it is a well-formed hex string, else None."""
    if parsed is None:
        return None
    sha = parsed.value.get("source_sha")
    if isinstance(sha, str) and c.SOURCE_SHA_RE.fullmatch(sha):
        return sha
    return None


def extract_source_sha(record_bytes: bytes | None) -> str | None:
    """The record's ``source_sha`` when it is a well-formed hex string, else None.

    Used by the service to know what to resolve with git before deciding.
    """
    return source_sha_of(parse_record(record_bytes))


def normalise_evidence_ref(ref: str) -> str:
    """Compare evidence refs after trimming and path normalisation.

    ``a.md``, ``./a.md``, ``x/../a.md``, ``A.md``, ``a.md#`` and ``a.md`` with
    a zero-width space or in full-width letters name the same evidence, as do
    ``x\\a.md`` and ``x/a.md`` (the text is folded with :func:`visible_text`,
    the path part is normalised and the whole is case-folded: on a
    case-insensitive file system they are one file). A non-empty ``#fragment``
    is kept, so two anchored sections (or two comments of one pull-request
    page) stay distinct.
    """
    text = visible_text(ref).strip()
    path, _sep, fragment = text.partition("#")
    # A backslash separates directories on Windows: a\\b.md is a/b.md there.
    path = path.strip().replace("\\", "/")
    fragment = fragment.strip()
    if path:
        # normpath() leaves a name without "/" unchanged (only "." itself changes).
        if "/" in path or path == ".":
            path = posixpath.normpath(path)
        path = path.casefold()
        if path == ".":
            path = ""
    # An empty fragment ("a.md#") points at the whole file, like "a.md".
    return path + ("#" + fragment.casefold() if fragment else "")


def _load_record(snapshot: TaskSnapshot) -> tuple[dict[str, Any] | None, Result | None]:
    read = snapshot.record
    if not read.ok or read.data is None:
        code = {
            FileState.MISSING: "C3_RECORD_MISSING",
            FileState.SYMLINK: "C3_RECORD_SYMLINK",
            FileState.NOT_REGULAR: "C3_RECORD_NOT_REGULAR",
            FileState.TOO_LARGE: "C3_RECORD_TOO_LARGE",
        }.get(read.state, "C3_RECORD_UNREADABLE")
        return None, _reject(
            [_r(code, f"approvals/c3.json {read.detail or read.state.value}", REISSUE)],
            {"kind": None},
        )
    try:
        value = strict_loads(read.data)
    except StrictJSONError as exc:
        return None, _reject(
            [_r("C3_RECORD_MALFORMED", f"approvals/c3.json: {exc.code}: {exc.message}", exc.hint)],
            {"kind": None},
        )
    if not isinstance(value, dict):
        return None, _reject(
            [
                _r(
                    "C3_RECORD_NOT_OBJECT",
                    f"approvals/c3.json top level is {type(value).__name__}, not an object",
                    REISSUE,
                )
            ],
            {"kind": None},
        )
    return value, None


def _reject(reasons: list[Reason], facts: Mapping[str, Any]) -> Result:
    return Result(REJECTED, tuple(reasons), dict(facts))


def verify_snapshot(
    snapshot: TaskSnapshot,
    *,
    expected_sha: str | None,
    source: SourceResolution | None,
    package: PackageState | None = None,
    parsed: ParsedRecord | None = None,
) -> Result:
    """Verify the record in ``snapshot``; see the module docstring for verdicts.

    ``expected_sha`` must already be a full commit id (the service validates
    it); ``source`` is the git resolution of the record's ``source_sha``;
    ``package`` may pass ``compute_package(snapshot)`` when the caller already
    has it (it must be computed from this very snapshot); ``parsed`` may pass
    ``parse_record(snapshot.record.data)``: it is used only when it holds that
    very bytes object, otherwise the record is parsed here.
    """
    read = snapshot.record
    if parsed is not None and read.ok and read.data is not None and parsed.data is read.data:
        record: dict[str, Any] | None = parsed.value
    else:
        record, early = _load_record(snapshot)
        if early is not None:
            return early
    if record is None:  # pragma: no cover - _load_record returns one or the other
        raise AssertionError("record loader returned neither a record nor a result")
    if "approval_kind" not in record:
        from plangate.approval.legacy import verify_legacy  # lazy: legacy records are rare

        return verify_legacy(record, snapshot)
    if record["approval_kind"] != c.APPROVAL_KIND:
        return _reject(
            [
                _r(
                    "C3_APPROVAL_KIND_UNKNOWN",
                    f"approval_kind {record['approval_kind']!r} is neither absent (legacy) "
                    f"nor {c.APPROVAL_KIND!r}",
                    "a record with an unknown approval_kind is never delegated to legacy rules",
                )
            ],
            {"kind": None},
        )
    return _verify_c3_prime(
        record, snapshot, expected_sha=expected_sha, source=source, package=package
    )


def _str_field(record: Mapping[str, Any], key: str, reasons: list[Reason]) -> str | None:
    value = record.get(key)
    if key in record and not isinstance(value, str):
        reasons.append(
            _r(
                "C3_FIELD_TYPE",
                f"{key} must be a string, got {type(value).__name__}",
                REISSUE,
            )
        )
        return None
    return value if isinstance(value, str) else None


def _verify_c3_prime(
    record: dict[str, Any],
    snapshot: TaskSnapshot,
    *,
    expected_sha: str | None,
    source: SourceResolution | None,
    package: PackageState | None,
) -> Result:
    reasons: list[Reason] = []
    facts: dict[str, Any] = {"kind": "c3-prime", "task_dir": snapshot.task_id}

    # --- structure (allowlist, required keys, types) -------------------------
    if "c3_status" in record:
        reasons.append(
            _r(
                "C3_STATUS_FORBIDDEN",
                "c3_status is forbidden in a c3-prime record (legacy grep paths read it)",
                REISSUE,
            )
        )
    # Set comparisons (in C) settle the usual record; the lists keep record order.
    only_allowed = record.keys() <= c.RECORD_ALLOWED_KEYS
    unknown = (
        []
        if only_allowed
        else [
            k
            for k in record
            if k not in c.RECORD_ALLOWED_KEYS and not k.startswith("_") and k != "c3_status"
        ]
    )
    if unknown:
        reasons.append(
            _r("C3_UNKNOWN_KEYS", f"unknown top-level keys: {', '.join(unknown)}", REISSUE)
        )
    missing = (
        []
        if record.keys() >= c.RECORD_REQUIRED_SET
        else [k for k in c.RECORD_REQUIRED_KEYS if k not in record]
    )
    if missing:
        reasons.append(
            _r("C3_MISSING_KEYS", f"missing required keys: {', '.join(missing)}", REISSUE)
        )

    task_id = _str_field(record, "task_id", reasons)
    phase = _str_field(record, "phase", reasons)
    decision = _str_field(record, "decision", reasons)
    source_sha = _str_field(record, "source_sha", reasons)
    plan_hash = _str_field(record, "plan_hash", reasons)
    package_hash = _str_field(record, "plan_package_hash", reasons)
    issued_at = _str_field(record, "issued_at", reasons)
    facts.update(
        {
            "task_id": task_id,
            "decision": decision,
            "source_sha": source_sha,
            "plan_hash": plan_hash,
            "plan_package_hash": package_hash,
            "record": record,
        }
    )

    # --- identity -------------------------------------------------------------
    if task_id is not None:
        if not _is_task_id(task_id):
            reasons.append(
                _r("C3_TASK_ID_INVALID", f"task_id {task_id!r} is not TASK-0000", REISSUE)
            )
        elif task_id != snapshot.task_id:
            reasons.append(
                _r(
                    "C3_TASK_ID_MISMATCH",
                    f"task_id {task_id!r} does not match the task directory {snapshot.task_id!r}",
                    "a record cannot be reused for another task",
                )
            )
    if phase is not None and phase != c.PHASE:
        hint = REISSUE
        if phase.replace("\u2019", "'") == c.PHASE:
            hint = "the phase uses a typographic apostrophe; write C-3' with an ASCII apostrophe"
        reasons.append(_r("C3_PHASE_INVALID", f"phase {phase!r} is not {c.PHASE!r}", hint))
    for key in ("c1_evidence_ref", "c2_evidence_ref", "policy_ref", "issued_by"):
        value = _str_field(record, key, reasons)
        if key in record and isinstance(value, str) and is_blank(value):
            reasons.append(_r("C3_FIELD_EMPTY", f"{key} is empty", REISSUE))
    if issued_at is not None and not is_utc_timestamp(issued_at):
        reasons.append(
            _r(
                "C3_ISSUED_AT_INVALID",
                f"issued_at {issued_at!r} is not YYYY-MM-DDTHH:MM:SSZ (no fractions, no offset)",
                REISSUE,
            )
        )
    # No allowed key starts with "_": a record of allowed keys has no annotations.
    for key, value in () if only_allowed else record.items():
        if key.startswith("_") and not isinstance(value, str):
            reasons.append(
                _r("C3_ANNOTATION_NOT_STRING", f"annotation {key} must be a string", REISSUE)
            )
    if "derived_loopspec_hash" in record and not is_digest(record["derived_loopspec_hash"]):
        reasons.append(
            _r(
                "C3_LOOPSPEC_HASH_INVALID",
                "derived_loopspec_hash is not sha256:<64 lowercase hex>",
                "recompute it with 'plangate loopspec TASK --check'",
            )
        )

    # --- evidence re-verification (never trust the producer) -----------------
    if package is None or package.task_id != snapshot.task_id:
        package = compute_package(snapshot)
    reasons.extend(package.presence)
    reasons.extend(package.evidence_reasons)
    facts["artifact_hashes"] = dict(package.artifact_hashes)
    facts["current_plan_hash"] = package.plan_hash
    facts["current_plan_package_hash"] = package.plan_package_hash

    # --- decision -------------------------------------------------------------
    if decision is not None:
        if decision not in c.DECISIONS:
            reasons.append(
                _r(
                    "C3_DECISION_INVALID",
                    f"decision {decision!r} is not one of {c.DECISIONS}",
                    REISSUE,
                )
            )
        elif decision != "AUTO_APPROVED":
            reasons.append(
                _r(
                    DECISION_ONLY_CODE,
                    f"decision={decision}: only AUTO_APPROVED is executable",
                    "HUMAN_ESCALATED waits for a human C-3; BLOCKED is sent back",
                )
            )

    # --- source_sha and the commit it names -----------------------------------
    if source_sha is not None:
        if not c.SOURCE_SHA_RE.fullmatch(source_sha):
            reasons.append(
                _r(
                    "C3_SOURCE_SHA_INVALID",
                    f"source_sha {source_sha!r} is not 7-40 lowercase hex",
                    REISSUE,
                )
            )
        elif source is None:
            reasons.append(
                _r(
                    "C3_SOURCE_SHA_UNRESOLVED",
                    "source_sha was not resolved with git",
                    "run inside the repository",
                )
            )
        elif source.full_sha is None:
            reasons.append(
                source.reason
                or _r(
                    "C3_SOURCE_SHA_UNRESOLVED",
                    "source_sha cannot be resolved",
                    "run inside the repository",
                )
            )
        else:
            facts["source_sha_full"] = source.full_sha
            if expected_sha is not None and source.full_sha != expected_sha:
                reasons.append(
                    _r(
                        "C3_SOURCE_SHA_MISMATCH",
                        f"source_sha {source_sha} names {source.full_sha}, not the expected "
                        f"commit {expected_sha}",
                        "the approval binds another commit: redo C-1/C-2/C-3' for this commit",
                    )
                )
    facts["expected_sha"] = expected_sha

    # --- bindings to the current files ----------------------------------------
    if plan_hash is not None and package.plan_hash is not None and plan_hash != package.plan_hash:
        reasons.append(
            _r("C3_PLAN_HASH_STALE", "plan_hash differs from the current plan.md (stale)", REISSUE)
        )
    recorded_hashes = record.get("artifact_hashes")
    if "artifact_hashes" in record:
        if not isinstance(recorded_hashes, dict) or recorded_hashes.keys() != ARTIFACT_SET:
            reasons.append(
                _r(
                    "C3_ARTIFACT_HASHES_KEYS",
                    "artifact_hashes must map exactly the six artifact names",
                    REISSUE,
                )
            )
        else:
            current = package.artifact_hashes or {}
            all_digests = True
            for name in ARTIFACTS:
                value = recorded_hashes[name]
                if not is_digest(value):
                    all_digests = False
                    reasons.append(
                        _r(
                            "C3_ARTIFACT_HASH_INVALID",
                            f"artifact_hashes[{name!r}] is not a sha256 digest",
                            REISSUE,
                        )
                    )
                elif name in current and value != current[name]:
                    reasons.append(
                        _r(
                            "C3_ARTIFACT_STALE",
                            f"artifact_hashes mismatch: {name} changed since the record was issued",
                            REISSUE,
                        )
                    )
            # The keys are the six artifact names; with every value a digest
            # this is exactly plan_package_hash()'s direct path.
            if package_hash is not None and (
                not all_digests or package_hash != plan_package_hash_of_digests(recorded_hashes)
            ):
                reasons.append(
                    _r(
                        "C3_PLAN_PACKAGE_HASH_MISMATCH",
                        "plan_package_hash is not the canonical hash of artifact_hashes",
                        REISSUE,
                    )
                )

    # --- reviewers -------------------------------------------------------------
    reviewers = record.get("reviewers")
    verdicts: dict[str, str] = {}
    if "reviewers" in record:
        if not isinstance(reviewers, dict) or reviewers.keys() != c.REVIEWER_SET:
            reasons.append(
                _r("C3_REVIEWERS_KEYS", "reviewers must hold exactly model_a and model_b", REISSUE)
            )
        else:
            refs: dict[str, str] = {}
            for model in c.REVIEWERS:
                snap = reviewers[model]
                if not isinstance(snap, dict) or snap.keys() != c.SNAPSHOT_KEY_SET:
                    reasons.append(
                        _r(
                            "C3_REVIEWER_SNAPSHOT_KEYS",
                            f"reviewers.{model} must hold exactly {', '.join(c.SNAPSHOT_KEYS)}",
                            REISSUE,
                        )
                    )
                    continue
                bad = [
                    k
                    for k in c.SNAPSHOT_KEYS
                    if not isinstance(snap[k], str) or is_blank(snap[k])
                ]
                if bad:
                    reasons.append(
                        _r(
                            "C3_REVIEWER_SNAPSHOT_EMPTY",
                            f"reviewers.{model}: missing, empty or non-string: {', '.join(bad)}",
                            REISSUE,
                        )
                    )
                    continue
                for key in c.TRIO_KEYS:
                    if snap[key] != record.get(key):
                        reasons.append(
                            _r(
                                "C3_REVIEWER_TRIO_MISMATCH",
                                f"reviewers.{model}.{key} differs from the top-level value "
                                "(the reviewers did not see the same Plan Package)",
                                REISSUE,
                            )
                        )
                if snap["verdict"] not in c.VERDICTS:
                    reasons.append(
                        _r(
                            "C3_REVIEWER_VERDICT_INVALID",
                            f"reviewers.{model}.verdict {snap['verdict']!r} is not approve/reject",
                            REISSUE,
                        )
                    )
                else:
                    verdicts[model] = snap["verdict"]
                refs[model] = normalise_evidence_ref(snap["evidence_ref"])
            if len(refs) == 2 and refs["model_a"] == refs["model_b"]:
                reasons.append(
                    _r(
                        "C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
                        f"both reviewers cite the same evidence {refs['model_a']!r}",
                        "two independent reviews need two distinct pieces of evidence",
                    )
                )
    if decision == "AUTO_APPROVED" and any(v != "approve" for v in verdicts.values()):
        reasons.append(
            _r(
                "C3_DECISION_VERDICT_INCONSISTENT",
                "decision is AUTO_APPROVED but a reviewer verdict is reject (tamper sign)",
                REISSUE,
            )
        )
    facts["reviewer_verdicts"] = verdicts

    if not reasons:
        return Result(ACCEPTED, (), facts)
    if [r.code for r in reasons] == [DECISION_ONLY_CODE] and decision == "HUMAN_ESCALATED":
        return Result(HUMAN_ESCALATED, tuple(reasons), facts)
    return Result(REJECTED, tuple(reasons), facts)


def _is_task_id(value: str) -> bool:
    return TASK_ID_RE.fullmatch(value) is not None


def decision_only(result: Result) -> bool:
    """True when a c3-prime record's only failing rule is its decision."""
    return result.codes == (DECISION_ONLY_CODE,)
