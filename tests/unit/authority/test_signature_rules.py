"""The signature rules with real keys and real ssh-keygen: every rule bites."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
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


def test_each_rule_rejects_with_the_code_its_row_documents(
    team: dict[str, Key], tmp_path: Path
) -> None:
    carol = team["carol"]
    good = sign_bytes(carol, "plangate-c3", DATA)
    seen: list[str] = []

    def rejected(result: Verified | Reason) -> str:
        code = _code(result)
        if code not in seen:
            seen.append(code)
        return code

    assert rejected(_check(team, None)) == "C3_SIGNATURE_MISSING"
    assert rejected(_check(team, good[:40])) == "C3_SIGNATURE_MALFORMED"
    assert rejected(_check(team, sign_bytes(carol, "plangate-review", DATA))) == (
        "C3_SIGNATURE_NAMESPACE"
    )
    assert rejected(_check(team, sign_bytes(team["mallory"], "plangate-c3", DATA))) == (
        "C3_SIGNER_UNKNOWN"
    )
    revoked = _root(team, revoked=f"{carol.public}\n".encode())
    assert rejected(_check(team, good, root=revoked)) == "C3_SIGNER_REVOKED"
    expired = _root(
        team,
        allowed_signers(team["alice"], team["bob"])
        + (carol.signer_line('valid-before="20260101Z"') + "\n").encode(),
    )
    assert rejected(_check(team, good, root=expired)) == "C3_SIGNER_EXPIRED"
    future = _root(
        team,
        allowed_signers(team["alice"], team["bob"])
        + (carol.signer_line('valid-after="20270101Z"') + "\n").encode(),
    )
    assert rejected(_check(team, good, root=future)) == "C3_SIGNER_EXPIRED"
    restricted = _root(
        team,
        allowed_signers(team["alice"], team["bob"])
        + (carol.signer_line('namespaces="plangate-review"') + "\n").encode(),
    )
    assert rejected(_check(team, good, root=restricted)) == "C3_SIGNER_NAMESPACE"
    assert rejected(_check(team, good, data=DATA + b" ")) == "C3_SIGNATURE_INVALID"
    assert rejected(_check(team, sign_bytes(team["bot"], "plangate-c3", DATA))) == (
        "C3_SIGNER_IS_AGENT"
    )
    assert rejected(_check(team, sign_bytes(team["alice"], "plangate-c3", DATA))) == (
        "C3_SIGNER_NOT_AUTHORISED"
    )
    # one rejection per row, in the table's order, each with the code its row names
    assert seen == [f"C3_{s}" for rule in SIGNATURE_RULES for s in rule.suffixes]


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


def test_an_unknown_key_s_reason_names_the_key_type_and_the_trust_root(
    team: dict[str, Key],
) -> None:
    result = _check(team, sign_bytes(team["mallory"], "plangate-c3", DATA))
    assert isinstance(result, Reason)
    assert result.code == "C3_SIGNER_UNKNOWN"
    assert result.message == (
        "approvals/c3.json.sig: signed by a ssh-ed25519 key that .plangate/allowed_signers "
        "does not list (trust root at cccccccccccc)"
    )


def _carol_with(team: dict[str, Key], options: str):  # type: ignore[no-untyped-def]
    line = team["carol"].signer_line(options) + "\n"
    return _root(team, allowed_signers(team["alice"], team["bob"]) + line.encode())


def test_an_expired_key_s_reason_gives_the_moment_in_utc(team: dict[str, Key]) -> None:
    good = sign_bytes(team["carol"], "plangate-c3", DATA)
    before = _check(team, good, root=_carol_with(team, 'valid-before="202601021530Z"'))
    assert isinstance(before, Reason)
    assert before.message == (
        "approvals/c3.json.sig: carol@example.com's key expired at 2026-01-02T15:30:00Z"
    )
    after = _check(team, good, root=_carol_with(team, 'valid-after="20270304Z"'))
    assert isinstance(after, Reason)
    assert after.message == (
        "approvals/c3.json.sig: carol@example.com's key is valid only after "
        "2027-03-04T00:00:00Z"
    )


def test_the_validity_window_includes_both_of_its_bounds(team: dict[str, Key]) -> None:
    """ssh-keygen's valid-after and valid-before hold "at or after" and "at or before":
    a signature checked at exactly either moment verifies (ssh-keygen itself checks the
    window at the real time, which lies inside both)."""
    good = sign_bytes(team["carol"], "plangate-c3", DATA)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    end = datetime(2099, 1, 1, tzinfo=UTC)
    root = _carol_with(team, 'valid-after="20260101Z",valid-before="20990101Z"')
    assert isinstance(_check(team, good, root=root, now=start), Verified)
    assert isinstance(_check(team, good, root=root, now=end), Verified)
    assert _code(_check(team, good, root=root, now=start - timedelta(seconds=1))) == (
        "C3_SIGNER_EXPIRED"
    )
    assert _code(_check(team, good, root=root, now=end + timedelta(seconds=1))) == (
        "C3_SIGNER_EXPIRED"
    )


def test_without_a_required_role_any_listed_human_s_signature_verifies(
    team: dict[str, Key],
) -> None:
    """A document that needs no role (role None) is signed by whoever the trust root
    lists, whatever roles they hold."""
    for name in ("alice", "bob", "carol"):
        sig = sign_bytes(team[name], "plangate-c3", DATA)
        result = _check(team, sig, role=None)
        assert isinstance(result, Verified), result
        assert result.principal == f"{name}@example.com"
    agent = _check(team, sign_bytes(team["bot"], "plangate-c3", DATA), role=None)
    assert _code(agent) == "C3_SIGNER_IS_AGENT"


def test_the_fingerprint_is_ssh_keygen_s(team: dict[str, Key]) -> None:
    for name in ("carol", "bob"):
        listed = subprocess.run(
            ["ssh-keygen", "-l", "-E", "sha256", "-f", str(team[name].pub_path)],
            capture_output=True,
            check=True,
            text=True,
        ).stdout.split()[1]
        role = "approver" if name == "carol" else "reviewer"
        result = _check(team, sign_bytes(team[name], "plangate-c3", DATA), role=role)
        assert isinstance(result, Verified), result
        assert result.key_fingerprint == listed


def test_only_a_principal_the_trust_file_lists_as_human_is_verified_as_human(
    team: dict[str, Key],
) -> None:
    trust = trust_toml(
        ["alice@example.com", "bob@example.com"],
        ["carol@example.com"],
        humans=["carol@example.com"],
        agents=["bot@example.com"],
    )
    keys = allowed_signers(team["alice"], team["bob"], team["carol"], team["bot"])
    root = build_root(trust, keys, None, "c" * 40)
    carol = _check(team, sign_bytes(team["carol"], "plangate-c3", DATA), root=root)
    assert isinstance(carol, Verified) and carol.human is True
    alice = _check(
        team, sign_bytes(team["alice"], "plangate-c3", DATA), role="reviewer", root=root
    )
    assert isinstance(alice, Verified) and alice.human is False
