"""Credentials never leave the process: the one redaction of ledger connection secrets.

A PostgreSQL ledger is named by a URL (``postgresql://user:secret@host/db``) or a
libpq connection string (``host=h user=u password=secret``), and either may carry
a password in three places: the URL's user information, a ``password=`` (or
``sslpassword=``) query parameter, and a ``password=`` key of a ``key=value``
string. Any of them can end up in a message: the ledger's own location, a
driver error that quotes the connection string, a hook's deny message that the
agent reads, ``doctor`` output, the CLI's error boundary.

:func:`redact_credentials` is applied to every such text. It replaces

1. the password of every ``postgres://`` / ``postgresql://`` URL in the text,
2. the value of every ``password`` / ``sslpassword`` key (``key=value`` and
   ``key = 'quoted value'`` forms, in query strings and connection strings),
3. every literal secret the caller knows (the configured URL's passwords, raw and
   percent-decoded), wherever it appears,

by :data:`MASK`. The scan is linear in the text: the patterns below have no
nested quantifiers and their matches never overlap.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

# A URL's scheme and network location: everything up to the path, query,
# fragment, whitespace or a quote that ends a token in a message.
_URL_RE = re.compile(r"(?i)postgres(?:ql)?://[^\s/?#'\"]*")
# password=VALUE, password = 'quoted value' (libpq escapes \' and \\ inside quotes),
# also in a query string (?password=...&) and percent-encoded (password%3D...).
_KEY_RE = re.compile(r"(?i)((?:ssl)?password(?:\s*=\s*|%3D))('(?:[^'\\]|\\.)*'?|[^\s&'\"]*)")

_PERCENT_RE = re.compile(r"%([0-9A-Fa-f]{2})")

_MIN_SECRET_CHARS = 4
"""Shorter literal secrets are masked only where a pattern finds them (a one-letter
password would otherwise mask every such letter of a message)."""


def _redact_netloc(match: re.Match[str]) -> str:
    text = match.group(0)
    at = text.rfind("@")
    if at < 0:
        return text
    scheme_end = text.index("://") + 3
    userinfo = text[scheme_end:at]
    colon = userinfo.find(":")
    if colon < 0:
        return text
    return text[: scheme_end + colon + 1] + MASK + text[at:]


def unquote(text: str) -> str:
    """Percent-decoding of a URL component (bytes that are not UTF-8 become U+FFFD)."""
    if "%" not in text:
        return text
    out = bytearray()
    last = 0
    for match in _PERCENT_RE.finditer(text):
        out += text[last : match.start()].encode("utf-8", "surrogatepass")
        out.append(int(match.group(1), 16))
        last = match.end()
    out += text[last:].encode("utf-8", "surrogatepass")
    return out.decode("utf-8", "replace")


def url_secrets(url: str) -> tuple[str, ...]:
    """The passwords a connection URL or ``key=value`` string carries, raw and decoded.

    Never raises: an unparseable URL yields what the patterns can find.
    """
    found: list[str] = []
    for match in _URL_RE.finditer(url):
        text = match.group(0)
        at = text.rfind("@")
        if at < 0:
            continue
        userinfo = text[text.index("://") + 3 : at]
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
    for match in _KEY_RE.finditer(url):
        value = match.group(2)
        if value.startswith("'"):
            value = value[1:-1] if len(value) > 1 and value.endswith("'") else value[1:]
            value = value.replace("\\'", "'").replace("\\\\", "\\")
        found.append(value)
    out: list[str] = []
    for secret in found:
        for form in (secret, unquote(secret)):
            if len(form) >= _MIN_SECRET_CHARS and form != MASK and form not in out:
                out.append(form)
    return tuple(out)


def redact_credentials(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every password replaced by :data:`MASK` (see the module docstring)."""
    # Known secrets first, longest first, so that a secret containing another is
    # masked whole; then the patterns catch passwords of any other URL or key.
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret and secret != MASK:
            text = text.replace(secret, MASK)
    text = _URL_RE.sub(_redact_netloc, text)
    return _KEY_RE.sub(lambda m: m.group(1) + MASK, text)
