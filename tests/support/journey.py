"""Journeys with the real hosts: Claude Code and Codex run against a scripted model.

A :class:`Journey` is one person's machine for one test: a fresh home, a real git
repository where PlanGate was switched on at a terminal (``plangate setup`` through a
pseudo-terminal), PlanGate as installed (the virtual environment's ``bin`` on
``PATH``, so the hooks find ``plangate-hook``), and the pinned hosts from
``scripts/install-hosts.sh``. :meth:`Journey.claude` and :meth:`Journey.codex` run
one headless session each against a :class:`~support.model_server.ModelServer`
and return a :class:`Session`: the host's JSON event stream and every request the
model received.

The pinned versions live in ``src/plangate/resources/pinned-hosts.toml``; docs/journeys.md
says how the tier runs and how to bump a pin.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.model_server import (
    ModelServer,
    Recorded,
    Step,
    ToolCall,
    ToolResult,
    Turn,
    say,
    tool_names,
    tool_results,
)
from support.taskkit import approve_task, make_task

ROOT = Path(__file__).resolve().parents[2]
PIN_FILE = ROOT / "src" / "plangate" / "resources" / "pinned-hosts.toml"
INSTALL_SCRIPT = "scripts/install-hosts.sh"
HOSTS_BIN_VARIABLE = "PLANGATE_HOSTS_BIN"
"""Set by scripts/test.sh to the bin directory install-hosts.sh printed."""

CODEX_FALLBACK_MODEL = "journey-scripted-model"
"""A model name Codex does not know: it offers its fallback tools (``exec_command``, no
``apply_patch`` tool; a patch arrives as an ``apply_patch`` heredoc through the shell)."""
CODEX_KNOWN_MODEL = "gpt-5.5"
"""A model name the pinned Codex knows: it offers ``apply_patch`` as a freeform tool."""

SESSION_TIMEOUT = 300
"""Seconds one host session may take before the test fails (a hang, never a timing check)."""

TASK = "TASK-0001"
IN_SCOPE = "src/app.py"
"""A file the approved task's plan names (support.taskkit's plan); it exists."""
IN_SCOPE_NEW = "tests/test_app.py"
"""A file the approved task's plan names that does not exist yet."""

HOST_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "ANTHROPIC_API_KEY": "sk-ant-journey-fake-key",
    "JOURNEY_OPENAI_KEY": "sk-journey-fake-key",
}
"""Fake keys and no traffic beyond the model: the hosts talk to the loopback model only."""


def read_pins(path: Path = PIN_FILE) -> dict[str, dict[str, str]]:
    """The pinned hosts: ``{"claude": {"package": ..., "version": ...}, "codex": ...}``."""
    with path.open("rb") as handle:
        pins = tomllib.load(handle)
    return {host: {k: str(v) for k, v in table.items()} for host, table in pins.items()}


def cache_entry(pins: dict[str, dict[str, str]], env: dict[str, str]) -> Path:
    """The cache directory install-hosts.sh installs the pinned versions into."""
    home = env.get("HOME", "~")
    cache = env.get("PLANGATE_HOSTS_CACHE") or str(Path(home) / ".cache/plangate/hosts")
    key = f"claude-{pins['claude']['version']}_codex-{pins['codex']['version']}"
    return Path(cache) / key


def find_hosts_bin(env: dict[str, str]) -> tuple[Path | None, str]:
    """The bin directory of the pinned hosts and, when it is missing, why."""
    pins = read_pins()
    named = env.get(HOSTS_BIN_VARIABLE)
    candidate = Path(named) if named else cache_entry(pins, env) / "bin"
    missing = [n for n in ("claude", "codex", "codex-linux-sandbox") if not (candidate / n).exists()]
    if missing:
        return None, (
            f"the pinned hosts (Claude Code {pins['claude']['version']}, Codex "
            f"{pins['codex']['version']}) are not installed at {candidate} (missing: "
            f"{', '.join(missing)}): run {INSTALL_SCRIPT} and export {HOSTS_BIN_VARIABLE} "
            f"to the directory it prints (scripts/test.sh does both), or deselect the "
            f"tier with -m 'not journeys'"
        )
    return candidate, ""


@dataclass
class Session:
    """One headless host session: its exit, its JSON events, what the model was told."""

    host: str
    returncode: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]]
    requests: list[Recorded]

    @property
    def turns(self) -> list[Recorded]:
        """The model requests that took a turn of the script."""
        return [r for r in self.requests if r.turn is not None]

    def tools_offered(self) -> list[str]:
        """The tools the host offered the model in its first turn (sorted)."""
        return sorted(tool_names(self.turns[0].body)) if self.turns else []

    def tool_results(self) -> list[ToolResult]:
        """Every tool result the model received (from the last turn: the whole conversation)."""
        return list(tool_results(self.turns[-1].body)) if self.turns else []

    def result_text(self, index: int) -> str:
        """The text of tool result ``index`` (0 = the first tool call's result)."""
        results = self.tool_results()
        assert len(results) > index, f"only {len(results)} tool results:\n{self.describe()}"
        return results[index].text

    def stop_feedback(self) -> list[str]:
        """What a Stop hook sent back to the model to keep it going (Claude Code's
        ``Stop hook feedback`` messages; Codex's continuation prompts)."""
        feedback = []
        for event in self.events:
            message = event.get("message")
            if event.get("type") != "user" or not isinstance(message, dict):
                continue
            for part in message.get("content") or []:
                text = part.get("text", "") if isinstance(part, dict) else ""
                if text.startswith("Stop hook feedback"):
                    feedback.append(text)
        for item in self.turns[-1].body.get("input") or [] if self.turns else []:
            if isinstance(item, dict) and item.get("role") == "user":
                text = json.dumps(item.get("content"))
                if "PlanGate denied" in text:
                    feedback.append(text)
        return feedback

    def describe(self) -> str:
        """Everything a failing assertion should show."""
        return (
            f"{self.host} exit {self.returncode}\n--- events ---\n{self.stdout[-6000:]}\n"
            f"--- stderr ---\n{self.stderr[-3000:]}\n--- tool results ---\n"
            + "\n".join(repr(r) for r in (self.tool_results() if self.turns else []))
        )


class Journey:
    """One machine, one repository, the real hosts (see the module docstring)."""

    def __init__(self, root: Path, hosts_bin: Path) -> None:
        self.root = root
        self.hosts_bin = hosts_bin
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.repo = root / "repo"
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)
        # PlanGate as installed: the virtual environment's bin holds plangate and plangate-hook.
        plangate_bin = Path(sys.executable).parent
        self.env: dict[str, str] = {
            "PATH": f"{hosts_bin}:{plangate_bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "GIT_AUTHOR_NAME": "Journey Dev",
            "GIT_AUTHOR_EMAIL": "dev@example.invalid",
            "GIT_COMMITTER_NAME": "Journey Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
            **HOST_ENV,
        }

    # -- the person at the terminal -----------------------------------------------------

    def sh(
        self, script: str, *, typed: str = "", ok: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run ``script`` with bash in the repository, at a real pseudo-terminal."""
        master, slave = pty.openpty()
        try:
            if typed:
                os.write(master, typed.encode())
            proc = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", script],
                cwd=self.repo if self.repo.exists() else self.root,
                stdin=slave,
                capture_output=True,
                text=True,
                env=self.env,
                timeout=SESSION_TIMEOUT,
                check=False,
            )
        finally:
            os.close(slave)
            os.close(master)
        if ok:
            assert proc.returncode == 0, f"{script}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def plangate(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the installed ``plangate`` CLI in the repository."""
        proc = subprocess.run(
            ["plangate", *args],
            cwd=self.repo,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=SESSION_TIMEOUT,
            check=False,
        )
        if ok:
            assert proc.returncode == 0, f"plangate {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def create_repo(self) -> None:
        """A git repository with a README and ``src/app.py`` on ``main``."""
        self.repo.mkdir()
        self.sh(
            "git init -q -b main && git config commit.gpgsign false && "
            "git config user.name 'Journey Dev' && git config user.email dev@example.invalid && "
            "echo '# project' > README.md && mkdir -p src && "
            "printf 'def greet():\\n    return \"hi\"\\n' > src/app.py && "
            "git add -A && git commit -q -m 'first commit'"
        )

    def switch_on(self, hosts: Sequence[str] = ("claude", "codex")) -> None:
        """``plangate setup`` at the terminal (typing SETUP), then the adoption commit."""
        flags = " ".join(f"--{h}" for h in hosts)
        if "codex" in hosts:
            # A Codex user has trusted the project in Codex (its .codex/ loads only
            # then); setup records the hooks' trust through Codex's app-server.
            self.write_codex_config("http://127.0.0.1:9")
        self.sh(f"plangate setup {flags}", typed="SETUP\n")
        self.sh("git add -A && git commit -q --no-verify -m 'Adopt PlanGate'")

    def approve(self, task: str = TASK) -> None:
        """Plan ``task`` (support.taskkit's plan: ``src/app.py``, ``tests/test_app.py``),
        commit it, approve it at HEAD through the real producer and commit the approval."""
        make_task(self.repo, task)
        approve_task(self.repo, task)
        self.sh(f"git add docs/working/{task}/approvals && git commit -q -m 'Approve {task}'")

    def start(self, task: str = TASK, *args: str) -> None:
        """``plangate task start``: the hosts' hooks now judge against ``task``."""
        self.plangate("task", "start", task, *args)

    # -- the hosts ----------------------------------------------------------------------

    def claude(
        self,
        script: Sequence[Step],
        prompt: str = "Work on the task.",
        *,
        allowed_tools: Sequence[str] = ("Bash",),
        extra_args: Sequence[str] = (),
    ) -> Session:
        """One headless Claude Code session (``claude -p``) against the scripted model."""
        with ModelServer(script) as model:
            args = [
                "claude",
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "acceptEdits",
            ]
            if allowed_tools:
                args += ["--allowedTools", ",".join(allowed_tools)]
            env = self.env | {"ANTHROPIC_BASE_URL": model.base_url}
            return self._run("claude", [*args, *extra_args], env, model)

    def codex(
        self,
        script: Sequence[Step],
        prompt: str = "Work on the task.",
        *,
        model: str = CODEX_FALLBACK_MODEL,
        trust_hooks: bool = True,
        extra_args: Sequence[str] = (),
    ) -> Session:
        """One headless Codex session (``codex exec --json``) against the scripted model,
        with the repository's hooks trusted first (:func:`trust_codex_hooks`) unless
        ``trust_hooks`` is false (a test of a trust step of PlanGate's own). ``model`` is
        the model name Codex is told (its tool set depends on it)."""
        with ModelServer(script) as server:
            self.write_codex_config(server.base_url, model)
            if trust_hooks:
                trust_codex_hooks(self.hosts_bin / "codex", self.repo, self.env | self._codex_env())
            args = ["codex", "exec", "--json", *extra_args, prompt]
            return self._run("codex", args, self.env | self._codex_env(), server)

    def _codex_env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.codex_home)}

    def write_codex_config(self, base_url: str, model: str = CODEX_FALLBACK_MODEL) -> None:
        """Codex's user configuration: the loopback model as its provider, the repository
        a trusted project (Codex loads a project's ``.codex/`` only then). Trust records
        already written are kept."""
        config = self.codex_home / "config.toml"
        kept = ""
        if config.exists():
            text = config.read_text()
            start = text.find("[hooks.state.")
            kept = text[start:] if start >= 0 else ""
        config.write_text(
            f'model = "{model}"\n'
            'model_provider = "journey"\n'
            "[model_providers.journey]\n"
            'name = "journey"\n'
            f'base_url = "{base_url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "JOURNEY_OPENAI_KEY"\n'
            f'[projects."{self.repo}"]\n'
            'trust_level = "trusted"\n' + kept
        )

    def _run(self, host: str, args: list[str], env: dict[str, str], model: ModelServer) -> Session:
        proc = subprocess.run(
            args,
            cwd=self.repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT,
            check=False,
        )
        events = []
        for line in proc.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return Session(host, proc.returncode, proc.stdout, proc.stderr, events, model.requests)


def trust_codex_hooks(codex: Path, repo: Path, env: dict[str, str]) -> None:
    """Trust the repository's Codex hooks as the ``/hooks`` screen does: ask
    ``codex app-server`` (``hooks/list``) for each hook's key and current hash and write
    ``[hooks.state."<key>"] trusted_hash = "<hash>"`` into ``$CODEX_HOME/config.toml``.

    Codex skips untrusted hooks without a word, so a journey that did not trust them
    would test nothing. PlanGate's own install step may take this over."""
    listed = _app_server_hooks(codex, repo, env)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    text = config.read_text() if config.exists() else ""
    for hook in listed:
        header = f'[hooks.state."{hook["key"]}"]'
        # A record for the same key may hold the hash of an earlier hook there (the
        # key names a position, not a command): the current hash replaces it.
        text = _without_table(text, header)
        text += f'\n{header}\ntrusted_hash = "{hook["currentHash"]}"\n'
    config.write_text(text)


def _without_table(text: str, header: str) -> str:
    """``text`` (TOML) without the table that starts at the line ``header``."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skipping = False
    for line in lines:
        if line.strip() == header:
            skipping = True
            continue
        if skipping and line.lstrip().startswith("["):
            skipping = False
        if not skipping:
            out.append(line)
    return "".join(out)


def _app_server_hooks(codex: Path, repo: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """The hooks ``codex app-server`` lists for ``repo`` (JSON-RPC over stdio)."""
    proc = subprocess.Popen(
        [str(codex), "app-server"],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    # A hung app-server must fail the test, never hang it.
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for message in (
            {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "journeys", "version": "1"}}},
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(repo)]}},
        ):
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            answer = json.loads(line)
            if answer.get("id") == 2:
                assert "result" in answer, answer
                return [h for entry in answer["result"]["data"] for h in entry["hooks"]]
        raise AssertionError("codex app-server ended without answering hooks/list")
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()


# -- vocabulary: what the pinned hosts offer and what their hooks are sent -------------------

PROBE_DENY = "journey probe: recorded, not run"
"""The stderr of the recording hook: it denies every call, so no probed tool runs."""


def offered_tools(journey: Journey, host: str) -> list[str]:
    """The tools ``host`` offers the model in the first request of a session (sorted;
    a namespace's tools as ``namespace.tool``)."""
    run = {"claude": journey.claude, "codex": journey.codex}[host]
    return run([say("done")]).tools_offered()


def codex_hook_names(
    journey: Journey, model: str = CODEX_FALLBACK_MODEL
) -> dict[str, str | None]:
    """For each function or freeform tool Codex offers ``model``, the ``tool_name`` its
    PreToolUse hook is sent (``None``: the call never reached the hook).

    The repository gets a recording hook that denies every call (nothing probed runs);
    the model calls each offered tool once with placeholder arguments built from the
    tool's schema (a freeform tool gets :data:`FREEFORM_PLACEHOLDER`)."""
    log = journey.root / "hook-calls.ndjson"
    codex_dir = journey.repo / ".codex"
    codex_dir.mkdir(exist_ok=True)
    record = f"cat >> {log}; echo >> {log}; echo '{PROBE_DENY}' >&2; exit 2"
    hooks = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": record}]}]}}
    (codex_dir / "hooks.json").write_text(json.dumps(hooks))
    first = journey.codex([say("done")], model=model)
    schemas = dict(_function_tools(first.turns[0].body))
    calls = [
        Turn((ToolCall(name, FREEFORM_PLACEHOLDER if schema is None else _placeholder_arguments(schema)),))
        for name, schema in schemas.items()
    ]
    session = journey.codex(calls, model=model)
    # call_id -> model tool name, from the conversation the model was sent last.
    called: dict[str, str] = {}
    for item in session.turns[-1].body.get("input") or []:
        if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call"):
            prefix = f"{item['namespace']}." if item.get("namespace") else ""
            called[str(item.get("call_id"))] = prefix + str(item.get("name"))
    seen: dict[str, str] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            if line.strip():
                payload = json.loads(line)
                seen[str(payload.get("tool_use_id"))] = str(payload.get("tool_name"))
    names: dict[str, str | None] = dict.fromkeys(schemas)
    for call_id, model_name in called.items():
        if call_id in seen:
            names[model_name] = seen[call_id]
    return names


def _function_tools(body: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    """``(name, parameters schema)`` of every function tool a Responses request offers;
    ``(name, None)`` for a freeform (``custom``) tool."""
    found: list[tuple[str, dict[str, Any] | None]] = []
    for tool in body.get("tools") or []:
        if tool.get("type") == "function":
            found.append((str(tool["name"]), tool.get("parameters") or {}))
        elif tool.get("type") == "custom":
            found.append((str(tool["name"]), None))
        elif tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                if inner.get("type") == "function":
                    found.append((f"{tool['name']}.{inner['name']}", inner.get("parameters") or {}))
    return found


FREEFORM_PLACEHOLDER = "*** Begin Patch\n*** Add File: probe.txt\n+probe\n*** End Patch\n"
"""The text a probe sends a freeform tool: a patch (Codex's one freeform tool is
``apply_patch``, which refuses an empty text before any hook sees it)."""

_PLACEHOLDERS: dict[str, Any] = {
    "string": "x",
    "number": 1,
    "integer": 1,
    "boolean": False,
    "array": [],
    "object": {},
}


def _placeholder_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments with a placeholder for each required property of a JSON schema."""
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        kind = (properties.get(name) or {}).get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        arguments[name] = _PLACEHOLDERS.get(str(kind), "x")
    return arguments
