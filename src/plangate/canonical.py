"""Strict JSON loading, RFC 8785 canonical JSON and ``sha256:`` digests.

Everything that PlanGate hashes goes through :func:`canonical_bytes`; every
JSON document PlanGate reads goes through :func:`strict_loads`.

Strictness rules of :func:`strict_loads` (each rejection carries a reason code):

- input must be bytes of valid UTF-8 without a byte-order mark (``JSON_BOM``,
  ``JSON_NOT_UTF8``);
- duplicate object keys are rejected (``JSON_DUPLICATE_KEY``), as are
  ``NaN``/``Infinity`` (``JSON_NON_FINITE``), lone surrogates in strings
  (``JSON_LONE_SURROGATE``), trailing data and any other syntax error
  (``JSON_SYNTAX``), and nesting deeper than :data:`MAX_DEPTH` (``JSON_TOO_DEEP``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from plangate.errors import InputRejected

if TYPE_CHECKING:
    from hashlib import _Hash
from plangate.shapes import is_sha256_digest

_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")

MAX_DEPTH = 64
"""Deepest nesting accepted by :func:`strict_loads`; contracts need far less."""

# Integers outside this range cannot be represented exactly as IEEE doubles,
# so RFC 8785 cannot canonicalise them; they are refused rather than rounded.
_MAX_SAFE_INT = 2**53 - 1


class StrictJSONError(InputRejected):
    """A JSON document was rejected by :func:`strict_loads`."""


def _reject_constant(name: str) -> Any:
    raise StrictJSONError(
        "JSON_NON_FINITE",
        f"non-finite number {name} is not JSON",
        "write a finite number or a string",
    )


def _parse_float(text: str) -> float:
    # json.loads turns an overflowing literal such as 1e400 into inf; that is
    # Infinity in disguise and just as undecidable, so it is refused too.
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError(
            "JSON_NON_FINITE",
            f"number {text[:40]} overflows to infinity",
            "write a finite number or a string",
        )
    return value


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):  # no key repeated (the common case, decided in C)
        return out
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            raise StrictJSONError(
                "JSON_DUPLICATE_KEY",
                f"duplicate object key {key!r}",
                "each key may appear once per object; remove the repeated key",
            )
        seen.add(key)
    raise AssertionError("unreachable: fewer keys than pairs means a repeated key")


def _check_tree(value: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise StrictJSONError(
            "JSON_TOO_DEEP", f"nesting deeper than {MAX_DEPTH} levels", "flatten the document"
        )
    if isinstance(value, str):
        _check_string(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_string(key)
            _check_tree(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_tree(item, depth + 1)


def _check_string(text: str) -> None:
    if text.isascii():  # fast path: no surrogate can hide in ASCII
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise StrictJSONError(
            "JSON_LONE_SURROGATE",
            "string contains a lone UTF-16 surrogate escape",
            "encode characters outside the BMP as a valid surrogate pair",
        ) from None


def strict_loads(data: bytes) -> Any:
    """Parse JSON bytes strictly; raise :class:`StrictJSONError` with a reason code."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError("strict_loads takes bytes; decode nothing yourself")
    raw = bytes(data)
    if raw.startswith(b"\xef\xbb\xbf"):
        raise StrictJSONError(
            "JSON_BOM", "document starts with a UTF-8 byte-order mark", "save the file without BOM"
        )
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(
            "JSON_NOT_UTF8",
            f"document is not valid UTF-8 (byte {exc.start})",
            "save the file as UTF-8",
        ) from None
    try:
        value = _decode(text)
    except StrictJSONError:
        raise
    except RecursionError:
        raise StrictJSONError(
            "JSON_TOO_DEEP", "nesting too deep to parse", "flatten the document"
        ) from None
    except ValueError as exc:
        raise StrictJSONError(
            "JSON_SYNTAX",
            f"not valid JSON: {exc}",
            "fix the JSON syntax (one value, no trailing data)",
        ) from None
    # The tree walk is only needed when it could find something: decoded UTF-8
    # holds no surrogates, so a lone one can only come from a \uD8xx-\uDFxx
    # escape, and nesting can never be deeper than the number of brackets. (A
    # lone backslash is looked for first: one memchr, where a two-character
    # search scans every byte of the usual escape-free record.)
    # Records hold no array: "[" is counted only when one is there (one memchr).
    openers = text.count("{") + (text.count("[") if "[" in text else 0)
    if openers > MAX_DEPTH or (
        "\\" in text and "\\u" in text and _SURROGATE_ESCAPE_RE.search(text) is not None
    ):
        _check_tree(value, 0)
    return value


# What json.loads(text, **options) would build on every call (a decoder and its
# C scanner): built once. The scanner keeps no state between documents.
_STRICT_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs_without_duplicates,
    parse_constant=_reject_constant,
    parse_float=_parse_float,
)


_JSON_SPACE = " \t\n\r"
# The decoder's scanner (set by JSONDecoder.__init__, not in the type stubs).
_STRICT_SCAN: Callable[[str, int], tuple[Any, int]] = _STRICT_DECODER.scan_once  # type: ignore[attr-defined]


def _decode(text: str) -> Any:
    """``_STRICT_DECODER.decode(text)``, without its two whitespace regexes.

    The same scanner call at the same index (after the leading JSON whitespace);
    when the scanner finds no value or data follows the value, the decoder
    itself runs to raise its own error. Every other error is the scanner's, as
    in ``decode``.
    """
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        value, end = _STRICT_SCAN(text, start)
    except StopIteration:
        return _STRICT_DECODER.decode(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return _STRICT_DECODER.decode(text)
    return value


def strict_loads_object(data: bytes, what: str = "document") -> dict[str, Any]:
    """Like :func:`strict_loads` but the top level must be an object."""
    value = strict_loads(data)
    if not isinstance(value, dict):
        raise StrictJSONError(
            "JSON_NOT_OBJECT",
            f"{what} must be a JSON object, got {type(value).__name__}",
            "wrap the content in an object {...}",
        )
    return value


def _format_number(value: int | float) -> str:
    """ECMAScript Number.prototype.toString, as RFC 8785 section 3.2.2.3 requires."""
    if isinstance(value, bool):  # pragma: no cover - callers dispatch bools first
        raise TypeError("bool is not a number")
    if isinstance(value, int):
        if abs(value) <= _MAX_SAFE_INT:
            return str(value)
        # RFC 8785 numbers are IEEE doubles. A larger integer is accepted only
        # when its double's canonical text denotes exactly the same value (so
        # 10**30 -> "1e+30", and re-parsing "47365196181950570" stays stable);
        # one that a double would round (2**53 + 1) is refused, never rounded.
        try:
            text = _format_number(float(value))
        except OverflowError:
            text = ""
        from decimal import Decimal  # lazy, see below

        if not text or Decimal(text) != value:
            raise StrictJSONError(
                "JSON_NUMBER_RANGE",
                f"integer {value} is outside the exactly representable range",
                "use a string for large identifiers",
            )
        return text
    if not math.isfinite(value):
        raise StrictJSONError("JSON_NON_FINITE", "non-finite number", "use a finite number")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr() gives the shortest round-tripping decimal digits, as ECMAScript does.
    from decimal import Decimal  # lazy: floats are rare in contracts; keep the hot path light

    digits_tuple = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits).rstrip("0") or "0"
    exponent = int(digits_tuple.exponent)
    # Re-align the exponent after stripping trailing zeros.
    stripped = len(digits_tuple.digits) - len(digits)
    exponent += stripped
    k = len(digits)
    n = k + exponent  # value = 0.d1d2..dk * 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exp = n - 1
    exp_text = f"e{'+' if exp >= 0 else '-'}{abs(exp)}"
    if k == 1:
        return sign + digits + exp_text
    return sign + digits[0] + "." + digits[1:] + exp_text


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


_NEEDS_ESCAPE_RE = re.compile(r'["\\\x00-\x1f]')


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group(0)
    esc = _ESCAPES.get(ch)
    return esc if esc is not None else f"\\u{ord(ch):04x}"


def _format_string(text: str) -> str:
    _check_string(text)
    # Digests and file names (almost every string hashed) need no escaping; the
    # regex keeps both paths in C instead of a Python loop per character.
    return '"' + _NEEDS_ESCAPE_RE.sub(_escape_char, text) + '"'


def _utf16_key(key: str) -> bytes:
    # RFC 8785 sorts member names by their UTF-16 code units.
    return key.encode("utf-16-be")


def _serialize(value: Any, out: list[str], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise StrictJSONError("JSON_TOO_DEEP", "value nested too deeply", "flatten the value")
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int | float):
        out.append(_format_number(value))
    elif isinstance(value, str):
        out.append(_format_string(value))
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _serialize(item, out, depth + 1)
        out.append("]")
    elif isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"object keys must be strings, got {type(key).__name__}")
            _check_string(key)  # before sorting: a lone surrogate has no UTF-16 form
        out.append("{")
        for index, key in enumerate(sorted(value, key=_utf16_key)):
            if index:
                out.append(",")
            out.append(_format_string(key))
            out.append(":")
            _serialize(value[key], out, depth + 1)
        out.append("}")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


_FIRST_SURROGATE = "\ud800"


def _has_surrogate(text: str) -> bool:
    """True when ``text`` holds a UTF-16 surrogate code point (U+D800..U+DFFF).

    Strict UTF-8 encoding fails exactly on surrogates. (Not a regular
    expression: compiling a character class over the astral planes costs more
    at start-up than a whole ``c3 verify`` decision.)
    """
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def is_plain_json(value: Any, depth: int = 0) -> bool:
    """True when ``json.dumps(sort_keys=True)`` is byte-identical to RFC 8785 for ``value``.

    That holds for null, booleans, safe integers, strings without lone
    surrogates, lists, and objects whose keys hold no character at or above
    U+D800 (below it, code-point order equals RFC 8785's UTF-16 order); the
    ``json`` module escapes exactly ``"``, ``\\`` and C0 controls, in the same
    forms (short escapes, lowercase ``\\u00xx``). Floats, tuples, large
    integers and anything else take the reference serialiser.
    """
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, bool):
        return True
    if type(value) is int:
        return -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT
    if type(value) is str:
        return not _has_surrogate(value)
    if type(value) is list:
        return all(is_plain_json(item, depth + 1) for item in value)
    if type(value) is dict:
        for key, item in value.items():
            # No character at or above U+D800: the largest one is below it.
            if (
                type(key) is not str
                or (key != "" and max(key) >= _FIRST_SURROGATE)
                or not is_plain_json(item, depth + 1)
            ):
                return False
        return True
    return False


def canonical_text(value: Any) -> str:
    """RFC 8785 (JCS) canonical JSON text of ``value``.

    Uses the C ``json`` encoder when it provably gives the same text
    (:func:`is_plain_json`), else the reference serialiser; a property test
    pins the two to each other.
    """
    if is_plain_json(value):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return reference_canonical_text(value)


def reference_canonical_text(value: Any) -> str:
    """RFC 8785 canonical text by the reference serialiser (every JSON value)."""
    out: list[str] = []
    _serialize(value, out, 0)
    return "".join(out)


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 (JCS) canonical JSON, as UTF-8 bytes."""
    return canonical_text(value).encode("utf-8")


# Loading hashlib loads OpenSSL: about 4 ms in every new process, more than a hook
# call spends hashing. The interpreter's own SHA-256 module loads in a tenth of that and
# is slower per byte. So the first calls of a process, on small inputs, use the
# interpreter's module; a process that hashes many documents (status, ledger verify) or
# one large input switches to OpenSSL's for the rest of its life. Both compute the same
# digest (a test compares them).
_OPENSSL_AFTER_CALLS = 32
_OPENSSL_FROM_BYTES = 64 * 1024


class _Sha256Choice:
    """Which SHA-256 implementation this process uses now (see the comment above)."""

    calls = 0
    builtin: Any = None
    openssl: Any = None


def _builtin_sha256() -> Any:
    import importlib

    for name in ("_sha2", "_sha256"):  # Python 3.12+, then 3.11
        try:
            return importlib.import_module(name).sha256
        except (ImportError, AttributeError):
            continue
    return None


def new_sha256(data: bytes = b"") -> _Hash:
    """A SHA-256 object fed with ``data`` (the cheapest implementation for this process)."""
    choice = _Sha256Choice
    if choice.openssl is None:
        choice.calls += 1
        if choice.calls <= _OPENSSL_AFTER_CALLS and len(data) < _OPENSSL_FROM_BYTES:
            if choice.builtin is None:
                choice.builtin = _builtin_sha256() or False
            if choice.builtin:
                return choice.builtin(data)  # type: ignore[no-any-return]
        import hashlib

        choice.openssl = hashlib.sha256
    return choice.openssl(data)  # type: ignore[no-any-return]


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return new_sha256(data).hexdigest()


def sha256_digest(data: bytes) -> str:
    """``sha256:<hex>`` of raw bytes (no newline or encoding normalisation)."""
    return "sha256:" + new_sha256(data).hexdigest()


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON bytes of ``value``."""
    return sha256_digest(canonical_bytes(value))


def command_digest(command: Sequence[str]) -> str:
    """The digest of a command line (its argument list) that exec records and an opt-out binds."""
    return digest(list(command))


def is_digest(value: object) -> bool:
    """True only for an exact ``sha256:`` + 64 lowercase hex string."""
    return isinstance(value, str) and is_sha256_digest(value)


def pretty_bytes(value: Any) -> bytes:
    """Human-readable serialisation used for records: sorted keys, indent 2, final newline.

    This is the c3-prime / arbiter provenance form
    (``json.dumps(indent=2, sort_keys=True, ensure_ascii=False) + "\\n"``).
    It is *not* the hashing form; hashes use :func:`canonical_bytes`.
    """
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
