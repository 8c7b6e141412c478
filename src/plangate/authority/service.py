"""``plangate trust init|add|require|show``: the trust files in the working tree.

Writing the trust root is a human action: :func:`require_human` refuses (a
human is required, exit 3) under agent or automation markers, or when stdin is
not an interactive terminal, with the marker rule overrides use. What is
written is only a proposal until it is committed on the trust branch (locally)
and merged into the base (in CI): the root in force is always read from a
commit (:mod:`plangate.authority.source`).

Every write renders both files from the parsed model and parses the result
again with the same rules a reader applies, so ``trust`` never writes a root
that a check would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from plangate.agents import HumanOnly, refuse_unless_human
from plangate.authority.root import build_root
from plangate.authority.signers import (
    AllowedSigners,
    SignerEntry,
    key_from_pub_line,
    parse_allowed_signers,
    parse_time,
)
from plangate.authority.source import record_trust_branch
from plangate.authority.trustfile import (
    ROLES,
    TrustConfig,
    parse_trust,
    render_trust,
)
from plangate.authority.trustpaths import MAX_TRUST_BYTES, SIGNERS_RELPATH, TRUST_RELPATH
from plangate.errors import InputRejected
from plangate.fsutil import FileState, atomic_write_in, read_regular_file

TRUST_COMMAND = HumanOnly(
    "TRUST_AGENT_ENVIRONMENT",
    "TRUST_NOT_INTERACTIVE",
    "refused",
    "change the trust root yourself in your own terminal, outside the agent session",
)
"""How the commands that change the trust root refuse an agent or a caller without a terminal."""


def require_human(env: Mapping[str, str], stdin: object) -> None:
    """Refuse unless a human at an interactive terminal, outside any agent, runs this."""
    refuse_unless_human(env, stdin, TRUST_COMMAND)


def _read(top: Path, relpath: str, limit: int) -> bytes | None:
    read = read_regular_file(top / relpath, limit)
    if read.state is FileState.MISSING:
        return None
    if not read.ok or read.data is None:
        raise InputRejected(
            "AUTH_TRUST_NOT_A_FILE", f"{relpath} {read.detail}", "make it a regular file"
        )
    return read.data


def root_files(config: TrustConfig, signers: AllowedSigners) -> tuple[bytes, bytes]:
    """The bytes of ``trust.toml`` and ``allowed_signers`` for ``config`` and ``signers``,
    checked as a reader checks them (what a reader would refuse is refused here)."""
    trust = render_trust(config)
    lines = "".join(e.allowed_signers_line() + "\n" for e in signers.entries)
    allowed = ("# principal [options] keytype key: see docs/authority.md\n" + lines).encode()
    build_root(trust, allowed, None, "0" * 40)
    return trust, allowed


def write_root_files(top: Path, trust: bytes, allowed: bytes) -> None:
    """Write the trust root's two files (from :func:`root_files`) into the working tree."""
    atomic_write_in(top, SIGNERS_RELPATH, allowed)
    atomic_write_in(top, TRUST_RELPATH, trust)


def _write_both(top: Path, config: TrustConfig, signers: AllowedSigners) -> None:
    write_root_files(top, *root_files(config, signers))


def init(top: Path, *, trust_branch: str, force: bool) -> None:
    """Write a trust root with no principals and signatures not yet required."""
    if not force:
        for rel in (TRUST_RELPATH, SIGNERS_RELPATH):
            if (top / rel).exists() or (top / rel).is_symlink():
                raise InputRejected(
                    "FILE_EXISTS", f"{rel} already exists", "pass --force to start over"
                )
    config = TrustConfig(False, trust_branch, False, {}, (), ())
    parse_trust(render_trust(config))  # the branch name obeys the reader's rule
    # The local trust branch is recorded in the git directory, where no commit reaches.
    record_trust_branch(top, trust_branch)
    _write_both(top, config, AllowedSigners(()))


def load_worktree(top: Path) -> tuple[TrustConfig, AllowedSigners]:
    """The working tree's trust files (both must exist: 'trust init' writes them)."""
    trust = _read(top, TRUST_RELPATH, MAX_TRUST_BYTES)
    signers = _read(top, SIGNERS_RELPATH, 256 * 1024)
    if trust is None or signers is None:
        raise InputRejected(
            "AUTH_TRUST_INCOMPLETE",
            f"{TRUST_RELPATH} or {SIGNERS_RELPATH} is missing in the working tree",
            "run 'plangate trust init' first",
        )
    return parse_trust(trust), parse_allowed_signers(signers)


def add(
    top: Path,
    principal: str,
    public_key: str,
    *,
    roles: list[str],
    human: bool,
    agent: bool,
    namespaces: list[str] | None,
    valid_after: str | None,
    valid_before: str | None,
) -> None:
    """Add ``principal`` with its key and roles (a principal already listed is refused)."""
    config, signers = load_worktree(top)
    _write_both(top, *with_principal(
        config, signers, principal, public_key, roles=roles, human=human, agent=agent,
        namespaces=namespaces, valid_after=valid_after, valid_before=valid_before))


def with_principal(
    config: TrustConfig,
    signers: AllowedSigners,
    principal: str,
    public_key: str,
    *,
    roles: list[str],
    human: bool,
    agent: bool,
    namespaces: list[str] | None = None,
    valid_after: str | None = None,
    valid_before: str | None = None,
) -> tuple[TrustConfig, AllowedSigners]:
    """``config`` and ``signers`` with ``principal`` added (nothing is written; a principal
    already listed is refused)."""
    if signers.by_principal(principal) is not None:
        raise InputRejected(
            "AUTH_SIGNERS_DUPLICATE_PRINCIPAL",
            f"{principal} is already in {SIGNERS_RELPATH}",
            "to rotate a key, edit its line (see docs/authority.md)",
        )
    key_type, key_b64, key = key_from_pub_line(public_key, "--key")
    where = "--valid-after/--valid-before"
    entry = SignerEntry(
        0,
        principal,
        key_type,
        key_b64,
        key,
        tuple(namespaces) if namespaces else None,
        parse_time(valid_after, where) if valid_after else None,
        parse_time(valid_before, where) if valid_before else None,
    )
    new_roles = dict(config.roles)
    for role in roles:
        new_roles[role] = (*new_roles.get(role, ()), principal)
    humans = (*config.humans, principal) if human else config.humans
    agents = (*config.agents, principal) if agent else config.agents
    new_config = config._replace(
        roles={r: new_roles[r] for r in ROLES if r in new_roles}, humans=humans, agents=agents
    )
    # Re-parse the rendered entry so the line obeys every reader rule.
    line = parse_allowed_signers(entry.allowed_signers_line().encode(), "--key").entries[0]
    return new_config, AllowedSigners((*signers.entries, line))


def set_required(top: Path, required: bool) -> None:
    """Turn required signatures on or off in the working tree's trust.toml."""
    config, signers = load_worktree(top)
    _write_both(top, config._replace(require_signatures=required), signers)
