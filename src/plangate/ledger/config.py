"""Where the ledger lives: environment, then ``.plangate/config.toml``, then the default.

Resolution order (the first that is present wins; a present but bad value is
an error, never a fall-through to the next source):

1. ``PLANGATE_LEDGER_URL`` in the environment;
2. ``[ledger] url = "..."`` in ``<repo>/.plangate/config.toml``;
3. the SQLite file ``<repo>/.plangate/ledger.sqlite3``.

Accepted URLs: ``postgresql://...`` / ``postgres://...`` (PostgreSQL) and
``sqlite:///absolute/path`` or ``sqlite:relative/path`` (relative to the
repository root). Any other scheme is refused (``LEDGER_URL_INVALID``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from plangate.fsutil import read_below
from plangate.ledger.chain import LedgerError
from plangate.records import NamedTuple

ENV_VAR = "PLANGATE_LEDGER_URL"
CONFIG_RELPATH = Path(".plangate") / "config.toml"
DEFAULT_SQLITE_RELPATH = Path(".plangate") / "ledger.sqlite3"
MAX_CONFIG_BYTES = 256 * 1024
_LEDGER_CONFIG_KEYS = frozenset({"url"})


# The hook path resolves the default location on every call: no dataclass, and
# tomllib / urllib.parse are imported only when a URL or config.toml is present.
class LedgerLocation(NamedTuple):
    """A resolved ledger location."""

    backend: str  # "sqlite" or "postgresql"
    target: str  # a file path (sqlite) or the connection URL (postgresql)
    source: str  # "env", "config" or "default"
    repo_root: str = ""  # the repository it belongs to (for its traces, see existence.py)

    @property
    def display(self) -> str:
        """The target with any password removed, for messages."""
        from plangate.ledger.credentials import redact_credentials, url_secrets

        return redact_credentials(self.target, url_secrets(self.target))


def resolve_location(repo_root: Path, env: Mapping[str, str]) -> LedgerLocation:
    """Resolve where the ledger of ``repo_root`` lives (see the module docstring)."""
    if ENV_VAR in env:
        return parse_url(env[ENV_VAR], repo_root, source="env")
    url = _config_url(repo_root)
    if url is not None:
        return parse_url(url, repo_root, source="config")
    return LedgerLocation(
        "sqlite", str(repo_root / DEFAULT_SQLITE_RELPATH), "default", str(repo_root)
    )


def parse_url(url: str, repo_root: Path, *, source: str) -> LedgerLocation:
    """Turn a ledger URL into a location; unknown or malformed URLs are refused."""
    from urllib.parse import urlsplit

    where = f"the environment variable {ENV_VAR}" if source == "env" else str(CONFIG_RELPATH)
    if not url.strip():
        raise LedgerError(
            "LEDGER_URL_INVALID",
            f"the ledger URL in {where} is empty",
            f"unset {ENV_VAR} to use the repository's SQLite ledger, or set a postgresql:// URL",
        )
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise LedgerError(
            "LEDGER_URL_INVALID",
            f"the ledger URL in {where} cannot be parsed: {exc}",
            "use postgresql://user@host:port/dbname",
        ) from None
    scheme = parts.scheme.lower()
    if scheme in ("postgresql", "postgres"):
        if not parts.hostname and "host=" not in parts.query:
            raise LedgerError(
                "LEDGER_URL_INVALID",
                f"the PostgreSQL ledger URL in {where} names no host",
                "use postgresql://user@host:port/dbname (or ?host=/socket/dir)",
            )
        return LedgerLocation("postgresql", url, source, str(repo_root))
    if scheme == "sqlite":
        if parts.netloc or not parts.path or parts.query or parts.fragment:
            raise LedgerError(
                "LEDGER_URL_INVALID",
                f"the SQLite ledger URL in {where} must be sqlite:///ABSOLUTE or sqlite:RELATIVE",
                "for example sqlite:///srv/ledgers/repo.sqlite3",
            )
        path = Path(parts.path)
        if not path.is_absolute():
            path = repo_root / path
        return LedgerLocation("sqlite", str(path), source, str(repo_root))
    raise LedgerError(
        "LEDGER_URL_INVALID",
        f"the ledger URL in {where} has unsupported scheme {parts.scheme or '(none)'!r}",
        "use postgresql://... for a shared ledger or sqlite:... for a file",
    )


def _config_url(repo_root: Path) -> str | None:
    read = read_below(repo_root, CONFIG_RELPATH.as_posix(), MAX_CONFIG_BYTES)
    if read.state.value == "missing":
        return None
    if not read.ok or read.data is None:
        raise LedgerError(
            "LEDGER_CONFIG_INVALID",
            f"{CONFIG_RELPATH} cannot be read: {read.detail}",
            "make it a regular, readable TOML file",
        )
    import tomllib

    try:
        config = tomllib.loads(read.data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LedgerError(
            "LEDGER_CONFIG_INVALID",
            f"{CONFIG_RELPATH} is not valid UTF-8 TOML: {exc}",
            "fix the TOML syntax",
        ) from None
    section = config.get("ledger")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise LedgerError(
            "LEDGER_CONFIG_INVALID",
            f"[ledger] in {CONFIG_RELPATH} must be a table",
            'write [ledger] and url = "postgresql://..." on the next line',
        )
    unknown = sorted(set(section) - _LEDGER_CONFIG_KEYS)
    if unknown:
        raise LedgerError(
            "LEDGER_CONFIG_INVALID",
            f"[ledger] in {CONFIG_RELPATH} has unknown keys: {', '.join(unknown)}",
            "the only key is url",
        )
    url = section.get("url")
    if url is None:
        return None
    if not isinstance(url, str):
        raise LedgerError(
            "LEDGER_CONFIG_INVALID",
            f"[ledger] url in {CONFIG_RELPATH} must be a string",
            'write url = "postgresql://user@host/dbname"',
        )
    return url
