"""The trust root: trust.toml and allowed_signers joined and checked together (pure).

Beyond each file's own rules: every principal that holds a role has a key in
allowed_signers (``AUTH_PRINCIPAL_WITHOUT_KEY``). A principal with a key and
no role may sign, but its signature authorises nothing.
"""

from __future__ import annotations

import hashlib

from plangate.authority.signers import (
    AllowedSigners,
    SignerEntry,
    parse_allowed_signers,
    parse_revoked,
)
from plangate.authority.trustfile import ROLES, TrustConfig, parse_trust
from plangate.authority.trustpaths import SIGNERS_RELPATH
from plangate.errors import InputRejected
from plangate.records import NamedTuple

NAMESPACE_C3 = "plangate-c3"
NAMESPACE_REVIEW = "plangate-review"
NAMESPACE_LEDGER = "plangate-ledger"
NAMESPACE_CONTINUE = "plangate-continue"
NAMESPACE_EVAL_REVIEW = "plangate-eval-review"
NAMESPACE_EXEC_OPT_OUT = "plangate-exec-opt-out"
NAMESPACE_EVAL_PLAN = "plangate-eval-plan"
NAMESPACES = (
    NAMESPACE_C3,
    NAMESPACE_REVIEW,
    NAMESPACE_LEDGER,
    NAMESPACE_CONTINUE,
    NAMESPACE_EVAL_REVIEW,
    NAMESPACE_EXEC_OPT_OUT,
    NAMESPACE_EVAL_PLAN,
)
"""One signature namespace per kind of signed document."""


class TrustRoot(NamedTuple):
    """The parsed trust root, the commit it was read from and a digest of its bytes."""

    config: TrustConfig
    signers: AllowedSigners
    revoked: frozenset[bytes]
    commit: str
    digest: str

    @property
    def require_signatures(self) -> bool:
        """Whether approvals must be signed."""
        return self.config.require_signatures

    def entry_of(self, principal: str) -> SignerEntry | None:
        """The allowed-signers entry of ``principal``."""
        return self.signers.by_principal(principal)

    def summary(self) -> dict[str, object]:
        """JSON facts for reports."""
        return {
            "commit": self.commit,
            "digest": self.digest,
            "require_signatures": self.config.require_signatures,
            "trust_branch": self.config.trust_branch,
            "roles": {role: list(self.config.holders(role)) for role in ROLES},
            "humans": list(self.config.humans),
            "agents": list(self.config.agents),
            "signers": [
                {
                    "principal": e.principal,
                    "key_type": e.key_type,
                    "namespaces": list(e.namespaces) if e.namespaces is not None else None,
                    "revoked": e.key in self.revoked,
                }
                for e in self.signers.entries
            ],
        }


def root_digest(trust: bytes, signers: bytes, revoked: bytes | None) -> str:
    """``sha256:`` over the three files' bytes, length-prefixed (the root's identity)."""
    h = hashlib.sha256()
    for part in (trust, signers, revoked or b""):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return "sha256:" + h.hexdigest()


def build_root(trust: bytes, signers: bytes, revoked: bytes | None, commit: str) -> TrustRoot:
    """Parse and cross-check the three files' bytes read from ``commit``."""
    config = parse_trust(trust)
    allowed = parse_allowed_signers(signers)
    revoked_keys = parse_revoked(revoked) if revoked is not None else frozenset()
    listed = set(allowed.principals)
    for role in ROLES:
        for principal in config.holders(role):
            if principal not in listed:
                raise InputRejected(
                    "AUTH_PRINCIPAL_WITHOUT_KEY",
                    f"{principal} holds {role} in .plangate/trust.toml but has no key in "
                    f"{SIGNERS_RELPATH}",
                    "add the key with 'plangate trust add', or remove the principal",
                )
    return TrustRoot(config, allowed, revoked_keys, commit, root_digest(trust, signers, revoked))
