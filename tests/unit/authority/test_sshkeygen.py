"""The ssh-keygen door fails closed: missing, too old, silent, hanging or flooding programs.

Each test puts fake ``ssh-keygen``/``ssh`` programs (or none) where PlanGate looks
(:func:`support.fakessh.use_fakes`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate import sysbin
from plangate.authority import sshkeygen
from plangate.errors import EnvironmentFailure
from support.fakessh import fake_path, use_fakes
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
    use_fakes(monkeypatch, fake_path(tmp_path / "bin"))
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
    use_fakes(monkeypatch, fake_path(tmp_path / "bin", ssh_version=version, keygen=GOOD_KEYGEN))
    exc = _refusal(lambda: sshkeygen.sign(key.path, "plangate-c3", b"data"))
    assert exc.code == "AUTH_SSH_KEYGEN_TOO_OLD"
    assert "older than 8.8" in exc.message


@pytest.mark.parametrize("version", [None, "garbage", "OpenSSH", "OpenSSH_x.y"])
def test_an_untellable_version_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key, version: str | None
) -> None:
    use_fakes(monkeypatch, fake_path(tmp_path / "bin", ssh_version=version, keygen=GOOD_KEYGEN))
    sig = sign_bytes(key, "plangate-c3", b"data")
    exc = _refusal(
        lambda: sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", sig, b"data")
    )
    assert exc.code == "AUTH_SSH_KEYGEN_TOO_OLD"


def test_a_new_enough_version_passes_through_the_door(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    use_fakes(monkeypatch, fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2p1", keygen=GOOD_KEYGEN)
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
    use_fakes(monkeypatch,
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

    use_fakes(monkeypatch,
        fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2", keygen="echo not a signature"),
    )
    with pytest.raises(InputRejected) as info:
        sshkeygen.sign(key.path, "plangate-c3", b"data")
    assert info.value.code == "AUTH_SIGNING_FAILED"


def test_a_hanging_keygen_is_killed_at_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    use_fakes(monkeypatch, fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2", keygen="exec /bin/sleep 30")
    )
    monkeypatch.setattr(sshkeygen, "VERIFY_TIMEOUT_SECONDS", 1)
    exc = _refusal(
        lambda: sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", b"", b"")
    )
    assert exc.code == "AUTH_SSH_KEYGEN_TIMEOUT"


def test_a_flooding_keygen_is_refused_not_buffered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    use_fakes(monkeypatch,
        fake_path(tmp_path / "bin", ssh_version="OpenSSH_9.2", keygen="exec /usr/bin/yes Good"),
    )
    exc = _refusal(
        lambda: sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", b"", b"")
    )
    assert exc.code == "AUTH_SSH_KEYGEN_FAILED"
    assert str(sshkeygen.OUTPUT_LIMIT) in exc.message


def _good_signature_liar(directory: Path) -> Path:
    """A fake ssh-keygen that accepts every signature."""
    directory.mkdir(parents=True, exist_ok=True)
    liar = directory / "ssh-keygen"
    liar.write_text("#!/bin/sh\necho 'Good \"plangate-c3\" signature for x'\nexit 0\n")
    liar.chmod(0o755)
    return liar


def test_an_ssh_keygen_on_path_is_never_believed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    liar = _good_signature_liar(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{liar.parent}:{os.environ['PATH']}")
    monkeypatch.setattr(sysbin, "user_config_dir", lambda: tmp_path / "no-config")
    assert sshkeygen.ssh_keygen_path() != str(liar)
    assert not sshkeygen.verify(key.signer_line(), key.principal, "plangate-c3", b"x", b"data")


def test_the_persons_own_override_is_used_and_must_be_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key
) -> None:
    liar = _good_signature_liar(tmp_path / "bin")
    (tmp_path / "bin" / "ssh").write_text("#!/bin/sh\necho OpenSSH_9.6p1 >&2\n")
    (tmp_path / "bin" / "ssh").chmod(0o755)
    config = tmp_path / "config"
    config.mkdir()
    programs = config / "programs.toml"
    programs.write_text(f'ssh-keygen = "{liar}"\n')
    programs.chmod(0o644)
    monkeypatch.setattr(sysbin, "user_config_dir", lambda: config)
    # The person named this program: it is the one run.
    assert sshkeygen.ssh_keygen_path() == str(liar)
    # A config file others may write is refused, not passed over.
    programs.chmod(0o666)
    assert _refusal(sshkeygen.ssh_keygen_path).code == "AUTH_SSH_KEYGEN_UNTRUSTED"
    programs.chmod(0o644)
    liar.chmod(0o777)
    assert _refusal(sshkeygen.ssh_keygen_path).code == "AUTH_SSH_KEYGEN_UNTRUSTED"
    liar.chmod(0o755)
    programs.write_text('ssh-keygen = "bin/ssh-keygen"\n')
    assert _refusal(sshkeygen.ssh_keygen_path).code == "AUTH_SSH_KEYGEN_UNTRUSTED"


def test_only_trusted_copies_in_system_directories_are_found(tmp_path: Path) -> None:
    assert sysbin.find_system_binary("ssh-keygen")[0] is not None
    assert sysbin.find_system_binary("no-such-program-here")[0] is None
    writable = tmp_path / "tool"
    writable.write_text("#!/bin/sh\n")
    writable.chmod(0o777)
    assert "writable by others" in (sysbin.trusted_binary(str(writable)) or "")
