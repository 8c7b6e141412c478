"""Override grant folding and request validation; Codex patch headers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plangate.clock import format_utc
from plangate.errors import UsageError
from plangate.hooks.override import (
    KIND_GRANTED,
    KIND_REVOKED,
    KIND_USED,
    active_grants,
    grant_payload,
    grant_states,
    validate_request,
)

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def granted(grant_id: str = "ovr-1", minutes: int = 10, one_shot: bool = False, **extra: object):
    payload_id = extra.pop("extra_id", grant_id)  # a payload that names another grant
    payload = {
        "grant_id": payload_id,
        "patterns": ["docs/**"],
        "expires_at": format_utc(NOW + timedelta(minutes=minutes)),
        "one_shot": one_shot,
        "reason": "r",
        "granted_by": "me",
    }
    payload.update(extra)
    return (KIND_GRANTED, grant_id, payload)


def test_active_until_expiry() -> None:
    states = grant_states([granted()])
    assert [g.grant_id for g in active_grants(states, NOW)] == ["ovr-1"]
    assert active_grants(states, NOW + timedelta(minutes=10)) == ()


def test_revoked_and_spent_grants_are_inactive() -> None:
    assert active_grants(grant_states([granted(), (KIND_REVOKED, "ovr-1", {})]), NOW) == ()
    spent = grant_states([granted(one_shot=True), (KIND_USED, "ovr-1", {})])
    assert active_grants(spent, NOW) == ()
    reusable = grant_states([granted(one_shot=False), (KIND_USED, "ovr-1", {})])
    assert len(active_grants(reusable, NOW)) == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"patterns": []},
        {"patterns": "docs/**"},
        {"patterns": ["/abs"]},
        {"one_shot": "no"},
        {"expires_at": "tomorrow"},
        {"extra_id": "other"},
    ],
)
def test_malformed_grants_never_activate(bad: dict[str, object]) -> None:
    states = grant_states([granted(**bad)])
    assert len(states) == 1
    assert not states[0].valid
    assert active_grants(states, NOW) == ()


def test_validate_request() -> None:
    request = validate_request(["docs/**", "README.md"], 30, " why ", True)
    assert request.patterns == ("docs/**", "README.md")
    assert request.reason == "why"
    for patterns, minutes, reason, code in [
        ([], 5, "r", "OVERRIDE_NO_PATHS"),
        (["**"], 5, "r", "OVERRIDE_TOO_BROAD"),
        (["a"], 0, "r", "OVERRIDE_BAD_DURATION"),
        (["a"], 481, "r", "OVERRIDE_BAD_DURATION"),
        (["a"], 5, "  ", "OVERRIDE_NO_REASON"),
    ]:
        with pytest.raises(UsageError) as info:
            validate_request(patterns, minutes, reason, False)
        assert info.value.code == code


def test_grant_payload_is_time_boxed() -> None:
    payload = grant_payload(validate_request(["a"], 15, "r", False), NOW, "alice")
    assert payload["expires_at"] == "2026-12-02T10:15:00Z"
    assert payload["grant_id"].startswith("ovr-")
    assert grant_states([(KIND_GRANTED, payload["grant_id"], payload)])[0].valid
