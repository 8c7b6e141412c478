"""Signed ledger checkpoints, IO: sign and write one, find them, judge the chain against them.

Where checkpoints are kept: a **committed file**, ``.plangate/ledger-checkpoint.json``
and its ``.sig``, not a git ref. A commit travels with every clone and push, is
seen in review and in CI, and stays in history when the working tree loses it;
a ref under ``refs/plangate/`` is not fetched by default, shows in no review,
and ``git update-ref -d`` removes it without a trace. Checkpoints are read from
three places and the newest valid one is used: the working tree, HEAD's tree
and the tip of the trust branch (where deleting one needs a reviewed merge).

Where git cannot read the repository at all (another user's repository, no
repository), the committed places are skipped and named in the facts
(``checkpoints_unread``); the working tree's checkpoint still counts.

Each checkpoint found must verify (the signature rules, prefix
``LEDGER_CHECKPOINT``, namespace ``plangate-ledger``, any listed principal that
is not an agent, under the trust branch's root): a checkpoint that does not is
a failure of ``ledger verify``, never ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.errors import InputRejected
from plangate.ledger.checkpoint import (
    MAX_CHECKPOINT_BYTES,
    RELPATH,
    SIG_RELPATH,
    ChainSeen,
    Checkpoint,
    checkpoint_bytes,
    checkpoint_reasons,
    newest,
    parse_checkpoint,
)
from plangate.records import NamedTuple
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.authority.root import TrustRoot
    from plangate.git import Git
    from plangate.ledger.base import Ledger

_SIG_LIMIT = 16 * 1024


class Found(NamedTuple):
    """One checkpoint file as found: where, its bytes and its signature's (or None)."""

    where: str
    data: bytes
    signature: bytes | None


def _from_commit(git: Git, rev: str, where: str) -> Found | str | None:
    """The checkpoint committed at ``rev``; None when there is none, a message when git
    cannot read the repository at all (another owner, no repository)."""
    from plangate.git import GitError

    try:
        commit = git.resolve_commit(rev)
        present = {e.path for e in git.ls_tree(commit, [RELPATH, SIG_RELPATH])}
        if RELPATH not in present:
            return None
        data = git.read_blob(commit, RELPATH, MAX_CHECKPOINT_BYTES)
        sig = git.read_blob(commit, SIG_RELPATH, _SIG_LIMIT) if SIG_RELPATH in present else None
    except GitError as exc:
        if exc.code in ("GIT_COMMIT_UNKNOWN", "GIT_HEAD_UNBORN"):
            return None
        return f"{where}: {exc.code}"
    return Found(f"{RELPATH} at {where} ({commit[:12]})", data, sig)


def _from_worktree(root: Path) -> Found | None:
    from plangate.fsutil import FileState, read_below

    read = read_below(root, RELPATH, MAX_CHECKPOINT_BYTES)
    if read.state is FileState.MISSING:
        return None
    if not read.ok or read.data is None:
        return Found(f"{RELPATH} in the working tree ({read.detail})", b"", None)
    sig = read_below(root, SIG_RELPATH, _SIG_LIMIT)
    return Found(f"{RELPATH} in the working tree", read.data, sig.data if sig.ok else None)


def find_checkpoints(root: Path, trust_branch: str) -> tuple[list[Found], list[str]]:
    """Every distinct checkpoint file (working tree, HEAD, the trust branch's tip), and the
    places git could not read."""
    from plangate.git import Git

    git = Git(root)
    found = [
        _from_worktree(root),
        _from_commit(git, "HEAD", "HEAD"),
        _from_commit(git, f"refs/heads/{trust_branch}", trust_branch),
    ]
    seen: set[tuple[bytes, bytes | None]] = set()
    out: list[Found] = []
    unread = [item for item in found if isinstance(item, str)]
    for item in found:
        if isinstance(item, Found) and (item.data, item.signature) not in seen:
            seen.add((item.data, item.signature))
            out.append(item)
    return out, unread


def check_found(found: Found, trust: TrustRoot | None) -> Checkpoint | Reason:
    """The checkpoint when it parses and its signature verifies, else the reason."""
    from plangate.authority.consumer import check_detached
    from plangate.authority.root import NAMESPACE_LEDGER
    from plangate.authority.verify import Verified

    parsed = parse_checkpoint(found.data)
    if isinstance(parsed, str):
        return Reason(
            "LEDGER_CHECKPOINT_MALFORMED",
            f"{found.where}: {parsed}",
            "sign a new checkpoint: plangate ledger checkpoint --sign KEY",
        )
    if trust is None:
        return Reason(
            "LEDGER_CHECKPOINT_SIGNER_UNKNOWN",
            f"{found.where}: there is no trust root to name its signer",
            "commit a trust root on the trust branch (plangate trust init, add)",
        )
    check = check_detached(
        trust,
        found.data,
        found.signature,
        namespace=NAMESPACE_LEDGER,
        prefix="LEDGER_CHECKPOINT",
        label=found.where + ".sig",
    )
    if not isinstance(check, Verified):
        return check
    if check.principal != parsed.principal:
        return Reason(
            "LEDGER_CHECKPOINT_PRINCIPAL_MISMATCH",
            f"{found.where} names {parsed.principal} but {check.principal} signed it",
            "each signer signs their own checkpoint",
        )
    return parsed


def _trust(root: Path) -> tuple[TrustRoot | None, str, Reason | None]:
    """The trust branch's root and name, or why it cannot be read (only then a problem)."""
    from plangate.authority.source import local_root
    from plangate.authority.trustpaths import DEFAULT_TRUST_BRANCH
    from plangate.errors import PlanGateError
    from plangate.git import Git

    try:
        local = local_root(Git(root), root)
    except PlanGateError as exc:
        return None, DEFAULT_TRUST_BRANCH, Reason(exc.code, exc.message, exc.hint)
    return local.root, local.branch, None


def verify_against_checkpoints(ledger: Ledger, root: Path, anchor: str | None) -> Result:
    """``ledger verify``: the chain, then the chain against the newest valid checkpoint.

    Without any checkpoint file the result is the chain's alone (``checkpoint``
    null in the facts). A checkpoint that does not verify, or a chain behind or
    beside the newest one, is ``TAMPERED``.
    """
    trust, branch, unreadable = _trust(root)
    found, unread = find_checkpoints(root, branch)
    checked = [check_found(item, trust) for item in found]
    problems = [c for c in checked if isinstance(c, Reason)]
    if found and unreadable is not None:  # checkpoints exist but nothing can vouch for them
        problems = [unreadable]
        checked = []
    best = newest(c for c in checked if isinstance(c, Checkpoint))
    if best is None:
        result = ledger.verify(anchor=anchor)
        reasons = list(result.reasons)
    elif anchor is None:  # one pass: the checkpoint's head is the anchor
        result = ledger.verify(anchor=best.head)
        reasons = [r for r in result.reasons if r.code != _ANCHOR_MISSING]
        reasons += _against(best, result, head_present=result.accepted)
    else:
        result = ledger.verify(anchor=anchor)
        reasons = list(result.reasons)
        if _consistent(result):
            reasons += _against(best, result, head_present=ledger.verify(anchor=best.head).accepted)
    facts: dict[str, Any] = dict(result.facts)
    facts["checkpoint"] = None if best is None else dict(best._asdict())
    if unread:  # said, never silent: committed checkpoints there were not seen
        facts["checkpoints_unread"] = unread
    reasons += problems
    if not reasons:
        return Result(result.verdict, (), facts)
    return Result("TAMPERED", tuple(reasons), facts)


_ANCHOR_MISSING = "LEDGER_ANCHOR_MISSING"


def _consistent(result: Result) -> bool:
    """The chain itself verified (an anchor it lacks aside)."""
    return all(r.code == _ANCHOR_MISSING for r in result.reasons)


def _against(best: Checkpoint, result: Result, *, head_present: bool) -> list[Reason]:
    """The checkpoint rules over a consistent chain (a broken chain is reported as it is)."""
    if not _consistent(result):
        return []
    kinds = result.facts.get("kinds")
    seen = ChainSeen(
        int(result.facts.get("entries") or 0),
        head_present,
        isinstance(kinds, Mapping) and bool(kinds.get("ledger_reinitialised")),
    )
    return checkpoint_reasons(best, seen)


def write_checkpoint(root: Path, env: Mapping[str, str], key: Path) -> tuple[str, Checkpoint]:
    """Sign ``{seq, head, time}`` of the verified ledger; write the file and its signature."""
    from plangate.authority.root import NAMESPACE_LEDGER
    from plangate.authority.signing import principal_of_key
    from plangate.authority.sshkeygen import sign
    from plangate.clock import utc_now_text
    from plangate.fsutil import atomic_write_in
    from plangate.ledger import open_ledger

    with open_ledger(root, env, create=False) as ledger:
        result = ledger.verify()
        location = ledger.location
    if not result.accepted:
        raise InputRejected(
            "LEDGER_TAMPERED",
            f"ledger {location} does not verify: nothing is checkpointed",
            "investigate with 'plangate ledger verify'; restore from a verified export",
        )
    entries, head = result.facts.get("entries"), result.facts.get("head_hash")
    if not isinstance(entries, int) or entries < 1 or not isinstance(head, str):
        raise InputRejected(
            "LEDGER_EMPTY", f"ledger {location} has no entries", "checkpoint a ledger in use"
        )
    checkpoint = Checkpoint(entries, head, utc_now_text(), principal_of_key(root, key))
    data = checkpoint_bytes(checkpoint)
    signature = sign(key, NAMESPACE_LEDGER, data)
    atomic_write_in(root, RELPATH, data)
    atomic_write_in(root, SIG_RELPATH, signature)
    return RELPATH, checkpoint
