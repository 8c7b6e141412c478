"""Codex hook trust: record it for this clone, and check it.

Codex runs a project hook only when it is *trusted*: its configuration
(``$CODEX_HOME/config.toml``, ``~/.codex/config.toml`` by default) holds
``[hooks.state."<key>"] trusted_hash = "<hash>"`` with the hook's current hash. The
key holds the absolute path of ``.codex/hooks.json`` (``<path>:<event>:<group>:<index>``),
so every clone on every machine needs its own record, and an untrusted hook is
skipped without a word. The hash covers the command, so a changed command is
untrusted again.

PlanGate asks Codex itself: ``codex app-server`` (JSON-RPC over stdio: ``initialize``,
``initialized``, then ``hooks/list {cwds: [<repo>]}``) lists each hook with its
``key``, ``command``, ``currentHash`` and ``trustStatus``, which is what Codex's
``/hooks`` screen shows and writes. Rules:

- only PlanGate's own hooks are trusted: listed from this clone's
  ``.codex/hooks.json``, not managed, with exactly the command PlanGate installs
  (:func:`plangate.hooks.install.portable_command`); a PlanGate-marked hook with
  another command, or with a key for another path, is refused;
- the configuration is edited as text: the user's other content stays byte for byte,
  the result must parse as TOML with exactly the old values plus the new hashes, and
  it replaces the file atomically; a file that is not TOML, a link, or a hook state
  written in a form this edit cannot change is refused and left alone;
- a failing, hanging or garbled app-server, a missing ``codex`` or a project Codex
  does not load (not trusted in Codex: it then lists no project hook) is a refusal
  with a reason code and the command to run later, never a success.

:func:`select_hooks`, :func:`parse_hooks_list` and :func:`trusted_toml` are pure;
:func:`list_hooks`, :func:`record_trust` and :func:`check_trust` do the IO.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from plangate.errors import InputRejected
from plangate.records import NamedTuple

HOOKS_FILE = ".codex/hooks.json"
MARKER = "plangate-managed"
APP_SERVER_TIMEOUT = 30.0
"""Seconds the app-server may take to answer (it answered in about 0.2 s when measured)."""
MAX_CONFIG_BYTES = 4 * 1024 * 1024
TRUST_COMMAND = "plangate hooks trust --codex"
"""What a person runs once Codex is installed and the project trusted in it."""
HASH = re.compile(r"sha256:[0-9a-f]{64}")


class ListedHook(NamedTuple):
    """One hook as ``codex app-server``'s ``hooks/list`` reports it."""

    key: str
    command: str
    source_path: str
    current_hash: str
    trust_status: str
    managed: bool
    enabled: bool = True


class TrustResult(NamedTuple):
    """What :func:`record_trust` did: keys newly trusted, keys already trusted, the
    configuration file, and the seconds each app-server call took."""

    trusted: tuple[str, ...]
    already: tuple[str, ...]
    config: str
    timings: tuple[float, ...]


def _refused(code: str, message: str, hint: str = "") -> InputRejected:
    return InputRejected(code, message, hint or f"fix that, then run '{TRUST_COMMAND}'")


# -- pure ------------------------------------------------------------------------------


def parse_hooks_list(answer: object) -> list[ListedHook]:
    """The hooks of a ``hooks/list`` JSON-RPC answer; anything else is refused.

    Raises ``CODEX_TRUST_APP_SERVER_GARBAGE`` for an answer of another shape or with
    an error, so a changed protocol is never read as "no hooks".
    """
    def garbage(why: str) -> InputRejected:
        return _refused(
            "CODEX_TRUST_APP_SERVER_GARBAGE",
            f"codex app-server answered hooks/list with {why}",
            "check that the installed Codex is a version PlanGate supports "
            "(src/plangate/resources/pinned-hosts.toml)",
        )

    if not isinstance(answer, dict):
        raise garbage("something that is not a JSON object")
    if "error" in answer:
        raise garbage(f"an error: {str(answer['error'])[:200]}")
    result = answer.get("result")
    data = result.get("data") if isinstance(result, dict) else None
    if not isinstance(data, list):
        raise garbage("no result.data list")
    out: list[ListedHook] = []
    for entry in data:
        hooks = entry.get("hooks") if isinstance(entry, dict) else None
        if not isinstance(hooks, list):
            raise garbage("an entry without a hooks list")
        for hook in hooks:
            if not isinstance(hook, dict):
                raise garbage("a hook that is not an object")
            fields = [hook.get(k) for k in ("key", "currentHash", "trustStatus")]
            if not all(isinstance(v, str) for v in fields):
                raise garbage("a hook without key, currentHash or trustStatus")
            command = hook.get("command")
            source = hook.get("sourcePath")
            out.append(ListedHook(
                str(hook["key"]),
                command if isinstance(command, str) else "",
                source if isinstance(source, str) else "",
                str(hook["currentHash"]),
                str(hook["trustStatus"]),
                hook.get("isManaged") is True,
                hook.get("enabled") is not False,
            ))
    return out


def select_hooks(
    listed: Sequence[ListedHook], roots: Sequence[str], commands: Sequence[str]
) -> list[ListedHook]:
    """PlanGate's hooks of this clone among ``listed`` (``roots``: the clone's path as
    given and resolved; ``commands``: what its ``.codex/hooks.json`` holds of PlanGate's);
    every one must be listed.

    Refusals: a PlanGate-marked hook whose key or source names another path
    (``CODEX_TRUST_KEY_FOREIGN``), whose command is not what PlanGate installs
    (``CODEX_TRUST_COMMAND_CHANGED``) or whose hash is malformed
    (``CODEX_TRUST_APP_SERVER_GARBAGE``); no PlanGate hook in the file
    (``CODEX_TRUST_NOTHING_INSTALLED``); fewer of PlanGate's hooks listed than the file
    holds (``CODEX_TRUST_HOOKS_NOT_LISTED``: Codex does not load the project).
    """
    from plangate.hooks.install import portable_command

    sources = [f"{root.rstrip('/')}/{HOOKS_FILE}" for root in roots]
    source = sources[0]
    expected = portable_command("codex")
    if not commands:
        raise _refused(
            "CODEX_TRUST_NOTHING_INSTALLED",
            f"{HOOKS_FILE} holds no PlanGate hook: there is nothing to trust",
            "run 'plangate hooks install --codex'",
        )
    chosen: list[ListedHook] = []
    for hook in listed:
        if MARKER not in hook.command or hook.managed:
            continue  # another tool's hook (or an administrator's): never ours to trust
        key_ours = any(hook.key.startswith(s + ":") for s in sources)
        source_ours = hook.source_path in sources if hook.source_path else key_ours
        if not key_ours and not source_ours:
            continue  # a PlanGate hook of another layer (a parent directory): not this clone's
        if key_ours != source_ours:
            raise _refused(
                "CODEX_TRUST_KEY_FOREIGN",
                f"codex app-server lists a PlanGate hook of {hook.source_path or source} "
                f"under the key {hook.key!r}, which does not name {source}",
                "check the clone's path (a link in it?) and run the trust step from the "
                "clone itself",
            )
        if hook.command != expected:
            raise _refused(
                "CODEX_TRUST_COMMAND_CHANGED",
                f"the PlanGate hook {hook.key} runs a command other than the one PlanGate "
                "installs: it is not trusted",
                "run 'plangate hooks install --codex' to write PlanGate's command back",
            )
        if not hook.enabled:
            raise _refused(
                "CODEX_TRUST_HOOK_DISABLED",
                f"Codex reports the PlanGate hook {hook.key} switched off: it never runs, "
                "trusted or not",
                "switch it back on in Codex's /hooks screen (or remove its 'enabled = false' "
                f"from Codex's config.toml), then run '{TRUST_COMMAND}'",
            )
        if not HASH.fullmatch(hook.current_hash):
            raise _refused(
                "CODEX_TRUST_APP_SERVER_GARBAGE",
                f"codex app-server reports the hash {hook.current_hash[:80]!r} for {hook.key}",
                "check the installed Codex version",
            )
        chosen.append(hook)
    wanted = [c for c in commands if c == expected]
    if len(chosen) < len(wanted) or not chosen:
        raise _refused(
            "CODEX_TRUST_HOOKS_NOT_LISTED",
            f"Codex lists {len(chosen)} of the {len(wanted)} PlanGate hooks in {source}: "
            "it does not load this project's .codex/ (the project is not trusted in Codex, "
            "or its hooks are switched off)",
            f"open 'codex' in the repository and trust the project, then run "
            f"'{TRUST_COMMAND}'",
        )
    return chosen


def _toml_key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)  # a JSON string is a TOML basic string


def _state(parsed: Mapping[str, Any]) -> dict[str, Any]:
    hooks = parsed.get("hooks", {})
    state = hooks.get("state", {}) if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        raise _refused(
            "CODEX_TRUST_CONFIG_INVALID",
            "Codex's config.toml has a 'hooks' or 'hooks.state' that is not a table",
            "fix config.toml by hand (Codex's /hooks screen writes [hooks.state.\"...\"] "
            "tables)",
        )
    return state


def _without(parsed: dict[str, Any], keys: Sequence[str], before: Mapping[str, Any]) -> Any:
    """``parsed`` without the ``trusted_hash`` of ``keys`` (and the tables only they made)."""
    import copy

    out = copy.deepcopy(parsed)
    state = out.get("hooks", {}).get("state", {})
    old_state = _state(before)
    for key in keys:
        table = state.get(key)
        if isinstance(table, dict):
            table.pop("trusted_hash", None)
            old = old_state.get(key)
            if not table and key not in old_state:
                del state[key]
            elif isinstance(old, dict) and "trusted_hash" in old:
                table["trusted_hash"] = old["trusted_hash"]
    if "hooks" in out and not state and "state" not in before.get("hooks", {}):
        del out["hooks"]["state"]
        if not out["hooks"] and "hooks" not in before:
            del out["hooks"]
    return out


def trusted_toml(text: str, hashes: Mapping[str, str]) -> str:
    """``text`` with ``[hooks.state."<key>"] trusted_hash`` set for every key of ``hashes``.

    A key already trusted with that hash is left as it is; a table of the exact form
    Codex writes gets its ``trusted_hash`` line replaced; a new key gets its table
    appended. The result must parse with exactly the old values plus these hashes
    (``CODEX_TRUST_CONFIG_UNEDITABLE`` otherwise); ``text`` that is not TOML is
    ``CODEX_TRUST_CONFIG_INVALID``.
    """
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _refused(
            "CODEX_TRUST_CONFIG_INVALID",
            f"Codex's config.toml is not TOML ({exc}); it was left as it is",
            f"fix config.toml (Codex cannot read it either), then run '{TRUST_COMMAND}'",
        ) from None
    state = _state(parsed)
    lines = text.splitlines(keepends=True)
    appended = ""
    for key, value in hashes.items():
        table = state.get(key)
        if isinstance(table, dict) and table.get("trusted_hash") == value:
            continue
        header = f"[hooks.state.{_toml_key(key)}]"
        line = f"trusted_hash = {_toml_key(value)}\n"
        if table is None:
            appended += f"\n{header}\n{line}"
            continue
        starts = [i for i, text_line in enumerate(lines) if text_line.strip() == header]
        if len(starts) != 1:
            raise _uneditable(key)
        end = next((i for i in range(starts[0] + 1, len(lines))
                    if lines[i].lstrip().startswith("[")), len(lines))
        found = [i for i in range(starts[0] + 1, end)
                 if re.match(r"\s*trusted_hash\s*=", lines[i])]
        if len(found) > 1:
            raise _uneditable(key)
        if found:
            lines[found[0]] = line
        else:
            lines.insert(starts[0] + 1, line)
    new = "".join(lines)
    if appended:
        new += ("" if not new or new.endswith("\n") else "\n") + appended
    try:
        written = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        raise _uneditable(next(iter(hashes))) from None
    ok = all(_state(written).get(k, {}).get("trusted_hash") == v for k, v in hashes.items())
    if not ok or _without(written, list(hashes), parsed) != parsed:
        raise _uneditable(next(iter(hashes)))
    return new


def _uneditable(key: str) -> InputRejected:
    return _refused(
        "CODEX_TRUST_CONFIG_UNEDITABLE",
        f"Codex's config.toml states the trust of {key} in a form PlanGate does not edit "
        "(an inline table, a dotted key or a duplicate); it was left as it is",
        f"trust the hooks in Codex's /hooks screen, or remove that entry and run "
        f"'{TRUST_COMMAND}'",
    )


# -- IO --------------------------------------------------------------------------------


def config_path(env: Mapping[str, str]) -> Path:
    """Codex's user configuration: ``$CODEX_HOME/config.toml``, else ``~/.codex/config.toml``."""
    home = env.get("CODEX_HOME")
    if home:
        return Path(home) / "config.toml"
    return Path(env.get("HOME") or Path("~").expanduser()) / ".codex" / "config.toml"


def codex_program(env: Mapping[str, str]) -> str | None:
    """The ``codex`` on ``PATH`` (``None`` when Codex is not installed)."""
    return shutil.which("codex", path=env.get("PATH", os.defpath))


def installed_commands(root: Path) -> list[str]:
    """The commands of PlanGate's entries in the clone's ``.codex/hooks.json``."""
    from plangate.hooks.install import installed_commands as every

    return [cmd for host, _event, cmd in every(root) if host == "codex" and MARKER in cmd]


def list_hooks(
    codex: str, root: Path, env: Mapping[str, str], timeout: float = APP_SERVER_TIMEOUT
) -> tuple[list[ListedHook], float]:
    """``hooks/list`` for ``root`` through ``codex app-server``, and the seconds it took.

    Refusals: the program cannot start or ends first (``CODEX_TRUST_APP_SERVER_FAILED``),
    does not answer in ``timeout`` (``CODEX_TRUST_APP_SERVER_TIMEOUT``), answers
    something that is not the protocol (``CODEX_TRUST_APP_SERVER_GARBAGE``).
    """
    messages = [
        {"id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "plangate", "version": "1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(root)]}},
    ]
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            [codex, "app-server"], cwd=root, env=dict(env), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise _refused("CODEX_TRUST_APP_SERVER_FAILED",
                       f"'{codex} app-server' could not start: {exc.strerror}") from None
    request = "".join(json.dumps(m) + "\n" for m in messages).encode()
    try:
        # stdin stays open until the answer: the app-server ends at end of input.
        try:
            if proc.stdin is not None:
                proc.stdin.write(request)
                proc.stdin.flush()
        except OSError:
            pass  # it ended already: reading says how (no answer is a refusal)
        answer = _read_answer(proc, started + timeout)
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
    return parse_hooks_list(answer), time.monotonic() - started


def _read_answer(proc: subprocess.Popen[bytes], deadline: float) -> object:
    """The JSON-RPC message with id 2, reading whole lines until ``deadline``."""
    import selectors

    if proc.stdout is None:  # pragma: no cover - Popen was given PIPE
        raise _refused("CODEX_TRUST_APP_SERVER_FAILED", "codex app-server has no output")
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise _refused(
                    "CODEX_TRUST_APP_SERVER_TIMEOUT",
                    "codex app-server did not answer hooks/list in time",
                    f"run '{TRUST_COMMAND}' again; if it persists, trust the hooks in "
                    "Codex's /hooks screen",
                )
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                raise _refused(
                    "CODEX_TRUST_APP_SERVER_FAILED",
                    f"codex app-server ended (exit {proc.wait()}) without answering hooks/list",
                    f"run 'codex app-server' by hand to see why, then '{TRUST_COMMAND}'",
                )
            buffer += chunk
            if len(buffer) > MAX_CONFIG_BYTES:
                raise _refused(
                    "CODEX_TRUST_APP_SERVER_GARBAGE",
                    "codex app-server sent more than 4 MiB without answering hooks/list",
                    "check the installed Codex version",
                )
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                try:
                    message = json.loads(line)
                except ValueError:
                    return line.decode("utf-8", "replace")  # refused by parse_hooks_list
                if isinstance(message, dict) and message.get("id") == 2:
                    return message


def _read_config(path: Path) -> tuple[str, int]:
    """The configuration's text ('' when absent) and its mode; a link or non-UTF-8 is refused."""
    from plangate.fsutil import FileState, read_regular_file

    read = read_regular_file(path, MAX_CONFIG_BYTES)
    if read.state is FileState.MISSING:
        return "", 0o600
    if not read.ok or read.data is None:
        raise _refused("CODEX_TRUST_CONFIG_INVALID",
                       f"{path} cannot be used: it {read.detail}; it was left as it is")
    try:
        text = read.data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused("CODEX_TRUST_CONFIG_INVALID", f"{path} is not UTF-8") from None
    return text, path.stat().st_mode & 0o777


def _roots(root: Path) -> list[str]:
    """The clone's path as given and with links resolved (Codex names either in its keys)."""
    return list(dict.fromkeys((str(root), os.path.realpath(root))))


def _codex_or_refuse(env: Mapping[str, str]) -> str:
    codex = codex_program(env)
    if codex is None:
        raise _refused(
            "CODEX_TRUST_CODEX_NOT_FOUND",
            "codex is not on PATH: PlanGate's Codex hooks were written but are not "
            "trusted, and Codex skips untrusted hooks without a word",
            f"install Codex, trust the project in it, then run '{TRUST_COMMAND}'",
        )
    return codex


def record_trust(root: Path, env: Mapping[str, str]) -> TrustResult:
    """Trust PlanGate's Codex hooks of this clone in Codex's configuration, then verify
    with a second ``hooks/list`` that Codex reports every one of them trusted."""
    from plangate.fsutil import atomic_write

    codex = _codex_or_refuse(env)
    commands = installed_commands(root)
    listed, first = list_hooks(codex, root, env)
    ours = select_hooks(listed, _roots(root), commands)
    path = config_path(env)
    text, mode = _read_config(path)
    hashes = {hook.key: hook.current_hash for hook in ours}
    already = tuple(h.key for h in ours if h.trust_status == "trusted")
    new = trusted_toml(text, hashes)
    if new != text:
        atomic_write(path, new.encode("utf-8"), mode=mode)
    again, second = list_hooks(codex, root, env)
    untrusted = [h.key for h in select_hooks(again, _roots(root), commands)
                 if h.trust_status != "trusted"]
    if untrusted:
        raise _refused(
            "CODEX_TRUST_NOT_EFFECTIVE",
            f"Codex still reports {untrusted[0]} as not trusted after {path} was written",
            "trust the hooks in Codex's /hooks screen (another configuration layer may "
            "override this file)",
        )
    trusted = tuple(k for k in hashes if k not in already)
    return TrustResult(trusted, already, str(path), (first, second))


class TrustCheck(NamedTuple):
    """:func:`check_trust`'s verdict: ``code`` empty when every PlanGate hook is trusted."""

    code: str
    message: str
    fix: str
    seconds: float


def check_trust(root: Path, env: Mapping[str, str]) -> TrustCheck:
    """Whether Codex reports every PlanGate hook of this clone trusted (for doctor)."""
    try:
        codex = _codex_or_refuse(env)
        listed, seconds = list_hooks(codex, root, env)
        ours = select_hooks(listed, _roots(root), installed_commands(root))
    except InputRejected as exc:
        return TrustCheck(exc.code, exc.message, exc.hint, 0.0)
    untrusted = [h for h in ours if h.trust_status != "trusted"]
    if untrusted:
        return TrustCheck(
            "CODEX_HOOKS_UNTRUSTED",
            f"Codex reports {len(untrusted)} of PlanGate's {len(ours)} hooks "
            f"{untrusted[0].trust_status} (e.g. {untrusted[0].key}): Codex skips them "
            "without a word",
            f"run '{TRUST_COMMAND}'",
            seconds,
        )
    return TrustCheck("", f"Codex reports PlanGate's {len(ours)} hooks trusted", "", seconds)
