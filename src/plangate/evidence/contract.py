"""The RunEvidence (EV) contract: fields, formats and a structural checker (pure).

One run -> one JSON document with all 24 keys (21 required, 3 optional in the
schema but always emitted by the producer). ``"unavailable"`` (exactly that
string) marks what could not be observed; it is never replaced by ``0``,
``""`` or ``[]`` padding. ``schemas/run-evidence.schema.json`` publishes the
same contract; :func:`structure_problems` enforces it at runtime without a
JSON Schema library (the verifier must not depend on an optional package).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from plangate.canonical import is_digest
from plangate.paths import is_canonical_path
from plangate.records import NamedTuple

UNAVAILABLE = "unavailable"
SCHEMA_VERSION = "1.0"

REQUIRED_KEYS: tuple[str, ...] = (
    "run_id",
    "task_id",
    "started_at",
    "completed_at",
    "repository",
    "source_sha",
    "final_head_sha",
    "plan_hash",
    "c3_prime_decision_ref",
    "harness_version",
    "routing_decisions",
    "ci_outcomes",
    "review_findings",
    "repair_rounds",
    "replan_count",
    "human_interventions",
    "terminal_state",
    "quality_metrics",
    "cost_metrics",
    "evidence_refs",
    "schema_version",
)
OPTIONAL_KEYS: tuple[str, ...] = ("observation", "cause_hypothesis", "escalation")
OUTPUT_KEYS: tuple[str, ...] = REQUIRED_KEYS + OPTIONAL_KEYS

TERMINAL_STATES: tuple[str, ...] = ("MERGE_READY", "HUMAN_ESCALATED", "BLOCKED")
NON_TERMINAL_STATES: tuple[str, ...] = (
    "CHECKS_FAILED",
    "CONFLICT",
    "EXEC_RETURN",
    "MERGE_READY_CANDIDATE",
    "REVIEW_REPAIR",
    "WAITING_FOR_CHECKS",
    "WAITING_FOR_REVIEW",
)
HARNESS_KEYS: tuple[str, ...] = ("plugin_version", "cli_version", "corpus_hash")

PARTIAL_ESCALATIONS = frozenset(
    {"harness_drift_unchecked", "pr_number_unverified", "delivery_record_unanchored"}
)
"""Escalation kinds that leave a binding unverified: the evidence is then partial."""

TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
TASK_RE = re.compile(r"TASK-[0-9]{4}")
SOURCE_SHA_RE = re.compile(r"[0-9a-f]{7,40}")
COMMIT_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
REPOSITORY_RE = re.compile(r"[A-Za-z0-9._-]{1,200}")
RUN_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,128}")
VERSION_TEXT_RE = re.compile(r"[A-Za-z0-9._+-]{1,128}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def _kind_detail_problems(value: object, where: str) -> list[str]:
    if not isinstance(value, list):
        return [f"{where}: must be an array"]
    return [
        f"{where}[{index}]: must be {{kind, detail}} strings"
        for index, item in enumerate(value)
        if not isinstance(item, dict)
        or set(item) != {"kind", "detail"}
        or not _text(item["kind"])
        or not isinstance(item["detail"], str)
    ]


def _matches(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and bool(pattern.fullmatch(value))


def _or_unavailable(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value == UNAVAILABLE or check(value)


def _records_of(keys: frozenset[str]) -> Callable[[Any], bool]:
    """An array of objects with exactly ``keys``, each a non-empty string."""
    return lambda value: isinstance(value, list) and all(
        isinstance(i, dict) and set(i) == keys and all(_text(i[k]) for k in keys) for i in value
    )


def _decision_ref_ok(ref: Any) -> bool:
    return (
        isinstance(ref, dict)
        and set(ref) == {"path", "plan_package_hash"}
        and is_canonical_path(ref["path"])
        and is_digest(ref["plan_package_hash"])
    )


def _harness_version_ok(hv: Any) -> bool:
    version_text = _matches(VERSION_TEXT_RE)
    return (
        isinstance(hv, dict)
        and set(hv) == set(HARNESS_KEYS)
        and version_text(hv["plugin_version"])
        and version_text(hv["cli_version"])
        and is_digest(hv["corpus_hash"])
    )


def _count_ok(value: Any) -> bool:
    return _is_int(value) and value >= 0


def _quality_ok(qm: Any) -> bool:
    return (
        isinstance(qm, dict)
        and set(qm) == {"first_pass", "rounds"}
        and isinstance(qm["first_pass"], bool)
        and _is_int(qm["rounds"])
        and qm["rounds"] >= 1
    )


def _evidence_refs_ok(refs: Any) -> bool:
    return isinstance(refs, list) and bool(refs) and all(is_canonical_path(r) for r in refs)


class FieldRule(NamedTuple):
    """One field of the contract: when present, ``ok(value)`` must hold, else ``what`` is told."""

    key: str
    ok: Callable[[Any], bool]
    what: str


FIELD_RULES: tuple[FieldRule, ...] = (
    FieldRule("run_id", _matches(RUN_ID_RE), "1-128 of A-Z a-z 0-9 . _ : -"),
    FieldRule("task_id", _matches(TASK_RE), "TASK-0000"),
    FieldRule("started_at", _matches(TIME_RE), "YYYY-MM-DDTHH:MM:SSZ"),
    FieldRule("completed_at", _matches(TIME_RE), "YYYY-MM-DDTHH:MM:SSZ"),
    FieldRule("repository", _matches(REPOSITORY_RE), "a repository name without owner or '/'"),
    FieldRule("source_sha", _matches(SOURCE_SHA_RE), "7-40 lowercase hex"),
    FieldRule("final_head_sha", _or_unavailable(_matches(COMMIT_RE)),
              "a full commit id or 'unavailable'"),
    FieldRule("plan_hash", is_digest, "sha256:<64 hex>"),
    FieldRule("c3_prime_decision_ref", _decision_ref_ok,
              "exactly {path (repository-relative), plan_package_hash}"),
    FieldRule("harness_version", _harness_version_ok,
              "exactly {plugin_version, cli_version, corpus_hash (sha256)}"),
    FieldRule("routing_decisions", _or_unavailable(lambda v: isinstance(v, list)),
              "an array or 'unavailable'"),
    FieldRule("ci_outcomes", _or_unavailable(_records_of(frozenset({"name", "conclusion"}))),
              "an array of {name, conclusion} or 'unavailable'"),
    FieldRule("review_findings", _or_unavailable(_records_of(frozenset({"id", "disposition"}))),
              "an array of {id, disposition} strings or 'unavailable'"),
    FieldRule("repair_rounds", _or_unavailable(_count_ok), "an integer >= 0 or 'unavailable'"),
    FieldRule("replan_count", _or_unavailable(_count_ok), "an integer >= 0 or 'unavailable'"),
    FieldRule("terminal_state", lambda v: v in TERMINAL_STATES,
              f"one of {', '.join(TERMINAL_STATES)}"),
    FieldRule("quality_metrics", _or_unavailable(_quality_ok),
              "{first_pass, rounds} or 'unavailable'"),
    FieldRule("cost_metrics", _or_unavailable(lambda v: isinstance(v, dict)),
              "an object or 'unavailable'"),
    FieldRule("evidence_refs", _evidence_refs_ok, "a non-empty array of repository-relative paths"),
    FieldRule("schema_version", lambda v: v == SCHEMA_VERSION, f"must be {SCHEMA_VERSION!r}"),
    FieldRule("observation", lambda v: isinstance(v, str), "a string"),
    FieldRule("cause_hypothesis", lambda v: v is None or isinstance(v, str), "a string or null"),
)
"""The per-field rules, in the order their problems are reported."""


def _key_problems(doc: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for key, value in doc.items():
        if key not in OUTPUT_KEYS:
            if not key.startswith("_"):
                problems.append(f"unknown key {key!r}")
            elif not isinstance(value, str):
                problems.append(f"annotation {key!r} must be a string")
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    if missing:
        problems.append(f"missing required key(s): {', '.join(missing)}")
    return problems


def _field_problems(doc: dict[str, Any]) -> list[str]:
    return [f"{r.key}: {r.what}" for r in FIELD_RULES if r.key in doc and not r.ok(doc[r.key])]


def _time_order_problems(doc: dict[str, Any]) -> list[str]:
    started, completed = doc.get("started_at"), doc.get("completed_at")
    in_form = _matches(TIME_RE)
    if (isinstance(started, str) and isinstance(completed, str) and in_form(started)
            and in_form(completed) and started > completed):
        return ["started_at: later than completed_at (the producer refuses this)"]
    return []


def _list_problems(doc: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if "human_interventions" in doc and doc["human_interventions"] != UNAVAILABLE:
        problems += _kind_detail_problems(doc["human_interventions"], "human_interventions")
    if "escalation" in doc:
        problems += _kind_detail_problems(doc["escalation"], "escalation")
    return problems


DOCUMENT_RULES: tuple[Callable[[dict[str, Any]], list[str]], ...] = (
    _key_problems,
    _field_problems,
    _time_order_problems,
    _list_problems,
)
"""The whole-document rules, in order: keys, each field, time order, the kind/detail lists."""


def structure_problems(doc: dict[str, Any]) -> list[str]:
    """Every structural violation of the EV contract in ``doc`` (empty = well-formed)."""
    return [problem for rule in DOCUMENT_RULES for problem in rule(doc)]


def unavailable_paths(value: Any, path: str = "") -> Iterator[str]:
    """Every path (any depth, inside lists too) whose value is ``"unavailable"``."""
    if value == UNAVAILABLE:
        yield path or "<root>"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from unavailable_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from unavailable_paths(item, f"{path}[{index}]")
