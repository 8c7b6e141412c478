"""The signature rules with real keys and real ssh-keygen: every rule bites."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from plangate.authority.root import build_root
from plangate.authority.verify import (
    SIGNATURE_RULES,
    SignatureCase,
    Verified,
    check_signature,
    ssh_keygen_crypto,
)
from plangate.verdict import Reason
from support.keys import Key, allowed_signers, make_key, sign_bytes, trust_toml

NOW = datetime(2026, 6, 1, tzinfo=UTC)
DATA = b'{"task_id": "TASK-0001"}'


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Key]:
    d = tmp_path_factory.mktemp("team")
    return {
        "alice": make_key(d, "alice@example.com"),
        "bob": make_key(d, "bob@example.com", "ecdsa"),
        "carol": make_key(d, "carol@example.com"),
        "bot": make_key(d, "bot@example.com"),
        "mallory": make_key(d, "mallory@example.com"),
    }


def _root(team: dict[str, Key], signers: bytes | None = None, revoked: bytes | None = None):  # type: ignore[no-untyped-def]
    trust = trust_toml(
        ["alice@example.com", "bob@example.com"],
        ["carol@example.com"],
        agents=["bot@example.com"],
    )
    keys = (
        signers
        if signers is not None
        else allowed_signers(team["alice"], team["bob"], team["carol"], team["bot"])
    )
    return build_root(trust, keys, revoked, "c" * 40)


def _check(
    team: dict[str, Key],
    sig: bytes | None,
    *,
    role: str | None = "approver",
    data: bytes = DATA,
    namespace: str = "plangate-c3",
    root=None,  # type: ignore[no-untyped-def]
    now: datetime = NOW,
) -> Verified | Reason:
    case = SignatureCase(
        "C3",
        "approvals/c3.json.sig",
        sig,
        "missing",
        data,
        namespace,
        role,
        root or _root(team),
        now,
        ssh_keygen_crypto,
    )
    return check_signature(case)


def _code(result: Verified | Reason) -> str:
    assert isinstance(result, Reason), result
    return result.code


def test_the_approver_s_signature_verifies(team: dict[str, Key]) -> None:
    result = _check(team, sign_bytes(team["carol"], "plangate-c3", DATA))
    assert isinstance(result, Verified)
    assert result.principal == "carol@example.com"
    assert result.roles == ("approver",)
    assert result.key_fingerprint.startswith("SHA256:")


def test_an_ecdsa_reviewer_verifies(team: dict[str, Key]) -> None:
    sig = sign_bytes(team["bob"], "plangate-review", DATA)
    result = _check(team, sig, role="reviewer", namespace="plangate-review")
    assert isinstance(result, Verified) and result.principal == "bob@example.com"


def test_each_rule_rejects(team: dict[str, Key], tmp_path: Path) -> None:
    carol = team["carol"]
    good = sign_bytes(carol, "plangate-c3", DATA)
    assert _code(_check(team, None)) == "C3_SIGNATURE_MISSING"
    assert _code(_check(team, good[:40])) == "C3_SIGNATURE_MALFORMED"
    assert _code(_check(team, sign_bytes(carol, "plangate-review", DATA))) == (
        "C3_SIGNATURE_NAMESPACE"
    )
    assert _code(_check(team, sign_bytes(team["mallory"], "plangate-c3", DATA))) == (
        "C3_SIGNER_UNKNOWN"
    )
    revoked = _root(team, revoked=f"{carol.public}\n".encode())
    assert _code(_check(team, good, root=revoked)) == "C3_SIGNER_REVOKED"
    expired = _root(
        team,
        allowed_signers(team["alice"], team["bob"])
        + (carol.signer_line('valid-before="20260101Z"') + "\n").encode(),
    )
    assert _code(_check(team, good, root=expired)) == "C3_SIGNER_EXPIRED"
    future = _root(
        team,
        allowed_signers(team["alice"], team["bob"])
        + (carol.signer_line('valid-after="20270101Z"') + "\n").encode(),
    )
    assert _code(_check(team, good, root=future)) == "C3_SIGNER_EXPIRED"
    restricted = _root(
        team,
        allowed_signers(team["alice"], team["bob"])
        + (carol.signer_line('namespaces="plangate-review"') + "\n").encode(),
    )
    assert _code(_check(team, good, root=restricted)) == "C3_SIGNER_NAMESPACE"
    assert _code(_check(team, good, data=DATA + b" ")) == "C3_SIGNATURE_INVALID"
    assert _code(_check(team, sign_bytes(team["bot"], "plangate-c3", DATA))) == (
        "C3_SIGNER_IS_AGENT"
    )
    assert _code(_check(team, sign_bytes(team["alice"], "plangate-c3", DATA))) == (
        "C3_SIGNER_NOT_AUTHORISED"
    )


def test_a_valid_window_that_includes_now_passes(team: dict[str, Key]) -> None:
    carol = team["carol"]
    window = _root(
        team,
        allowed_signers(team["alice"], team["bob"])
        + (
            carol.signer_line(
                'valid-after="20260101Z",valid-before="20990101Z",namespaces="plangate-c3"'
            )
            + "\n"
        ).encode(),
    )
    result = _check(team, sign_bytes(carol, "plangate-c3", DATA), root=window)
    assert isinstance(result, Verified)


def test_the_crypto_check_runs_only_after_the_pure_rules(team: dict[str, Key]) -> None:
    asked: list[str] = []

    def crypto(entry, namespace, sig, data) -> bool:  # type: ignore[no-untyped-def]
        asked.append(entry.principal)
        return True

    sig = sign_bytes(team["mallory"], "plangate-c3", DATA)
    case = SignatureCase(
        "C3", "x", sig, "", DATA, "plangate-c3", "approver", _root(team), NOW, crypto
    )
    assert _code(check_signature(case)) == "C3_SIGNER_UNKNOWN"
    assert asked == []
    assert SIGNATURE_RULES[0].suffixes == ("SIGNATURE_MISSING",)


@pytest.mark.parametrize("role", ["override", "evaluator"])
def test_a_role_nobody_holds_authorises_no_signer(team: dict[str, Key], role: str) -> None:
    """The trust file lists no principal under ``role``: every listed human's valid
    signature is still refused (an absent role never means everyone)."""
    carol = sign_bytes(team["carol"], "plangate-c3", DATA)
    assert isinstance(_check(team, carol), Verified)  # the approver's signature is good
    for name in ("alice", "bob", "carol"):
        sig = sign_bytes(team[name], "plangate-c3", DATA)
        result = _check(team, sig, role=role)
        assert _code(result) == "C3_SIGNER_NOT_AUTHORISED", name
        assert isinstance(result, Reason) and f"does not hold the {role} role" in result.message
