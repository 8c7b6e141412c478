"""The IO of ``plangate runs``: list, show, apply the in-scope part of, and prune runs.

A run of ``plangate exec`` leaves three traces: its ``exec_result`` ledger
entry (the run id, the approved commit, the result commit, the verdict, the
patch's digest), its directory ``.plangate/runs/<run id>/`` (a refused run
keeps ``state.git``, PlanGate's repository holding the result commit, the patch
and the reasons) and, for an accepted run, its branch ``plangate/runs/<run id>``.

What a run *is* comes from the ledger, never from the directory or a ref:
:func:`load_run` takes the result commit id the ledger recorded, checks that
the run's repository holds that very commit and that the diff from the
approved commit hashes to the recorded patch digest, and reports a branch that
names another commit as rewritten (``RUNS_BRANCH_REWRITTEN``). The per-path
verdicts are judged again from git's objects (:mod:`plangate.execution.salvage`);
nothing the run directory says (its ``reasons.json``) is believed.

:func:`apply_in_scope` is human-only (the gate of every human-only command,
:func:`plangate.agents.refuse_unless_human`, checked by the caller) and holds
the task's exec lock: it builds one commit on top of the approved commit from
the in-scope paths of the result, judges that commit as exec judges a result,
lands it like an accepted result (:func:`plangate.execution.apply.apply_result`)
and records ``exec_partial_apply`` in the ledger naming the paths left out.

:func:`prune` removes finished runs' directories and branches under the rules
of :data:`plangate.execution.salvage.PRUNE_RULES`, holding each task's lock
while it removes that task's runs, and records ``runs_pruned``.
"""

from __future__ import annotations

import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from plangate.canonical import sha256_digest
from plangate.errors import EnvironmentFailure, InputRejected, PlanGateError
from plangate.execution import salvage
from plangate.execution.apply import BRANCH_PREFIX, Applied, apply_result, branch_for, judge
from plangate.execution.isolated import gather_result_facts
from plangate.execution.preflight import bound_facts
from plangate.execution.salvage import PathVerdict, RunId
from plangate.execution.service import verify_for_head
from plangate.execution.workspace import RUNS_DIR_RELPATH, commit_identity
from plangate.fsutil import lock_at, open_verified_dir
from plangate.git import Git, GitError
from plangate.layout import LOCK_DIR_RELPATH
from plangate.ledger import open_ledger
from plangate.records import NamedTuple
from plangate.verdict import Reason, Result

IN_SCOPE_REF = "refs/heads/in-scope"
"""The ref of a run's ``state.git`` that names the commit of its in-scope paths."""

PARTIAL_APPLY_KIND = "exec_partial_apply"
"""The ledger kind of a partial apply."""

_DIFF_ARGS = ("diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames")


class RunSummary(NamedTuple):
    """One run as ``runs list`` shows it."""

    run_id: str
    task_id: str
    started: str
    verdict: str
    changed_count: int | None
    directory: bool
    branch: str | None
    branch_state: str
    partially_applied: bool

    def to_json(self) -> dict[str, Any]:
        """JSON form of ``runs list --json``."""
        return dict(self._asdict())


class LoadedRun(NamedTuple):
    """A run read from the ledger and checked against git (see :func:`load_run`)."""

    run: RunId
    recorded: Mapping[str, Any]
    approved: str
    result: str
    state_git: Path | None
    diff: bytes
    verdicts: tuple[PathVerdict, ...]
    verification: Result
    facts: Any
    branch_problem: Reason | None
    partial: Mapping[str, Any] | None

    @property
    def verdict(self) -> str:
        """The verdict the ledger recorded for the run's result."""
        return str(self.recorded.get("verdict", "REJECTED"))


def _refuse(code: str, message: str, hint: str) -> InputRejected:
    return InputRejected(code, message, hint)


def _ledger_entries(root: Path, env: Mapping[str, str], kind: str) -> list[Any]:
    with open_ledger(root, env, create=False) as ledger:
        return ledger.entries(kind=kind)


def _ledger_append(
    root: Path, env: Mapping[str, str], kind: str, subject: str, payload: Mapping[str, Any]
) -> None:
    with open_ledger(root, env) as ledger:
        ledger.append(kind, subject, dict(payload))


def _recorded_results(root: Path, env: Mapping[str, str]) -> dict[str, Mapping[str, Any]]:
    """``exec_result`` payloads by run id (a run id recorded twice keeps its first entry)."""
    out: dict[str, Mapping[str, Any]] = {}
    for entry in _ledger_entries(root, env, "exec_result"):
        run_id = entry.payload.get("run_id")
        if isinstance(run_id, str) and run_id not in out:
            out[run_id] = {**entry.payload, "task_id": entry.subject}
    return out


def _partials(root: Path, env: Mapping[str, str]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for entry in _ledger_entries(root, env, PARTIAL_APPLY_KIND):
        run_id = entry.payload.get("run_id")
        if isinstance(run_id, str):
            out.setdefault(run_id, entry.payload)
    return out


def _run_dirs(root: Path) -> dict[str, Path]:
    """The run directories under ``.plangate/runs`` (links and odd names left alone)."""
    runs = root / RUNS_DIR_RELPATH
    out: dict[str, Path] = {}
    try:
        if runs.is_symlink() or not runs.is_dir():
            return out
        for entry in runs.iterdir():
            if salvage.parse_run_id(entry.name) and not entry.is_symlink() and entry.is_dir():
                out[entry.name] = entry
    except OSError:
        return out
    return out


def _run_branches(root: Path) -> dict[str, str]:
    """``plangate/runs/<run id>`` branches and the commits they name."""
    proc = Git(root).run(
        ["for-each-ref", "--format=%(refname)%00%(objectname)", f"refs/heads/{BRANCH_PREFIX}/"]
    )
    out: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        ref, _, oid = line.partition("\x00")
        name = ref.removeprefix(f"refs/heads/{BRANCH_PREFIX}/")
        if salvage.parse_run_id(name):
            out[name] = oid
    return out


def list_runs(root: Path, env: Mapping[str, str]) -> list[RunSummary]:
    """Every run the ledger, ``.plangate/runs`` or a run branch knows of, oldest first."""
    recorded = _recorded_results(root, env)
    partials = _partials(root, env)
    dirs = _run_dirs(root)
    branches = _run_branches(root)
    out = []
    for run_id in sorted(set(recorded) | set(dirs) | set(branches)):
        parsed = salvage.parse_run_id(run_id)
        if parsed is None:
            continue
        payload = recorded.get(run_id)
        changed = payload.get("changed_count") if payload else None
        branch_commit = branches.get(run_id)
        # What the branch may name: the recorded result, or the recorded partial apply.
        expected = {payload.get("result") if payload else None,
                    partials[run_id].get("applied") if run_id in partials else None}
        if branch_commit is None:
            state = "none"
        else:
            state = "intact" if branch_commit in expected else "rewritten"
        if payload is not None:
            verdict = str(payload.get("verdict", "REJECTED"))
        else:
            verdict = "IN_PROGRESS" if _task_locked(root, parsed.task_id) else "UNRECORDED"
        out.append(
            RunSummary(
                run_id,
                parsed.task_id,
                parsed.started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                verdict,
                changed if isinstance(changed, int) else None,
                run_id in dirs,
                branch_for(run_id) if branch_commit else None,
                state,
                run_id in partials,
            )
        )
    return out


@contextmanager
def task_lock(root: Path, task_id: str) -> Iterator[None]:
    """The task's exec lock (``LOCK_HELD`` at once when a run of the task holds it)."""
    with (
        open_verified_dir(root, LOCK_DIR_RELPATH, create=True) as locks,
        lock_at(locks, f"{task_id}.lock", wait=False),
    ):
        yield


def _task_locked(root: Path, task_id: str) -> bool:
    try:
        with task_lock(root, task_id):
            return False
    except PlanGateError as exc:
        return exc.code == "LOCK_HELD"


def _state_git(root: Path, run_id: str) -> Path | None:
    path = root / RUNS_DIR_RELPATH / run_id / "state.git"
    try:
        info = path.lstat()
    except OSError:
        return None
    return path if stat.S_ISDIR(info.st_mode) else None


def _result_repository(root: Path, run_id: str, result: str) -> tuple[Git, Path | None]:
    """The repository that holds the recorded result commit: the run's own ``state.git``
    (a refused run), else the repository itself (an accepted run fetched it there)."""
    state = _state_git(root, run_id)
    if state is not None and Git(state).commit_exists(result):
        return Git(state), state
    if Git(root).commit_exists(result):
        return Git(root), None
    raise _refuse(
        "RUNS_RESULT_MISSING",
        f"run {run_id}: the result commit {result[:12]} the ledger recorded is not in the "
        "run's repository nor in this one",
        "the run was pruned or its directory removed; nothing is left to show or apply",
    )


def _diff(git: Git, approved: str, result: str) -> bytes:
    try:
        return git.run([*_DIFF_ARGS, approved, result]).stdout
    except GitError as exc:
        raise EnvironmentFailure(
            "RUNS_RESULT_UNREADABLE", f"cannot diff the run's result: {exc.message}", exc.hint
        ) from None


def _parse(run_id: str) -> RunId:
    parsed = salvage.parse_run_id(run_id)
    if parsed is None:
        raise _refuse(
            "RUNS_ID_MALFORMED",
            f"{run_id!r} is not a run id (TASK-XXXX-YYYYMMDDTHHMMSSZ-xxxxxxxx)",
            "'plangate runs list' shows the runs",
        )
    return parsed


def load_run(root: Path, env: Mapping[str, str], run_id: str) -> LoadedRun:
    """The run ``run_id`` as the ledger recorded it, checked against git (module doc).

    Refuses an id PlanGate did not make (``RUNS_ID_MALFORMED``), a run the ledger
    has no result for (``RUNS_UNKNOWN``), a result whose commit is gone
    (``RUNS_RESULT_MISSING``) or whose diff does not hash to the recorded patch
    digest (``RUNS_RESULT_MISMATCH``).
    """
    parsed = _parse(run_id)
    recorded = _recorded_results(root, env).get(run_id)
    if recorded is None or recorded.get("task_id") != parsed.task_id:
        raise _refuse(
            "RUNS_UNKNOWN",
            f"the ledger records no result of run {run_id}",
            "'plangate runs list' shows the runs; a run that is still in progress, or that "
            "failed before its result was recorded, has nothing to show",
        )
    approved, result = recorded.get("head"), recorded.get("result")
    if not isinstance(approved, str) or not isinstance(result, str):
        raise _refuse(
            "RUNS_RESULT_MISSING",
            f"run {run_id} recorded no result commit ({recorded.get('error') or 'no result'})",
            "the run failed before its result was recorded; run exec again",
        )
    git, state = _result_repository(root, run_id, result)
    diff = _diff(git, approved, result)
    digest = recorded.get("patch_digest")
    if isinstance(digest, str) and sha256_digest(diff) != digest:
        raise _refuse(
            "RUNS_RESULT_MISMATCH",
            f"run {run_id}: the diff from {approved[:12]} to {result[:12]} does not hash to "
            "the patch digest the ledger recorded",
            "the run's repository was changed after the run; nothing of it is applied",
        )
    verification = verify_for_head(root, parsed.task_id, approved)
    plan_hash = bound_facts(verification.facts).get("plan_hash")
    facts = gather_result_facts(
        root,
        git,
        task_id=parsed.task_id,
        approved=approved,
        result=result,
        verification=verification,
        plan_hash=plan_hash if isinstance(plan_hash, str) else None,
    )
    partial = _partials(root, env).get(run_id)
    expected = {result}
    if partial is not None and isinstance(partial.get("applied"), str):
        expected.add(str(partial["applied"]))
    branch = _run_branches(root).get(run_id)
    problem = None
    if branch is not None and branch not in expected:
        problem = Reason(
            "RUNS_BRANCH_REWRITTEN",
            f"branch {branch_for(run_id)} names {branch[:12]}, not the commit the ledger "
            f"recorded for the run ({', '.join(sorted(c[:12] for c in expected))})",
            "someone moved the branch after the run: what it names is not the run's work",
        )
    return LoadedRun(
        parsed,
        recorded,
        approved,
        result,
        state,
        diff,
        salvage.path_verdicts(facts, judge),
        verification,
        facts,
        problem,
        partial,
    )


class PartialApply(NamedTuple):
    """What ``runs apply --in-scope`` landed and left out."""

    run_id: str
    commit: str
    applied: tuple[str, ...]
    left_out: tuple[PathVerdict, ...]
    landed: Applied


def _refuse_unless_separable(loaded: LoadedRun) -> None:
    run_id = loaded.run.run_id
    if loaded.branch_problem is not None:
        raise _refuse(
            loaded.branch_problem.code, loaded.branch_problem.message, loaded.branch_problem.hint
        )
    if loaded.partial is not None:
        raise _refuse(
            "RUNS_ALREADY_APPLIED",
            f"run {run_id}'s in-scope part was already applied as "
            f"{str(loaded.partial.get('applied', ''))[:12]} on {branch_for(run_id)}",
            "nothing left to apply",
        )
    if loaded.verdict in ("ACCEPTED", "NO_CHANGES"):
        raise _refuse(
            "RUNS_ALREADY_APPLIED",
            f"run {run_id} was accepted whole: its result is on {branch_for(run_id)}"
            if loaded.verdict == "ACCEPTED"
            else f"run {run_id} changed nothing",
            "nothing left to apply",
        )
    if loaded.state_git is None:
        raise _refuse(
            "RUNS_RESULT_MISSING",
            f"run {run_id} has no repository of its own under {RUNS_DIR_RELPATH}",
            "the run was pruned; nothing is left to apply",
        )
    if not loaded.verification.accepted:
        first = loaded.verification.reasons[0] if loaded.verification.reasons else None
        detail = f"{first.code}: {first.message}" if first else loaded.verification.verdict
        raise _refuse(
            "RUNS_APPROVAL_NOT_HELD",
            f"{loaded.run.task_id}'s approval no longer holds for the run's approved commit "
            f"{loaded.approved[:12]} ({detail})",
            "nothing of a run lands without the approval it ran under",
        )
    nothing = salvage.left_out_reason(loaded.verdicts)
    if nothing is not None:
        raise _refuse(nothing.code, nothing.message, nothing.hint)


def _build_in_scope_commit(root: Path, loaded: LoadedRun) -> str:
    """One commit on the approved commit: its tree with the in-scope paths of the result."""
    assert loaded.state_git is not None  # noqa: S101 -- _refuse_unless_separable checked it
    git = Git(loaded.state_git)
    keep = [v.path for v in loaded.verdicts if v.in_scope]
    entries = {e.path: e for e in git.ls_tree(loaded.result, keep)}
    zero = "0" * len(loaded.result)
    lines = []
    for path in keep:
        entry = entries.get(path)
        if entry is None:  # deleted by the run
            lines.append(f"0 {zero}\t{path}")
        else:
            lines.append(f"{entry.mode} {entry.object_id}\t{path}")
    left = [v.path for v in loaded.verdicts if not v.in_scope]
    message = (
        f"plangate runs apply {loaded.run.run_id} --in-scope\n\n"
        f"{len(keep)} in-scope path(s) of the run's result {loaded.result}; "
        f"left out: {', '.join(left)}\n"
    )
    index = str(loaded.state_git / "in-scope.index")
    try:
        git.run(["read-tree", f"--index-output={index}", loaded.approved])
        git.run(
            ["update-index", "-z", "--index-info"],
            input_data=b"".join(line.encode("utf-8", "surrogateescape") + b"\x00"
                                for line in lines),
            index_file=index,
        )
        tree_id = git.run(["write-tree"], index_file=index).stdout.decode().strip()
        commit = git.run(
            [*commit_identity(root), "commit-tree", tree_id, "-p", loaded.approved],
            input_data=message.encode("utf-8", "surrogateescape"),
        ).stdout.decode().strip()
        git.run(["update-ref", IN_SCOPE_REF, commit])
    except GitError as exc:
        raise EnvironmentFailure(
            "EXEC_APPLY_FAILED", f"cannot build the in-scope commit: {exc.message}", exc.hint
        ) from None
    finally:
        Path(index).unlink(missing_ok=True)
    return commit


def apply_in_scope(root: Path, env: Mapping[str, str], run_id: str, *, by: str) -> PartialApply:
    """Land the in-scope part of run ``run_id`` and record it (module doc).

    The caller has checked that a person runs this. ``by`` is what the ledger
    says of who asked.
    """
    parsed = _parse(run_id)
    with task_lock(root, parsed.task_id):
        loaded = load_run(root, env, run_id)
        _refuse_unless_separable(loaded)
        commit = _build_in_scope_commit(root, loaded)

        assert loaded.state_git is not None  # noqa: S101 -- checked above
        plan_hash = bound_facts(loaded.verification.facts).get("plan_hash")
        again = gather_result_facts(
            root,
            Git(loaded.state_git),
            task_id=parsed.task_id,
            approved=loaded.approved,
            result=commit,
            verification=loaded.verification,
            plan_hash=plan_hash if isinstance(plan_hash, str) else None,
        )
        applied = tuple(v.path for v in loaded.verdicts if v.in_scope)
        decision = judge(again)
        if decision.verdict != "ACCEPTED" or tuple(again.changed) != applied:
            codes = ", ".join(decision.codes) or "the paths differ"
            raise EnvironmentFailure(
                "RUNS_IN_SCOPE_REFUSED",
                f"the commit of the in-scope paths was not accepted as a whole ({codes})",
                "nothing reached the repository; report it with 'plangate runs show RUN'",
            )
        landed = apply_result(
            root, loaded.state_git, commit, loaded.approved, run_id,
            succeeded=True, source_ref=IN_SCOPE_REF,
        )
        left_out = tuple(v for v in loaded.verdicts if not v.in_scope)
        _ledger_append(
            root,
            env,
            PARTIAL_APPLY_KIND,
            parsed.task_id,
            {
                "run_id": run_id,
                "head": loaded.approved,
                "result": loaded.result,
                "applied": commit,
                "branch": landed.branch,
                "fast_forwarded": landed.fast_forwarded,
                "applied_paths": list(applied),
                "left_out": [
                    {"path": v.path, "verdict": v.verdict, "reasons": list(v.codes)}
                    for v in left_out
                ],
                "by": by,
            },
        )
        return PartialApply(run_id, commit, applied, left_out, landed)


class Pruned(NamedTuple):
    """What prune removed and kept."""

    removed_dirs: tuple[str, ...]
    removed_branches: tuple[str, ...]
    kept: tuple[tuple[str, str, str], ...]

    def to_json(self) -> dict[str, Any]:
        """JSON form of ``runs prune --json``."""
        return {
            "removed_dirs": list(self.removed_dirs),
            "removed_branches": list(self.removed_branches),
            "kept": [{"run_id": r, "what": w, "reason": why} for r, w, why in self.kept],
        }


def _contained_elsewhere(git: Git, commit: str, own_ref: str) -> bool:
    proc = git.run(["for-each-ref", "--format=%(refname)", "--contains", commit, "refs/heads/"])
    refs = proc.stdout.decode("utf-8", "surrogateescape").split()
    return any(r != own_ref and not r.startswith(f"refs/heads/{BRANCH_PREFIX}/") for r in refs)


def _remove_dir(path: Path) -> None:
    """Remove a run's directory; a link in its place is left alone (never followed)."""
    try:
        info = path.lstat()
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path, ignore_errors=True)


def prune(
    root: Path,
    env: Mapping[str, str],
    *,
    older_than: timedelta,
    now: datetime,
    dry_run: bool = False,
) -> Pruned:
    """Remove finished runs' directories and branches (:data:`salvage.PRUNE_RULES`).

    Every task's lock is held from the decision to the removal; ``runs_pruned``
    reaches the ledger before anything is removed (a ledger that cannot be
    written removes nothing).
    """
    git = Git(root)
    dirs = _run_dirs(root)
    branches = _run_branches(root)
    checked_out = git.head_state().ref
    by_task: dict[str, list[RunId]] = {}
    for run_id in sorted(set(dirs) | set(branches)):
        parsed = salvage.parse_run_id(run_id)
        if parsed is not None:
            by_task.setdefault(parsed.task_id, []).append(parsed)
    remove_dirs: list[str] = []
    remove_branches: list[tuple[str, str]] = []
    kept: list[tuple[str, str, str]] = []
    with ExitStack() as held:
        for task_id, runs in sorted(by_task.items()):
            try:
                held.enter_context(task_lock(root, task_id))
                locked = False
            except PlanGateError as exc:
                if exc.code != "LOCK_HELD":
                    raise
                locked = True  # a run or an apply of this task is in progress
            for run in runs:
                ref = f"refs/heads/{branch_for(run.run_id)}"
                commit = branches.get(run.run_id)
                keep = salvage.prune_decision(salvage.PruneFacts(
                    run=run,
                    now=now,
                    older_than=older_than,
                    task_locked=locked,
                    branch_commit=commit,
                    branch_contained_elsewhere=(
                        commit is not None and _contained_elsewhere(git, commit, ref)
                    ),
                    branch_checked_out=checked_out == ref,
                ))
                if keep is not None:
                    kept.append((run.run_id, keep.what, keep.reason))
                    if keep.what == "run":
                        continue
                if run.run_id in dirs:
                    remove_dirs.append(run.run_id)
                if commit is not None and keep is None:
                    remove_branches.append((run.run_id, commit))
        out = Pruned(
            tuple(remove_dirs),
            tuple(branch_for(run_id) for run_id, _ in remove_branches),
            tuple(kept),
        )
        if dry_run or not (remove_dirs or remove_branches):
            return out
        _ledger_append(root, env, "runs_pruned", "runs", {
            "removed_dirs": list(out.removed_dirs),
            "removed_branches": list(out.removed_branches),
            "older_than_seconds": int(older_than.total_seconds()),
        })
        for run_id in remove_dirs:
            _remove_dir(dirs[run_id])
        for run_id, commit in remove_branches:
            # Deleted only while it still names the commit judged above.
            git.run(["update-ref", "-d", f"refs/heads/{branch_for(run_id)}", commit])
    return out
