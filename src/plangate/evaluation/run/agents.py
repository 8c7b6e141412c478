"""Built-in trial runners that run a real agent, and the built-in grader that runs a
fixture's own checks (pure: tables, plan sections, documents; docs/evaluation-run.md).

A plan's ``runner`` is one of the :data:`RUNNER_KINDS`: ``command`` (a pinned
program of the baseline, ``plangate-trial/2``) or an agent host (``claude``:
Claude Code as ``claude -p``; ``codex``: Codex CLI as ``codex exec``). A plan's
``grader`` is ``command`` or ``fixture-checks``. Each agent host is one row of
:data:`AGENT_HOSTS`: its program, the files of the side's harness it reads from
the repository, the credential names it may be granted, and how its command line
and configuration are built. Callers ask the row; none compares host names.

An agent trial's fixture is an **agent task** (``plangate-agent-task/1``, JSON):
the prompt, the files of the repository the agent works on, and the checks that
decide whether the work meets the bar::

    {"schema": "plangate-agent-task/1",
     "prompt": "Add a function add(a, b) to calc.py that returns the sum.",
     "files": {"calc.py": "", "tests/test_calc.py": "..."},
     "checks": {"files": {"check_types.py": "..."},
                "commands": [["python3", "check_types.py"]]}}

The check files are never shown to the agent: the grader writes them over a copy
of the agent's work and runs the commands there. All of them exiting 0 means the
work meets the bar; what that means for the judgement depends on the fixture's
role (:func:`judgement_for`).

The IO (the box, the egress proxy, the host, the checks) is
:mod:`plangate.evaluation.run.trials` (the one module that runs trial processes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from plangate.canonical import StrictJSONError, sha256_digest, strict_loads_object
from plangate.paths import glob_match
from plangate.records import NamedTuple

TASK_SCHEMA = "plangate-agent-task/1"
"""The schema of an agent task fixture."""

COMMAND_KIND = "command"
"""The runner or grader kind of a pinned program of the baseline."""

CHECKS_KIND = "fixture-checks"
"""The built-in grader: the fixture's own checks on the agent's work."""

WORKSPACE_DIR = "workspace"
"""The agent's copy of the fixture repository, inside the trial's output directory."""

TRANSCRIPT_FILE = "transcript.jsonl"
"""What the host printed (its JSON events), kept beside the result for a human."""

MAX_TASK_FILES = 2000
MAX_CHECK_COMMANDS = 16
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}")
_SAFE_REL = re.compile(r"[A-Za-z0-9_.@+-][A-Za-z0-9_.@+/-]{0,299}")

# Roles whose input the harness must stop: work that meets the bar means the
# incident did not happen ("stopped"); for every other role it is let through.
_STOP_ROLES = frozenset({"known_bad", "sealed_negative", "known_mutant"})


class AgentRunRejected(ValueError):
    """An agent section of a plan, or an agent task, is refused (code, message, hint)."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint


class AgentHost(NamedTuple):
    """One agent host a trial can run (a row of :data:`AGENT_HOSTS`)."""

    kind: str
    """The plan's ``runner.kind``; also the host's name in ``pinned-hosts.toml``."""
    program: str
    """The program looked up on ``PATH`` on the machine that runs the trial."""
    harness_paths: tuple[str, ...]
    """Files and directories of the side's harness tree the host reads from the repository."""
    credentials: tuple[str, ...]
    """Variable names a plan may grant the host as its API key."""
    argv: Callable[[str, str, str, str], list[str]]
    """``(program, prompt, appended instructions, model) -> argument list``."""
    config: Callable[[str, str, str], dict[str, str]]
    """``(endpoint, credential name, model) -> {home-relative path: text}`` written before
    the run (a host that reads its endpoint from a file)."""
    env: Callable[[str, str, str], dict[str, str]]
    """``(endpoint, credential name, home) -> variables`` (the key itself is added by name)."""


def _claude_argv(program: str, prompt: str, instructions: str, model: str) -> list[str]:
    argv = [program, "-p", prompt, "--output-format", "stream-json", "--verbose",
            "--permission-mode", "acceptEdits", "--allowedTools", "Bash,Edit,Write,Read"]
    if model:
        argv += ["--model", model]
    if instructions:
        argv += ["--append-system-prompt", instructions]
    return argv


def _claude_env(endpoint: str, _credential: str, home: str) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": endpoint.rstrip("/"),
        "HOME": home,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def _codex_argv(program: str, prompt: str, instructions: str, _model: str) -> list[str]:
    # Codex reads AGENTS.md itself; prompt files go before the task, as instructions.
    text = f"{instructions}\n\n{prompt}" if instructions else prompt
    # The trial's box is the sandbox: Codex's own would need namespaces the box forbids.
    return [program, "exec", "--json", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", text]


def _codex_config(endpoint: str, credential: str, model: str) -> dict[str, str]:
    base = endpoint.rstrip("/")
    base = base if base.endswith("/v1") else base + "/v1"
    return {
        ".codex/config.toml": (
            (f'model = "{model}"\n' if model else "")
            + 'model_provider = "trial"\n'
            "[model_providers.trial]\n"
            'name = "trial"\n'
            f'base_url = "{base}"\n'
            f'env_key = "{credential}"\n'
            'wire_api = "responses"\n'
        )
    }


def _codex_env(_endpoint: str, _credential: str, home: str) -> dict[str, str]:
    return {"HOME": home, "CODEX_HOME": home + "/.codex"}


def _no_config(_endpoint: str, _credential: str, _model: str) -> dict[str, str]:
    return {}


AGENT_HOSTS: tuple[AgentHost, ...] = (
    AgentHost(
        "claude", "claude",
        ("CLAUDE.md", ".claude/skills", ".claude/agents", ".claude/commands"),
        ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
        _claude_argv, _no_config, _claude_env,
    ),
    AgentHost(
        "codex", "codex",
        ("AGENTS.md",),
        ("OPENAI_API_KEY", "CODEX_API_KEY"),
        _codex_argv, _codex_config, _codex_env,
    ),
)
"""Every agent host a trial can run, one row each."""

RUNNER_KINDS: tuple[str, ...] = (COMMAND_KIND, *(h.kind for h in AGENT_HOSTS))
GRADER_KINDS: tuple[str, ...] = (COMMAND_KIND, CHECKS_KIND)
_AGENT_KEYS = frozenset(
    {"kind", "endpoint", "api_key_env", "model", "prompt_files", "timeout_seconds"}
)
_CHECKS_KEYS = frozenset({"kind", "timeout_seconds"})


def agent_host(kind: str) -> AgentHost | None:
    """The row of ``kind`` (None: not an agent host)."""
    return next((h for h in AGENT_HOSTS if h.kind == kind), None)


_ENDPOINT = re.compile(r"(https?)://([a-z0-9][a-z0-9.-]{0,252})(?::([0-9]{1,5}))?(/[A-Za-z0-9._/-]*)?")


def endpoint_address(endpoint: str) -> tuple[str, int] | None:
    """``(host, port)`` of an ``http(s)://host[:port][/path]`` endpoint (None: not one)."""
    match = _ENDPOINT.fullmatch(endpoint.lower()) if isinstance(endpoint, str) else None
    if match is None:
        return None
    scheme, host, port_text, _path = match.groups()
    port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    return (host, port) if 0 < port < 65536 else None


def _timeout(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 86_400:
        raise AgentRunRejected(
            "EVAL_PLAN_INVALID", f"{where}.timeout_seconds must be an integer between 1 and 86400",
            "fix the plan; see docs/evaluation-run.md",
        )
    return value


def validate_section(where: str, section: Mapping[str, Any]) -> dict[str, Any]:
    """The normalised ``runner`` or ``grader`` section of a built-in kind (pure).

    Built-in kinds run PlanGate's own code: they pin no file and run no argv, so
    both are empty lists in the registered form. Raises :class:`AgentRunRejected`.
    """
    kinds = RUNNER_KINDS if where == "runner" else GRADER_KINDS
    kind = section.get("kind")
    if kind not in kinds:
        raise AgentRunRejected(
            "EVAL_PLAN_INVALID", f"{where}.kind {kind!r} is not one of {', '.join(kinds)}",
            "fix the plan; see docs/evaluation-run.md",
        )
    allowed = _CHECKS_KEYS if kind == CHECKS_KIND else _AGENT_KEYS
    # The registered form carries empty argv and files; anything else there is refused.
    given = {k for k, v in section.items() if not (k in ("argv", "files") and v == [])}
    unknown = sorted(given - allowed)
    if unknown:
        raise AgentRunRejected("EVAL_PLAN_UNKNOWN_KEY", f"{where}: unknown key(s) {unknown}",
                               f"a {kind} {where} takes {', '.join(sorted(allowed))}")
    missing = sorted(allowed - {"prompt_files", "model"} - set(section))
    if missing:
        raise AgentRunRejected("EVAL_PLAN_ITEM_MISSING", f"{where}.{missing[0]} is missing",
                               f"add {where}.{missing[0]}")
    out: dict[str, Any] = {"kind": kind, "argv": [], "files": [],
                           "timeout_seconds": _timeout(section["timeout_seconds"], where)}
    if kind == CHECKS_KIND:
        return out
    host = agent_host(str(kind))
    if host is None:  # pragma: no cover - every runner kind but "command" is a host's row
        raise AgentRunRejected("EVAL_PLAN_INVALID", f"{where}.kind {kind!r} has no host", "")
    endpoint = section["endpoint"]
    if not isinstance(endpoint, str) or endpoint_address(endpoint) is None:
        raise AgentRunRejected(
            "EVAL_AGENT_ENDPOINT_INVALID",
            f"{where}.endpoint {endpoint!r} is not an http(s)://host[:port] URL",
            "name the model's API root, e.g. https://api.anthropic.com",
        )
    name = section["api_key_env"]
    if not isinstance(name, str) or name not in host.credentials:
        raise AgentRunRejected(
            "EVAL_AGENT_CREDENTIAL_NOT_GRANTED",
            f"{where}.api_key_env {name!r} is not a credential {kind} may be granted",
            f"name one of {', '.join(host.credentials)} (the variable's name, never its value)",
        )
    prompt_files = section.get("prompt_files", [])
    if not isinstance(prompt_files, list) or not all(
        isinstance(p, str) and _SAFE_REL.fullmatch(p) and ".." not in p.split("/")
        for p in prompt_files
    ):
        raise AgentRunRejected(
            "EVAL_PLAN_INVALID", f"{where}.prompt_files must list relative paths of the harness",
            "name files of the harness tree, e.g. harness/prompts/builder.md",
        )
    model = section.get("model", "")
    if not isinstance(model, str) or (model and _MODEL.fullmatch(model) is None):
        raise AgentRunRejected(
            "EVAL_PLAN_INVALID", f"{where}.model {model!r} is not a model name",
            "name the model the host asks for, e.g. claude-sonnet-4-5 (or leave it out)",
        )
    out |= {"endpoint": endpoint, "api_key_env": name, "prompt_files": list(prompt_files)}
    return out | ({"model": model} if model else {})


# -- the agent task ------------------------------------------------------------------


class AgentTask(NamedTuple):
    """A parsed agent task fixture."""

    prompt: str
    files: tuple[tuple[str, bytes], ...]
    check_files: tuple[tuple[str, bytes], ...]
    check_commands: tuple[tuple[str, ...], ...]


def _rel_path(path: object, where: str) -> str:
    if not isinstance(path, str) or not _SAFE_REL.fullmatch(path) or ".." in path.split("/"):
        raise AgentRunRejected("EVAL_AGENT_TASK_INVALID", f"{where}: bad path {path!r}",
                               "use relative paths inside the repository")
    return path


def _file_map(value: object, where: str) -> tuple[tuple[str, bytes], ...]:
    if not isinstance(value, dict) or len(value) > MAX_TASK_FILES:
        raise AgentRunRejected("EVAL_AGENT_TASK_INVALID",
                               f"{where} must map paths to file texts", "")
    out = []
    for path, text in sorted(value.items()):
        rel = _rel_path(path, where)
        if not isinstance(text, str):
            raise AgentRunRejected("EVAL_AGENT_TASK_INVALID", f"{where}[{rel}] is not a text", "")
        out.append((rel, text.encode("utf-8")))
    return tuple(out)


def parse_task(data: bytes) -> AgentTask:
    """An agent task fixture parsed strictly (raises ``EVAL_AGENT_TASK_INVALID``)."""
    try:
        doc = strict_loads_object(data, "agent task")
    except StrictJSONError as exc:
        raise AgentRunRejected("EVAL_AGENT_TASK_INVALID", f"{exc.code}: {exc.message}",
                               "write the fixture as plangate-agent-task/1 JSON") from None
    if set(doc) != {"schema", "prompt", "files", "checks"} or doc["schema"] != TASK_SCHEMA:
        raise AgentRunRejected(
            "EVAL_AGENT_TASK_INVALID",
            f"an agent task has exactly schema ({TASK_SCHEMA}), prompt, files and checks",
            "see docs/evaluation-run.md",
        )
    prompt = doc["prompt"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise AgentRunRejected("EVAL_AGENT_TASK_INVALID", "prompt must be a non-empty text", "")
    checks = doc["checks"]
    if not isinstance(checks, dict) or set(checks) != {"files", "commands"}:
        raise AgentRunRejected("EVAL_AGENT_TASK_INVALID", "checks must be {files, commands}", "")
    commands = checks["commands"]
    if (
        not isinstance(commands, list) or not 1 <= len(commands) <= MAX_CHECK_COMMANDS
        or not all(isinstance(c, list) and c and all(isinstance(w, str) and w for w in c)
                   for c in commands)
    ):
        raise AgentRunRejected("EVAL_AGENT_TASK_INVALID",
                               "checks.commands must list 1 to 16 argument lists", "")
    return AgentTask(prompt, _file_map(doc["files"], "files"),
                     _file_map(checks["files"], "checks.files"),
                     tuple(tuple(c) for c in commands))


def judgement_for(role: str, meets_bar: bool) -> str:
    """The grader's word for an agent trial whose checks all passed (``meets_bar``) or not.

    For an input the harness must stop (``known_bad``, ``sealed_negative``,
    ``known_mutant``) the checks describe the work without the incident: meeting
    the bar is ``stopped``. For every other role meeting the bar is ``passed``.
    """
    if role in _STOP_ROLES:
        return "stopped" if meets_bar else "passed"
    return "passed" if meets_bar else "stopped"


# -- what the host did -------------------------------------------------------------


def transcript_digest(transcript: bytes) -> str:
    """The digest recorded for a trial's transcript (sha256 of the host's output bytes)."""
    return sha256_digest(transcript)


def model_answered(transcript: bytes) -> bool:
    """True when the host's JSON events show at least one answer of the model."""
    for line in transcript.splitlines():
        if b'"type":"assistant"' in line.replace(b" ", b"") or b'"agent_message"' in line:
            return True
        if b'"type":"item.completed"' in line.replace(b" ", b""):
            return True
    return False


def harness_components(
    components: Sequence[tuple[str, Sequence[str]]], placed: Sequence[str],
) -> list[str]:
    """Component ids (``(id, path patterns)``) with a file among ``placed`` (pure)."""
    out = []
    for component_id, patterns in components:
        if any(glob_match(pattern, path) for pattern in patterns for path in placed):
            out.append(component_id)
    return sorted(set(out))


def agent_result(
    trial_id: str, *, exit_code: int, transcript: bytes, components: Sequence[str],
) -> dict[str, Any]:
    """The ``result.json`` PlanGate writes for an agent trial (``plangate-trial/2``).

    The host given a harness file reads it into every model request, so a component
    whose file was placed *fired* once the model answered; the transcript digest is
    the evidence. Without an answer it was only *selected*.
    """
    answered = exit_code == 0 and model_answered(transcript)
    ref = f"transcript:{transcript_digest(transcript)}"
    level = "fired" if answered else "selected"
    return {
        "protocol": "plangate-trial/2",
        "trial_id": trial_id,
        "outcome": "MERGE_READY" if exit_code == 0 else "BLOCKED",
        "stop_reasons": [] if exit_code == 0 else ["NO_PROGRESS"],
        "metrics": {"agent_exit_code": float(exit_code)},
        "activation": {c: {"level": level, "evidence_refs": [ref] if answered else []}
                       for c in components},
        "detections": {},
    }

