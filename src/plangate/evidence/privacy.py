"""Privacy rules of RunEvidence: forbidden input keys, redaction, the output backstop.

RunEvidence is shared beyond the repository (shadow evaluation, promotion), so
it must never carry transcripts, credentials, raw tool output, absolute paths
or account identities.

- :func:`find_forbidden_keys` walks an input (``record.jsonl`` rows, the c3
  record, injected routing decisions) and names every forbidden or account
  key. The producer *refuses* such inputs (it never drops them and goes on):
  an EV is never built from a transcript or a credential.
- :func:`redact` reduces input-derived free text: URLs become ``pr:<n>`` /
  ``comment:<m>`` / ``ref:redacted``, absolute paths ``path:redacted``,
  ``@handles`` ``account:redacted``; each reduction is reported so the
  producer records it under ``escalation`` instead of swallowing it.
- :func:`output_problems` is the backstop run on the finished document (by the
  producer and again by the verifier).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from plangate.forbidden_keys import ALL_CLASSES, iter_keys, key_class, refused_keys

# Problem wording kept from before the classes were split: secret and private keys
# are both "forbidden" in RunEvidence.
_CLASS_WORDS = {"secret": "forbidden", "private": "forbidden", "account": "account"}

_URL_RE = re.compile(r"https?://[^\s\"']+")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"']*|github\.com[^\s\"']*")
_PULL_RE = re.compile(r"/pull/([0-9]+)")
_COMMENT_RE = re.compile(r"#issuecomment-([0-9]+)")
_HANDLE_RE = re.compile(r"(?<![A-Za-z0-9])@+[A-Za-z0-9][A-Za-z0-9-]+")
_ABS_TOKEN_RE = re.compile(r"(?:^|(?<=[^A-Za-z0-9_.~-]))/[^\s\"',;)\]]*")
_USERS_RE = re.compile(r"/Users/[^\s\"',;)\]]*")
_ABS_VALUE_RE = re.compile(r"(^/|/Users/)")
_URLISH_RE = re.compile(r"(github\.com|://|(?<![A-Za-z0-9])@[A-Za-z0-9][A-Za-z0-9-]+)")


def find_forbidden_keys(value: Any, label: str) -> list[str]:
    """``"<label>: <key>"`` for every forbidden, private or account key in ``value``."""
    return refused_keys(value, label, ALL_CLASSES)

def _reduce_url(match: re.Match[str]) -> str:
    url = match.group(0)
    parts = []
    pull = _PULL_RE.search(url)
    if pull:
        parts.append(f"pr:{pull.group(1)}")
    comment = _COMMENT_RE.search(url)
    if comment:
        parts.append(f"comment:{comment.group(1)}")
    return "#".join(parts) if parts else "ref:redacted"


def redact(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Redact URLs, absolute paths and account handles; return the text and escalations.

    Escalations are ``(kind, detail)`` pairs: ``privacy_url_reduced``,
    ``privacy_absolute_path``, ``privacy_account_handle`` (the detail never
    repeats the redacted value). The passes repeat until nothing changes, so
    a replacement can never leave a new match behind (``@@x`` -> ``@...``).
    """
    escalations: list[tuple[str, str]] = []
    out = text
    for _ in range(8):
        out, found = _redact_once(out)
        if not found:
            break
        escalations.extend(e for e in found if e not in escalations)
    return out, escalations


def _redact_once(text: str) -> tuple[str, list[tuple[str, str]]]:
    escalations: list[tuple[str, str]] = []
    out = text
    if _URL_RE.search(out):
        out = _URL_RE.sub(_reduce_url, out)
        escalations.append(("privacy_url_reduced", "URL reduced to pr/comment numbers"))
    if _SCHEME_RE.search(out):
        # Other schemes (ssh://, file://) and bare github.com references carry no PR number.
        out = _SCHEME_RE.sub("ref:redacted", out)
        escalations.append(("privacy_url_reduced", "URL reference redacted"))
    if _USERS_RE.search(out) or _ABS_TOKEN_RE.search(out):
        out = _USERS_RE.sub("path:redacted", out)
        out = _ABS_TOKEN_RE.sub("path:redacted", out)
        escalations.append(("privacy_absolute_path", "absolute path redacted"))
    if _HANDLE_RE.search(out):
        out = _HANDLE_RE.sub("account:redacted", out)
        escalations.append(("privacy_account_handle", "account handle redacted"))
    return out, escalations


def redact_tree(value: Any) -> tuple[Any, list[tuple[str, str]]]:
    """:func:`redact` applied to every string (not key) nested in a JSON value."""
    escalations: list[tuple[str, str]] = []
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        items = []
        for item in value:
            new, esc = redact_tree(item)
            items.append(new)
            escalations.extend(esc)
        return items, escalations
    if isinstance(value, dict):
        obj = {}
        for key, item in value.items():
            new, esc = redact_tree(item)
            obj[key] = new
            escalations.extend(esc)
        return obj, escalations
    return value, escalations


def output_problems(document: Any) -> list[str]:
    """Privacy violations left in a finished document (the backstop); empty = clean."""
    problems = []
    for where, key in iter_keys(document):
        cls = key_class(key)
        if cls is not None:
            problems.append(f"{where}: {_CLASS_WORDS[cls]} key {key!r}")
    for where, text in _iter_strings(document, ""):
        if _ABS_VALUE_RE.search(text):
            problems.append(f"{where}: absolute path in value")
        if _URLISH_RE.search(text):
            problems.append(f"{where}: URL or account handle in value")
    return problems


def _iter_strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path or "<root>", value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _iter_strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _iter_strings(item, f"{path}[{index}]")
