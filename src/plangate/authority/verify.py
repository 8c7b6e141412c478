"""Does a signature name a principal authorised for a role? One ordered rule table.

The rules read a :class:`SignatureCase`: the signature file's bytes (or why
there are none), the signed bytes, the namespace and role expected, the trust
root and the time. The cryptographic answer is the one fact that needs a
process (``ssh-keygen -Y verify``); the case carries the function that asks
for it, and the rule calls it only once every pure rule before it holds. The
first failing rule stops the evaluation (each rule needs the one before).

Codes are ``<PREFIX>_SIGNATURE_*`` / ``<PREFIX>_SIGNER_*`` with the prefix of
the document checked (``C3`` for approval records, ``REVIEW`` for review
statements, ``LEDGER_CHECKPOINT`` for ledger checkpoints).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from plangate.authority.root import TrustRoot
from plangate.authority.signers import SignerEntry
from plangate.authority.sshsig import SignatureBlob, parse_signature
from plangate.errors import InputRejected
from plangate.records import NamedTuple
from plangate.verdict import Reason

CryptoCheck = Callable[[SignerEntry, str, bytes, bytes], bool]
"""``(entry, namespace, signature, data) -> bool``: ssh-keygen's verdict."""


class SignatureCase(NamedTuple):
    """Everything the rules read."""

    prefix: str
    label: str
    signature: bytes | None
    signature_problem: str
    data: bytes
    namespace: str
    role: str | None
    root: TrustRoot
    now: datetime
    crypto: CryptoCheck


class Verified(NamedTuple):
    """A signature that verified: who signed, with which key."""

    principal: str
    key_type: str
    key_fingerprint: str
    roles: tuple[str, ...]
    human: bool


class _State:
    __slots__ = ("blob", "case", "entry")

    def __init__(self, case: SignatureCase) -> None:
        self.case = case
        self.blob: SignatureBlob | None = None
        self.entry: SignerEntry | None = None


def _reason(case: SignatureCase, suffix: str, message: str, hint: str) -> Reason:
    return Reason(f"{case.prefix}_{suffix}", f"{case.label}: {message}", hint)


def _present(st: _State) -> Reason | None:
    case = st.case
    if case.signature is not None:
        return None
    return _reason(
        case,
        "SIGNATURE_MISSING",
        f"no signature ({case.signature_problem or 'missing'}); the trust root requires signatures",
        "sign it with --sign KEY",
    )


def _well_formed(st: _State) -> Reason | None:
    case = st.case
    try:
        st.blob = parse_signature(case.signature or b"")
    except InputRejected as exc:
        return _reason(case, "SIGNATURE_MALFORMED", exc.message, exc.hint)
    return None


def _namespace(st: _State) -> Reason | None:
    case, blob = st.case, st.blob
    if blob is None or blob.namespace == case.namespace:
        return None
    return _reason(
        case,
        "SIGNATURE_NAMESPACE",
        f"signed for namespace {blob.namespace!r}, not {case.namespace!r}",
        "a signature for one kind of document never counts for another",
    )


def _listed(st: _State) -> Reason | None:
    case, blob = st.case, st.blob
    if blob is None:
        return None
    st.entry = case.root.signers.by_key(blob.public_key)
    if st.entry is not None:
        return None
    return _reason(
        case,
        "SIGNER_UNKNOWN",
        f"signed by a {blob.key_type} key that .plangate/allowed_signers does not "
        f"list (trust root at {case.root.commit[:12]})",
        "only keys in the trust root's allowed_signers can approve",
    )


def _not_revoked(st: _State) -> Reason | None:
    entry = st.entry
    if entry is None or entry.key not in st.case.root.revoked:
        return None
    return _reason(
        st.case,
        "SIGNER_REVOKED",
        f"{entry.principal}'s key is revoked",
        "sign again with the principal's current key",
    )


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _valid_now(st: _State) -> Reason | None:
    entry, now = st.entry, st.case.now
    if entry is None:
        return None
    if entry.valid_after is not None and now < entry.valid_after:
        return _reason(
            st.case,
            "SIGNER_EXPIRED",
            f"{entry.principal}'s key is valid only after {_iso(entry.valid_after)}",
            "wait, or sign with a key valid now",
        )
    if entry.valid_before is not None and now > entry.valid_before:
        return _reason(
            st.case,
            "SIGNER_EXPIRED",
            f"{entry.principal}'s key expired at {_iso(entry.valid_before)}",
            "sign again with the principal's current key",
        )
    return None


def _key_namespace(st: _State) -> Reason | None:
    entry = st.entry
    if entry is None or entry.namespaces is None or st.case.namespace in entry.namespaces:
        return None
    return _reason(
        st.case,
        "SIGNER_NAMESPACE",
        f"{entry.principal}'s key may sign only {', '.join(entry.namespaces)}",
        "allowed_signers restricts this key's namespaces",
    )


def _cryptographically_valid(st: _State) -> Reason | None:
    case, entry = st.case, st.entry
    if entry is None:
        return None
    if case.crypto(entry, case.namespace, case.signature or b"", case.data):
        return None
    return _reason(
        case,
        "SIGNATURE_INVALID",
        f"the signature by {entry.principal} does not verify over these bytes",
        "the document changed after it was signed: sign it again",
    )


def _not_agent(st: _State) -> Reason | None:
    entry = st.entry
    if entry is None or entry.principal not in st.case.root.config.agents:
        return None
    return _reason(
        st.case,
        "SIGNER_IS_AGENT",
        f"{entry.principal} is an agent principal, which signs nothing",
        "a human holding the role must sign",
    )


def _authorised(st: _State) -> Reason | None:
    case, entry = st.case, st.entry
    if entry is None or case.role is None:
        return None
    if entry.principal in case.root.config.holders(case.role):
        return None
    return _reason(
        case,
        "SIGNER_NOT_AUTHORISED",
        f"{entry.principal} does not hold the {case.role} role",
        f"a principal listed under roles.{case.role} in .plangate/trust.toml must sign",
    )


class SignatureRule(NamedTuple):
    """One rule: its documented text, its code suffixes and the check."""

    text: str
    suffixes: tuple[str, ...]
    check: Callable[[_State], Reason | None]


SIGNATURE_RULES: tuple[SignatureRule, ...] = (
    SignatureRule("a signature file is present", ("SIGNATURE_MISSING",), _present),
    SignatureRule(
        "it is an armored SSHSIG signature, version 1, sha256/sha512",
        ("SIGNATURE_MALFORMED",),
        _well_formed,
    ),
    SignatureRule("its namespace is the document kind's", ("SIGNATURE_NAMESPACE",), _namespace),
    SignatureRule("its key is listed in allowed_signers", ("SIGNER_UNKNOWN",), _listed),
    SignatureRule("its key is not in revoked_signers", ("SIGNER_REVOKED",), _not_revoked),
    SignatureRule(
        "now is within the key's valid-after/valid-before", ("SIGNER_EXPIRED",), _valid_now
    ),
    SignatureRule(
        "the key's namespaces= (if any) allows the namespace", ("SIGNER_NAMESPACE",), _key_namespace
    ),
    SignatureRule(
        "ssh-keygen -Y verify accepts it over the exact bytes",
        ("SIGNATURE_INVALID",),
        _cryptographically_valid,
    ),
    SignatureRule("the signer is not an agent principal", ("SIGNER_IS_AGENT",), _not_agent),
    SignatureRule("the signer holds the required role", ("SIGNER_NOT_AUTHORISED",), _authorised),
)
"""The signature rules, in order."""


def fingerprint(key: bytes) -> str:
    """OpenSSH's ``SHA256:`` fingerprint of a wire-format public key."""
    import base64
    import hashlib

    return "SHA256:" + base64.b64encode(hashlib.sha256(key).digest()).decode().rstrip("=")


def check_signature(case: SignatureCase) -> Verified | Reason:
    """Run :data:`SIGNATURE_RULES`; the signer on success, the first failure otherwise."""
    st = _State(case)
    for rule in SIGNATURE_RULES:
        reason = rule.check(st)
        if reason is not None:
            return reason
    entry = st.entry
    if entry is None:  # pragma: no cover -- the rules above set it or fail
        return _reason(case, "SIGNER_UNKNOWN", "no signer", "sign it")
    config = case.root.config
    return Verified(
        entry.principal,
        entry.key_type,
        fingerprint(entry.key),
        config.roles_of(entry.principal),
        entry.principal in config.humans,
    )


def ssh_keygen_crypto(entry: SignerEntry, namespace: str, signature: bytes, data: bytes) -> bool:
    """The production :data:`CryptoCheck`: ``ssh-keygen -Y verify`` for this one entry."""
    from plangate.authority import sshkeygen

    return sshkeygen.verify(
        entry.allowed_signers_line(), entry.principal, namespace, signature, data
    )
