"""Exec opt-out statements: strict parsing and the ordered rules (pure)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from plangate.authority.optout import (
    MISSING,
    RULES,
    OptOut,
    OptOutFacts,
    opt_out_bytes,
    opt_out_reasons,
    parse_opt_out,
)
from plangate.authority.verify import Verified
from plangate.verdict import Reason

DIGEST = "sha256:" + "d" * 64
GOOD = OptOut(
    "TASK-0001", DIGEST, "b" * 40, "carol@example.com", "2026-01-01T12:00:00Z",
    "2026-01-01T12:15:00Z",
)
CAROL = Verified("carol@example.com", "ssh-ed25519", "SHA256:x", ("override",), True)
NOW = datetime(2026, 1, 1, 12, 5, tzinfo=UTC)


def _facts(**change: object) -> OptOutFacts:
    base = OptOutFacts(GOOD, "", CAROL, "TASK-0001", DIGEST, "b" * 40, NOW, False)
    return base._replace(**change)


def _codes(facts: OptOutFacts) -> list[str]:
    return [r.code for r in opt_out_reasons(facts)]


def test_the_canonical_bytes_parse_back() -> None:
    assert parse_opt_out(opt_out_bytes(GOOD)) == GOOD


def _mutated(**change: object) -> bytes:
    value = json.loads(opt_out_bytes(GOOD))
    value.update(change)
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode() + b"\n"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{}",
        opt_out_bytes(GOOD).rstrip(b"\n"),
        _mutated(kind="plangate-continuation"),
        _mutated(version=2),
        _mutated(extra="x"),
        _mutated(head="main"),
        _mutated(command_digest="make deploy"),
        _mutated(expires_at="2026-01-01 12:15"),
        _mutated(principal=""),
        b" " * 20000,
    ],
)
def test_anything_else_is_not_a_statement(data: bytes) -> None:
    assert isinstance(parse_opt_out(data), str)


def test_a_signed_matching_statement_in_its_window_holds() -> None:
    assert _codes(_facts()) == []


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"statement": None, "problem": MISSING, "signature": None}, "EXEC_OPT_OUT_STATEMENT_MISSING"),
        ({"statement": None, "problem": "bad", "signature": None}, "EXEC_OPT_OUT_STATEMENT_MALFORMED"),
        ({"signature": Reason("EXEC_OPT_OUT_SIGNATURE_INVALID", "x")}, "EXEC_OPT_OUT_SIGNATURE_INVALID"),
        ({"signature": None}, "EXEC_OPT_OUT_SIGNATURE_MISSING"),
        ({"signature": CAROL._replace(principal="bob@example.com")}, "EXEC_OPT_OUT_PRINCIPAL_MISMATCH"),
        ({"task_id": "TASK-0002"}, "EXEC_OPT_OUT_OTHER_TASK"),
        ({"command_digest": "sha256:" + "e" * 64}, "EXEC_OPT_OUT_OTHER_COMMAND"),
        ({"head": "c" * 40}, "EXEC_OPT_OUT_OTHER_HEAD"),
        ({"now": datetime(2026, 1, 1, 11, 59, tzinfo=UTC)}, "EXEC_OPT_OUT_NOT_YET_VALID"),
        ({"now": datetime(2026, 1, 1, 12, 15, 1, tzinfo=UTC)}, "EXEC_OPT_OUT_EXPIRED"),
        ({"used": True}, "EXEC_OPT_OUT_ALREADY_USED"),
        ({"statement": GOOD._replace(expires_at="2026-01-01T13:00:01Z")}, "EXEC_OPT_OUT_VALIDITY_TOO_LONG"),
        (
            {
                "statement": GOOD._replace(expires_at="2026-01-01T12:00:00Z"),
                "now": datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
            },
            "EXEC_OPT_OUT_VALIDITY_TOO_LONG",
        ),
    ],
)
def test_each_rule_refuses_with_its_own_code(change: dict[str, object], code: str) -> None:
    assert _codes(_facts(**change)) == [code]


def test_exactly_one_hour_is_allowed() -> None:
    statement = GOOD._replace(expires_at="2026-01-01T13:00:00Z")
    assert _codes(_facts(statement=statement)) == []


def test_every_failure_is_listed_in_rule_order() -> None:
    codes = _codes(_facts(task_id="TASK-0002", head="c" * 40, used=True))
    assert codes == ["EXEC_OPT_OUT_OTHER_TASK", "EXEC_OPT_OUT_OTHER_HEAD", "EXEC_OPT_OUT_ALREADY_USED"]
    assert [r.name for r in RULES][:3] == [
        "statement_present", "statement_well_formed", "signed_by_an_override_holder",
    ]
