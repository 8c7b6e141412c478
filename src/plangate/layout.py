"""Every repository path PlanGate reads or writes, and every size bound shared by
two or more modules: one table.

Paths are repository-relative strings with ``/`` separators (the form git and
the glob matcher use); join them with a root where a file-system path is needed.
A bound used by a single module stays in that module beside the rule it
limits; a bound two modules must agree on lives here, so they cannot drift
(a fixture accepted at registration and refused at trial time, say).
"""

from __future__ import annotations

# -- repository paths ---------------------------------------------------------------

WORKING_DIR = "docs/working"
"""Task directories live at ``docs/working/TASK-XXXX``."""

RECORD_RELPATH = "approvals/c3.json"
"""The C-3 record inside a task directory (legacy and c3-prime alike)."""

RUN_LOG_NAME = "run.ndjson"
"""Exec's run log inside a task directory."""

DELIVERY_RECORD_RELPATH = "delivery/record.jsonl"
"""Delivery's chained record inside a task directory."""

PLANGATE_DIR = ".plangate"
"""PlanGate's own directory at the repository root."""

SURFACES_RELPATH = ".plangate/protected-surfaces.toml"
"""The repository's protected-surface definition."""

HARNESS_DEFINITION_RELPATH = ".plangate/harness.toml"
"""The repository's harness definition (evaluation trust boundary)."""

LEDGER_CONFIG_RELPATH = ".plangate/config.toml"
"""Ledger configuration (backend, PostgreSQL URL variable)."""

SQLITE_LEDGER_RELPATH = ".plangate/ledger.sqlite3"
"""The default SQLite ledger."""

LOCK_DIR_RELPATH = ".plangate/locks"
"""Lock files of exec, delivery and overrides."""

SESSION_DIR_RELPATH = ".plangate/session"
"""Task sessions (``plangate task start``) and their baselines."""

RUNS_DIR_RELPATH = ".plangate/runs"
"""exec's isolated runs: workspaces, PlanGate's record of them, refused patches."""

DOCTOR_CANARY_RELPATH = ".plangate/doctor-canary"
"""The file doctor's canary probes try to write."""

PLANGATE_IGNORE_RELPATH = ".plangate/.gitignore"
"""PlanGate's own ignore file (written beside a new default ledger, committed)."""

CLAUDE_LOCAL_SETTINGS_RELPATH = ".claude/settings.local.json"
"""Claude Code's per-clone settings: written by the host and by ``task start``."""

APPROVALS_DIR_NAME = "approvals"
"""A task's approval directory: its record, signatures and review statements."""

# -- size bounds shared by more than one module ---------------------------------------

MAX_ARTIFACT_BYTES = 1024 * 1024
"""One Plan Package artifact (1 MiB), read from disk or from a commit."""

MAX_RECORD_BYTES = 256 * 1024
"""``approvals/c3.json`` (256 KiB)."""

MAX_SURFACES_BYTES = 256 * 1024
"""A protected-surface definition (256 KiB), from disk or from a commit."""

MAX_FIXTURE_BYTES = 16 * 1024 * 1024
"""One evaluation fixture (16 MiB): the same bound at registration and at every trial."""

MAX_DELIVERY_RECORD_BYTES = 16 * 1024 * 1024
"""Delivery's ``record.jsonl`` (16 MiB), for delivery and for RunEvidence."""
