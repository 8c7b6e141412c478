"""``.plangate/allowed_signers`` and ``.plangate/revoked_signers``, parsed strictly (pure).

The allowed-signers file is OpenSSH's format (ssh-keygen(1), "ALLOWED
SIGNERS": ``principals [options] keytype base64-key [comment]``, ``#``
comments and blank lines ignored), restricted so that every line names
exactly one person and one key:

- one literal principal per line (no comma list, no ``*``, ``?`` or ``!``
  pattern: a pattern would let any name match); a principal appears on one
  line only, and a key on one line only;
- options: ``namespaces="..."`` (a comma list of literal namespaces),
  ``valid-after="..."`` and ``valid-before="..."`` (``YYYYMMDD[HHMM[SS]]Z``,
  always UTC: the ``Z`` is required). ``cert-authority`` is refused (a CA
  would let principals the file does not list sign), as is any other option;
- key types: ed25519, ECDSA, RSA and their hardware (``sk-``) forms;
  certificates and DSA are refused. The base64 key must decode to a key of the
  declared type.

The revoked-signers file lists public keys (``keytype base64-key [comment]``)
that never verify, whatever the allowed-signers file says.

Every deviation is an :class:`~plangate.errors.InputRejected` with an
``AUTH_SIGNERS_*`` code naming the line.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime

from plangate.authority.sshsig import check_public_key
from plangate.authority.trustpaths import MAX_SIGNERS_BYTES
from plangate.errors import InputRejected
from plangate.records import NamedTuple

KEY_TYPES = frozenset(
    {
        "ssh-ed25519",
        "sk-ssh-ed25519@openssh.com",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521",
        "sk-ecdsa-sha2-nistp256@openssh.com",
        "ssh-rsa",
    }
)
"""Key types a signer may hold (hardware-backed ``sk-`` keys included)."""

PRINCIPAL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@-]{0,127}")
"""A literal principal: a user@domain-like name, no pattern characters."""

NAMESPACE_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_TIME_RE = re.compile(r"(\d{8})(\d{4}(?:\d{2})?)?Z")
_OPTION_KEYS = ("namespaces", "valid-after", "valid-before")


class SignerEntry(NamedTuple):
    """One allowed signer: a principal, its key and the options that restrict it."""

    line: int
    principal: str
    key_type: str
    key_base64: str
    key: bytes
    namespaces: tuple[str, ...] | None
    valid_after: datetime | None
    valid_before: datetime | None

    def allowed_signers_line(self) -> str:
        """This entry as one line of an allowed-signers file for ``ssh-keygen``."""
        options = []
        if self.namespaces is not None:
            options.append(f'namespaces="{",".join(self.namespaces)}"')
        if self.valid_after is not None:
            options.append(f'valid-after="{self.valid_after:%Y%m%d%H%M%S}Z"')
        if self.valid_before is not None:
            options.append(f'valid-before="{self.valid_before:%Y%m%d%H%M%S}Z"')
        parts = [
            self.principal,
            *([",".join(options)] if options else []),
            self.key_type,
            self.key_base64,
        ]
        return " ".join(parts)


class AllowedSigners(NamedTuple):
    """The parsed file: entries in file order, looked up by key or principal."""

    entries: tuple[SignerEntry, ...]

    def by_key(self, key: bytes) -> SignerEntry | None:
        """The entry holding exactly this wire-format public key."""
        for entry in self.entries:
            if entry.key == key:
                return entry
        return None

    def by_principal(self, principal: str) -> SignerEntry | None:
        """The entry of ``principal``."""
        for entry in self.entries:
            if entry.principal == principal:
                return entry
        return None

    @property
    def principals(self) -> tuple[str, ...]:
        """Every principal, in file order."""
        return tuple(e.principal for e in self.entries)


def _bad(code: str, where: str, message: str, hint: str) -> InputRejected:
    return InputRejected(code, f"{where}: {message}", hint)


def _lines(data: bytes, name: str) -> list[tuple[int, str]]:
    if len(data) > MAX_SIGNERS_BYTES:
        raise _bad(
            "AUTH_SIGNERS_TOO_LARGE",
            name,
            f"{len(data)} bytes (limit {MAX_SIGNERS_BYTES})",
            "keep one line per signer",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad("AUTH_SIGNERS_BAD_LINE", name, "not UTF-8", "save the file as UTF-8") from None
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.isascii() or not line.isprintable():
            raise _bad(
                "AUTH_SIGNERS_BAD_LINE",
                f"{name}:{number}",
                "holds a control or non-ASCII character (a CR from CRLF line ends?)",
                "write plain ASCII lines ending in LF",
            )
        out.append((number, line))
    return out


def _tokens(line: str, where: str) -> list[str]:
    """Split on spaces; double quotes protect spaces (as in OpenSSH options)."""
    tokens: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
            current.append(ch)
        elif ch in " \t" and not quoted:
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(ch)
    if quoted:
        raise _bad(
            "AUTH_SIGNERS_BAD_LINE", where, "an unterminated double quote", "close the quote"
        )
    if current:
        tokens.append("".join(current))
    return tokens


def parse_time(value: str, where: str) -> datetime:
    """``YYYYMMDD[HHMM[SS]]Z`` as a UTC datetime (the ``Z`` is required)."""
    match = _TIME_RE.fullmatch(value)
    if match is None:
        raise _bad(
            "AUTH_SIGNERS_BAD_OPTION",
            where,
            f"timestamp {value!r} is not YYYYMMDD[HHMM[SS]]Z",
            "write UTC times with a trailing Z, e.g. 20260101Z",
        )
    digits = match.group(1) + (match.group(2) or "0000")
    if len(digits) == 12:
        digits += "00"
    try:
        return datetime.strptime(digits, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        raise _bad(
            "AUTH_SIGNERS_BAD_OPTION",
            where,
            f"timestamp {value!r} is not a real date",
            "check the calendar date",
        ) from None


def _split_options(text: str, where: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
            current.append(ch)
        elif ch == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    if any(not p for p in parts):
        raise _bad("AUTH_SIGNERS_BAD_OPTION", where, "an empty option", "remove the extra comma")
    return parts


def _parse_options(
    text: str, where: str
) -> tuple[tuple[str, ...] | None, datetime | None, datetime | None]:
    values: dict[str, str] = {}
    for option in _split_options(text, where):
        name, eq, raw = option.partition("=")
        key = name.lower()
        if key == "cert-authority":
            raise _bad(
                "AUTH_SIGNERS_CERT_AUTHORITY",
                where,
                "cert-authority is refused: a certificate authority would let "
                "principals this file does not list sign",
                "list each signer's own key on its own line",
            )
        if key not in _OPTION_KEYS:
            raise _bad(
                "AUTH_SIGNERS_UNKNOWN_OPTION",
                where,
                f"unknown option {name!r}",
                "use only namespaces=, valid-after= and valid-before=",
            )
        if key in values:
            raise _bad(
                "AUTH_SIGNERS_BAD_OPTION",
                where,
                f"option {key} given twice",
                "give each option once",
            )
        if not eq or len(raw) < 2 or raw[0] != '"' or raw[-1] != '"' or '"' in raw[1:-1]:
            raise _bad(
                "AUTH_SIGNERS_BAD_OPTION",
                where,
                f"option {key} needs a quoted value",
                f'write {key}="..."',
            )
        values[key] = raw[1:-1]
    namespaces: tuple[str, ...] | None = None
    if "namespaces" in values:
        names = values["namespaces"].split(",")
        if not all(NAMESPACE_RE.fullmatch(n) for n in names) or len(set(names)) != len(names):
            raise _bad(
                "AUTH_SIGNERS_BAD_OPTION",
                where,
                f"namespaces {values['namespaces']!r} must be distinct literal names (no patterns)",
                'e.g. namespaces="plangate-c3,plangate-review"',
            )
        namespaces = tuple(names)
    after = parse_time(values["valid-after"], where) if "valid-after" in values else None
    before = parse_time(values["valid-before"], where) if "valid-before" in values else None
    if after is not None and before is not None and after >= before:
        raise _bad(
            "AUTH_SIGNERS_BAD_OPTION",
            where,
            "valid-after is not before valid-before",
            "the key would never be valid",
        )
    return namespaces, after, before


def _decode_key(key_type: str, text: str, where: str) -> bytes:
    if key_type not in KEY_TYPES:
        raise _bad(
            "AUTH_SIGNERS_BAD_KEY",
            where,
            f"key type {key_type!r} is not accepted",
            "use an ed25519 (preferably sk-ssh-ed25519), ECDSA or RSA key; no certificates, no DSA",
        )
    try:
        key = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _bad(
            "AUTH_SIGNERS_BAD_KEY",
            where,
            "the key is not valid base64",
            "copy the second field of the .pub file",
        ) from None
    try:
        inner = check_public_key(key)
    except InputRejected:
        inner = ""
    if inner != key_type:
        raise _bad(
            "AUTH_SIGNERS_BAD_KEY",
            where,
            f"the key's bytes are not a {key_type} key",
            "copy the .pub line unchanged",
        )
    return key


def _looks_like_key_type(token: str) -> bool:
    return token in KEY_TYPES or token.startswith(("ssh-", "ecdsa-", "sk-")) or ("-cert-" in token)


def _parse_entry(number: int, line: str, name: str) -> SignerEntry:
    where = f"{name}:{number}"
    tokens = _tokens(line, where)
    if len(tokens) < 3:
        raise _bad(
            "AUTH_SIGNERS_BAD_LINE",
            where,
            "expected: principal [options] keytype key",
            "copy a .pub line and put the principal in front",
        )
    principal = tokens[0]
    if "," in principal:
        raise _bad(
            "AUTH_SIGNERS_MULTIPLE_PRINCIPALS",
            where,
            f"{principal!r} lists several principals",
            "one principal per line: give each person their own line and key",
        )
    if any(ch in principal for ch in "*?!"):
        raise _bad(
            "AUTH_SIGNERS_PRINCIPAL_PATTERN",
            where,
            f"{principal!r} is a pattern; a pattern could match anyone",
            "write the literal principal",
        )
    if PRINCIPAL_RE.fullmatch(principal) is None:
        raise _bad(
            "AUTH_SIGNERS_BAD_LINE",
            where,
            f"principal {principal!r} is not a plain name",
            "use letters, digits and . _ + @ -",
        )
    rest = tokens[1:]
    options: tuple[tuple[str, ...] | None, datetime | None, datetime | None] = (None, None, None)
    if not _looks_like_key_type(rest[0]):
        options = _parse_options(rest[0], where)
        rest = rest[1:]
    if len(rest) < 2:
        raise _bad(
            "AUTH_SIGNERS_BAD_LINE",
            where,
            "the key type or the key is missing",
            "copy the .pub line unchanged after the principal",
        )
    key = _decode_key(rest[0], rest[1], where)
    return SignerEntry(number, principal, rest[0], rest[1], key, *options)


def parse_allowed_signers(data: bytes, name: str = ".plangate/allowed_signers") -> AllowedSigners:
    """Parse the allowed-signers bytes (see the module docstring for the rules)."""
    entries: list[SignerEntry] = []
    for number, line in _lines(data, name):
        entry = _parse_entry(number, line, name)
        for other in entries:
            if other.principal == entry.principal:
                raise _bad(
                    "AUTH_SIGNERS_DUPLICATE_PRINCIPAL",
                    f"{name}:{number}",
                    f"{entry.principal} is already listed on line {other.line}",
                    "one line per principal: replace the old key to rotate it",
                )
            if other.key == entry.key:
                raise _bad(
                    "AUTH_SIGNERS_DUPLICATE_KEY",
                    f"{name}:{number}",
                    f"this key is already {other.principal}'s (line {other.line})",
                    "one key belongs to one principal",
                )
        entries.append(entry)
    return AllowedSigners(tuple(entries))


def parse_revoked(data: bytes, name: str = ".plangate/revoked_signers") -> frozenset[bytes]:
    """The revoked public keys (``keytype base64-key [comment]`` per line)."""
    keys: set[bytes] = set()
    for number, line in _lines(data, name):
        where = f"{name}:{number}"
        tokens = _tokens(line, where)
        if len(tokens) < 2:
            raise _bad(
                "AUTH_SIGNERS_BAD_LINE",
                where,
                "expected: keytype key [comment]",
                "copy the revoked key's .pub line",
            )
        keys.add(_decode_key(tokens[0], tokens[1], where))
    return frozenset(keys)


def public_key_line(entry: SignerEntry) -> str:
    """``keytype base64`` of an entry (as a .pub file holds it)."""
    return f"{entry.key_type} {entry.key_base64}"


def key_from_pub_line(text: str, where: str) -> tuple[str, str, bytes]:
    """Parse one ``.pub`` line (``keytype base64 [comment]``): type, base64, decoded key."""
    tokens = text.strip().split()
    if len(tokens) < 2:
        raise _bad(
            "AUTH_SIGNERS_BAD_KEY", where, "not a public key line", "give the .pub file of the key"
        )
    return tokens[0], tokens[1], _decode_key(tokens[0], tokens[1], where)
