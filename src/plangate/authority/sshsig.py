"""Armored OpenSSH signatures (SSHSIG), parsed strictly and without cryptography.

The format (OpenSSH ``PROTOCOL.sshsig``): a header line
``-----BEGIN SSH SIGNATURE-----``, base64 lines, a footer line
``-----END SSH SIGNATURE-----``; the decoded blob is the six bytes ``SSHSIG``,
a uint32 version (1), then five SSH strings: the public key, the namespace,
a reserved string, the hash algorithm (``sha256`` or ``sha512``) and the
signature. Parsing tells who claims to have signed and for which namespace;
whether the signature is good is ``ssh-keygen``'s answer
(:mod:`plangate.authority.sshkeygen`), never this module's.
"""

from __future__ import annotations

import base64
import binascii

from plangate.errors import InputRejected
from plangate.records import NamedTuple

BEGIN = b"-----BEGIN SSH SIGNATURE-----"
END = b"-----END SSH SIGNATURE-----"
MAGIC = b"SSHSIG"
VERSION = 1
HASH_ALGORITHMS = frozenset({"sha256", "sha512"})

MAX_SIGNATURE_BYTES = 16 * 1024
"""An armored signature file is a few hundred bytes; anything past 16 KiB is refused."""

MAX_LINES = 200


class SignatureBlob(NamedTuple):
    """What an armored signature claims: the signer's key, the namespace, the hash."""

    public_key: bytes
    key_type: str
    namespace: str
    hash_algorithm: str


def _bad(message: str, hint: str = "sign again with 'ssh-keygen -Y sign'") -> InputRejected:
    return InputRejected("SIGNATURE_MALFORMED", message, hint)


def _take_string(blob: bytes, offset: int, what: str) -> tuple[bytes, int]:
    if offset + 4 > len(blob):
        raise _bad(f"the signature ends inside the length of its {what}")
    length = int.from_bytes(blob[offset : offset + 4], "big")
    start = offset + 4
    if start + length > len(blob):
        raise _bad(f"the signature's {what} is longer than the signature")
    return blob[start : start + length], start + length


def _ascii(raw: bytes, what: str) -> str:
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise _bad(f"the signature's {what} is not ASCII") from None
    if not text or not text.isprintable() or " " in text:
        raise _bad(f"the signature's {what} {text!r} is empty or holds spaces or controls")
    return text


def key_type_of(public_key: bytes) -> str:
    """The key type string at the start of an SSH wire-format public key."""
    raw, _ = _take_string(public_key, 0, "key type")
    return _ascii(raw, "key type")


_KEY_SHAPES = {
    # key type: (number of SSH strings, index of the key material, its exact length or 0)
    "ssh-ed25519": (2, 1, 32),
    "sk-ssh-ed25519@openssh.com": (3, 1, 32),
    "ecdsa-sha2-nistp256": (3, 2, 65),
    "ecdsa-sha2-nistp384": (3, 2, 97),
    "ecdsa-sha2-nistp521": (3, 2, 133),
    "sk-ecdsa-sha2-nistp256@openssh.com": (4, 2, 65),
    "ssh-rsa": (3, 2, 0),
}


def check_public_key(public_key: bytes) -> str:
    """The key type of a complete SSH wire-format public key of a known shape.

    The blob must hold exactly the fields its type defines (no truncation, no
    trailing bytes), with key material of the type's length.
    """
    key_type = key_type_of(public_key)
    shape = _KEY_SHAPES.get(key_type)
    if shape is None:
        raise _bad(f"key type {key_type!r} is not accepted", "use an ed25519 or ECDSA key")
    count, index, length = shape
    fields: list[bytes] = []
    offset = 0
    while offset < len(public_key):
        field, offset = _take_string(public_key, offset, "public key")
        fields.append(field)
    if len(fields) != count or (length and len(fields[index]) != length):
        raise _bad(f"the {key_type} public key is truncated or has extra fields")
    if key_type == "ssh-rsa" and len(fields[index]) < 256:
        raise _bad("the RSA key is shorter than 2048 bits", "use an ed25519 key")
    return key_type


def decode_armor(data: bytes) -> bytes:
    """The blob of an armored signature: exact header and footer lines, base64 between."""
    if len(data) > MAX_SIGNATURE_BYTES:
        raise _bad(f"the signature file is {len(data)} bytes (limit {MAX_SIGNATURE_BYTES})")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if len(lines) > MAX_LINES:
        raise _bad("the signature file has too many lines")
    if len(lines) < 3 or lines[0] != BEGIN or lines[-1] != END:
        raise _bad("not an armored SSH signature (header or footer line missing or altered)")
    body = b"".join(lines[1:-1])
    if not body or any(ch not in _BASE64_ALPHABET for ch in body):
        raise _bad("the signature's body is not base64")
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise _bad("the signature's body is not valid base64 (truncated?)") from None


_BASE64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def parse_signature(data: bytes) -> SignatureBlob:
    """Parse an armored SSHSIG file; ``SIGNATURE_MALFORMED`` on any deviation."""
    blob = decode_armor(data)
    if blob[:6] != MAGIC:
        raise _bad("the signature does not start with the SSHSIG preamble")
    if len(blob) < 10:
        raise _bad("the signature ends before its version")
    version = int.from_bytes(blob[6:10], "big")
    if version != VERSION:
        raise _bad(f"signature version {version} is not {VERSION}", "use OpenSSH's ssh-keygen")
    offset = 10
    public_key, offset = _take_string(blob, offset, "public key")
    namespace_raw, offset = _take_string(blob, offset, "namespace")
    _reserved, offset = _take_string(blob, offset, "reserved field")
    hash_raw, offset = _take_string(blob, offset, "hash algorithm")
    signature, offset = _take_string(blob, offset, "signature")
    if offset != len(blob):
        raise _bad("the signature has trailing bytes")
    if not signature:
        raise _bad("the signature's signature field is empty")
    namespace = _ascii(namespace_raw, "namespace")
    hash_algorithm = _ascii(hash_raw, "hash algorithm")
    if hash_algorithm not in HASH_ALGORITHMS:
        raise _bad(f"hash algorithm {hash_algorithm!r} is not sha256 or sha512")
    return SignatureBlob(public_key, check_public_key(public_key), namespace, hash_algorithm)
