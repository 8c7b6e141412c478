"""``.plangate/trust.toml``: which principal holds which role (pure, strict).

::

    version = 1
    require_signatures = true
    trust_branch = "main"            # where local commands read the trust root
    approver_may_review = false      # default: the approver never reviews
    humans = ["alice@example.com", "bob@example.com", "carol@example.com"]
    agents = ["ci-agent@example.com"]  # principals that sign nothing

    [roles]
    reviewer = ["alice@example.com", "bob@example.com"]
    approver = ["carol@example.com"]
    override = ["carol@example.com"]

Rules (each an ``AUTH_TRUST_*`` rejection): strict TOML of at most 64 KiB;
only the keys above; ``version`` and ``require_signatures`` present;
principals are literal names (no patterns); a role list is never empty (an
empty list never means "everyone": leave the role out, and nobody holds it);
no principal twice in one list; only the roles ``reviewer``, ``approver``,
``override``; an agent principal holds no role and is not also a human; with
``approver_may_review = false`` nobody is both reviewer and approver; with
``require_signatures = true`` there are at least two reviewers and one
approver (otherwise nothing could ever be approved).
"""

from __future__ import annotations

from typing import Any

from plangate.authority.signers import PRINCIPAL_RE
from plangate.authority.trustpaths import (
    DEFAULT_TRUST_BRANCH,
    MAX_TRUST_BYTES,
    TRUST_RELPATH,
    is_branch_name,
)
from plangate.errors import InputRejected
from plangate.records import NamedTuple

ROLES = ("reviewer", "approver", "override", "evaluator")

_TOP_KEYS = frozenset(
    {
        "version",
        "require_signatures",
        "trust_branch",
        "approver_may_review",
        "humans",
        "agents",
        "roles",
    }
)
_REQUIRED = ("version", "require_signatures")


class TrustConfig(NamedTuple):
    """The parsed trust.toml."""

    require_signatures: bool
    trust_branch: str
    approver_may_review: bool
    roles: dict[str, tuple[str, ...]]
    humans: tuple[str, ...]
    agents: tuple[str, ...]

    def holders(self, role: str) -> tuple[str, ...]:
        """The principals holding ``role`` (empty when nobody does)."""
        return self.roles.get(role, ())

    def roles_of(self, principal: str) -> tuple[str, ...]:
        """The roles ``principal`` holds, in :data:`ROLES` order."""
        return tuple(role for role in ROLES if principal in self.roles.get(role, ()))

    @property
    def principals(self) -> tuple[str, ...]:
        """Every principal the file names (roles, humans, agents), each once."""
        seen: dict[str, None] = {}
        for role in ROLES:
            for p in self.roles.get(role, ()):
                seen.setdefault(p)
        for p in (*self.humans, *self.agents):
            seen.setdefault(p)
        return tuple(seen)


def _bad(code: str, message: str, hint: str) -> InputRejected:
    return InputRejected(code, f"{TRUST_RELPATH}: {message}", hint)


def _principal_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _bad(
            "AUTH_TRUST_BAD_VALUE",
            f"{where} must be a list of principals",
            f'e.g. {where} = ["alice@example.com"]',
        )
    if not value:
        raise _bad(
            "AUTH_TRUST_ROLE_EMPTY",
            f"{where} is empty; an empty list never means everyone",
            f"name the principals, or remove {where} (then nobody holds it)",
        )
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or PRINCIPAL_RE.fullmatch(item) is None:
            raise _bad(
                "AUTH_TRUST_BAD_PRINCIPAL",
                f"{where}: {item!r} is not a literal principal (no patterns, no spaces)",
                "write each principal as it appears in .plangate/allowed_signers",
            )
        if item in out:
            raise _bad("AUTH_TRUST_DUPLICATE", f"{where} names {item} twice", "list it once")
        out.append(item)
    return tuple(out)


def _flag(raw: dict[str, Any], key: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise _bad("AUTH_TRUST_BAD_VALUE", f"{key} must be true or false", f"{key} = true")
    return value


def _roles(raw: Any, approver_may_review: bool) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise _bad("AUTH_TRUST_BAD_VALUE", "[roles] must be a table", "[roles]\nreviewer = [...]")
    unknown = [k for k in raw if k not in ROLES]
    if unknown:
        raise _bad(
            "AUTH_TRUST_UNKNOWN_ROLE",
            f"unknown roles: {', '.join(unknown)}",
            f"roles are {', '.join(ROLES)}",
        )
    roles = {role: _principal_list(raw[role], f"roles.{role}") for role in ROLES if role in raw}
    if not approver_may_review:
        both = [p for p in roles.get("reviewer", ()) if p in roles.get("approver", ())]
        if both:
            raise _bad(
                "AUTH_TRUST_ROLE_CONFLICT",
                f"{', '.join(both)} both reviews and approves",
                "give the approver role to someone else, or set approver_may_review = "
                "true deliberately",
            )
    return roles


def parse_trust(data: bytes) -> TrustConfig:
    """Parse trust.toml bytes (see the module docstring for every rule)."""
    import tomllib

    if len(data) > MAX_TRUST_BYTES:
        raise _bad(
            "AUTH_TRUST_MALFORMED",
            f"{len(data)} bytes (limit {MAX_TRUST_BYTES})",
            "keep the file small",
        )
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _bad(
            "AUTH_TRUST_MALFORMED",
            f"not valid UTF-8 TOML: {exc}",
            "fix the syntax ('plangate trust show' prints a valid file)",
        ) from None
    unknown = sorted(k for k in raw if k not in _TOP_KEYS)
    if unknown:
        raise _bad(
            "AUTH_TRUST_UNKNOWN_KEY",
            f"unknown keys: {', '.join(unknown)}",
            f"allowed keys: {', '.join(sorted(_TOP_KEYS))}",
        )
    missing = [k for k in _REQUIRED if k not in raw]
    if missing:
        raise _bad(
            "AUTH_TRUST_MISSING_KEY",
            f"missing: {', '.join(missing)}",
            "version = 1 and require_signatures = true|false are required",
        )
    if raw["version"] != 1 or isinstance(raw["version"], bool):
        raise _bad("AUTH_TRUST_BAD_VALUE", f"version {raw['version']!r} is not 1", "version = 1")
    require = _flag(raw, "require_signatures", False)
    may_review = _flag(raw, "approver_may_review", False)
    branch = raw.get("trust_branch", DEFAULT_TRUST_BRANCH)
    if not is_branch_name(branch):
        raise _bad(
            "AUTH_TRUST_BAD_VALUE",
            f"trust_branch {branch!r} is not a branch name",
            'e.g. trust_branch = "main"',
        )
    roles = _roles(raw.get("roles", {}), may_review)
    humans = _principal_list(raw["humans"], "humans") if "humans" in raw else ()
    agents = _principal_list(raw["agents"], "agents") if "agents" in raw else ()
    for agent in agents:
        held = [role for role in ROLES if agent in roles.get(role, ())]
        if held or agent in humans:
            raise _bad(
                "AUTH_TRUST_ROLE_CONFLICT",
                f"agent principal {agent} is also {', '.join(held) or 'a human'}",
                "an agent's principal signs nothing: remove it from the roles",
            )
    if require and (len(roles.get("reviewer", ())) < 2 or not roles.get("approver")):
        raise _bad(
            "AUTH_TRUST_ROLES_INSUFFICIENT",
            "require_signatures = true needs at least two reviewers and one approver",
            "name them under [roles]",
        )
    return TrustConfig(require, branch, may_review, roles, humans, agents)


def render_trust(config: TrustConfig) -> bytes:
    """trust.toml bytes for ``config`` (``plangate trust init|add`` write this)."""

    def names(values: tuple[str, ...]) -> str:
        return "[" + ", ".join(f'"{v}"' for v in values) + "]"

    lines = [
        "# PlanGate trust root: who holds which role. Read from the base commit in CI",
        "# and from the trust branch locally; see docs/authority.md.",
        "version = 1",
        f"require_signatures = {str(config.require_signatures).lower()}",
        f'trust_branch = "{config.trust_branch}"',
        f"approver_may_review = {str(config.approver_may_review).lower()}",
    ]
    if config.humans:
        lines.append(f"humans = {names(config.humans)}")
    if config.agents:
        lines.append(f"agents = {names(config.agents)}")
    lines.append("")
    lines.append("[roles]")
    lines.extend(f"{role} = {names(config.roles[role])}" for role in ROLES if role in config.roles)
    return ("\n".join(lines) + "\n").encode()
