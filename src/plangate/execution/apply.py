"""Apply is the boundary: judge an isolated run's result, and only then let it reach the repository.

:func:`judge` (pure) decides with the rules of ``ci check``
(:func:`plangate.delivery.ci.decide`, the one home of the scope, protected-
surface and path rules: the approved commit plays the base, the recorded
result the head, the task the one verified task) followed by :data:`RULES`,
exec's own rows:

1. ``plan_package_untouched``: no changed path lies in a task directory
   (``docs/working/TASK-XXXX/``) or in ``.plangate/``
   (``EXEC_PLAN_PACKAGE_CHANGED``): what judges the run is never changed by it.
2. the rows of :data:`FILE_KIND_RULES`: every changed path of the result is a
   regular file (git mode 100644 or 100755) and the workspace holds nothing git
   would drop or record as something other than a file. A reviewer reads a
   patch; a link (``EXEC_RESULT_SYMLINK_ESCAPES``, ``EXEC_RESULT_SYMLINK``), a
   gitlink (``EXEC_RESULT_GITLINK``), a nested repository
   (``EXEC_RESULT_NESTED_REPOSITORY``), a FIFO, socket or device
   (``EXEC_RESULT_FIFO``, ``EXEC_RESULT_SOCKET``, ``EXEC_RESULT_DEVICE``), a
   directory PlanGate cannot read (``EXEC_RESULT_UNREADABLE``) or any other mode
   (``EXEC_RESULT_MODE_UNSUPPORTED``) is not a file a reviewer can see. The plan
   names paths, not kinds of file, so no link is allowed, wherever it points.

The facts are PlanGate's own: the modes and link targets of the tree it built
from the workspace (:func:`tree_facts`) and an ``lstat`` walk of the workspace
before it is removed (:func:`workspace_facts`), never what the command reports.

The verdict is the strictest one: ``REJECTED`` (exit 1) or ``HUMAN_REQUIRED``
(exit 3) keep the patch and the reasons for a human under the run's directory
and nothing reaches the repository; ``ACCEPTED`` lets :func:`apply_result`
fetch the result into a branch named for the task and run, and fast-forward the
current branch when it is still at the approved commit with no tracked file
changed and the command succeeded.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plangate.delivery import ci
from plangate.errors import EnvironmentFailure
from plangate.git import Git, GitError
from plangate.paths import CanonicalPath, link_leaves_repository
from plangate.records import NamedTuple
from plangate.surfaces import ResolvedSurfaces
from plangate.verdict import Reason, Result

REJECTED = ci.REJECTED
HUMAN_REQUIRED = ci.HUMAN_REQUIRED
ACCEPTED = ci.ACCEPTED

BRANCH_PREFIX = "plangate/runs"
"""Results reach the repository as ``plangate/runs/<run id>``."""

_LISTED = 8


class TreeFact(NamedTuple):
    """One changed path of the result tree: its git mode and, for a link, its target."""

    path: str
    mode: str
    target: bytes | None


class WorkspaceFact(NamedTuple):
    """One entry of the workspace git would not record as a file (see :data:`SPECIAL_KINDS`)."""

    path: str
    kind: str


SPECIAL_KINDS = ("nested_repository", "fifo", "socket", "device", "unreadable")
"""What :func:`workspace_facts` reports (``kind`` of a :class:`WorkspaceFact`)."""

REGULAR_MODES = frozenset(("100644", "100755"))
"""The git modes of a file a reviewer can read in a patch."""
LINK_MODE = "120000"
GITLINK_MODE = "160000"


class ResultFacts(NamedTuple):
    """Everything :func:`judge` reads (gathered by the isolated run).

    ``tree`` holds every changed path still present in the result (deleted ones
    have no mode), ``workspace`` what the walk of the workspace found.
    """

    task_id: str
    approved: str
    result: str
    changed: tuple[CanonicalPath, ...]
    unmatchable: tuple[tuple[str, str], ...]
    surfaces: ResolvedSurfaces
    verification: Result
    plan: bytes | None
    tree: tuple[TreeFact, ...]
    workspace: tuple[WorkspaceFact, ...]


def _plan_package_untouched(facts: ResultFacts) -> tuple[Reason, ...]:
    touched: list[str] = [
        p
        for p in facts.changed
        if ci.TASK_PATH_RE.fullmatch(p) or p == ".plangate" or p.startswith(".plangate/")
    ]
    touched += [
        raw for raw, _ in facts.unmatchable if raw.startswith(("docs/working/", ".plangate/"))
    ]
    if not touched:
        return ()
    return (
        Reason(
            "EXEC_PLAN_PACKAGE_CHANGED",
            f"the run changed {len(touched)} path(s) of a plan package or of PlanGate's "
            "own directory: " + ", ".join(touched[:_LISTED]),
            "plan packages and .plangate/ change outside a run, reviewed by a human",
            tuple(touched),
        ),
    )


def _found(
    code: str, what: str, hint: str, paths: list[str], details: list[str] | None = None
) -> tuple[Reason, ...]:
    if not paths:
        return ()
    shown = details if details is not None else paths
    return (
        Reason(
            code,
            f"the result holds {len(paths)} {what}: " + ", ".join(shown[:_LISTED]),
            hint + "; nothing reached the repository, the patch is kept for a human",
            tuple(paths),
        ),
    )


def _links(facts: ResultFacts, *, leaving: bool) -> list[TreeFact]:
    return [
        t
        for t in facts.tree
        if t.mode == LINK_MODE
        and link_leaves_repository(t.path, t.target if t.target is not None else b"") == leaving
    ]


def _no_escaping_links(facts: ResultFacts) -> tuple[Reason, ...]:
    found = _links(facts, leaving=True)
    return _found(
        "EXEC_RESULT_SYMLINK_ESCAPES",
        "symbolic link(s) pointing outside the repository",
        "a link shows its target's bytes to whoever opens it, not to the reviewer: "
        "write the file itself",
        [t.path for t in found],
        [f"{t.path} -> {(t.target or b'').decode('utf-8', 'replace')}" for t in found],
    )


def _no_links(facts: ResultFacts) -> tuple[Reason, ...]:
    found = _links(facts, leaving=False)
    return _found(
        "EXEC_RESULT_SYMLINK",
        "symbolic link(s)",
        "a plan names paths, not links: write a regular file, or add the link yourself "
        "outside the run",
        [t.path for t in found],
        [f"{t.path} -> {(t.target or b'').decode('utf-8', 'replace')}" for t in found],
    )


def _no_gitlinks(facts: ResultFacts) -> tuple[Reason, ...]:
    return _found(
        "EXEC_RESULT_GITLINK",
        "gitlink(s) (a commit of another repository)",
        "a gitlink lands another repository's commit unseen: add submodules yourself",
        [t.path for t in facts.tree if t.mode == GITLINK_MODE],
    )


def _other_modes(facts: ResultFacts) -> tuple[Reason, ...]:
    odd = [t for t in facts.tree if t.mode not in (*REGULAR_MODES, LINK_MODE, GITLINK_MODE)]
    return _found(
        "EXEC_RESULT_MODE_UNSUPPORTED",
        "path(s) with a git mode other than 100644 or 100755",
        "only regular files (644) and executables (755) land",
        [t.path for t in odd],
        [f"{t.path} ({t.mode})" for t in odd],
    )


def _workspace_kind(kind: str, code: str, what: str, hint: str) -> Callable[
    [ResultFacts], tuple[Reason, ...]
]:
    def check(facts: ResultFacts) -> tuple[Reason, ...]:
        return _found(code, what, hint, [w.path for w in facts.workspace if w.kind == kind])

    return check


class Rule(NamedTuple):
    """One of exec's own rows: its name, the verdict it gives when it fails, its check."""

    name: str
    verdict: str
    check: Callable[[ResultFacts], tuple[Reason, ...]]


FILE_KIND_RULES: tuple[Rule, ...] = (
    Rule("no_links_leaving_the_repository", REJECTED, _no_escaping_links),
    Rule("no_links", REJECTED, _no_links),
    Rule("no_gitlinks", REJECTED, _no_gitlinks),
    Rule(
        "no_nested_repositories",
        REJECTED,
        _workspace_kind(
            "nested_repository",
            "EXEC_RESULT_NESTED_REPOSITORY",
            "nested repositor(ies) (a directory holding .git)",
            "git records another repository as a gitlink or drops it: clone it yourself",
        ),
    ),
    Rule(
        "no_fifos",
        REJECTED,
        _workspace_kind(
            "fifo", "EXEC_RESULT_FIFO", "FIFO(s)", "git cannot record a FIFO: remove it"
        ),
    ),
    Rule(
        "no_sockets",
        REJECTED,
        _workspace_kind(
            "socket", "EXEC_RESULT_SOCKET", "socket(s)", "git cannot record a socket: remove it"
        ),
    ),
    Rule(
        "no_devices",
        REJECTED,
        _workspace_kind(
            "device", "EXEC_RESULT_DEVICE", "device node(s)", "git cannot record a device"
        ),
    ),
    Rule(
        "workspace_readable",
        REJECTED,
        _workspace_kind(
            "unreadable",
            "EXEC_RESULT_UNREADABLE",
            "director(ies) PlanGate could not read",
            "what PlanGate cannot read it cannot judge: leave every directory readable",
        ),
    ),
    Rule("regular_modes", REJECTED, _other_modes),
)
"""What the result may hold: regular files only, each row with its own reason code."""

RULES: tuple[Rule, ...] = (
    Rule("plan_package_untouched", REJECTED, _plan_package_untouched),
    *FILE_KIND_RULES,
)
"""Exec's rows, judged after every row of :data:`plangate.delivery.ci.RULES`."""


def pull_request_facts(facts: ResultFacts) -> ci.PullRequestFacts:
    """The run's result as the pull request ``ci check`` would judge."""
    task = ci.TaskFacts(facts.task_id, None, facts.verification, facts.plan, ())
    return ci.PullRequestFacts(
        base=facts.approved,
        head=facts.result,
        checked_out=facts.result,
        changed=facts.changed,
        surfaces=facts.surfaces,
        tasks=(task,),
        merge_base=facts.approved,
        unmatchable=facts.unmatchable,
    )


def judge(facts: ResultFacts) -> Result:
    """``ci check``'s rules, then :data:`RULES`; every failing row is listed (pure)."""
    ci_result = ci.decide(pull_request_facts(facts))
    failed = [(rule, reasons) for rule in RULES if (reasons := rule.check(facts))]
    verdicts = {ci_result.verdict, *(rule.verdict for rule, _ in failed)}
    verdict = next((v for v in (REJECTED, HUMAN_REQUIRED) if v in verdicts), ACCEPTED)
    reasons = (*ci_result.reasons, *(r for _, found in failed for r in found))
    out: dict[str, Any] = dict(ci_result.facts)
    out["exec_rules"] = [rule.name for rule, _ in failed]
    return Result(verdict, reasons, out)


def tree_facts(git: Git, result: str, changed: tuple[str, ...]) -> tuple[TreeFact, ...]:
    """The modes (and link targets) of ``changed`` paths in the tree PlanGate built."""
    wanted = set(changed)
    entries = [e for e in git.ls_tree(result) if e.path in wanted]
    links = [e for e in entries if e.mode == LINK_MODE]
    objects = git.read_objects([e.object_id for e in links]) or [None] * len(links)
    targets = {
        e.path: (obj.data if obj is not None else None)
        for e, obj in zip(links, objects, strict=True)
    }
    # A target git did not hand over is judged as leaving the repository (fail closed).
    return tuple(TreeFact(e.path, e.mode, targets.get(e.path, b"")) for e in entries)


def _special_kind(mode: int) -> str | None:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return None


def _walk(tree: Path) -> list[WorkspaceFact]:
    """Every nested repository, special file and unreadable directory (links never followed)."""
    found: list[WorkspaceFact] = []
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(tree / rel if rel else tree) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            found.append(WorkspaceFact(rel, "unreadable"))
            continue
        if rel and any(e.name == ".git" for e in entries):
            found.append(WorkspaceFact(rel, "nested_repository"))
            continue  # what lies inside another repository is that repository's
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if path == ".git":
                continue  # the workspace's own repository, read-only in the box
            try:
                # The directory listing's own type answers for files, links and
                # directories without a system call; anything else is lstat'ed.
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                found.append(WorkspaceFact(path, "unreadable"))
                continue
            if stat.S_ISDIR(mode):
                pending.append(path)
            elif (kind := _special_kind(mode)) is not None:
                found.append(WorkspaceFact(path, kind))
    return found


def workspace_facts(tree: Path, git: Git) -> tuple[WorkspaceFact, ...]:
    """What an ``lstat`` walk of the workspace finds that git would not record as a file.

    Entries git ignores are left out: they never reach the result (a virtual
    environment's links, a build directory's sockets). Run before the workspace
    is removed.
    """
    found = _walk(tree)
    if not found:
        return ()
    names = b"".join(f.path.encode("utf-8", "surrogateescape") + b"\x00" for f in found)
    try:
        proc = git.run(
            [f"--work-tree={tree}", "check-ignore", "--stdin", "-z"],
            ok_codes=(0, 1),
            input_data=names,
        )
    except GitError as exc:
        raise EnvironmentFailure(
            "EXEC_APPLY_FAILED",
            f"cannot tell which workspace entries git ignores: {exc.message}",
            "the patch is kept in the run's directory",
        ) from None
    ignored = {p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\x00") if p}
    return tuple(f for f in found if f.path not in ignored)


class Applied(NamedTuple):
    """Where an accepted result reached the repository."""

    branch: str
    fast_forwarded: bool
    note: str


def branch_for(run_id: str) -> str:
    """The branch an accepted result is written to."""
    return f"{BRANCH_PREFIX}/{run_id}"


def apply_result(
    root: Path,
    state_git: Path,
    result: str,
    approved: str,
    run_id: str,
    *,
    succeeded: bool,
    source_ref: str = "refs/heads/result",
) -> Applied:
    """Fetch ``result`` into its run branch; fast-forward the current branch when allowed.

    ``source_ref`` is the ref of ``state_git`` that names ``result`` (a partial
    apply lands its own commit from another ref of the run's repository).
    """
    git = Git(root)
    branch = branch_for(run_id)
    try:
        git.run(
            [
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "-q",
                str(state_git),
                f"{source_ref}:refs/heads/{branch}",
            ]
        )
        fetched = git.resolve_commit(f"refs/heads/{branch}")
    except GitError as exc:
        raise EnvironmentFailure(
            "EXEC_APPLY_FAILED",
            f"the result could not be written to {branch}: {exc.message}",
            "the patch is kept in the run's directory",
        ) from None
    if fetched != result:
        raise EnvironmentFailure(
            "EXEC_APPLY_FAILED",
            f"{branch} names {fetched[:12]}, not the result {result[:12]}",
            "remove the branch and retry",
        )
    if not succeeded:
        return Applied(
            branch, False, "the command did not succeed: the current branch is left where it was"
        )
    state = git.head_state()
    if state.commit != approved or state.branch is None:
        return Applied(branch, False, "the current branch moved away from the approved commit")
    changed = git.run(
        ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=none"]
    ).stdout
    if changed:
        return Applied(branch, False, "tracked files of the working tree have changes")
    try:
        git.run(["merge", "--ff-only", "-q", "--no-edit", result])
    except GitError as exc:
        return Applied(branch, False, f"fast-forward refused: {exc.message[:200]}")
    return Applied(branch, True, f"{state.branch.removeprefix('refs/heads/')} fast-forwarded")
