"""The page model of a report and the facts it is built from: plain immutable data.

Every string here is shown as text (the renderers escape it). A value taken from
a record or a ledger entry is picked by name and type-checked by the helpers at
the bottom; anything else in the payload never reaches the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plangate.ledger.chain import LedgerEntry
from plangate.records import NamedTuple
from plangate.verdict import Reason

MAX_TEXT = 400
"""Longest string a report shows from a record or an entry (longer ones are cut, marked)."""
MAX_LIST = 50
"""Most items a report shows from one list field (the rest are counted, not shown)."""
MAX_DENIAL_ROWS = 500
"""Refusals listed one by one (the newest); every refusal is counted in the summaries."""

# -- the facts the service hands over ----------------------------------------------


Entry = LedgerEntry
"""A ledger entry of a chain that verified (payload parsed), as the ledger hands it on."""


@dataclass(frozen=True)
class LedgerFacts:
    """The ledger as read once: its verification and, only when it verified, its figures."""

    verdict: str
    """``INTACT``, ``TAMPERED`` or ``UNAVAILABLE``."""
    reasons: tuple[Reason, ...]
    location: str
    entries_checked: int
    head_hash: str | None
    first_bad_seq: int | None
    figures: LedgerFigures | None = None
    """What the report shows of the entries: None unless the verdict is ``INTACT``."""

    @property
    def verified(self) -> bool:
        """True only for a chain that verified."""
        return self.verdict == "INTACT"


@dataclass(frozen=True)
class RunLogFacts:
    """A task's ``run.ndjson`` as read: its lines parsed, or why it could not be read."""

    lines: tuple[Mapping[str, Any], ...] = ()
    problem: Reason | None = None
    present: bool = False


@dataclass(frozen=True)
class DeliveryFacts:
    """A task's delivery record as read and checked against the ledger."""

    rows: tuple[Mapping[str, Any], ...] = ()
    anchor: str = "anchored"
    """``anchored`` / ``unanchored`` / ``partially_anchored`` / ``mismatch``."""
    anchor_detail: str = ""
    problem: Reason | None = None
    present: bool = False


@dataclass(frozen=True)
class TaskFacts:
    """One task as the service read it: the acceptor's verdict now, scope, runs, delivery."""

    task_id: str
    verdict: str
    """The verdict of the approval at HEAD under exec's policy (``ACCEPTED`` when it holds)."""
    reasons: tuple[Reason, ...]
    facts: Mapping[str, Any]
    title: str = ""
    """The plan's first heading (shown as text, whatever it holds)."""
    scope_patterns: tuple[str, ...] | None = None
    scope_denied: tuple[str, ...] = ()
    scope_problem: str = ""
    run_log: RunLogFacts = field(default_factory=RunLogFacts)
    delivery: DeliveryFacts = field(default_factory=DeliveryFacts)


@dataclass(frozen=True)
class ReportInputs:
    """Everything a report is built from (read by the service, decided by pure code)."""

    repository: str
    generated_at: str
    ledger: LedgerFacts
    tasks: tuple[TaskFacts, ...]
    since: str | None = None
    """``YYYY-MM-DD``: ledger figures count only entries at or after this day."""
    task_filter: tuple[str, ...] = ()
    head: str | None = None
    head_problem: Reason | None = None


# -- the page model --------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerView:
    """The banner at the top: the chain's verification and its newest checkpoint."""

    verified: bool
    verdict: str
    location: str
    entries: int
    head_hash: str | None
    first_bad_seq: int | None
    reasons: tuple[Reason, ...]
    checkpoint: str | None
    """A line on the newest checkpoint entry, or None when the ledger has none."""


@dataclass(frozen=True)
class RunView:
    """One exec run of a task, from its ledger entries."""

    seq: int
    at: str
    program: str
    isolation: str
    outcome: str
    refused: bool
    codes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskView:
    """One task's row and details."""

    task_id: str
    title: str
    holds: bool
    state: str
    reasons: tuple[Reason, ...]
    decision: str
    source_sha: str
    issued_at: str
    approved_by: str
    """The verified signer, or a sentence saying the approval is unauthenticated."""
    authenticated: bool
    declared_by: str
    """What the record itself names as issuer: never verified by itself."""
    scope: tuple[str, ...]
    scope_denied: tuple[str, ...]
    scope_problem: str
    runs: tuple[RunView, ...]
    runs_note: str
    run_log_note: str
    run_log_verified: bool
    delivery_state: str
    delivery_note: str
    delivery_verified: bool


@dataclass(frozen=True)
class Count:
    """A label and how often it occurred."""

    label: str
    count: int


@dataclass(frozen=True)
class Timeline:
    """Ledger entries per kind per day (days oldest first, kinds by name)."""

    days: tuple[str, ...]
    kinds: tuple[str, ...]
    counts: Mapping[tuple[str, str], int]
    per_kind: tuple[Count, ...]
    total: int


class DenialView(NamedTuple):
    """One refused action, linked to its ledger entry."""

    seq: int
    at: str
    kind: str
    subject: str
    tool: str
    codes: tuple[str, ...]
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Denials:
    """Hook and exec refusals, aggregated."""

    rows: tuple[DenialView, ...]
    """The newest refusals, oldest first (at most ``MAX_DENIAL_ROWS`` of them)."""
    total: int
    """Every refusal counted, listed in ``rows`` or not."""
    by_code: tuple[Count, ...]
    by_path: tuple[Count, ...]
    by_subject: tuple[Count, ...]
    probes: int = 0
    """Decisions ``plangate doctor`` marked as its probes: counted apart, never as refusals."""


@dataclass(frozen=True)
class FixturePair:
    """Paired outcomes of one fixture: baseline and candidate side by side."""

    fixture: str
    role: str
    baseline_completed: int
    baseline_stopped: int
    candidate_completed: int
    candidate_stopped: int


@dataclass(frozen=True)
class EvaluationView:
    """One candidate's evaluation, from its ledger entries."""

    candidate_digest: str
    candidate_id: str
    hypothesis: str
    policy_verdict: str
    policy_reasons: tuple[Reason, ...]
    fixtures: tuple[FixturePair, ...]
    mutants: tuple[str, ...]
    baseline_detected: frozenset[str]
    candidate_detected: frozenset[str]
    independence: str
    independence_required: str
    independence_grounds: tuple[str, ...]
    decision: str
    decision_reasons: tuple[Reason, ...]
    promotion_executed: str
    seqs: tuple[int, ...]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """The whole page."""

    repository: str
    generated_at: str
    since: str | None
    task_filter: tuple[str, ...]
    head: str
    ledger: LedgerView
    tasks: tuple[TaskView, ...]
    timeline: Timeline | None
    denials: Denials | None
    evaluations: tuple[EvaluationView, ...] | None
    withheld: str
    """Why ledger figures are not shown (empty when they are)."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskLedger:
    """What the verified ledger says about one listed task (all its entries, no window)."""

    runs: tuple[RunView, ...] = ()
    run_log_matched: frozenset[str] = frozenset()
    """Canonical texts of the task's run-log lines that have a ledger twin."""
    delivery_ids: tuple[str, ...] = ()
    """``entry_id`` of each of the task's ``delivery_transition`` entries, oldest first."""


@dataclass(frozen=True)
class LedgerFigures:
    """The ledger part of a report, computed in one pass over a verified chain."""

    checkpoint: str | None
    """A line on the newest checkpoint entry, or None when the ledger has none."""
    timeline: Timeline
    denials: Denials
    evaluations: tuple[EvaluationView, ...]
    """Empty when the report is limited to tasks (evaluations are not part of it)."""
    tasks: Mapping[str, TaskLedger]
    """Per listed task (every entry of the ledger, whatever the window)."""


# -- picking known fields -------------------------------------------------------------


def clip(value: str, limit: int = MAX_TEXT) -> str:
    """``value`` cut to ``limit`` characters (marked), control characters made visible."""
    shown = value if value.isprintable() else "".join(
        ch if ch.isprintable() else f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
        for ch in value
    )
    if len(shown) > limit:
        return shown[:limit] + " [...]"
    return shown


def text_of(mapping: object, key: str, default: str = "") -> str:
    """The string at ``key`` of ``mapping`` (clipped), else ``default``."""
    if isinstance(mapping, Mapping):
        value = mapping.get(key)
        if isinstance(value, str):
            return clip(value)
    return default


def int_of(mapping: object, key: str) -> int | None:
    """The integer at ``key`` of ``mapping`` (not a bool), else None."""
    if isinstance(mapping, Mapping):
        value = mapping.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def texts_of(mapping: object, key: str, limit: int = MAX_LIST) -> tuple[str, ...]:
    """The strings of the list at ``key`` (non-strings skipped, at most ``limit``)."""
    if isinstance(mapping, Mapping):
        value = mapping.get(key)
        if isinstance(value, list):
            return tuple(clip(v) for v in value if isinstance(v, str))[:limit]
    return ()


def reasons_of(mapping: object, key: str) -> tuple[Reason, ...]:
    """``{code, message}`` objects of the list at ``key`` as reasons (codes alone too)."""
    if not isinstance(mapping, Mapping):
        return ()
    value = mapping.get(key)
    if not isinstance(value, list):
        return ()
    out: list[Reason] = []
    for item in value[:MAX_LIST]:
        if isinstance(item, str):
            out.append(Reason(clip(item, 80), ""))
        elif isinstance(item, Mapping) and isinstance(item.get("code"), str):
            out.append(Reason(clip(item["code"], 80), text_of(item, "message")))
    return tuple(out)
