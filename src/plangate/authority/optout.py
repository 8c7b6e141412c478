"""Exec opt-out statements: a principal holding ``override`` lets one command run unboxed (pure).

Where a trust root is in force, ``plangate exec TASK --no-isolation -- COMMAND``
runs only with a statement an agent cannot write alone:
``.plangate/opt-out/<TASK>.json``, canonical JSON, and its signature
``<TASK>.json.sig`` (namespace ``plangate-exec-opt-out``)::

    {"command_digest": "sha256:...", "expires_at": "2026-01-01T12:15:00Z",
     "head": "<HEAD, 40 hex>", "issued_at": "2026-01-01T12:00:00Z",
     "kind": "plangate-exec-opt-out", "principal": "carol@example.com",
     "task_id": "TASK-0001", "version": 1}

It binds the task, the exact command (the digest ``plangate exec`` records as
``command_digest``), the repository's HEAD and a validity of at most
:data:`MAX_VALIDITY_SECONDS`; it counts once (a statement already recorded by an
opt-out is refused). :func:`opt_out_reasons` decides, over the parsed statement,
its signature's check and what the run is, with the ordered :data:`RULES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from plangate.authority.statement import one_version_bytes, read_one_version
from plangate.authority.verify import Verified
from plangate.canonical import is_digest
from plangate.clock import parse_utc
from plangate.records import NamedTuple
from plangate.verdict import Reason

KIND = "plangate-exec-opt-out"
ROLE = "override"
"""The trust root's role whose holders may sign an opt-out."""
PREFIX = "EXEC_OPT_OUT"
"""The prefix of the signature rules' codes (``EXEC_OPT_OUT_SIGNER_NOT_AUTHORISED``...)."""
STATEMENT_DIR = ".plangate/opt-out"
MAX_STATEMENT_BYTES = 16 * 1024
MAX_VALIDITY_SECONDS = 3600
"""A statement is valid for one hour at most: long enough to walk to the terminal."""
DEFAULT_VALIDITY_MINUTES = 15
_SHA_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_FIELDS = ("task_id", "command_digest", "head", "principal", "issued_at", "expires_at")
KEYS = frozenset({"kind", "version", *_FIELDS})
_SIGN = "a principal holding override signs one: plangate trust opt-out TASK --sign KEY -- COMMAND"


def statement_relpath(task_id: str) -> str:
    """Where the statement of ``task_id`` is kept (its signature: the same path + ``.sig``)."""
    return f"{STATEMENT_DIR}/{task_id}.json"


class OptOut(NamedTuple):
    """A parsed opt-out statement."""

    task_id: str
    command_digest: str
    head: str
    principal: str
    issued_at: str
    expires_at: str


def opt_out_bytes(statement: OptOut) -> bytes:
    """The canonical bytes that are signed and written."""
    return one_version_bytes(statement._asdict(), KIND)


def parse_opt_out(data: bytes) -> OptOut | str:
    """The statement, or why it is not one (a message)."""
    value = read_one_version(data, kind=KIND, fields=_FIELDS, max_bytes=MAX_STATEMENT_BYTES,
                             what="an exec opt-out statement's")
    if isinstance(value, str):
        return value
    if not is_digest(value["command_digest"]):
        return "command_digest must be a sha256 digest"
    if not _SHA_RE.fullmatch(value["head"]):
        return "head must be a full commit id"
    if parse_utc(value["issued_at"]) is None or parse_utc(value["expires_at"]) is None:
        return "issued_at and expires_at must be YYYY-MM-DDTHH:MM:SSZ"
    statement = OptOut(*(value[k] for k in _FIELDS))
    if opt_out_bytes(statement) != data:
        return "not in canonical form (written by 'plangate trust opt-out')"
    return statement


class OptOutFacts(NamedTuple):
    """What the rules read: the statement as found and checked, and the run it must name."""

    statement: OptOut | None
    problem: str
    """Why there is no statement (empty: there is one); ``missing`` when no file is there."""
    signature: Verified | Reason | None
    task_id: str
    command_digest: str
    head: str
    now: datetime
    used: bool
    """An opt-out already recorded this statement."""


MISSING = "missing"


def _present(f: OptOutFacts) -> Reason | None:
    if f.problem != MISSING:
        return None
    return Reason(
        "EXEC_OPT_OUT_STATEMENT_MISSING",
        f"a trust root is in force and there is no signed opt-out at "
        f"{statement_relpath(f.task_id)}: a terminal is no evidence of a person",
        _SIGN,
    )


def _well_formed(f: OptOutFacts) -> Reason | None:
    if f.statement is not None or f.problem == MISSING:
        return None
    return Reason(
        "EXEC_OPT_OUT_STATEMENT_MALFORMED", f"{statement_relpath(f.task_id)}: {f.problem}", _SIGN
    )


def _signed(f: OptOutFacts) -> Reason | None:
    if isinstance(f.signature, Reason):
        return f.signature
    if f.signature is None and f.statement is not None:
        return Reason("EXEC_OPT_OUT_SIGNATURE_MISSING", "the statement was not checked", _SIGN)
    return None


def _signer_named(f: OptOutFacts) -> Reason | None:
    st, signer = f.statement, f.signature
    if st is None or not isinstance(signer, Verified) or signer.principal == st.principal:
        return None
    return Reason(
        "EXEC_OPT_OUT_PRINCIPAL_MISMATCH",
        f"the statement names {st.principal} but {signer.principal} signed it",
        "the override holder signs their own statement",
    )


def _binding(field: str, code: str, what: str) -> Callable[[OptOutFacts], Reason | None]:
    def check(f: OptOutFacts) -> Reason | None:
        if f.statement is None:
            return None
        have, want = getattr(f.statement, field), getattr(f, field)
        if have == want:
            return None
        return Reason(
            code,
            f"the statement is for another {what} ({have[:19]}), not this run's ({want[:19]})",
            _SIGN,
        )

    return check


def _window(f: OptOutFacts) -> tuple[datetime, datetime] | None:
    if f.statement is None:
        return None
    issued, expires = parse_utc(f.statement.issued_at), parse_utc(f.statement.expires_at)
    return (issued, expires) if issued is not None and expires is not None else None


def _short(f: OptOutFacts) -> Reason | None:
    window = _window(f)
    if window is None:
        return None
    seconds = (window[1] - window[0]).total_seconds()
    if 0 < seconds <= MAX_VALIDITY_SECONDS:
        return None
    return Reason(
        "EXEC_OPT_OUT_VALIDITY_TOO_LONG",
        f"the statement is valid for {int(seconds)} s; at most {MAX_VALIDITY_SECONDS} s count",
        _SIGN,
    )


def _started(f: OptOutFacts) -> Reason | None:
    window = _window(f)
    if window is None or f.now >= window[0]:
        return None
    return Reason(
        "EXEC_OPT_OUT_NOT_YET_VALID",
        f"the statement is valid only from {f.statement.issued_at if f.statement else ''}",
        "check the clock of the machine that signed it, then sign again",
    )


def _not_expired(f: OptOutFacts) -> Reason | None:
    window = _window(f)
    if window is None or f.now <= window[1]:
        return None
    return Reason(
        "EXEC_OPT_OUT_EXPIRED",
        f"the statement expired at {f.statement.expires_at if f.statement else ''}",
        _SIGN,
    )


def _unused(f: OptOutFacts) -> Reason | None:
    if not f.used:
        return None
    return Reason(
        "EXEC_OPT_OUT_ALREADY_USED",
        "an opt-out recorded in the ledger already used this statement; each counts once",
        _SIGN,
    )


class Rule(NamedTuple):
    """One opt-out rule: its name and its check."""

    name: str
    check: Callable[[OptOutFacts], Reason | None]


RULES: tuple[Rule, ...] = (
    Rule("statement_present", _present),
    Rule("statement_well_formed", _well_formed),
    Rule("signed_by_an_override_holder", _signed),
    Rule("signer_is_the_principal_named", _signer_named),
    Rule("same_task", _binding("task_id", "EXEC_OPT_OUT_OTHER_TASK", "task")),
    Rule("same_command", _binding("command_digest", "EXEC_OPT_OUT_OTHER_COMMAND", "command")),
    Rule("same_head", _binding("head", "EXEC_OPT_OUT_OTHER_HEAD", "HEAD")),
    Rule("validity_at_most_an_hour", _short),
    Rule("valid_already", _started),
    Rule("not_expired", _not_expired),
    Rule("not_used_before", _unused),
)
"""The opt-out rules, in order; every failing rule is listed (none after a missing or
malformed statement, which the later rules cannot read)."""


def opt_out_reasons(facts: OptOutFacts) -> list[Reason]:
    """Why the statement does not let this run go unboxed (empty: it does)."""
    reasons: list[Reason] = []
    for rule in RULES:
        reason = rule.check(facts)
        if reason is not None:
            reasons.append(reason)
            if rule.name in ("statement_present", "statement_well_formed"):
                break
    return reasons
