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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.errors import PlanGateError
from plangate.evaluation.gate.rules import INCONCLUSIVE, GateFacts, decide
from plangate.evaluation.harness.definition import PROTECTED_SURFACES_PATH, HarnessDefinition
from plangate.evaluation.harness.service import build_manifest_and_definition, load_definition_at
from plangate.evaluation.registry.plan import DIFF_METHODS
from plangate.evaluation.registry.store import (
    LEDGER_KIND_GATE,
    lookup_registered_candidate,
    lookup_registered_plan,
)
from plangate.git import Git, GitError, TreeEntry
from plangate.layout import MAX_SURFACES_BYTES
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.ledger import Ledger
    from plangate.surfaces import ResolvedSurfaces

MAX_SYMLINK_BYTES = 4096
MAX_TREE_SYMLINKS = 10_000
"""Symlinks of a candidate tree read for physical resolution; more makes every changed link
undecidable."""


def _reason(code: str, message: str, hint: str) -> Reason:
    return Reason(code, message, hint)


def shown_path(path: str) -> str:
    """A path as text that can be recorded: undecodable bytes as ``\\xNN`` escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _undecodable(paths: Iterable[str]) -> list[str]:
    """Paths git gave as bytes that are not UTF-8 (decoded with surrogate escapes)."""
    out: list[str] = []
    for path in paths:
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            out.append(shown_path(path))
    return sorted(out)


def _baseline_manifest(
    git: Git, plan: Mapping[str, Any], problems: list[Reason]
) -> tuple[dict[str, Any] | None, HarnessDefinition | None]:
    """The baseline manifest rebuilt from the baseline commit, bound to the plan's ref."""
    baseline_commit = str(plan["baseline_commit"])
    try:
        manifest, definition = build_manifest_and_definition(
            git, baseline_commit, str(plan["harness_definition"])
        )
    except PlanGateError as exc:
        problems.append(
            _reason(
                "BASELINE_MANIFEST_UNOBTAINABLE",
                f"the baseline manifest of {baseline_commit[:12]} cannot be built: "
                f"{exc.code}: {exc.message}",
                exc.hint or "make the baseline commit available to the evaluator",
            )
        )
        return None, None
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
                "BASELINE_MANIFEST_BINDING", "the baseline manifest describes another commit", ""
            )
        )
    return dict(manifest.data), definition


def _candidate_commit_present(git: Git, candidate_commit: str, problems: list[Reason]) -> None:
    try:
        resolved = git.resolve_commit(candidate_commit)
    except GitError as exc:
        problems.append(
            _reason(
                "CANDIDATE_COMMIT_UNKNOWN",
                f"candidate commit {candidate_commit[:12]} is not available ({exc.code})",
                "fetch the candidate commit into the evaluator's repository",
            )
        )
        return
    if resolved != candidate_commit:
        problems.append(
            _reason(
                "CANDIDATE_COMMIT_UNKNOWN",
                f"candidate commit {candidate_commit} is not the full id of a commit",
                "register the candidate with its full commit id",
            )
        )


def _baseline_surfaces(
    git: Git, baseline_commit: str, problems: list[Reason]
) -> tuple[ResolvedSurfaces | None, str]:
    from plangate.surfaces import PROVENANCE_DOWNSTREAM, load_surfaces_bytes

    source = f"{baseline_commit}:{PROTECTED_SURFACES_PATH}"
    try:
        data = git.read_blob(baseline_commit, PROTECTED_SURFACES_PATH, MAX_SURFACES_BYTES)
        return load_surfaces_bytes(data, PROVENANCE_DOWNSTREAM, source), source
    except PlanGateError as exc:
        problems.append(
            _reason(
                "PROTECTED_SURFACES_UNAVAILABLE",
                f"the protected surfaces cannot be read at the baseline commit: {exc.message}",
                f"commit {PROTECTED_SURFACES_PATH} at the baseline "
                "(the candidate's copy is never used)",
            )
        )
        return None, source


@dataclass(frozen=True)
class _Observed:
    """What git shows of the candidate commit against the baseline."""

    diff: tuple[str, ...]
    removed: frozenset[str]
    changed_links: dict[str, str]
    other_links: dict[str, str]
    links_complete: bool


def _link_targets(git: Git, entries: Sequence[TreeEntry]) -> dict[str, str]:
    """Targets of symlink entries, read in one ``cat-file --batch`` (undecodable: ``""``)."""
    if not entries:
        return {}
    wanted = "".join(f"{e.object_id}\n" for e in entries).encode("ascii")
    out = git.run(["cat-file", "--batch"], input_data=wanted).stdout
    targets: dict[str, str] = {}
    offset = 0
    for entry in entries:
        header_end = out.index(b"\n", offset)
        size = int(out[offset:header_end].split()[2])
        raw = out[header_end + 1 : header_end + 1 + size]
        offset = header_end + 1 + size + 1
        try:
            targets[entry.path] = raw[:MAX_SYMLINK_BYTES].decode("utf-8")
        except UnicodeDecodeError:
            targets[entry.path] = ""  # undecidable target: judged unsafe
    return targets


def _observe(git: Git, baseline_commit: str, candidate_commit: str) -> _Observed:
    """The diff (computed here, never taken from the candidate) and the tree's symlinks."""
    candidate_tree = {e.path: e for e in git.ls_tree(candidate_commit)}
    diff = actual_diff(git, baseline_commit, candidate_commit, candidate_tree)
    links = [e for e in candidate_tree.values() if e.mode == "120000"]
    changed = set(diff)
    changed_links = [e for e in links if e.path in changed]
    others = [e for e in links if e.path not in changed]
    complete = len(others) <= MAX_TREE_SYMLINKS
    return _Observed(
        diff=diff,
        removed=frozenset(p for p in diff if p not in candidate_tree),
        changed_links=_link_targets(git, changed_links),
        other_links=_link_targets(git, others) if complete else {},
        links_complete=complete,
    )


def gather_facts(git: Git, ledger: Ledger, candidate_ref: str) -> GateFacts:
    """Read every fact the gate needs from the ledger and the baseline commit (service)."""
    registered = lookup_registered_candidate(ledger, candidate_ref, check_scope=False)
    candidate = registered.candidate
    plan_digest = str(candidate["evaluation_plan_digest"])
    try:
        plan = lookup_registered_plan(ledger, plan_digest).plan
    except PlanGateError as exc:
        return GateFacts(
            candidate, registered.digest, plan_digest, (_reason(exc.code, exc.message, exc.hint),)
        )
    baseline_commit = str(plan["baseline_commit"])
    candidate_commit = str(candidate["candidate_commit"])
    problems: list[Reason] = []
    baseline_manifest, baseline_definition = _baseline_manifest(git, plan, problems)
    _candidate_commit_present(git, candidate_commit, problems)
    method = str(plan["actual_diff_method"])
    if method not in DIFF_METHODS:
        problems.append(
            _reason(
                "ACTUAL_DIFF_METHOD_UNSUPPORTED",
                f"the plan's actual_diff_method {method!r} is not implemented",
                "register a new plan with a supported method",
            )
        )
    surfaces, surfaces_source = _baseline_surfaces(git, baseline_commit, problems)
    if not problems:
        try:
            observed = _observe(git, baseline_commit, candidate_commit)
        except GitError as exc:
            problems.append(
                _reason(
                    "ACTUAL_DIFF_UNAVAILABLE",
                    f"git cannot compute the diff {baseline_commit[:12]}..{candidate_commit[:12]}: "
                    f"{exc.message}",
                    "a candidate-supplied diff is never substituted; fix the repository",
                )
            )
    if not problems:
        undecodable = _undecodable(observed.diff)
        if undecodable:
            problems.append(
                _reason(
                    "CANDIDATE_PATH_NOT_UTF8",
                    f"the diff names path(s) that are not UTF-8: {', '.join(undecodable[:5])}",
                    "rename them to UTF-8 names; which authority they touch cannot be decided",
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
    candidate_definition: HarnessDefinition | None = None
    candidate_definition_problem: Reason | None = None
    try:
        candidate_definition = load_definition_at(
            git, candidate_commit, str(plan["harness_definition"])
        )
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
        observed_diff=observed.diff,
        removed_paths=observed.removed,
        symlink_targets=observed.changed_links,
        tree_symlinks=observed.other_links,
        tree_symlinks_complete=observed.links_complete,
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
