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
from collections.abc import Iterator
from typing import Any

from plangate.canonical import is_digest
from plangate.paths import is_canonical_path

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


def _kind_detail_list(value: object, where: str, problems: list[str]) -> None:
    if not isinstance(value, list):
        problems.append(f"{where}: must be an array")
        return
    for index, item in enumerate(value):
        if (
            not isinstance(item, dict)
            or set(item) != {"kind", "detail"}
            or not _text(item["kind"])
            or not isinstance(item["detail"], str)
        ):
            problems.append(f"{where}[{index}]: must be {{kind, detail}} strings")


def structure_problems(doc: dict[str, Any]) -> list[str]:
    """Every structural violation of the EV contract in ``doc`` (empty = well-formed)."""
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

    def check(key: str, ok: bool, what: str) -> None:
        if key in doc and not ok:
            problems.append(f"{key}: {what}")

    check(
        "run_id",
        isinstance(doc.get("run_id"), str) and bool(RUN_ID_RE.fullmatch(doc.get("run_id", ""))),
        "1-128 of A-Z a-z 0-9 . _ : -",
    )
    check(
        "task_id",
        isinstance(doc.get("task_id"), str) and bool(TASK_RE.fullmatch(doc.get("task_id", ""))),
        "TASK-0000",
    )
    for key in ("started_at", "completed_at"):
        value = doc.get(key)
        check(
            key, isinstance(value, str) and bool(TIME_RE.fullmatch(value)), "YYYY-MM-DDTHH:MM:SSZ"
        )
    started, completed = doc.get("started_at"), doc.get("completed_at")
    if (
        isinstance(started, str)
        and isinstance(completed, str)
        and TIME_RE.fullmatch(started)
        and TIME_RE.fullmatch(completed)
        and started > completed
    ):
        problems.append("started_at: later than completed_at (the producer refuses this)")
    repo = doc.get("repository")
    check(
        "repository",
        isinstance(repo, str) and bool(REPOSITORY_RE.fullmatch(repo)),
        "a repository name without owner or '/'",
    )
    sha = doc.get("source_sha")
    check(
        "source_sha",
        isinstance(sha, str) and bool(SOURCE_SHA_RE.fullmatch(sha)),
        "7-40 lowercase hex",
    )
    head = doc.get("final_head_sha")
    check(
        "final_head_sha",
        head == UNAVAILABLE or (isinstance(head, str) and bool(COMMIT_RE.fullmatch(head))),
        "a full commit id or 'unavailable'",
    )
    check("plan_hash", is_digest(doc.get("plan_hash")), "sha256:<64 hex>")
    ref = doc.get("c3_prime_decision_ref")
    check(
        "c3_prime_decision_ref",
        isinstance(ref, dict)
        and set(ref) == {"path", "plan_package_hash"}
        and is_canonical_path(ref["path"])
        and is_digest(ref["plan_package_hash"]),
        "exactly {path (repository-relative), plan_package_hash}",
    )
    hv = doc.get("harness_version")
    check(
        "harness_version",
        isinstance(hv, dict)
        and set(hv) == set(HARNESS_KEYS)
        and isinstance(hv["plugin_version"], str)
        and bool(VERSION_TEXT_RE.fullmatch(hv["plugin_version"]))
        and isinstance(hv["cli_version"], str)
        and bool(VERSION_TEXT_RE.fullmatch(hv["cli_version"]))
        and is_digest(hv["corpus_hash"]),
        "exactly {plugin_version, cli_version, corpus_hash (sha256)}",
    )
    routing = doc.get("routing_decisions")
    check(
        "routing_decisions",
        routing == UNAVAILABLE or isinstance(routing, list),
        "an array or 'unavailable'",
    )
    ci = doc.get("ci_outcomes")
    check(
        "ci_outcomes",
        ci == UNAVAILABLE
        or (
            isinstance(ci, list)
            and all(
                isinstance(i, dict)
                and set(i) == {"name", "conclusion"}
                and _text(i["name"])
                and _text(i["conclusion"])
                for i in ci
            )
        ),
        "an array of {name, conclusion} or 'unavailable'",
    )
    findings = doc.get("review_findings")
    check(
        "review_findings",
        findings == UNAVAILABLE
        or (
            isinstance(findings, list)
            and all(
                isinstance(i, dict)
                and set(i) == {"id", "disposition"}
                and _text(i["id"])
                and _text(i["disposition"])
                for i in findings
            )
        ),
        "an array of {id, disposition} strings or 'unavailable'",
    )
    for key in ("repair_rounds", "replan_count"):
        value = doc.get(key)
        check(
            key,
            value == UNAVAILABLE or (isinstance(value, int) and _is_int(value) and value >= 0),
            "an integer >= 0 or 'unavailable'",
        )
    if "human_interventions" in doc and doc["human_interventions"] != UNAVAILABLE:
        _kind_detail_list(doc["human_interventions"], "human_interventions", problems)
    check(
        "terminal_state",
        doc.get("terminal_state") in TERMINAL_STATES,
        f"one of {', '.join(TERMINAL_STATES)}",
    )
    qm = doc.get("quality_metrics")
    check(
        "quality_metrics",
        qm == UNAVAILABLE
        or (
            isinstance(qm, dict)
            and set(qm) == {"first_pass", "rounds"}
            and isinstance(qm["first_pass"], bool)
            and _is_int(qm["rounds"])
            and qm["rounds"] >= 1
        ),
        "{first_pass, rounds} or 'unavailable'",
    )
    cost = doc.get("cost_metrics")
    check(
        "cost_metrics", cost == UNAVAILABLE or isinstance(cost, dict), "an object or 'unavailable'"
    )
    refs = doc.get("evidence_refs")
    check(
        "evidence_refs",
        isinstance(refs, list) and bool(refs) and all(is_canonical_path(r) for r in refs),
        "a non-empty array of repository-relative paths",
    )
    check(
        "schema_version", doc.get("schema_version") == SCHEMA_VERSION, f"must be {SCHEMA_VERSION!r}"
    )
    check("observation", isinstance(doc.get("observation"), str), "a string")
    check(
        "cause_hypothesis",
        doc.get("cause_hypothesis") is None or isinstance(doc.get("cause_hypothesis"), str),
        "a string or null",
    )
    if "escalation" in doc:
        _kind_detail_list(doc["escalation"], "escalation", problems)
    return problems


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
