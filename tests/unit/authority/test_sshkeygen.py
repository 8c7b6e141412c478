"""The ssh-keygen door fails closed: missing, too old, silent, hanging or flooding programs.

Each test puts fake ``ssh-keygen``/``ssh`` programs (or none) on a private PATH.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.authority import sshkeygen
from plangate.errors import EnvironmentFailure
from support.fakessh import fake_path
from support.keys import make_key, sign_bytes

GOOD_KEYGEN = 'exec /usr/bin/ssh-keygen "$@"'


def _refusal(call: object) -> EnvironmentFailure:
    with pytest.raises(EnvironmentFailure) as info:
        call()  # type: ignore[operator]
    assert info.value.hint, "every refusal carries a hint"
    return info.value


@pytest.fixture
def key(tmp_path: Path):  # type: ignore[no-untyped-def]
    return make_key(tmp_path / "keys", "alice@example.com")


def test_missing_ssh_keygen_is_refused_with_an_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    monkeypatch.setenv("PATH", fake_path(tmp_path / "bin"))
    for call in (
        sshkeygen.ssh_keygen_path,
        lambda: sshkeygen.sign(key.path, "plangate-c3", b"data"),
        lambda: sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", b"", b""),
        lambda: sshkeygen.public_key_of(key.pub_path),
    ):
        exc = _refusal(call)
        assert exc.code == "AUTH_SSH_KEYGEN_MISSING"
        assert "openssh" in exc.hint.lower()


@pytest.mark.parametrize(
    "version", ["OpenSSH_8.4p1 Debian-5, OpenSSL 1.1.1", "OpenSSH_7.9p1", "OpenSSH_8.7"]
)
def test_an_openssh_older_than_8_8_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key, version: str
) -> None:
    monkeypatch.setenv("PATH", fake_path(tmp_path / "bin", ssh_version=version, keygen=GOOD_KEYGEN))
    exc = _refusal(lambda: sshkeygen.sign(key.path, "plangate-c3", b"data"))
    assert exc.code == "AUTH_SSH_KEYGEN_TOO_OLD"
    assert "older than 8.8" in exc.message


@pytest.mark.parametrize("version", [None, "garbage", "OpenSSH", "OpenSSH_x.y"])
def test_an_untellable_version_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key, version: str | None
) -> None:
    monkeypatch.setenv("PATH", fake_path(tmp_path / "bin", ssh_version=version, keygen=GOOD_KEYGEN))
    sig = sign_bytes(key, "plangate-c3", b"data")
    exc = _refusal(
        lambda: sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", sig, b"data")
    )
    assert exc.code == "AUTH_SSH_KEYGEN_TOO_OLD"


def test_a_new_enough_version_passes_through_the_door(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    monkeypatch.setenv(
        "PATH", fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2p1", keygen=GOOD_KEYGEN)
    )
    sig = sshkeygen.sign(key.path, "plangate-c3", b"data")
    line = key.signer_line()
    assert sshkeygen.verify(line, key.principal, "plangate-c3", sig, b"data")
    assert not sshkeygen.verify(line, key.principal, "plangate-c3", sig, b"other")
    assert not sshkeygen.verify(line, key.principal, "plangate-review", sig, b"data")


def test_a_keygen_that_refuses_every_signature_verifies_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    sig = sign_bytes(key, "plangate-c3", b"data")
    monkeypatch.setenv(
        "PATH",
        fake_path(
            tmp_path / "bin",
            ssh_version="OpenSSH_9.2",
            keygen="echo 'Good \"plangate-c3\"'; exit 1",
        ),
    )
    assert not sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", sig, b"data")


def test_a_keygen_that_signs_nothing_is_a_signing_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    from plangate.errors import InputRejected

    monkeypatch.setenv(
        "PATH",
        fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2", keygen="echo not a signature"),
    )
    with pytest.raises(InputRejected) as info:
        sshkeygen.sign(key.path, "plangate-c3", b"data")
    assert info.value.code == "AUTH_SIGNING_FAILED"


def test_a_hanging_keygen_is_killed_at_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    monkeypatch.setenv(
        "PATH", fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2", keygen="exec /bin/sleep 30")
    )
    monkeypatch.setattr(sshkeygen, "VERIFY_TIMEOUT_SECONDS", 1)
    exc = _refusal(
        lambda: sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", b"", b"")
    )
    assert exc.code == "AUTH_SSH_KEYGEN_TIMEOUT"


def test_a_flooding_keygen_is_refused_not_buffered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    monkeypatch.setenv(
        "PATH",
        fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2", keygen="exec /usr/bin/yes Good"),
    )
    exc = _refusal(
        lambda: sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", b"", b"")
    )
    assert exc.code == "AUTH_SSH_KEYGEN_FAILED"
    assert str(sshkeygen.OUTPUT_LIMIT) in exc.message
