"""Grant, list and revoke overrides: the ledger IO behind ``plangate override``.

The rules (what a grant may lift, the agent markers, the request bounds) are in
:mod:`plangate.hooks.override`, which the hooks import on every decision; this
module is imported only by the command.

``grant`` and ``revoke`` are human-only: :func:`require_human` refuses (a human
is required, exit 3) when an agent or automation marker is in the environment
or stdin is not an interactive terminal. The command asks the human to type
the confirmation word before :func:`record_grant` writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from plangate.agents import HumanOnly, refuse_unless_human
from plangate.errors import InputRejected
from plangate.hooks.override import (
    KIND_GRANTED,
    KIND_REVOKED,
    GrantRequest,
    GrantState,
    grant_payload,
    grant_states,
    override_entries,
)

CONFIRM_WORD = "GRANT"
"""What the human types to confirm a grant."""


def repo_root(cwd: Path) -> Path:
    """The working tree the overrides apply to (git's top level of ``cwd``)."""
    from plangate.git import Git

    return Git(cwd).toplevel()


OVERRIDE_COMMAND = HumanOnly(
    "OVERRIDE_AGENT_ENVIRONMENT",
    "OVERRIDE_NOT_INTERACTIVE",
    "refused",
    "run this yourself in your own terminal, outside the agent session",
)
"""How ``override grant`` and ``revoke`` refuse an agent or a caller without a terminal."""


def require_human(env: Mapping[str, str], stdin: object) -> None:
    """Refuse unless a human at an interactive terminal, outside any agent, runs this."""
    refuse_unless_human(env, stdin, OVERRIDE_COMMAND)


def list_grants(root: Path, env: Mapping[str, str]) -> list[GrantState]:
    """Every grant in the ledger, in grant order (the ledger must already exist)."""
    from plangate.ledger import open_ledger

    with open_ledger(root, env, create=False) as ledger:
        return grant_states(override_entries(ledger))


def revoke_grant(root: Path, env: Mapping[str, str], grant_id: str, revoked_by: str) -> None:
    """Record the revocation of a known grant (an unknown id is refused)."""
    from plangate.ledger import open_ledger

    known = {s.grant_id for s in list_grants(root, env)}
    if grant_id not in known:
        raise InputRejected("OVERRIDE_UNKNOWN", f"no grant {grant_id!r}",
                            "see 'plangate override list'")
    with open_ledger(root, env) as ledger:
        ledger.append(KIND_REVOKED, grant_id, {"grant_id": grant_id, "revoked_by": revoked_by})


def record_grant(
    root: Path, env: Mapping[str, str], request: GrantRequest, now: datetime, granted_by: str
) -> dict[str, Any]:
    """Write a confirmed grant to the ledger; return its payload (id and expiry)."""
    from plangate.ledger import open_ledger

    payload = grant_payload(request, now, granted_by)
    with open_ledger(root, env) as ledger:
        ledger.append(KIND_GRANTED, payload["grant_id"], payload)
    return payload
