"""The hash chain of the decision ledger: pure functions, no IO.

An entry is the seven fields ``seq, kind, subject, payload, at, prev_hash,
entry_hash``. Its hash is::

    entry_hash = "sha256:" + sha256(RFC8785({"v": 1, "seq": seq, "kind": kind,
                                            "subject": subject, "payload": payload,
                                            "at": at, "prev_hash": prev_hash}))

``prev_hash`` of entry 1 is :data:`GENESIS_PREV_HASH`; every later entry
carries the ``entry_hash`` of the entry before it. Sequence numbers start at 1
and have no gaps. The backends store the payload as its canonical JSON text and
keep a one-row *head* (``seq`` and ``entry_hash`` of the last entry), written in
the same transaction as the entry, so that a deleted last entry is detected too.

:func:`verify_rows` checks stored rows (as read, payload still text) and
reports the first sequence number at which the stored ledger stops being the
chain it claims to be.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from plangate.canonical import (
    MAX_DEPTH,
    StrictJSONError,
    canonical_bytes,
    canonical_text,
    is_digest,
    is_plain_json,
    sha256_digest,
    strict_loads,
)
from plangate.errors import EnvironmentFailure
from plangate.forbidden_keys import SECRETS_ONLY, first_refused_key, is_refused
from plangate.records import NamedTuple
from plangate.shapes import is_snake_kind, is_utc_timestamp_shape
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.ledger.rows import StoredRow


def __getattr__(name: str) -> Any:
    """``StoredRow`` is imported on first use (PEP 562).

    It is a dataclass, and importing :mod:`dataclasses` (which imports
    ``inspect``, ``ast`` and ``dis``) costs a hook process several
    milliseconds; the hook path reads rows through :func:`entry_from_values`
    and never needs the class.
    """
    if name == "StoredRow":
        from plangate.ledger.rows import StoredRow

        return StoredRow
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


FORMAT_VERSION = 1
"""Value of the ``v`` member of every hashed entry (domain separation, future formats)."""

GENESIS_PREV_HASH = "sha256:" + "0" * 64
"""``prev_hash`` of the first entry: ``sha256:`` and 64 zeros (no real entry can hash to it)."""



MAX_SUBJECT_CHARS = 1024
MAX_PAYLOAD_BYTES = 1024 * 1024

VERDICT_INTACT = "INTACT"
VERDICT_TAMPERED = "TAMPERED"


class LedgerError(EnvironmentFailure):
    """The ledger cannot be opened, read or written, or refused an entry (exit 1).

    Message and hint never carry a connection password: both pass through
    :func:`plangate.ledger.credentials.redact_credentials` here, whoever raises.
    """

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        from plangate.ledger.credentials import redact_credentials

        super().__init__(code, redact_credentials(message), redact_credentials(hint))


# NamedTuple rather than dataclasses: see the module ``__getattr__`` above.
class LedgerEntry(NamedTuple):
    """One ledger entry as stored and verified."""

    seq: int
    kind: str
    subject: str
    payload: Mapping[str, Any]
    at: str
    prev_hash: str
    entry_hash: str

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON object (the export line form)."""
        return {
            "seq": self.seq,
            "kind": self.kind,
            "subject": self.subject,
            "payload": dict(self.payload),
            "at": self.at,
            "prev_hash": self.prev_hash,
            "entry_hash": self.entry_hash,
        }


class Head(NamedTuple):
    """The backend's record of the last appended entry (seq 0 and genesis when empty)."""

    seq: Any = 0
    entry_hash: Any = GENESIS_PREV_HASH


def hashed_fields(
    *, seq: int, kind: str, subject: str, payload: Mapping[str, Any], at: str, prev_hash: str
) -> dict[str, Any]:
    """The object whose RFC 8785 bytes are hashed into ``entry_hash``."""
    return {
        "v": FORMAT_VERSION,
        "seq": seq,
        "kind": kind,
        "subject": subject,
        "payload": dict(payload),
        "at": at,
        "prev_hash": prev_hash,
    }


def compute_entry_hash(
    *, seq: int, kind: str, subject: str, payload: Mapping[str, Any], at: str, prev_hash: str
) -> str:
    """``sha256:`` digest of the canonical bytes of :func:`hashed_fields`."""
    fields = hashed_fields(
        seq=seq, kind=kind, subject=subject, payload=payload, at=at, prev_hash=prev_hash
    )
    return sha256_digest(canonical_bytes(fields))


_SAFE_INT = 2**53 - 1


_plain_json = is_plain_json  # one definition, in plangate.canonical


def fast_canonical_text(value: Any) -> str:
    """RFC 8785 text of ``value``: the C ``json`` encoder when provably identical, else
    :func:`plangate.canonical.canonical_text` (verification of long ledgers is
    dominated by canonicalisation; a property test pins the equality)."""
    return canonical_text(value)


# String tests without regular expressions: compiling a character class that
# spans the surrogate block costs milliseconds in every short-lived hook process.


def _has_surrogate(text: str) -> bool:
    """True when ``text`` holds a lone surrogate (U+D800..U+DFFF).

    Strict UTF-8 encoding fails exactly on surrogate code points.
    """
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_char_at_or_above_d800(text: str) -> bool:
    """True when ``text`` holds a code point at or above U+D800."""
    return not text.isascii() and max(text) >= "\ud800"


def _json_string(text: str) -> str:
    """RFC 8785 form of a string; plain strings (the common case) skip the encoder.

    Printable ASCII without ``"`` and ``\\`` is its own JSON text; anything
    else goes through the canonical encoder.
    """
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    return fast_canonical_text(text)


def entry_hash_from_text(
    *, seq: int, kind: str, subject: str, payload_text: str, at: str, prev_hash: str
) -> str:
    """:func:`compute_entry_hash` for a payload already in canonical text.

    The members of the hashed object are written in RFC 8785 order (``at``,
    ``kind``, ``payload``, ``prev_hash``, ``seq``, ``subject``, ``v``) around
    the stored payload text, so the payload is not serialised again.
    """
    text = (
        '{"at":'
        + _json_string(at)
        + ',"kind":'
        + _json_string(kind)
        + ',"payload":'
        + payload_text
        + ',"prev_hash":'
        + _json_string(prev_hash)
        + ',"seq":'
        + str(seq)
        + ',"subject":'
        + _json_string(subject)
        + ',"v":'
        + str(FORMAT_VERSION)
        + "}"
    )
    return sha256_digest(text.encode("utf-8"))


def find_forbidden_key(value: Any, path: str = "payload") -> str | None:
    """Path of the first key (depth first) that carries a credential, transcript or
    prompt, in any spelling (:mod:`plangate.forbidden_keys`), or None."""
    return first_refused_key(value, SECRETS_ONLY, path)


def _valid_at(at: object) -> bool:
    if not isinstance(at, str) or not is_utc_timestamp_shape(at):
        return False
    from datetime import datetime

    try:
        datetime(
            int(at[0:4]),
            int(at[5:7]),
            int(at[8:10]),
            int(at[11:13]),
            int(at[14:16]),
            int(at[17:19]),
        )
    except ValueError:  # month 13, February 30, hour 24...
        return False
    return True


def _valid_subject(subject: object) -> bool:
    return (
        isinstance(subject, str)
        and 0 < len(subject) <= MAX_SUBJECT_CHARS
        and subject.isprintable()
        and subject == subject.strip()
    )


def check_entry_fields(kind: object, subject: object) -> None:
    """Raise :class:`LedgerError` when ``kind`` or ``subject`` is not acceptable."""
    if not isinstance(kind, str) or not is_snake_kind(kind):
        raise LedgerError(
            "LEDGER_KIND_INVALID",
            f"ledger kind {kind!r} is not a snake_case word",
            "use a kind such as 'c3_issue' (lowercase letters, digits, '_', at most 64)",
        )
    if not _valid_subject(subject):
        raise LedgerError(
            "LEDGER_SUBJECT_INVALID",
            f"ledger subject {subject!r} is empty, too long or has control/edge whitespace",
            "use the task id or digest the entry is about",
        )


def prepare_payload(payload: object) -> tuple[str, dict[str, Any]]:
    """Validate a payload; return its canonical text and the parsed copy that will be stored.

    Raises :class:`LedgerError` with ``LEDGER_FORBIDDEN_KEY``,
    ``LEDGER_PAYLOAD_INVALID`` or ``LEDGER_PAYLOAD_TOO_LARGE``.
    """
    if not isinstance(payload, Mapping):
        raise LedgerError(
            "LEDGER_PAYLOAD_INVALID",
            f"ledger payload must be a JSON object, got {type(payload).__name__}",
            "pass a mapping of string keys to JSON values",
        )
    forbidden = find_forbidden_key(payload)
    if forbidden is not None:
        raise LedgerError(
            "LEDGER_FORBIDDEN_KEY",
            f"ledger payload key {forbidden} is forbidden (secrets and transcripts never enter "
            "the ledger)",
            "drop the key; record a digest or a reference instead of the secret or transcript",
        )
    try:
        text = canonical_text(dict(payload))
    except (TypeError, StrictJSONError, RecursionError) as exc:
        raise LedgerError(
            "LEDGER_PAYLOAD_INVALID",
            f"ledger payload is not canonical JSON: {exc}",
            "use only strings, finite numbers, booleans, null, lists and string-keyed objects",
        ) from None
    if len(text.encode("utf-8")) > MAX_PAYLOAD_BYTES:
        raise LedgerError(
            "LEDGER_PAYLOAD_TOO_LARGE",
            f"ledger payload is larger than {MAX_PAYLOAD_BYTES} bytes",
            "store large evidence elsewhere and put its digest in the payload",
        )
    parsed = strict_loads(text.encode("utf-8"))
    return text, parsed


def make_entry(
    *,
    seq: int,
    kind: str,
    subject: str,
    payload_text: str,
    payload: Mapping[str, Any],
    at: str,
    prev_hash: str,
) -> LedgerEntry:
    """Build an entry with its hash from :func:`prepare_payload`'s text and parsed copy.

    ``payload_text`` is canonical by construction, so it is hashed as is (the
    same path verification takes; a property test pins it to
    :func:`compute_entry_hash`).
    """
    entry_hash = entry_hash_from_text(
        seq=seq, kind=kind, subject=subject, payload_text=payload_text, at=at, prev_hash=prev_hash
    )
    return LedgerEntry(seq, kind, subject, payload, at, prev_hash, entry_hash)


def entry_from_row(row: StoredRow) -> LedgerEntry:
    """Decode one stored row (no chain checks); raise ``LEDGER_CORRUPT`` if it cannot be read."""
    return entry_from_values(
        (row.seq, row.kind, row.subject, row.payload_text, row.at, row.prev_hash, row.entry_hash)
    )


def entry_from_values(values: tuple[Any, ...]) -> LedgerEntry:
    """:func:`entry_from_row` for the seven column values as a backend returned them
    (``seq, kind, subject, payload, at, prev_hash, entry_hash``)."""
    seq, kind, subject, payload_text, at, prev_hash, entry_hash = values
    problem, _parsed = _decode_fields(values)
    if problem is not None:
        raise LedgerError(
            "LEDGER_CORRUPT",
            f"ledger entry {seq!r} cannot be read: {problem.message}",
            "run 'plangate ledger verify' to find the first broken entry",
        )
    # _decode_fields proved the text canonical; parse it strictly all the same.
    payload = strict_loads(str(payload_text).encode("utf-8"))
    return LedgerEntry(int(seq), kind, subject, payload, at, prev_hash, entry_hash)


def _decode_row(row: StoredRow) -> tuple[Reason | None, dict[str, Any]]:
    """Check the row's own fields; return (problem or None, the parsed payload)."""
    return _decode_fields(
        (row.seq, row.kind, row.subject, row.payload_text, row.at, row.prev_hash, row.entry_hash)
    )


def _decode_fields(values: tuple[Any, ...]) -> tuple[Reason | None, dict[str, Any]]:
    """The checks of :func:`_decode_row` on the seven column values."""
    _seq, kind, subject, payload_text, at, prev_hash, entry_hash = values
    if not isinstance(kind, str) or not is_snake_kind(kind):
        return Reason("LEDGER_ENTRY_MALFORMED", f"kind {kind!r} is not a snake_case word"), {}
    if not _valid_subject(subject):
        return Reason("LEDGER_ENTRY_MALFORMED", f"subject {subject!r} is not valid"), {}
    if not _valid_at(at):
        return Reason("LEDGER_ENTRY_MALFORMED", f"time {at!r} is not YYYY-MM-DDTHH:MM:SSZ"), {}
    if not is_digest(prev_hash) or not is_digest(entry_hash):
        return Reason(
            "LEDGER_ENTRY_MALFORMED", "prev_hash or entry_hash is not a sha256 digest"
        ), {}
    if not isinstance(payload_text, str):
        return Reason("LEDGER_PAYLOAD_NOT_CANONICAL", "payload is not text"), {}
    try:
        # Plain json.loads is enough here: the text must equal the canonical
        # serialisation of what it parses to, which no duplicate key, NaN,
        # lone surrogate, BOM or stray whitespace survives.
        payload = json.loads(payload_text)
    except (ValueError, RecursionError) as exc:
        return Reason("LEDGER_PAYLOAD_NOT_CANONICAL", f"payload is not valid JSON: {exc}"), {}
    if not isinstance(payload, dict):
        return Reason("LEDGER_PAYLOAD_NOT_CANONICAL", "payload is not a JSON object"), {}
    # One walk finds both a forbidden key and whether the fast encoder applies.
    scan = _PayloadScan()
    scan.walk(payload, "payload", 0)
    try:
        if scan.plain:
            canonical = json.dumps(
                payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")
            )
        else:
            canonical = canonical_text(payload)
    except (StrictJSONError, TypeError, RecursionError) as exc:
        return Reason("LEDGER_PAYLOAD_NOT_CANONICAL", f"payload cannot be canonicalised: {exc}"), {}
    if canonical != payload_text:
        # Hashes cover the parsed payload; requiring the stored text to be exactly
        # canonical makes every byte of it covered too.
        return Reason("LEDGER_PAYLOAD_NOT_CANONICAL", "payload text is not its canonical form"), {}
    if scan.forbidden is not None:
        return Reason("LEDGER_FORBIDDEN_KEY", f"payload carries forbidden key {scan.forbidden}"), {}
    return None, payload


class _PayloadScan:
    """One pass over a parsed payload: the first forbidden key, and whether
    :func:`_plain_json` holds (the same rules, merged for speed)."""

    def __init__(self) -> None:
        self.forbidden: str | None = None
        self.plain = True

    def walk(self, value: Any, path: str, depth: int) -> None:
        if depth > 64:
            self.plain = False
        elif isinstance(value, dict):
            for key, item in value.items():
                if self.forbidden is None and is_refused(key, SECRETS_ONLY):
                    self.forbidden = f"{path}.{key}"
                if _has_char_at_or_above_d800(key):
                    self.plain = False
                self.walk(item, f"{path}.{key}", depth + 1)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self.walk(item, f"{path}[{index}]", depth + 1)
        elif isinstance(value, str):
            if _has_surrogate(value):
                self.plain = False
        elif isinstance(value, bool) or value is None:
            pass
        elif isinstance(value, int):
            if not -_SAFE_INT <= value <= _SAFE_INT:
                self.plain = False
        else:
            self.plain = False


class _Walk:
    """Progress of :func:`verify_rows` along the chain."""

    __slots__ = ("anchor_seen", "count", "kinds", "prev_hash")

    def __init__(self) -> None:
        self.count = 0
        self.prev_hash = GENESIS_PREV_HASH
        self.anchor_seen = False
        self.kinds: dict[str, int] = {}


class _NotPlain(Exception):
    """Raised inside :class:`_PayloadCheck`'s decoder: the payload takes the full checks."""


def _refuse_number(_text: str) -> Any:
    raise _NotPlain


_NO_TIME = object()
"""The previous row's time before the first row: equal to no column value."""

_KEY_CACHE_MAX = 4096
"""How many accepted key tuples one verification remembers (memory stays flat)."""


class _PayloadCheck:
    """The payload rules of :func:`_decode_fields`, decided in C for the common payload.

    :meth:`accepts` is True only when :func:`_decode_fields` would accept the
    payload text; anything else (False) sends the row through the full checks,
    which then name the reason. One parse with the C scanner replaces the
    parse and the Python walk of the full checks: on the way, every object's
    keys are checked for forbidden names and for order, and floats,
    ``NaN``/``Infinity``, ``-0`` and integers outside the safe range stop it.
    The value is then plain (:func:`plangate.canonical.is_plain_json`: no
    float, only safe integers, no character at or above U+D800 anywhere in
    the text, so none in a key or string, no deeper nesting than the text has
    objects and ``[``), so its RFC 8785 text is what the C encoder writes.
    The text is canonical when it is exactly that:

    - without any backslash in the text, decided without serialising: no
      string holds an escape, so each is written as is; the quotes alternate
      opening and closing strings, so whitespace outside them is seen, and
      each key is the one ``":`` that follows it (a ``":`` can also open a
      string value): as many ``":`` as distinct keys per object means no key
      is repeated; the keys were found in order;
    - otherwise by comparing the text with the encoder's output.

    The key tuples of objects found in order and without a forbidden key are
    remembered (up to :data:`_KEY_CACHE_MAX` of them), so an object with the
    keys of one seen before is checked by one set lookup.
    """

    __slots__ = ("_encode", "_scan", "_shapes", "_sizes", "value")

    def __init__(self) -> None:
        self.value: Any = None
        """The payload :meth:`accepts` parsed last (what it is when it answered True)."""
        self._shapes: set[tuple[str, ...]] = set()
        self._sizes: list[int] = []
        decoder = json.JSONDecoder(
            object_hook=self._object,
            parse_float=_refuse_number,
            parse_int=_canonical_int,
            parse_constant=_refuse_number,
        )
        self._scan = decoder.scan_once  # type: ignore[attr-defined]  # set by __init__
        self._encode = _plain_encoder()

    def _object(self, obj: dict[str, Any]) -> dict[str, Any]:
        self._sizes.append(len(obj))
        keys = tuple(obj)
        shapes = self._shapes
        if keys in shapes:  # these keys, in this order, were found allowed before
            return obj
        if list(keys) != sorted(keys):
            raise _NotPlain
        for key in keys:
            if is_refused(key, SECRETS_ONLY):
                raise _NotPlain
        if len(shapes) < _KEY_CACHE_MAX:
            shapes.add(keys)
        return obj

    def accepts(self, text: object) -> bool:
        """True when ``text`` is a canonical, plain JSON object without a forbidden key."""
        if type(text) is not str or (not text.isascii() and max(text) >= "\ud800"):
            return False
        sizes = self._sizes
        sizes.clear()
        try:
            value, end = self._scan(text, 0)
        except Exception:  # noqa: BLE001 - any doubt: the full checks decide and explain
            return False
        self.value = value
        if (
            end != len(text)
            or type(value) is not dict
            or len(sizes) + text.count("[") > MAX_DEPTH
        ):
            return False
        if "\\" not in text:
            if " " in text or "\n" in text or "\r" in text or "\t" in text:
                between = "".join(text.split('"')[::2])
                bare = between.isprintable() and " " not in between
            else:
                bare = True
            if bare and text.count('":') == sum(sizes):
                return True
        try:
            return bool(self._encode(value) == text)
        except Exception:  # noqa: BLE001 - any doubt: the full checks decide and explain
            return False


def _canonical_int(text: str) -> int:
    """An integer token in its canonical form and within the safe range, else stop."""
    value = int(text)
    if -_SAFE_INT <= value <= _SAFE_INT and str(value) == text:
        return value
    raise _NotPlain


def _plain_encoder() -> Any:
    """``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`` as
    one reusable C encoder (``json.dumps`` builds a new encoder object per call)."""
    from json import encoder as json_encoder

    def refuse(value: object) -> Any:
        raise TypeError(f"{type(value).__name__} is not JSON-serialisable")

    make = getattr(json_encoder, "c_make_encoder", None)  # not in the type stubs
    if make is None:  # pragma: no cover - CPython always has the C accelerator
        return json.JSONEncoder(
            ensure_ascii=False, sort_keys=True, separators=(",", ":"), check_circular=False
        ).encode
    chunks = make(
        None, refuse, json_encoder.encode_basestring, None, ":", ",", True, False, True
    )
    join = "".join

    def encode(value: Any) -> str:
        return join(chunks(value, 0))

    return encode


def verify_rows(
    rows: Iterable[StoredRow], head: Head | None, *, anchor: str | None = None
) -> Result:
    """Verify stored rows in storage order against the chain rules and the head.

    ``head`` is the backend's head record (None for an export file, which has
    its own header check). ``anchor`` is an ``entry_hash`` the caller knows was
    in the ledger earlier (for example from an archived export): the ledger
    must still contain it. Returns ``INTACT`` (exit 0) or ``TAMPERED`` (exit 1)
    with facts ``entries``, ``head_hash``, ``first_bad_seq`` and ``kinds``.
    """
    return verify_values(
        (
            (
                row.seq,
                row.kind,
                row.subject,
                row.payload_text,
                row.at,
                row.prev_hash,
                row.entry_hash,
            )
            for row in rows
        ),
        head,
        anchor=anchor,
    )


def verify_values(
    rows: Iterable[tuple[Any, ...]], head: Head | None, *, anchor: str | None = None
) -> Result:
    """:func:`verify_rows` over the seven column values of each row as a backend returned
    them (``seq, kind, subject, payload, at, prev_hash, entry_hash``), streamed."""
    return ChainWalk(rows, head, anchor=anchor).finish()


class ChainWalk:
    """Verification of stored rows as an iterator: what :func:`verify_values` decides.

    :meth:`entries` yields each row as a :class:`LedgerEntry` (payload parsed)
    once the row has passed every check, in ``seq`` order; a row that breaks the
    chain is never yielded, nor is any row after it. :meth:`finish` verifies
    the rows not taken yet and returns the verdict: ``INTACT`` only when every
    row passed and the chain ends at the head (and holds ``anchor``). A consumer
    that builds something from the entries it was handed must keep it only for
    an ``INTACT`` verdict: the entries before a broken one were yielded already.
    Memory does not grow with the number of rows.

    Every row gets every check of :func:`_check_row`. A row that passes them all
    in the quick form below (exact types, kinds and times already seen, the
    payload through :class:`_PayloadCheck`, the hash of the RFC 8785 text) is
    accepted; any other row goes through :func:`_check_row` itself, which
    accepts it or names the first rule it breaks, so results and messages are
    those of the full checks.
    """

    __slots__ = ("_anchor", "_head", "_rows", "_walk", "result")

    def __init__(
        self, rows: Iterable[tuple[Any, ...]], head: Head | None, *, anchor: str | None = None
    ) -> None:
        self.result: Result | None = None
        """The verdict, once the rows ran out or one broke the chain (None before)."""
        self._rows, self._head, self._anchor = rows, head, anchor
        self._walk: Iterator[Any] | None = None

    def entries(self) -> Iterator[LedgerEntry]:
        """The entries as they pass their checks (once: the walk cannot be restarted)."""
        if self._walk is not None:
            raise RuntimeError("the chain walk was started already")
        walk: Iterator[LedgerEntry] = self._steps(decode=True)
        self._walk = walk
        return walk

    def finish(self) -> Result:
        """Verify the rows not taken yet; the verdict."""
        if self._walk is None:
            self._walk = self._steps(decode=False)
        for _step in self._walk:
            pass
        if self.result is None:  # pragma: no cover - the walk always ends with a verdict
            raise RuntimeError("the chain walk ended without a verdict")
        return self.result

    def _steps(self, *, decode: bool) -> Iterator[Any]:
        """One step per row that passed (its entry when ``decode``, else None)."""
        head, anchor = self._head, self._anchor
        walk = _Walk()
        check = _PayloadCheck()
        payload_ok = check.accepts
        kinds = walk.kinds
        count = 0
        prev_hash = GENESIS_PREV_HASH
        # A time equal to the previous row's was validated with it; the first row has
        # no previous time (a sentinel no column value equals, not "" or None).
        last_at: object = _NO_TIME
        # Many entries: OpenSSL's SHA-256 is the faster one per call (see
        # canonical.new_sha256).
        import hashlib

        sha256 = hashlib.sha256
        for values in self._rows:
            expected = count + 1
            seq, kind, subject, payload_text, at, row_prev, entry_hash = values
            if (
                type(seq) is int
                and seq == expected
                and row_prev == prev_hash
                # The type first: a kind read from an export file may be a list, which
                # no dict lookup takes.
                and type(kind) is str
                and (kind in kinds or is_snake_kind(kind))
                and _valid_subject(subject)
                and (at == last_at or _valid_at(at))
                and payload_ok(payload_text)
                # A recorded hash equal to "sha256:" + a hex digest is a well-formed digest.
                and entry_hash
                == "sha256:"
                + sha256(
                    (
                        f'{{"at":"{at}","kind":"{kind}","payload":{payload_text},'
                        f'"prev_hash":"{row_prev}","seq":{seq},"subject":{_json_string(subject)},'
                        '"v":1}'
                    ).encode()
                ).hexdigest()
            ):
                payload = check.value
            else:
                from plangate.ledger.rows import StoredRow

                walk.count, walk.prev_hash = count, prev_hash
                reason = _check_row(StoredRow(*values), expected, prev_hash)
                if reason is not None:
                    self.result = _tampered(walk, expected, reason)
                    return
                # The full checks proved the text canonical JSON of an object.
                payload = json.loads(payload_text) if decode else None
            count = expected
            prev_hash = entry_hash
            last_at = at
            kinds[kind] = kinds.get(kind, 0) + 1
            if anchor is not None and entry_hash == anchor:
                walk.anchor_seen = True
            if decode:
                yield LedgerEntry(seq, kind, subject, payload, at, row_prev, entry_hash)
            else:
                yield None
        walk.count, walk.prev_hash = count, prev_hash
        self.result = _chain_end(walk, head, anchor)


def _chain_end(walk: _Walk, head: Head | None, anchor: str | None) -> Result:
    """The verdict once every row passed: the chain must end at the head and hold the anchor."""
    if head is not None and (head.seq != walk.count or head.entry_hash != walk.prev_hash):
        return _tampered(
            walk,
            _head_bad_seq(head, walk.count),
            Reason(
                "LEDGER_HEAD_MISMATCH",
                f"the ledger head records seq {head.seq!r} ({head.entry_hash!r}) but the chain "
                f"ends at seq {walk.count} ({walk.prev_hash})",
                "entries after the last intact one were deleted, or the head was edited",
            ),
        )
    if anchor is not None and not walk.anchor_seen:
        return _tampered(
            walk,
            None,  # the chain itself is consistent; it is just not the anchored one
            Reason(
                "LEDGER_ANCHOR_MISSING",
                f"no entry has the anchored hash {anchor}",
                "the ledger was rewritten or truncated since the anchor was taken",
            ),
        )
    return Result(
        VERDICT_INTACT,
        (),
        {
            "entries": walk.count,
            "head_hash": walk.prev_hash,
            "first_bad_seq": None,
            "kinds": dict(sorted(walk.kinds.items())),
        },
    )


def verify_segment(
    rows: Iterable[tuple[Any, ...]], head: Head, start: int, *, location: str = "the ledger"
) -> list[LedgerEntry]:
    """Verify rows ``start`` .. head (column values in ``seq`` order) as a chain segment.

    The first row anchors the segment: its own hash must hold and, when
    ``start`` is 1, it must link to the genesis; every later row must be the
    next ``seq``, link to the row before and hash to its ``entry_hash``; the
    last row must be the head (an empty segment only when the head is seq 0).
    Returns the decoded entries; raises ``LEDGER_TAMPERED`` otherwise.
    """
    from plangate.ledger.rows import StoredRow

    entries: list[LedgerEntry] = []
    prev_hash: str | None = GENESIS_PREV_HASH if start <= 1 else None
    expected = start
    for values in rows:
        row = StoredRow(*values)
        link = row.prev_hash if prev_hash is None and isinstance(row.prev_hash, str) else prev_hash
        reason = _check_row(row, expected, link or "")
        if reason is not None:
            raise _segment_broken(location, expected, reason)
        entries.append(entry_from_values(values))
        prev_hash = row.entry_hash
        expected += 1
    last_seq = expected - 1
    empty_ok = not entries and start <= 1 and head.seq == 0 and head.entry_hash == GENESIS_PREV_HASH
    if not empty_ok and (not entries or head.seq != last_seq or head.entry_hash != prev_hash):
        raise _segment_broken(
            location,
            last_seq + 1,
            Reason(
                "LEDGER_HEAD_MISMATCH",
                f"the ledger head records seq {head.seq!r} but the chain read from seq {start} "
                f"ends at seq {last_seq}",
            ),
        )
    return entries


def _segment_broken(location: str, seq: int, reason: Reason) -> LedgerError:
    return LedgerError(
        "LEDGER_TAMPERED",
        f"ledger {location} does not verify at seq {seq} ({reason.code}: {reason.message}); "
        "no decision is based on it",
        "run 'plangate ledger verify'; a human investigates and restores the ledger",
    )


def _head_bad_seq(head: Head, chain_end: int) -> int:
    """First bad seq when the chain and the head disagree."""
    if isinstance(head.seq, bool) or not isinstance(head.seq, int):
        return max(chain_end, 1)
    if head.seq > chain_end:  # entries after the chain's end were deleted
        return chain_end + 1
    if head.seq < chain_end:  # entries were added without going through append
        return head.seq + 1
    return max(chain_end, 1)  # same length: the last entry was replaced


def _check_row(row: StoredRow, expected_seq: int, prev_hash: str) -> Reason | None:
    if isinstance(row.seq, bool) or not isinstance(row.seq, int) or row.seq != expected_seq:
        return Reason(
            "LEDGER_SEQ_MISMATCH",
            f"expected entry seq {expected_seq}, found {row.seq!r}",
            "an entry was deleted, inserted or moved here",
        )
    problem, _payload = _decode_row(row)
    if problem is not None:
        return Reason(problem.code, f"entry {expected_seq}: {problem.message}", problem.hint)
    if row.prev_hash != prev_hash:
        return Reason(
            "LEDGER_PREV_HASH_MISMATCH",
            f"entry {expected_seq} links to {row.prev_hash} but the previous entry hashes to "
            f"{prev_hash}",
            "an entry before it was replaced, or this one was moved",
        )
    # The payload text was just proven canonical, so it is hashed as stored.
    computed = entry_hash_from_text(
        seq=row.seq,
        kind=row.kind,
        subject=row.subject,
        payload_text=row.payload_text,
        at=row.at,
        prev_hash=row.prev_hash,
    )
    if computed != row.entry_hash:
        return Reason(
            "LEDGER_ENTRY_HASH_MISMATCH",
            f"entry {expected_seq} hashes to {computed} but records {row.entry_hash}",
            "the entry's kind, subject, payload or time was edited",
        )
    return None


def _tampered(walk: _Walk, first_bad_seq: int | None, reason: Reason) -> Result:
    hint = reason.hint or "restore the ledger from a verified export; investigate who wrote it"
    return Result(
        VERDICT_TAMPERED,
        (Reason(reason.code, reason.message, hint),),
        {
            "entries": walk.count,
            "head_hash": walk.prev_hash,
            "first_bad_seq": first_bad_seq,
            "kinds": dict(sorted(walk.kinds.items())),
        },
    )


# -- export files -------------------------------------------------------------

EXPORT_FORMAT = "plangate-ledger-export"
_ENTRY_KEYS = frozenset({"seq", "kind", "subject", "payload", "at", "prev_hash", "entry_hash"})
_HEADER_KEYS = frozenset({"format", "version", "entries", "head_hash"})


def export_bytes(rows: Iterable[StoredRow], head: Head) -> bytes:
    """The JSONL export of verified ``rows``: a header line, then one entry per line.

    Every line is RFC 8785 canonical JSON followed by ``\\n``. The header
    carries the entry count and the head hash so a truncated copy is detected.
    """
    lines = [
        canonical_bytes(
            {
                "format": EXPORT_FORMAT,
                "version": FORMAT_VERSION,
                "entries": head.seq,
                "head_hash": head.entry_hash,
            }
        )
    ]
    for row in rows:
        entry = entry_from_row(row)
        lines.append(canonical_bytes(entry.to_json()))
    return b"".join(line + b"\n" for line in lines)


def _export_problem(line_no: int, message: str) -> Result:
    return Result(
        VERDICT_TAMPERED,
        (
            Reason(
                "LEDGER_EXPORT_MALFORMED",
                f"export line {line_no}: {message}",
                "the export file was edited or truncated; take a new export from the ledger",
            ),
        ),
        {
            "entries": 0,
            "head_hash": GENESIS_PREV_HASH,
            "first_bad_seq": max(line_no - 1, 1),
            "kinds": {},
        },
    )


def verify_export_bytes(data: bytes, *, anchor: str | None = None) -> Result:
    """Verify an export file's bytes exactly as :func:`verify_rows` verifies a database.

    Every line must be canonical JSON (so every byte is covered by a hash),
    entries must carry exactly the seven entry fields, and the header's count
    and head hash must match the chain's end.
    """
    if not data.endswith(b"\n"):
        return _export_problem(data.count(b"\n") + 1, "the file does not end in a newline")
    lines = data[:-1].split(b"\n")
    try:
        header = strict_loads(lines[0])
    except StrictJSONError as exc:
        return _export_problem(1, f"header is not JSON: {exc.message}")
    if (
        not isinstance(header, dict)
        or set(header) != _HEADER_KEYS
        or header.get("format") != EXPORT_FORMAT
        or header.get("version") != FORMAT_VERSION
        or canonical_bytes(header) != lines[0]
    ):
        return _export_problem(1, f"header is not a canonical {EXPORT_FORMAT} v1 header")
    from plangate.ledger.rows import StoredRow

    rows: list[StoredRow] = []
    for index, line in enumerate(lines[1:], start=2):
        try:
            value = strict_loads(line)
        except StrictJSONError as exc:
            return _with_prefix(verify_rows(rows, None), index, f"not JSON: {exc.message}")
        if not isinstance(value, dict) or set(value) != _ENTRY_KEYS:
            return _with_prefix(
                verify_rows(rows, None), index, "an entry must have exactly the seven entry fields"
            )
        if canonical_bytes(value) != line:
            return _with_prefix(verify_rows(rows, None), index, "the line is not canonical JSON")
        payload = value["payload"]
        rows.append(
            StoredRow(
                value["seq"],
                value["kind"],
                value["subject"],
                canonical_text(payload) if isinstance(payload, dict) else payload,
                value["at"],
                value["prev_hash"],
                value["entry_hash"],
            )
        )
    return verify_rows(rows, Head(header["entries"], header["head_hash"]), anchor=anchor)


def _with_prefix(partial: Result, line_no: int, message: str) -> Result:
    """A line-level format failure: report it at the seq that line would hold."""
    if not partial.accepted:
        return partial
    facts = dict(partial.facts)
    facts["first_bad_seq"] = line_no - 1
    return Result(
        VERDICT_TAMPERED,
        (
            Reason(
                "LEDGER_EXPORT_MALFORMED",
                f"export line {line_no}: {message}",
                "the export file was edited; take a new export from the ledger",
            ),
        ),
        facts,
    )
