"""The IO of :mod:`plangate.hooks.ci_preview`: what CI will say about a person's change.

Read only when git's hook refused a change and no agent marker is set. For each commit
the change starts from (HEAD for a commit; for a push, the remote's commit or every
commit where a new branch meets a remote; none for a first commit), the facts
``ci check`` reads at a pull request's base are read here with ``ci check``'s own
readers: the protected surfaces and whether PlanGate is adopted
(:func:`plangate.surfaces.surfaces_with_presence_at_commit`), the trust root and
``.plangate/policy.toml`` (:mod:`plangate.delivery.ci_service`). When the change itself
changes the policy file, the new version (the index's for a commit, the pushed commit's
for a push) must be a valid policy, as ``ci check`` requires before a merge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from plangate.agents import agent_markers_present
from plangate.authority.trustpaths import TRUST_FILES
from plangate.delivery.ci import PullRequestFacts, touched_tasks
from plangate.delivery.ci import decide as decide_pull_request
from plangate.delivery.ci_service import base_trust_root, policy_at
from plangate.delivery.pr_policy import POLICY_RELPATH, STRICT
from plangate.git import Git
from plangate.hooks.ci_preview import NO_ACTIVE_TASK, ChangeRange, Preview
from plangate.paths import CanonicalPath, canonical_paths
from plangate.surfaces import load_bundled_template, surfaces_with_presence_at_commit
from plangate.verdict import Reason, Result

NO_BASE = "(no commit)"


def _head_policy_problem(git: Git, change: ChangeRange) -> Reason | None:
    """Why the policy file the change brings is not a valid policy, or None."""
    heads = change.heads
    if not heads:  # a commit: the version it records is the index's
        tree = git.run(["write-tree"], index_file=change.index_file).stdout.decode().strip()
        heads = (tree,)
    for head in heads:
        problem = policy_at(git, head)[1]
        if problem is not None:
            return problem
    return None


def _taskless_at(git: Git, base: str | None, changed: tuple[CanonicalPath, ...],
                 head_problem: Reason | None) -> Result:
    """``ci check``'s verdict on ``changed`` as a pull request without a task from ``base``."""
    if base is None:
        surfaces, adopted = load_bundled_template(), False
        trust, trust_problem = None, None
        policy, policy_problem = STRICT, None
    else:
        surfaces, adopted = surfaces_with_presence_at_commit(git, base)
        trust, trust_problem = base_trust_root(git, base)
        policy, policy_problem = policy_at(git, base)
    label = base or NO_BASE
    facts = PullRequestFacts(
        label, "the change", "the change", changed, surfaces, (), label,
        trust=trust, trust_problem=trust_problem,
        trust_changed=tuple(p for p in changed if p in TRUST_FILES),
        base_adopted=adopted, policy=policy, policy_problem=policy_problem,
        head_policy_problem=head_problem,
    )
    return decide_pull_request(facts)


def gather_preview(root: str, change: ChangeRange, refusal: Result,
                   env: Mapping[str, str]) -> Preview:
    """The facts :func:`plangate.hooks.ci_preview.for_a_person` holds ``refusal`` against.

    With agent markers set nothing else is read (the agent decision stands). CI's verdict
    on a change without a task is read only when the refusal says there is no active task.
    """
    markers = tuple(agent_markers_present(env))
    if markers or NO_ACTIVE_TASK not in refusal.codes:
        return Preview(markers)
    targets = refusal.facts.get("targets", [])
    texts = sorted({t for t in targets if isinstance(t, str)})
    valid, invalid = canonical_paths(texts)
    if invalid or not valid or len(texts) != len(set(targets)):
        # A target that is no repository path is refused by CI too: nothing to preview.
        return Preview(markers, unknown="a changed path is not a repository path")
    changed = tuple(valid)
    if touched_tasks(changed):
        # CI judges a change that touches a task's directory by that task, not as a change
        # without a task: the preview would answer another question. The refusal stands.
        return Preview(markers, unknown="it touches a task's directory, and CI judges it "
                       "by that task's approval, not as a change without a task")
    git = Git(Path(root))
    head_problem = _head_policy_problem(git, change) if POLICY_RELPATH in changed else None
    bases: Sequence[str | None] = change.bases or (None,)
    return Preview(markers, tuple(
        (base[:12] if base else NO_BASE, _taskless_at(git, base, changed, head_problem))
        for base in bases
    ))
