"""The hosts PlanGate hooks into: one table, one :class:`Host` per host.

Everything that differs between hosts is a field here or a function of the host's
adapter module (:class:`HostAdapter`); callers look a host up in :data:`HOSTS` (or
an entry point in :data:`ENTRY_POINTS`) and never compare host names:

- reading the payload and writing the answer: the adapter's :func:`answer`;
- the tool vocabulary: :attr:`Host.vocabulary`;
- install and uninstall: :attr:`Host.config_file`, :attr:`Host.local_config_file`,
  :attr:`Host.config_format`, :attr:`Host.events`;
- the host sandbox: :attr:`Host.sandbox_checked` (the hook can check the sandbox a
  call runs in) and :attr:`Host.sandbox_configured` (``plangate task start``
  configures it; :mod:`plangate.hooks.host_sandbox`);
- doctor: :attr:`Host.probe_events`, :attr:`Host.scratch_repository_probe` and the
  adapter's canaries and judges; :attr:`Host.version_program` for the installed
  version against ``resources/pinned-hosts.toml``.

The table imports no adapter: :meth:`Host.load` imports one when it is used, so a
hook process loads only its own host's code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from plangate.hooks.hosts.tools import CLAUDE_TOOLS, CODEX_TOOLS, CURSOR_TOOLS, Tool
from plangate.records import NamedTuple

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

    from plangate.hooks.hosts.protocol import HookOutput


class HostAdapter(Protocol):
    """What each host's adapter module provides."""

    def answer(
        self, entry: str, data: bytes, cwd: Path, env: Mapping[str, str]
    ) -> HookOutput:
        """The hook's answer to one payload sent to entry point ``entry``; never raises."""

    def judge_deny(self, proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
        """Did PlanGate deny, in the host's own terms? ``(denied, detail)``."""


class AgentAdapter(HostAdapter, Protocol):
    """What an agent host's adapter module provides besides (install and doctor)."""

    def not_found_answer(self, message: str) -> str:
        """Shell text answering in the host's deny form when PlanGate is not on PATH."""

    def canaries(self, root: str, target: str, shell: str) -> list[tuple[str, str, bytes]]:
        """``(event, canary, payload)``: doctor's payloads that must be denied."""

    def allow_canary(self, root: str, target: str) -> tuple[str, bytes]:
        """``(event, payload)``: doctor's write of ``target`` that must be allowed."""

    def judge_allow(self, proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
        """Did the host get an allow? ``(denied, detail)``."""


class GuestAdapter(Protocol):
    """A host whose payloads may reach another host's hook (Cursor runs Claude Code's)."""

    def answer_as_guest(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> HookOutput:
        """The answer to this host's own event received through another host's hook."""


class Host(NamedTuple):
    """One host (see the module docstring)."""

    name: str
    adapter: str
    """The adapter module (:class:`HostAdapter`)."""
    entries: tuple[str, ...]
    """The names ``plangate hook NAME`` answers for this host."""
    vocabulary: Mapping[str, Tool]
    config_format: str
    """How install writes the configuration: ``grouped`` (event -> matcher groups),
    ``cursor-v1`` (``version: 1``, event -> entries), ``git-hooks`` (hook scripts)."""
    config_file: str = ""
    """The committed configuration file (empty: git's hooks directory)."""
    local_config_file: str = ""
    """A per-developer, git-ignored file for this machine's interpreter entries."""
    events: tuple[tuple[str, str | None], ...] = ()
    """``(event, matcher)`` install writes (git: ``(hook name, entry point)``)."""
    agent: bool = True
    """An agent host (:class:`AgentAdapter`): its payload names its directory, and the hook
    helper may answer it. The git hooks decide in-process, in the process's directory."""
    entries_without_stdin: tuple[str, ...] = ()
    """Entry points that read no standard input (git gives ``pre-commit`` none)."""
    sandbox_checked: bool = False
    sandbox_configured: bool = False
    probe_events: tuple[str, ...] = ()
    """Events whose entries doctor runs canaries through (the blocking ones)."""
    scratch_repository_probe: bool = False
    """Doctor probes it in a throwaway repository (git hooks), not with a payload."""
    guests: tuple[str, ...] = ()
    """Hosts whose payloads this host's hook may receive (and answers as they expect)."""
    sent: Callable[[Mapping[str, Any]], bool] | None = None
    """Recognises a payload this host sent (to another host's hook), without loading the
    adapter: the host's hook process pays for a guest's code only when one calls."""
    version_program: str = ""
    """The program whose ``--version`` doctor compares with the pinned version."""
    shell_patches: bool = False
    """The host intercepts ``apply_patch <<'EOF' ... EOF`` sent to its shell and applies
    the patch itself: such a command is judged by the patch's headers."""

    def load(self) -> HostAdapter:
        """The adapter module (imported on first use)."""
        import importlib

        return cast("HostAdapter", importlib.import_module(self.adapter))

    def load_agent(self) -> AgentAdapter:
        """The adapter module of an agent host (install's and doctor's functions too)."""
        import importlib

        return cast("AgentAdapter", importlib.import_module(self.adapter))

    def load_guest(self) -> GuestAdapter:
        """The adapter module in its guest role."""
        import importlib

        return cast("GuestAdapter", importlib.import_module(self.adapter))


def cursor_sent(payload: Mapping[str, Any]) -> bool:
    """True for a payload Cursor sent: ``cursor_version``, or ``conversation_id`` and
    ``workspace_roots`` without Claude Code's ``session_id``."""
    if "cursor_version" in payload:
        return True
    return "conversation_id" in payload and "workspace_roots" in payload and (
        "session_id" not in payload
    )


CLAUDE = Host(
    name="claude",
    adapter="plangate.hooks.hosts.claude",
    entries=("claude",),
    vocabulary=CLAUDE_TOOLS,
    config_format="grouped",
    config_file=".claude/settings.json",
    local_config_file=".claude/settings.local.json",
    events=(
        ("PreToolUse", "*"),
        ("PostToolUse", "*"),
        ("PostToolUseFailure", "*"),
        ("Stop", None),
        ("SubagentStop", None),
    ),
    sandbox_checked=True,
    sandbox_configured=True,
    probe_events=("PreToolUse",),
    guests=("cursor",),
    version_program="claude",
)
CODEX = Host(
    name="codex",
    adapter="plangate.hooks.hosts.codex",
    entries=("codex",),
    vocabulary=CODEX_TOOLS,
    config_format="grouped",
    config_file=".codex/hooks.json",
    events=(("PreToolUse", None), ("PostToolUse", None), ("Stop", None)),
    sandbox_configured=True,
    probe_events=("PreToolUse",),
    version_program="codex",
    shell_patches=True,
)
CURSOR = Host(
    name="cursor",
    adapter="plangate.hooks.hosts.cursor",
    entries=("cursor",),
    vocabulary=CURSOR_TOOLS,
    config_format="cursor-v1",
    config_file=".cursor/hooks.json",
    events=tuple((event, None) for event in (
        "beforeShellExecution", "preToolUse", "beforeMCPExecution", "afterFileEdit", "stop",
    )),
    probe_events=("preToolUse", "beforeShellExecution"),
    sent=cursor_sent,
)
GIT = Host(
    name="git",
    adapter="plangate.hooks.hosts.git",
    entries=("git-pre-commit", "git-pre-push"),
    vocabulary={},
    config_format="git-hooks",
    events=(("pre-commit", "git-pre-commit"), ("pre-push", "git-pre-push")),
    agent=False,
    entries_without_stdin=("git-pre-commit",),
    scratch_repository_probe=True,
)

HOSTS: dict[str, Host] = {host.name: host for host in (CLAUDE, CODEX, CURSOR, GIT)}
"""Every host, by the name ``plangate hooks install --NAME`` and the ledger use."""
ENTRY_POINTS: dict[str, Host] = {entry: host for host in HOSTS.values() for entry in host.entries}
"""Every ``plangate hook NAME`` entry point, with its host."""
AGENT_ENTRY_POINTS = tuple(entry for entry, host in ENTRY_POINTS.items() if host.agent)
"""Entry points the hook helper may answer (its clients hold a copy; a test compares)."""
