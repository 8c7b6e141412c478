"""``eval run``: the IO around the pure Promotion Decision.

:func:`run_evaluation`:

1. looks the candidate up in the ledger and re-runs the policy gate
   (:func:`plangate.evaluation.gate.service.gate_candidate`), so a candidate
   whose commit or bindings changed since its last gate is re-judged;
2. reads the registered plan from the ledger (recomputing its digest), the
   verdicts already recorded for this candidate's commit or tree (under this
   plan and under others), where the ledger first saw the commit or tree, and
   the runs of this evaluation that started trials and never decided;
3. builds both HarnessManifests from git objects;
4. applies the decision rules that need no trial
   (:func:`plangate.evaluation.run.decision.decide_before_trials`); only when
   none stops does it record ``eval_run_started`` and run the trials: baseline
   and candidate in linked worktrees in a temporary directory (always removed),
   the runner and the grader always started from the *baseline* worktree, only
   ``--harness-dir`` differs, through an :class:`~plangate.evaluation.run.trials.Executor`;
5. decides with :func:`plangate.evaluation.run.decision.decide` and writes the
   HarnessExperimentResult and the PromotionDecision, each with its digest, to
   the ledger (kinds ``eval_experiment_result`` and ``eval_promotion_decision``;
   the decision names the ``eval_run_started`` entry it closes).

A run killed between ``eval_run_started`` and its decision leaves a start
without a decision: the next attempt records INCONCLUSIVE
(``EVALUATION_INTERRUPTED``) instead of a fresh evaluation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from plangate.canonical import digest
from plangate.errors import PlanGateError
from plangate.evaluation.harness.definition import DEFAULT_DEFINITION_PATH
from plangate.evaluation.harness.manifest import HarnessManifest
from plangate.evaluation.registry.plan import plan_digest as compute_plan_digest
from plangate.evaluation.registry.service import required_level_of
from plangate.evaluation.registry.store import (
    LEDGER_KIND_CANDIDATE,
    LEDGER_KIND_DECISION,
    LEDGER_KIND_EXPERIMENT,
    LEDGER_KIND_GATE,
    LEDGER_KIND_RUN_STARTED,
    RegisteredPlan,
    commit_tree,
    independence_of,
    lookup_candidate,
    plan_or_problem,
)
from plangate.evaluation.run.agents import COMMAND_KIND, agent_host, endpoint_address
from plangate.evaluation.run.decision import (
    EvaluationInput,
    PriorDecision,
    decide,
    decide_before_trials,
)
from plangate.evaluation.run.protocol import CommandSpec, TrialOutcome, TrialSpec
from plangate.evaluation.run.trials import (
    Executor,
    LocalPoolExecutor,
    ProgressLine,
    StepResult,
    TrialBox,
    find_host,
    resolve_argv,
)
from plangate.fsutil import atomic_write_in, exclusive_lock
from plangate.git import Git
from plangate.isolation.config import read_isolation_config
from plangate.isolation.proxy import egress_allowed
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.ledger import Ledger, LedgerEntry

EXPERIMENT_SCHEMA = "plangate-experiment/1"
DECISION_SCHEMA = "plangate-promotion-decision/1"
TEST_STRATEGY_PREFIXES = ("test-strategy:", "test_strategy:")
"""Component ids naming a test strategy (no component type exists for it yet)."""


@dataclass(frozen=True)
class EvaluationRun:
    """What one ``eval run`` produced."""

    result: Result
    experiment: Mapping[str, Any]
    experiment_digest: str
    decision: Mapping[str, Any]
    decision_digest: str


@dataclass(frozen=True)
class _Subject:
    """The candidate under evaluation, as the ledger and git know it."""

    cdigest: str
    candidate: Mapping[str, Any]
    tree: str | None

    @property
    def commit(self) -> str:
        return str(self.candidate["candidate_commit"])

    @property
    def plan_digest(self) -> str:
        return str(self.candidate["evaluation_plan_digest"])

    def names(self, payload: Mapping[str, Any]) -> bool:
        """True when a ledger payload names this candidate's commit or tree."""
        return payload.get("candidate_commit") == self.commit or (
            self.tree is not None and payload.get("candidate_tree") == self.tree
        )

    def is_this(self, payload: Mapping[str, Any]) -> bool:
        """True when a payload is about this candidate: its id, commit or tree."""
        return payload.get("candidate_id") == self.candidate["candidate_id"] or self.names(payload)


# -- what the ledger already knows ---------------------------------------------------


def _prior_verdicts(ledger: Ledger, subject: _Subject) -> list[str]:
    """Verdicts already recorded for this evaluation (same plan digest, and the same
    candidate id, commit or tree): a new candidate id over the same commit, or the same
    tree re-committed under a new commit id, cannot dodge a recorded INCONCLUSIVE."""
    return [
        str(e.payload.get("decision"))
        for e in ledger.entries(kind=LEDGER_KIND_DECISION)
        if e.payload.get("plan_digest") == subject.plan_digest
        and subject.is_this(e.payload)
        and e.payload.get("final") is not False
    ]


def _judged_something(payload: Mapping[str, Any]) -> bool:
    """False for a decision about a candidate whose tree was its own baseline's tree (there
    was nothing to judge); a payload that does not say counts as a judgement."""
    base = payload.get("baseline_tree")
    return base is None or payload.get("candidate_tree") != base


def _other_plan_verdicts(ledger: Ledger, subject: _Subject) -> list[PriorDecision]:
    """Verdicts recorded for the same commit or tree under another plan."""
    return [
        PriorDecision(str(e.payload.get("plan_digest")), str(e.payload.get("decision")))
        for e in ledger.entries(kind=LEDGER_KIND_DECISION)
        if e.payload.get("plan_digest") != subject.plan_digest
        and subject.names(e.payload)
        and _judged_something(e.payload)
    ]


def _baseline_verdicts(
    ledger: Ledger, plan_digest: str, baseline: str, tree: str | None
) -> list[PriorDecision]:
    """Verdicts recorded under other plans for the baseline commit or tree as a candidate."""
    return [
        PriorDecision(str(e.payload.get("plan_digest")), str(e.payload.get("decision")))
        for e in ledger.entries(kind=LEDGER_KIND_DECISION)
        if e.payload.get("plan_digest") != plan_digest
        and (
            e.payload.get("candidate_commit") == baseline
            or (tree is not None and e.payload.get("candidate_tree") == tree)
        )
        and _judged_something(e.payload)
    ]


def _candidate_payload(entry: LedgerEntry) -> Mapping[str, Any]:
    """A candidate registration flattened to the keys :meth:`_Subject.names` reads."""
    candidate = entry.payload.get("candidate")
    commit = candidate.get("candidate_commit") if isinstance(candidate, Mapping) else None
    return {"candidate_commit": commit, "candidate_tree": entry.payload.get("candidate_tree")}


def _first_seen(ledger: Ledger, subject: _Subject) -> int | None:
    """The ledger sequence of the first entry naming the candidate's commit or tree.

    The ledger order is the one fact a candidate cannot forge (a commit's date is
    written by its author): PlanGate knows a commit from the first entry that names it.
    """
    seqs = [
        e.seq
        for e in ledger.entries(kind=LEDGER_KIND_CANDIDATE)
        if subject.names(_candidate_payload(e))
    ]
    for kind in (LEDGER_KIND_RUN_STARTED, LEDGER_KIND_DECISION):
        seqs.extend(e.seq for e in ledger.entries(kind=kind) if subject.names(e.payload))
    return min(seqs) if seqs else None


def _unfinished_runs(ledger: Ledger, subject: _Subject) -> list[int]:
    """Runs of this evaluation that started trials and recorded no decision."""
    closed = {e.payload.get("started_seq") for e in ledger.entries(kind=LEDGER_KIND_DECISION)}
    return [
        e.seq
        for e in ledger.entries(kind=LEDGER_KIND_RUN_STARTED)
        if e.payload.get("plan_digest") == subject.plan_digest
        and subject.is_this(e.payload)
        and e.seq not in closed
    ]


# -- identity and trials ---------------------------------------------------------------


def _manifest_or_problem(
    git: Git, commit: str, definition_path: str
) -> tuple[HarnessManifest | None, Reason | None]:
    from plangate.evaluation.harness.service import build_manifest

    try:
        return build_manifest(git, commit, definition_path), None
    except PlanGateError as exc:
        return None, Reason(
            "MANIFEST_IDENTITY_UNOBTAINABLE",
            f"no HarnessManifest for {commit[:12]}: {exc.code}: {exc.message}",
            exc.hint,
        )


def _component_deltas(
    baseline: HarnessManifest | None, candidate: HarnessManifest | None
) -> list[dict[str, Any]]:
    if baseline is None or candidate is None:
        return []
    before = {str(c["id"]): c for c in baseline.components()}
    after = {str(c["id"]): c for c in candidate.components()}
    deltas = []
    for cid in sorted(set(before) | set(after)):
        b, a = before.get(cid), after.get(cid)
        b_sha = b.get("content_sha") if b else None
        a_sha = a.get("content_sha") if a else None
        if b_sha != a_sha:
            deltas.append(
                {"component_id": cid, "before_content_sha": b_sha, "after_content_sha": a_sha}
            )
    return deltas


def _component_types(*manifests: HarnessManifest | None) -> dict[str, str]:
    types: dict[str, str] = {}
    for manifest in manifests:
        if manifest is None:
            continue
        for comp in manifest.components():
            cid, ctype = str(comp["id"]), str(comp["type"])
            # A component whose type differs between the sides is undecidable.
            types[cid] = ctype if types.get(cid, ctype) == ctype else "unknown"
    return types


def build_trials(
    plan: Mapping[str, Any],
    baseline_dir: Path,
    candidate_dir: Path,
    work_root: Path,
    sealed: Mapping[str, Path] | None = None,
) -> list[TrialSpec]:
    """One spec per (fixture, trial, side); runner and grader always from ``baseline_dir``.

    ``sealed`` maps a fixture path to where its bytes were moved out of both trees
    (:func:`seal_fixtures`); without it the fixture is read from the baseline tree.
    """

    def command(key: str) -> CommandSpec:
        section = plan[key]
        pinned = tuple(
            (str(baseline_dir / str(item["path"])), str(item["digest"]))
            for item in section.get("files", [])
        )
        options = tuple(
            (k, tuple(v) if isinstance(v, list) else v)
            for k, v in sorted(section.items())
            if k not in ("kind", "argv", "files", "timeout_seconds")
        )
        return CommandSpec(
            argv=resolve_argv(list(section["argv"])),
            cwd=str(baseline_dir),
            timeout_seconds=float(section.get("timeout_seconds") or 60),
            pinned_files=pinned,
            kind=str(section.get("kind", COMMAND_KIND)),
            options=options,
        )

    runner, grader = command("runner"), command("grader")
    specs: list[TrialSpec] = []
    trials = int(plan["trials"])
    for fixture in plan["fixtures"]:
        for number in range(1, trials + 1):
            for side, harness in (("baseline", baseline_dir), ("candidate", candidate_dir)):
                specs.append(
                    TrialSpec(
                        side=side,
                        fixture_id=str(fixture["id"]),
                        role=str(fixture["role"]),
                        trial=number,
                        runner=runner,
                        grader=grader,
                        harness_dir=str(harness),
                        fixture_source=str(
                            (sealed or {}).get(str(fixture["path"]))
                            or baseline_dir / str(fixture["path"])
                        ),
                        fixture_digest=str(fixture.get("digest")),
                        # An opaque directory name: its path reaches the runner (--out).
                        work_dir=str(work_root / f"t{secrets.token_hex(8)}"),
                    )
                )
    return specs


# -- the run ---------------------------------------------------------------------------


def run_evaluation(
    repo_root: Path,
    env: Mapping[str, str],
    candidate_ref: str,
    *,
    jobs: int = 1,
    executor: Executor | None = None,
    progress: TextIO | None = None,
) -> EvaluationRun:
    """Paired evaluation of a registered candidate; records and returns the decision."""
    from plangate.evaluation.gate.service import gate_candidate
    from plangate.ledger import open_ledger

    git = Git(repo_root)
    root = git.toplevel()
    with open_ledger(root, env) as ledger:
        # eval run looks up with check_scope=False: a malformed scope is the gate's to
        # judge (and record), not a reason to refuse before any record exists.
        cdigest, candidate = lookup_candidate(ledger, candidate_ref, check_scope=False)
        earlier = ledger.entries(kind=LEDGER_KIND_GATE, subject=cdigest)
    previous = dict(earlier[-1].payload) if earlier else None
    lock = evaluation_lock_path(root, str(candidate["evaluation_plan_digest"]))
    box, box_problem = _trial_box() if executor is None else (None, None)
    with exclusive_lock(lock):
        gate = gate_candidate(root, env, cdigest, record=True)
        subject = _Subject(cdigest, candidate, commit_tree(git, str(candidate["candidate_commit"])))
        with open_ledger(root, env) as ledger:
            return _evaluate_locked(
                git,
                ledger,
                subject,
                gate,
                executor=executor or LocalPoolExecutor(jobs, ProgressLine(progress), box),
                rejudged=gate_changes(previous, gate),
                sandbox_problem=box_problem,
                env=env,
            )


def _commands_missing(plan: Mapping[str, Any] | None) -> list[Reason]:
    """The plan's runner and grader programs that cannot be found here (preflight)."""
    if plan is None:
        return []
    missing: list[Reason] = []
    for key in ("runner", "grader"):
        if plan[key].get("kind", COMMAND_KIND) != COMMAND_KIND:
            continue  # a built-in kind runs PlanGate's own code (agents: _agent_preflight)
        argv = plan[key].get("argv") or []
        program = str(argv[0]) if argv else ""
        if not program or ("/" not in program and shutil.which(program) is None):
            missing.append(
                Reason(
                    "EVAL_RUNNER_UNAVAILABLE",
                    f"the plan's {key} program {program or '(empty)'!r} is not on PATH",
                    f"install {program or 'the ' + key} where plangate runs, then run again",
                )
            )
    return missing


def _agent_preflight(
    root: Path, plan: Mapping[str, Any] | None, env: Mapping[str, str] | None, *, host_here: bool,
) -> list[Reason]:
    """What an agent runner needs before any trial (preflight): its endpoint on the
    baseline's egress allowlist and, when trials run on this machine, its credential set
    in the evaluator's environment (by name) and the pinned host on ``PATH``."""
    host = agent_host(str(plan["runner"].get("kind", ""))) if plan is not None else None
    if plan is None or host is None:
        return []
    section = plan["runner"]
    source = env or {}
    problems: list[Reason] = []
    name = str(section["api_key_env"])
    if host_here and not source.get(name):  # on a cluster the key is the workers' own
        problems.append(Reason(
            "EVAL_AGENT_CREDENTIAL_MISSING",
            f"the plan grants {host.kind} the credential {name}, which is not set here",
            f"export {name} in the evaluator's environment (it is read by name, never stored)",
        ))
    address = endpoint_address(str(section["endpoint"]))
    try:
        rules = read_isolation_config(root, str(plan["baseline_commit"])).egress_rules(source)
    except PlanGateError as exc:
        problems.append(Reason(exc.code, exc.message, exc.hint))
        rules = ()
    if address is None or not egress_allowed(rules, *address):
        problems.append(Reason(
            "EVAL_AGENT_ENDPOINT_NOT_ALLOWED",
            f"the plan's model endpoint {section['endpoint']} is not on the egress allowlist "
            "of the baseline commit",
            "add it to egress in .plangate/isolation.toml at the baseline (docs/isolation.md)",
        ))
    if host_here:
        found = find_host(host, source.get("PATH", "/usr/bin:/bin"))
        if isinstance(found, StepResult):
            problems.append(Reason(found.code, found.detail,
                                   "install the pinned hosts (scripts/install-hosts.sh)"))
    return problems


def _trial_box() -> tuple[TrialBox | None, Reason | None]:
    """The sandbox trials run in, or why there is none (an evaluation without one is
    INCONCLUSIVE, ``SANDBOX_UNAVAILABLE``: candidate code never runs unconfined)."""
    try:
        return TrialBox.here(), None
    except PlanGateError as exc:
        return None, Reason(exc.code, exc.message, exc.hint)


def evaluation_lock_path(root: Path, plan_digest: str) -> Path:
    """The lock that keeps evaluations under one plan apart.

    Finality (a recorded INCONCLUSIVE/FAIL) spans every candidate id, commit and
    tree of a plan, so the finality check and the new record must not interleave
    with *any* other run of that plan, not only with runs of the same candidate.
    """
    return root / ".plangate" / f"eval-plan-{plan_digest.removeprefix('sha256:')[:32]}.lock"


GATE_BINDING_FACTS = (
    "candidate_commit",
    "plan_digest",
    "baseline_commit",
    "baseline_manifest_ref",
    "observed_diff",
    "changed_components",
    "required_independence",
)


def gate_changes(previous: Mapping[str, Any] | None, gate: Result) -> dict[str, Any]:
    """What differs between the last recorded gate verdict and the one just computed.

    The gate is always re-run; this records *why* the new verdict may differ
    (a changed commit, plan, baseline identity or diff is re-judged, never reused).
    """
    if previous is None:
        return {"previous_verdict": None, "changed": []}
    recorded = previous.get("facts")
    before: Mapping[str, Any] = recorded if isinstance(recorded, Mapping) else {}
    changed = [key for key in GATE_BINDING_FACTS if before.get(key) != gate.facts.get(key)]
    if previous.get("verdict") != gate.verdict:
        changed.append("verdict")
    return {"previous_verdict": previous.get("verdict"), "changed": changed}


@dataclass(frozen=True)
class _Gathered:
    """What the service read before any trial: the decision input and its sources."""

    inp: EvaluationInput
    plan: RegisteredPlan | None
    baseline_manifest: HarnessManifest | None
    candidate_manifest: HarnessManifest | None
    independence: Result
    baseline_tree: str | None


def _gather(git: Git, ledger: Ledger, subject: _Subject, gate: Result) -> _Gathered:
    """Every fact the decision needs except the trials (service)."""
    candidate = subject.candidate
    registered, plan_problem = plan_or_problem(ledger, subject.plan_digest)
    plan = registered.plan if registered is not None else None
    setup: list[Reason] = [plan_problem] if plan_problem else []
    baseline_manifest = candidate_manifest = None
    if plan is not None:
        definition = str(plan.get("harness_definition") or DEFAULT_DEFINITION_PATH)
        baseline_manifest, problem = _manifest_or_problem(
            git, str(plan["baseline_commit"]), definition
        )
        setup.extend([problem] if problem else [])
        candidate_manifest, problem = _manifest_or_problem(git, subject.commit, definition)
        setup.extend([problem] if problem else [])
    from plangate.evaluation.registry.service import trust_for_reviews

    independence = independence_of(
        ledger, subject.cdigest, candidate, plan, trust_for_reviews(git.toplevel())
    )
    baseline_tree = commit_tree(git, str(plan["baseline_commit"])) if plan is not None else None
    targets = tuple(str(t) for t in candidate.get("target_components", []))
    inp = EvaluationInput(
        candidate_id=str(candidate["candidate_id"]),
        candidate_plan_digest=subject.plan_digest,
        plan=plan,
        plan_digest=compute_plan_digest(plan) if plan is not None else None,
        baseline_manifest_ref=baseline_manifest.harness_id if baseline_manifest else None,
        candidate_manifest_ref=candidate_manifest.harness_id if candidate_manifest else None,
        target_components=targets,
        component_types=_component_types(baseline_manifest, candidate_manifest),
        changed_paths=tuple(str(p) for p in gate.facts.get("observed_diff", []) or []),
        changed_components=tuple(str(c) for c in gate.facts.get("changed_components", []) or []),
        policy_verdict=gate.verdict,
        gate_reasons=gate.reasons,
        trials=(),
        independence_observed=independence.verdict,
        independence_required=required_level_of(gate),
        prior_verdicts=_prior_verdicts(ledger, subject),
        test_strategy=any(t.startswith(TEST_STRATEGY_PREFIXES) for t in targets),
        setup_problems=setup,
        candidate_components=(
            tuple(str(c["id"]) for c in candidate_manifest.components())
            if candidate_manifest is not None
            else None
        ),
        plan_seq=registered.entry_seq if registered is not None else None,
        candidate_first_seq=_first_seen(ledger, subject),
        other_plan_verdicts=_other_plan_verdicts(ledger, subject),
        unfinished_runs=_unfinished_runs(ledger, subject),
        baseline_verdicts=(
            _baseline_verdicts(
                ledger, subject.plan_digest, str(plan["baseline_commit"]), baseline_tree
            )
            if plan is not None
            else ()
        ),
    )
    return _Gathered(
        inp, registered, baseline_manifest, candidate_manifest, independence, baseline_tree
    )


def _evaluate_locked(
    git: Git,
    ledger: Ledger,
    subject: _Subject,
    gate: Result,
    *,
    executor: Executor,
    rejudged: Mapping[str, Any],
    sandbox_problem: Reason | None = None,
    env: Mapping[str, str] | None = None,
) -> EvaluationRun:
    gathered = _gather(git, ledger, subject, gate)
    inp = dataclasses.replace(
        gathered.inp,
        preflight_problems=[
            *([sandbox_problem] if sandbox_problem is not None else []),
            *_commands_missing(gathered.inp.plan),
            *_agent_preflight(git.toplevel(), gathered.inp.plan, env,
                              host_here=getattr(executor, "runs_here", True)),
        ],
    )
    started_seq: int | None = None
    result = decide_before_trials(inp)
    if result is None:
        assert inp.plan is not None  # noqa: S101 -- the plan_available rule stopped otherwise
        started_seq = ledger.append(
            LEDGER_KIND_RUN_STARTED,
            subject.cdigest,
            {
                "plan_digest": subject.plan_digest,
                "candidate_id": inp.candidate_id,
                "candidate_commit": subject.commit,
                "candidate_tree": subject.tree,
            },
        ).seq
        setup: list[Reason] = []
        tamper: list[Reason] = []
        trials = [] if setup else _run_trials(
            git, inp.plan, subject.commit, executor, setup=setup, tamper=tamper
        )
        inp = dataclasses.replace(inp, trials=trials, setup_problems=setup, tamper_problems=tamper)
        result = decide(inp)
    return _record(
        ledger,
        subject,
        gathered=gathered,
        inp=inp,
        result=result,
        gate=gate,
        rejudged=rejudged,
        started_seq=started_seq,
    )


def _record(
    ledger: Ledger,
    subject: _Subject,
    *,
    gathered: _Gathered,
    inp: EvaluationInput,
    result: Result,
    gate: Result,
    rejudged: Mapping[str, Any],
    started_seq: int | None,
) -> EvaluationRun:
    """Write the HarnessExperimentResult and the PromotionDecision to the ledger."""
    candidate = subject.candidate
    experiment = {
        "schema": EXPERIMENT_SCHEMA,
        "candidate_id": inp.candidate_id,
        "candidate_ref": subject.cdigest,
        "candidate_commit": candidate["candidate_commit"],
        "evaluation_plan_digest": inp.plan_digest,
        "candidate_plan_digest": inp.candidate_plan_digest,
        "baseline_manifest_ref": inp.baseline_manifest_ref,
        "candidate_manifest_ref": inp.candidate_manifest_ref,
        "observed_changed_paths": sorted(inp.changed_paths),
        "observed_component_deltas": _component_deltas(
            gathered.baseline_manifest, gathered.candidate_manifest
        ),
        "policy_verdict": gate.verdict,
        "gate_rejudged": dict(rejudged),
        "trials": [t.to_json() for t in inp.trials],
        "fixtures": result.facts.get("fixtures", []),
        "metrics": result.facts.get("metrics", {}),
        "activation": result.facts.get("activation", {}),
        "detection": result.facts.get("detection", {}),
        "independence": {
            "observed": inp.independence_observed,
            "required": inp.independence_required,
            "records": gathered.independence.facts.get("records", []),
            "authority": str(gathered.independence.facts.get("authority", "unauthenticated")),
        },
        "result": result.verdict,
        "reason_codes": list(result.codes),
    }
    experiment_digest = digest(experiment)
    ledger.append(
        LEDGER_KIND_EXPERIMENT,
        subject.cdigest,
        {"experiment_digest": experiment_digest, "experiment": experiment},
    )
    decision = {
        "schema": DECISION_SCHEMA,
        "candidate_id": inp.candidate_id,
        "candidate_ref": subject.cdigest,
        "candidate_commit": candidate["candidate_commit"],
        "candidate_manifest_ref": inp.candidate_manifest_ref,
        "evaluation_plan_digest": inp.plan_digest,
        "experiment_result_ref": experiment_digest,
        "decision": result.verdict,
        "policy_verdict": result.facts.get("policy_verdict"),
        "reasons": [
            {"code": r.code, "message": r.message, "evidence": [experiment_digest, *r.evidence]}
            for r in result.reasons
        ],
        "production_promotion_executed": False,
    }
    decision_digest = digest(decision)
    entry = ledger.append(
        LEDGER_KIND_DECISION,
        subject.cdigest,
        {
            "decision_digest": decision_digest,
            "decision_record": decision,
            "decision": result.verdict,
            "plan_digest": inp.candidate_plan_digest,
            "candidate_id": inp.candidate_id,
            "candidate_commit": candidate["candidate_commit"],
            "candidate_tree": subject.tree,
            "baseline_commit": inp.plan.get("baseline_commit") if inp.plan else None,
            "baseline_tree": gathered.baseline_tree,
            "started_seq": started_seq,
            # A preflight INCONCLUSIVE (a missing review, no sandbox: found before any
            # trial, the pre-registered conditions unchanged) may be run again once fixed.
            "final": not result.facts.get("preflight", False),
        },
    )
    facts = {
        **result.facts,
        "candidate_ref": subject.cdigest,
        "experiment_result_ref": experiment_digest,
        "decision_digest": decision_digest,
        "ledger_seq": entry.seq,
        "trials_total": len(inp.trials),
        "trials_completed": sum(1 for t in inp.trials if t.completed),
    }
    return EvaluationRun(
        Result(result.verdict, result.reasons, facts),
        experiment,
        experiment_digest,
        decision,
        decision_digest,
    )


def _run_trials(
    git: Git,
    plan: Mapping[str, Any],
    candidate_commit: str,
    executor: Executor,
    *,
    setup: list[Reason],
    tamper: list[Reason],
) -> list[TrialOutcome]:
    """Extract both sides as plain trees (no ``.git``), run every trial, always clean up.

    Each tree is checked file by file against its commit's git tree before the
    trials (an extraction that differs is ``EVAL_WORKTREE_UNAVAILABLE``) and
    after them: a modified baseline tree is tampering
    (``BASELINE_WORKTREE_MODIFIED``) and a candidate that changed its own tree made
    its trials unrepeatable (``CANDIDATE_WORKTREE_MODIFIED``). Nothing in a tree
    (an index, ``.gitignore``, ``skip-worktree``, a hook) can hide a change from
    the hashes.
    """
    temp = Path(tempfile.mkdtemp(prefix="plangate-eval-"))
    baseline_dir, candidate_dir = temp / "baseline", temp / "candidate"
    root = git.toplevel()
    commits = {baseline_dir: str(plan["baseline_commit"]), candidate_dir: candidate_commit}
    try:
        for path, commit in commits.items():
            try:
                _extract_checked(root, commit, path)
            except PlanGateError as exc:
                setup.append(
                    Reason(
                        "EVAL_WORKTREE_UNAVAILABLE",
                        f"cannot materialise {commit[:12]}: {exc.code}: {exc.message}",
                        exc.hint,
                    )
                )
                return []
        if not all(plan[k].get("argv") or plan[k].get("kind", COMMAND_KIND) != COMMAND_KIND
                   for k in ("runner", "grader")):
            setup.append(Reason("EVAL_RUNNER_UNAVAILABLE", "the plan's runner or grader is empty"))
            return []
        work = temp / "trials"
        work.mkdir()
        sealed = seal_fixtures(plan, (baseline_dir, candidate_dir), temp / "sealed")
        outcomes = executor.run(build_trials(plan, baseline_dir, candidate_dir, work, sealed))
        moved = frozenset(sealed)
        _check_tree(root, commits[baseline_dir], baseline_dir, "BASELINE_WORKTREE_MODIFIED",
                    tamper, moved=moved)
        _check_tree(root, commits[candidate_dir], candidate_dir, "CANDIDATE_WORKTREE_MODIFIED",
                    setup, moved=moved)
        return outcomes
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _extract_checked(root: Path, commit: str, path: Path) -> None:
    from plangate.isolation.trees import extract_commit

    extract_commit(root, commit, path)
    if _tree_changes(root, commit, path):
        raise PlanGateError(
            "EVAL_WORKTREE_UNAVAILABLE", "the extracted tree differs from its commit"
        )


def _tree_changes(root: Path, commit: str, path: Path) -> list[str]:
    from plangate.isolation.trees import tree_differences

    try:
        return tree_differences(root, commit, path)
    except OSError as exc:
        return [f"(unreadable: {exc.strerror or exc})"]


def seal_fixtures(
    plan: Mapping[str, Any], trees: tuple[Path, ...], sealed_dir: Path
) -> dict[str, Path]:
    """Move every plan fixture out of the extracted trees into ``sealed_dir`` under an
    opaque name; return fixture path -> sealed file.

    The runner's working directory (the baseline tree) and the candidate's own tree
    then hold no fixture: harness code sees one input at a time, as the copy its trial
    is given, and cannot tell an evaluation input from real work by looking around.
    """
    sealed_dir.mkdir(mode=0o700)
    sealed: dict[str, Path] = {}
    for fixture in plan["fixtures"]:
        rel = str(fixture["path"])
        if rel in sealed:
            continue
        source = trees[0] / rel
        if not source.is_file() or source.is_symlink():
            continue  # the trial reports the missing fixture (SEALED_FIXTURE_MUTATION)
        target = sealed_dir / f"s{secrets.token_hex(8)}"
        atomic_write_in(sealed_dir, target.name, source.read_bytes(), mode=0o444)
        for tree in trees:
            with contextlib.suppress(FileNotFoundError):
                (tree / rel).unlink()
        sealed[rel] = target
    return sealed


def _check_tree(
    root: Path,
    commit: str,
    path: Path,
    code: str,
    sink: list[Reason],
    *,
    moved: frozenset[str] = frozenset(),
) -> None:
    """Report an extracted tree that no longer equals its commit (hashed file by file);
    the fixtures moved out before the trials are expected to be absent."""
    try:
        changed = [p for p in _tree_changes(root, commit, path) if p not in moved]
    except PlanGateError as exc:
        sink.append(Reason(code, f"cannot tell whether {path.name} changed: {exc.message}"))
        return
    if changed:
        sink.append(
            Reason(
                code,
                f"the {path.name} tree changed during the trials: {', '.join(changed[:5])}",
                "harness code under test wrote into a tree; a human must look at it",
            )
        )
