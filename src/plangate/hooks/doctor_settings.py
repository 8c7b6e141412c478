"""What doctor reads besides the canaries: settings that make hooks silently do nothing.

Each check is one small function returning findings; :func:`setting_findings` runs
them in order:

1. ``ledger``: the ledger exists and its chain verifies (``DOCTOR_LEDGER_MISSING``,
   ``DOCTOR_LEDGER_BROKEN``): the hooks deny every call without it; a SQLite ledger
   without this clone's witness warns (``DOCTOR_LEDGER_WITNESS``,
   :mod:`plangate.ledger.witness`);
2. ``machine_paths``: a committed hook file (not ignored by git) names an absolute
   path in a PlanGate command (``DOCTOR_MACHINE_PATH``): every teammate's hook
   would fail;
3. ``claude_policy``: Claude Code's managed settings (``/etc/claude-code``, macOS
   ``/Library/Application Support/ClaudeCode``) set ``allowManagedHooksOnly`` or
   ``disableAllHooks``, or the user's or project's settings set ``disableAllHooks``
   (``DOCTOR_CLAUDE_HOOKS_DISABLED``): project hooks never run;
4. ``codex``: Codex's ``config.toml`` (``$CODEX_HOME``, else ``~/.codex``) turns
   hooks off (``[features] hooks = false``, or the older ``codex_hooks``:
   ``DOCTOR_CODEX_HOOKS_OFF``), or holds no trust record
   (``[hooks.state."<hooks.json>:<event>:<group>:<hook>"] trusted_hash``) for a
   PlanGate hook. With ``codex`` on ``PATH`` Codex's own app-server answers
   (:func:`plangate.hooks.codex_trust.check_trust`: ``CODEX_HOOKS_UNTRUSTED`` and the
   ``CODEX_TRUST_*`` refusals fail doctor); without it the configuration is read
   (``DOCTOR_CODEX_UNTRUSTED``, a warning). The fix: ``plangate hooks trust --codex``;
5. ``events``: every event of a host's table entry
   (:data:`plangate.hooks.hosts.table.HOSTS`) has a PlanGate entry in each of its
   files that holds one (``DOCTOR_HOOK_EVENT_MISSING``, a failure): e.g. Claude
   Code's ``PostToolUseFailure``, without which a failed call gets no effect check
   until ``Stop``;
6. ``timeouts``: whether a timed-out hook blocks: Cursor entries need
   ``failClosed: true`` (``DOCTOR_TIMEOUT_FAILS_OPEN``, a failure); Claude Code
   entries block on timeout only with ``onFailure: "block"`` (a warning without
   it); Codex has no such setting (a warning).
"""

# ruff: noqa: PTH118
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plangate.records import NamedTuple

CLAUDE_MANAGED_SETTINGS = (
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
)
MACHINE_PATH = re.compile(r"(?:^|[\s'\"=])(?:/(?!dev/null)[\w.+-]+)+/?")
"""An absolute path in a command line (``/dev/null`` aside)."""
_CODEX_EVENTS = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "Stop": "stop"}


class Finding(NamedTuple):
    """One setting doctor found: fails doctor, or only warns."""

    check: str
    code: str
    message: str
    hint: str
    fails: bool

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"check": self.check, "code": self.code, "message": self.message,
                "hint": self.hint, "fails": self.fails}


def _json_file(path: Path) -> dict[str, Any] | None:
    from plangate.fsutil import read_regular_file

    read = read_regular_file(path, 1024 * 1024)
    if not read.ok or read.data is None:
        return None
    try:
        value = json.loads(read.data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def ledger(root: Path) -> list[Finding]:
    """The ledger exists and verifies."""
    from plangate.errors import PlanGateError
    from plangate.ledger import LedgerError, open_ledger

    try:
        with open_ledger(root, dict(os.environ), must_exist=True) as opened:
            result = opened.verify()
    except (LedgerError, PlanGateError, OSError) as exc:
        return [Finding("ledger", "DOCTOR_LEDGER_MISSING",
                        f"the ledger cannot be opened: {exc}",
                        "run 'plangate setup' or 'plangate hooks install' (a new repository), "
                        "or restore the ledger", True)]
    if not result.accepted:
        first = result.reasons[0].message if result.reasons else result.verdict
        return [Finding("ledger", "DOCTOR_LEDGER_BROKEN", f"the ledger does not verify: {first}",
                        "run 'plangate ledger verify'; a human repairs or restores it", True)]
    return _witness(root)


def _witness(root: Path) -> list[Finding]:
    """A SQLite ledger without this clone's witness: its deletion would go unnoticed."""
    from plangate.ledger import LedgerError, resolve_location
    from plangate.ledger.witness import read_witness

    try:
        witness = read_witness(resolve_location(root, dict(os.environ)))
    except LedgerError:
        return []
    if witness is None or witness.state == "present":
        return []
    why = "is missing" if witness.state == "absent" else f"cannot be used ({witness.detail})"
    return [Finding("ledger", "DOCTOR_LEDGER_WITNESS",
                    f"this clone's ledger witness {witness.path} {why}: a deletion of the "
                    "ledger would not be told from a new clone",
                    "run 'plangate ledger init' (it records the witness of an existing ledger); "
                    "remove a witness that cannot be used first", False)]


def _ignored(root: Path, rel: str) -> bool:
    from plangate.git import Git

    proc = Git(root).run(["check-ignore", "-q", "--", rel], ok_codes=(0, 1, 128))
    return proc.returncode == 0


def machine_paths(root: Path) -> list[Finding]:
    """Committed hook files whose PlanGate commands name an absolute path."""
    from plangate.hooks.install import COMMITTED_HOSTS, CONFIG_FILES, MARKER, installed_commands

    out: list[Finding] = []
    seen: set[str] = set()
    for host, event, command in installed_commands(root):
        if host not in COMMITTED_HOSTS or MARKER not in command:
            continue
        rel = CONFIG_FILES[host].as_posix()
        if rel in seen or _ignored(root, rel):
            continue
        match = MACHINE_PATH.search(command.split(f"# {MARKER}")[0])
        if match is None:
            continue
        seen.add(rel)
        out.append(Finding(
            "machine_paths", "DOCTOR_MACHINE_PATH",
            f"{rel} ({event}) names a path of this machine: {match.group(0).strip()}",
            f"reinstall with 'plangate hooks install --{host}' (committed entries then find "
            "PlanGate on PATH); a personal interpreter goes into .claude/settings.local.json "
            "with --local-python", True))
    return out


def claude_policy(
    root: Path, home: str, managed_settings: tuple[str, ...] = CLAUDE_MANAGED_SETTINGS
) -> list[Finding]:
    """Claude Code settings that keep project hooks from running."""
    from plangate.hooks.install import CONFIG_FILES

    installed = (root / CONFIG_FILES["claude"]).exists()
    if not installed:
        return []
    out: list[Finding] = []
    for managed in managed_settings:
        settings = _json_file(Path(managed))
        if settings is None:
            continue
        for key in ("allowManagedHooksOnly", "disableAllHooks"):
            if settings.get(key) is True:
                out.append(Finding(
                    "claude_policy", "DOCTOR_CLAUDE_HOOKS_DISABLED",
                    f"Claude Code's managed settings {managed} set {key}: the project's hooks "
                    "never run", "ask the administrator to allow the project's hooks (or "
                    "distribute PlanGate's hooks as managed hooks)", True))
    for path in (Path(home, ".claude", "settings.json"), root / ".claude" / "settings.json",
                 root / ".claude" / "settings.local.json"):
        settings = _json_file(path)
        if settings is not None and settings.get("disableAllHooks") is True:
            out.append(Finding(
                "claude_policy", "DOCTOR_CLAUDE_HOOKS_DISABLED",
                f"{path} sets disableAllHooks: Claude Code runs no hook",
                "remove disableAllHooks from that file", True))
    return out


def _codex_config(env: Mapping[str, str], home: str) -> tuple[Path, dict[str, Any] | None]:
    import tomllib

    from plangate.fsutil import read_regular_file

    base = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    path = Path(base, "config.toml")
    read = read_regular_file(path, 4 * 1024 * 1024)
    if not read.ok or read.data is None:
        return path, None
    try:
        return path, tomllib.loads(read.data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return path, None


def codex(root: Path, home: str, env: Mapping[str, str]) -> list[Finding]:
    """Codex's hooks switch and its trust record for each PlanGate hook."""
    from plangate.hooks.install import CONFIG_FILES, MARKER

    hooks_file = root / CONFIG_FILES["codex"]
    config = _json_file(hooks_file)
    if config is None:
        return []
    path, codex_config = _codex_config(env, home)
    features = codex_config.get("features", {}) if codex_config else {}
    out: list[Finding] = []
    if isinstance(features, dict):
        for key in ("hooks", "codex_hooks"):
            if features.get(key) is False:
                out.append(Finding("codex", "DOCTOR_CODEX_HOOKS_OFF",
                                   f"{path} sets [features] {key} = false: Codex runs no hook",
                                   f"remove '{key} = false' (hooks are on by default)", True))
    from plangate.hooks.codex_trust import check_trust, codex_program
    from plangate.hooks.codex_trust import installed_commands as plangate_commands

    if not plangate_commands(root):
        return out  # no PlanGate hook for Codex: nothing of ours to trust
    if codex_program(env) is not None:
        # Codex itself says whether each hook is trusted (key, current hash): a record
        # for another command or another path does not count.
        check = check_trust(root, {"HOME": home, **env})
        if check.code:
            out.append(Finding("codex", check.code, f"{check.message} (codex app-server, "
                               f"{check.seconds:.2f} s)", check.fix, True))
        return out
    state = (codex_config or {}).get("hooks", {})
    state = state.get("state", {}) if isinstance(state, dict) else {}
    real = os.path.realpath(hooks_file)
    untrusted: list[str] = []
    hooks = config.get("hooks", {})
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            entries = group.get("hooks", []) if isinstance(group, dict) else []
            for h, entry in enumerate(entries if isinstance(entries, list) else []):
                if not (isinstance(entry, dict) and MARKER in str(entry.get("command", ""))):
                    continue
                name = _CODEX_EVENTS.get(str(event), str(event))
                keys = (f"{real}:{name}:{g}:{h}", f"{hooks_file}:{name}:{g}:{h}")
                recorded = [state.get(k) for k in keys if isinstance(state, dict)]
                if not any(isinstance(r, dict) and r.get("trusted_hash") for r in recorded):
                    untrusted.append(f"{event}[{g}][{h}]")
    if untrusted:
        out.append(Finding(
            "codex", "DOCTOR_CODEX_UNTRUSTED",
            f"Codex has no trust record for PlanGate's hooks ({', '.join(untrusted)}) in "
            f"{path}: an untrusted or modified hook never runs",
            "install Codex, trust the project in it, then run 'plangate hooks trust "
            "--codex' (again after any reinstall that changes the command)", False))
    return out


def events(root: Path) -> list[Finding]:
    """Each installed host file holds PlanGate's entry for every event of its host."""
    from plangate.hooks.hosts.table import HOSTS
    from plangate.hooks.install import CONFIG_FILES, LOCAL, MARKER, installed_commands

    present: dict[str, set[str]] = {}
    for listed, event, command in installed_commands(root):
        if listed in CONFIG_FILES and MARKER in command:
            present.setdefault(listed, set()).add(event)
    out: list[Finding] = []
    for listed, seen in present.items():
        name = listed.removesuffix(LOCAL)
        missing = [event for event, _m in HOSTS[name].events if event not in seen]
        if missing:
            flag = f"--{name}" + (" --local-python" if listed.endswith(LOCAL) else "")
            out.append(Finding(
                "events", "DOCTOR_HOOK_EVENT_MISSING",
                f"{CONFIG_FILES[listed].as_posix()} has no PlanGate entry for "
                f"{', '.join(missing)}: those events go unchecked",
                f"reinstall with 'plangate hooks install {flag}'", True))
    return out


def timeouts(root: Path) -> list[Finding]:
    """Whether a hook that times out blocks, per installed host."""
    from plangate.hooks.install import CONFIG_FILES, MARKER

    out: list[Finding] = []
    cursor = _json_file(root / CONFIG_FILES["cursor"])
    if cursor is not None:
        hooks = cursor.get("hooks", {})
        loose = [event for event, entries in (hooks.items() if isinstance(hooks, dict) else [])
                 for entry in (entries if isinstance(entries, list) else [])
                 if isinstance(entry, dict) and MARKER in str(entry.get("command", ""))
                 and entry.get("failClosed") is not True]
        if loose:
            out.append(Finding("timeouts", "DOCTOR_TIMEOUT_FAILS_OPEN",
                               f"Cursor entries without failClosed: {', '.join(loose)}: a hook "
                               "that fails or times out lets the action run",
                               "reinstall with 'plangate hooks install --cursor'", True))
    claude = _json_file(root / CONFIG_FILES["claude"])
    if claude is not None:
        hooks = claude.get("hooks", {})
        entries = [entry for groups in (hooks.values() if isinstance(hooks, dict) else [])
                   for group in (groups if isinstance(groups, list) else [])
                   for entry in (group.get("hooks", []) if isinstance(group, dict) else [])
                   if isinstance(entry, dict) and MARKER in str(entry.get("command", ""))]
        if entries and not all(e.get("onFailure") == "block" for e in entries):
            out.append(Finding(
                "timeouts", "DOCTOR_TIMEOUT_FAILS_OPEN",
                "Claude Code lets a tool run when its hook times out or crashes outside "
                "PlanGate, unless the entry says onFailure: block (Claude Code 2.1.295 and "
                "later); the git hooks and CI still check the change",
                "on Claude Code 2.1.295 or later, add \"onFailure\": \"block\" to PlanGate's "
                "entries in .claude/settings.json", False))
    if (root / CONFIG_FILES["codex"]).exists():
        out.append(Finding(
            "timeouts", "DOCTOR_TIMEOUT_FAILS_OPEN",
            "Codex has no setting that blocks a tool call whose hook times out; the git hooks "
            "and CI still check the change", "keep the hook fast (doctor shows its answers)",
            False))
    return out


def setting_findings(
    root: Path, *, home: str | None = None, managed_settings: tuple[str, ...] | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every finding, in the order of the module docstring."""
    environ = dict(os.environ) if env is None else env
    home_dir = home or environ.get("HOME") or str(Path("~").expanduser())
    managed = CLAUDE_MANAGED_SETTINGS if managed_settings is None else managed_settings
    return [
        *ledger(root),
        *machine_paths(root),
        *claude_policy(root, home_dir, managed),
        *codex(root, home_dir, environ),
        *events(root),
        *timeouts(root),
    ]
