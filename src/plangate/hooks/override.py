"""Human-only, time-boxed, path-scoped overrides (the escape hatch).

A deadlocked gate must have a way out that the agent cannot take. A grant is
written to the ledger by ``plangate override grant`` and read back by every
hook; nothing else stores it, so its history is tamper-evident.

Ledger kinds (subject = the grant id):

- ``override_granted``: ``{grant_id, patterns, expires_at, one_shot, reason, granted_by}``
- ``override_revoked``: ``{grant_id, revoked_by}``
- ``override_used``: ``{grant_id, paths}`` (a one-shot grant is spent by its first use)

What a grant can and cannot do (docs/agents.md, "Overrides"): it lifts only
``HOOK_NO_ACTIVE_TASK``, ``HOOK_OUTSIDE_SCOPE``, ``HOOK_SCOPE_UNDEFINED`` and
``HOOK_TASK_NOT_VERIFIED`` for targets its patterns match. It never unprotects
a protected surface, an ``approvals/`` file, a locked Plan Package, PlanGate's
own state, git internals or hook configuration: those are exactly what an
agent that talked a human into a broad grant would go after, and a human who
needs to change them edits them directly, outside the agent.

Refusal layers for ``grant``: stdin must be an interactive terminal, no agent
environment marker may be present (:mod:`plangate.agents`), and the human types
the confirmation word. None of them is a cryptographic proof; together they
stop an agent's tool call, which runs without a terminal and with the host's
markers in its environment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from plangate.clock import format_utc, parse_utc
from plangate.errors import UsageError
from plangate.hooks.decision import OverrideGrant
from plangate.paths import validate_pattern
from plangate.records import NamedTuple

if TYPE_CHECKING:
    from datetime import datetime

    from plangate.ledger import Ledger

KIND_GRANTED = "override_granted"
KIND_REVOKED = "override_revoked"
KIND_USED = "override_used"
OVERRIDE_KINDS = (KIND_GRANTED, KIND_REVOKED, KIND_USED)

MAX_MINUTES = 8 * 60
"""Longest grant: one working day. Longer needs a new, deliberate grant."""


class GrantRequest(NamedTuple):
    """A validated ``override grant`` request."""

    patterns: tuple[str, ...]
    minutes: int
    reason: str
    one_shot: bool


def validate_request(
    patterns: Iterable[str], minutes: int, reason: str, one_shot: bool
) -> GrantRequest:
    """Check a grant request; raise :class:`UsageError` naming the problem."""
    checked = tuple(validate_pattern(p) for p in patterns)
    if not checked:
        raise UsageError(
            "OVERRIDE_NO_PATHS",
            "an override needs at least one path pattern",
            "pass --paths GLOB...",
        )
    if any(p in ("**", "*") for p in checked):
        raise UsageError(
            "OVERRIDE_TOO_BROAD",
            "an override may not cover the whole repository",
            "name the directories or files the agent may write",
        )
    if not 1 <= minutes <= MAX_MINUTES:
        raise UsageError(
            "OVERRIDE_BAD_DURATION",
            f"--minutes must be between 1 and {MAX_MINUTES}",
            "grant a short window; grant again if needed",
        )
    if not reason.strip():
        raise UsageError(
            "OVERRIDE_NO_REASON", "an override needs a reason", "say why the gate must be bypassed"
        )
    return GrantRequest(checked, minutes, reason.strip(), one_shot)


def grant_payload(request: GrantRequest, now: datetime, granted_by: str) -> dict[str, Any]:
    """Ledger payload of a new grant (the id is random, the expiry absolute)."""
    import secrets
    from datetime import timedelta

    return {
        "grant_id": "ovr-" + secrets.token_hex(8),
        "patterns": list(request.patterns),
        "expires_at": format_utc(now + timedelta(minutes=request.minutes)),
        "granted_at": format_utc(now),
        "one_shot": request.one_shot,
        "reason": request.reason,
        "granted_by": granted_by,
    }


class GrantState(NamedTuple):
    """A grant as reconstructed from the ledger."""

    grant_id: str
    patterns: tuple[str, ...]
    expires_at: str
    one_shot: bool
    reason: str
    revoked: bool
    used: bool
    valid: bool

    def active(self, now: datetime) -> bool:
        """True when the grant may lift a denial at ``now``."""
        expiry = parse_utc(self.expires_at)
        if not self.valid or self.revoked or expiry is None or now >= expiry:
            return False
        return not (self.one_shot and self.used)

    def to_json(self, now: datetime) -> dict[str, Any]:
        """JSON form for ``override list``."""
        return {
            "grant_id": self.grant_id,
            "patterns": list(self.patterns),
            "expires_at": self.expires_at,
            "one_shot": self.one_shot,
            "reason": self.reason,
            "revoked": self.revoked,
            "used": self.used,
            "active": self.active(now),
        }


def grant_states(entries: Iterable[tuple[str, str, Mapping[str, Any]]]) -> list[GrantState]:
    """Fold ``(kind, subject, payload)`` ledger entries into grant states, in grant order.

    A grant whose payload is malformed is kept but never active (fail closed).
    """
    grants: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    revoked: set[str] = set()
    used: set[str] = set()
    for kind, subject, payload in entries:
        if kind == KIND_GRANTED:
            if subject not in grants:
                order.append(subject)
            grants[subject] = dict(payload)
        elif kind == KIND_REVOKED:
            revoked.add(subject)
        elif kind == KIND_USED:
            used.add(subject)
    out: list[GrantState] = []
    for grant_id in order:
        payload = grants[grant_id]
        patterns = payload.get("patterns")
        valid = (
            payload.get("grant_id") == grant_id
            and isinstance(patterns, list)
            and bool(patterns)
            and all(isinstance(p, str) for p in patterns)
            and isinstance(payload.get("one_shot"), bool)
            and parse_utc(payload.get("expires_at")) is not None
        )
        if valid:
            try:
                for pattern in patterns:  # type: ignore[union-attr]
                    validate_pattern(pattern)
            except UsageError:
                valid = False
            except Exception:  # noqa: BLE001 -- a bad stored pattern only invalidates the grant
                valid = False
        out.append(
            GrantState(
                grant_id=grant_id,
                patterns=tuple(patterns) if valid else (),  # type: ignore[arg-type]
                expires_at=str(payload.get("expires_at", "")),
                one_shot=bool(payload.get("one_shot")),
                reason=str(payload.get("reason", "")),
                revoked=grant_id in revoked,
                used=grant_id in used,
                valid=valid,
            )
        )
    return out


def active_grants(states: Iterable[GrantState], now: datetime) -> tuple[OverrideGrant, ...]:
    """The grants that may lift a denial at ``now``, as decision facts."""
    return tuple(OverrideGrant(s.grant_id, s.patterns, s.one_shot) for s in states if s.active(now))


def override_entries(ledger: Ledger) -> list[tuple[str, str, Mapping[str, Any]]]:
    """Every override entry of ``ledger`` as ``(kind, subject, payload)``, kind by kind."""
    return [
        (e.kind, e.subject, e.payload) for kind in OVERRIDE_KINDS for e in ledger.entries(kind=kind)
    ]


def verified_override_entries(
    ledger: Ledger, now: datetime
) -> list[tuple[str, str, Mapping[str, Any]]]:
    """The override entries a hook decides on, from verified entries only.

    Grants are found through the kind index, newest first. Only a grant that
    may still be in force (it parses and has not expired) can lift a denial,
    and for those the decision reads every entry from the oldest such grant to
    the head from the table itself, verified as a chain segment: a revocation
    or use that a damaged index lost is still seen, and a segment that does not
    verify is a refusal (``LEDGER_TAMPERED``). An index that loses a grant only
    makes the hooks stricter. Grants older than the longest grant
    (:data:`MAX_MINUTES`) are not read. The cost depends on the entries written
    since the oldest live grant, not on the ledger's length.
    """
    from datetime import timedelta

    # No grant lasts longer than MAX_MINUTES: older grants are not read at all
    # (a grant claiming a longer life was not written by 'override grant').
    oldest = format_utc(now - timedelta(minutes=MAX_MINUTES))
    live: list[int] = []
    for grant in ledger.newest(KIND_GRANTED):
        if grant.at < oldest:
            break
        expiry = parse_utc(grant.payload.get("expires_at"))
        if expiry is not None and now < expiry:
            live.append(grant.seq)
    if not live:
        return []
    return [
        (e.kind, e.subject, e.payload)
        for e in ledger.verified_since(min(live))
        if e.kind in OVERRIDE_KINDS
    ]
