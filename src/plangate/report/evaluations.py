"""Per candidate: Policy Verdict, paired outcomes, known mutants, independence, decision (pure).

Read from the ledger entries the evaluation commands write (subject: the
candidate digest); the newest entry of each kind counts. A field of the wrong
shape is named as a problem of the candidate, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from plangate.report.model import (
    MAX_LIST,
    Entry,
    EvaluationView,
    FixturePair,
    clip,
    int_of,
    reasons_of,
    text_of,
    texts_of,
)

KIND_CANDIDATE = "eval_candidate_registered"
KIND_GATE = "eval_gate_verdict"
KIND_EXPERIMENT = "eval_experiment_result"
KIND_DECISION = "eval_promotion_decision"
EVALUATION_KINDS = (KIND_CANDIDATE, KIND_GATE, KIND_EXPERIMENT, KIND_DECISION)
"""The kinds a candidate's evaluation is told by (subject: the candidate digest)."""


def _side(fixture: Mapping[str, Any], side: str) -> tuple[int, int] | None:
    counts = fixture.get(side)
    completed, stopped = int_of(counts, "completed"), int_of(counts, "stopped")
    if completed is None or stopped is None:
        return None
    return completed, stopped


def _fixtures(experiment: Mapping[str, Any], problems: list[str]) -> tuple[FixturePair, ...]:
    value = experiment.get("fixtures")
    if not isinstance(value, list):
        problems.append("the experiment result lists no fixtures")
        return ()
    pairs = []
    for item in value[:MAX_LIST]:
        base = _side(item, "baseline") if isinstance(item, Mapping) else None
        cand = _side(item, "candidate") if isinstance(item, Mapping) else None
        if base is None or cand is None:
            problems.append("a fixture of the experiment result has no paired counts")
            continue
        pairs.append(
            FixturePair(
                text_of(item, "id", "?"),
                text_of(item, "role", "?"),
                base[0],
                base[1],
                cand[0],
                cand[1],
            )
        )
    return tuple(pairs)


def _grounds(independence: object) -> tuple[str, ...]:
    records = independence.get("records") if isinstance(independence, Mapping) else None
    if not isinstance(records, list):
        return ()
    out = []
    for record in records[:MAX_LIST]:
        level, why = text_of(record, "level", "?"), text_of(record, "why")
        counted = isinstance(record, Mapping) and record.get("counted") is True
        out.append(f"{level}: {why}" + ("" if counted else " (not counted)"))
    return tuple(out)


def evaluation(digest: str, newest: Mapping[str, Entry], seqs: Sequence[int]) -> EvaluationView:
    """One candidate's view from the newest entry of each kind about it and the ``seqs`` of
    all of them (oldest first)."""
    problems: list[str] = []
    candidate = newest.get(KIND_CANDIDATE)
    gate = newest.get(KIND_GATE)
    experiment_entry = newest.get(KIND_EXPERIMENT)
    decision_entry = newest.get(KIND_DECISION)
    doc = candidate.payload.get("candidate") if candidate else None
    experiment = experiment_entry.payload.get("experiment") if experiment_entry else None
    if experiment_entry is not None and not isinstance(experiment, Mapping):
        problems.append(f"entry {experiment_entry.seq}: the experiment result is malformed")
    experiment = experiment if isinstance(experiment, Mapping) else {}
    detection = experiment.get("detection", {})
    independence = experiment.get("independence", {})
    record = decision_entry.payload.get("decision_record") if decision_entry else None
    fixtures = _fixtures(experiment, problems) if experiment_entry is not None else ()
    executed = record.get("production_promotion_executed") if isinstance(record, Mapping) else None
    decision_id = text_of(decision_entry.payload, "candidate_id") if decision_entry else ""
    return EvaluationView(
        candidate_digest=clip(digest),
        candidate_id=text_of(doc, "candidate_id") or decision_id or "?",
        hypothesis=text_of(doc, "hypothesis"),
        policy_verdict=text_of(gate.payload, "verdict", "?") if gate else "no gate verdict",
        policy_reasons=reasons_of(gate.payload, "reasons") if gate else (),
        fixtures=fixtures,
        mutants=texts_of(detection, "known_mutants"),
        baseline_detected=frozenset(texts_of(detection, "baseline_detected")),
        candidate_detected=frozenset(texts_of(detection, "candidate_detected")),
        independence=text_of(independence, "observed", "-"),
        independence_required=text_of(independence, "required", "-"),
        independence_grounds=_grounds(independence),
        decision=(
            text_of(decision_entry.payload, "decision", "?") if decision_entry else "no decision"
        ),
        decision_reasons=reasons_of(record, "reasons"),
        promotion_executed="yes" if executed is True else "no" if executed is False else "-",
        seqs=tuple(seqs),
        problems=tuple(problems),
    )


class EvaluationTally:
    """Per candidate, in order of its first entry: its newest entry of each evaluation kind
    and the ``seq`` of every one, gathered one entry at a time."""

    __slots__ = ("newest", "seqs")

    def __init__(self) -> None:
        self.newest: dict[str, dict[str, Entry]] = {}
        self.seqs: dict[str, list[int]] = {}

    def add(self, entry: Entry) -> None:
        """Take one entry (any kind but the evaluation kinds is passed over)."""
        if entry.kind not in EVALUATION_KINDS:
            return
        self.newest.setdefault(entry.subject, {})[entry.kind] = entry
        self.seqs.setdefault(entry.subject, []).append(entry.seq)

    def result(self) -> tuple[EvaluationView, ...]:
        """Every candidate seen, in order of its first entry."""
        return tuple(
            evaluation(subject, newest, self.seqs[subject])
            for subject, newest in self.newest.items()
        )


def evaluations(entries: Iterable[Entry]) -> tuple[EvaluationView, ...]:
    """Every candidate with evaluation entries, in order of its first entry."""
    tally = EvaluationTally()
    for entry in entries:
        tally.add(entry)
    return tally.result()
