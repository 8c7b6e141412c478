"""allowed_signers and revoked_signers: strict parsing, every bad line named."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from plangate.authority.signers import parse_allowed_signers, parse_revoked
from plangate.errors import InputRejected
from support.keys import Key, make_key


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Key]:
    d = tmp_path_factory.mktemp("keys")
    return {
        "alice": make_key(d, "alice@example.com"),
        "bob": make_key(d, "bob@example.com", "ecdsa"),
    }


def _code(data: bytes) -> str:
    with pytest.raises(InputRejected) as info:
        parse_allowed_signers(data)
    return info.value.code


def test_plain_lines_comments_and_blank_lines(keys: dict[str, Key]) -> None:
    data = (
        "# team keys\n\n"
        f"{keys['alice'].signer_line()} alice laptop\n"
        f"   # indented comment\n{keys['bob'].signer_line()}\n"
    ).encode()
    parsed = parse_allowed_signers(data)
    assert parsed.principals == ("alice@example.com", "bob@example.com")
    assert parsed.entries[1].key_type == "ecdsa-sha2-nistp256"
    assert parsed.by_principal("bob@example.com") is parsed.entries[1]
    assert parsed.by_key(parsed.entries[0].key) is parsed.entries[0]


def test_options_are_parsed(keys: dict[str, Key]) -> None:
    line = keys["alice"].signer_line(
        'namespaces="plangate-c3,plangate-review",valid-after="20200101Z",'
        'Valid-Before="203001011230Z"'
    )
    entry = parse_allowed_signers(line.encode()).entries[0]
    assert entry.namespaces == ("plangate-c3", "plangate-review")
    assert entry.valid_after == datetime(2020, 1, 1, tzinfo=UTC)
    assert entry.valid_before == datetime(2030, 1, 1, 12, 30, tzinfo=UTC)
    # The line handed to ssh-keygen keeps every restriction.
    rendered = entry.allowed_signers_line()
    assert 'namespaces="plangate-c3,plangate-review"' in rendered
    assert 'valid-before="20300101123000Z"' in rendered


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ("cert-authority", "AUTH_SIGNERS_CERT_AUTHORITY"),
        ('cert-authority,namespaces="plangate-c3"', "AUTH_SIGNERS_CERT_AUTHORITY"),
        ("no-touch-required", "AUTH_SIGNERS_UNKNOWN_OPTION"),
        ('principals="x"', "AUTH_SIGNERS_UNKNOWN_OPTION"),
        ("namespaces=plangate-c3", "AUTH_SIGNERS_BAD_OPTION"),
        ('namespaces="plangate-*"', "AUTH_SIGNERS_BAD_OPTION"),
        ('namespaces="a,a"', "AUTH_SIGNERS_BAD_OPTION"),
        ('namespaces=""', "AUTH_SIGNERS_BAD_OPTION"),
        ('namespaces="a",namespaces="b"', "AUTH_SIGNERS_BAD_OPTION"),
        ('valid-after="20200101"', "AUTH_SIGNERS_BAD_OPTION"),
        ('valid-after="20201301Z"', "AUTH_SIGNERS_BAD_OPTION"),
        ('valid-after="2020-01-01Z"', "AUTH_SIGNERS_BAD_OPTION"),
        ('valid-after="20300101Z",valid-before="20200101Z"', "AUTH_SIGNERS_BAD_OPTION"),
        ('namespaces="a",,valid-after="20200101Z"', "AUTH_SIGNERS_BAD_OPTION"),
    ],
)
def test_bad_options(keys: dict[str, Key], options: str, code: str) -> None:
    assert _code(keys["alice"].signer_line(options).encode()) == code


@pytest.mark.parametrize(
    ("principal", "code"),
    [
        ("alice@example.com,bob@example.com", "AUTH_SIGNERS_MULTIPLE_PRINCIPALS"),
        ("*@example.com", "AUTH_SIGNERS_PRINCIPAL_PATTERN"),
        ("alice?", "AUTH_SIGNERS_PRINCIPAL_PATTERN"),
        ("!mallory", "AUTH_SIGNERS_PRINCIPAL_PATTERN"),
        ("-alice", "AUTH_SIGNERS_BAD_LINE"),
        ("al'ice", "AUTH_SIGNERS_BAD_LINE"),
    ],
)
def test_bad_principals(keys: dict[str, Key], principal: str, code: str) -> None:
    assert _code(f"{principal} {keys['alice'].public}\n".encode()) == code


def test_bad_lines(keys: dict[str, Key]) -> None:
    public = keys["alice"].public
    key_type, b64 = public.split()
    assert _code(b"alice@example.com\n") == "AUTH_SIGNERS_BAD_LINE"
    assert _code(f"alice@example.com {key_type}\n".encode()) == "AUTH_SIGNERS_BAD_LINE"
    assert _code(f"alice@example.com {public}\r\n".encode()) == "AUTH_SIGNERS_BAD_LINE"
    assert _code(b"alice@example.com \xff\n") == "AUTH_SIGNERS_BAD_LINE"
    assert _code(f'alice@example.com namespaces="x {public}\n'.encode()) == "AUTH_SIGNERS_BAD_LINE"
    assert _code(f"alice@example.com ssh-dss {b64}\n".encode()) == "AUTH_SIGNERS_BAD_KEY"
    assert (
        _code(f"alice@example.com ssh-ed25519-cert-v01@openssh.com {b64}\n".encode())
        == "AUTH_SIGNERS_BAD_KEY"
    )
    assert _code(f"alice@example.com {key_type} {b64[:-4]}\n".encode()) == "AUTH_SIGNERS_BAD_KEY"
    assert _code(f"alice@example.com {key_type} !!!!\n".encode()) == "AUTH_SIGNERS_BAD_KEY"
    # The declared type differs from the key's own type.
    assert (
        _code(f"alice@example.com ecdsa-sha2-nistp256 {b64}\n".encode()) == "AUTH_SIGNERS_BAD_KEY"
    )
    assert _code(b"x" * (256 * 1024 + 1)) == "AUTH_SIGNERS_TOO_LARGE"


def test_duplicates(keys: dict[str, Key]) -> None:
    alice, bob = keys["alice"], keys["bob"]
    twice = f"{alice.signer_line()}\nalice@example.com {bob.public}\n".encode()
    assert _code(twice) == "AUTH_SIGNERS_DUPLICATE_PRINCIPAL"
    shared = f"{alice.signer_line()}\ncarol@example.com {alice.public}\n".encode()
    assert _code(shared) == "AUTH_SIGNERS_DUPLICATE_KEY"


def test_revoked_list(keys: dict[str, Key]) -> None:
    data = f"# revoked\n{keys['bob'].public} lost laptop\n".encode()
    revoked = parse_revoked(data)
    assert parse_allowed_signers(keys["bob"].signer_line().encode()).entries[0].key in revoked
    with pytest.raises(InputRejected) as info:
        parse_revoked(b"ssh-ed25519\n")
    assert info.value.code == "AUTH_SIGNERS_BAD_LINE"
    with pytest.raises(InputRejected) as info:
        parse_revoked(b"ssh-ed25519 AAAA\n")
    assert info.value.code == "AUTH_SIGNERS_BAD_KEY"


def test_the_error_names_the_line(keys: dict[str, Key], tmp_path: Path) -> None:
    data = f"# ok\n{keys['alice'].signer_line()}\n*@x {keys['bob'].public}\n".encode()
    with pytest.raises(InputRejected) as info:
        parse_allowed_signers(data)
    assert ".plangate/allowed_signers:3" in info.value.message
