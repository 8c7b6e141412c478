"""Who may register an evaluation plan (pure): the trust root's ``evaluator`` role.

Where a trust root is in force, a plan registers only with a detached signature
beside the plan file (``plan.yaml.sig``, namespace ``plangate-eval-plan``) by a
principal holding ``evaluator``. Without a trust root nothing can be verified:
the plan is recorded as ``unauthenticated``, and a caller carrying agent or
automation markers is refused (an agent does not register the plan that judges
its own work). A plan that is less strict than a plan it replaces which has a
recorded FAIL needs the signature of a human evaluator, which only a trust root
can show. :func:`plan_authority_reasons` applies :data:`RULES` in order.
"""

from __future__ import annotations

from collections.abc import Callable

from plangate.authority.verify import Verified
from plangate.records import NamedTuple
from plangate.verdict import Reason

ROLE = "evaluator"
"""The trust root's role whose holders register evaluation plans."""
PREFIX = "EVAL_PLAN"
"""The prefix of the signature rules' codes (``EVAL_PLAN_SIGNER_NOT_AUTHORISED``...)."""
_SIGN = (
    "an evaluator signs the plan file: ssh-keygen -Y sign -n plangate-eval-plan -f KEY "
    "plan.yaml (writes plan.yaml.sig beside it)"
)


class PlanAuthorityFacts(NamedTuple):
    """What the registration rules read."""

    trust_in_force: bool
    signature: Verified | Reason | None
    """The signature's check under the trust root; None when there is no signature file."""
    agent_markers: tuple[str, ...]
    relaxed: tuple[str, ...]
    """How the plan relaxes a replaced plan that has a recorded FAIL (empty: it does not)."""


def _signed(f: PlanAuthorityFacts) -> Reason | None:
    if not f.trust_in_force or f.signature is not None:
        return None
    return Reason(
        "EVAL_PLAN_SIGNATURE_MISSING",
        "a trust root is in force and the plan carries no evaluator signature",
        _SIGN,
    )


def _signature_valid(f: PlanAuthorityFacts) -> Reason | None:
    return f.signature if f.trust_in_force and isinstance(f.signature, Reason) else None


def _not_an_agent(f: PlanAuthorityFacts) -> Reason | None:
    if f.trust_in_force or not f.agent_markers:
        return None
    return Reason(
        "EVAL_PLAN_AGENT_ENVIRONMENT",
        "an evaluation plan is the evaluator's, and agent or automation markers are set: "
        + ", ".join(f.agent_markers),
        "the evaluator registers the plan in their own terminal, outside the agent session",
    )


def _relaxation_signed_by_a_human(f: PlanAuthorityFacts) -> Reason | None:
    if not f.relaxed:
        return None
    if f.trust_in_force and isinstance(f.signature, Verified) and f.signature.human:
        return None
    return Reason(
        "EVAL_PLAN_RELAXATION_NEEDS_HUMAN",
        "the plan is less strict than the plan it replaces, which has a recorded FAIL: "
        + "; ".join(f.relaxed[:5]),
        "conditions are never relaxed after seeing a result: keep them, or have a human "
        "evaluator (listed under humans in .plangate/trust.toml) sign the plan",
    )


class Rule(NamedTuple):
    """One registration rule: its name and its check."""

    name: str
    check: Callable[[PlanAuthorityFacts], Reason | None]


RULES: tuple[Rule, ...] = (
    Rule("signed_where_a_trust_root_is_in_force", _signed),
    Rule("signature_valid_and_by_an_evaluator", _signature_valid),
    Rule("no_agent_registers_without_a_trust_root", _not_an_agent),
    Rule("relaxation_after_fail_signed_by_a_human", _relaxation_signed_by_a_human),
)
"""The plan registration rules, in order; every failing rule is listed."""


def plan_authority_reasons(facts: PlanAuthorityFacts) -> list[Reason]:
    """Why this plan may not be registered (empty: it may)."""
    return [r for r in (rule.check(facts) for rule in RULES) if r is not None]


def authority_label(facts: PlanAuthorityFacts) -> str:
    """``signed:<principal>`` or ``unauthenticated`` (what the ledger records)."""
    if isinstance(facts.signature, Verified):
        return f"signed:{facts.signature.principal}"
    return "unauthenticated"
