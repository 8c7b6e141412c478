"""Agent and automation markers: is an agent (or CI) running this process?

Commands that only a human may run (granting an override, changing the trust root,
starting a task session, ``exec --no-isolation``, ``setup``) refuse when one of these
markers is in their environment. The hosts set them for every tool call they run, and
an agent cannot take them out of its own environment as easily as it can blank them.
"""

from __future__ import annotations

from collections.abc import Mapping

from plangate.errors import HumanRequired
from plangate.records import NamedTuple

AGENT_MARKERS: tuple[str, ...] = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_PROJECT_DIR",
    "CURSOR_AGENT",
    "CURSOR_TRACE_ID",
    "CI",
    "GITHUB_ACTIONS",
    "PLANGATE_TASK",
)
"""Environment variables whose presence means an agent or automation is running us."""

AGENT_MARKER_PREFIXES: tuple[str, ...] = ("CODEX_",)
"""Prefixes of environment variables that mark an agent (every ``CODEX_*`` variable)."""


def agent_markers_present(env: Mapping[str, str]) -> list[str]:
    """Names of agent/automation markers set in ``env`` (empty list = none)."""
    # Presence counts, not the value: an agent can blank a marker ('CLAUDECODE= cmd')
    # far more easily than it can remove it from its own environment.
    # CI switches are commonly exported empty on human machines; those need a value.
    found = [
        name
        for name in AGENT_MARKERS
        if (env.get(name) if name in ("CI", "GITHUB_ACTIONS") else name in env)
    ]
    found += sorted(k for k in env if k.startswith(AGENT_MARKER_PREFIXES))
    return found


class HumanOnly(NamedTuple):
    """How one human-only command refuses: its two reason codes, its wording and its hint."""

    agent_code: str
    terminal_code: str
    refused: str
    hint: str


def refuse_unless_human(env: Mapping[str, str], stdin: object, command: HumanOnly) -> None:
    """Refuse unless a human at an interactive terminal, outside any agent, runs ``command``.

    Neither check is a cryptographic proof; together they stop an agent's tool call, which
    runs without a terminal and with its host's markers in its environment.
    """
    markers = agent_markers_present(env)
    if markers:
        raise HumanRequired(
            command.agent_code,
            f"{command.refused}: agent or automation markers are set: " + ", ".join(markers),
            command.hint,
        )
    isatty = getattr(stdin, "isatty", None)
    if not callable(isatty) or not isatty():
        raise HumanRequired(
            command.terminal_code,
            f"{command.refused}: stdin is not an interactive terminal",
            command.hint,
        )
