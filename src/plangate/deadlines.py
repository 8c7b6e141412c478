"""How long PlanGate may wait, and the deadlines of its callers: one table.

A host kills a hook that runs longer than the timeout the installer writes
(:data:`HOOK_TIMEOUT_SECONDS`); a hook killed that way leaves no recorded
decision. Every wait a hook can enter is therefore shorter than that deadline,
and a wait that runs out is a refusal with a reason code, never a hang:

- the SQLite ledger's write-lock wait (``busy_timeout``),
- the PostgreSQL ledger's connect timeout, ``lock_timeout`` (the head-row lock
  another session holds) and ``statement_timeout`` (any one statement).

A test pins each wait below the hook deadline; change them here only.
"""

from __future__ import annotations

HOOK_TIMEOUT_SECONDS = 30
"""The timeout ``plangate hooks install`` writes into the hosts' hook settings."""

LEDGER_LOCK_WAIT_SECONDS = 10
"""Longest wait for another writer's ledger lock (SQLite busy timeout, PostgreSQL lock_timeout)."""

LEDGER_STATEMENT_TIMEOUT_SECONDS = 15
"""Longest single PostgreSQL ledger statement (statement_timeout)."""

LEDGER_CONNECT_TIMEOUT_SECONDS = 5
"""Longest wait for the PostgreSQL ledger server to accept a connection."""
