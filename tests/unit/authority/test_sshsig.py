"""Armored SSHSIG parsing: what a signature claims, every malformation refused."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from plangate.authority.sshsig import BEGIN, END, parse_signature
from plangate.errors import InputRejected
from support.keys import make_key, sign_bytes


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    key = make_key(tmp_path_factory.mktemp("k"), "alice@example.com")
    sig = sign_bytes(key, "plangate-c3", b"record bytes")
    return sig, base64.b64decode(key.public.split()[1])


def _malformed(data: bytes) -> None:
    with pytest.raises(InputRejected) as info:
        parse_signature(data)
    assert info.value.code == "SIGNATURE_MALFORMED"


def _rearmor(blob: bytes) -> bytes:
    return BEGIN + b"\n" + base64.b64encode(blob) + b"\n" + END + b"\n"


def test_a_real_signature_names_its_key_and_namespace(signed: tuple[bytes, bytes]) -> None:
    sig, key = signed
    blob = parse_signature(sig)
    assert blob.public_key == key
    assert blob.key_type == "ssh-ed25519"
    assert blob.namespace == "plangate-c3"
    assert blob.hash_algorithm == "sha512"


def test_ecdsa_keys_parse(tmp_path: Path) -> None:
    key = make_key(tmp_path, "bob@example.com", "ecdsa")
    assert parse_signature(sign_bytes(key, "plangate-review", b"x")).key_type == (
        "ecdsa-sha2-nistp256"
    )


def test_armor_damage(signed: tuple[bytes, bytes]) -> None:
    sig, _ = signed
    lines = sig.split(b"\n")
    _malformed(b"")
    _malformed(sig[: len(sig) // 2])  # truncated: no footer
    _malformed(b"\n".join(lines[:-2]) + b"\n")  # footer gone
    _malformed(sig.replace(b"BEGIN SSH SIGNATURE", b"BEGIN SSH  SIGNATURE"))
    _malformed(b" " + sig)
    _malformed(sig.replace(lines[1], lines[1][:-1] + b"*"))  # not base64
    _malformed(BEGIN + b"\n" + END + b"\n")  # empty body
    _malformed(sig.replace(lines[1], lines[1][:-3]))  # bad base64 length
    _malformed(sig + b"x" * 20000)  # too large


def test_blob_damage(signed: tuple[bytes, bytes]) -> None:
    sig, _ = signed
    blob = base64.b64decode(b"".join(sig.split(b"\n")[1:-2]))
    _malformed(_rearmor(b"SSHSIX" + blob[6:]))
    _malformed(_rearmor(blob[:6] + (2).to_bytes(4, "big") + blob[10:]))
    _malformed(_rearmor(blob[:8]))
    _malformed(_rearmor(blob[:-5]))  # truncated signature string
    _malformed(_rearmor(blob + b"\x00"))  # trailing bytes
    # hash algorithm other than sha256/sha512
    _malformed(_rearmor(blob.replace(b"\x00\x00\x00\x06sha512", b"\x00\x00\x00\x06md5xxx")))
    # an empty namespace
    _malformed(_rearmor(blob.replace(b"\x00\x00\x00\x0bplangate-c3", b"\x00\x00\x00\x00")))
    # a truncated public key inside an otherwise consistent blob
    key_len = int.from_bytes(blob[10:14], "big")
    short = blob[14 : 14 + key_len - 4]
    _malformed(_rearmor(blob[:10] + len(short).to_bytes(4, "big") + short + blob[14 + key_len :]))
