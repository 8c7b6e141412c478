"""Where the trust root lives and how large its files may be (constants only).

Kept apart from the parsers so that a command which only has to learn that
there is no trust root (most repositories) does not load the signature code.
"""

from __future__ import annotations

TRUST_RELPATH = ".plangate/trust.toml"
SIGNERS_RELPATH = ".plangate/allowed_signers"
REVOKED_RELPATH = ".plangate/revoked_signers"
TRUST_FILES = (TRUST_RELPATH, SIGNERS_RELPATH, REVOKED_RELPATH)
"""The trust root's files: protected surfaces."""

DEFAULT_TRUST_BRANCH = "main"
MAX_TRUST_BYTES = 64 * 1024
MAX_SIGNERS_BYTES = 256 * 1024
