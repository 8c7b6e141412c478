"""Independence Levels are computed from who authored and who reviewed, never declared."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.evaluation.independence import (
    ReviewRecordError,
    Signer,
    check_independence,
    compute_level,
    parse_review_record,
    required_level,
)
from plangate.evaluation.words import IndependenceLevel
from plangate.verdict import Reason
from support.evaldocs import COMMIT, record

EVIDENCE = "sha256:" + "e" * 64


def level_of(*docs: dict[str, Any], verified: tuple[str, ...] = (EVIDENCE,)) -> str:
    records = [parse_review_record(d) for d in docs]
    return compute_level(
        records, candidate_id="candidate:x:v1", candidate_commit=COMMIT, verified_refs=verified
    ).verdict


SEALED = [{"kind": "sealed_fixture", "ref": EVIDENCE}]


def test_same_model_separate_context_run_and_role_is_i1() -> None:
    assert level_of(record()) == "I1"


@pytest.mark.parametrize(
    "reviewer",
    [
        {"context_id": "ctx-1"},  # same context: the author's own conversation
        {"run_id": "run-1"},  # same run
        {"role": "implementer"},  # the implementing agent reviewing itself
        {"role": "author"},
        {"model": "model-b", "context_id": "CTX-1"},  # ids compare case-insensitively
    ],
)
def test_self_review_is_i0_and_never_counts(reviewer: dict[str, Any]) -> None:
    result = compute_level(
        [parse_review_record(record(reviewer=reviewer, evidence=SEALED))],
        candidate_id="candidate:x:v1",
        candidate_commit=COMMIT,
        verified_refs=[EVIDENCE],
    )
    assert result.verdict == "I0"
    assert result.codes == ("REVIEW_SELF_REVIEW_IGNORED",)
    assert result.facts["counted_records"] == 0


def test_separate_model_is_i2() -> None:
    assert level_of(record(reviewer={"model": "model-b"})) == "I2"


def test_separate_model_with_verified_oracle_is_i3() -> None:
    assert level_of(record(reviewer={"model": "model-b"}, evidence=SEALED)) == "I3"


def test_unverified_evidence_does_not_lift_the_level() -> None:
    doc = record(reviewer={"model": "model-b"}, evidence=SEALED)
    assert level_of(doc, verified=()) == "I2"


def test_same_model_with_evidence_stays_i1() -> None:
    assert level_of(record(evidence=SEALED)) == "I1"


def test_human_with_machine_evidence_is_i4_without_is_i2() -> None:
    human = {"model": None, "human_identity": "alice@example.invalid"}
    assert level_of(record(reviewer=human, evidence=SEALED)) == "I4"
    assert level_of(record(reviewer=human)) == "I2"


def test_the_same_human_reviewing_their_own_work_is_i0() -> None:
    same = {"model": None, "human_identity": "alice@example.invalid"}
    doc = record(
        author={"model": None, "human_identity": "ALICE@example.invalid"},
        reviewer=same,
        evidence=SEALED,
    )
    assert level_of(doc) == "I0"


def test_human_review_plus_separate_machine_i3_combine_to_i4() -> None:
    human = record(
        reviewer={"model": None, "human_identity": "bob", "context_id": "h", "run_id": "h"}
    )
    machine = record(reviewer={"model": "model-b"}, evidence=SEALED)
    result = compute_level(
        [parse_review_record(human), parse_review_record(machine)],
        candidate_id="candidate:x:v1",
        candidate_commit=COMMIT,
        verified_refs=[EVIDENCE],
    )
    assert result.verdict == "I4"
    assert result.facts["human_plus_machine_combined"] is True


def test_stale_or_foreign_records_are_ignored() -> None:
    stale = record(reviewer={"model": "model-b"}, evidence=SEALED, reviewed_commit="b" * 40)
    foreign = record(reviewer={"model": "model-b"}, evidence=SEALED, candidate_id="candidate:y:v1")
    assert level_of(stale) == "I0"
    assert level_of(foreign) == "I0"


def test_no_records_is_i0() -> None:
    assert level_of() == "I0"


def test_level_is_never_read_from_a_field() -> None:
    doc = record()
    doc["level"] = "I4"
    with pytest.raises(ReviewRecordError) as info:
        parse_review_record(doc)
    assert info.value.code == "REVIEW_RECORD_UNKNOWN_KEY"


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda d: d.pop("author"), "REVIEW_RECORD_INVALID"),
        (lambda d: d.update(schema="plangate-review/2"), "REVIEW_RECORD_SCHEMA"),
        (lambda d: d["reviewer"].update(model=None), "REVIEW_RECORD_INVALID"),
        (lambda d: d["reviewer"].update(extra=1), "REVIEW_RECORD_UNKNOWN_KEY"),
        (lambda d: d["reviewer"].update(run_id=" run-2"), "REVIEW_RECORD_INVALID"),
        (
            lambda d: d.update(evidence=[{"kind": "vibes", "ref": EVIDENCE}]),
            "REVIEW_RECORD_INVALID",
        ),
        (
            lambda d: d.update(evidence=[{"kind": "oracle", "ref": "sha256:ABC"}]),
            "REVIEW_RECORD_INVALID",
        ),
        (lambda d: d.update(evidence="none"), "REVIEW_RECORD_INVALID"),
    ],
)
def test_malformed_records_are_refused(mutate: Any, code: str) -> None:
    doc = copy.deepcopy(record())
    mutate(doc)
    with pytest.raises(ReviewRecordError) as info:
        parse_review_record(doc)
    assert info.value.code == code


@pytest.mark.parametrize(
    ("classes", "level"),
    [
        (["prompt"], "I1"),
        (["context", "skill"], "I1"),
        (["verifier"], "I3"),
        (["gate"], "I3"),
        (["policy", "prompt"], "I3"),
        (["human_owned"], "I4"),
        (["evaluation_harness"], "I4"),
        (["eval"], "I4"),
        (["something-new"], "I4"),
        ([], "I4"),
    ],
)
def test_minimum_level_per_surface_class(classes: list[str], level: str) -> None:
    assert required_level(classes)[0].value == level


def test_check_independence() -> None:
    assert check_independence("I3", "I3") is None
    assert check_independence("I4", "I1") is None
    reason = check_independence("I2", "I3")
    assert reason is not None and reason.code == "INDEPENDENCE_INSUFFICIENT"
    assert check_independence("I0", "I0") is not None  # I0 never grounds a decision
    assert check_independence("I3", "bogus") is not None


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    doc=JSONISH, key=st.sampled_from(["author", "reviewer", "evidence", "schema", "candidate_id"])
)
def test_parser_never_crashes(doc: Any, key: str) -> None:
    base = record()
    base[key] = doc
    try:
        parsed = parse_review_record(base)
    except ReviewRecordError:
        return
    level = compute_level(
        [parsed], candidate_id="candidate:x:v1", candidate_commit=COMMIT, verified_refs=[EVIDENCE]
    ).verdict
    assert level in {lv.value for lv in IndependenceLevel}


# Spellings of the author's own model a reader cannot tell apart from it.
HIDDEN_MODEL_A = [
    "model\u200b-a",  # zero-width space
    "\u200bmodel-a",
    "model-a\u200d",  # zero-width joiner
    "mo\u00addel-a",  # soft hyphen
    "model\u2060-a",  # word joiner
    "\ufeffmodel-a",  # byte-order mark inside the text
    "\uff4d\uff4f\uff44\uff45\uff4c-a",  # full-width "model"
    "MODEL-A",
    "\uff2d\uff2f\uff24\uff25\uff2c\uff0d\uff21",  # full-width upper case, full-width hyphen
]


@pytest.mark.parametrize("spelling", HIDDEN_MODEL_A)
def test_an_invisible_or_full_width_spelling_of_the_authors_model_is_the_same_model(
    spelling: str,
) -> None:
    doc = record(reviewer={"model": spelling}, evidence=SEALED)
    assert level_of(doc) == "I1"  # same model, separate context, run and role; never I3


@pytest.mark.parametrize("field", ["context_id", "run_id", "role", "human_identity"])
def test_other_identities_fold_the_same_way(field: str) -> None:
    author = {"model": "model-a", "context_id": "ctx-1", "run_id": "run-1", "role": "writer"}
    author["human_identity"] = "alice" if field == "human_identity" else None
    value = {"context_id": "ctx\u200b-1", "run_id": "\uff52un-1", "role": "wri\u2060ter"}.get(
        field, "\uff41lice"
    )
    reviewer = {"model": "model-b", field: value}
    if field == "human_identity":
        reviewer["model"] = None
    assert level_of(record(author=author, reviewer=reviewer, evidence=SEALED)) == "I0"


@pytest.mark.parametrize(
    "reviewer",
    [
        {"model": "model-b", "context_id": "ctx-1", "run_id": "run-9", "role": "reviewer"},
        {"model": None, "human_identity": "bob", "context_id": "ctx-1"},
        {"model": "model-b", "context_id": "c\u200btx-1"},
    ],
)
def test_a_shared_context_is_i0_before_anything_else(reviewer: dict[str, Any]) -> None:
    result = compute_level(
        [parse_review_record(record(reviewer=reviewer, evidence=SEALED))],
        candidate_id="candidate:x:v1",
        candidate_commit=COMMIT,
        verified_refs=[EVIDENCE],
    )
    assert result.verdict == "I0"
    assert result.facts["records"][0]["why"] == "same context as the author"


def test_a_self_review_role_spelled_with_invisible_characters_is_still_self_review() -> None:
    for role in ("imple\u200bmenter", "\uff41uthor", "IMPLEMENTER"):
        doc = record(reviewer={"model": "model-b", "role": role}, evidence=SEALED)
        assert level_of(doc) == "I0", role


def test_an_identity_that_shows_nothing_cannot_be_told_apart() -> None:
    doc = record(reviewer={"model": "model-b", "run_id": "\u200b\u200b"}, evidence=SEALED)
    assert level_of(doc) == "I0"


@pytest.mark.parametrize(
    "spelling", ["model-\u0430", "m\u043edel-a", "MODEL-\u0391", "mod\u00e9l-a"]
)
def test_a_look_alike_spelling_of_the_authors_model_is_the_same_model(spelling: str) -> None:
    doc = record(reviewer={"model": spelling}, evidence=SEALED)
    assert level_of(doc) == "I1"


def test_a_look_alike_spelling_of_the_authors_own_name_is_self_review() -> None:
    author = {"model": None, "human_identity": "alice"}
    reviewer = {"model": None, "human_identity": "\u0430lice"}  # Cyrillic a
    assert level_of(record(author=author, reviewer=reviewer, evidence=SEALED)) == "I0"


# --- signed records: the level reads verified principals -----------------------------

ALICE_HUMAN = Signer("alice@example.com", "SHA256:alice", human=True)
BOT = Signer("review-bot@example.com", "SHA256:bot", human=False)


def _signed(doc: dict[str, Any], signer: Signer | None = None, problem: Reason | None = None):
    return replace(parse_review_record(doc), signer=signer, signature_problem=problem)


def _compute(*records):
    return compute_level(
        list(records),
        candidate_id="candidate:x:v1",
        candidate_commit=COMMIT,
        verified_refs=[EVIDENCE],
    )


MODEL_B = {"model": "model-b", "role": "qa"}
HUMAN_CLAIM = {"model": None, "human_identity": "Alice", "role": "qa"}


def test_unsigned_records_keep_their_level_and_say_unauthenticated() -> None:
    result = _compute(_signed(record(reviewer=HUMAN_CLAIM, evidence=SEALED)))
    assert result.verdict == "I4"
    assert result.facts["authority"].startswith("unauthenticated")
    assert result.facts["records"][0]["signed_by"] is None


def test_a_human_principal_marked_in_the_trust_root_reviews_as_a_human() -> None:
    result = _compute(
        _signed(
            record(
                reviewer={**MODEL_B, "model": None, "human_identity": "whoever"}, evidence=SEALED
            ),
            ALICE_HUMAN,
        )
    )
    assert result.verdict == "I4"
    assert result.facts["authority"] == "verified principals"
    assert result.facts["records"][0]["signed_by"] == "alice@example.com"


def test_a_signed_claim_of_humanity_by_a_principal_not_marked_human_is_a_model_review() -> None:
    doc = record(reviewer={**MODEL_B, "human_identity": "Alice"}, evidence=SEALED)
    assert _compute(_signed(doc)).verdict == "I4"  # unsigned: the claim is believed
    assert _compute(_signed(doc, BOT)).verdict == "I3"  # signed: the trust root decides


def test_a_signed_claim_of_humanity_without_a_model_is_i0() -> None:
    result = _compute(_signed(record(reviewer=HUMAN_CLAIM, evidence=SEALED), BOT))
    assert result.verdict == "I0"
    assert "does not mark human" in result.facts["records"][0]["why"]


def test_the_human_is_compared_by_principal_with_the_author() -> None:
    doc = record(
        author={"human_identity": "alice@example.com"},
        reviewer={**MODEL_B, "model": None, "human_identity": "someone else"},
    )
    assert _compute(_signed(doc, ALICE_HUMAN)).verdict == "I0"


def test_one_key_counts_once_so_it_cannot_combine_with_itself() -> None:
    human = record(reviewer={**MODEL_B, "model": None, "human_identity": "x"})  # I2
    machine = record(
        reviewer={**MODEL_B, "context_id": "ctx-9", "run_id": "run-9"}, evidence=SEALED
    )  # I3
    both_unsigned = _compute(_signed(human), _signed(machine))
    assert both_unsigned.verdict == "I4"  # human + machine
    same_key = _compute(
        _signed(human, ALICE_HUMAN), _signed(machine, replace(BOT, key_fingerprint="SHA256:alice"))
    )
    assert same_key.verdict == "I2"
    assert same_key.facts["records"][1]["counted"] is False
    assert "one key counts once" in same_key.facts["records"][1]["why"]
    distinct = _compute(_signed(human, ALICE_HUMAN), _signed(machine, BOT))
    assert distinct.verdict == "I4" and distinct.facts["human_plus_machine_combined"]


def test_a_record_whose_signature_does_not_verify_never_counts() -> None:
    bad = Reason("REVIEW_SIGNER_UNKNOWN", "eval review entry 3: signed by an unlisted key")
    result = _compute(_signed(record(reviewer=HUMAN_CLAIM, evidence=SEALED), problem=bad))
    assert result.verdict == "I0"
    assert "REVIEW_SIGNER_UNKNOWN" in result.codes
    assert result.facts["records"][0]["counted"] is False


def test_a_mix_of_signed_and_unsigned_records_is_partly_unauthenticated() -> None:
    human = record(reviewer={**MODEL_B, "model": None, "human_identity": "x"})
    machine = record(reviewer={**MODEL_B, "context_id": "ctx-9", "run_id": "run-9"})
    result = _compute(_signed(human, ALICE_HUMAN), _signed(machine))
    assert result.facts["authority"].startswith("partly unauthenticated")
