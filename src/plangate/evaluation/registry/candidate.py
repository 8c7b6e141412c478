"""Harness improvement candidates (docs/evaluation-formats.md section 4).

A candidate declares one hypothesis, the components it targets, the paths it
may change (``allowed_paths``, a declaration only), its commit and the digest
of an evaluation plan registered earlier. It carries digests only: never the
plan, the baseline identity or the protected surfaces: the evaluator reads those
from its own ledger and the baseline commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plangate.canonical import digest, is_digest
from plangate.errors import InputRejected
from plangate.evaluation.registry.plan import load_document
from plangate.paths import PathRejected, validate_pattern
from plangate.shapes import is_full_sha

SCHEMA_VERSION = "1"
MAX_CANDIDATE_BYTES = 1_000_000

OPERATIONS: tuple[str, ...] = (
    "CREATE",
    "UPDATE",
    "SPLIT",
    "MERGE",
    "DEPRECATE",
    "REMOVE_FROM_FLOW",
    "SIMPLIFY",
)

CANDIDATE_KEYS: tuple[str, ...] = (
    "schema_version",
    "candidate_id",
    "hypothesis",
    "operation",
    "target_components",
    "allowed_paths",
    "candidate_commit",
    "evaluation_plan_digest",
    "changes_evaluation_harness",
)


class CandidateRejected(InputRejected):
    """A candidate is refused."""


def _bad(
    code: str, message: str, hint: str = "see docs/evaluation-formats.md"
) -> CandidateRejected:
    return CandidateRejected(code, message, hint)


EXCLUDE = "!"
"""An ``allowed_paths`` item starting with ``!`` excludes the paths its pattern matches."""
ANYWHERE = "protected-anywhere"
"""``!protected-anywhere`` excludes every protected pattern that starts with ``**/`` (a file
protected wherever it appears, such as ``**/CLAUDE.md`` or ``**/.claude/**``). Protected
authority at a fixed place (``eval/**``) is never excluded by it: name it explicitly."""


def split_scope(allowed: list[str]) -> tuple[list[str], list[str]]:
    """(included patterns, excluded patterns) of a checked ``allowed_paths`` list (pure)."""
    included = [p for p in allowed if not p.startswith(EXCLUDE)]
    excluded = [p[len(EXCLUDE) :] for p in allowed if p.startswith(EXCLUDE)]
    return included, excluded


def check_allowed_paths(value: object) -> list[str]:
    """Return ``value`` if it is a non-empty list of canonical, unique glob patterns.

    An item ``!PATTERN`` excludes what PATTERN matches (at least one item must
    include). Raises ``CANDIDATE_ALLOWED_PATHS_EMPTY`` or
    ``CANDIDATE_ALLOWED_PATHS_MALFORMED``. Used by registration and again by the
    policy gate (pure).
    """
    if not isinstance(value, list) or not value:
        raise _bad(
            "CANDIDATE_ALLOWED_PATHS_EMPTY",
            "allowed_paths must be a non-empty list (an empty scope is never 'all clear')",
            "list the glob patterns the candidate may change",
        )
    out: list[str] = []
    for index, item in enumerate(value):
        negated = isinstance(item, str) and item.startswith(EXCLUDE)
        if item == EXCLUDE + ANYWHERE:
            out.append(item)
            continue
        try:
            pattern = validate_pattern(item[len(EXCLUDE) :] if negated else item)
            out.append(EXCLUDE + pattern if negated else pattern)
        except PathRejected as exc:
            raise _bad(
                "CANDIDATE_ALLOWED_PATHS_MALFORMED",
                f"allowed_paths[{index}]: {exc.code}: {exc.message}",
                exc.hint,
            ) from None
    if len(set(out)) != len(out):
        raise _bad("CANDIDATE_ALLOWED_PATHS_MALFORMED", "allowed_paths lists a pattern twice", "")
    if not split_scope(out)[0]:
        raise _bad(
            "CANDIDATE_ALLOWED_PATHS_EMPTY",
            "allowed_paths only excludes (every item starts with '!'): the scope is empty",
            "list at least one pattern the candidate may change",
        )
    return out


def validate_candidate_object(
    doc: Mapping[str, Any], *, check_scope: bool = True, as_written: bool = False
) -> dict[str, Any]:
    """Validate a candidate mapping and return its normalised form (pure).

    ``check_scope=False`` passes ``allowed_paths`` through unchecked: the policy
    gate reads a stored candidate that way so that a malformed scope reaches
    its own documented step (and verdict) instead of a lookup error.
    ``as_written=True`` reads a candidate file, which may leave out
    ``evaluation_plan_digest``: the evaluator selects the plan at registration
    and the registered form always names it.
    """
    unknown = sorted(set(doc) - set(CANDIDATE_KEYS))
    if unknown:
        raise _bad(
            "CANDIDATE_UNKNOWN_KEY",
            f"candidate has unknown key(s) {', '.join(unknown)}",
            "a candidate carries digests only: no plan, baseline identity or protected surfaces",
        )
    for key in CANDIDATE_KEYS:
        if as_written and key == "evaluation_plan_digest" and doc.get(key) is None:
            continue
        if key not in doc or doc[key] is None:
            raise _bad("CANDIDATE_ITEM_MISSING", f"candidate lacks {key!r}", f"add {key}")
    if doc["schema_version"] != SCHEMA_VERSION:
        raise _bad("CANDIDATE_INVALID", 'schema_version must be the string "1"')
    for key in ("candidate_id", "hypothesis"):
        if not isinstance(doc[key], str) or not doc[key].strip():
            raise _bad("CANDIDATE_INVALID", f"{key} must be a non-empty string")
    if doc["operation"] not in OPERATIONS:
        raise _bad("CANDIDATE_INVALID", f"operation must be one of {', '.join(OPERATIONS)}")
    targets = doc["target_components"]
    if (
        not isinstance(targets, list)
        or not targets
        or not all(isinstance(t, str) and t.strip() for t in targets)
        or len(set(targets)) != len(targets)
    ):
        raise _bad("CANDIDATE_INVALID", "target_components must be a non-empty list of unique ids")
    allowed = check_allowed_paths(doc["allowed_paths"]) if check_scope else doc["allowed_paths"]
    commit = doc["candidate_commit"]
    if not isinstance(commit, str) or not is_full_sha(commit):
        raise _bad("CANDIDATE_INVALID", "candidate_commit must be a full lowercase commit id")
    named_plan = doc.get("evaluation_plan_digest")
    if named_plan is not None and not is_digest(named_plan):
        raise _bad("CANDIDATE_INVALID", "evaluation_plan_digest must be a sha256: digest")
    if not isinstance(doc["changes_evaluation_harness"], bool):
        raise _bad(
            "CANDIDATE_INVALID",
            "changes_evaluation_harness must be true or false (an explicit declaration)",
        )
    normalised = {
        "schema_version": SCHEMA_VERSION,
        "candidate_id": doc["candidate_id"],
        "hypothesis": doc["hypothesis"],
        "operation": doc["operation"],
        "target_components": list(targets),
        "allowed_paths": list(allowed) if isinstance(allowed, list) else allowed,
        "candidate_commit": commit,
        "evaluation_plan_digest": named_plan,
        "changes_evaluation_harness": doc["changes_evaluation_harness"],
    }
    if named_plan is None:
        del normalised["evaluation_plan_digest"]
    return normalised


def parse_candidate(data: bytes, source: str = "candidate") -> dict[str, Any]:
    """Parse candidate bytes (YAML or JSON) into its normalised form (pure)."""
    if len(data) > MAX_CANDIDATE_BYTES:
        raise _bad("CANDIDATE_INVALID", f"{source} is larger than {MAX_CANDIDATE_BYTES} bytes")
    return validate_candidate_object(load_document(data, source), as_written=True)


def candidate_digest(candidate: Mapping[str, Any]) -> str:
    """Canonical digest of the normalised candidate object."""
    return digest(dict(candidate))
