"""git's hooks for a person: the early, friendly form of the verdict ``ci check`` will give.

git's ``pre-commit`` and ``pre-push`` hooks judge the paths that change with the agent
decision (:mod:`plangate.hooks.decision`). An agent's commit stays judged that way. A
person's refusal is then held against what ``ci check`` will say about the same change,
because CI, and the human approval GitHub enforces for ``HUMAN_REQUIRED``, is the
boundary; the git hook never is. :func:`for_a_person` walks :data:`PERSON_RULES` in
order; the first rule that keeps the refusal says why:

1. ``a_person``: agent or automation markers are set
   (:func:`plangate.agents.agent_markers_present`): the agent decision stands;
2. ``every_reason_is_a_humans``: every reason is one CI hands to a human, or lets through
   under the base's policy (:data:`FOR_A_HUMAN`: protected surfaces, host hook
   configuration, PlanGate's own files, no active task). Anything else (outside the
   task's scope, a task that does not verify, approval records, git's internals, a path
   that is no repository path) is what CI rejects too: the refusal stays;
3. ``every_reason_names_its_paths``: a reason that names no path (an invalid task id)
   stays;
4. ``ci_does_not_reject``: with no active task (``HOOK_NO_ACTIVE_TASK``), CI judges the
   change as a pull request without a task: :func:`plangate.delivery.ci.decide` on the
   change, with the protected surfaces, trust root and ``.plangate/policy.toml`` of each
   commit it starts from (:class:`Preview.taskless`, read by
   :mod:`plangate.hooks.ci_preview_service`). A ``REJECTED`` verdict at any of them
   (``CI_NO_TASK``: no policy rule lets a path through; ``PR_POLICY_INVALID``: a policy
   that cannot be read) keeps the refusal.

When no rule keeps it, the change is allowed, with a notice on stderr: "CI will ask a
human to approve: ..." for each reason CI hands to a human (the adoption, a protected
surface, the policy file, a policy rule with ``human = true``), or the policy rule that
lets a path through without a task and without a human (``human = false``).

Why a person and not an agent: an agent that takes its markers out of its environment
still cannot write a protected file (its host hooks deny the write, and deny skipping
git's hooks), and whatever reaches a pull request is judged by CI regardless.
"""

from __future__ import annotations

from collections.abc import Callable

from plangate.records import NamedTuple
from plangate.verdict import Reason, Result

ALLOW = "ALLOW"

NO_ACTIVE_TASK = "HOOK_NO_ACTIVE_TASK"

FOR_A_HUMAN: dict[str, str] = {
    "HOOK_PROTECTED_SURFACE": "a protected surface",
    "HOOK_CONFIG_FILE": "host hook configuration (a protected surface)",
    "HOOK_PLANGATE_STATE": "PlanGate's own files",
    NO_ACTIVE_TASK: "a change without a task",
}
"""Hook reasons that CI answers with a human's approval (or, for a path the base's policy
lets through, with none): each may be lifted for a person, never for an agent."""

CI_REJECTED = "REJECTED"
CI_ACCEPTED = "ACCEPTED"
CI_HUMAN_REQUIRED = "HUMAN_REQUIRED"


class Preview(NamedTuple):
    """What a person's refusal is held against, read once by the IO module.

    ``markers``: the agent or automation markers in the hook's environment.
    ``taskless``: for each commit the change starts from, its short id and ``ci check``'s
    verdict on the change as a pull request without a task (empty when the hook had an
    active task, or did not ask).
    """

    markers: tuple[str, ...] = ()
    taskless: tuple[tuple[str, Result], ...] = ()
    unknown: str = ""
    """Why CI's verdict on a change without a task was not read (empty: it was, or the
    refusal did not ask for it)."""


class ChangeRange(NamedTuple):
    """Where a git hook's change starts and ends.

    ``bases``: the commits it starts from (empty: none, a first commit or a push with no
    remote commit). ``heads``: the commits it brings (a push); empty for a commit, whose
    new version is ``index_file`` (the index git named in ``GIT_INDEX_FILE``, or the
    repository's own when None).
    """

    bases: tuple[str, ...] = ()
    heads: tuple[str, ...] = ()
    index_file: str | None = None


class PersonRule(NamedTuple):
    """One row: its name and its check (why the refusal stays, or ``""``)."""

    name: str
    keeps: Callable[[Result, Preview], str]


def _a_person(_refusal: Result, preview: Preview) -> str:
    if not preview.markers:
        return ""
    return "agent or automation markers are set (" + ", ".join(preview.markers) + ")"


def _every_reason_is_a_humans(refusal: Result, _preview: Preview) -> str:
    others = [r.code for r in refusal.reasons if r.code not in FOR_A_HUMAN]
    return ", ".join(others) + " stays refused in CI too" if others else ""


def _every_reason_names_its_paths(refusal: Result, _preview: Preview) -> str:
    pathless = [r.code for r in refusal.reasons if not r.evidence]
    return ", ".join(pathless) + " names no path" if pathless else ""


def _ci_does_not_reject(refusal: Result, preview: Preview) -> str:
    if NO_ACTIVE_TASK not in refusal.codes:
        return ""
    if not preview.taskless:
        return preview.unknown or "CI's verdict on a change without a task is unknown"
    for base, verdict in preview.taskless:
        if verdict.verdict not in (CI_ACCEPTED, CI_HUMAN_REQUIRED):  # unknown words too
            severity = verdict.facts.get("severity", {})
            rejected = [r for r in verdict.reasons if severity.get(r.code) == CI_REJECTED]
            first = rejected[0] if rejected else Reason(CI_REJECTED, "rejected")
            return f"CI rejects it (at {base}): {first.code}: {first.message}"
    return ""


PERSON_RULES: tuple[PersonRule, ...] = (
    PersonRule("a_person", _a_person),
    PersonRule("every_reason_is_a_humans", _every_reason_is_a_humans),
    PersonRule("every_reason_names_its_paths", _every_reason_names_its_paths),
    PersonRule("ci_does_not_reject", _ci_does_not_reject),
)
"""The rows, in order; the first that keeps the refusal decides."""


def _notice(refusal: Result, preview: Preview) -> tuple[str, ...]:
    """What the person reads on stderr: CI's own words for what it will do."""
    lines: dict[str, None] = {}
    for base, verdict in preview.taskless:
        severity = verdict.facts.get("severity", {})
        for reason in verdict.reasons:
            if severity.get(reason.code) == CI_HUMAN_REQUIRED:
                lines[f"CI will ask a human to approve: {reason.code}: {reason.message}"] = None
        policy = verdict.facts.get("policy", {})
        through = policy.get("taskless", {}) if isinstance(policy, dict) else {}
        for path, rule in sorted(through.items()):
            lines[f"CI lets {path} through without a task: rule {rule!r} of "
                  f".plangate/policy.toml at {base}"] = None
    if not preview.taskless:  # an active task: CI judges these paths inside its scope
        for reason in refusal.reasons:
            what = FOR_A_HUMAN[reason.code]
            lines[f"CI will ask a human to approve: {what}: {', '.join(reason.evidence)}"] = None
    return tuple(lines)


def for_a_person(refusal: Result, preview: Preview) -> Result:
    """The git hook's verdict for the person committing or pushing (see the module
    docstring): ``refusal`` itself, with the rule that kept it in its facts, or an
    ``ALLOW`` whose facts carry the notice (``person_notice``) and the lifted codes."""
    if refusal.accepted:
        return refusal
    for rule in PERSON_RULES:
        why = rule.keeps(refusal, preview)
        if why:
            return refusal._replace(facts={**refusal.facts, "person_rule": f"{rule.name}: {why}"})
    return Result(ALLOW, (), {
        **refusal.facts,
        "lifted_for_person": list(refusal.codes),
        "person_notice": list(_notice(refusal, preview)),
    })
