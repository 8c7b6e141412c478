"""The RunEvidence producer: one EV document per finished run, built purely.

:func:`produce` reads no file, runs no git and never reads the clock: the
service hands it the task's bytes (read once), the acceptor's outcome on those
same bytes, the delivery record's bytes and the injected values (``--now``,
``--started-at``...). It refuses (never pads) whenever a binding is not
established:

- the record must be c3-prime (legacy refuses) and verify; a record whose only
  failing rule is its decision (``C3_DECISION_NOT_APPROVED``) is accepted as
  the *source* of ``terminal_state`` (BLOCKED / HUMAN_ESCALATED);
- in every case :func:`record_binding_problems` re-checks, independently of
  the acceptor, every binding: hashes, artifacts, the package hash, the
  reviewer snapshots, verdict vocabulary and evidence independence (a
  record accepted only for its decision still has all of them checked);
- inputs carrying transcript, credential or account keys are refused;
- ``terminal_state`` follows :func:`derive_run` (MERGE_READY needs a physical
  ``merge_ready`` entry that is still the last word; no EV for a run that is
  not terminal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plangate.approval import contract as c3
from plangate.approval.acceptor import decision_only, normalise_evidence_ref
from plangate.canonical import (
    StrictJSONError,
    canonical_bytes,
    is_digest,
    sha256_digest,
    strict_loads,
    strict_loads_object,
)
from plangate.delivery.log import (
    KNOWN_KINDS,
    DeliveryRecordError,
    ledger_anchor,
    parse_record_bytes,
)
from plangate.delivery.machine import completed_rounds
from plangate.errors import UsageError
from plangate.evidence.contract import (
    HARNESS_KEYS,
    NON_TERMINAL_STATES,
    OUTPUT_KEYS,
    REPOSITORY_RE,
    RUN_ID_RE,
    SCHEMA_VERSION,
    TIME_RE,
    UNAVAILABLE,
    VERSION_TEXT_RE,
    structure_problems,
)
from plangate.evidence.privacy import find_forbidden_keys, output_problems, redact, redact_tree
from plangate.paths import is_canonical_path
from plangate.plan.package import plan_package_hash
from plangate.shapes import is_source_sha
from plangate.snapshot import ARTIFACTS
from plangate.verdict import Reason, Result

PRODUCED = "ACCEPTED"
REFUSED = "REJECTED"
NOT_TERMINAL = "INCONCLUSIVE"
MAX_TEXT = 4000


@dataclass(frozen=True)
class Injected:
    """Values the caller injects (the producer observes none of them itself)."""

    run_id: str
    started_at: str
    now: str
    repository: str
    harness_version: str
    harness_version_end: str | None = None
    routing_decisions: str | None = None
    observation: str | None = None
    cause_hypothesis: str | None = None
    evidence_refs: tuple[str, ...] = ()
    pr_number: str | None = None


@dataclass(frozen=True)
class TaskInputs:
    """The task as read once by the service, plus the acceptor's outcome on those bytes."""

    task_id: str
    record_bytes: bytes | None
    artifacts: Mapping[str, bytes | None]
    acceptor: Result
    delivery_bytes: bytes | None
    c3_path: str
    delivery_path: str
    ledger_entry_ids: tuple[str, ...] | None = None
    """Entry ids of the task's ``delivery_transition`` ledger entries (None: unreadable)."""


@dataclass(frozen=True)
class EvidenceOutcome:
    """The EV document (when produced) and the verdict with its reasons."""

    result: Result
    document: dict[str, Any] | None = None


@dataclass
class RunFacts:
    """Everything an EV states that is derived from the record and the delivery log."""

    decision: str
    terminal_state: str | None
    last_state: str | None
    final_head_sha: Any
    ci_outcomes: Any
    review_findings: Any
    repair_rounds: Any
    quality_metrics: Any
    human_interventions: list[dict[str, str]]
    pr_number: int | None
    state_reason_codes: list[str]
    unknown_kinds: list[str]
    escalations: list[tuple[str, str]] = field(default_factory=list)
    unbound_merge_ready: bool = False
    """A merge_ready entry exists for the last state but binds another approval."""


def _reason(code: str, message: str, hint: str = "") -> Reason:
    return Reason(code, message, hint)


def _refuse(reasons: Sequence[Reason], facts: Mapping[str, Any] | None = None) -> EvidenceOutcome:
    return EvidenceOutcome(Result(REFUSED, tuple(reasons), dict(facts or {})))


# --- injected values -----------------------------------------------------------


def parse_harness_version(text: str, flag: str) -> dict[str, str]:
    """``--harness-version`` JSON: exactly plugin_version, cli_version, corpus_hash."""
    try:
        doc = strict_loads_object(text.encode("utf-8"), flag)
    except StrictJSONError as exc:
        raise UsageError(
            "EVIDENCE_HARNESS_VERSION_INVALID", f"{flag}: {exc.message}", exc.hint
        ) from None
    if set(doc) != set(HARNESS_KEYS):
        raise UsageError(
            "EVIDENCE_HARNESS_VERSION_INVALID",
            f"{flag} must hold exactly {', '.join(HARNESS_KEYS)}; got {sorted(doc)}",
            '{"plugin_version": "1.2.0", "cli_version": "0.1.0", "corpus_hash": "sha256:..."}',
        )
    for key in ("plugin_version", "cli_version"):
        value = doc[key]
        if not isinstance(value, str) or not VERSION_TEXT_RE.fullmatch(value):
            raise UsageError(
                "EVIDENCE_HARNESS_VERSION_INVALID",
                f"{flag}.{key} must be 1-128 characters of A-Z a-z 0-9 . _ + -",
                "give a version string such as 1.2.0",
            )
    if not is_digest(doc["corpus_hash"]):
        raise UsageError(
            "EVIDENCE_HARNESS_VERSION_INVALID",
            f"{flag}.corpus_hash must be sha256:<64 lowercase hex>",
            "hash the corpus with the same canonical digest",
        )
    return {k: str(doc[k]) for k in HARNESS_KEYS}


def check_injected(injected: Injected) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Validate the injected values; return the parsed ones and their escalations.

    Malformed values are usage errors (exit 2); a harness version that changed
    during the run is a refusal (``EVIDENCE_HARNESS_DRIFT``, exit 1).
    """
    from plangate.clock import is_utc_timestamp

    problems = []
    if not RUN_ID_RE.fullmatch(injected.run_id):
        problems.append("--run-id must be 1-128 characters of A-Z a-z 0-9 . _ : -")
    for flag, value in (("--started-at", injected.started_at), ("--now", injected.now)):
        if not is_utc_timestamp(value):
            problems.append(f"{flag} {value!r} is not YYYY-MM-DDTHH:MM:SSZ")
    if (
        TIME_RE.fullmatch(injected.started_at)
        and TIME_RE.fullmatch(injected.now)
        and injected.started_at > injected.now
    ):
        problems.append("--started-at is later than --now")
    if not REPOSITORY_RE.fullmatch(injected.repository):
        problems.append("--repository must be the repository name without owner (no '/')")
    for ref in injected.evidence_refs:
        if not is_canonical_path(ref):
            problems.append(f"--evidence-ref {ref!r} is not a repository-relative path")
    if injected.pr_number is not None and not (
        injected.pr_number.isascii()
        and injected.pr_number.isdigit()
        and int(injected.pr_number) >= 1
    ):
        problems.append("--pr-number must be a positive integer")
    for flag, text in (
        ("--observation", injected.observation),
        ("--cause-hypothesis", injected.cause_hypothesis),
    ):
        if text is not None and (not text.strip() or len(text) > MAX_TEXT):
            problems.append(f"{flag} must be non-empty text of at most {MAX_TEXT} characters")
    if problems:
        raise UsageError(
            "EVIDENCE_INPUT_INVALID", "; ".join(problems), "fix the command-line values"
        )
    parsed: dict[str, Any] = {}
    escalations: list[tuple[str, str]] = []
    parsed["harness_version"] = parse_harness_version(injected.harness_version, "--harness-version")
    if injected.harness_version_end is None:
        escalations.append(
            (
                "harness_drift_unchecked",
                "--harness-version-end not given: drift during the run is unchecked",
            )
        )
    else:
        end = parse_harness_version(injected.harness_version_end, "--harness-version-end")
        if end != parsed["harness_version"]:
            parsed["drift"] = (parsed["harness_version"], end)
    routing: Any = UNAVAILABLE
    if injected.routing_decisions is not None:
        try:
            routing = strict_loads(injected.routing_decisions.encode("utf-8"))
        except StrictJSONError as exc:
            raise UsageError(
                "EVIDENCE_INPUT_INVALID", f"--routing-decisions: {exc.message}", exc.hint
            ) from None
        if not isinstance(routing, list):
            raise UsageError(
                "EVIDENCE_INPUT_INVALID",
                "--routing-decisions must be a JSON array",
                "pass [] when there were none",
            )
    parsed["routing_decisions"] = routing
    return parsed, escalations


# --- the record's bindings --------------------------------------------------------


def parse_record(record_bytes: bytes | None) -> dict[str, Any] | Reason:
    """The c3 record as an object, or why not."""
    if record_bytes is None:
        return _reason("EVIDENCE_RECORD_UNREADABLE", "approvals/c3.json cannot be read", "issue it")
    try:
        return strict_loads_object(record_bytes, "approvals/c3.json")
    except StrictJSONError as exc:
        return _reason("EVIDENCE_RECORD_UNREADABLE", f"approvals/c3.json: {exc.message}", exc.hint)


def record_binding_problems(
    record: Mapping[str, Any], task_id: str, artifacts: Mapping[str, bytes | None]
) -> list[Reason]:
    """Every binding of a c3-prime record re-checked against the artifact bytes (pure).

    Independent of the acceptor's reach: task binding, decision vocabulary,
    ``source_sha`` format, ``plan_hash``, each artifact hash, the package hash,
    reviewer snapshots (keys, trio), verdict vocabulary, decision/verdict
    consistency and evidence independence.
    """
    problems: list[Reason] = []

    def add(code: str, message: str) -> None:
        problems.append(_reason(code, message, "the record does not bind this task's files"))

    if record.get("approval_kind") != c3.APPROVAL_KIND:
        add("EVIDENCE_BINDING_KIND", "approval_kind is not c3-prime")
    if record.get("task_id") != task_id:
        add("EVIDENCE_BINDING_TASK", f"task_id {record.get('task_id')!r} is not {task_id}")
    decision = record.get("decision")
    if decision not in c3.DECISIONS:
        add("EVIDENCE_BINDING_DECISION", f"decision {decision!r} is not one of {c3.DECISIONS}")
    source = record.get("source_sha")
    if not (isinstance(source, str) and is_source_sha(source)):
        add("EVIDENCE_BINDING_SOURCE_SHA", "source_sha is not 7-40 lowercase hex")
    plan = artifacts.get("plan.md")
    if plan is None or record.get("plan_hash") != sha256_digest(plan):
        add(
            "EVIDENCE_BINDING_PLAN_HASH", "plan_hash does not equal the hash of the current plan.md"
        )
    hashes = record.get("artifact_hashes")
    if not isinstance(hashes, dict) or set(hashes) != set(ARTIFACTS):
        add("EVIDENCE_BINDING_ARTIFACTS", "artifact_hashes must map exactly the six artifacts")
    else:
        for name in ARTIFACTS:
            data = artifacts.get(name)
            if data is None or hashes[name] != sha256_digest(data):
                add(
                    "EVIDENCE_BINDING_ARTIFACTS", f"artifact_hashes[{name}] does not match the file"
                )
        if not all(is_digest(v) for v in hashes.values()) or record.get(
            "plan_package_hash"
        ) != plan_package_hash(hashes):
            add(
                "EVIDENCE_BINDING_PACKAGE_HASH",
                "plan_package_hash is not the hash of artifact_hashes",
            )
    reviewers = record.get("reviewers")
    if not isinstance(reviewers, dict) or set(reviewers) != set(c3.REVIEWERS):
        add("EVIDENCE_BINDING_REVIEWERS", "reviewers must hold exactly model_a and model_b")
        return problems
    refs = []
    verdicts = []
    for model in c3.REVIEWERS:
        snap = reviewers[model]
        if not isinstance(snap, dict) or set(snap) != set(c3.SNAPSHOT_KEYS):
            add(
                "EVIDENCE_BINDING_REVIEWERS",
                f"reviewers.{model} must hold exactly the five snapshot keys",
            )
            continue
        if not all(isinstance(snap[k], str) and snap[k].strip() for k in c3.SNAPSHOT_KEYS):
            add("EVIDENCE_BINDING_REVIEWERS", f"reviewers.{model} has an empty or non-string value")
            continue
        for key in c3.TRIO_KEYS:
            if snap[key] != record.get(key):
                add("EVIDENCE_BINDING_TRIO", f"reviewers.{model}.{key} differs from the top level")
        if snap["verdict"] not in c3.VERDICTS:
            add(
                "EVIDENCE_BINDING_VERDICT",
                f"reviewers.{model}.verdict {snap['verdict']!r} is not approve/reject",
            )
        verdicts.append(snap["verdict"])
        refs.append(normalise_evidence_ref(snap["evidence_ref"]))
    if len(refs) == 2 and refs[0] == refs[1]:
        add("EVIDENCE_BINDING_INDEPENDENCE", "both reviewers cite the same evidence")
    if decision == "AUTO_APPROVED" and any(v != "approve" for v in verdicts):
        add("EVIDENCE_BINDING_VERDICT", "AUTO_APPROVED with a reject verdict (tamper sign)")
    return problems


def check_record(inputs: TaskInputs) -> tuple[dict[str, Any] | None, list[Reason]]:
    """The acceptor's outcome plus the independent binding checks; refusal reasons if any."""
    outcome = inputs.acceptor
    kind = outcome.facts.get("kind")
    if kind == "legacy":
        return None, [
            _reason(
                "EVIDENCE_LEGACY_RECORD",
                "approvals/c3.json is a legacy C-3 record; RunEvidence requires c3-prime",
                "issue a c3-prime record with 'plangate c3 issue'",
            )
        ]
    if outcome.verdict != "ACCEPTED" and not decision_only(outcome):
        return None, [
            _reason(
                "EVIDENCE_RECORD_NOT_VERIFIED",
                f"the c3-prime record does not verify (acceptor verdict {outcome.verdict})",
                "fix the bindings the acceptor names; no EV is issued for an unverified record",
            ),
            *outcome.reasons,
        ]
    record = parse_record(inputs.record_bytes)
    if isinstance(record, Reason):
        return None, [record]
    problems = record_binding_problems(record, inputs.task_id, inputs.artifacts)
    if problems:
        return None, problems
    return record, []


# --- the delivery record ------------------------------------------------------------


def _disposition_text(value: object) -> str:
    """A finding disposition as a canonical string (never a Python repr).

    ``adopted:<repair_commit>``, ``rejected:<evidence_ref>``, ``unresolved``
    for null; anything else is rendered as ``other:<canonical JSON>``.
    """
    if value is None:
        return "unresolved"
    if isinstance(value, dict):
        kind = value.get("kind")
        if kind == "adopted" and isinstance(value.get("repair_commit"), str):
            return f"adopted:{value['repair_commit']}"
        if kind == "rejected" and isinstance(value.get("evidence_ref"), str):
            return f"rejected:{value['evidence_ref']}"
    return "other:" + canonical_bytes(value).decode("utf-8")


def binds_approval(merge_record: Mapping[str, Any], approval: Mapping[str, Any] | None) -> bool:
    """Does a ``merge_ready`` record bind the c3-prime record now on disk?

    ``plan_hash`` and ``plan_package_hash`` must be equal; the merge record's
    ``source_sha`` is the full id delivery resolved from the record's
    (possibly abbreviated) ``source_sha``, so the record's value must equal it
    or be its prefix. ``approval`` None (unit use without a record) binds.
    """
    if approval is None:
        return True
    source = approval.get("source_sha")
    merged_source = merge_record.get("source_sha")
    return (
        merge_record.get("plan_hash") == approval.get("plan_hash")
        and merge_record.get("plan_package_hash") == approval.get("plan_package_hash")
        and isinstance(source, str)
        and isinstance(merged_source, str)
        and len(source) >= 7
        and merged_source.startswith(source)
    )


def _interventions(
    decision: str, states: Sequence[Mapping[str, Any]], unknown: Sequence[str]
) -> list[dict[str, str]]:
    """Where a human stepped in: the decision, escalated states, unknown record kinds."""
    out: list[dict[str, str]] = []
    if decision in ("HUMAN_ESCALATED", "BLOCKED"):
        out.append({"kind": "c3_prime_decision", "detail": decision})
    out.extend(
        {"kind": "delivery_state", "detail": "HUMAN_ESCALATED"}
        for s in states
        if s["state"] == "HUMAN_ESCALATED"
    )
    out.extend({"kind": "record_notice", "detail": kind} for kind in unknown)
    return out


def _bound_merge_entry(
    entries: Sequence[Mapping[str, Any]],
    last: Mapping[str, Any] | None,
    approval: Mapping[str, Any] | None,
) -> tuple[Mapping[str, Any] | None, bool]:
    """The ``merge_ready`` entry of the last MERGE_READY state that binds ``approval``,
    and whether such entries exist but none binds it."""
    if last is None or str(last["state"]) != "MERGE_READY":
        return None, False
    candidates = [
        e
        for e in reversed(entries)
        if e.get("kind") == "merge_ready"
        and e["record"].get("pr_number") == last["pr_number"]
        and e["record"].get("head_sha") == last["head_sha"]
    ]
    entry = next((e for e in candidates if binds_approval(e["record"], approval)), None)
    return entry, bool(candidates) and entry is None


def _terminal_state(
    decision: str, last_state: str | None, merge_entry: Mapping[str, Any] | None
) -> str | None:
    """Rules 1-4 of :func:`derive_run`, first match wins."""
    if decision == "BLOCKED":
        return "BLOCKED"
    if decision == "HUMAN_ESCALATED" or last_state == "HUMAN_ESCALATED":
        return "HUMAN_ESCALATED"
    if merge_entry is not None:
        return "MERGE_READY"
    return None


def _review_findings(
    entries: Sequence[Mapping[str, Any]], record: Mapping[str, Any], pr: int
) -> list[dict[str, str]]:
    """The merge record's dispositions plus findings repaired by a recorded repair action."""
    findings = [
        {"id": fid, "disposition": _disposition_text(record["review_disposition"][fid])}
        for fid in sorted(record["review_disposition"])
    ]
    ids = {f["id"] for f in findings}
    intents = {e["action_id"]: e for e in entries if e.get("kind") == "intent"}
    for receipt in entries:
        if receipt.get("kind") != "receipt" or receipt.get("action_kind") != "repair_review":
            continue
        if receipt.get("pr_number") != pr:
            continue
        intent = intents.get(receipt["action_id"])
        finding_id = intent["payload"].get("finding_id") if intent is not None else None
        if isinstance(finding_id, str) and finding_id not in ids:
            ids.add(finding_id)
            findings.append({"id": finding_id, "disposition": "repaired"})
    return sorted(findings, key=lambda f: f["id"])


def _fill_merge_ready(
    facts: RunFacts, entries: Sequence[Mapping[str, Any]], merge_entry: Mapping[str, Any]
) -> None:
    """The delivery-derived fields of a bound MERGE_READY run."""
    record = merge_entry["record"]
    pr = int(record["pr_number"])
    facts.pr_number = pr
    facts.final_head_sha = record["head_sha"]
    facts.ci_outcomes = [
        {"name": name, "conclusion": record["check_summary"][name]}
        for name in sorted(record["check_summary"])
    ]
    facts.review_findings = _review_findings(entries, record, pr)
    rounds = completed_rounds(entries, pr)
    facts.repair_rounds = rounds
    facts.quality_metrics = {"first_pass": rounds == 0, "rounds": rounds + 1}


def derive_run(
    decision: str,
    entries: Sequence[Mapping[str, Any]],
    approval: Mapping[str, Any] | None = None,
) -> RunFacts:
    """terminal_state and the delivery-derived fields, from the decision and the log (pure).

    Rules, first match wins:

    1. decision BLOCKED -> BLOCKED (delivery never ran for it);
    2. decision HUMAN_ESCALATED, or the last ``state`` entry is HUMAN_ESCALATED
       -> HUMAN_ESCALATED;
    3. the last ``state`` entry is MERGE_READY *and* a ``merge_ready`` entry for
       that PR and head exists that binds ``approval`` (the c3-prime record on
       disk: same plan hash, package hash and source commit) -> MERGE_READY;
    4. otherwise the run is not terminal (``terminal_state`` None): no EV.
       A MERGE_READY reached under a superseded approval sets
       ``unbound_merge_ready`` (refused as ``EVIDENCE_MERGE_READY_UNBOUND``).
    """
    states = [e for e in entries if e.get("kind") == "state"]
    last = states[-1] if states else None
    last_state = str(last["state"]) if last is not None else None
    unknown = [str(e.get("kind")) for e in entries if e.get("kind") not in KNOWN_KINDS]
    codes = sorted({r["code"] for s in states for r in s.get("reasons", []) if isinstance(r, dict)})
    merge_entry, unbound = _bound_merge_entry(entries, last, approval)
    terminal = _terminal_state(decision, last_state, merge_entry)
    facts = RunFacts(
        decision=decision,
        terminal_state=terminal,
        last_state=last_state,
        final_head_sha=UNAVAILABLE,
        ci_outcomes=UNAVAILABLE,
        review_findings=UNAVAILABLE,
        repair_rounds=UNAVAILABLE,
        quality_metrics=UNAVAILABLE,
        human_interventions=_interventions(decision, states, unknown),
        pr_number=None,
        state_reason_codes=codes,
        unknown_kinds=unknown,
        unbound_merge_ready=unbound and terminal is None,
    )
    if terminal == "BLOCKED":
        return facts
    if last is not None:
        facts.final_head_sha = last["head_sha"]
        facts.pr_number = int(last["pr_number"])
    if terminal == "MERGE_READY" and merge_entry is not None:
        _fill_merge_ready(facts, entries, merge_entry)
    return facts


def _redacted(value: Any, escalations: list[tuple[str, str]]) -> Any:
    new, esc = redact_tree(value)
    escalations.extend(esc)
    return new


def bound_fields(
    inputs: TaskInputs, record: Mapping[str, Any], run: RunFacts
) -> tuple[dict[str, Any], list[str], list[tuple[str, str]]]:
    """The EV fields derived from the record and the log (redacted), the derived
    evidence refs, and the escalations the derivation raised."""
    escalations: list[tuple[str, str]] = []
    refs = [inputs.c3_path]
    if inputs.delivery_bytes is not None:
        refs.append(inputs.delivery_path)
    fields = {
        "task_id": inputs.task_id,
        "source_sha": record["source_sha"],
        "plan_hash": record["plan_hash"],
        "c3_prime_decision_ref": {
            "path": inputs.c3_path,
            "plan_package_hash": record["plan_package_hash"],
        },
        "final_head_sha": run.final_head_sha,
        "ci_outcomes": _redacted(run.ci_outcomes, escalations),
        "review_findings": _redacted(run.review_findings, escalations),
        "repair_rounds": run.repair_rounds,
        "human_interventions": _redacted(run.human_interventions, escalations),
        "terminal_state": run.terminal_state,
        "quality_metrics": run.quality_metrics,
        "schema_version": SCHEMA_VERSION,
    }
    for kind in run.unknown_kinds:
        escalations.append(("unknown_record_kind", _redacted(kind, escalations)))
    escalations.extend(run.escalations)
    return fields, refs, escalations


def load_run(inputs: TaskInputs, record: Mapping[str, Any]) -> tuple[RunFacts | None, list[Reason]]:
    """Privacy-scan the inputs, parse the delivery log and derive the run (pure)."""
    found = find_forbidden_keys(dict(record), "c3.json")
    entries: tuple[dict[str, Any], ...] = ()
    if inputs.delivery_bytes is not None:
        try:
            entries = parse_record_bytes(inputs.delivery_bytes)
        except DeliveryRecordError as exc:
            return None, [_reason(exc.code, exc.message, exc.hint)]
        for entry in entries:
            found.extend(find_forbidden_keys(entry, "record.jsonl"))
    if found:
        return None, [
            _reason(
                "EVIDENCE_INPUT_PRIVACY",
                f"inputs carry transcript, credential or account keys: {sorted(set(found))}",
                "remove them from the inputs; RunEvidence is never built from such data",
            )
        ]
    anchor = ledger_anchor(entries, inputs.ledger_entry_ids)
    if anchor.status == "mismatch":
        return None, [
            _reason(
                "EVIDENCE_RECORD_NOT_IN_LEDGER",
                f"record.jsonl disagrees with the ledger: {anchor.detail}",
                "the delivery record was edited or forged; restore it",
            )
        ]
    run = derive_run(str(record["decision"]), entries, record)
    if run.unbound_merge_ready:
        return None, [
            _reason(
                "EVIDENCE_MERGE_READY_UNBOUND",
                "the delivery record's MERGE_READY was reached under another approval "
                "(its plan_hash, plan_package_hash or source_sha differ from approvals/c3.json)",
                "assess the pull request again under the current approval "
                "('plangate delivery assess'), then produce the evidence",
            )
        ]
    if anchor.status != "anchored":
        run.escalations.append(("delivery_record_unanchored", anchor.detail))
    return run, []


def _drift_problem(parsed: Mapping[str, Any]) -> Reason | None:
    if "drift" not in parsed:
        return None
    start, end = parsed["drift"]
    return _reason(
        "EVIDENCE_HARNESS_DRIFT",
        f"the harness changed during the run: start {start}, end {end}",
        "evidence of a run must describe one harness; re-run on a fixed harness",
    )


def _routing_problem(routing: Any) -> Reason | None:
    if routing == UNAVAILABLE:
        return None
    found = find_forbidden_keys(routing, "routing_decisions")
    if not found:
        return None
    return _reason(
        "EVIDENCE_INPUT_PRIVACY",
        f"routing decisions carry transcript, credential or account keys: {found}",
        "pass only decision summaries",
    )


def _not_terminal(run: RunFacts, facts: dict[str, Any]) -> EvidenceOutcome:
    state = run.last_state or "no delivery record"
    return EvidenceOutcome(
        Result(
            NOT_TERMINAL,
            (
                _reason(
                    "EVIDENCE_RUN_NOT_TERMINAL",
                    f"the run is not terminal (last delivery state: {state}); "
                    f"non-terminal states: {', '.join(NON_TERMINAL_STATES)}",
                    "produce RunEvidence after MERGE_READY, HUMAN_ESCALATED or BLOCKED",
                ),
            ),
            facts,
        )
    )


def _pr_number_problem(
    injected: Injected, run: RunFacts, escalations: list[tuple[str, str]]
) -> Reason | None:
    """A claimed PR number must be the recorded one; unbindable claims are escalated."""
    if injected.pr_number is None:
        return None
    claimed = int(injected.pr_number)
    if run.pr_number is None:
        escalations.append(
            ("pr_number_unverified", f"--pr-number {claimed} has no delivery entry to bind")
        )
        return None
    if claimed == run.pr_number:
        return None
    return _reason(
        "EVIDENCE_PR_NUMBER_MISMATCH",
        f"--pr-number {claimed} differs from the recorded pr {run.pr_number}",
        "the PR number comes from the delivery record; drop or fix --pr-number",
    )


def _observation(injected: Injected, run: RunFacts, escalations: list[tuple[str, str]]) -> Any:
    """The given observation (redacted), or one derived from the run."""
    if injected.observation is not None:
        return _redacted(injected.observation, escalations)
    observation = f"terminal_state={run.terminal_state}; repair_rounds={run.repair_rounds}"
    if run.state_reason_codes:
        observation += "; reasons=" + ",".join(run.state_reason_codes)
    if run.unknown_kinds:
        observation += "; unknown_record_kinds=" + ",".join(
            sorted(set(_redacted(run.unknown_kinds, escalations)))
        )
    return observation


def _assemble(
    inputs: TaskInputs,
    injected: Injected,
    parsed: Mapping[str, Any],
    *,
    record: Mapping[str, Any],
    run: RunFacts,
    escalations: list[tuple[str, str]],
) -> dict[str, Any]:
    """The EV document from its checked parts (every free text redacted)."""
    fields, derived_refs, more = bound_fields(inputs, record, run)
    escalations.extend(more)
    refs = list(derived_refs)
    for ref in injected.evidence_refs:
        if ref not in refs:
            refs.append(ref)
    observation = _observation(injected, run, escalations)
    cause = (
        _redacted(injected.cause_hypothesis, escalations)
        if injected.cause_hypothesis is not None
        else None
    )
    document: dict[str, Any] = {
        "run_id": injected.run_id,
        "started_at": injected.started_at,
        "completed_at": injected.now,
        "repository": injected.repository,
        "harness_version": parsed["harness_version"],
        "routing_decisions": _redacted(parsed["routing_decisions"], escalations),
        # Phase 1 observes neither re-plans nor costs: stated, never padded.
        "replan_count": UNAVAILABLE,
        "cost_metrics": UNAVAILABLE,
        **fields,
        "evidence_refs": refs,
        "observation": observation,
        "cause_hypothesis": cause,
    }
    document["escalation"] = [
        {"kind": kind, "detail": detail} for kind, detail in sorted(set(escalations))
    ]
    return document


def _output_problem(document: dict[str, Any]) -> Reason | None:
    """The assembled document checked against its own contract (a bug guard)."""
    problems_text = structure_problems(document) + output_problems(document)
    if set(document) != set(OUTPUT_KEYS):
        problems_text.append("key set differs from the 24 output keys")
    if not problems_text:
        return None
    return _reason(
        "EVIDENCE_OUTPUT_REFUSED",
        f"the assembled evidence fails its own contract: {problems_text}",
        "this is a bug or an input that slipped past redaction; report it",
    )


def produce(inputs: TaskInputs, injected: Injected) -> EvidenceOutcome:
    """Build the EV document for one run; see the module docstring. Pure.

    Steps, each refusing on its own problem: the harness did not drift; the
    c3-prime record binds the package; routing decisions carry no forbidden key;
    the delivery log is clean and anchored; the run is terminal; a claimed PR
    number is the recorded one; the assembled document meets its own contract.
    """
    parsed, escalations = check_injected(injected)
    facts: dict[str, Any] = {"task_id": inputs.task_id, "run_id": injected.run_id}
    drift = _drift_problem(parsed)
    if drift is not None:
        return _refuse([drift], facts)
    record, problems = check_record(inputs)
    if record is None:
        return _refuse(problems, facts)
    routing = _routing_problem(parsed["routing_decisions"])
    if routing is not None:
        return _refuse([routing], facts)
    run, problems = load_run(inputs, record)
    if run is None:
        return _refuse(problems, facts)
    facts["decision"] = run.decision
    facts["last_state"] = run.last_state
    if run.terminal_state is None:
        return _not_terminal(run, facts)
    pr_problem = _pr_number_problem(injected, run, escalations)
    if pr_problem is not None:
        return _refuse([pr_problem], facts)
    document = _assemble(inputs, injected, parsed, record=record, run=run,
                         escalations=escalations)
    output = _output_problem(document)
    if output is not None:
        return _refuse([output], facts)
    facts["terminal_state"] = run.terminal_state
    return EvidenceOutcome(Result(PRODUCED, (), facts), document)


def redact_text(text: str) -> str:
    """Redacted form of one string (exposed for the verifier and tests)."""
    return redact(text)[0]
