"""``eval run`` and ``eval review``: the IO around the pure evaluator.

:func:`run_evaluation`:

1. looks the candidate up in the ledger and re-runs the policy gate
   (:func:`plangate.evaluation.gate.service.gate_candidate`), so a candidate whose
   commit or bindings changed since its last gate is re-judged;
2. reads the registered plan from the ledger (recomputing its digest) and the
   decisions already recorded for this evaluation (INCONCLUSIVE/FAIL are final);
3. builds both HarnessManifests from git objects;
4. materialises baseline and candidate in isolated linked worktrees in a
   temporary directory (always removed); the runner and the grader are always
   started from the *baseline* worktree, only ``--harness-dir`` differs;
5. runs the trials through an :class:`~plangate.evaluation.run.trials.Executor`;
6. decides with :func:`plangate.evaluation.run.decision.decide` and writes the
   HarnessExperimentResult and the PromotionDecision, each with its digest, to
   the ledger (kinds ``eval_experiment_result`` and ``eval_promotion_decision``).
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from plangate.canonical import StrictJSONError, digest, is_digest, strict_loads_object
from plangate.errors import InputRejected, PlanGateError
from plangate.evaluation.independence import (
    ReviewRecord,
    ReviewRecordError,
    compute_level,
    parse_review_record,
)
from plangate.evaluation.run.decision import EvaluationInput, decide
from plangate.evaluation.run.protocol import CommandSpec, TrialOutcome, TrialSpec
from plangate.evaluation.run.trials import (
    Executor,
    LocalPoolExecutor,
    ProgressLine,
    TrialBox,
    resolve_argv,
)
from plangate.fsutil import exclusive_lock, read_regular_file
from plangate.git import Git
from plangate.verdict import IndependenceLevel, PromotionDecision, Reason, Result

if TYPE_CHECKING:
    from plangate.ledger import Ledger

LEDGER_KIND_EXPERIMENT = "eval_experiment_result"
LEDGER_KIND_DECISION = "eval_promotion_decision"
LEDGER_KIND_REVIEW = "eval_review_added"
EXPERIMENT_SCHEMA = "plangate-experiment/1"
DECISION_SCHEMA = "plangate-promotion-decision/1"
MAX_REVIEW_BYTES = 64 * 1024
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


# -- reviews -------------------------------------------------------------------


def _candidate(
    ledger: Ledger, ref: str, *, check_scope: bool = True
) -> tuple[str, Mapping[str, Any]]:
    from plangate.evaluation.registry.store import lookup_registered_candidate

    # eval run passes check_scope=False: a malformed scope is the gate's to judge
    # (and record), not a reason to refuse before any record exists.
    registered = lookup_registered_candidate(ledger, ref, check_scope=check_scope)
    return registered.digest, registered.candidate


def read_review_file(path: Path) -> tuple[bytes, ReviewRecord, dict[str, Any]]:
    """Read and strictly parse a review record file (regular file, bounded, JSON)."""
    read = read_regular_file(path, MAX_REVIEW_BYTES)
    if not read.ok or read.data is None:
        raise InputRejected(
            "REVIEW_FILE_UNREADABLE", f"{path} {read.detail}", "give a regular JSON file"
        )
    try:
        doc = strict_loads_object(read.data, "review record")
        record = parse_review_record(doc)
    except StrictJSONError as exc:
        raise InputRejected(exc.code, f"{path}: {exc.message}", exc.hint) from None
    except ReviewRecordError as exc:
        raise InputRejected(
            exc.code, f"{path}: {exc.message}", "see docs/evaluation-run.md (review records)"
        ) from None
    return read.data, record, doc


def add_review(repo_root: Path, env: Mapping[str, str], candidate_ref: str, path: Path) -> Result:
    """Attach a review record to a registered candidate (ledger kind ``eval_review_added``)."""
    from plangate.ledger import open_ledger

    _raw, record, doc = read_review_file(path)
    root = Git(repo_root).toplevel()
    with open_ledger(root, env) as ledger:
        cdigest, candidate = _candidate(ledger, candidate_ref)
        if record.candidate_id != candidate["candidate_id"]:
            raise InputRejected(
                "REVIEW_CANDIDATE_MISMATCH",
                f"the review is for {record.candidate_id!r}, not {candidate['candidate_id']!r}",
                "attach the review to the candidate it reviews",
            )
        if record.reviewed_commit != candidate["candidate_commit"]:
            raise InputRejected(
                "REVIEW_COMMIT_MISMATCH",
                f"the review covers commit {record.reviewed_commit[:12]}, the candidate is "
                f"{str(candidate['candidate_commit'])[:12]}",
                "a review binds to the exact commit it reviewed; review the candidate commit",
            )
        rdigest = digest(doc)
        entry = ledger.append(
            LEDGER_KIND_REVIEW,
            cdigest,
            {"review_digest": rdigest, "review": doc, "candidate_digest": cdigest},
        )
        level = _independence(ledger, cdigest, candidate, None)
    facts = {
        "candidate_digest": cdigest,
        "review_digest": rdigest,
        "ledger_seq": entry.seq,
        "level": level.verdict,
        "records": level.facts.get("records", []),
    }
    return Result("ACCEPTED", level.reasons, facts)


def _reviews(ledger: Ledger, cdigest: str) -> tuple[list[ReviewRecord], list[Reason]]:
    records: list[ReviewRecord] = []
    problems: list[Reason] = []
    for entry in ledger.entries(kind=LEDGER_KIND_REVIEW, subject=cdigest):
        doc = entry.payload.get("review")
        try:
            same = digest(doc) == entry.payload.get("review_digest")
            record = parse_review_record(doc)
        except (ReviewRecordError, PlanGateError, TypeError) as exc:
            problems.append(
                Reason(
                    "REVIEW_RECORD_IGNORED",
                    f"ledger review entry {entry.seq} is unusable: {exc}",
                )
            )
            continue
        if not same:
            problems.append(
                Reason(
                    "REVIEW_RECORD_IGNORED",
                    f"ledger review entry {entry.seq} does not re-digest to its review_digest",
                )
            )
            continue
        records.append(record)
    return records, problems


def _verified_refs(ledger: Ledger, cdigest: str, plan: Mapping[str, Any] | None) -> set[str]:
    """Machine evidence the evaluator can vouch for: pinned fixtures, runner/grader
    files of the plan, and experiment results of this candidate."""
    refs: set[str] = set()
    if plan is not None:
        refs |= {str(f.get("digest")) for f in plan.get("fixtures", [])}
        for key in ("runner", "grader"):
            for item in plan.get(key, {}).get("files", []):
                if isinstance(item, Mapping):
                    refs.add(str(item.get("digest")))
    for entry in ledger.entries(kind=LEDGER_KIND_EXPERIMENT, subject=cdigest):
        refs.add(str(entry.payload.get("experiment_digest")))
    return {r for r in refs if is_digest(r)}


def _plan_or_none(
    ledger: Ledger, plan_digest: str
) -> tuple[Mapping[str, Any] | None, Reason | None]:
    from plangate.evaluation.registry.store import lookup_registered_plan

    try:
        return lookup_registered_plan(ledger, plan_digest).plan, None
    except PlanGateError as exc:
        return None, Reason(exc.code, exc.message, exc.hint)


def _independence(
    ledger: Ledger, cdigest: str, candidate: Mapping[str, Any], plan: Mapping[str, Any] | None
) -> Result:
    if plan is None:
        plan, _problem = _plan_or_none(ledger, str(candidate["evaluation_plan_digest"]))
    records, problems = _reviews(ledger, cdigest)
    level = compute_level(
        records,
        candidate_id=str(candidate["candidate_id"]),
        candidate_commit=str(candidate["candidate_commit"]),
        verified_refs=_verified_refs(ledger, cdigest, plan),
    )
    return Result(level.verdict, (*problems, *level.reasons), level.facts)


def review_level(repo_root: Path, env: Mapping[str, str], candidate_ref: str) -> Result:
    """The candidate's computed Independence Level against the level its surfaces require."""
    from plangate.evaluation.gate.service import gate_candidate
    from plangate.evaluation.independence import check_independence
    from plangate.ledger import open_ledger

    root = Git(repo_root).toplevel()
    with open_ledger(root, env) as ledger:
        cdigest, candidate = _candidate(ledger, candidate_ref)
        level = _independence(ledger, cdigest, candidate, None)
    gate = gate_candidate(root, env, cdigest, record=False)
    required = _required_level(gate)
    shortfall = check_independence(level.verdict, required)
    verdict = "ACCEPTED" if shortfall is None else PromotionDecision.INCONCLUSIVE.value
    reasons = (*level.reasons, *([shortfall] if shortfall else []))
    facts = {
        "candidate_digest": cdigest,
        "level": level.verdict,
        "required": required,
        "independence_drivers": gate.facts.get("independence_drivers", []),
        **{k: v for k, v in level.facts.items() if k != "level"},
    }
    return Result(verdict, reasons, facts)


def _required_level(gate: Result) -> str:
    """The gate's required level; anything unreadable requires I4 (fail closed)."""
    value = gate.facts.get("required_independence")
    try:
        return IndependenceLevel(str(value)).value
    except ValueError:
        return IndependenceLevel.I4.value


# -- eval run ------------------------------------------------------------------


def _prior_decisions(
    ledger: Ledger, plan_digest: str, candidate: Mapping[str, Any], tree: str | None
) -> list[str]:
    """Decisions already recorded for this evaluation (same plan digest, and the same
    candidate id, commit or tree): a new candidate id over the same commit, or the same
    tree re-committed under a new commit id, cannot dodge a recorded INCONCLUSIVE."""
    out: list[str] = []
    for entry in ledger.entries(kind=LEDGER_KIND_DECISION):
        payload = entry.payload
        if payload.get("plan_digest") != plan_digest:
            continue
        if (
            payload.get("candidate_id") == candidate["candidate_id"]
            or payload.get("candidate_commit") == candidate["candidate_commit"]
            or (tree is not None and payload.get("candidate_tree") == tree)
        ):
            out.append(str(payload.get("decision")))
    return out


def _tree_of(git: Git, commit: str) -> str | None:
    """The tree id of ``commit`` (the candidate's content), or None when git cannot tell."""
    try:
        proc = git.run(["rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"])
    except PlanGateError:
        return None
    tree = proc.stdout.decode("ascii", "replace").strip()
    return tree or None


def _manifest_or_none(git: Git, commit: str, definition_path: str) -> tuple[Any, Reason | None]:
    from plangate.evaluation.harness.service import build_manifest

    try:
        return build_manifest(git, commit, definition_path), None
    except PlanGateError as exc:
        return None, Reason(
            "MANIFEST_IDENTITY_UNOBTAINABLE",
            f"no HarnessManifest for {commit[:12]}: {exc.code}: {exc.message}",
            exc.hint,
        )


def _component_deltas(baseline: Any, candidate: Any) -> list[dict[str, Any]]:
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


def _component_types(*manifests: Any) -> dict[str, str]:
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
    plan: Mapping[str, Any], baseline_dir: Path, candidate_dir: Path, work_root: Path
) -> list[TrialSpec]:
    """One spec per (fixture, trial, side); runner and grader always from ``baseline_dir``."""

    def command(key: str) -> CommandSpec:
        section = plan[key]
        pinned = tuple(
            (str(baseline_dir / str(item["path"])), str(item["digest"]))
            for item in section.get("files", [])
        )
        return CommandSpec(
            argv=resolve_argv(list(section["argv"])),
            cwd=str(baseline_dir),
            timeout_seconds=float(section.get("timeout_seconds") or 60),
            pinned_files=pinned,
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
                        fixture_source=str(baseline_dir / str(fixture["path"])),
                        fixture_digest=str(fixture.get("digest")),
                        # An opaque directory name: its path reaches the runner (--out).
                        work_dir=str(work_root / f"t{secrets.token_hex(8)}"),
                    )
                )
    return specs


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
        cdigest, candidate = _candidate(ledger, candidate_ref, check_scope=False)
        earlier = ledger.entries(kind="eval_gate_verdict", subject=cdigest)
    previous = dict(earlier[-1].payload) if earlier else None
    lock = evaluation_lock_path(root, str(candidate["evaluation_plan_digest"]))
    box, box_problem = _trial_box() if executor is None else (None, None)
    with exclusive_lock(lock):
        gate = gate_candidate(root, env, cdigest, record=True)
        with open_ledger(root, env) as ledger:
            return _evaluate_locked(
                git,
                ledger,
                cdigest=cdigest,
                candidate=candidate,
                gate=gate,
                executor=executor or LocalPoolExecutor(jobs, ProgressLine(progress), box),
                rejudged=gate_changes(previous, gate),
                sandbox_problem=box_problem,
            )


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


def _evaluate_locked(
    git: Git,
    ledger: Ledger,
    *,
    cdigest: str,
    candidate: Mapping[str, Any],
    gate: Result,
    executor: Executor,
    rejudged: Mapping[str, Any],
    sandbox_problem: Reason | None = None,
) -> EvaluationRun:
    candidate_plan_digest = str(candidate["evaluation_plan_digest"])
    plan, plan_problem = _plan_or_none(ledger, candidate_plan_digest)
    plan_digest = None
    if plan is not None:
        from plangate.evaluation.registry.plan import plan_digest as compute_plan_digest

        plan_digest = compute_plan_digest(plan)
    candidate_tree = _tree_of(git, str(candidate["candidate_commit"]))
    prior = _prior_decisions(ledger, candidate_plan_digest, candidate, candidate_tree)
    setup: list[Reason] = [plan_problem] if plan_problem else []
    observed_diff = tuple(str(p) for p in gate.facts.get("observed_diff", []) or [])
    changed_components = tuple(str(c) for c in gate.facts.get("changed_components", []) or [])
    independence = _independence(ledger, cdigest, candidate, plan)
    required = _required_level(gate)

    baseline_manifest = candidate_manifest = None
    trials: list[TrialOutcome] = []
    run_trials = (
        plan is not None
        and gate.verdict == "AUTO_APPROVED"
        and not any(d in ("INCONCLUSIVE", "FAIL") for d in prior)
    )
    if plan is not None:
        definition = str(plan.get("harness_definition") or ".plangate/harness.toml")
        baseline_manifest, problem = _manifest_or_none(
            git, str(plan["baseline_commit"]), definition
        )
        if problem:
            setup.append(problem)
        candidate_manifest, problem = _manifest_or_none(
            git, str(candidate["candidate_commit"]), definition
        )
        if problem:
            setup.append(problem)
    tamper: list[Reason] = []
    if run_trials and sandbox_problem is not None:
        setup.append(sandbox_problem)
    if run_trials and plan is not None and not setup:
        trials = _run_trials(
            git, plan, str(candidate["candidate_commit"]), executor, setup=setup, tamper=tamper
        )

    types = _component_types(baseline_manifest, candidate_manifest)
    targets = tuple(str(t) for t in candidate.get("target_components", []))
    inp = EvaluationInput(
        candidate_id=str(candidate["candidate_id"]),
        candidate_plan_digest=candidate_plan_digest,
        plan=plan,
        plan_digest=plan_digest,
        baseline_manifest_ref=baseline_manifest.harness_id if baseline_manifest else None,
        candidate_manifest_ref=candidate_manifest.harness_id if candidate_manifest else None,
        target_components=targets,
        component_types=types,
        changed_paths=observed_diff,
        changed_components=changed_components,
        policy_verdict=gate.verdict,
        gate_reasons=gate.reasons,
        trials=trials,
        independence_observed=independence.verdict,
        independence_required=required,
        prior_decisions=prior,
        test_strategy=any(t.startswith(TEST_STRATEGY_PREFIXES) for t in targets),
        setup_problems=setup,
        tamper_problems=tamper,
        candidate_components=(
            tuple(str(c["id"]) for c in candidate_manifest.components())
            if candidate_manifest is not None
            else None
        ),
    )
    result = decide(inp)
    experiment = {
        "schema": EXPERIMENT_SCHEMA,
        "candidate_id": inp.candidate_id,
        "candidate_ref": cdigest,
        "candidate_commit": candidate["candidate_commit"],
        "evaluation_plan_digest": plan_digest,
        "candidate_plan_digest": candidate_plan_digest,
        "baseline_manifest_ref": inp.baseline_manifest_ref,
        "candidate_manifest_ref": inp.candidate_manifest_ref,
        "observed_changed_paths": sorted(observed_diff),
        "observed_component_deltas": _component_deltas(baseline_manifest, candidate_manifest),
        "policy_verdict": gate.verdict,
        "gate_rejudged": dict(rejudged),
        "trials": [t.to_json() for t in trials],
        "fixtures": result.facts.get("fixtures", []),
        "metrics": result.facts.get("metrics", {}),
        "activation": result.facts.get("activation", {}),
        "detection": result.facts.get("detection", {}),
        "independence": {
            "observed": independence.verdict,
            "required": required,
            "records": independence.facts.get("records", []),
        },
        "result": result.verdict,
        "reason_codes": list(result.codes),
    }
    experiment_digest = digest(experiment)
    ledger.append(
        LEDGER_KIND_EXPERIMENT,
        cdigest,
        {"experiment_digest": experiment_digest, "experiment": experiment},
    )
    decision = {
        "schema": DECISION_SCHEMA,
        "candidate_id": inp.candidate_id,
        "candidate_ref": cdigest,
        "candidate_commit": candidate["candidate_commit"],
        "candidate_manifest_ref": inp.candidate_manifest_ref,
        "evaluation_plan_digest": plan_digest,
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
        cdigest,
        {
            "decision_digest": decision_digest,
            "decision_record": decision,
            "decision": result.verdict,
            "plan_digest": candidate_plan_digest,
            "candidate_id": inp.candidate_id,
            "candidate_commit": candidate["candidate_commit"],
            "candidate_tree": candidate_tree,
        },
    )
    facts = {
        **result.facts,
        "candidate_ref": cdigest,
        "experiment_result_ref": experiment_digest,
        "decision_digest": decision_digest,
        "ledger_seq": entry.seq,
        "trials_total": len(trials),
        "trials_completed": sum(1 for t in trials if t.completed),
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
        if not plan["runner"].get("argv") or not plan["grader"].get("argv"):
            setup.append(Reason("EVAL_RUNNER_UNAVAILABLE", "the plan's runner or grader is empty"))
            return []
        work = temp / "trials"
        work.mkdir()
        outcomes = executor.run(build_trials(plan, baseline_dir, candidate_dir, work))
        _check_tree(root, commits[baseline_dir], baseline_dir, "BASELINE_WORKTREE_MODIFIED",
                    tamper)
        _check_tree(root, commits[candidate_dir], candidate_dir, "CANDIDATE_WORKTREE_MODIFIED",
                    setup)
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


def _check_tree(root: Path, commit: str, path: Path, code: str, sink: list[Reason]) -> None:
    """Report an extracted tree that no longer equals its commit (hashed file by file)."""
    try:
        changed = _tree_changes(root, commit, path)
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


def trials_summary(trials: Sequence[TrialOutcome]) -> dict[str, int]:
    """Counts by status (for progress and benchmarks)."""
    out: dict[str, int] = {}
    for trial in trials:
        out[trial.status.value] = out.get(trial.status.value, 0) + 1
    return out
