"""git ``pre-commit`` and ``pre-push`` checks: effects, not tool names.

Whatever tool wrote a file (an editor tool, a shell, an MCP server, a
subagent the host did not hook), the change reaches history only through a
commit and leaves the machine only through a push. Both hooks run the same
decision as the agent hooks over the paths that change:

- ``pre-commit``: the staged paths (``git diff --cached`` against HEAD) of the
  index the commit records: the one named by ``GIT_INDEX_FILE``, which git sets
  for ``commit -a``, ``commit <paths>``, ``--only`` and ``--include`` (relative
  names are relative to the working tree root, where git runs its hooks);
- ``pre-push``: for every pushed ref, the paths changed between the remote's
  commit and the pushed commit. A new branch is compared with the nearest
  commit already on a remote (``git rev-list --boundary <sha> --not
  --remotes``); with no remote commit at all, with the empty tree.

git's own protocol: exit 0 lets the commit or push happen, any other exit
code stops it; the reason goes to stderr. Every failure stops it (exit 1).
A human who must commit anyway uses ``git commit --no-verify`` (the agent
hooks deny that flag to agents); CI checks the pull request regardless.
"""

# ruff: noqa: PTH117, PTH118
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from plangate.hooks.hosts.protocol import HookOutput, fail_closed, reason_text
from plangate.verdict import Result

ZERO_SHA_CHARS = frozenset("0")


def _deny(result: Result, label: str) -> HookOutput:
    return HookOutput("", reason_text(result, label) + "\n", 1)


def _output(result: Result, label: str) -> HookOutput:
    if result.accepted:
        return HookOutput("", "", 0)
    return _deny(result, label)


def pre_commit(cwd: Path, env: Mapping[str, str]) -> HookOutput:
    """Check the staged paths; never raises."""
    label = "git commit"

    def run() -> HookOutput:
        from plangate.git import Git
        from plangate.hooks.service import HookEvent, HookRequest, evaluate

        index = env.get("GIT_INDEX_FILE") or None
        if index is not None and not os.path.isabs(index):
            index = os.path.join(str(cwd), index)
        staged = Git(cwd).staged_paths(index)
        if not staged:
            return HookOutput("", "", 0)
        request = HookRequest(
            "git",
            HookEvent.COMMIT,
            str(cwd.resolve()),
            "pre-commit",
            canonical_targets=tuple(staged),
        )
        return _output(evaluate(request, env), label)

    return fail_closed(run, lambda r: _deny(r, label))


def _is_zero(sha: str) -> bool:
    return bool(sha) and set(sha) <= ZERO_SHA_CHARS


def pushed_paths(cwd: Path, stdin: bytes) -> list[str]:
    """Paths changed by the refs git is about to push (pre-push stdin lines)."""
    from plangate.errors import InputRejected
    from plangate.git import Git

    git = Git(cwd)
    paths: set[str] = set()
    for raw_line in stdin.decode("utf-8", "strict").splitlines():
        if not raw_line.strip():
            continue
        parts = raw_line.split()
        if len(parts) != 4:
            raise InputRejected(
                "HOOK_PUSH_INPUT_INVALID",
                f"unexpected pre-push line {raw_line!r}",
                "git passes '<local ref> <local sha> <remote ref> <remote sha>'",
            )
        _local_ref, local_sha, _remote_ref, remote_sha = parts
        if _is_zero(local_sha):
            continue  # deleting a remote ref changes no file
        local = git.resolve_commit(local_sha)
        if not _is_zero(remote_sha) and git.commit_exists(remote_sha):
            base = git.resolve_commit(remote_sha)
        else:
            proc = git.run(["rev-list", "--boundary", local, "--not", "--remotes"])
            boundary = [
                line[1:] for line in proc.stdout.decode().splitlines() if line.startswith("-")
            ]
            base = boundary[0] if boundary else git.empty_tree()
        paths.update(git.changed_paths(base, local))
    return sorted(paths)


def pre_push(cwd: Path, stdin: bytes, env: Mapping[str, str]) -> HookOutput:
    """Check the pushed range; never raises."""
    label = "git push"

    def run() -> HookOutput:
        from plangate.hooks.service import HookEvent, HookRequest, evaluate

        paths = pushed_paths(cwd, stdin)
        if not paths:
            return HookOutput("", "", 0)
        request = HookRequest(
            "git", HookEvent.PUSH, str(cwd.resolve()), "pre-push", canonical_targets=tuple(paths)
        )
        return _output(evaluate(request, env), label)

    return fail_closed(run, lambda r: _deny(r, label))
