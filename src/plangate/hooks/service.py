"""The IO edge of the hooks: read the facts once, decide, record the decision.

Where the active task comes from (docs/agents.md, "The active task"):

1. ``PLANGATE_TASK`` in the hook's environment. ``plangate exec`` sets it for
   the command it runs, so an agent started by exec passes it to its hooks.
2. Otherwise the ledger: the most recent ``exec_started`` entry, at most a day
   old, that has no later ``exec_ended`` for the same run (``payload.run_id``
   when present, else the same subject), decided on verified entries
   (:mod:`plangate.session.openrun`), while its exec process is alive (it
   holds the task's lock). The task id is ``payload.task_id`` (or the subject).
3. Otherwise the task session a human started (``plangate task start``), until
   it is stopped or expires; effect checks then skip files its baseline holds
   unchanged (:mod:`plangate.session`).
4. Otherwise there is no active task: only planning files may be written.

Inside ``plangate exec``'s isolated run, once the hook observes the box
(:func:`plangate.isolation.contract.observe_box`), the task is the run's (exec
verified it against the approved commit before the box started; the hook
checks the workspace's ``plan.md`` against the verified plan hash and takes the
scope from it), and decisions are recorded in the box-local ledger named by
``PLANGATE_BOX_LEDGER``; exec imports them after the run as observations.

Every decision is appended to the ledger as kind ``hook_decision``. A ledger
that cannot be opened or written turns the decision into a deny
(``HOOK_LEDGER_UNAVAILABLE``): an unrecorded allow is not an allow. A SQLite
ledger file that does not exist is not created here (``HOOK_LEDGER_MISSING``):
a deleted ledger must not quietly restart as an empty chain. ``plangate hooks
install`` creates it.
"""

# ruff: noqa: PTH111, PTH112, PTH113, PTH114, PTH117, PTH118, PTH208
# Plain string paths on purpose: realpath/relpath semantics and the
# hook hot path; pathlib would add conversions without changing the meaning.
from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.agents import agent_markers_present
from plangate.canonical import sha256_hex
from plangate.clock import utc_now
from plangate.errors import PlanGateError
from plangate.hooks.decision import (
    DENY,
    DOCTOR_PROBE,
    DOCTOR_PROBE_ENV,
    PROBE_FIELD,
    Action,
    ActionKind,
    Facts,
    OverrideGrant,
    Target,
    TaskFacts,
    decide,
)
from plangate.hooks.override import active_grants, grant_states, verified_override_entries
from plangate.hooks.paths import (
    TargetRejected,
    filesystem_is_case_insensitive,
    named_link_path,
    resolve_target,
)
from plangate.paths import PathRejected, canonical_path
from plangate.records import NamedTuple
from plangate.shapes import is_task_id
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from datetime import datetime

    from plangate.hooks.ci_preview import ChangeRange
    from plangate.isolation.contract import BoxFacts
    from plangate.ledger import Ledger, LedgerLocation
    from plangate.plan.scope import TaskScope
    from plangate.surfaces import ResolvedSurfaces

KIND_DECISION = "hook_decision"
MAX_RECORDED_TARGETS = 50


class HookEvent:
    """The host-independent events a hook can report."""

    PRE = "pre"
    POST = "post"
    STOP = "stop"
    COMMIT = "commit"
    PUSH = "push"


class HookRequest(NamedTuple):
    """One hook invocation, already translated from the host's payload."""

    host: str
    event: str
    cwd: str
    label: str = ""
    file_targets: tuple[str, ...] = ()
    shell_command: str | None = None
    read_only: bool = False
    unclassifiable: tuple[str, ...] = ()
    canonical_targets: tuple[str, ...] | None = None
    """Targets that already are canonical repository paths (git hooks, CI)."""
    unclassifiable_code: str = "HOOK_SHELL_UNCLASSIFIABLE"
    sandbox_bypass: bool = False
    """The host's tool call asks to run outside its sandbox (Claude Code's
    ``dangerouslyDisableSandbox``)."""
    host_sandbox: bool = False
    """The host may run the call in a sandbox PlanGate can check (Claude Code)."""
    adoption: bool = False
    """A commit or push that adopts PlanGate (git hooks: see :mod:`plangate.hooks.hosts.git`)."""
    unlike_worktree: tuple[str, ...] = ()
    """Staged approval parts whose working-tree bytes (the ones verified) differ (pre-commit)."""
    change: ChangeRange | None = None
    """git's hooks: where the commit or push starts and ends. A refusal is then held
    against CI's verdict for a person (:mod:`plangate.hooks.ci_preview`)."""


def deny_result(code: str, message: str, hint: str = "", **facts: Any) -> Result:
    """A DENY result with one reason."""
    return Result(DENY, (Reason(code, message, hint),), dict(facts))


def find_worktree_root(cwd: str) -> str | None:
    """Real path of the nearest directory at or above ``cwd`` holding ``.git``.

    One rule with the helper's client, which finds the same repository before it
    asks the helper (the client holds it: it may import nothing of plangate).
    """
    from plangate.hooks.hookd_client import find_root

    return find_root(cwd)


def current_head(root: str) -> str:
    """HEAD's full object id: read from ``.git`` files, else asked of git."""
    from plangate.githead import read_head

    head = read_head(root)
    if head is not None:
        return head
    from plangate.git import Git

    return Git(Path(root)).head()


def exec_task_from_ledger(ledger: Ledger, now: datetime | None = None) -> str | None:
    """Task of the open exec run (see plangate.session.openrun), decided on verified entries."""
    from plangate.session.openrun import open_run, run_task

    entry = open_run(ledger, now or utc_now())
    return None if entry is None else run_task(entry)


def locked_tasks(root: str) -> frozenset[str]:
    """Tasks whose ``approvals/c3.json`` exists (in any form): their Plan Package is locked."""

    working = os.path.join(root, "docs", "working")
    out: set[str] = set()
    try:
        names = os.listdir(working)
    except OSError:
        return frozenset()
    for name in names:
        if is_task_id(name) and os.path.lexists(
            os.path.join(working, name, "approvals", "c3.json")
        ):
            out.add(name)
    return frozenset(out)


def load_surfaces(root: str) -> tuple[ResolvedSurfaces | None, str]:
    """Protected surfaces of the repository (``None`` plus why, when unusable).

    A bundled-template resolution still protects its patterns here: the hook
    denies more, never less, when the repository has no definition of its own.
    """
    from plangate.surfaces import resolve_surfaces

    resolved = resolve_surfaces(Path(root))
    if not resolved.entries:
        detail = resolved.problem.message if resolved.problem else "no patterns"
        return None, detail
    return resolved, ""


class TaskVerification(NamedTuple):
    """A task's record judged for HEAD: the snapshot's artifact names, its scope, the verdict."""

    artifacts: tuple[str, ...]
    scope: TaskScope
    outcome: Result


def verify_task_at_head(root: str, task_id: str) -> TaskVerification:
    """The acceptor's verdict on the task for HEAD (raises :class:`PlanGateError` when the
    task cannot be read). While an agent works it may commit in-scope work: HEAD may
    descend from the approved commit through in-scope commits."""
    from plangate.approval.holds import approval_holds
    from plangate.plan.scope import derive_scope
    from plangate.snapshot import read_task_snapshot, task_dir_for

    head = current_head(root)
    snapshot = read_task_snapshot(task_dir_for(Path(root), task_id))
    scope = derive_scope(snapshot.artifact("plan.md"))
    outcome = approval_holds(Path(root), snapshot, head, scope=scope)
    return TaskVerification(tuple(snapshot.artifacts), scope, outcome)


def task_facts(root: str, task_id: str, source: str) -> TaskFacts:
    """Verify the task's record against HEAD and read its allowed paths from the same bytes."""
    try:
        verification = verify_task_at_head(root, task_id)
    except PlanGateError as exc:
        return TaskFacts(task_id, source, False, (exc.code,), exc.message, None, exc.message)
    outcome, scope = verification.outcome, verification.scope
    first = outcome.reasons[0].message if outcome.reasons else ""
    return TaskFacts(
        task_id=task_id,
        source=source,
        verified=outcome.accepted,
        verification_codes=outcome.codes,
        verification_message=f"{outcome.verdict}: {first}" if not outcome.accepted else "",
        allowed_paths=scope.patterns,
        scope_problem=scope.problem_text,
        denied_paths=scope.denied,
    )


def approval_part_facts(root: str, paths: Sequence[str]) -> dict[str, Reason | None]:
    """Per approval part among ``paths`` (:func:`plangate.approval.parts.part_of`): None
    when it verifies for its own task, else why not; with a record that verifies, also
    the artifacts it covers (None). Read only for effect checks."""
    from plangate.approval.parts import part_of

    by_task: dict[str, list[str]] = {}
    for path in paths:
        hit = part_of(path)
        if hit is not None:
            by_task.setdefault(hit[0], []).append(path)
    out: dict[str, Reason | None] = {}
    for task_id, wanted in sorted(by_task.items()):
        out.update(_task_parts(root, task_id, wanted))
    return out


def _task_parts(root: str, task_id: str, wanted: list[str]) -> dict[str, Reason | None]:
    """The verdicts of one task's parts: through its record, else one file at a time."""
    from plangate.approval.parts import unverified, verified_parts
    from plangate.approval.parts_service import single_parts
    from plangate.authority.consumer import LOCAL_TRUST, trust_root_for
    from plangate.layout import RECORD_RELPATH, WORKING_DIR

    verdicts: dict[str, Reason | None] = {}
    why = f"no record of {task_id} verifies for HEAD"
    record_verified = False
    if os.path.lexists(os.path.join(root, WORKING_DIR, task_id, RECORD_RELPATH)):
        try:
            verification = verify_task_at_head(root, task_id)
        except PlanGateError as exc:
            why = f"the record of {task_id} cannot be read ({exc.code})"
        else:
            outcome = verification.outcome
            if outcome.accepted:
                record_verified = True
                authority = outcome.facts.get("authority")
                verdicts.update(
                    dict.fromkeys(verified_parts(task_id, authority, verification.artifacts))
                )
            else:
                first = outcome.reasons[0] if outcome.reasons else None
                why = f"the record of {task_id} does not verify for HEAD" + (
                    f" ({first.code})" if first else ""
                )
    pending = [p for p in wanted if p not in verdicts]
    if pending:
        trust = trust_root_for(Path(root), LOCAL_TRUST)
        verdicts.update(
            single_parts(Path(root), task_id, pending, trust, record_verified=record_verified)
        )
    return {**verdicts, **{p: unverified(p, why) for p in wanted if p not in verdicts}}


def box_task_facts(root: str, box: BoxFacts) -> TaskFacts:
    """The task of exec's observed box: verified by exec, scoped by the workspace's plan.

    exec verified the approval against the approved commit before the box
    started, and the workspace is that commit; the hook checks that the plan it
    reads is the verified one (the plan hash exec bound) and derives the scope
    from those bytes. Anything else leaves the task unverified.
    """
    from plangate.canonical import sha256_digest
    from plangate.fsutil import read_below
    from plangate.layout import MAX_ARTIFACT_BYTES
    from plangate.plan.scope import derive_scope

    read = read_below(root, f"docs/working/{box.task_id}/plan.md", MAX_ARTIFACT_BYTES)
    if not read.ok or read.data is None or sha256_digest(read.data) != box.plan_hash:
        message = f"the box's plan.md of {box.task_id} is not the plan exec verified"
        return TaskFacts(box.task_id, "box", False, ("HOOK_BOX_PLAN_MISMATCH",), message)
    scope = derive_scope(read.data)
    return TaskFacts(
        task_id=box.task_id,
        source="box",
        verified=True,
        allowed_paths=scope.patterns,
        scope_problem=scope.problem_text,
        denied_paths=scope.denied,
    )


def gather_facts(
    root: str,
    env: Mapping[str, str],
    ledger: Ledger,
    now: datetime | None = None,
    *,
    box: BoxFacts | None = None,
) -> Facts:
    """Read every fact :func:`decide` may need, once (``now`` defaults to the clock).

    ``box``: exec's isolated run, observed (its task is the active task).
    """

    surfaces, surfaces_problem = load_surfaces(root)
    task: TaskFacts | None = None
    task_problem: Reason | None = None
    env_task = env.get("PLANGATE_TASK")
    if box is not None:
        task = box_task_facts(root, box)
    elif env_task is not None and env_task != "":
        if not is_task_id(env_task):
            task_problem = Reason(
                "HOOK_TASK_INVALID",
                f"PLANGATE_TASK={env_task!r} is not a task id of the form TASK-0000",
                "start the agent through 'plangate exec TASK-XXXX'",
            )
        else:
            task = task_facts(root, env_task, "env")
    else:
        from plangate.session.openrun import exec_run_alive
        from plangate.session.state import active_session

        ledger_task = exec_task_from_ledger(ledger, now)
        if ledger_task is not None and not exec_run_alive(root, ledger_task):
            ledger_task = None  # its exec process is gone: a killed run lends no task
        if ledger_task is None:
            session = active_session(ledger, now or utc_now())
            if session is not None and is_task_id(session.task_id):
                task = task_facts(root, session.task_id, "session")
        elif ledger_task is not None:
            if not is_task_id(ledger_task):
                task_problem = Reason(
                    "HOOK_TASK_INVALID",
                    f"the ledger's open exec run names {ledger_task!r}, not a task id",
                    "end the run with 'plangate exec' or ask a human to inspect the ledger",
                )
            else:
                task = task_facts(root, ledger_task, "exec")
    grants: tuple[OverrideGrant, ...] = ()
    moment = now or utc_now()
    entries = verified_override_entries(ledger, moment)
    if entries:
        grants = active_grants(grant_states(entries), moment)
    locked = locked_tasks(root)
    if box is not None:  # its record is outside the box: the task's package is locked
        locked = locked | {box.task_id}
    return Facts(
        surfaces=surfaces,
        surfaces_problem=surfaces_problem,
        task=task,
        task_problem=task_problem,
        locked_tasks=locked,
        box_run=box.run_id if box is not None else "",
        overrides=grants,
    )


def _rejected(raw: str, exc: TargetRejected) -> Target:
    hint = (
        "write only inside the repository"
        if exc.code == "HOOK_TARGET_OUTSIDE_REPO"
        else "give a plain path inside the repository"
    )
    return Target(raw, None, Reason(exc.code, exc.message, hint))


def _is_regular_file(root: str, path: str) -> bool:
    """True when ``path`` is an existing regular file (not a link, not a directory)."""
    try:
        return stat.S_ISREG(os.lstat(os.path.join(root, path)).st_mode)
    except OSError:
        return False


def _resolve_one(raw: str, cwd: str, root: str, case_insensitive: bool) -> list[Target]:
    """The target ``raw`` resolves to, then the link it names when it names one.

    A write through a link that replaces or removes it changes the link's own
    path: both are judged (see :func:`plangate.hooks.paths.named_link_path`).
    """
    try:
        path = resolve_target(raw, cwd=cwd, repo_root=root, case_insensitive=case_insensitive)
    except TargetRejected as exc:
        return [_rejected(raw, exc)]
    out = [Target(raw, path, regular_file=_is_regular_file(root, path))]
    try:
        named = named_link_path(raw, cwd=cwd, repo_root=root, case_insensitive=case_insensitive)
    except TargetRejected as exc:
        return [*out, _rejected(raw, exc)]
    if named is not None and named != path:
        out.append(Target(raw, named))
    return out


def _resolve(raws: Sequence[str], cwd: str, root: str, case_insensitive: bool) -> list[Target]:
    out: list[Target] = []
    for raw in raws:
        out += _resolve_one(raw, cwd, root, case_insensitive)
    return out


MAX_DIRECTORY_ENTRIES = 20000
"""Most files a directory target may hold before the hook gives up (and denies)."""


def _directory_contents(targets: list[Target], root: str, skip: set[str]) -> list[Target]:
    """Every file under each target that is an existing directory (not a link to one).

    ``rm -r DIR``, ``mv DIR X`` or ``chmod -R`` act on every file inside DIR, and
    a protected file or an approval record may be among them: each one is
    judged like a target of its own. ``skip`` holds raw targets that leave an
    existing directory as it is (``mkdir -p``, ``touch``).
    """
    out: list[Target] = []
    for target in targets:
        if target.path is None or target.raw in skip:
            continue
        top = os.path.join(root, target.path)
        if os.path.islink(top) or not os.path.isdir(top):
            continue
        count = 0
        for current, dirs, files in os.walk(top):
            dirs.sort()  # a stable order: deny messages list these paths
            for name in sorted(dirs + files):
                count += 1
                if count > MAX_DIRECTORY_ENTRIES:
                    out.append(
                        Target(
                            target.raw,
                            None,
                            Reason(
                                "HOOK_TARGET_TOO_LARGE",
                                f"{target.raw!r} holds more than {MAX_DIRECTORY_ENTRIES} entries",
                                "act on smaller directories, or on files by name",
                            ),
                        )
                    )
                    return out
                full = os.path.join(current, name)
                if name in dirs and not os.path.islink(full):
                    continue  # its files are listed in turn
                relative = os.path.relpath(full, root).replace(os.sep, "/")
                try:
                    # Directories were skipped above: what remains is a file or a link.
                    regular = not os.path.islink(full)
                    out.append(Target(full, canonical_path(relative), regular_file=regular))
                except PathRejected as exc:
                    out.append(Target(full, None, Reason(exc.code, exc.message, exc.hint)))
    return out


def _canonical_targets(paths: Sequence[str]) -> list[Target]:
    out: list[Target] = []
    for path in paths:
        try:
            out.append(Target(path, canonical_path(path)))
        except PathRejected as exc:
            out.append(Target(path, None, Reason(exc.code, exc.message, exc.hint)))
    return out


def _nested_repository(path: str) -> Reason:
    return Reason(
        "HOOK_NESTED_REPOSITORY",
        f"{path} is a repository inside the working tree: git lists it as one entry and "
        "would record it as a gitlink (a commit of another repository), never its files, "
        "so what it holds cannot be judged or reviewed",
        "move it out of the working tree (or list it in .gitignore when it is not part of "
        "the change); a person adds a submodule deliberately, outside the agent's session",
    )


def _working_tree_targets(paths: Sequence[str]) -> list[Target]:
    """:func:`_canonical_targets` for what ``git status`` listed: an entry ending in '/'
    (git's listing of a nested repository, the only directory it names) is refused as
    what it is, not as a malformed path."""
    out: list[Target] = []
    for path in paths:
        stem = path[:-1]
        if path.endswith("/") and stem and not stem.endswith("/"):
            out.append(Target(path, None, _nested_repository(stem)))
        else:
            out += _canonical_targets((path,))
    return out


def _into_dir_targets(
    triples: Sequence[tuple[str, str, int]], cwd: str
) -> tuple[list[tuple[str, int]], set[str]]:
    """For cp/mv/ln into an existing directory, the file lands at ``dir/basename``.

    Returns the landing paths (with their step) and the destinations that are
    directories (the directory itself is then not a write target, its new entry is).
    """
    out: list[tuple[str, int]] = []
    directories: set[str] = set()
    for destination, base, step in triples:
        expanded = os.path.expanduser(destination)
        joined = expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)
        if os.path.isdir(joined) and base not in ("", ".", ".."):
            out.append((os.path.join(destination, base), step))
            directories.add(destination)
    return out, directories


def program_problems(
    names: Sequence[str], env: Mapping[str, str], cwd: str, root: str
) -> list[str]:
    """Programs trusted by bare name that resolve into the repository (``PATH``), or that
    are Python scripts while ``PYTHONPATH`` points into it: not trusted after all."""
    prefix = root.rstrip("/") + "/"
    inside = (
        [
            d
            for d in env.get("PYTHONPATH", "").split(os.pathsep)
            if d == ""
            or os.path.realpath(os.path.join(cwd, d)).startswith(prefix)
            or os.path.realpath(os.path.join(cwd, d)) == root
        ]
        if env.get("PYTHONPATH")
        else []
    )
    problems: list[str] = []
    for name in names:
        for directory in env.get("PATH", "").split(os.pathsep):
            candidate = os.path.join(cwd, directory or ".", name)
            if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
                continue
            real = os.path.realpath(candidate)
            if real.startswith(prefix):
                problems.append(f"{name!r} resolves to {real}, a file in the repository")
            elif inside and _is_python_script(real):
                problems.append(
                    f"{name!r} is a Python program and PYTHONPATH points into the repository"
                )
            break
    return problems


def _is_python_script(path: str) -> bool:
    """True when ``path`` starts with a ``#!`` line naming python (or cannot be read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        head = os.read(fd, 256)
    except OSError:
        return True
    finally:
        os.close(fd)
    return head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]


def _shell_action(
    request: HookRequest, root: str, case_insensitive: bool, env: Mapping[str, str]
) -> Action:
    """The action of a shell command: its classification, targets and time-of-check problems."""
    from plangate.hooks.shell import ShellKind, analyse
    from plangate.hooks.shell.order import Placed, order_problems

    cwd = request.cwd
    # A non-empty CDPATH makes 'cd NAME' search its directories: the shell's later
    # directory is then unknown (the hook's environment is the shell's).
    analysis = analyse(request.shell_command, cdpath=bool(env.get("CDPATH")))
    if analysis.kind == ShellKind.READ_ONLY and not analysis.programs:
        return Action(ActionKind.READ, (), label=request.label)
    problems = list(analysis.problems)
    problems += program_problems(analysis.programs, env, cwd, root)
    if analysis.kind == ShellKind.READ_ONLY and not problems:
        return Action(ActionKind.READ, (), label=request.label)
    landed, directories = _into_dir_targets(analysis.into_dir, cwd)
    raws = [
        (w.path, w.step, w.relinks, w.directory, w.keeps_contents)
        for w in analysis.writes
        if w.path not in directories
    ]
    raws += [(path, step, True, False, False) for path, step in landed]
    targets: list[Target] = []
    placed: list[Placed] = []
    keep: set[str] = set()
    for raw, step, relinks, directory, keeps in raws:
        resolved, *named = _resolve_one(raw, cwd, root, case_insensitive)
        # A line can remove or replace a file before it writes there ('rm X; mv d X'):
        # what the path holds now says nothing about what the line leaves there, so the
        # ancestor rule applies to every shell target.
        targets.append(resolved._replace(directory=directory, regular_file=False))
        targets += named
        if keeps:
            keep.add(raw)
        lexical = os.path.normpath(
            raw if os.path.isabs(raw) or raw.startswith("~") else os.path.join(cwd, raw)
        )
        placed.append(Placed(step, relinks, lexical, resolved.path))
    problems += order_problems(placed)
    targets += _directory_contents(targets, root, keep)
    if analysis.commits:
        from plangate.git import Git

        git = Git(Path(root))
        targets += _canonical_targets(git.staged_paths())
        if analysis.commit_all:
            targets += _working_tree_targets(git.worktree_changes())
        targets += _resolve(list(analysis.commit_paths), cwd, root, case_insensitive)
    return Action(
        ActionKind.SHELL,
        tuple(targets),
        tuple(problems),
        request.label,
        runs_code=analysis.runs_code,
        skips_hooks=analysis.skips_hooks,
        commits=analysis.commits,
    )


def build_action(request: HookRequest, root: str, env: Mapping[str, str] | None = None) -> Action:
    """Translate a request into an :class:`Action` with resolved targets."""
    case_insensitive = filesystem_is_case_insensitive(root)
    cwd = request.cwd
    if request.canonical_targets is not None:
        kind = {
            HookEvent.COMMIT: ActionKind.COMMIT,
            HookEvent.PUSH: ActionKind.PUSH,
        }.get(request.event, ActionKind.EFFECT)
        return Action(
            kind, tuple(_canonical_targets(request.canonical_targets)), label=request.label
        )
    if request.event in (HookEvent.POST, HookEvent.STOP):
        changed = [
            t if t.path is None else t._replace(regular_file=_is_regular_file(root, t.path))
            for t in _working_tree_targets(effect_paths(root))
        ]
        return Action(ActionKind.EFFECT, tuple(changed), label=request.label)
    if request.unclassifiable:
        return Action(
            ActionKind.SHELL, (), request.unclassifiable, request.label, request.unclassifiable_code
        )
    if request.read_only:
        return Action(ActionKind.READ, (), label=request.label)
    if request.shell_command is not None:
        return _shell_action(request, root, case_insensitive, os.environ if env is None else env)
    targets = _resolve(request.file_targets, cwd, root, case_insensitive)
    return Action(ActionKind.WRITE, tuple(targets), label=request.label)


HOST_CONFIG_DIRECTORIES = (".claude", ".codex", ".cursor", ".plangate", "docs/working")
"""Where effect checks also look at files git ignores (the task directories included)."""


def effect_paths(root: str) -> list[str]:
    """Changed paths for an effect check: tracked and untracked changes, plus ignored files
    under host configuration, PlanGate's state, the task directories and protected surfaces."""
    from plangate.git import Git
    from plangate.ownfiles import owned_directories

    git = Git(Path(root))
    changes = set(git.worktree_changes())
    watched = [
        d
        for d in (*HOST_CONFIG_DIRECTORIES, *_surface_prefixes(root))
        if os.path.lexists(os.path.join(root, d))
    ]
    if watched:
        # Directories PlanGate owns whole are never blamed (plangate.ownfiles): the ignored
        # listing does not descend into them (an exec run holds a whole workspace, maybe
        # a nested repository git would list as one 'dir/' entry).
        under = _without_owned(root, sorted(set(watched)), owned_directories())
        if under:
            changes.update(git.worktree_changes(tuple(under), ignored=True))
    return sorted(changes)


def _without_owned(root: str, watched: Sequence[str], owned: Sequence[str]) -> list[str]:
    """``watched`` directories, each one holding an owned directory replaced by its other
    entries (git's exclude pathspecs do not filter the ignored listing)."""
    out: list[str] = []
    for directory in watched:
        if directory in owned:
            continue
        full = os.path.join(root, directory)
        if not any(o.startswith(directory + "/") for o in owned) or os.path.islink(full):
            out.append(directory)  # (a link is listed as git sees it: one entry)
            continue
        try:
            names = sorted(os.listdir(full))
        except OSError:
            out.append(directory)  # not a listable directory: let git say what it is
            continue
        out += _without_owned(root, [f"{directory}/{name}" for name in names], owned)
    return out


def _surface_prefixes(root: str) -> list[str]:
    """The literal leading directories of the protected-surface patterns."""
    surfaces, _problem = load_surfaces(root)
    out: list[str] = []
    for entry in surfaces.entries if surfaces is not None else ():
        pattern = entry.pattern
        literal: list[str] = []
        for segment in pattern.split("/"):
            if any(c in segment for c in "*?[{"):
                break
            literal.append(segment)
        if literal:
            out.append("/".join(literal))
    return out


def _record(ledger: Ledger, request: HookRequest, result: Result, task: str | None,
            env: Mapping[str, str]) -> None:
    targets = list(result.facts.get("targets", []))[:MAX_RECORDED_TARGETS]
    payload: dict[str, Any] = {
        "host": request.host,
        "event": request.event,
        "tool": request.label,
        "action": result.facts.get("action", ""),
        "verdict": result.verdict,
        "codes": list(result.codes),
        "targets": targets,
        "task_id": task,
    }
    if request.shell_command is not None:
        # The command text may hold anything; the ledger keeps only its digest.
        payload["command_sha256"] = sha256_hex(
            request.shell_command.encode("utf-8", "surrogateescape")
        )
    used = result.facts.get("overrides_used")
    if used:
        payload["overrides_used"] = list(used)
    lifted = result.facts.get("lifted_for_person")
    if lifted:  # a person's commit or push CI hands to a human (or lets through)
        payload["lifted_for_person"] = list(lifted)
    if env.get(DOCTOR_PROBE_ENV) == "1":
        # Marked where it is made: doctor's canary, not an agent's call.
        payload[PROBE_FIELD] = DOCTOR_PROBE
    ledger.append(KIND_DECISION, task or "-", payload)


def _spend_one_shots(
    ledger: Ledger,
    root: str,
    facts: Facts,
    action: Action,
    *,
    result: Result,
    now: datetime | None,
) -> Result:
    """Spend one-shot grants a decision used, under a lock; re-decide if one was spent meanwhile."""
    from plangate.fsutil import repo_lock
    from plangate.layout import LOCK_DIR_RELPATH

    used = list(result.facts.get("overrides_used", []))
    one_shots = {g.grant_id for g in facts.overrides if g.one_shot}
    if not any(g in one_shots for g in used):
        return result
    # The lock's directories are opened with no link followed (PATH_COMPONENT_LINK).
    with repo_lock(Path(root), LOCK_DIR_RELPATH, "override.lock", wait=True):
        moment = now or utc_now()
        fresh = active_grants(grant_states(verified_override_entries(ledger, moment)), moment)
        result = decide(facts._replace(overrides=fresh), action)
        for grant_id in result.facts.get("overrides_used", []):
            if grant_id in one_shots:
                ledger.append(
                    "override_used",
                    grant_id,
                    {
                        "grant_id": grant_id,
                        "paths": list(result.facts.get("targets", []))[:20],
                    },
                )
    return result


def _confinement(
    request: HookRequest, root: str, env: Mapping[str, str], facts: Facts, box: BoxFacts | None
) -> str:
    """The OS confinement of this call, when the hook can see one (see confinement.py)."""
    from plangate.hooks.confinement import claude_sandbox

    if box is not None:
        return f"exec:{box.backend}"
    if request.host_sandbox:
        entries = facts.surfaces.entries if facts.surfaces is not None else ()
        protected = [entry.pattern for entry in entries]
        established, _why = claude_sandbox(root, env, protected, bypass=request.sandbox_bypass)
        return established
    return ""


def _with_committed_surfaces(facts: Facts, root: str, bases: tuple[str, ...]) -> Facts:
    """For git's hooks: the working tree's definition joined with the one committed at
    each commit the change starts from (the definition ``ci check`` judges with). A
    definition weakened in the working tree, by a tool no agent hook saw, protects no
    less at commit and push; one that cannot be read at a base leaves no definition."""
    from plangate.git import Git, GitError
    from plangate.surfaces import joined_surfaces, surfaces_at_commit

    working = facts.surfaces
    if working is None:
        return facts  # already refused as unavailable
    git = Git(Path(root))
    committed: list[ResolvedSurfaces] = []
    for base in dict.fromkeys(bases):
        try:
            resolved = surfaces_at_commit(git, base)
        except GitError as exc:
            return facts._replace(surfaces=None, surfaces_problem=(
                f"the definition committed at {base[:12]} cannot be read: {exc.message}"))
        if not resolved.entries:
            problem = resolved.problem.message if resolved.problem else "no patterns"
            return facts._replace(surfaces=None, surfaces_problem=(
                f"the definition committed at {base[:12]} cannot be used: {problem}"))
        committed.append(resolved)
    return facts._replace(surfaces=joined_surfaces(working, tuple(committed)))


def _without_baseline(
    action: Action, root: str, ledger: Ledger, moment: datetime | None
) -> Action:
    """The effect action without the files a task session's baseline holds unchanged."""
    from plangate.session.baseline import unchanged_since_baseline
    from plangate.session.state import active_session

    session = active_session(ledger, moment or utc_now())
    if session is None:
        return action
    # A target refused for what it is (a nested repository, a name git allows and a
    # canonical path does not) is looked up by the path git listed: what was there
    # unchanged when the person started the session is not the agent's doing.
    paths = [t.path if t.path is not None else t.raw for t in action.targets]
    same = unchanged_since_baseline(root, session, paths)
    if not same:
        return action
    return action._replace(targets=tuple(
        t for t in action.targets if (t.path if t.path is not None else t.raw) not in same
    ))


def _decide_request(
    request: HookRequest,
    root: str,
    env: Mapping[str, str],
    ledger: Ledger,
    moment: datetime | None,
    *,
    box: BoxFacts | None,
) -> Result:
    action = build_action(request, root, env)
    if action.kind is ActionKind.READ:
        return decide(Facts(surfaces=None), action)
    facts = gather_facts(root, env, ledger, moment, box=box)
    if request.change is not None and request.change.bases:
        facts = _with_committed_surfaces(facts, root, request.change.bases)
    if (request.adoption and request.canonical_targets is not None
            and not agent_markers_present(env)):
        # A person adopts PlanGate; an agent's commit of the same files is judged as any.
        facts = facts._replace(adoption=True)
    if action.kind in (ActionKind.EFFECT, ActionKind.COMMIT, ActionKind.PUSH):
        from plangate.approval.parts import part_of, unverified

        paths = [t.path for t in action.targets if t.path is not None]
        if any(part_of(path) is not None for path in paths):
            parts = approval_part_facts(root, paths)
            for path in request.unlike_worktree:
                parts[path] = unverified(
                    path, "its staged bytes differ from the working tree's, which were verified"
                )
            facts = facts._replace(approval_parts=parts)
    if action.kind is ActionKind.EFFECT and facts.task is not None and (
        facts.task.source == "session" and request.canonical_targets is None
    ):
        action = _without_baseline(action, root, ledger, moment)
    if action.kind is ActionKind.SHELL and (action.runs_code or action.unclassifiable):
        facts = facts._replace(confinement=_confinement(request, root, env, facts, box))
    result = decide(facts, action)
    if result.facts.get("overrides_used"):
        result = _spend_one_shots(ledger, root, facts, action, result=result, now=moment)
    if request.change is not None and not result.accepted:
        result = _for_a_person(request.change, root, env, result)
    return result


def _for_a_person(change: ChangeRange, root: str, env: Mapping[str, str],
                  refusal: Result) -> Result:
    """git's hooks, after the decision: a person's refusal held against CI's verdict
    (:mod:`plangate.hooks.ci_preview`). Facts that cannot be read keep the refusal."""
    from plangate.hooks.ci_preview import for_a_person
    from plangate.hooks.ci_preview_service import gather_preview

    try:
        preview = gather_preview(root, change, refusal, env)
    except PlanGateError as exc:
        why = f"ci_preview: {exc.code}: {exc.message}"
        return refusal._replace(facts={**refusal.facts, "person_rule": why})
    return for_a_person(refusal, preview)


def _ledger_location(root: str, env: Mapping[str, str], box: BoxFacts | None) -> LedgerLocation:
    """The repository's ledger; inside exec's observed box, the box-local ledger."""
    from plangate.ledger import LedgerError, LedgerLocation, resolve_location

    if box is None:
        return resolve_location(Path(root), env)
    from plangate.isolation.contract import BOX_LEDGER_ENV, box_ledger_path

    path = box_ledger_path(env)
    if path is None:
        raise LedgerError(
            "HOOK_BOX_LEDGER_INVALID",
            f"inside exec's box, {BOX_LEDGER_ENV} does not name the box-local ledger",
            "start the agent with 'plangate exec' and leave its environment as exec set it",
        )
    return LedgerLocation("sqlite", path, "box")


def evaluate(
    request: HookRequest, env: Mapping[str, str], *, now: datetime | None = None
) -> Result:
    """Decide one hook request and record it. Raises only on bugs (adapters deny then)."""
    # The clock is read only when an override grant needs it (gather_facts).
    moment = now
    root = find_worktree_root(request.cwd)
    if root is None:
        return deny_result(
            "HOOK_NOT_IN_REPOSITORY",
            f"the tool's directory {request.cwd!r} is not inside a git working tree",
            "run the agent inside the repository",
        )
    from plangate.isolation.contract import observe_box
    from plangate.ledger import LedgerError, open_location

    box = observe_box(root, env) if env.get("PLANGATE_BOX") else None
    try:
        # Hooks never create a ledger: one that vanished (a deleted or emptied
        # file, dropped tables) must not silently restart as a new chain.
        ledger = open_location(_ledger_location(root, env, box), must_exist=True)
    except LedgerError as exc:
        if exc.code == "HOOK_BOX_LEDGER_INVALID":
            return deny_result(exc.code, exc.message, exc.hint)
        if exc.code == "LEDGER_MISSING":
            return deny_result(
                "HOOK_LEDGER_MISSING",
                f"no decision can be recorded: {exc.message}",
                "a human restores the ledger, or runs 'plangate hooks install' / 'plangate "
                "ledger init' (a new repository) or 'plangate ledger init --force' (start over)",
            )
        return deny_result(
            "HOOK_LEDGER_UNAVAILABLE",
            f"the ledger cannot be opened, so no decision can be recorded: {exc}",
            "run 'plangate ledger verify'; a human repairs or restores the ledger",
        )
    except (PlanGateError, OSError) as exc:
        return deny_result(
            "HOOK_LEDGER_UNAVAILABLE",
            f"the ledger cannot be opened, so no decision can be recorded: {exc}",
            "run 'plangate ledger verify'; a human repairs or restores the ledger",
        )
    task_id: str | None = None
    try:
        with ledger:
            try:
                result = _decide_request(request, root, env, ledger, moment, box=box)
            except LedgerError:
                raise
            except PlanGateError as exc:
                # git or a file failed while reading facts: a recorded deny, never an allow.
                result = deny_result(exc.code, exc.message, exc.hint)
            task_id = result.facts.get("task")
            _record(ledger, request, result, task_id if isinstance(task_id, str) else None,
                    env)
    except (LedgerError, OSError) as exc:
        return deny_result(
            "HOOK_LEDGER_UNAVAILABLE",
            f"the ledger could not be read or written: {exc}",
            "run 'plangate ledger verify'; a human repairs or restores the ledger",
            task=task_id,
        )
    return result
