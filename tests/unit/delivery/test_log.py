"""The delivery record: canonical rows, chained, tamper-evident, strictly parsed, anchored in
the ledger (a record that lost rows is a mismatch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.canonical import canonical_text
from plangate.delivery.log import (
    DeliveryLog,
    DeliveryRecordError,
    append_entries,
    entry_id_of,
    ledger_anchor,
    parse_record_bytes,
    read_log,
    rows_bytes,
    seal_entries,
)

HEAD = "a" * 40
NOW = "2026-12-02T10:00:00Z"
STATE = {
    "kind": "state",
    "state": "WAITING_FOR_CHECKS",
    "pr_number": 7,
    "head_sha": HEAD,
    "reasons": [{"code": "DELIVERY_NO_CHECKS_AT_HEAD", "message": "none"}],
}
NOTICE = {"kind": "notice", "comment": "hello"}


def sealed(*bodies):
    return seal_entries(list(bodies), prev=None, at=NOW)


def test_round_trip_and_chain():
    rows = sealed(STATE, NOTICE)
    data = rows_bytes(rows)
    parsed = parse_record_bytes(data)
    assert [r["entry_id"] for r in parsed] == [r["entry_id"] for r in rows]
    assert parsed[0]["prev"] is None
    assert parsed[1]["prev"] == parsed[0]["entry_id"]
    assert data.decode().splitlines()[0] == canonical_text(rows[0])


def test_entry_id_covers_time_and_chain():
    a = sealed(STATE)[0]
    b = seal_entries([STATE], prev=None, at="2026-12-02T10:00:01Z")[0]
    assert a["entry_id"] != b["entry_id"]
    assert a["entry_id"] == entry_id_of(a)


def _lines(rows):
    return [json.loads(line) for line in rows_bytes(rows).decode().splitlines()]


def _bytes(objs):
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (
            lambda rows: rows.__setitem__(0, {**rows[0], "state": "MERGE_READY"}),
            "DELIVERY_RECORD_TAMPERED",
        ),
        (
            lambda rows: rows.__setitem__(0, {**rows[0], "at": "2026-12-02T10:00:05Z"}),
            "DELIVERY_RECORD_TAMPERED",
        ),
        (
            lambda rows: rows.__setitem__(0, {**rows[0], "entry_id": "sha256:" + "0" * 64}),
            "DELIVERY_RECORD_TAMPERED",
        ),
        (
            lambda rows: rows.__setitem__(0, {k: v for k, v in rows[0].items() if k != "entry_id"}),
            "DELIVERY_RECORD_CORRUPT",
        ),
        (lambda rows: rows.pop(0), "DELIVERY_RECORD_CHAIN_BROKEN"),
        (lambda rows: rows.reverse(), "DELIVERY_RECORD_CHAIN_BROKEN"),
    ],
    ids=["edited-state", "edited-time", "forged-id", "no-id", "dropped-first", "reordered"],
)
def test_tampering_is_refused(mutate, code):
    rows = _lines(sealed(STATE, NOTICE))
    mutate(rows)
    with pytest.raises(DeliveryRecordError) as info:
        parse_record_bytes(_bytes(rows))
    assert info.value.code == code


def test_forged_row_with_recomputed_id_but_wrong_prev_is_refused():
    rows = _lines(sealed(STATE))
    forged = {**STATE, "state": "MERGE_READY", "prev": None, "at": NOW}
    forged["entry_id"] = entry_id_of(forged)
    with pytest.raises(DeliveryRecordError) as info:
        parse_record_bytes(_bytes([*rows, forged]))
    assert info.value.code == "DELIVERY_RECORD_CHAIN_BROKEN"


@pytest.mark.parametrize(
    "data",
    [
        b"not json\n",
        b"{}",  # no final newline
        b"\n",
        b"[]\n",
        b'{"kind": "state"}\n',
    ],
)
def test_corrupt_lines_are_refused(data):
    with pytest.raises(DeliveryRecordError) as info:
        parse_record_bytes(data)
    assert info.value.code == "DELIVERY_RECORD_CORRUPT"


@pytest.mark.parametrize(
    "body",
    [
        {**STATE, "state": "MERGED"},
        {**STATE, "pr_number": "7"},
        {**STATE, "extra": 1},
        {
            "kind": "intent",
            "action_id": "sha256:" + "0" * 64,
            "action_kind": "repair_ci",
            "payload": {"round": 1},
        },
        {"kind": "merge_ready", "record": {"pr_number": 7}},
        {
            "kind": "receipt",
            "action_id": "sha256:" + "0" * 64,
            "action_kind": "repair_ci",
            "pr_number": 7,
            "head_sha": HEAD,
            "round": "3",
            "result_ref": "x",
        },
    ],
    ids=[
        "merged-state",
        "pr-string",
        "extra-key",
        "intent-id-forged",
        "merge-ready-shape",
        "round-string",
    ],
)
def test_known_kinds_are_shape_checked(body):
    with pytest.raises(DeliveryRecordError) as info:
        parse_record_bytes(rows_bytes(sealed(body)))
    assert info.value.code == "DELIVERY_RECORD_CORRUPT"


def test_unknown_kinds_are_kept_and_reported(tmp_path: Path):
    task = tmp_path / "TASK-0001"
    (task / "delivery").mkdir(parents=True)
    (task / "delivery" / "record.jsonl").write_bytes(rows_bytes(sealed(STATE, NOTICE)))
    log = read_log(task)
    assert log.unknown_kinds() == ["notice"]


def test_absent_record_is_empty(tmp_path: Path):
    log = read_log(tmp_path)
    assert log == DeliveryLog(b"", (), False)


def test_symlinked_record_is_refused(tmp_path: Path):
    (tmp_path / "delivery").mkdir()
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    (tmp_path / "delivery" / "record.jsonl").symlink_to(target)
    with pytest.raises(DeliveryRecordError) as info:
        read_log(tmp_path)
    assert info.value.code == "DELIVERY_RECORD_UNREADABLE"


def test_append_refuses_when_bytes_changed(tmp_path: Path):
    judged = read_log(tmp_path)
    (tmp_path / "delivery").mkdir()
    (tmp_path / "delivery" / "record.jsonl").write_bytes(rows_bytes(sealed(NOTICE)))
    with pytest.raises(DeliveryRecordError) as info:
        append_entries(tmp_path, judged, sealed(STATE))
    assert info.value.code == "DELIVERY_RECORD_CHANGED"


def test_append_keeps_old_bytes_as_prefix(tmp_path: Path):
    first = sealed(STATE)
    append_entries(tmp_path, read_log(tmp_path), first)
    before = (tmp_path / "delivery" / "record.jsonl").read_bytes()
    judged = read_log(tmp_path)
    second = seal_entries([NOTICE], prev=judged.last_entry_id, at=NOW)
    append_entries(tmp_path, judged, second)
    after = (tmp_path / "delivery" / "record.jsonl").read_bytes()
    assert after.startswith(before)
    assert len(read_log(tmp_path).entries) == 2


def test_bad_time_is_refused():
    with pytest.raises(Exception, match="YYYY"):
        seal_entries([STATE], prev=None, at="2026-12-02 10:00:00")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_parse_or_refuse(data):
    try:
        parse_record_bytes(data)
    except DeliveryRecordError as exc:
        code = exc.code
    else:
        code = "DELIVERY_RECORD_OK"
    assert code.startswith("DELIVERY_RECORD_")


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 200), st.integers(0, 255))
def test_any_single_byte_flip_is_detected(position, value):
    data = bytearray(rows_bytes(sealed(STATE, NOTICE)))
    position %= len(data)
    if data[position] == value:
        return
    data[position] = value
    try:
        parsed = parse_record_bytes(bytes(data))
    except DeliveryRecordError:
        return
    # a flip that still parses must not have changed any row's content
    assert [r["entry_id"] for r in parsed] == [r["entry_id"] for r in sealed(STATE, NOTICE)]


def _ids(rows):
    return [r["entry_id"] for r in rows]


@pytest.mark.parametrize(
    ("ledger", "status"),
    [
        ("all", "anchored"),
        # the ledger holds a row of the task that the record lacks: deleted/truncated
        ("all+extra", "mismatch"),
        ("none", "mismatch"),
        ("empty", "unanchored"),
        ("unreadable", "unanchored"),
        ("suffix", "partially_anchored"),
        ("prefix", "mismatch"),
        ("reversed", "mismatch"),
        ("middle-missing", "mismatch"),
    ],
)
def test_ledger_anchor(ledger, status):
    rows = sealed(STATE, NOTICE, {**NOTICE, "n": 2})
    ids = _ids(rows)
    given = {
        "all": ids,
        "all+extra": ["sha256:" + "9" * 64, *ids],
        "none": ["sha256:" + "9" * 64],
        "empty": [],
        "unreadable": None,
        "suffix": ids[1:],
        "prefix": ids[:2],
        "reversed": list(reversed(ids)),
        "middle-missing": [ids[0], ids[2]],
    }[ledger]
    assert ledger_anchor(rows, given).status == status


def test_empty_record_is_anchored():
    assert ledger_anchor((), None).status == "anchored"


# -- the ledger anchor: a record that lost rows is a mismatch ----------------------


ANCHOR_STATE = {"kind": "state", "state": "WAITING_FOR_CHECKS", "pr_number": 7, "head_sha": HEAD,
         "reasons": []}


def _anchor_rows(count: int) -> list[dict[str, Any]]:
    return seal_entries([{**ANCHOR_STATE, "pr_number": n + 1} for n in range(count)], prev=None, at=NOW)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=6), st.data())
def test_any_ledger_row_missing_from_the_record_is_a_mismatch(count, data):
    rows = _anchor_rows(count)
    ids = [r["entry_id"] for r in rows]
    kept = data.draw(st.integers(min_value=0, max_value=count - 1))  # record lost a tail
    assert ledger_anchor(rows[:kept], ids).status == "mismatch"
    assert ledger_anchor(rows, ids).status == "anchored"


def test_deleted_record_with_ledger_rows_is_a_mismatch():
    ids = [r["entry_id"] for r in _anchor_rows(2)]
    assert ledger_anchor((), ids).status == "mismatch"
    assert ledger_anchor((), []).status == "anchored"
    assert ledger_anchor((), None).status == "anchored"


def test_forged_fresh_record_is_not_another_machines_record():
    ledger_ids = [r["entry_id"] for r in _anchor_rows(3)]
    forged = seal_entries([{**ANCHOR_STATE, "head_sha": "b" * 40}], prev=None, at=NOW)
    assert ledger_anchor(forged, ledger_ids).status == "mismatch"
    assert ledger_anchor(forged, []).status == "unanchored"
