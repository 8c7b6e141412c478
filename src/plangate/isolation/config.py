"""``.plangate/isolation.toml``: what a box of ``plangate exec`` is granted (strict parse, pure).

The box is an allowlist. Its home directory is empty unless this file (read
at the approved commit through :mod:`plangate.git`, never from the working
tree) grants something:

.. code-block:: toml

    agents = ["claude"]                      # whose configuration and endpoints
    copy = ["~/.config/my-agent"]            # copied into the box's home; changes discarded
    read_only = ["~/.cargo", "/srv/tools"]   # shown read-only at their own path
    pass_env = ["GITHUB_TOKEN"]              # variables passed by name (values never recorded)
    network = true                           # false: no proxy, loopback only
    egress = ["pypi.org:443"]                # host:port the proxy lets through, besides the agents'

Every key is optional; an unknown key, a value of the wrong type, a path that
is not absolute or ``~/``-relative, a grant of a secret (:data:`SECRET_PATHS`,
a key file, a socket) and a wildcard egress (``*``) are refused with a reason
code and a hint. :func:`parse_isolation_config` checks the bytes;
:func:`check_grants` checks the grants against one home directory;
:func:`read_isolation_config` reads the file at a commit.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from plangate.errors import EnvironmentFailure
from plangate.git import Git, GitError
from plangate.records import NamedTuple

ISOLATION_CONFIG_RELPATH = ".plangate/isolation.toml"
"""The repository's isolation settings, read at the approved commit."""

MAX_ISOLATION_CONFIG_BYTES = 64 * 1024

CONFIG_INVALID = "ISOLATION_CONFIG_INVALID"
GRANT_SECRET = "ISOLATION_GRANT_SECRET"  # noqa: S105 -- a reason code
EGRESS_WILDCARD = "ISOLATION_EGRESS_WILDCARD"

_HINT = "fix .plangate/isolation.toml (see docs/isolation.md) and commit it"


class AgentProfile(NamedTuple):
    """What one agent needs in a box: its configuration (copied), variables, endpoints.

    ``copy`` names the agent's login and settings, not its history: transcripts,
    sessions and caches (``~/.claude/projects``, ``~/.codex/sessions``) stay on the
    host; a box starts each run without them.
    """

    copy: tuple[str, ...]
    env: tuple[str, ...]
    egress: tuple[str, ...]
    base_url_env: tuple[str, ...] = ()
    """Variables naming the agent's model endpoint (their ``host:port`` is allowed too)."""
    read_only: tuple[str, ...] = ()
    """Where the agent's own program lives under the home (shown read-only when present)."""


HOSTS_CACHE = "~/.cache/plangate/hosts"
"""Where PlanGate's pinned installs of the agents live (shown read-only when present)."""

AGENT_PROFILES: dict[str, AgentProfile] = {
    "claude": AgentProfile(
        copy=(
            "~/.claude.json",
            "~/.claude/.credentials.json",
            "~/.claude/settings.json",
            "~/.claude/CLAUDE.md",
            "~/.claude/agents",
            "~/.claude/commands",
            "~/.claude/skills",
        ),
        env=(
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_MODEL",
            "ANTHROPIC_SMALL_FAST_MODEL",
            # The user's opt-outs of traffic besides the model: without them Claude Code
            # in the box calls api.anthropic.com although the host's environment said not to.
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_TELEMETRY",
            "DISABLE_ERROR_REPORTING",
            "DISABLE_AUTOUPDATER",
            "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
        ),
        egress=("api.anthropic.com:443", "statsig.anthropic.com:443", "claude.ai:443"),
        base_url_env=("ANTHROPIC_BASE_URL",),
        read_only=(HOSTS_CACHE, "~/.local/share/claude", "~/.local/bin/claude"),
    ),
    "codex": AgentProfile(
        copy=("~/.codex/auth.json", "~/.codex/config.toml", "~/.codex/AGENTS.md"),
        env=("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"),
        egress=("api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"),
        base_url_env=("OPENAI_BASE_URL",),
        read_only=(HOSTS_CACHE,),
    ),
}
"""Every agent a box can be configured for: one row each."""

DEFAULT_AGENTS: tuple[str, ...] = ("claude", "codex")
"""Agents granted when ``agents`` is not given."""

SECRET_PATHS: tuple[str, ...] = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube",
    "~/.docker",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/gcloud",
    "~/.config/git",
    "~/.git-credentials",
    "~/.gitconfig",
    "~/.netrc",
    "~/.pgpass",
    "~/.npmrc",
    "~/.pypirc",
    "~/.vault-token",
    "~/.terraform.d",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/Library/Keychains",
    "~/.cache/plangate/hookd",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.python_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.node_repl_history",
    "~/.lesshst",
    "~/.viminfo",
)
"""Paths no grant may name, lie inside or contain (credentials, keys, histories, sockets)."""

_KEY_NAME = re.compile(
    r"(id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\.pub)?|.*\.(pem|key|p12|pfx|kdbx|keystore|jks)"
    r"|\.env(\..*)?|credentials(\.json)?|.*_history|.*\.sock)",
    re.IGNORECASE,
)
"""File names a grant may not name: keys, key stores, credentials, ``.env`` files, sockets."""

_KEYS = frozenset({"agents", "copy", "read_only", "pass_env", "network", "egress"})
_RENAMED = {
    "agent_dirs": "copy (agent configuration is copied in, never mounted writable)",
    "visible": "read_only",
    "env": "pass_env",
    "hidden": "nothing: the box's home is empty unless granted",
}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HOST = re.compile(
    r"(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*"
    r"|\[[0-9a-f:.]+\]"
)


class EgressRule(NamedTuple):
    """One allowed destination: ``host`` (``*.example.com``: any subdomain) and ``port``."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


class IsolationConfig(NamedTuple):
    """``.plangate/isolation.toml`` at the approved commit (the defaults when absent)."""

    agents: tuple[str, ...] = DEFAULT_AGENTS
    copy: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    network: bool = True
    egress: tuple[EgressRule, ...] = ()

    def profiles(self) -> tuple[AgentProfile, ...]:
        """The granted agents' profiles, in order."""
        return tuple(AGENT_PROFILES[name] for name in self.agents)

    def copied(self) -> tuple[str, ...]:
        """Every path copied into the box's home: the agents' configuration, then ``copy``."""
        paths = [p for profile in self.profiles() for p in profile.copy]
        return tuple(dict.fromkeys([*paths, *self.copy]))

    def shown_read_only(self) -> tuple[str, ...]:
        """Every path shown read-only: the agents' programs, then ``read_only``."""
        paths = [p for profile in self.profiles() for p in profile.read_only]
        return tuple(dict.fromkeys([*paths, *self.read_only]))

    def env_names(self) -> tuple[str, ...]:
        """Every variable passed by name: the agents', then ``pass_env``."""
        names = [n for profile in self.profiles() for n in profile.env]
        return tuple(dict.fromkeys([*names, *self.pass_env]))

    def egress_rules(self, env: Mapping[str, str]) -> tuple[EgressRule, ...]:
        """The proxy's allowlist: each agent's endpoints, then ``egress``.

        An agent whose base URL variable names a usable ``http(s)`` endpoint in ``env`` is
        granted that endpoint's ``host:port`` *instead of* its default endpoints: it was told
        to talk to another model, so its vendor's hosts are traffic nobody configured (a
        grant in ``egress`` still adds them). An unusable value leaves the defaults.
        """
        rules: list[EgressRule] = []
        for profile in self.profiles():
            told = [_base_url_rule(env.get(name, "")) for name in profile.base_url_env]
            chosen = [rule for rule in told if rule is not None]
            rules += chosen or [parse_egress(e) for e in profile.egress]
        return tuple(dict.fromkeys([*rules, *self.egress]))


def _bad(detail: str, code: str = CONFIG_INVALID, hint: str = _HINT) -> EnvironmentFailure:
    return EnvironmentFailure(code, f"{ISOLATION_CONFIG_RELPATH}: {detail}", hint)


def parse_egress(entry: str) -> EgressRule:
    """``host:port`` as a rule; a wildcard or a malformed entry is refused."""
    text = entry.strip().lower()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = text, ""
    if "*" in port_text or "*" in host.removeprefix("*."):
        raise _bad(
            f"egress {entry!r} is a wildcard",
            EGRESS_WILDCARD,
            "name each host:port the box may reach (a subdomain pattern '*.example.com:443' "
            "is the widest allowed)",
        )
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _bad(f"egress {entry!r} is not host:port", hint="write it as 'example.com:443'")
    if _HOST.fullmatch(host) is None:
        raise _bad(f"egress {entry!r}: bad host", hint="write it as 'example.com:443'")
    if host.startswith("*.") and host.count(".") < 2:
        raise _bad(
            f"egress {entry!r} covers a whole top-level domain",
            EGRESS_WILDCARD,
            "name a registered domain: '*.example.com:443'",
        )
    return EgressRule(host, int(port_text))


def _base_url_rule(url: str) -> EgressRule | None:
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host or _HOST.fullmatch(host) is None:
        return None
    return EgressRule(host, port)


def _string_list(table: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(f"{key} must be a list of non-empty strings")
    return tuple(value)


def _clean_grant(key: str, path: str) -> str:
    if path in ("~", "/"):
        return path  # the whole home or file system: refused by the grant rules, with their reason
    if key == "copy" and not path.startswith("~/"):
        raise _bad(f"copy: {path!r} must start with '~/' (it is copied into the box's home)")
    if not path.startswith(("/", "~/")) or any(ord(c) < 0x20 for c in path):
        raise _bad(f"{key}: {path!r} must be absolute or start with '~/'")
    if ".." in path.split("/") or "*" in path:
        raise _bad(f"{key}: {path!r} may not hold '..' or '*'")
    return posixpath.normpath(path)


def parse_isolation_config(data: bytes | None) -> IsolationConfig:
    """The settings in ``data`` (None: the file does not exist); a bad file is refused."""
    if data is None:
        return IsolationConfig()
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _bad(f"not valid TOML: {exc}") from None
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        renamed = [f"{k} is now {_RENAMED[k]}" for k in unknown if k in _RENAMED]
        raise _bad(
            f"unknown key(s) {', '.join(unknown)}",
            hint="; ".join(renamed) or f"known keys: {', '.join(sorted(_KEYS))}",
        )
    agents = _string_list(table, "agents") if "agents" in table else DEFAULT_AGENTS
    strange = [a for a in agents if a not in AGENT_PROFILES]
    if strange:
        raise _bad(
            f"unknown agent {strange[0]!r}", hint=f"agents are {', '.join(AGENT_PROFILES)}"
        )
    names = _string_list(table, "pass_env")
    bad_names = [n for n in names if _ENV_NAME.fullmatch(n) is None]
    if bad_names:
        raise _bad(f"pass_env: {bad_names[0]!r} is not a variable name")
    network = table.get("network", True)
    if not isinstance(network, bool):
        raise _bad("network must be true or false")
    config = IsolationConfig(
        agents=tuple(dict.fromkeys(agents)),
        copy=tuple(_clean_grant("copy", p) for p in _string_list(table, "copy")),
        read_only=tuple(_clean_grant("read_only", p) for p in _string_list(table, "read_only")),
        pass_env=names,
        network=network,
        egress=tuple(parse_egress(e) for e in _string_list(table, "egress")),
    )
    for key, path in [("copy", p) for p in config.copy] + [
        ("read_only", p) for p in config.read_only
    ]:
        problem = grant_problem(path)
        if problem:
            raise _bad(f"{key}: {path!r} {problem}", GRANT_SECRET, _grant_hint(key))
    return config


def _grant_hint(key: str) -> str:
    return (
        f"remove it from {key}: credentials reach the box only as variables named in "
        "pass_env, keys and sockets never"
    )


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def grant_problem(path: str) -> str:
    """Why ``path`` (``~/``-relative or absolute, cleaned) may not be granted; ``""``: it may.

    Pure rules, first match wins: the home directory or the root itself, a
    secret path, a path inside one or holding one, a key or credentials file name.
    """
    for rule in GRANT_RULES:
        problem = rule(path)
        if problem:
            return problem
    return ""


def _whole(path: str) -> str:
    return "is the whole home directory or file system" if path in ("~", "/", "/home") else ""


def _secret_related(path: str) -> str:
    for secret in SECRET_PATHS:
        if _within(path, secret):
            return f"is or lies inside {secret}"
        if _within(secret, path):
            return f"contains {secret}"
    return ""


def _key_name(path: str) -> str:
    name = posixpath.basename(path)
    return f"names a key, credentials or socket file ({name})" if _KEY_NAME.fullmatch(name) else ""


GRANT_RULES: tuple[Callable[[str], str], ...] = (_whole, _secret_related, _key_name)
"""The rules every granted path meets, in order."""


def home_relative(path: str, home: str) -> str:
    """``path`` as ``~/...`` when it lies in ``home``, else unchanged."""
    if home and home != "/" and _within(path, home):
        rest = path[len(home.rstrip("/")) :]
        return "~" + rest if rest else "~"
    return path


def expand_home(path: str, home: str) -> str:
    """``~/x`` under ``home``; an absolute path unchanged (normalised)."""
    if path == "~":
        return posixpath.normpath(home)
    if path.startswith("~/"):
        return posixpath.normpath(posixpath.join(home, path[2:]))
    return posixpath.normpath(path)


def check_grants(config: IsolationConfig, home: str) -> None:
    """Refuse (``ISOLATION_GRANT_SECRET``) a grant that, under ``home``, reaches a secret.

    Each grant is judged as written, and as the path it resolves to on this machine
    (the box shows what a link leads to: a granted ``~/tools`` that is a link to
    ``~/.ssh``, or a link on the way, is judged as ``~/.ssh``); an absolute grant inside
    ``home`` is judged as the ``~/`` path it is. A grant that holds the home directory
    itself, or that is a socket on this machine, is refused too.
    """
    real_home = os.path.realpath(home) if home else ""
    for key, paths in (("copy", config.copied()), ("read_only", config.shown_read_only())):
        for path in paths:
            problem = _grant_problem_here(path, home, real_home)
            if problem:
                raise _bad(f"{key}: {path!r} {problem}", GRANT_SECRET, _grant_hint(key))


def _grant_problem_here(path: str, home: str, real_home: str) -> str:
    """:func:`grant_problem` of ``path`` as written and as resolved on this machine."""
    expanded = expand_home(path, home)
    problem = grant_problem(home_relative(expanded, home))
    if problem:
        return problem
    # A resolved path holds no link, so it lies under the home's resolved path, if at all.
    real = os.path.realpath(expanded)
    view = home_relative(real, real_home)
    problem = grant_problem(view)
    if problem:
        return f"leads to {view}, which {problem}" if real != expanded else problem
    if home and (_within(home, expanded) or _within(real_home, real)):
        return "holds the home directory"
    try:
        socket = stat.S_ISSOCK(Path(real).stat().st_mode)
    except OSError:  # nothing there (yet): nothing to show
        socket = False
    return "is a socket" if socket else ""


def read_isolation_config(root: Path, approved: str) -> IsolationConfig:
    """The isolation settings committed at ``approved`` (what was approved, not the work tree)."""
    git = Git(root)
    entries = git.ls_tree(approved, [ISOLATION_CONFIG_RELPATH])
    if not any(e.path == ISOLATION_CONFIG_RELPATH for e in entries):
        return IsolationConfig()
    try:
        data = git.read_blob(approved, ISOLATION_CONFIG_RELPATH, MAX_ISOLATION_CONFIG_BYTES)
    except GitError as exc:
        raise EnvironmentFailure(CONFIG_INVALID, exc.message, exc.hint) from None
    return parse_isolation_config(data)
