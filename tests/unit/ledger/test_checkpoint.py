"""Ledger checkpoints: strict format, the newest one, and what the chain must show (pure)."""

from __future__ import annotations

import json

import pytest

from plangate.ledger.checkpoint import (
    ChainSeen,
    Checkpoint,
    checkpoint_bytes,
    checkpoint_reasons,
    newest,
    parse_checkpoint,
)

HEAD = "sha256:" + "a" * 64
CP = Checkpoint(10, HEAD, "2026-12-03T09:00:00Z", "carol@example.com")


def test_canonical_bytes_parse_back() -> None:
    assert parse_checkpoint(checkpoint_bytes(CP)) == CP


def _with(**change: object) -> bytes:
    value = json.loads(checkpoint_bytes(CP))
    value.update(change)
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode() + b"\n"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"[]",
        checkpoint_bytes(CP).rstrip(b"\n"),
        _with(seq=0),
        _with(seq=True),
        _with(seq="10"),
        _with(head="abc"),
        _with(time="2026-12-03 09:00:00"),
        _with(time="2026-12-03T09:00:00+01:00"),
        _with(principal=""),
        _with(kind="plangate-review-statement"),
        _with(version=2),
        _with(extra=1),
        b"{" * 5000,
    ],
)
def test_anything_else_is_not_a_checkpoint(data: bytes) -> None:
    assert isinstance(parse_checkpoint(data), str)


def test_newest_is_the_latest_time_then_the_highest_seq() -> None:
    later = CP._replace(time="2026-12-04T00:00:00Z", seq=1)
    assert newest([CP, later]) == later
    assert newest([CP, CP._replace(seq=11)]) == CP._replace(seq=11)
    assert newest([]) is None


def test_a_chain_that_extends_the_checkpoint_holds() -> None:
    assert checkpoint_reasons(CP, ChainSeen(10, True, False)) == []
    assert checkpoint_reasons(CP, ChainSeen(500, True, False)) == []


@pytest.mark.parametrize("entries", [0, 1, 9])
def test_a_shorter_chain_is_behind(entries: int) -> None:
    reasons = checkpoint_reasons(CP, ChainSeen(entries, False, False))
    assert [r.code for r in reasons] == ["LEDGER_BEHIND_CHECKPOINT"]


def test_a_chain_without_the_checkpointed_entry_diverged() -> None:
    reasons = checkpoint_reasons(CP, ChainSeen(10, False, False))
    assert [r.code for r in reasons] == ["LEDGER_CHECKPOINT_DIVERGED"]
    restarted = checkpoint_reasons(CP, ChainSeen(50, False, True))
    assert "re-initialised" in restarted[0].message
