"""The one classifier of keys that must never be recorded.

Ledger payloads, RunEvidence documents and trial metrics all refuse keys that
carry credentials, transcripts or prompts; RunEvidence additionally refuses keys
that carry private data (file paths, raw output, stack traces) and account
identities. Keys are compared in any spelling: case, ``_``, ``-``, ``.`` and
camelCase are ignored (``apiKey``, ``API-KEY`` and ``api_key`` agree), and a key
whose squashed form ends in a credential name (``access_token``,
``githubToken``, ``client_secret``, ``db_password``) is a secret too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

SECRET = "secret"  # noqa: S105 - a class name, not a password
"""Class of keys refused everywhere: credentials, transcripts, prompts, raw exchanges."""
PRIVATE = "private"
"""Class of keys RunEvidence refuses: file paths, raw output, stack traces."""
ACCOUNT = "account"
"""Class of keys RunEvidence refuses: account identities."""

ALL_CLASSES = frozenset({SECRET, PRIVATE, ACCOUNT})
"""Every class (what RunEvidence refuses)."""
SECRETS_ONLY = frozenset({SECRET})
"""What ledger payloads and trial metric names refuse."""

SECRET_KEYS: frozenset[str] = frozenset(
    {
        "api_key",
        "token",
        "password",
        "secret",
        "authorization",
        "transcript",
        "raw_transcript",
        "chain_of_thought",
        "user_prompt",
        "system_prompt",
        "prompt_text",
        "raw_response",
        "raw_request",
    }
)
"""Keys that carry credentials, transcripts or prompts."""

PRIVATE_KEYS: frozenset[str] = frozenset(
    {
        "file_path",
        "file_paths",
        "stack_trace",
        "stacktrace",
        "command_output",
        "stdout",
        "stderr",
        "absolute_path",
    }
)
"""Keys that carry file paths, raw output or stack traces."""

ACCOUNT_KEYS: frozenset[str] = frozenset(
    {"account", "actor", "author", "github_user", "login", "owner", "user", "username"}
)
"""Keys that carry an account identity."""

CREDENTIAL_SUFFIXES: tuple[str, ...] = (
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "privatekey",
    "accesskey",
    "secretkey",
    "cookie",
    "credential",
    "credentials",
)
"""A key whose squashed form ends in one of these names a credential."""


def squash(key: str) -> str:
    """Case-folded key without separators: ``apiKey``, ``API-KEY`` and ``api_key`` agree."""
    return "".join(ch for ch in key.casefold() if ch.isalnum())


_SECRET_SQUASHED = frozenset(squash(k) for k in SECRET_KEYS)
_PRIVATE_SQUASHED = frozenset(squash(k) for k in PRIVATE_KEYS)
_ACCOUNT_SQUASHED = frozenset(squash(k) for k in ACCOUNT_KEYS)


def key_class(key: str) -> str | None:
    """:data:`SECRET`, :data:`PRIVATE`, :data:`ACCOUNT` or None for one key, in any spelling."""
    squashed = squash(key)
    if squashed in _SECRET_SQUASHED or squashed.endswith(CREDENTIAL_SUFFIXES):
        return SECRET
    if squashed in _PRIVATE_SQUASHED:
        return PRIVATE
    if squashed in _ACCOUNT_SQUASHED:
        return ACCOUNT
    return None


def is_refused(key: object, classes: frozenset[str]) -> bool:
    """True when ``key`` is a string whose class is one of ``classes``."""
    return isinstance(key, str) and key_class(key) in classes


def iter_keys(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every ``(path, key)`` of the objects nested in ``value``, depth first."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            yield where, str(key)
            yield from iter_keys(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from iter_keys(item, f"{path}[{index}]")


def first_refused_key(value: Any, classes: frozenset[str], path: str = "payload") -> str | None:
    """Path of the first key (depth first) whose class is in ``classes``, or None."""
    for where, key in iter_keys(value, path):
        if key_class(key) in classes:
            return where
    return None


def refused_keys(value: Any, label: str, classes: frozenset[str] = ALL_CLASSES) -> list[str]:
    """``"<label>: <key>"`` for every refused key in ``value`` (sorted, unique)."""
    return sorted(
        {f"{label}: {key}" for _where, key in iter_keys(value) if key_class(key) in classes}
    )
