"""The acceptor: verify ``approvals/c3.json`` against the task snapshot (pure).

The acceptor never trusts the record's ``decision``: it re-verifies every
binding. It is a pure function of the snapshot bytes and two facts resolved by
the service layer: the commit the record's ``source_sha`` names (resolved with
git to exactly one full id) and, for exec, the full HEAD id (``expected_sha``).

Verdicts:

- ``ACCEPTED`` (exit 0): a c3-prime AUTO_APPROVED record with every binding
  consistent, or a legacy APPROVED record whose ``plan_hash`` is current;
- ``HUMAN_ESCALATED`` (exit 3): an otherwise consistent c3-prime record whose
  decision is HUMAN_ESCALATED, or a consistent legacy CONDITIONAL record;
- ``REJECTED`` (exit 1): everything else.

The rules are two ordered tables, and :data:`ACCEPTOR_RULE_ORDER` (the list in
docs/approval.md) is generated from them:

- :data:`PARSE_RULES`: the record is readable, strict JSON, an object, of a
  known ``approval_kind``. The first failure stops evaluation at once.
- :data:`RECORD_RULES`: every rule of a c3-prime record. Every row is evaluated
  in order and every failing row is reported, so a record whose only problem is
  its decision is recognisable (reason list == [C3_DECISION_NOT_APPROVED]).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

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
from plangate.records import NamedTuple
from plangate.shapes import is_source_sha, is_task_id
from plangate.snapshot import ARTIFACTS, TaskSnapshot
from plangate.text import is_blank, visible_text
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.authority.approval import ApprovalAuthority

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
    if isinstance(sha, str) and is_source_sha(sha):
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


def _reject(reasons: list[Reason], facts: Mapping[str, Any]) -> Result:
    return Result(REJECTED, tuple(reasons), dict(facts))


# --- parse rules: the first failure stops evaluation ---------------------------------


class ParseRule(NamedTuple):
    """One parse-level rule: ``check`` turns its input into the next rule's input or a Reason."""

    text: str
    codes: tuple[str, ...]
    check: Callable[[Any], Any]


_RECORD_STATE_CODES = {
    FileState.MISSING: "C3_RECORD_MISSING",
    FileState.SYMLINK: "C3_RECORD_SYMLINK",
    FileState.NOT_REGULAR: "C3_RECORD_NOT_REGULAR",
    FileState.TOO_LARGE: "C3_RECORD_TOO_LARGE",
}


def _readable(snapshot: TaskSnapshot) -> bytes | Reason:
    read = snapshot.record
    if read.ok and read.data is not None:
        return read.data
    code = _RECORD_STATE_CODES.get(read.state, "C3_RECORD_UNREADABLE")
    return _r(code, f"approvals/c3.json {read.detail or read.state.value}", REISSUE)


def _strict_json(data: bytes) -> Any:
    try:
        return strict_loads(data)
    except StrictJSONError as exc:
        return _r("C3_RECORD_MALFORMED", f"approvals/c3.json: {exc.code}: {exc.message}", exc.hint)


def _an_object(value: Any) -> dict[str, Any] | Reason:
    if isinstance(value, dict):
        return value
    return _r(
        "C3_RECORD_NOT_OBJECT",
        f"approvals/c3.json top level is {type(value).__name__}, not an object",
        REISSUE,
    )


def _known_kind(record: dict[str, Any]) -> dict[str, Any] | Reason:
    if "approval_kind" not in record or record["approval_kind"] == c.APPROVAL_KIND:
        return record
    return _r(
        "C3_APPROVAL_KIND_UNKNOWN",
        f"approval_kind {record['approval_kind']!r} is neither absent (legacy) "
        f"nor {c.APPROVAL_KIND!r}",
        "a record with an unknown approval_kind is never delegated to legacy rules",
    )


PARSE_RULES: tuple[ParseRule, ...] = (
    ParseRule(
        "`approvals/c3.json` is a readable regular file (no symlink, also not through a "
        "symlinked `approvals/`)",
        ("C3_RECORD_MISSING", "C3_RECORD_SYMLINK", "C3_RECORD_NOT_REGULAR",
         "C3_RECORD_TOO_LARGE", "C3_RECORD_UNREADABLE"),
        _readable,
    ),
    ParseRule(
        "strict JSON: no BOM, UTF-8, no duplicate keys, no NaN/Infinity, no trailing data",
        ("C3_RECORD_MALFORMED",),
        _strict_json,
    ),
    ParseRule("the top level is an object", ("C3_RECORD_NOT_OBJECT",), _an_object),
    ParseRule(
        '`approval_kind` absent: legacy rules (below); present and not `"c3-prime"`: rejected',
        ("C3_APPROVAL_KIND_UNKNOWN",),
        _known_kind,
    ),
)
"""Parse-level rules in order; the output of one is the input of the next."""

_PARSED_FROM = 3
"""Index of the first parse rule still to run on an already parsed record object."""


# --- record rules: every row is evaluated and every failure reported -----------------

_STRING_FIELDS = (
    "task_id", "phase", "decision", "source_sha", "plan_hash", "plan_package_hash", "issued_at",
)
_NON_EMPTY_FIELDS = ("c1_evidence_ref", "c2_evidence_ref", "policy_ref", "issued_by")


class _Check:
    """What the record rules read: the record, the snapshot, git's facts, and derived values.

    The derived values every rule may need are computed once, here; the rules
    fill in ``fields``, ``source_full`` and ``verdicts`` as they run.
    """

    __slots__ = ("authority", "expected_sha", "fields", "only_allowed", "package", "record",
                 "recorded_digests", "recorded_hashes", "snapshot", "snapshot_problems",
                 "snapshots", "source", "source_full", "verdicts")

    def __init__(self, record: dict[str, Any], snapshot: TaskSnapshot, *,
                 expected_sha: str | None, source: SourceResolution | None,
                 given_package: PackageState | None,
                 authority: ApprovalAuthority | None = None) -> None:
        self.authority = authority
        self.record = record
        self.snapshot = snapshot
        self.expected_sha = expected_sha
        self.source = source
        if given_package is None or given_package.task_id != snapshot.task_id:
            given_package = compute_package(snapshot)
        self.package: PackageState = given_package
        # A set comparison (in C) settles the usual record.
        self.only_allowed = record.keys() <= c.RECORD_ALLOWED_KEYS
        hashes = record.get("artifact_hashes")
        # The record's artifact_hashes when it maps exactly the six names, else None.
        self.recorded_hashes: dict[str, Any] | None = (
            hashes if isinstance(hashes, dict) and hashes.keys() == ARTIFACT_SET else None
        )
        # Which recorded hashes are digests (rules 21 and 22 both ask).
        self.recorded_digests: dict[str, bool] = (
            {name: is_digest(value) for name, value in self.recorded_hashes.items()}
            if self.recorded_hashes is not None else {}
        )
        reviewers: Any = record.get("reviewers")
        # Per reviewer, why its snapshot is unusable (None: usable); empty when
        # reviewers does not hold exactly the two models.
        self.snapshot_problems: dict[str, Reason | None] = (
            {model: _snapshot_problem(model, reviewers[model]) for model in c.REVIEWERS}
            if isinstance(reviewers, dict) and reviewers.keys() == c.REVIEWER_SET else {}
        )
        # The usable snapshots: exactly the five keys, all non-blank strings.
        self.snapshots: dict[str, dict[str, str]] = {
            model: reviewers[model]
            for model, problem in self.snapshot_problems.items() if problem is None
        }
        self.fields: dict[str, str | None] = {}
        self.source_full: str | None = None
        self.verdicts: dict[str, str] = {}

    def text(self, key: str) -> str | None:
        """The record's value of ``key`` when it is a string (rule 8 reports other types)."""
        value = self.record.get(key)
        return value if isinstance(value, str) else None


def _type_reason(key: str, value: Any) -> Reason:
    return _r("C3_FIELD_TYPE", f"{key} must be a string, got {type(value).__name__}", REISSUE)


def _no_c3_status(ck: _Check) -> list[Reason]:
    if "c3_status" not in ck.record:
        return []
    return [_r("C3_STATUS_FORBIDDEN",
               "c3_status is forbidden in a c3-prime record (legacy grep paths read it)", REISSUE)]


def _no_unknown_keys(ck: _Check) -> list[Reason]:
    if ck.only_allowed:
        return []
    unknown = [k for k in ck.record
               if k not in c.RECORD_ALLOWED_KEYS and not k.startswith("_") and k != "c3_status"]
    if not unknown:
        return []
    return [_r("C3_UNKNOWN_KEYS", f"unknown top-level keys: {', '.join(unknown)}", REISSUE)]


def _required_keys(ck: _Check) -> list[Reason]:
    if ck.record.keys() >= c.RECORD_REQUIRED_SET:
        return []
    missing = [k for k in c.RECORD_REQUIRED_KEYS if k not in ck.record]
    return [_r("C3_MISSING_KEYS", f"missing required keys: {', '.join(missing)}", REISSUE)]


def _string_fields(ck: _Check) -> list[Reason]:
    reasons = []
    for key in _STRING_FIELDS:
        if key in ck.record and not isinstance(ck.record[key], str):
            reasons.append(_type_reason(key, ck.record[key]))
        ck.fields[key] = ck.text(key)
    return reasons


def _task_id_bound(ck: _Check) -> list[Reason]:
    task_id = ck.fields["task_id"]
    if task_id is None:
        return []
    if not is_task_id(task_id):
        return [_r("C3_TASK_ID_INVALID", f"task_id {task_id!r} is not TASK-0000", REISSUE)]
    if task_id != ck.snapshot.task_id:
        return [_r("C3_TASK_ID_MISMATCH",
                   f"task_id {task_id!r} does not match the task directory "
                   f"{ck.snapshot.task_id!r}",
                   "a record cannot be reused for another task")]
    return []


def _phase(ck: _Check) -> list[Reason]:
    phase = ck.fields["phase"]
    if phase is None or phase == c.PHASE:
        return []
    hint = REISSUE
    if phase.replace("\u2019", "'") == c.PHASE:
        hint = "the phase uses a typographic apostrophe; write C-3' with an ASCII apostrophe"
    return [_r("C3_PHASE_INVALID", f"phase {phase!r} is not {c.PHASE!r}", hint)]


def _non_empty_fields(ck: _Check) -> list[Reason]:
    reasons = []
    for key in _NON_EMPTY_FIELDS:
        if key not in ck.record:
            continue
        value = ck.record[key]
        if not isinstance(value, str):
            reasons.append(_type_reason(key, value))
        elif is_blank(value):
            reasons.append(_r("C3_FIELD_EMPTY", f"{key} is empty", REISSUE))
    return reasons


def _issued_at(ck: _Check) -> list[Reason]:
    issued_at = ck.fields["issued_at"]
    if issued_at is None or is_utc_timestamp(issued_at):
        return []
    return [_r("C3_ISSUED_AT_INVALID",
               f"issued_at {issued_at!r} is not YYYY-MM-DDTHH:MM:SSZ (no fractions, no offset)",
               REISSUE)]


def _annotations(ck: _Check) -> list[Reason]:
    # No allowed key starts with "_": a record of allowed keys has no annotations.
    if ck.only_allowed:
        return []
    return [_r("C3_ANNOTATION_NOT_STRING", f"annotation {key} must be a string", REISSUE)
            for key, value in ck.record.items()
            if key.startswith("_") and not isinstance(value, str)]


def _loopspec_hash(ck: _Check) -> list[Reason]:
    if "derived_loopspec_hash" not in ck.record or is_digest(ck.record["derived_loopspec_hash"]):
        return []
    return [_r("C3_LOOPSPEC_HASH_INVALID", "derived_loopspec_hash is not sha256:<64 lowercase hex>",
               "recompute it with 'plangate loopspec TASK --check'")]


def _presence(ck: _Check) -> list[Reason]:
    return list(ck.package.presence)


def _evidence(ck: _Check) -> list[Reason]:
    return list(ck.package.evidence_reasons)


def _decision(ck: _Check) -> list[Reason]:
    decision = ck.fields["decision"]
    if decision is None or decision == "AUTO_APPROVED":
        return []
    if decision not in c.DECISIONS:
        return [_r("C3_DECISION_INVALID", f"decision {decision!r} is not one of {c.DECISIONS}",
                   REISSUE)]
    return [_r(DECISION_ONLY_CODE, f"decision={decision}: only AUTO_APPROVED is executable",
               "HUMAN_ESCALATED waits for a human C-3; BLOCKED is sent back")]


def _source_sha_resolved(ck: _Check) -> list[Reason]:
    sha = ck.fields["source_sha"]
    if sha is None:
        return []
    if not is_source_sha(sha):
        return [_r("C3_SOURCE_SHA_INVALID", f"source_sha {sha!r} is not 7-40 lowercase hex",
                   REISSUE)]
    if ck.source is None:
        return [_r("C3_SOURCE_SHA_UNRESOLVED", "source_sha was not resolved with git",
                   "run inside the repository")]
    if ck.source.full_sha is None:
        return [ck.source.reason or _r("C3_SOURCE_SHA_UNRESOLVED",
                                       "source_sha cannot be resolved",
                                       "run inside the repository")]
    ck.source_full = ck.source.full_sha
    return []


def _source_sha_expected(ck: _Check) -> list[Reason]:
    full, expected = ck.source_full, ck.expected_sha
    if full is None or expected is None or full == expected:
        return []
    return [_r("C3_SOURCE_SHA_MISMATCH",
               f"source_sha {ck.fields['source_sha']} names {full}, not the expected commit "
               f"{expected}",
               "the approval binds another commit: redo C-1/C-2/C-3' for this commit")]


def _plan_hash_current(ck: _Check) -> list[Reason]:
    plan_hash, current = ck.fields["plan_hash"], ck.package.plan_hash
    if plan_hash is None or current is None or plan_hash == current:
        return []
    return [_r("C3_PLAN_HASH_STALE", "plan_hash differs from the current plan.md (stale)",
               REISSUE)]


def _scope_digest(ck: _Check) -> list[Reason]:
    if "scope_digest" not in ck.record:
        return []  # an older record: the enforcing steps refuse its scope (SCOPE_NOT_APPROVED)
    recorded = ck.record["scope_digest"]
    if not is_digest(recorded):
        return [_r("C3_SCOPE_DIGEST_INVALID", "scope_digest is not sha256:<64 lowercase hex>",
                   REISSUE)]
    current = _current_scope_digest(ck.snapshot)
    if recorded == current:
        return []
    return [_r("C3_SCOPE_DIGEST_MISMATCH",
               f"the scope derived from plan.md now ({current}) is not the scope approved "
               f"({recorded})",
               "run 'plangate plan lint TASK' to see the scope, then review and approve again")]


def _current_scope_digest(snapshot: TaskSnapshot) -> str | None:
    from plangate.plan.scope import derive_scope  # the CommonMark parser: only when recorded

    return derive_scope(snapshot.artifact("plan.md")).digest


def _artifact_hashes(ck: _Check) -> list[Reason]:
    if "artifact_hashes" not in ck.record:
        return []
    recorded = ck.recorded_hashes
    if recorded is None:
        return [_r("C3_ARTIFACT_HASHES_KEYS",
                   "artifact_hashes must map exactly the six artifact names", REISSUE)]
    current = ck.package.artifact_hashes or {}
    reasons = []
    for name in ARTIFACTS:
        value = recorded[name]
        if not ck.recorded_digests[name]:
            reasons.append(_r("C3_ARTIFACT_HASH_INVALID",
                              f"artifact_hashes[{name!r}] is not a sha256 digest", REISSUE))
        elif name in current and value != current[name]:
            reasons.append(_r("C3_ARTIFACT_STALE",
                              f"artifact_hashes mismatch: {name} changed since the record was "
                              "issued", REISSUE))
    return reasons


def _package_hash(ck: _Check) -> list[Reason]:
    recorded, package_hash = ck.recorded_hashes, ck.fields["plan_package_hash"]
    if recorded is None or package_hash is None:
        return []
    # The keys are the six artifact names; with every value a digest this is exactly
    # plan_package_hash()'s direct path.
    if all(ck.recorded_digests.values()) and (
        package_hash == plan_package_hash_of_digests(recorded)
    ):
        return []
    return [_r("C3_PLAN_PACKAGE_HASH_MISMATCH",
               "plan_package_hash is not the canonical hash of artifact_hashes", REISSUE)]


def _reviewers_keys(ck: _Check) -> list[Reason]:
    reviewers = ck.record.get("reviewers")
    if "reviewers" not in ck.record or (
        isinstance(reviewers, dict) and reviewers.keys() == c.REVIEWER_SET
    ):
        return []
    return [_r("C3_REVIEWERS_KEYS", "reviewers must hold exactly model_a and model_b", REISSUE)]


def _snapshot_problem(model: str, snap: Any) -> Reason | None:
    if not isinstance(snap, dict) or snap.keys() != c.SNAPSHOT_KEY_SET:
        return _r("C3_REVIEWER_SNAPSHOT_KEYS",
                  f"reviewers.{model} must hold exactly {', '.join(c.SNAPSHOT_KEYS)}", REISSUE)
    bad = [k for k in c.SNAPSHOT_KEYS if not isinstance(snap[k], str) or is_blank(snap[k])]
    if bad:
        return _r("C3_REVIEWER_SNAPSHOT_EMPTY",
                  f"reviewers.{model}: missing, empty or non-string: {', '.join(bad)}", REISSUE)
    return None


def _reviewer_snapshots(ck: _Check) -> list[Reason]:
    reasons = []
    for model, problem in ck.snapshot_problems.items():
        if problem is not None:
            reasons.append(problem)
            continue
        snap = ck.snapshots[model]
        reasons.extend(
            _r("C3_REVIEWER_TRIO_MISMATCH",
               f"reviewers.{model}.{key} differs from the top-level value "
               "(the reviewers did not see the same Plan Package)", REISSUE)
            for key in c.TRIO_KEYS if snap[key] != ck.record.get(key)
        )
    return reasons


def _reviewer_verdicts(ck: _Check) -> list[Reason]:
    reasons = []
    for model, snap in ck.snapshots.items():
        if snap["verdict"] in c.VERDICTS:
            ck.verdicts[model] = snap["verdict"]
        else:
            reasons.append(_r("C3_REVIEWER_VERDICT_INVALID",
                              f"reviewers.{model}.verdict {snap['verdict']!r} is not "
                              "approve/reject", REISSUE))
    return reasons


def _independent_evidence(ck: _Check) -> list[Reason]:
    refs = {model: normalise_evidence_ref(snap["evidence_ref"])
            for model, snap in ck.snapshots.items()}
    if len(refs) != 2 or refs["model_a"] != refs["model_b"]:
        return []
    return [_r("C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",
               f"both reviewers cite the same evidence {refs['model_a']!r}",
               "two independent reviews need two distinct pieces of evidence")]


def _decision_matches_verdicts(ck: _Check) -> list[Reason]:
    if ck.fields["decision"] != "AUTO_APPROVED" or all(
        v == "approve" for v in ck.verdicts.values()
    ):
        return []
    return [_r("C3_DECISION_VERDICT_INCONSISTENT",
               "decision is AUTO_APPROVED but a reviewer verdict is reject (tamper sign)",
               REISSUE)]


def _authority(ck: _Check) -> list[Reason]:
    if ck.authority is None:
        return []
    from plangate.authority.approval import authority_reasons

    return authority_reasons(ck.authority, ck.record, ck.snapshot.task_id, ck.package.plan_hash,
                             ck.package.artifact_hashes or {})


class RecordRule(NamedTuple):
    """One rule of a c3-prime record: ``check`` returns its failures (none when it holds)."""

    text: str
    codes: tuple[str, ...]
    check: Callable[[_Check], list[Reason]]


RECORD_RULES: tuple[RecordRule, ...] = (
    RecordRule("no `c3_status`", ("C3_STATUS_FORBIDDEN",), _no_c3_status),
    RecordRule("no unknown top-level keys (`_*` allowed)", ("C3_UNKNOWN_KEYS",),
               _no_unknown_keys),
    RecordRule("all 14 required keys", ("C3_MISSING_KEYS",), _required_keys),
    RecordRule("string fields are strings", ("C3_FIELD_TYPE",), _string_fields),
    RecordRule("`task_id` format and equal to the directory",
               ("C3_TASK_ID_INVALID", "C3_TASK_ID_MISMATCH"), _task_id_bound),
    RecordRule("`phase` is `C-3'` (a typographic apostrophe is named in the hint)",
               ("C3_PHASE_INVALID",), _phase),
    RecordRule("evidence refs, `policy_ref`, `issued_by` are non-empty strings (a value of "
               "only whitespace, control or format characters such as U+200B counts as empty)",
               ("C3_FIELD_TYPE", "C3_FIELD_EMPTY"), _non_empty_fields),
    RecordRule("`issued_at` format and calendar", ("C3_ISSUED_AT_INVALID",), _issued_at),
    RecordRule("`_*` annotations are strings", ("C3_ANNOTATION_NOT_STRING",), _annotations),
    RecordRule("`derived_loopspec_hash` (if present) is a digest", ("C3_LOOPSPEC_HASH_INVALID",),
               _loopspec_hash),
    RecordRule("presence gate of the six artifacts",
               ("ARTIFACT_MISSING", "ARTIFACT_EMPTY", "ARTIFACT_SYMLINK", "ARTIFACT_NOT_REGULAR",
                "ARTIFACT_TOO_LARGE", "ARTIFACT_UNREADABLE"), _presence),
    RecordRule("both evidence markers re-verified (never trust the producer)",
               ("EVIDENCE_C1_*", "EVIDENCE_C2_*"), _evidence),
    RecordRule("decision in the three values; not AUTO_APPROVED",
               ("C3_DECISION_INVALID", DECISION_ONLY_CODE), _decision),
    RecordRule("`source_sha` format, resolved with git to exactly one full commit id; the id "
               "must itself name a commit (an annotated tag's id, full or abbreviated, is not "
               "peeled)",
               ("C3_SOURCE_SHA_INVALID", "C3_SOURCE_SHA_UNKNOWN", "C3_SOURCE_SHA_AMBIGUOUS",
                "C3_SOURCE_SHA_UNRESOLVED"), _source_sha_resolved),
    RecordRule("with `--expected-sha`: the resolved full id equals it exactly (no prefix games)",
               ("C3_SOURCE_SHA_MISMATCH",), _source_sha_expected),
    RecordRule("`plan_hash` equals the current plan.md", ("C3_PLAN_HASH_STALE",),
               _plan_hash_current),
    RecordRule("`artifact_hashes` has exactly the six names, digests, each equal to the "
               "current file (the entry is named)",
               ("C3_ARTIFACT_HASHES_KEYS", "C3_ARTIFACT_HASH_INVALID", "C3_ARTIFACT_STALE"),
               _artifact_hashes),
    RecordRule("`plan_package_hash` equals the canonical hash of `artifact_hashes`",
               ("C3_PLAN_PACKAGE_HASH_MISMATCH",), _package_hash),
    RecordRule("`reviewers` holds exactly `model_a`, `model_b`", ("C3_REVIEWERS_KEYS",),
               _reviewers_keys),
    RecordRule("each snapshot holds exactly the five keys, non-empty strings, trio equal to the "
               "top level",
               ("C3_REVIEWER_SNAPSHOT_KEYS", "C3_REVIEWER_SNAPSHOT_EMPTY",
                "C3_REVIEWER_TRIO_MISMATCH"), _reviewer_snapshots),
    RecordRule("verdicts are `approve`/`reject`", ("C3_REVIEWER_VERDICT_INVALID",),
               _reviewer_verdicts),
    RecordRule("the two reviewers cite different evidence, compared after NFKC folding, removal "
               "of control/format characters (U+200B...), trimming, path normalisation and case "
               "folding (`a.md` = `./a.md` = `x/../a.md` = `A.md` = `a.md#` = `\uff41.md`, "
               "`x\\a.md` = `x/a.md`; a non-empty `#fragment` is kept, case-folded, so two "
               "anchored sections stay distinct)",
               ("C3_REVIEWER_EVIDENCE_NOT_INDEPENDENT",), _independent_evidence),
    RecordRule("AUTO_APPROVED has no reject verdict (tamper sign)",
               ("C3_DECISION_VERDICT_INCONSISTENT",), _decision_matches_verdicts),
    RecordRule("where the trust root requires signatures: the record signed by an approver, both "
               "reviews signed by distinct reviewers, the record bound to the git tree at "
               "`source_sha` (docs/authority.md)",
               ("C3_SIGNATURE_*", "C3_SIGNER_*", "REVIEW_*", "C3_REVIEWERS_NOT_DISTINCT",
                "C3_APPROVER_IS_REVIEWER", "C3_NOT_IN_SOURCE_TREE", "C3_EVIDENCE_REF_NOT_IN_TREE",
                "C3_SOURCE_NOT_ANCESTOR"), _authority),
    RecordRule("`scope_digest` (if present) is a digest equal to the digest of the scope "
               "derived from the current plan.md (docs/plan-lint.md)",
               ("C3_SCOPE_DIGEST_INVALID", "C3_SCOPE_DIGEST_MISMATCH"), _scope_digest),
)
"""The rules of a c3-prime record, in the documented order."""


class RuleDoc(NamedTuple):
    """One numbered line of the documented rule order."""

    number: int
    text: str
    codes: tuple[str, ...]


ACCEPTOR_RULE_ORDER: tuple[RuleDoc, ...] = tuple(
    RuleDoc(number, text, codes)
    for number, (text, codes) in enumerate(
        [(rule.text, rule.codes) for rule in PARSE_RULES]
        + [(rule.text, rule.codes) for rule in RECORD_RULES],
        start=1,
    )
)
"""The documented rule order (docs/approval.md), generated from the two tables."""


def rule_order_markdown() -> list[str]:
    """The rule table of docs/approval.md, one Markdown line per rule."""
    lines = ["| # | rule | reason code |", "|---|---|---|"]
    for rule in ACCEPTOR_RULE_ORDER:
        codes = ", ".join(f"`{code}`" for code in rule.codes)
        lines.append(f"| {rule.number} | {rule.text} | {codes} |")
    return lines


# --- the acceptor ---------------------------------------------------------------------


def verify_snapshot(
    snapshot: TaskSnapshot,
    *,
    expected_sha: str | None,
    source: SourceResolution | None,
    package: PackageState | None = None,
    parsed: ParsedRecord | None = None,
    authority: ApprovalAuthority | None = None,
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
    value: Any = snapshot
    rules = PARSE_RULES
    if parsed is not None and read.ok and read.data is not None and parsed.data is read.data:
        value, rules = parsed.value, PARSE_RULES[_PARSED_FROM:]
    for rule in rules:
        value = rule.check(value)
        if isinstance(value, Reason):
            return _reject([value], {"kind": None})
    record: dict[str, Any] = value
    if "approval_kind" not in record:
        from plangate.approval.legacy import verify_legacy  # lazy: legacy records are rare

        return verify_legacy(record, snapshot)
    if package is None or package.task_id != snapshot.task_id:
        package = compute_package(snapshot)
    if authority is None and _QUICK_COVERS_TABLE:
        quick = quick_accept(record, snapshot, package, expected_sha, source)
        if quick is not None:
            return quick
    return _verify_c3_prime(
        _Check(record, snapshot, expected_sha=expected_sha, source=source, given_package=package,
               authority=authority)
    )


# --- the quick acceptance of the usual record ----------------------------------------

_QUICK_COVERED: tuple[Callable[[_Check], list[Reason]], ...] = (
    _no_c3_status, _no_unknown_keys, _required_keys, _string_fields, _task_id_bound, _phase,
    _non_empty_fields, _issued_at, _annotations, _loopspec_hash, _presence, _evidence, _decision,
    _source_sha_resolved, _source_sha_expected, _plan_hash_current, _artifact_hashes,
    _package_hash, _reviewers_keys, _reviewer_snapshots, _reviewer_verdicts,
    _independent_evidence, _decision_matches_verdicts, _authority, _scope_digest,
)
"""The record rules :func:`quick_accept` answers for, in table order."""

_QUICK_COVERS_TABLE = tuple(rule.check for rule in RECORD_RULES) == _QUICK_COVERED
"""False as soon as the table gains, loses or reorders a rule: every record then takes it."""

_APPROVE_BOTH = (("model_a", "approve"), ("model_b", "approve"))


def _filled(value: Any) -> bool:
    """A string that shows something (what rules 7 and 20 ask of a value)."""
    if not isinstance(value, str):
        return False
    if value.isascii() and value.isprintable():  # visible_text() is the identity
        return bool(value.strip())
    return not is_blank(value)


_NORMALISED: dict[str, str] = {}
_NORMALISED_MAX = 4096


def _normalised(ref: str) -> str:
    """:func:`normalise_evidence_ref`, remembered by the exact text (most tasks cite the same
    few file names); at most :data:`_NORMALISED_MAX` texts are kept."""
    out = _NORMALISED.get(ref)
    if out is None:
        out = normalise_evidence_ref(ref)
        if len(_NORMALISED) < _NORMALISED_MAX:
            _NORMALISED[ref] = out
    return out


def quick_accept(
    record: dict[str, Any],
    snapshot: TaskSnapshot,
    package: PackageState,
    expected_sha: str | None,
    source: SourceResolution | None,
) -> Result | None:
    """The ACCEPTED result of a c3-prime record that every record rule passes, else None.

    The usual record, decided without the table's per-rule lists: each test
    below is one rule's passing condition (or a stricter one), so an answer
    here is the table's own answer (``_verify_c3_prime``) with the same facts.
    None means "not shown here": the caller runs the full table, which decides
    and names every reason. Only for an unsigned check (no authority) and the
    package of this very snapshot; tests compare both on valid and invalid records.
    """
    keys = record.keys()
    # Rules 1-3 and 9: only allowed keys (none starts with "_"), every required one.
    if not (keys <= c.RECORD_ALLOWED_KEYS and keys >= c.RECORD_REQUIRED_SET):
        return None
    fields = {key: record[key] for key in _STRING_FIELDS}  # all required
    for value in fields.values():  # rule 4
        if not isinstance(value, str):
            return None
    task_id = fields["task_id"]
    if task_id != snapshot.task_id or not is_task_id(task_id):  # rule 5
        return None
    if fields["phase"] != c.PHASE or fields["decision"] != "AUTO_APPROVED":  # rules 6, 13
        return None
    for key in _NON_EMPTY_FIELDS:  # rule 7 (all required)
        if not _filled(record[key]):
            return None
    if not is_utc_timestamp(fields["issued_at"]):  # rule 8
        return None
    if "derived_loopspec_hash" in record and not is_digest(record["derived_loopspec_hash"]):
        return None  # rule 10
    if package.presence or package.evidence_reasons:  # rules 11, 12
        return None
    # Rules 14, 15: resolved to one full id, equal to the expected one when given.
    if source is None or source.full_sha is None or not is_source_sha(fields["source_sha"]):
        return None
    if expected_sha is not None and source.full_sha != expected_sha:
        return None
    if fields["plan_hash"] != package.plan_hash:  # rule 16 (the plan is readable: no presence)
        return None
    if "scope_digest" in record and record["scope_digest"] != _current_scope_digest(snapshot):
        return None  # rule 29: the recorded scope digest is the current scope's
    # Rules 17, 18: the recorded map equals the current one, whose six values are
    # digests of the files, and the recorded package hash is the current one,
    # computed from that same map.
    current = package.artifact_hashes
    recorded = record["artifact_hashes"]
    if not (
        isinstance(recorded, dict)
        and current.keys() == ARTIFACT_SET
        and recorded == current
        and package.plan_package_hash is not None
        and fields["plan_package_hash"] == package.plan_package_hash
    ):
        return None
    reviewers = record["reviewers"]  # rules 19-23
    if not isinstance(reviewers, dict) or reviewers.keys() != c.REVIEWER_SET:
        return None
    for model in c.REVIEWERS:
        snap = reviewers[model]
        if not isinstance(snap, dict) or snap.keys() != c.SNAPSHOT_KEY_SET:
            return None
        if snap["verdict"] != "approve":
            return None
        for key in c.TRIO_KEYS:
            if snap[key] != record[key]:
                return None
        # The trio equals top-level strings shown above to be digests or hex ids
        # (filled), the verdict is "approve": only the evidence ref is left.
        if not _filled(snap["evidence_ref"]):
            return None
    if _normalised(reviewers["model_a"]["evidence_ref"]) == _normalised(
        reviewers["model_b"]["evidence_ref"]
    ):
        return None
    return Result(ACCEPTED, (), _facts_of(
        snapshot, package, fields, record, source_full=source.full_sha,
        expected_sha=expected_sha, verdicts=dict(_APPROVE_BOTH), authority=None,
    ))


def _verify_c3_prime(ck: _Check) -> Result:
    reasons: list[Reason] = []
    for rule in RECORD_RULES:
        reasons.extend(rule.check(ck))
    facts = _facts(ck)
    if not reasons:
        return Result(ACCEPTED, (), facts)
    if [r.code for r in reasons] == [DECISION_ONLY_CODE] and (
        ck.fields["decision"] == "HUMAN_ESCALATED"
    ):
        return Result(HUMAN_ESCALATED, tuple(reasons), facts)
    return Result(REJECTED, tuple(reasons), facts)


def _facts(ck: _Check) -> dict[str, Any]:
    return _facts_of(ck.snapshot, ck.package, ck.fields, ck.record, source_full=ck.source_full,
                     expected_sha=ck.expected_sha, verdicts=ck.verdicts, authority=ck.authority)


def _facts_of(
    snapshot: TaskSnapshot, package: PackageState, fields: Mapping[str, str | None],
    record: dict[str, Any], *, source_full: str | None, expected_sha: str | None,
    verdicts: dict[str, str], authority: ApprovalAuthority | None,
) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "kind": "c3-prime",
        "task_dir": snapshot.task_id,
        "task_id": fields["task_id"],
        "decision": fields["decision"],
        "source_sha": fields["source_sha"],
        "plan_hash": fields["plan_hash"],
        "plan_package_hash": fields["plan_package_hash"],
        "record": record,
        "artifact_hashes": dict(package.artifact_hashes),
        "current_plan_hash": package.plan_hash,
        "current_plan_package_hash": package.plan_package_hash,
    }
    if source_full is not None:
        facts["source_sha_full"] = source_full
    facts["expected_sha"] = expected_sha
    facts["reviewer_verdicts"] = verdicts
    facts["authority"] = authority.summary() if authority is not None else "unauthenticated"
    return facts


def decision_only(result: Result) -> bool:
    """True when a c3-prime record's only failing rule is its decision."""
    return result.codes == (DECISION_ONLY_CODE,)
