"""The ledger's banner, the timeline and the denials: pure functions over verified entries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from plangate.hooks.decision import DOCTOR_PROBE, PROBE_FIELD
from plangate.report.model import (
    Count,
    Denials,
    DenialView,
    Entry,
    LedgerFacts,
    LedgerView,
    Timeline,
    clip,
    text_of,
    texts_of,
)

CHECKPOINT_KINDS = ("ledger_checkpoint",)
"""Kinds whose newest entry is named in the banner (its signature is not checked here)."""

HOOK_DENY = "DENY"
EXEC_ACCEPTED_RESULTS = ("ACCEPTED", "NO_CHANGES")
TOP = 10
"""How many codes, paths and subjects the denial summaries list."""


def ledger_view(facts: LedgerFacts) -> LedgerView:
    """The banner: verification result and the newest checkpoint entry."""
    checkpoint = None
    for entry in reversed(facts.entries):
        if entry.kind in CHECKPOINT_KINDS:
            checkpoint = (
                f"entry {entry.seq} ({entry.kind}) at {entry.at}, {entry.entry_hash}; "
                "its signature is not checked by this report"
            )
            break
    return LedgerView(
        verified=facts.verified,
        verdict=facts.verdict,
        location=clip(facts.location),
        entries=facts.entries_checked,
        head_hash=facts.head_hash,
        first_bad_seq=facts.first_bad_seq,
        reasons=facts.reasons,
        checkpoint=checkpoint,
    )


def in_window(entries: Iterable[Entry], since: str | None, tasks: Sequence[str]) -> list[Entry]:
    """Entries at or after the day ``since`` and, when ``tasks`` are named, about them."""
    wanted = frozenset(tasks)
    out = []
    for entry in entries:
        if since is not None and entry.at[:10] < since:
            continue
        about = (entry.subject, text_of(entry.payload, "task_id"))
        if wanted and not wanted.intersection(about):
            continue
        out.append(entry)
    return out


def _ranked(counter: Counter[str], limit: int = TOP) -> tuple[Count, ...]:
    ordered = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    return tuple(Count(label, count) for label, count in ordered[:limit])


def timeline(entries: Sequence[Entry]) -> Timeline:
    """Entries per kind per day."""
    counts: Counter[tuple[str, str]] = Counter((e.at[:10], e.kind) for e in entries)
    per_kind: Counter[str] = Counter(e.kind for e in entries)
    return Timeline(
        days=tuple(sorted({day for day, _kind in counts})),
        kinds=tuple(sorted(per_kind)),
        counts=dict(counts),
        per_kind=_ranked(per_kind, limit=len(per_kind)),
        total=len(entries),
    )


def _denial(entry: Entry) -> DenialView | None:
    """The refusal an entry records, or None when it records none."""
    payload = entry.payload
    if entry.kind == "hook_decision":
        if text_of(payload, "verdict") != HOOK_DENY:
            return None
        return DenialView(
            entry.seq,
            entry.at,
            entry.kind,
            clip(entry.subject),
            text_of(payload, "tool", "?"),
            texts_of(payload, "codes"),
            texts_of(payload, "targets"),
        )
    if entry.kind == "exec_refused":
        return DenialView(
            entry.seq,
            entry.at,
            entry.kind,
            clip(entry.subject),
            "exec",
            texts_of(payload, "reasons"),
            (),
        )
    if entry.kind == "exec_result":
        verdict = text_of(payload, "verdict")
        if verdict in EXEC_ACCEPTED_RESULTS:
            return None
        codes = texts_of(payload, "reasons") or ((verdict,) if verdict else ("UNRECORDED",))
        return DenialView(
            entry.seq,
            entry.at,
            entry.kind,
            clip(entry.subject),
            "exec",
            codes,
            texts_of(payload, "changed"),
        )
    return None


def is_probe(entry: Entry) -> bool:
    """A hook decision ``plangate doctor`` made with a canary, as marked when it was recorded."""
    return entry.kind == "hook_decision" and entry.payload.get(PROBE_FIELD) == DOCTOR_PROBE


def denials(entries: Sequence[Entry]) -> Denials:
    """Hook and exec refusals, by reason code, by path and by task; doctor's probes apart."""
    probes = sum(1 for e in entries if is_probe(e))
    rows = [d for d in (_denial(e) for e in entries if not is_probe(e)) if d is not None]
    by_code: Counter[str] = Counter()
    by_path: Counter[str] = Counter()
    by_subject: Counter[str] = Counter()
    for row in rows:
        by_code.update(row.codes or ("(no code recorded)",))
        by_path.update(row.paths)
        by_subject[row.subject] += 1
    return Denials(
        tuple(rows), _ranked(by_code), _ranked(by_path), _ranked(by_subject), probes
    )
