"""The pure chain rules, with literal rows."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from plangate.canonical import canonical_text
from plangate.forbidden_keys import SECRET_KEYS
from plangate.ledger.chain import (
    GENESIS_PREV_HASH,
    Head,
    LedgerError,
    StoredRow,
    compute_entry_hash,
    export_bytes,
    find_forbidden_key,
    prepare_payload,
    verify_export_bytes,
    verify_rows,
)

AT = "2026-12-02T10:00:00Z"


def build_rows(count: int) -> list[StoredRow]:
    rows: list[StoredRow] = []
    prev = GENESIS_PREV_HASH
    for seq in range(1, count + 1):
        payload = {"n": seq, "s": "é"}
        subject = f"TASK-{seq:04d}"
        entry_hash = compute_entry_hash(
            seq=seq, kind="c3_issue", subject=subject, payload=payload, at=AT, prev_hash=prev
        )
        rows.append(
            StoredRow(seq, "c3_issue", subject, canonical_text(payload), AT, prev, entry_hash)
        )
        prev = entry_hash
    return rows


def head_of(rows: list[StoredRow]) -> Head:
    return Head(len(rows), rows[-1].entry_hash if rows else GENESIS_PREV_HASH)


def test_genesis_constant_is_documented_value() -> None:
    assert GENESIS_PREV_HASH == "sha256:" + "0" * 64


def test_entry_hash_golden_value() -> None:
    # Pins the hashed form: changing the construction breaks every stored ledger.
    # The literal is the RFC 8785 text of the hashed object, written out by hand.
    hashed_text = (
        '{"at":"2026-12-02T10:00:00Z","kind":"c3_issue","payload":{"decision":"AUTO_APPROVED"},'
        '"prev_hash":"sha256:' + "0" * 64 + '","seq":1,"subject":"TASK-0001","v":1}'
    )
    expected = "sha256:" + hashlib.sha256(hashed_text.encode()).hexdigest()
    assert expected == "sha256:07196c5921829a5ad4d1c05a82825dbfbf0768a0c43e7e01a85d963352d50792"
    assert (
        compute_entry_hash(
            seq=1,
            kind="c3_issue",
            subject="TASK-0001",
            payload={"decision": "AUTO_APPROVED"},
            at=AT,
            prev_hash=GENESIS_PREV_HASH,
        )
        == expected
    )


def test_intact_chain_verifies() -> None:
    rows = build_rows(4)
    result = verify_rows(rows, head_of(rows))
    assert result.verdict == "INTACT"
    assert result.accepted
    assert result.facts["entries"] == 4
    assert result.facts["head_hash"] == rows[-1].entry_hash
    assert result.facts["first_bad_seq"] is None


def test_empty_ledger_is_intact_only_with_an_empty_head() -> None:
    assert verify_rows([], Head()).verdict == "INTACT"
    result = verify_rows([], Head(3, "sha256:" + "1" * 64))
    assert result.verdict == "TAMPERED"
    assert result.codes == ("LEDGER_HEAD_MISMATCH",)
    assert result.facts["first_bad_seq"] == 1


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("kind", "exec_started", "LEDGER_ENTRY_HASH_MISMATCH"),
        ("kind", "Bad Kind", "LEDGER_ENTRY_MALFORMED"),
        ("subject", "TASK-9999", "LEDGER_ENTRY_HASH_MISMATCH"),
        ("subject", "", "LEDGER_ENTRY_MALFORMED"),
        ("at", "2026-12-02T10:00:01Z", "LEDGER_ENTRY_HASH_MISMATCH"),
        ("at", "2026-12-02 10:00:00", "LEDGER_ENTRY_MALFORMED"),
        ("at", "2026-13-02T10:00:00Z", "LEDGER_ENTRY_MALFORMED"),
        ("payload_text", '{"n":2,"s":"e"}', "LEDGER_ENTRY_HASH_MISMATCH"),
        ("payload_text", '{"s":"é","n":2}', "LEDGER_PAYLOAD_NOT_CANONICAL"),
        ("payload_text", '{"n":2, "s":"é"}', "LEDGER_PAYLOAD_NOT_CANONICAL"),
        ("payload_text", '{"n":2,"s":"é"', "LEDGER_PAYLOAD_NOT_CANONICAL"),
        ("payload_text", "[1]", "LEDGER_PAYLOAD_NOT_CANONICAL"),
        ("payload_text", '{"token":"x"}', "LEDGER_FORBIDDEN_KEY"),
        ("prev_hash", "sha256:" + "2" * 64, "LEDGER_PREV_HASH_MISMATCH"),
        ("prev_hash", "SHA256:" + "2" * 64, "LEDGER_ENTRY_MALFORMED"),
        ("entry_hash", "sha256:" + "3" * 64, "LEDGER_ENTRY_HASH_MISMATCH"),
        ("seq", 7, "LEDGER_SEQ_MISMATCH"),
        ("seq", "2", "LEDGER_SEQ_MISMATCH"),
        ("seq", True, "LEDGER_SEQ_MISMATCH"),
    ],
)
def test_each_field_edit_is_detected_at_its_seq(field: str, value: object, code: str) -> None:
    rows = build_rows(4)
    rows[1] = dataclasses.replace(rows[1], **{field: value})
    result = verify_rows(rows, head_of(rows))
    assert result.verdict == "TAMPERED"
    assert result.exit_code == 1
    assert result.codes == (code,)
    assert result.facts["first_bad_seq"] == 2
    assert result.facts["entries"] == 1


def test_deletion_insertion_and_swap_are_detected() -> None:
    rows = build_rows(5)
    head = head_of(rows)
    assert verify_rows([*rows[:2], *rows[3:]], head).facts["first_bad_seq"] == 3
    assert verify_rows(rows[:4], head).facts["first_bad_seq"] == 5  # tail cut: the head knows
    assert verify_rows([*rows[:2], rows[3], rows[2], rows[4]], head).facts["first_bad_seq"] == 3
    assert verify_rows([*rows[:2], rows[1], *rows[2:]], head).facts["first_bad_seq"] == 3
    longer = build_rows(6)
    result = verify_rows(longer, head)  # appended behind the head's back
    assert result.codes == ("LEDGER_HEAD_MISMATCH",)
    assert result.facts["first_bad_seq"] == 6


def test_anchor_must_be_present() -> None:
    rows = build_rows(3)
    assert verify_rows(rows, head_of(rows), anchor=rows[1].entry_hash).accepted
    result = verify_rows(rows, head_of(rows), anchor="sha256:" + "9" * 64)
    assert result.codes == ("LEDGER_ANCHOR_MISSING",)
    assert not result.accepted


@pytest.mark.parametrize("key", sorted(SECRET_KEYS))
def test_every_forbidden_key_any_case_any_depth(key: str) -> None:
    assert find_forbidden_key({key.upper(): 1}) is not None
    assert find_forbidden_key({"a": [{"b": {key: 1}}]}) == f"payload.a[0].b.{key}"
    with pytest.raises(LedgerError) as info:
        prepare_payload({"x": {key.title(): "v"}})
    assert info.value.code == "LEDGER_FORBIDDEN_KEY"


@pytest.mark.parametrize(
    "key",
    [
        "apiKey",
        "access_token",
        "user_prompt",
        "githubToken",
        "client-secret",
        "DB.Password",
        "systemPrompt",
        "raw_response",
        "session_cookie",
    ],
)
def test_ledger_refuses_credentials_and_prompts_in_any_spelling(key: str) -> None:
    # The same classifier as RunEvidence: a respelled credential is still one.
    with pytest.raises(LedgerError) as info:
        prepare_payload({"outer": [{key: "v"}]})
    assert info.value.code == "LEDGER_FORBIDDEN_KEY"
    assert find_forbidden_key({"outer": [{key: "v"}]}) == f"payload.outer[0].{key}"


def test_ledger_keeps_private_and_account_keys() -> None:
    # File paths and actors are ordinary ledger facts (hooks record targets, overrides
    # record who granted them); only RunEvidence, which leaves the repository, refuses them.
    text, _parsed = prepare_payload({"file_path": "src/a.py", "actor": "human"})
    assert text == '{"actor":"human","file_path":"src/a.py"}'


def test_harmless_keys_pass() -> None:
    text, parsed = prepare_payload({"token_count": 3, "secret_free": True, "tokens": []})
    assert parsed == {"token_count": 3, "secret_free": True, "tokens": []}
    assert text == '{"secret_free":true,"token_count":3,"tokens":[]}'


def test_forbidden_values_are_not_keys() -> None:
    # Only keys are policed; the word in a value is data (e.g. a reason message).
    assert find_forbidden_key({"message": "password"}) is None


def test_export_round_trip_and_line_rules() -> None:
    rows = build_rows(3)
    data = export_bytes(rows, head_of(rows))
    assert verify_export_bytes(data).verdict == "INTACT"
    lines = data.split(b"\n")
    # Whitespace inserted into an entry line: same JSON, not the canonical bytes.
    spaced = b"\n".join([*lines[:2], lines[2].replace(b":", b": ", 1), *lines[3:]])
    result = verify_export_bytes(spaced)
    assert result.codes == ("LEDGER_EXPORT_MALFORMED",)
    assert result.facts["first_bad_seq"] == 2
    # An extra key.
    extra = b"\n".join([*lines[:3], lines[3][:-1] + b',"zz":1}', *lines[4:]])
    assert verify_export_bytes(extra).facts["first_bad_seq"] == 3
    # Missing trailing newline, broken header.
    assert not verify_export_bytes(data[:-1]).accepted
    assert not verify_export_bytes(b"{}\n").accepted
    assert not verify_export_bytes(b"").accepted


def _single_row(payload_text: str, payload: object) -> list[StoredRow]:
    entry_hash = compute_entry_hash(
        seq=1,
        kind="c3_issue",
        subject="TASK-0001",
        payload=payload,  # type: ignore[arg-type]
        at=AT,
        prev_hash=GENESIS_PREV_HASH,
    )
    return [StoredRow(1, "c3_issue", "TASK-0001", payload_text, AT, GENESIS_PREV_HASH, entry_hash)]


def test_correctly_hashed_forbidden_key_is_still_reported() -> None:
    payload = {"a": [{"b": {"Api-Key": "x"}}]}
    rows = _single_row(canonical_text(payload), payload)
    result = verify_rows(rows, head_of(rows))
    assert result.codes == ("LEDGER_FORBIDDEN_KEY",)
    assert "payload.a[0].b.Api-Key" in result.reasons[0].message


def test_payloads_needing_the_reference_encoder_verify() -> None:
    payload = {"\U0001f600": 1, "\ue000": 2, "f": 1.5e-7, "big": 1e21}
    rows = _single_row(canonical_text(payload), payload)
    assert verify_rows(rows, head_of(rows)).verdict == "INTACT"


@pytest.mark.parametrize(
    "text",
    ['{"a":1,"a":1}', '{"a":NaN}', '{"a":"\\ud800"}', '\ufeff{"a":1}', '{"a":1} ', "{}\n"],
)
def test_stored_payload_must_be_strict_canonical_json(text: str) -> None:
    rows = _single_row(text, {"a": 1})
    result = verify_rows(rows, head_of(rows))
    assert result.codes == ("LEDGER_PAYLOAD_NOT_CANONICAL",)
