"""Run a verified command in a box on a workspace, then judge and apply what it made.

:class:`IsolatedRunner` is the runner ``plangate exec`` uses by default (see
:data:`plangate.execution.service.Runner`). For one prepared run it:

1. reads the isolation settings committed at the approved commit
   (``.plangate/isolation.toml``, :mod:`plangate.isolation.config`), makes the
   workspace from that commit (:mod:`plangate.execution.workspace`), the box's
   private home with copies of the granted configuration
   (:mod:`plangate.isolation.home`), starts the egress proxy when the box may use
   the network (:mod:`plangate.isolation.proxy`) and builds the box's policy;
2. runs the command in the box; afterwards records what it contacted and was
   refused, and what it changed in its home (paths, digests), then discards
   that home (stdio stays the caller's; SIGINT, SIGTERM and
   SIGHUP are forwarded and end the box);
3. outside the box, records the workspace's final state as a commit, judges the
   diff from the approved commit (:func:`plangate.execution.apply.judge`) and
   either applies it (:func:`plangate.execution.apply.apply_result`) or keeps
   the patch and the reasons in the run's directory;
4. writes one ``exec_result`` ledger entry, before ``exec_ended``.

The exit code is the command's own when the result was applied (or nothing
changed); 1 when the result was refused or could not be recorded or applied;
3 when a human must decide (a protected surface changed).

:class:`UnisolatedRunner` is the recorded opt-out (``--no-isolation``): where
a trust root is in force it runs only with a statement signed by a principal
holding ``override`` for this task, this exact command and HEAD
(:mod:`plangate.authority.optout`, checked by :func:`authorize_opt_out` and again
under the run's lock); without a trust root the opt-out is recorded as
unauthenticated. It writes ``exec_unisolated`` (with the statement and its
signer) to the ledger and the run log, then runs the command in the caller's
working tree.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.agents import HumanOnly, refuse_unless_human
from plangate.canonical import sha256_digest
from plangate.clock import utc_now_text
from plangate.errors import EnvironmentFailure, HumanRequired, PlanGateError
from plangate.execution.preflight import CommandResult, PreparedRun
from plangate.execution.workspace import (
    ExecBoxFacts,
    create_workspace,
    exec_policy,
    protected_paths,
    read_only_paths,
    secret_paths,
)
from plangate.isolation.backend import Backend
from plangate.isolation.config import (
    IsolationConfig,
    check_grants,
    expand_home,
    read_isolation_config,
)
from plangate.isolation.home import (
    MAX_CHANGES_LISTED,
    HomeCopy,
    discard_home,
    home_changes,
    prepare_home,
)
from plangate.isolation.policy import Mount, ProxyAccess, SandboxPolicy, path_within
from plangate.isolation.proxy import EgressProxy, start_proxy
from plangate.isolation.runner import run_in_box
from plangate.isolation.views import hidden, system_view
from plangate.records import NamedTuple
from plangate.verdict import ExitCode

if TYPE_CHECKING:
    from plangate.authority.optout import OptOut, OptOutFacts
    from plangate.authority.verify import Verified

LEFT_OUT_SHOWN = 5
"""How many left-out paths the note names (the report records up to :data:`MAX_LEFT_OUT_LISTED`)."""
MAX_LEFT_OUT_LISTED = 200

MAX_PATCH_BYTES = 256 * 1024 * 1024
"""The largest patch kept for a refused result (bigger: only the reasons are kept)."""


def _ledger_append(
    root: Path, env: Mapping[str, str], kind: str, subject: str, payload: Mapping[str, Any]
) -> None:
    from plangate.ledger import open_ledger

    with open_ledger(root, env) as ledger:
        ledger.append(kind, subject, dict(payload))


def _sqlite_ledger(root: Path, env: Mapping[str, str]) -> str | None:
    from plangate.ledger.config import resolve_location

    try:
        location = resolve_location(root, env)
    except PlanGateError:
        return None
    return location.target if location.backend == "sqlite" else None


class _Beside:
    """Call ``work`` in a thread of its own; :meth:`result` waits for it and returns its
    value or raises what it raised (a git process waited on beside another)."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self._work = work
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._call, name="plangate-beside", daemon=True)
        self._thread.start()

    def _call(self) -> None:
        try:
            self._value = self._work()
        except BaseException as exc:  # noqa: BLE001 -- handed to the caller by result()
            self._error = exc

    def wait(self) -> None:
        """Wait for ``work`` to end, whatever it returned or raised."""
        self._thread.join()

    def result(self) -> Any:
        """The value of ``work()``, or what it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


class IsolatedRunner:
    """The default runner of ``plangate exec``: a box on a workspace, then apply."""

    def __init__(self, root: Path, backend: Backend, *, network: bool | None, note: Any) -> None:
        self.root = root
        self.backend = backend
        self.network = network
        self.note = note
        self.report: dict[str, Any] = {}

    def __call__(self, run: PreparedRun, *, cwd: Path, env: Mapping[str, str]) -> CommandResult:
        """Run ``run`` isolated; the report of the run is kept in :attr:`report`."""
        self.report = {"backend": self.backend.name}
        self._started = False
        self._box_code: int | None = None
        self._pristine = ""
        try:
            return self._run(run, cwd, env)
        except PlanGateError as exc:
            self.report.update(
                {
                    "verdict": "REJECTED",
                    "error": exc.code,
                    "reasons": [exc.code],
                    "started": self._started,
                }
            )
            self._record(run, env)
            code = int(exc.exit_code) if exc.exit_code != ExitCode.ACCEPTED else 1
            if self._box_code is not None:
                code = self._box_code  # the command ran: its own code; the verdict refuses
            hint = f"\n  hint: {exc.hint}" if exc.hint else ""
            return CommandResult(
                code, f"{exc.code}: {exc.message}{hint}", started=self._started,
                result_verdict="REJECTED",
            )

    def _record(self, run: PreparedRun, env: Mapping[str, str]) -> None:
        payload = {"head": run.head, "command_digest": run.command_digest, **self.report}
        try:
            _ledger_append(self.root, env, "exec_result", run.task_id, payload)
            self.report["recorded"] = True
        except PlanGateError as exc:
            self.report["recorded"] = False
            self.note(f"{exc.code}: exec_result not written to the ledger")

    def _run(self, run: PreparedRun, cwd: Path, env: Mapping[str, str]) -> CommandResult:
        # What the run leaves out of the caller's tree is said (and recorded) beside the
        # reading of the settings and the workspace's making, before the box starts.
        left_out = _Beside(lambda: self._say_left_out(run))
        try:
            config = read_isolation_config(self.root, run.head)
        except BaseException:
            left_out.wait()
            raise
        home = env.get("HOME", "") or str(Path.home())
        # The policy's git reads (secret paths, protected paths) need no workspace: they
        # run beside its making, and are waited for before the box is built.
        reads = _Beside(lambda: self._policy_reads(run, env, home))
        try:
            check_grants(config, home)
            network = config.network if self.network is None else self.network
            ws = create_workspace(self.root, run.task_id, run.head, utc_now_text())
            box_dir = self._box_dir(run, ws)
            box_home = prepare_home(ws.run_dir, home, config.copied())
        except BaseException:
            for beside in (left_out, reads):
                beside.wait()  # this failure is the run's; their outcome is not needed
            raise
        left_out.result()
        self.report.update(
            {
                "run_id": ws.run_id,
                "network": network,
                "run_dir": str(ws.run_dir),
                "pass_env": [name for name in config.env_names() if name in env],
                "home": {"copied": list(box_home.copied)},
            }
        )
        started: tuple[EgressProxy, ProxyAccess, str] | None = None
        try:
            if network:
                started = start_proxy(
                    config.egress_rules(env),
                    private_network=self.backend.private_network,
                    python=os.path.realpath(sys.executable),
                )
            secrets, protected = reads.result()
            policy = self._policy(
                run,
                ws,
                cwd,
                env,
                config,
                box_home=str(box_home.directory),
                proxy=started[1] if started else None,
                box_dir=box_dir,
                secrets=secrets,
                protected=protected,
            )
            rules = ", ".join(map(str, config.egress_rules(env))) or "nothing"
            self.note(
                f"isolated run {ws.run_id}: {self.backend.name} box, private home, network "
                f"{f'through the egress proxy (allowed: {rules})' if network else 'off'}, "
                f"workspace from {run.head[:12]}"
            )
            self._started = True  # from here on the command's own exit code is reported
            box = run_in_box(self.backend, policy, run.command)
        finally:
            if started is not None:
                self._egress_summary(started[0], started[2])
            self._home_summary(box_home)
        self._box_code = box.exit_code
        self.report.update(
            {"command_exit_code": box.exit_code, "forwarded_signal": box.forwarded_signal}
        )
        if box.error:
            self.note(box.error)
            self.note(
                "  hint: the box's home is empty: a program installed under your home "
                "needs its directory in read_only (.plangate/isolation.toml)"
            )
        if box_dir is not None:
            self._import_box_ledger(run, ws, box_dir, env)
        return self._finish(run, ws, box.exit_code, env)

    def _say_left_out(self, run: PreparedRun) -> None:
        """Say (and record) which uncommitted or untracked work of the caller's tree the
        run leaves out: the workspace holds the approved commit and nothing else."""
        from plangate.execution.workspace import caller_status, left_out_of_run
        from plangate.git import GitError
        from plangate.layout import PLANGATE_DIR, WORKING_DIR

        own = (f"{WORKING_DIR}/{run.task_id}", PLANGATE_DIR)
        try:
            left = left_out_of_run(caller_status(self.root), own=own)
        except GitError as exc:
            self.report["left_out"] = {"error": exc.code}
            self.note(f"cannot list the uncommitted work the run leaves out ({exc.code})")
            return
        self.report["left_out"] = {
            "count": len(left),
            "paths": [p.path for p in left[:MAX_LEFT_OUT_LISTED]],
        }
        if not left:
            return
        shown = ", ".join(f"{p.path} ({p.kind})" for p in left[:LEFT_OUT_SHOWN])
        more = f" and {len(left) - LEFT_OUT_SHOWN} more" if len(left) > LEFT_OUT_SHOWN else ""
        self.note(
            f"left out of the run: {len(left)} uncommitted or untracked path(s) of your "
            f"working tree, which the box does not see (it works on commit "
            f"{run.head[:12]}): {shown}{more}; commit them first to include them"
        )

    def _egress_summary(self, proxy: EgressProxy, directory: str) -> None:
        """Stop the proxy; record and say what the box contacted and what it was refused."""
        summary = proxy.stop()
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
        self.report["egress"] = summary.to_json()
        for word, items in (("contacted", summary.contacted), ("refused", summary.refused)):
            if items:
                listed = ", ".join(f"{d.host}:{d.port} ({d.connections}x)" for d in items[:10])
                self.note(f"egress {word}: {listed}")

    def _home_summary(self, box_home: HomeCopy) -> None:
        """Record what the box changed in its private home (paths, digests), then discard it."""
        changes = home_changes(box_home)
        discard_home(box_home)
        self.report["home"] = {
            "copied": list(box_home.copied),
            "changed_count": len(changes),
            "changes": changes[:MAX_CHANGES_LISTED],
            "discarded": True,
        }
        if changes:
            listed = ", ".join(f"{c['path']} ({c['change']})" for c in changes[:10])
            more = f" and {len(changes) - 10} more" if len(changes) > 10 else ""
            self.note(
                f"the box changed {len(changes)} file(s) of its private home, discarded "
                f"(the host's home is untouched): {listed}{more}"
            )

    def _box_dir(self, run: PreparedRun, ws: Any) -> Path | None:
        """The run's box directory with its box-local ledger (backends that remap only)."""
        from plangate.execution.boxledger import prepare_box_dir, pristine_digest

        if not self.backend.remaps:
            return None  # Seatbelt: no fixed path to show it at, no mount the hooks can observe
        plan_hash = run.bound.get("plan_hash")
        box_dir = prepare_box_dir(
            ws.run_dir,
            run_id=ws.run_id,
            task_id=run.task_id,
            approved=run.head,
            plan_hash=plan_hash if isinstance(plan_hash, str) else "",
            backend=self.backend.name,
        )
        self._pristine = pristine_digest(box_dir)
        return box_dir

    def _import_box_ledger(
        self, run: PreparedRun, ws: Any, box_dir: Path, env: Mapping[str, str]
    ) -> None:
        """Import what the hooks recorded inside the box (observations) into the ledger."""
        from plangate.execution.boxledger import import_box_ledger

        summary = import_box_ledger(
            self.root, env, box_dir, run_id=ws.run_id, task_id=run.task_id,
            pristine=self._pristine,
        )
        self.report["box_ledger"] = {
            k: summary.get(k) for k in ("status", "imported", "digest", "recorded")
        }
        if summary.get("status") != "INTACT" or not summary.get("recorded"):
            self.note(
                f"box ledger {summary.get('status')}: {summary.get('detail') or 'see the ledger'}"
                f"; {summary.get('imported', 0)} entries imported"
            )

    def _policy(
        self,
        run: PreparedRun,
        ws: Any,
        cwd: Path,
        env: Mapping[str, str],
        config: IsolationConfig,
        *,
        box_home: str,
        proxy: ProxyAccess | None,
        box_dir: Path | None,
        secrets: tuple[str, ...],
        protected: tuple[str, ...],
    ) -> SandboxPolicy:
        """The box's policy; ``secrets`` and ``protected``: :meth:`_policy_reads`."""
        home = env.get("HOME", "") or str(Path.home())
        root = str(self.root)
        if self.backend.remaps:  # the workspace covers the repository's own path
            secrets = tuple(p for p in secrets if not path_within(p, root))
        granted = tuple(expand_home(p, home) for p in config.shown_read_only())
        granted_files = tuple(
            Mount.same(p) for p in granted if Path(p).exists() and not Path(p).is_dir()
        )
        facts = ExecBoxFacts(
            root=root,
            cwd=str(cwd.resolve()) if path_within(str(cwd.resolve()), root) else root,
            workspace=str(ws.tree),
            home=home,
            box_home=box_home,
            system=(*system_view(granted, remaps=self.backend.remaps), *granted_files),
            read_only=read_only_paths(self.root, run.head, run.task_id, ws, protected),
            hidden=tuple(hidden(p) for p in secrets),
            env=env,
            env_names=config.env_names(),
            task_id=run.task_id,
            remaps=self.backend.remaps,
            run_id=ws.run_id,
            box_dir=str(box_dir) if box_dir is not None else "",
            proxy=proxy,
        )
        return exec_policy(facts)

    def _policy_reads(
        self, run: PreparedRun, env: Mapping[str, str], home: str
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What the policy reads from git: the host's secret paths, the protected paths."""
        secrets = secret_paths(self.root, env, home, _sqlite_ledger(self.root, env))
        return secrets, protected_paths(self.root, run.head, run.task_id)

    def _finish(
        self, run: PreparedRun, ws: Any, box_code: int, env: Mapping[str, str]
    ) -> CommandResult:
        from plangate.execution.apply import workspace_facts
        from plangate.execution.workspace import discard_tree, record_state

        result = record_state(ws, self.root, f"plangate exec {run.task_id} ({ws.run_id})")
        # Read before the workspace goes: what git dropped or would record as no file.
        try:
            found = workspace_facts(ws.tree, ws.git())
        finally:
            # Its state is recorded: the tree goes beside the judging and the ledger entry
            # (removing many small files costs as much as they do), and the run waits
            # for it before it ends, whatever happens meanwhile.
            discarding = _Beside(lambda: discard_tree(ws))
        try:
            return self._judged(run, ws, box_code, env, result=result, found=found,
                                discarding=discarding)
        finally:
            discarding.wait()

    def _judged(
        self, run: PreparedRun, ws: Any, box_code: int, env: Mapping[str, str], *,
        result: str, found: Any, discarding: _Beside,
    ) -> CommandResult:
        from plangate.execution.apply import ACCEPTED, apply_result, judge

        self.report["result"] = result
        if result == run.head and not found:
            self.report.update({"verdict": "NO_CHANGES", "reasons": []})
            self.note("the run changed nothing; the repository is unchanged")
            discarding.wait()  # the tree lies inside the run's directory
            shutil.rmtree(ws.run_dir, ignore_errors=True)
            self._record(run, env)
            return CommandResult(box_code, result_verdict="NO_CHANGES")
        facts = self._result_facts(run, ws, result, found)
        decision = judge(facts)
        patch = self._keep_patch(ws, run.head, result)
        self.report.update(
            {
                "verdict": decision.verdict,
                "reasons": list(decision.codes),
                "changed": list(facts.changed)[:200],
                "changed_count": len(facts.changed),
                **patch,
            }
        )
        if decision.verdict != ACCEPTED:
            self._keep_reasons(ws, decision)
            self.note(
                f"the result was refused: nothing reached the repository; the patch "
                f"and the reasons are kept in {ws.run_dir}"
            )
            for reason in decision.reasons:
                self.note(f"  - {reason.code}: {reason.message}")
            self.note(
                f"  to keep the in-scope part: 'plangate runs show {ws.run_id}', then "
                f"'plangate runs apply {ws.run_id} --in-scope' (a person, at a terminal)"
            )
            self._record(run, env)
            # The command's own exit code; the refused verdict sets exec's (1 or 3).
            return CommandResult(box_code, result_verdict=decision.verdict)
        applied = apply_result(
            self.root, ws.git_dir, result, run.head, ws.run_id, succeeded=box_code == 0
        )
        self.report.update(
            {
                "branch": applied.branch,
                "fast_forwarded": applied.fast_forwarded,
                "apply_note": applied.note,
            }
        )
        shutil.rmtree(ws.git_dir, ignore_errors=True)  # its objects are in the repository now
        where = (
            f"{applied.note}"
            if applied.fast_forwarded
            else f"the current branch was not moved ({applied.note})"
        )
        self.note(
            f"{len(facts.changed)} path(s) committed as {result[:12]} "
            f"on branch {applied.branch}; {where}"
        )
        self._record(run, env)
        return CommandResult(box_code, result_verdict=ACCEPTED)

    def _result_facts(self, run: PreparedRun, ws: Any, result: str, found: Any) -> Any:
        plan_hash = run.bound.get("plan_hash")
        return gather_result_facts(
            self.root,
            ws.git(),
            task_id=run.task_id,
            approved=run.head,
            result=result,
            verification=run.verification,
            plan_hash=plan_hash if isinstance(plan_hash, str) else None,
            workspace=found,
        )

    def _keep_patch(self, ws: Any, approved: str, result: str) -> dict[str, Any]:
        from plangate.fsutil import atomic_write
        from plangate.git import GitError

        try:
            proc = ws.git().run(
                [
                    "diff",
                    "--binary",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-renames",
                    approved,
                    result,
                ]
            )
        except GitError as exc:
            return {"patch": None, "patch_error": exc.code}
        data = proc.stdout
        if len(data) > MAX_PATCH_BYTES:
            return {"patch": None, "patch_error": "PATCH_TOO_LARGE"}
        path = ws.run_dir / "result.patch"
        atomic_write(path, data, mode=0o600)
        return {"patch": str(path), "patch_digest": sha256_digest(data)}

    def _keep_reasons(self, ws: Any, decision: Any) -> None:
        from plangate.canonical import canonical_bytes
        from plangate.fsutil import atomic_write

        body = {"verdict": decision.verdict, "reasons": [r.to_json() for r in decision.reasons]}
        atomic_write(ws.run_dir / "reasons.json", canonical_bytes(body) + b"\n", mode=0o600)


def gather_result_facts(
    root: Path,
    result_git: Any,
    *,
    task_id: str,
    approved: str,
    result: str,
    verification: Any,
    plan_hash: str | None,
    workspace: Any = (),
) -> Any:
    """The facts :func:`plangate.execution.apply.judge` reads of ``approved`` -> ``result``.

    ``result_git`` is the repository holding the result commit (a run's own
    ``state.git``, which borrows the repository's objects); the surfaces and the
    plan are read from the approved commit in the repository itself. A plan whose
    digest is not ``plan_hash`` (the verified plan's) gives no scope: nothing is
    allowed.
    """
    from plangate.execution.apply import ResultFacts, tree_facts
    from plangate.git import Git, GitError
    from plangate.layout import MAX_ARTIFACT_BYTES
    from plangate.paths import canonical_paths
    from plangate.surfaces import surfaces_at_commit

    try:
        raw_changed = tuple(result_git.changed_paths(approved, result))
        tree = tree_facts(result_git, result, raw_changed)
    except GitError as exc:
        raise EnvironmentFailure("EXEC_APPLY_FAILED", exc.message, exc.hint) from None
    # Each path validated once: ci check's rules match these paths as they are.
    changed, rejected = canonical_paths(raw_changed)
    unmatchable = [(str(raw), code) for raw, code in rejected]
    repo = Git(root)
    try:
        surfaces = surfaces_at_commit(repo, approved)
    except GitError as exc:
        raise EnvironmentFailure("CI_SURFACES_UNREADABLE", exc.message, exc.hint) from None
    plan: bytes | None
    try:
        plan = repo.read_blob(approved, f"docs/working/{task_id}/plan.md", MAX_ARTIFACT_BYTES)
    except GitError:
        plan = None
    if plan is not None and sha256_digest(plan) != plan_hash:
        plan = None  # not the verified plan: the scope is undefined, nothing is allowed
    return ResultFacts(
        task_id,
        approved,
        result,
        tuple(changed),
        tuple(unmatchable),
        surfaces,
        verification,
        plan,
        tree,
        workspace,
    )


OPT_OUT = HumanOnly(
    "EXEC_OPT_OUT_AGENT_ENVIRONMENT",
    "EXEC_OPT_OUT_NOT_INTERACTIVE",
    "--no-isolation refused",
    "run it yourself in your own terminal, outside the agent session",
)
"""How ``--no-isolation`` refuses an agent or a caller without a terminal."""

UNAUTHENTICATED = (
    "unauthenticated: no trust root is in force, so nothing proves who asked "
    "(no agent marker and a terminal were seen; neither is evidence of a person)"
)
"""What the ledger says of an opt-out made without a trust root."""


def require_human_opt_out(env: Mapping[str, str], stdin: object) -> None:
    """Refuse ``--no-isolation`` under agent markers or without a terminal (not a proof)."""
    refuse_unless_human(env, stdin, OPT_OUT)


class SignedOptOut(NamedTuple):
    """A verified opt-out statement and what it was checked under."""

    statement: OptOut
    data: bytes
    signature: bytes
    signer: Verified
    trust_commit: str
    trust_digest: str

    @property
    def digest(self) -> str:
        """The statement's digest (recorded: a statement counts once)."""
        return sha256_digest(self.data)

    def evidence(self) -> dict[str, Any]:
        """What the ledger and ``run.ndjson`` record of the statement and its signer."""
        return {
            "authority": "signed",
            "by": f"{self.signer.principal} (override, signed opt-out statement)",
            "principal": self.signer.principal,
            "role": "override",
            "key_type": self.signer.key_type,
            "key_fingerprint": self.signer.key_fingerprint,
            "statement": dict(self.statement._asdict()),
            "statement_digest": self.digest,
            "signature": self.signature.decode("ascii", "replace"),
            "trust_root": self.trust_commit,
            "trust_root_digest": self.trust_digest,
        }


def _statement_used(root: Path, env: Mapping[str, str], task_id: str, digest: str) -> bool:
    from plangate.ledger import open_ledger

    with open_ledger(root, env) as ledger:
        return any(
            e.payload.get("statement_digest") == digest
            for e in ledger.entries(kind="exec_unisolated", subject=task_id)
        )


def _opt_out_refusal(reasons: list[Any]) -> HumanRequired:
    first = reasons[0]
    return HumanRequired(
        first.code,
        "--no-isolation refused: " + "; ".join(f"{r.code}: {r.message}" for r in reasons),
        first.hint,
    )


def check_opt_out(
    signed: SignedOptOut | None,
    facts: OptOutFacts,
    root: Path,
    env: Mapping[str, str],
    *,
    head: str,
    digest: str,
) -> None:
    """The opt-out rules over ``facts`` for a run at ``head`` of the command ``digest``."""
    from plangate.authority.optout import opt_out_reasons
    from plangate.clock import utc_now

    task_id = facts.task_id
    used = signed is not None and _statement_used(root, env, task_id, signed.digest)
    reasons = opt_out_reasons(
        facts._replace(head=head, command_digest=digest, now=utc_now(), used=used)
    )
    if reasons:
        raise _opt_out_refusal(reasons)


def authorize_opt_out(
    root: Path, task_id: str, command: Sequence[str], env: Mapping[str, str]
) -> tuple[SignedOptOut | None, OptOutFacts | None]:
    """The signed statement that lets this opt-out run, or ``(None, None)`` without a trust root.

    With a trust root in force (the trust branch's), the statement must hold
    every rule of :mod:`plangate.authority.optout`; else this raises.
    """
    from plangate.authority.consumer import LOCAL_TRUST, read_opt_out, trust_root_for
    from plangate.authority.optout import OptOutFacts
    from plangate.authority.verify import Verified
    from plangate.canonical import command_digest
    from plangate.clock import utc_now
    from plangate.git import Git

    trust = trust_root_for(root, LOCAL_TRUST)
    if trust is None:
        return None, None
    statement, problem, check, data, signature = read_opt_out(root, task_id, trust)
    digest = command_digest(command)
    head = Git(root).head()
    facts = OptOutFacts(statement, problem, check, task_id, digest, head, utc_now(), False)
    signed = None
    if (
        isinstance(check, Verified)
        and statement is not None
        and data is not None
        and signature is not None
    ):
        signed = SignedOptOut(statement, data, signature, check, trust.commit, trust.digest)
    check_opt_out(signed, facts, root, env, head=head, digest=digest)
    return signed, facts


class UnisolatedRunner:
    """The recorded opt-out: check it again under the lock, record it, run in the working tree."""

    def __init__(
        self,
        root: Path,
        note: Any,
        signed: SignedOptOut | None = None,
        facts: OptOutFacts | None = None,
    ) -> None:
        self.root = root
        self.note = note
        self.signed = signed
        self.facts = facts
        self.report: dict[str, Any] = {
            "isolation": "opted_out",
            "authority": "signed" if signed is not None else "unauthenticated",
        }
        if signed is not None:
            self.report.update(
                {"principal": signed.signer.principal, "statement_digest": signed.digest}
            )

    def __call__(self, run: PreparedRun, *, cwd: Path, env: Mapping[str, str]) -> CommandResult:
        """Record the opt-out in the ledger and ``run.ndjson``; refuse to run if either fails."""
        from plangate.execution.command import run_verified
        from plangate.execution.runlog import append_run_log, open_task_dir

        entry: dict[str, Any] = {
            "head": run.head,
            "command_digest": run.command_digest,
            "isolation": "opted_out",
        }
        if self.signed is not None:
            entry.update(self.signed.evidence())
        else:
            entry.update({"authority": "unauthenticated", "by": UNAUTHENTICATED})
        try:
            if self.facts is not None:
                # Under the run's lock: HEAD and the command exec verified, and the
                # statement not used meanwhile by another opt-out.
                check_opt_out(
                    self.signed,
                    self.facts,
                    self.root,
                    env,
                    head=run.head,
                    digest=run.command_digest,
                )
            _ledger_append(self.root, env, "exec_unisolated", run.task_id, entry)
            line = {"event": "exec_unisolated", "task_id": run.task_id, "at": utc_now_text()}
            with open_task_dir(self.root, run.task_id) as task:
                append_run_log(task, {**line, **entry})
        except PlanGateError as exc:
            self.report.update({"error": exc.code})
            return CommandResult(
                int(exc.exit_code) if exc.exit_code != ExitCode.ACCEPTED else 1,
                f"{exc.code}: the opt-out was not recorded ({exc.message})",
                started=False,
            )
        if self.signed is None:
            self.note("WARNING: running without isolation (unauthenticated opt-out: no trust root)")
        else:
            self.note(
                "WARNING: running without isolation (opt-out signed by "
                f"{self.signed.signer.principal})"
            )
        return run_verified(run, cwd=cwd, env=env)


def choose_runner(
    cwd: Path,
    task_id: str,
    env: Mapping[str, str],
    stdin: object,
    *,
    isolate: bool,
    network: bool | None,
    note: Any,
    command: Sequence[str],
) -> IsolatedRunner | UnisolatedRunner:
    """The runner of one ``plangate exec``; raises (and best-effort records) a refusal.

    Isolated by default: without a working sandbox backend this refuses
    (``SANDBOX_UNAVAILABLE``) before anything runs. ``isolate=False`` is the
    opt-out: refused under agent markers or without a terminal, and, where a
    trust root is in force, without a valid signed statement for ``command``.
    """
    from plangate.isolation.backend import select_backend
    from plangate.snapshot import check_task_id, find_repo_root

    task_id = check_task_id(task_id)
    root = find_repo_root(cwd)
    try:
        if not isolate:
            require_human_opt_out(env, stdin)
            signed, facts = authorize_opt_out(root, task_id, command, env)
            return UnisolatedRunner(root, note, signed, facts)
        return IsolatedRunner(root, select_backend(), network=network, note=note)
    except PlanGateError as exc:
        try:
            _ledger_append(
                root,
                env,
                "exec_refused",
                task_id,
                {"verdict": "REJECTED", "reasons": [exc.code], "started": False},
            )
        except PlanGateError as failure:
            note(f"note: refusal not recorded in the ledger ({failure.code})")
        raise
