"""Where the trust root lives, how large its files may be, what a trust branch is called.

Kept apart from the parsers so that a command which only has to learn that
there is no trust root (most repositories) does not load the signature code.
"""

from __future__ import annotations

import re

TRUST_RELPATH = ".plangate/trust.toml"
SIGNERS_RELPATH = ".plangate/allowed_signers"
REVOKED_RELPATH = ".plangate/revoked_signers"
TRUST_FILES = (TRUST_RELPATH, SIGNERS_RELPATH, REVOKED_RELPATH)
"""The trust root's files: protected surfaces."""

DEFAULT_TRUST_BRANCH = "main"
"""The trust branch of a repository where none is recorded."""

TRUST_BRANCH_RECORD = "plangate/trust-branch"
"""Where setup records the local trust branch: a file inside the common git directory
(``.git/plangate/trust-branch``), outside every working tree and every commit."""
MAX_TRUST_BRANCH_RECORD_BYTES = 256
MAX_TRUST_BYTES = 64 * 1024
MAX_SIGNERS_BYTES = 256 * 1024

_BRANCH_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")


def is_branch_name(value: object) -> bool:
    """True for a plain branch name (``main``, ``release/2``): the trust branch's shape."""
    return (isinstance(value, str) and _BRANCH_RE.fullmatch(value) is not None
            and ".." not in value and not value.endswith(("/", ".lock")))
