"""Each task as exec would judge it now, its approval, scope, runs and delivery: pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from plangate.canonical import canonical_text
from plangate.report.model import (
    MAX_LIST,
    Entry,
    RunLogFacts,
    RunView,
    TaskFacts,
    TaskLedger,
    TaskView,
    clip,
    int_of,
    text_of,
    texts_of,
)

EXEC_KINDS = ("exec_started", "exec_unisolated", "exec_result", "exec_ended", "exec_refused")
"""Ledger kinds that tell a task's runs."""

RUN_LOG_EVENTS = ("exec_started", "exec_ended")
"""Run-log events that have a ledger twin (the line without ``event`` and ``at``)."""

DELIVERY_KIND = "delivery_transition"
"""The kind whose ``entry_id`` anchors a task's delivery record."""

_HOLDS = "ACCEPTED"


def plan_title(plan: bytes | None) -> str:
    """The first ``# `` heading of ``plan.md`` (clipped), or ``""``."""
    if not plan:
        return ""
    text = plan[:65536].decode("utf-8", "replace")
    for line in text.splitlines():
        if line.startswith("# "):
            return clip(line[2:].strip(), 200)
    return ""


def _approval(facts: Mapping[str, Any]) -> tuple[str, bool]:
    """Who approved, as verified: the signer, or why nobody is named."""
    authority = facts.get("authority")
    if isinstance(authority, Mapping):
        signer = authority.get("approved_by")
        if isinstance(signer, str) and signer:
            return clip(signer, 200), True
        return "no verified signer", False
    return "unauthenticated (no trust root requires signatures)", False


def _state(verdict: str, holds: bool) -> str:
    if holds:
        return "holds: exec would run"
    if verdict == "HUMAN_ESCALATED":
        return "escalated: a human must decide"
    return "does not hold: exec would refuse"


class _Run:
    """A run being assembled from its ledger entries."""

    def __init__(self, seq: int, at: str, program: str) -> None:
        self.seq, self.at, self.program = seq, at, program
        self.isolation = "not recorded"
        self.outcome = "started; no end recorded"
        self.refused = False
        self.codes: tuple[str, ...] = ()

    def view(self) -> RunView:
        return RunView(
            self.seq, self.at, self.program, self.isolation, self.outcome, self.refused, self.codes
        )


def _apply_result(run: _Run, payload: Mapping[str, Any]) -> None:
    backend = text_of(payload, "backend", "a sandbox")
    run.isolation = f"isolated ({backend})"
    verdict = text_of(payload, "verdict", "UNRECORDED")
    if verdict == "ACCEPTED":
        branch = text_of(payload, "branch", "?")
        moved = payload.get("fast_forwarded") is True
        run.outcome = f"applied: branch {branch}" + (" (fast-forwarded)" if moved else "")
    elif verdict == "NO_CHANGES":
        run.outcome = "no changes"
    else:
        run.refused = True
        run.codes = texts_of(payload, "reasons")
        run.outcome = f"refused ({verdict}): nothing reached the repository"


def _apply_end(run: _Run, payload: Mapping[str, Any]) -> None:
    code = int_of(payload, "exit_code")
    post = text_of(payload, "post_verdict")
    drift = texts_of(payload, "drift")
    ended = f"exit {code}" if code is not None else "no exit code"
    if drift:
        ended += "; drift: " + ", ".join(drift)
    if post and post != _HOLDS:
        ended += f"; after the run the approval was {post}"
    if run.outcome.startswith("started"):
        run.outcome = "ended: " + ended
    else:
        run.outcome += "; " + ended


class RunTally:
    """The runs told by one task's exec entries, assembled one entry at a time."""

    __slots__ = ("current", "runs")

    def __init__(self) -> None:
        self.runs: list[_Run] = []
        self.current: _Run | None = None

    def add(self, entry: Entry) -> None:
        """Take one of the task's entries (a kind that tells no run is passed over)."""
        payload = entry.payload
        if entry.kind == "exec_refused":
            refused = _Run(entry.seq, entry.at, "")
            refused.isolation = "never started"
            refused.refused = True
            refused.codes = texts_of(payload, "reasons")
            refused.outcome = f"refused before start ({text_of(payload, 'verdict', '?')})"
            self.runs.append(refused)
        elif entry.kind == "exec_started":
            self.current = _Run(entry.seq, entry.at, text_of(payload, "program", "?"))
            self.runs.append(self.current)
        elif self.current is None:
            return
        elif entry.kind == "exec_unisolated":
            self.current.isolation = "not isolated (a human opted out)"
        elif entry.kind == "exec_result":
            _apply_result(self.current, payload)
        elif entry.kind == "exec_ended":
            _apply_end(self.current, payload)
            self.current = None

    def result(self) -> tuple[RunView, ...]:
        """The runs, oldest first."""
        return tuple(run.view() for run in self.runs)


def runs(entries: Iterable[Entry]) -> list[RunView]:
    """The runs told by one task's exec entries, oldest first."""
    tally = RunTally()
    for entry in entries:
        if entry.kind in EXEC_KINDS:
            tally.add(entry)
    return list(tally.result())


def run_log_twins(log: RunLogFacts) -> frozenset[str]:
    """Canonical texts of the ledger payloads the run log's lines should have."""
    return frozenset(t for t in (_ledger_twin(line) for line in log.lines) if t is not None)


class TaskTally:
    """One listed task's ledger entries, taken one at a time: its runs, which of its
    run-log lines have a ledger twin (``twins``: what to look for) and the ids of its
    delivery transitions."""

    __slots__ = ("delivery_ids", "matched", "run_tally", "twins")

    def __init__(self, twins: frozenset[str] = frozenset()) -> None:
        self.twins = twins
        self.run_tally = RunTally()
        self.matched: set[str] = set()
        self.delivery_ids: list[str] = []

    def add(self, entry: Entry) -> None:
        """Take one entry whose subject is the task."""
        kind = entry.kind
        if kind in EXEC_KINDS:
            self.run_tally.add(entry)
            if kind in RUN_LOG_EVENTS and self.twins:
                text = canonical_text(dict(entry.payload))
                if text in self.twins:
                    self.matched.add(text)
        elif kind == DELIVERY_KIND:
            self.delivery_ids.append(str(entry.payload.get("entry_id")))

    def result(self) -> TaskLedger:
        """What the ledger says about the task."""
        return TaskLedger(
            self.run_tally.result(), frozenset(self.matched), tuple(self.delivery_ids)
        )


def _ledger_twin(line: Mapping[str, Any]) -> str | None:
    """Canonical text of the ledger payload a run-log line should have (None: no twin)."""
    if line.get("event") not in RUN_LOG_EVENTS:
        return None
    try:
        return canonical_text({k: v for k, v in line.items() if k not in ("event", "at")})
    except (TypeError, ValueError):
        return None


def run_log_note(facts: TaskFacts, matched: frozenset[str], ledger_ok: bool) -> tuple[str, bool]:
    """How the task's ``run.ndjson`` compares with the verified ledger: (note, verified).

    ``matched``: the canonical texts of the run-log lines that have a ledger twin."""
    log = facts.run_log
    if log.problem is not None:
        return f"run.ndjson unreadable: {log.problem.code}: {clip(log.problem.message)}", False
    if not log.present:
        return "no run.ndjson", True
    if not ledger_ok:
        return (
            f"run.ndjson: {len(log.lines)} line(s), unverified (the ledger does not verify)"
        ), False
    unmatched = sum(1 for line in log.lines if _ledger_twin(line) not in matched)
    if unmatched:
        return (
            f"run.ndjson: {unmatched} of {len(log.lines)} line(s) have no matching ledger "
            "entry: unverified"
        ), False
    return f"run.ndjson: {len(log.lines)} line(s), each matches its ledger entry", True


def _delivery(facts: TaskFacts) -> tuple[str, str, bool]:
    """(state, note, verified) of the task's delivery record."""
    record = facts.delivery
    if record.problem is not None:
        return ("record invalid", f"{record.problem.code}: {clip(record.problem.message)}", False)
    states = [row for row in record.rows if row.get("kind") == "state"]
    ready = [row for row in record.rows if row.get("kind") == "merge_ready"]
    if not record.present or not states:
        return "no delivery record", "", True
    last = states[-1]
    state = text_of(last, "state", "?")
    if ready and ready[-1] is record.rows[-1]:
        state = "MERGE_READY"
    pr = int_of(last, "pr_number")
    note = f"PR #{pr}, " if pr is not None else ""
    note += f"{len(record.rows)} row(s), last at {text_of(record.rows[-1], 'at', '?')}"
    verified = record.anchor == "anchored"
    if not verified:
        detail = f": {clip(record.anchor_detail)}" if record.anchor_detail else ""
        note += f"; unverified: {record.anchor}{detail}"
    return state, note, verified


def task_view(facts: TaskFacts, ledger: TaskLedger | None) -> TaskView:
    """One task's view from its facts and what the verified ledger says about it (None:
    the ledger does not verify)."""
    holds = facts.verdict == _HOLDS
    record = facts.facts.get("record")
    approved_by, authenticated = _approval(facts.facts)
    ledger_ok = ledger is not None
    run_views = ledger.runs if ledger is not None else ()
    runs_note = "" if ledger_ok else "not shown: the ledger does not verify"
    matched = ledger.run_log_matched if ledger is not None else frozenset()
    log_note, log_ok = run_log_note(facts, matched, ledger_ok)
    state, delivery_note, delivery_ok = _delivery(facts)
    source = text_of(facts.facts, "source_sha_full") or text_of(facts.facts, "source_sha")
    return TaskView(
        task_id=facts.task_id,
        title=facts.title,
        holds=holds,
        state=_state(facts.verdict, holds),
        reasons=facts.reasons,
        decision=text_of(facts.facts, "decision", "no record"),
        source_sha=source or "-",
        issued_at=text_of(record, "issued_at", "-"),
        approved_by=approved_by,
        authenticated=authenticated,
        declared_by=text_of(record, "issued_by", "-"),
        scope=tuple(clip(p) for p in facts.scope_patterns or ())[:MAX_LIST],
        scope_denied=tuple(clip(p) for p in facts.scope_denied)[:MAX_LIST],
        scope_problem=clip(facts.scope_problem),
        runs=run_views,
        runs_note=runs_note,
        run_log_note=log_note,
        run_log_verified=log_ok,
        delivery_state=state,
        delivery_note=delivery_note,
        delivery_verified=delivery_ok,
    )
