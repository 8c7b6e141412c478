"""Strict validation of the pull-request snapshot that ``delivery assess`` judges.

The snapshot is what a trusted collector observed about one pull request: its
head commit, the checks and the review at that commit, the review findings and
their dispositions, the changed files, the mergeable state and a few flags.
:func:`parse_snapshot` checks it against an allowlist contract and lists
*every* problem it finds (``DELIVERY_SNAPSHOT_INVALID``, exit 2); nothing is
repaired or guessed.

The contract errs on the failing side:

- unknown keys are refused at every level (strict contract);
- commit ids (``head_sha``, ``checks[].sha``, ``review.sha``, conflict
  resolution SHAs) must be *full* object ids: "only checks at the head count"
  is an equality test, and an abbreviation cannot be compared for equality;
- duplicate finding ids and duplicate ``(name, sha)`` checks are refused
  (``check_summary`` is a name -> conclusion map and must not collide);
- ``source_sha_ancestry`` is accepted so that collectors which send it still
  validate, but it is never authority: delivery measures ancestry with git;
- ``allowed_paths`` is optional; the scope that decides is the LoopSpec scope
  derived from the approved ``plan.md``. When a snapshot states it anyway it
  must name the same set of patterns (see :mod:`plangate.delivery.machine`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plangate.canonical import StrictJSONError, strict_loads_object
from plangate.errors import UsageError
from plangate.shapes import is_full_sha, is_short_sha, is_task_id

SNAPSHOT_RULE = "invalid_snapshot"
"""The first delivery rule: a snapshot that violates its contract is refused while it is
parsed (``DELIVERY_SNAPSHOT_INVALID``, exit 2), before the machine runs."""

MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024
"""Size bound of one snapshot file (4 MiB)."""


MERGEABLE_VALUES = ("MERGEABLE", "CONFLICTING", "UNKNOWN")
SEVERITIES = ("critical", "major", "minor", "info")
DISPOSITION_KINDS = ("adopted", "rejected")

FAILED_CONCLUSIONS = frozenset(
    {"failure", "cancelled", "timed_out", "action_required", "startup_failure"}
)
PENDING_CONCLUSIONS = frozenset({"pending", "queued", "in_progress"})
PASSING_CONCLUSIONS = frozenset({"success", "neutral", "skipped"})
"""Check conclusions that do not block. Anything outside the three sets is unknown."""

REQUIRED_KEYS = (
    "task_id",
    "pr_number",
    "head_sha",
    "mergeable",
    "checks",
    "review",
    "findings",
    "changed_files",
    "escalation_flags",
    "dod_evaluated",
)
OPTIONAL_KEYS = (
    "allowed_paths",
    "conflict_resolution",
    "ci_failure_taxonomy",
    "source_sha_ancestry",
)
_CHECK_KEYS = frozenset({"name", "sha", "conclusion"})
_REVIEW_KEYS = frozenset({"state", "sha"})
_FINDING_KEYS = frozenset({"id", "finding_type", "severity", "disposition"})
_DISPOSITION_KEYS = frozenset({"kind", "repair_commit", "evidence_ref"})
_CONFLICT_KEYS = ("base_sha", "head_sha", "result_sha")
MAX_TEXT = 512


class SnapshotInvalid(UsageError):
    """The snapshot violates its contract; ``problems`` lists every violation."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            "DELIVERY_SNAPSHOT_INVALID",
            "the PR snapshot is malformed: " + "; ".join(self.problems),
            "fix the snapshot (see docs/delivery.md and schemas/delivery-snapshot.schema.json)",
        )


@dataclass(frozen=True)
class Check:
    """One check run as the collector saw it."""

    name: str
    sha: str
    conclusion: str


@dataclass(frozen=True)
class Disposition:
    """How a finding was handled: adopted with a repair commit, or rejected with evidence."""

    kind: str
    repair_commit: str
    evidence_ref: str

    @property
    def resolved(self) -> bool:
        """Adopted with a repair commit, or rejected with an evidence reference."""
        if self.kind == "adopted":
            return bool(self.repair_commit)
        return self.kind == "rejected" and bool(self.evidence_ref)

    def to_json(self) -> dict[str, str]:
        """The disposition as it appears in records (empty fields omitted)."""
        out = {"kind": self.kind}
        if self.repair_commit:
            out["repair_commit"] = self.repair_commit
        if self.evidence_ref:
            out["evidence_ref"] = self.evidence_ref
        return out


@dataclass(frozen=True)
class Finding:
    """One review finding."""

    id: str
    finding_type: str
    severity: str
    disposition: Disposition | None

    @property
    def resolved(self) -> bool:
        """True when the disposition resolves the finding."""
        return self.disposition is not None and self.disposition.resolved


@dataclass(frozen=True)
class ConflictResolution:
    """A recorded conflict resolution; complete only when all three SHAs are given."""

    base_sha: str
    head_sha: str
    result_sha: str

    @property
    def complete(self) -> bool:
        """All three commits named."""
        return bool(self.base_sha and self.head_sha and self.result_sha)


@dataclass(frozen=True)
class PRSnapshot:
    """A validated PR snapshot, beside the exact bytes it was parsed from."""

    raw: bytes
    task_id: str
    pr_number: int
    head_sha: str
    mergeable: str
    checks: tuple[Check, ...]
    review_state: str
    review_sha: str
    findings: tuple[Finding, ...]
    changed_files: tuple[str, ...]
    allowed_paths: tuple[str, ...] | None
    escalation_flags: tuple[str, ...]
    dod_evaluated: bool
    conflict_resolution: ConflictResolution | None
    ci_failure_taxonomy: str | None
    claimed_ancestry: bool | None

    def checks_at_head(self) -> tuple[Check, ...]:
        """Checks run on the head commit; checks of older commits are stale and ignored."""
        return tuple(c for c in self.checks if c.sha == self.head_sha)

    @property
    def review_ok(self) -> bool:
        """The review approved exactly the head commit."""
        return self.review_state == "approved" and self.review_sha == self.head_sha


def _is_text(value: object, *, allow_empty: bool = False) -> bool:
    if not isinstance(value, str):
        return False
    if not value and not allow_empty:
        return False
    return len(value) <= MAX_TEXT and not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


class _Collector:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, message: str) -> None:
        self.problems.append(message)

    def unknown_keys(self, obj: dict[str, Any], allowed: frozenset[str], where: str) -> None:
        extra = sorted(set(obj) - allowed)
        if extra:
            self.add(f"{where}: unknown key(s) {', '.join(extra)}")

    def full_sha(self, value: object, where: str, *, allow_empty: bool = False) -> str:
        if allow_empty and value == "":
            return ""
        if isinstance(value, str) and is_full_sha(value):
            return value
        self.add(f"{where}: must be a full lowercase commit id (40 or 64 hex), got {_short(value)}")
        return ""


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_snapshot_bytes(data: bytes) -> PRSnapshot:
    """Parse and validate snapshot bytes; raise :class:`SnapshotInvalid` listing every problem."""
    try:
        obj = strict_loads_object(data, "PR snapshot")
    except StrictJSONError as exc:
        raise SnapshotInvalid([f"{exc.code}: {exc.message}"]) from None
    return parse_snapshot(obj, raw=data)


def parse_snapshot(obj: dict[str, Any], *, raw: bytes = b"") -> PRSnapshot:
    """Validate an already-parsed snapshot object (see the module docstring).

    Every field rule of :data:`_FIELD_RULES` runs, in order, and adds its problems;
    the snapshot is built only when there are none.
    """
    c = _Collector()
    for key in REQUIRED_KEYS:
        if key not in obj:
            c.add(f"required key missing: {key}")
    c.unknown_keys(obj, frozenset(REQUIRED_KEYS + OPTIONAL_KEYS), "snapshot")
    fields: dict[str, Any] = {}
    for rule in _FIELD_RULES:
        fields.update(rule(obj, c))
    if c.problems:
        raise SnapshotInvalid(c.problems)
    return PRSnapshot(raw=raw, **fields)


def _task_id(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    task_id = obj.get("task_id")
    if "task_id" in obj and not (isinstance(task_id, str) and is_task_id(task_id)):
        c.add(f"task_id: must be TASK- and four digits, got {_short(task_id)}")
    return {"task_id": str(task_id)}


def _pr_number(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    pr_number = obj.get("pr_number")
    valid = isinstance(pr_number, int) and not isinstance(pr_number, bool) and pr_number >= 1
    if "pr_number" in obj and not valid:
        c.add(
            "pr_number: must be a positive integer, got "
            f"{_type_name(pr_number)} {_short(pr_number)}"
        )
    return {"pr_number": pr_number if valid else 0}


def _head_sha(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    return {"head_sha": c.full_sha(obj.get("head_sha"), "head_sha") if "head_sha" in obj else ""}


def _mergeable(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    mergeable = obj.get("mergeable")
    if "mergeable" in obj and mergeable not in MERGEABLE_VALUES:
        c.add(f"mergeable: must be one of {', '.join(MERGEABLE_VALUES)}, got {_short(mergeable)}")
    return {"mergeable": str(mergeable)}


def _checks(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    raw_checks = obj.get("checks")
    if "checks" in obj and not isinstance(raw_checks, list):
        c.add(f"checks: must be an array, got {_type_name(raw_checks)}")
    checks: list[Check] = []
    seen: set[tuple[str, str]] = set()
    for index, item in enumerate(raw_checks if isinstance(raw_checks, list) else []):
        check = _check(item, f"checks[{index}]", c)
        if check is None:
            continue
        if (check.name, check.sha) in seen:
            c.add(f"checks[{index}]: duplicate check {check.name!r} at {check.sha[:12]}")
        seen.add((check.name, check.sha))
        checks.append(check)
    return {"checks": tuple(checks)}


def _check(item: object, where: str, c: _Collector) -> Check | None:
    """One check run, or None after recording its problems."""
    if not isinstance(item, dict):
        c.add(f"{where}: must be an object, got {_type_name(item)}")
        return None
    c.unknown_keys(item, _CHECK_KEYS, where)
    missing = [k for k in ("name", "sha", "conclusion") if k not in item]
    if missing:
        c.add(f"{where}: required key missing: {', '.join(missing)}")
        return None
    name, conclusion = item["name"], item["conclusion"]
    if not _is_text(name):
        c.add(f"{where}.name: must be a non-empty string without control characters")
    if not _is_text(conclusion):
        c.add(f"{where}.conclusion: must be a non-empty string")
    sha = c.full_sha(item["sha"], f"{where}.sha")
    if _is_text(name) and _is_text(conclusion) and sha:
        return Check(name, sha, conclusion)
    return None


def _review(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    review_state, review_sha = "", ""
    review = obj.get("review")
    if "review" in obj and not isinstance(review, dict):
        c.add(f"review: must be an object, got {_type_name(review)}")
    elif isinstance(review, dict):
        c.unknown_keys(review, _REVIEW_KEYS, "review")
        if "state" not in review or not _is_text(review.get("state")):
            c.add("review.state: required non-empty string")
        else:
            review_state = review["state"]
        if "sha" not in review:
            c.add("review.sha: required")
        else:
            review_sha = c.full_sha(review["sha"], "review.sha")
    return {"review_state": review_state, "review_sha": review_sha}


def _findings(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    return {"findings": tuple(_parse_findings(obj, c))}


def _paths(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    changed: list[str] = []
    if "changed_files" in obj:
        changed = _string_list(obj["changed_files"], "changed_files", c, unique=True)
    allowed: tuple[str, ...] | None = None
    if "allowed_paths" in obj:
        allowed = tuple(_string_list(obj["allowed_paths"], "allowed_paths", c, unique=True))
    return {"changed_files": tuple(changed), "allowed_paths": allowed}


def _flags(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    flags: list[str] = []
    if "escalation_flags" in obj:
        flags = _string_list(obj["escalation_flags"], "escalation_flags", c, unique=False)
    dod = obj.get("dod_evaluated")
    if "dod_evaluated" in obj and not isinstance(dod, bool):
        c.add(f"dod_evaluated: must be true or false, got {_type_name(dod)}")
    return {"escalation_flags": tuple(flags), "dod_evaluated": bool(dod)}


def _conflict_resolution(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    raw_cr = obj.get("conflict_resolution")
    if raw_cr is None:
        return {"conflict_resolution": None}
    if not isinstance(raw_cr, dict):
        c.add(f"conflict_resolution: must be an object or null, got {_type_name(raw_cr)}")
        return {"conflict_resolution": None}
    c.unknown_keys(raw_cr, frozenset(_CONFLICT_KEYS), "conflict_resolution")
    values = []
    for key in _CONFLICT_KEYS:
        value = raw_cr.get(key, "")
        if value is None:
            value = ""
        values.append(c.full_sha(value, f"conflict_resolution.{key}", allow_empty=True))
    return {"conflict_resolution": ConflictResolution(*values)}


def _claims(obj: dict[str, Any], c: _Collector) -> dict[str, Any]:
    taxonomy = obj.get("ci_failure_taxonomy")
    if taxonomy is not None and not _is_text(taxonomy):
        c.add("ci_failure_taxonomy: must be a non-empty string or null")
    claimed = obj.get("source_sha_ancestry")
    if claimed is not None and not isinstance(claimed, bool):
        c.add(f"source_sha_ancestry: must be true, false or null, got {_type_name(claimed)}")
    return {
        "ci_failure_taxonomy": taxonomy if isinstance(taxonomy, str) else None,
        "claimed_ancestry": claimed if isinstance(claimed, bool) else None,
    }


_FIELD_RULES: tuple[Callable[[dict[str, Any], _Collector], dict[str, Any]], ...] = (
    _task_id,
    _pr_number,
    _head_sha,
    _mergeable,
    _checks,
    _review,
    _findings,
    _paths,
    _flags,
    _conflict_resolution,
    _claims,
)
"""The field rules in the order their problems are listed."""


def _string_list(value: object, where: str, c: _Collector, *, unique: bool) -> list[str]:
    if not isinstance(value, list):
        c.add(f"{where}: must be an array of strings, got {_type_name(value)}")
        return []
    out: list[str] = []
    for index, item in enumerate(value):
        # Paths are judged later (a non-canonical path is a plan deviation);
        # here only the JSON type and length are checked.
        if not isinstance(item, str) or not item or len(item) > 4096:
            c.add(f"{where}[{index}]: must be a non-empty string")
            continue
        if unique and item in out:
            c.add(f"{where}[{index}]: duplicate entry {_short(item)}")
            continue
        out.append(item)
    return out


def _parse_findings(obj: dict[str, Any], c: _Collector) -> list[Finding]:
    raw = obj.get("findings")
    if "findings" not in obj:
        return []
    if not isinstance(raw, list):
        c.add(f"findings: must be an array, got {_type_name(raw)}")
        return []
    findings: list[Finding] = []
    ids: set[str] = set()
    for index, item in enumerate(raw):
        where = f"findings[{index}]"
        if not isinstance(item, dict):
            c.add(f"{where}: must be an object, got {_type_name(item)}")
            continue
        c.unknown_keys(item, _FINDING_KEYS, where)
        missing = [k for k in ("id", "finding_type", "severity", "disposition") if k not in item]
        if missing:
            c.add(f"{where}: required key missing: {', '.join(missing)}")
            continue
        ok = True
        fid, ftype, severity = item["id"], item["finding_type"], item["severity"]
        if not _is_text(fid):
            c.add(f"{where}.id: must be a non-empty string")
            ok = False
        elif fid in ids:
            c.add(f"{where}.id: duplicate finding id {fid!r}")
            ok = False
        if not _is_text(ftype):
            c.add(f"{where}.finding_type: must be a non-empty string")
            ok = False
        if severity not in SEVERITIES:
            c.add(
                f"{where}.severity: must be one of {', '.join(SEVERITIES)}, got {_short(severity)}"
            )
            ok = False
        disposition = _parse_disposition(item["disposition"], f"{where}.disposition", c)
        if disposition is False:
            ok = False
        if ok:
            ids.add(fid)
            findings.append(
                Finding(
                    fid,
                    ftype,
                    severity,
                    disposition if isinstance(disposition, Disposition) else None,
                )
            )
    return findings


def _parse_disposition(value: object, where: str, c: _Collector) -> Disposition | bool | None:
    """The disposition, None for ``null``, or False after recording a problem."""
    if value is None:
        return None
    if not isinstance(value, dict):
        c.add(f"{where}: must be an object or null, got {_type_name(value)}")
        return False
    before = len(c.problems)
    c.unknown_keys(value, _DISPOSITION_KEYS, where)
    kind = value.get("kind")
    if kind not in DISPOSITION_KINDS:
        c.add(f"{where}.kind: must be one of {', '.join(DISPOSITION_KINDS)}, got {_short(kind)}")
    repair = value.get("repair_commit", "")
    if repair is None:
        repair = ""
    # A non-string (false, 0, [], {}) is refused, never stringified: str(False) is
    # "False", a truthy text that would have resolved the finding.
    if not isinstance(repair, str) or (repair and not is_short_sha(repair)):
        c.add(f"{where}.repair_commit: must be a commit id (7-64 lowercase hex), empty or null")
    evidence = value.get("evidence_ref", "")
    if evidence is None:
        evidence = ""
    if not _is_text(evidence, allow_empty=True):
        c.add(f"{where}.evidence_ref: must be a string without control characters")
    if len(c.problems) != before:
        return False
    return Disposition(str(kind), str(repair), str(evidence))
