"""The policy gate's IO: gather facts from the ledger and the baseline commit, decide, record.

Nothing here is read from the candidate's checkout or taken from the
candidate's declarations except what is being judged: the plan comes from the
ledger, the baseline manifest and the protected surfaces from the baseline
commit, and the diff is computed here with git between the baseline
manifest's ``source_commit`` and the candidate commit, with the method fixed
in the plan. The candidate's own harness definition is read only to detect
deletion or relaxation of gates (it can only make the verdict stricter).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from plangate.errors import PlanGateError
from plangate.evaluation.gate.rules import INCONCLUSIVE, GateFacts, decide
from plangate.evaluation.harness.definition import PROTECTED_SURFACES_PATH, HarnessDefinition
from plangate.evaluation.harness.service import build_manifest_and_definition, load_definition_at
from plangate.evaluation.registry.plan import DIFF_METHODS
from plangate.evaluation.registry.store import lookup_registered_candidate, lookup_registered_plan
from plangate.git import Git, GitError, TreeEntry
from plangate.layout import MAX_SURFACES_BYTES
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.ledger import Ledger

LEDGER_KIND_GATE = "eval_gate_verdict"
MAX_SYMLINK_BYTES = 4096


def _reason(code: str, message: str, hint: str) -> Reason:
    return Reason(code, message, hint)


def gather_facts(git: Git, ledger: Ledger, candidate_ref: str) -> GateFacts:
    """Read every fact the gate needs from the ledger and the baseline commit (service)."""
    registered = lookup_registered_candidate(ledger, candidate_ref, check_scope=False)
    candidate = registered.candidate
    plan_digest = str(candidate["evaluation_plan_digest"])
    problems: list[Reason] = []

    try:
        plan_entry = lookup_registered_plan(ledger, plan_digest)
    except PlanGateError as exc:
        return GateFacts(
            candidate, registered.digest, plan_digest, (_reason(exc.code, exc.message, exc.hint),)
        )
    plan = plan_entry.plan
    baseline_commit = str(plan["baseline_commit"])
    definition_path = str(plan["harness_definition"])

    baseline_definition: HarnessDefinition | None = None
    baseline_manifest = None
    try:
        manifest, baseline_definition = build_manifest_and_definition(
            git, baseline_commit, definition_path
        )
        if manifest.harness_id != plan["baseline_manifest_ref"]:
            problems.append(
                _reason(
                    "BASELINE_MANIFEST_BINDING",
                    f"the baseline manifest rebuilt from {baseline_commit[:12]} has harness_id "
                    f"{manifest.harness_id}, not the plan's {plan['baseline_manifest_ref']}",
                    "the baseline changed identity; register a new plan",
                )
            )
        elif manifest.source_commit != baseline_commit:
            problems.append(
                _reason(
                    "BASELINE_MANIFEST_BINDING",
                    "the baseline manifest describes another commit",
                    "",
                )
            )
        baseline_manifest = dict(manifest.data)
    except PlanGateError as exc:
        problems.append(
            _reason(
                "BASELINE_MANIFEST_UNOBTAINABLE",
                f"the baseline manifest of {baseline_commit[:12]} cannot be built: "
                f"{exc.code}: {exc.message}",
                exc.hint or "make the baseline commit available to the evaluator",
            )
        )

    candidate_commit = str(candidate["candidate_commit"])
    try:
        resolved: str | None = git.resolve_commit(candidate_commit)
    except GitError as exc:
        resolved = None
        problems.append(
            _reason(
                "CANDIDATE_COMMIT_UNKNOWN",
                f"candidate commit {candidate_commit[:12]} is not available ({exc.code})",
                "fetch the candidate commit into the evaluator's repository",
            )
        )
    if resolved is not None and resolved != candidate_commit:
        problems.append(
            _reason(
                "CANDIDATE_COMMIT_UNKNOWN",
                f"candidate commit {candidate_commit} is not the full id of a commit",
                "register the candidate with its full commit id",
            )
        )

    method = str(plan["actual_diff_method"])
    if method not in DIFF_METHODS:
        problems.append(
            _reason(
                "ACTUAL_DIFF_METHOD_UNSUPPORTED",
                f"the plan's actual_diff_method {method!r} is not implemented",
                "register a new plan with a supported method",
            )
        )

    surfaces = None
    surfaces_source = f"{baseline_commit}:{PROTECTED_SURFACES_PATH}"
    try:
        from plangate.surfaces import PROVENANCE_DOWNSTREAM, load_surfaces_bytes

        data = git.read_blob(baseline_commit, PROTECTED_SURFACES_PATH, MAX_SURFACES_BYTES)
        surfaces = load_surfaces_bytes(data, PROVENANCE_DOWNSTREAM, surfaces_source)
    except PlanGateError as exc:
        problems.append(
            _reason(
                "PROTECTED_SURFACES_UNAVAILABLE",
                f"the protected surfaces cannot be read at the baseline commit: {exc.message}",
                f"commit {PROTECTED_SURFACES_PATH} at the baseline "
                "(the candidate's copy is never used)",
            )
        )

    if problems:
        return GateFacts(
            candidate,
            registered.digest,
            plan_digest,
            tuple(problems),
            plan=plan,
            diff_method=method,
        )

    try:
        candidate_tree = {e.path: e for e in git.ls_tree(candidate_commit)}
        diff = actual_diff(git, baseline_commit, candidate_commit, candidate_tree)
    except GitError as exc:
        return GateFacts(
            candidate,
            registered.digest,
            plan_digest,
            (
                _reason(
                    "ACTUAL_DIFF_UNAVAILABLE",
                    f"git cannot compute the diff {baseline_commit[:12]}..{candidate_commit[:12]}: "
                    f"{exc.message}",
                    "a candidate-supplied diff is never substituted; fix the repository",
                ),
            ),
            plan=plan,
            diff_method=method,
        )

    removed = frozenset(p for p in diff if p not in candidate_tree)
    symlinks: dict[str, str] = {}
    for path in diff:
        entry = candidate_tree.get(path)
        if entry is not None and entry.mode == "120000":
            raw = git.run(["cat-file", "blob", entry.object_id]).stdout[:MAX_SYMLINK_BYTES]
            try:
                symlinks[path] = raw.decode("utf-8")
            except UnicodeDecodeError:
                symlinks[path] = ""  # undecidable target: judged unsafe
    candidate_definition: HarnessDefinition | None = None
    candidate_definition_problem: Reason | None = None
    try:
        candidate_definition = load_definition_at(git, candidate_commit, definition_path)
    except PlanGateError as exc:
        candidate_definition_problem = _reason(exc.code, exc.message, exc.hint)

    return GateFacts(
        candidate=candidate,
        candidate_digest=registered.digest,
        plan_digest=plan_digest,
        plan=plan,
        baseline_manifest=baseline_manifest,
        baseline_definition=baseline_definition,
        candidate_definition=candidate_definition,
        candidate_definition_problem=candidate_definition_problem,
        surfaces=surfaces,
        surfaces_source=surfaces_source,
        observed_diff=diff,
        removed_paths=removed,
        symlink_targets=symlinks,
        diff_method=method,
    )


def actual_diff(
    git: Git, base: str, head: str, head_tree: Mapping[str, TreeEntry] | None = None
) -> tuple[str, ...]:
    """The actual diff ``git-diff-no-renames-v1``: every path whose tree entry differs.

    ``git diff`` honours configuration the candidate can reach: a ``.gitmodules``
    in the evaluator's working tree (or ``diff.ignoreSubmodules``) saying
    ``ignore = all`` drops submodule pointer changes. So the diff is run with
    ``--ignore-submodules=none`` and, independently, the two commits' full trees
    are compared entry by entry (mode, type, object id) from git objects alone;
    the gate judges the union (over-reporting is the safe side).
    """
    proc = git.run(
        [
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--ignore-submodules=none",
            "--name-only",
            "-z",
            base,
            head,
            "--",
        ]
    )
    paths = {p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\x00") if p}
    before = {e.path: e for e in git.ls_tree(base)}
    after = head_tree if head_tree is not None else {e.path: e for e in git.ls_tree(head)}
    for path in set(before) | set(after):
        if before.get(path) != after.get(path):
            paths.add(path)
    return tuple(sorted(paths))


def gate_candidate(
    repo_root: Path, env: Mapping[str, str], candidate_ref: str, *, record: bool = True
) -> Result:
    """Run the policy gate for a registered candidate and write the verdict to the ledger.

    Returns the Policy Verdict (``AUTO_APPROVED`` / ``HUMAN_REQUIRED`` /
    ``DENIED``) or ``INCONCLUSIVE``. A ledger that cannot be written raises
    (never an acceptance without its record).
    """
    from plangate.ledger import open_ledger

    git = Git(repo_root)
    root = git.toplevel()
    with open_ledger(root, env) as ledger:
        facts = gather_facts(git, ledger, candidate_ref)
        result = decide(facts)
        if record:
            payload = result.to_json()
            entry = ledger.append(LEDGER_KIND_GATE, facts.candidate_digest, payload)
            result = Result(
                result.verdict, result.reasons, {**result.facts, "ledger_seq": entry.seq}
            )
    return result


__all__ = [
    "INCONCLUSIVE",
    "LEDGER_KIND_GATE",
    "actual_diff",
    "gate_candidate",
    "gather_facts",
]
