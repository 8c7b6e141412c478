"""allowed_signers and revoked_signers: strict parsing, every bad line named."""

from __future__ import annotations

import base64
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plangate.authority.signers import (
    KEY_TYPES,
    key_from_pub_line,
    parse_allowed_signers,
    parse_revoked,
    public_key_line,
)
from plangate.authority.trustpaths import MAX_SIGNERS_BYTES
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


def _string(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _fields(blob: bytes) -> list[bytes]:
    out, offset = [], 0
    while offset < len(blob):
        length = int.from_bytes(blob[offset : offset + 4], "big")
        out.append(blob[offset + 4 : offset + 4 + length])
        offset += 4 + length
    return out


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One ``keytype base64`` line of each accepted type: real ssh-keygen keys, and the
    two hardware (``sk-``) forms built from their public fields (no token needed)."""
    d = tmp_path_factory.mktemp("kinds")
    lines: dict[str, str] = {}
    for kind, bits in (("ed25519", None), ("ecdsa", 256), ("ecdsa", 384), ("ecdsa", 521)):
        path = d / f"{kind}{bits or ''}"
        args = ["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(path)]
        if bits:
            args[4:4] = ["-b", str(bits)]
        subprocess.run(args, check=True, capture_output=True)
        key_type, b64 = path.with_name(path.name + ".pub").read_text().split()[:2]
        lines[key_type] = f"{key_type} {b64}"
    rsa = d / "rsa"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)],
        check=True,
        capture_output=True,
    )
    lines["ssh-rsa"] = " ".join(rsa.with_name("rsa.pub").read_text().split()[:2])
    ed = _fields(base64.b64decode(lines["ssh-ed25519"].split()[1]))
    ec = _fields(base64.b64decode(lines["ecdsa-sha2-nistp256"].split()[1]))
    sk_ed = b"sk-ssh-ed25519@openssh.com"
    sk_ec = b"sk-ecdsa-sha2-nistp256@openssh.com"
    for name, fields in (
        (sk_ed, [sk_ed, ed[1], b"ssh:"]),
        (sk_ec, [sk_ec, ec[1], ec[2], b"ssh:"]),
    ):
        blob = b"".join(_string(f) for f in fields)
        lines[name.decode()] = f"{name.decode()} {base64.b64encode(blob).decode()}"
    return lines


def test_every_accepted_key_type_is_listed_and_parsed(every_kind: dict[str, str]) -> None:
    assert set(every_kind) == KEY_TYPES
    data = "".join(f"p{i}@example.com {line}\n" for i, line in enumerate(every_kind.values()))
    parsed = parse_allowed_signers(data.encode())
    assert [e.key_type for e in parsed.entries] == list(every_kind)
    assert [public_key_line(e) for e in parsed.entries] == list(every_kind.values())
    revoked = parse_revoked(("\n".join(every_kind.values()) + "\n").encode())
    assert revoked == {e.key for e in parsed.entries}


def test_the_line_handed_to_ssh_keygen_is_the_entry_exactly(keys: dict[str, Key]) -> None:
    public = keys["alice"].public
    line = keys["alice"].signer_line(
        'namespaces="plangate-c3,plangate-review",valid-after="20200101Z",'
        'valid-before="203001011230Z"'
    )
    entry = parse_allowed_signers(line.encode()).entries[0]
    assert entry.key_base64 == public.split()[1]
    assert entry.allowed_signers_line() == (
        'alice@example.com namespaces="plangate-c3,plangate-review",'
        f'valid-after="20200101000000Z",valid-before="20300101123000Z" {public}'
    )
    after_only = keys["alice"].signer_line('valid-after="20200101Z"')
    entry = parse_allowed_signers(after_only.encode()).entries[0]
    assert entry.allowed_signers_line() == (
        f'alice@example.com valid-after="20200101000000Z" {public}'
    )
    plain = parse_allowed_signers(keys["alice"].signer_line().encode()).entries[0]
    assert plain.allowed_signers_line() == f"alice@example.com {public}"
    assert public_key_line(plain) == public


def test_a_file_of_exactly_the_size_limit_is_read(keys: dict[str, Key]) -> None:
    line = (keys["alice"].signer_line() + "\n").encode()
    padding = b"#" * (MAX_SIGNERS_BYTES - len(line) - 1) + b"\n"
    data = line + padding
    assert len(data) == MAX_SIGNERS_BYTES
    assert parse_allowed_signers(data).principals == ("alice@example.com",)
    assert _code(data + b"#") == "AUTH_SIGNERS_TOO_LARGE"


EMPTY_WINDOW = "valid-after is not before valid-before"


def _message(data: bytes) -> str:
    with pytest.raises(InputRejected) as info:
        parse_allowed_signers(data)
    return info.value.message


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ('namespaces="plangate-c3', "an unterminated double quote"),
        ('valid-after=""', "timestamp '' is not YYYYMMDD[HHMM[SS]]Z"),
        ('namespaces="a""b"', "option namespaces needs a quoted value"),
        ('valid-after="a"b"', "an unterminated double quote"),
        ('valid-after="20260101Z",valid-before="20260101Z"', EMPTY_WINDOW),
        ('valid-after="202601011200Z",valid-before="20260101120000Z"', EMPTY_WINDOW),
    ],
)
def test_bad_options_say_what_is_wrong(keys: dict[str, Key], options: str, message: str) -> None:
    line = keys["alice"].signer_line(options)
    assert _message(line.encode()) == f".plangate/allowed_signers:1: {message}"


def test_a_window_of_one_second_is_accepted(keys: dict[str, Key]) -> None:
    line = keys["alice"].signer_line('valid-after="20260101000000Z",valid-before="20260101000001Z"')
    entry = parse_allowed_signers(line.encode()).entries[0]
    assert entry.valid_before == datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)


def test_bad_lines_say_what_is_wrong(keys: dict[str, Key]) -> None:
    public = keys["alice"].public
    key_type, b64 = public.split()
    where = ".plangate/allowed_signers:1: "
    assert _message(f"alice@example.com {key_type}\n".encode()) == (
        where + "expected: principal [options] keytype key"
    )
    assert _message(f'alice@example.com namespaces="x" {key_type}\n'.encode()) == (
        where + "the key type or the key is missing"
    )
    assert _code(f'alice@example.com namespaces="x" {key_type}\n'.encode()) == (
        "AUTH_SIGNERS_BAD_LINE"
    )
    assert _message(f"alice@example.com ssh-dss {b64}\n".encode()) == (
        where + "key type 'ssh-dss' is not accepted"
    )
    cert = "ssh-ed25519-cert-v01@openssh.com"
    assert _message(f"alice@example.com {cert} {b64}\n".encode()) == (
        where + f"key type {cert!r} is not accepted"
    )


@pytest.mark.parametrize("key_type", ["ecdsa-sha2-nistp999", "sk-ssh-ed448@openssh.com"])
def test_an_unknown_key_type_is_read_as_a_key_type_not_as_options(
    keys: dict[str, Key], key_type: str
) -> None:
    b64 = keys["alice"].public.split()[1]
    assert _message(f"alice@example.com {key_type} {b64}\n".encode()) == (
        f".plangate/allowed_signers:1: key type {key_type!r} is not accepted"
    )


def test_a_key_with_a_character_outside_base64_is_refused(keys: dict[str, Key]) -> None:
    key_type, b64 = keys["alice"].public.split()
    middle = len(b64) // 2
    broken = b64[:middle] + "!" + b64[middle:]
    assert _message(f"alice@example.com {key_type} {broken}\n".encode()) == (
        ".plangate/allowed_signers:1: the key is not valid base64"
    )
    with pytest.raises(InputRejected) as info:
        key_from_pub_line(f"{key_type} {broken}", "--key")
    assert info.value.code == "AUTH_SIGNERS_BAD_KEY"


def test_a_revoked_list_error_names_its_file_and_line() -> None:
    with pytest.raises(InputRejected) as info:
        parse_revoked(b"# one\nssh-ed25519\n")
    assert info.value.message == ".plangate/revoked_signers:2: expected: keytype key [comment]"


@pytest.mark.parametrize("comment", ["", " alice laptop", " two words here"])
def test_a_pub_line_gives_its_type_base64_and_key(keys: dict[str, Key], comment: str) -> None:
    public = keys["bob"].public
    key_type, b64 = public.split()
    got = key_from_pub_line(f"  {public}{comment}\n", "--key")
    assert got == (key_type, b64, base64.b64decode(b64))


@pytest.mark.parametrize("text", ["", "   \n", "ssh-ed25519", "  ssh-ed25519  \n"])
def test_a_pub_line_without_a_key_is_refused(text: str) -> None:
    with pytest.raises(InputRejected) as info:
        key_from_pub_line(text, "--key")
    assert info.value.code == "AUTH_SIGNERS_BAD_KEY"
    assert info.value.message == "--key: not a public key line"
