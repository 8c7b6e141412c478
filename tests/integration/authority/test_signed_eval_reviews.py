"""Independence Levels read verified principals where review records are signed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_cli_in
from support.evalrun import HarnessRepo, build_harness_repo
from support.keys import Key, sign_bytes
from support.repo import git
from support.signed import commit_trust_root, make_team

VERIFIER = "harness/verifiers/completion_evidence.py"
HUMAN = {
    "model": None,
    "context_id": "ctx-h",
    "run_id": "run-h",
    "role": "reviewer",
    "human_identity": "Alice",
}


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Key]:
    return make_team(tmp_path / "keys")


def _harness(tmp_path: Path, team: dict[str, Key], *, humans: bool = True) -> HarnessRepo:
    harness = build_harness_repo(tmp_path)
    git(harness.repo, "checkout", "-q", "main")
    commit_trust_root(harness.repo, team, require=False, humans=humans)
    return harness


def _candidate(harness: HarnessRepo) -> tuple[str, str]:
    text = (harness.repo / VERIFIER).read_text() + "\n# candidate change\n"
    return harness.candidate("signed", {VERIFIER: text})


def _add(harness: HarnessRepo, digest: str, review: Path) -> tuple[int, dict, str]:
    result = run_cli_in(harness.repo, "eval", "review", "add", digest, str(review), "--json")
    return result.code, json.loads(result.out) if result.out.strip() else {}, result.err


def _sign(
    review: Path, key: Key, data: bytes | None = None, namespace: str = "plangate-eval-review"
) -> None:
    review.with_name(review.name + ".sig").write_bytes(
        sign_bytes(key, namespace, data if data is not None else review.read_bytes())
    )


def test_a_human_principal_signs_and_the_level_reads_it(
    tmp_path: Path, team: dict[str, Key]
) -> None:
    harness = _harness(tmp_path, team)
    digest, commit = _candidate(harness)
    review = harness.review("candidate:signed:v1", commit, reviewer=HUMAN)
    _sign(review, team["alice"])
    code, out, err = _add(harness, digest, review)
    assert code == 0, err
    facts = out["facts"]
    assert facts["level"] == "I4"
    assert facts["authority"] == "verified principals"
    assert facts["records"][0]["signed_by"] == "alice@example.com"
    level = run_cli_in(harness.repo, "eval", "review", "level", digest)
    assert "verified principals" in level.out


def test_an_unsigned_record_keeps_its_level_and_says_unauthenticated(
    tmp_path: Path, team: dict[str, Key]
) -> None:
    harness = _harness(tmp_path, team)
    digest, commit = _candidate(harness)
    code, out, err = _add(
        harness, digest, harness.review("candidate:signed:v1", commit, reviewer=HUMAN)
    )
    assert code == 0, err
    assert out["facts"]["level"] == "I4"
    assert out["facts"]["authority"].startswith("unauthenticated")


def test_a_claimed_human_whom_the_trust_root_does_not_mark_human_is_not_one(
    tmp_path: Path, team: dict[str, Key]
) -> None:
    harness = _harness(tmp_path, team, humans=False)
    digest, commit = _candidate(harness)
    review = harness.review("candidate:signed:v1", commit, reviewer=HUMAN)
    _sign(review, team["alice"])
    code, out, err = _add(harness, digest, review)
    assert code == 0, err
    assert out["facts"]["level"] == "I0"
    assert "does not mark human" in out["facts"]["records"][0]["why"]


@pytest.mark.parametrize(
    ("forgery", "reason"),
    [
        ("unlisted", "REVIEW_SIGNER_UNKNOWN"),
        ("other_bytes", "REVIEW_SIGNATURE_INVALID"),
        ("namespace", "REVIEW_SIGNATURE_NAMESPACE"),
        ("garbage", "REVIEW_SIGNATURE_MALFORMED"),
    ],
)
def test_a_signature_that_does_not_verify_is_refused_and_nothing_is_recorded(
    tmp_path: Path, team: dict[str, Key], forgery: str, reason: str
) -> None:
    harness = _harness(tmp_path, team)
    digest, commit = _candidate(harness)
    review = harness.review("candidate:signed:v1", commit, reviewer=HUMAN)
    if forgery == "unlisted":
        _sign(review, team["mallory"])
    elif forgery == "other_bytes":
        _sign(review, team["alice"], data=review.read_bytes() + b" ")
    elif forgery == "namespace":
        _sign(review, team["alice"], namespace="plangate-review")
    else:
        review.with_name(review.name + ".sig").write_bytes(b"-----BEGIN SSH SIGNATURE-----\n")
    code, _out, err = _add(harness, digest, review)
    assert code == 1 and reason in err
    level = run_cli_in(harness.repo, "eval", "review", "level", digest, "--json")
    assert json.loads(level.out)["facts"]["records"] == []


def test_a_key_revoked_later_no_longer_counts(tmp_path: Path, team: dict[str, Key]) -> None:
    from support.repo import commit_all

    harness = _harness(tmp_path, team)
    digest, commit = _candidate(harness)
    review = harness.review("candidate:signed:v1", commit, reviewer=HUMAN)
    _sign(review, team["alice"])
    assert _add(harness, digest, review)[0] == 0
    git(harness.repo, "checkout", "-q", "main")
    (harness.repo / ".plangate/revoked_signers").write_text(team["alice"].public + "\n")
    commit_all(harness.repo, "revoke alice's key")
    level = run_cli_in(harness.repo, "eval", "review", "level", digest, "--json")
    doc = json.loads(level.out)
    assert doc["facts"]["level"] == "I0"
    assert "REVIEW_SIGNER_REVOKED" in [r["code"] for r in doc["reasons"]]
