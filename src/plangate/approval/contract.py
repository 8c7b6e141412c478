"""The c3-prime contract constants (seed 004 sections 2-3), defined once."""

from __future__ import annotations

import re

RECORD_REQUIRED_KEYS: tuple[str, ...] = (
    "task_id",
    "approval_kind",
    "phase",
    "decision",
    "source_sha",
    "plan_hash",
    "plan_package_hash",
    "artifact_hashes",
    "c1_evidence_ref",
    "c2_evidence_ref",
    "reviewers",
    "policy_ref",
    "issued_at",
    "issued_by",
)
RECORD_OPTIONAL_KEYS: tuple[str, ...] = ("derived_loopspec_hash",)
RECORD_ALLOWED_KEYS = frozenset(RECORD_REQUIRED_KEYS + RECORD_OPTIONAL_KEYS)
RECORD_REQUIRED_SET = frozenset(RECORD_REQUIRED_KEYS)

APPROVAL_KIND = "c3-prime"
PHASE = "C-3'"
DECISIONS: tuple[str, ...] = ("AUTO_APPROVED", "HUMAN_ESCALATED", "BLOCKED")
VERDICTS: tuple[str, ...] = ("approve", "reject")
REVIEWERS: tuple[str, ...] = ("model_a", "model_b")
SNAPSHOT_KEYS: tuple[str, ...] = (
    "verdict",
    "plan_hash",
    "source_sha",
    "plan_package_hash",
    "evidence_ref",
)
TRIO_KEYS: tuple[str, ...] = ("plan_hash", "source_sha", "plan_package_hash")
REVIEWER_SET = frozenset(REVIEWERS)
SNAPSHOT_KEY_SET = frozenset(SNAPSHOT_KEYS)

SOURCE_SHA_RE = re.compile(r"[0-9a-f]{7,40}")
FULL_SHA_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
ISSUED_AT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")

LEGACY_PHASE = "C-3"
LEGACY_STATUSES: tuple[str, ...] = ("APPROVED", "CONDITIONAL", "REJECTED")
LEGACY_REQUIRED_KEYS: tuple[str, ...] = (
    "task_id",
    "phase",
    "c3_status",
    "approved_by",
    "approved_at",
    "plan_hash",
)
LEGACY_OPTIONAL_KEYS: tuple[str, ...] = ("conditions", "rejection_reason", "source", "gate_checks")
LEGACY_SOURCES: tuple[str, ...] = ("cli", "conversation")


_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_utc_timestamp(value: object) -> bool:
    """``YYYY-MM-DDTHH:MM:SSZ`` exactly, and a real calendar instant (no leap seconds).

    Checked by hand rather than with :mod:`datetime` to keep the verify path light.
    """
    if not isinstance(value, str) or ISSUED_AT_RE.fullmatch(value) is None:
        return False
    year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
    hour, minute, second = int(value[11:13]), int(value[14:16]), int(value[17:19])
    if year < 1 or not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 59:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS_IN_MONTH[month - 1]
    return 1 <= day <= days


def visible_text(text: str) -> str:
    """``text`` without characters a reader cannot see, compatibility-folded.

    NFKC folds look-alike forms (full-width letters, ligatures, composed vs
    decomposed accents); control (Cc) and format (Cf) characters such as
    U+200B ZERO WIDTH SPACE or U+FEFF, combining marks left without a base
    after NFKC, and blank fillers (Hangul fillers, U+2800) are removed. Plain printable ASCII, the
    usual case, is returned as is without importing :mod:`unicodedata`.
    """
    if text.isascii() and text.isprintable():
        return text
    import unicodedata  # lazy: only odd text needs it

    from plangate.plan.markers import INVISIBLE_CATEGORIES, INVISIBLE_FILLERS

    folded = unicodedata.normalize("NFKC", text)
    return "".join(
        ch
        for ch in folded
        if ch not in INVISIBLE_FILLERS and unicodedata.category(ch) not in INVISIBLE_CATEGORIES
    )


def is_blank(text: str) -> bool:
    """True when ``text`` shows nothing: empty, whitespace or invisible characters only."""
    return not visible_text(text).strip()
