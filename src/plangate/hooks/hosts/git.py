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
  commit and the pushed commit. A new branch is compared with every commit where
  it meets a remote (``git rev-list --boundary <sha> --not --remotes``; the union
  over all of them); with no remote commit at all, with the empty tree. Under the
  pre-commit framework, which reads git's stdin itself, the range is
  ``PRE_COMMIT_FROM_REF..PRE_COMMIT_TO_REF`` (one range per run, the one the
  framework presents); with neither set but ``PRE_COMMIT_LOCAL_BRANCH``,
  ``PRE_COMMIT_REMOTE_BRANCH`` or ``PRE_COMMIT_REMOTE_NAME`` set, the local branch
  is judged as a new branch.

Two changes pass by the rule ``ci check`` applies to them: the adoption of
PlanGate (:func:`adopts`: no base commit holds the protected-surfaces file and the
change touches only the adoption files), and a task's approval parts that verify
for their own task (:mod:`plangate.approval.parts`, judged in the decision).

For a person (no agent or automation marker in the environment), a refusal is then
held against the verdict ``ci check`` will give the same change
(:mod:`plangate.hooks.ci_preview`): what CI rejects stays refused; what CI hands to a
human (protected surfaces, host hook configuration, the policy file, a path a
``human = true`` policy rule lets through) is allowed with a notice on stderr
("CI will ask a human to approve: ..."), and a path the base's ``.plangate/policy.toml``
lets through without a human needs no task. The git hook is never the boundary: CI is.

git's own protocol: exit 0 lets the commit or push happen, any other exit
code stops it; the reason goes to stderr. Every failure stops it (exit 1).
"""

# ruff: noqa: PTH117, PTH118
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from plangate.hooks.ci_preview import ChangeRange
from plangate.hooks.hosts.protocol import HookOutput, fail_closed, reason_text
from plangate.records import NamedTuple
from plangate.verdict import Result

if TYPE_CHECKING:
    import subprocess

    from plangate.git import Git

ZERO_SHA_CHARS = frozenset("0")


HUMAN_NOTE = """
PlanGate stopped this {what} (the {paths} were judged).
  - see why:                 plangate status; plangate task show
  - work on an approved task: plangate task start TASK-XXXX, then {what} again
  - a change without a task: a rule in .plangate/policy.toml on the base branch lets it
    through, as it lets the pull request through in CI
"""
"""What a person reads under the reasons: git's hooks run for humans as well as agents."""


def _deny(result: Result, label: str) -> HookOutput:
    what, paths = ("push", "pushed paths") if "push" in label else ("commit", "staged paths")
    note = HUMAN_NOTE.format(what=what, paths=paths)
    kept = result.facts.get("person_rule")
    if kept:  # why CI's verdict does not let a person through either
        note += f"  - held against CI's verdict: {kept}\n"
    return HookOutput("", reason_text(result, label) + "\n" + note, 1)


def _adoption_notice(result: Result) -> tuple[str, ...]:
    """What a person reads when the adoption passes: CI hands its pull request to a human."""
    if not result.facts.get("adopts_plangate"):
        return ()
    from plangate.delivery.ci import adoption_reason

    targets = tuple(t for t in result.facts.get("targets", ()) if isinstance(t, str))
    reason = adoption_reason(targets)
    return (f"CI will ask a human to approve: {reason.code}: {reason.message}",)


def _output(result: Result, label: str) -> HookOutput:
    if result.accepted:
        notice = result.facts.get("person_notice") or _adoption_notice(result)
        if not notice:
            return HookOutput("", "", 0)
        head = f"PlanGate lets this {label} through: CI, not this hook, decides"
        return HookOutput("", "\n".join([head + ":", *(f"- {line}" for line in notice)]) + "\n", 0)
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
        git = Git(cwd)
        staged = git.staged_paths(index)
        if not staged:
            return HookOutput("", "", 0)
        head = git.run(["rev-parse", "--verify", "-q", "HEAD^{commit}"], ok_codes=(0, 1))
        bases = [head.stdout.decode().strip()] if head.returncode == 0 else []
        from plangate.approval.parts import part_of

        # Approval parts are verified in the working tree: one whose staged bytes differ
        # is not the file that verified.
        parts = [p for p in staged if part_of(p) is not None]
        request = HookRequest(
            "git",
            HookEvent.COMMIT,
            str(cwd.resolve()),
            "pre-commit",
            canonical_targets=tuple(staged),
            adoption=adopts(git, staged, bases),
            unlike_worktree=tuple(git.unstaged_paths(parts, index)),
            change=ChangeRange(tuple(bases), (), index),
        )
        return _output(evaluate(request, env), label)

    return fail_closed(run, lambda r: _deny(r, label))


def adopts(git: Git, paths: list[str], bases: list[str]) -> bool:
    """Does this change adopt PlanGate (``ci check``'s rule)? No base commit holds the
    protected-surfaces file (``bases``: where the change starts; none for a first commit)."""
    from plangate.delivery.ci import ADOPTION_REQUIRED, adoption_change

    if ADOPTION_REQUIRED not in paths:
        return False
    adopted = any(git.ls_tree(base, [ADOPTION_REQUIRED]) for base in bases)
    return adoption_change(tuple(paths), adopted)


def _is_zero(sha: str) -> bool:
    return bool(sha) and set(sha) <= ZERO_SHA_CHARS


class PushedRange(NamedTuple):
    """What a push brings: the changed paths, the commits they are changed against, and
    the commits pushed."""

    paths: set[str]
    bases: list[str]
    heads: list[str]

    def change(self) -> ChangeRange:
        """Where the push starts and ends, each commit once (every ref's, together)."""
        return ChangeRange(tuple(dict.fromkeys(self.bases)), tuple(dict.fromkeys(self.heads)))


def _new_branch_range(git: Git, local: str) -> PushedRange:
    """Paths a new branch brings: changed against every commit where it meets a remote
    (``git rev-list --boundary <sha> --not --remotes``), or against the empty tree."""
    proc = git.run(["rev-list", "--boundary", local, "--not", "--remotes"])
    lines = proc.stdout.decode().splitlines()
    if not lines:
        return PushedRange(set(), [], [])  # every commit is already on a remote: nothing new
    boundaries = [line[1:] for line in lines if line.startswith("-")]
    paths: set[str] = set()
    for boundary in boundaries or [git.empty_tree()]:
        paths.update(git.changed_paths(boundary, local))
    return PushedRange(paths, boundaries, [local])


def _range(git: Git, local_sha: str, remote_sha: str) -> PushedRange:
    """Paths changed from the remote's commit to ``local_sha`` (a new branch: see above)."""
    local = git.resolve_commit(local_sha)
    if remote_sha and not _is_zero(remote_sha) and git.commit_exists(remote_sha):
        remote = git.resolve_commit(remote_sha)
        return PushedRange(set(git.changed_paths(remote, local)), [remote], [local])
    return _new_branch_range(git, local)


FRAMEWORK_RANGE = ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF")
FRAMEWORK_PUSH = ("PRE_COMMIT_LOCAL_BRANCH", "PRE_COMMIT_REMOTE_BRANCH", "PRE_COMMIT_REMOTE_NAME")
"""What the pre-commit framework sets for a ``pre-push`` hook instead of git's stdin."""


def framework_paths(cwd: Path, env: Mapping[str, str]) -> list[str] | None:
    """Paths of the range the pre-commit framework presents, or None when it is not running
    (see :func:`framework_range`)."""
    found = framework_range(cwd, env)
    return None if found is None else sorted(found.paths)


def framework_range(cwd: Path, env: Mapping[str, str]) -> PushedRange | None:
    """The range the pre-commit framework presents, or None when it is not running.

    The framework reads git's stdin itself and hands its hooks one range:
    ``PRE_COMMIT_FROM_REF..PRE_COMMIT_TO_REF``. With no range (a branch whose commits
    reach no remote, pushed with ``--all-files``), the local branch (or HEAD) is judged
    as a new branch.
    """
    from plangate.errors import InputRejected
    from plangate.git import Git

    to_ref = env.get("PRE_COMMIT_TO_REF", "")
    from_ref = env.get("PRE_COMMIT_FROM_REF", "")
    pushing = any(env.get(name) for name in FRAMEWORK_PUSH)
    if not to_ref and not from_ref and not pushing:
        return None
    git = Git(cwd)
    if from_ref and not to_ref:
        raise InputRejected(
            "HOOK_PUSH_INPUT_INVALID",
            "PRE_COMMIT_FROM_REF is set without PRE_COMMIT_TO_REF",
            "run the hook from the pre-commit framework's pre-push stage",
        )
    if to_ref:
        return _range(git, to_ref, from_ref)
    local = env.get("PRE_COMMIT_LOCAL_BRANCH") or "HEAD"
    return _new_branch_range(git, git.resolve_commit(local))


def pushed_paths(cwd: Path, stdin: bytes) -> list[str]:
    """Paths changed by the refs git is about to push (pre-push stdin lines)."""
    return sorted(pushed_range(cwd, stdin).paths)


def pushed_range(cwd: Path, stdin: bytes) -> PushedRange:
    """The paths the refs git is about to push change, and the commits they start from."""
    from plangate.errors import InputRejected
    from plangate.git import Git

    git = Git(cwd)
    out = PushedRange(set(), [], [])
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
        found = _range(git, local_sha, remote_sha)
        out.paths.update(found.paths)
        out.bases.extend(found.bases)
        out.heads.extend(found.heads)
    return out


def pre_push(cwd: Path, stdin: bytes, env: Mapping[str, str]) -> HookOutput:
    """Check the pushed range; never raises."""
    label = "git push"

    def run() -> HookOutput:
        from plangate.git import Git
        from plangate.hooks.service import HookEvent, HookRequest, evaluate

        found = pushed_range(cwd, stdin) if stdin.strip() else None
        if found is None:
            found = framework_range(cwd, env) or PushedRange(set(), [], [])
        if not found.paths:
            return HookOutput("", "", 0)
        paths = sorted(found.paths)
        request = HookRequest(
            "git", HookEvent.PUSH, str(cwd.resolve()), "pre-push",
            canonical_targets=tuple(paths), adoption=adopts(Git(cwd), paths, found.bases),
            change=found.change(),
        )
        return _output(evaluate(request, env), label)

    return fail_closed(run, lambda r: _deny(r, label))


def answer(entry: str, data: bytes, cwd: Path, env: Mapping[str, str]) -> HookOutput:
    """The table's entry points: ``git-pre-commit`` (no input) and ``git-pre-push``
    (git's ref lines on ``data``)."""
    if entry == "git-pre-commit":
        return pre_commit(cwd, env)
    return pre_push(cwd, data, env)


def judge_deny(proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did PlanGate stop git? A non-zero exit carrying its reason."""
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    ours = "PlanGate denied" in out or "PlanGate denied" in err
    first_err = err.splitlines()[0][:160] if err else ""
    if proc.returncode != 0 and ours:
        return True, f"exit {proc.returncode} (stops git)"
    if proc.returncode != 0:
        return False, f"exit {proc.returncode} but not from PlanGate: {first_err}"
    return False, "exit 0 (git goes on)"
