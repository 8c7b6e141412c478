"""The person's rule at git's hooks (pure): a refusal held against CI's verdict."""

from __future__ import annotations

from plangate.delivery.ci import PullRequestFacts
from plangate.delivery.ci import decide as decide_pull_request
from plangate.delivery.pr_policy import parse_policy
from plangate.hooks.ci_preview import PERSON_RULES, Preview, for_a_person
from plangate.hooks.setup import template_without_marker
from plangate.surfaces import PROVENANCE_DOWNSTREAM, load_surfaces_bytes
from plangate.verdict import Reason, Result

DOCS = parse_policy(b'[[taskless]]\nname = "docs"\npaths = ["*.md"]\nhuman = false\n')
DEPS = parse_policy(b'[[taskless]]\nname = "deps"\npaths = ["pyproject.toml"]\n')


def _refusal(*reasons: tuple[str, tuple[str, ...]]) -> Result:
    paths = sorted({p for _code, evidence in reasons for p in evidence})
    return Result(
        "DENY",
        tuple(Reason(code, f"{code} message", "hint", evidence) for code, evidence in reasons),
        {"action": "commit", "targets": paths},
    )


SURFACES = load_surfaces_bytes(template_without_marker(), PROVENANCE_DOWNSTREAM, "surfaces")


def _ci(changed: tuple[str, ...], *, policy=DOCS, adopted: bool = True) -> Result:
    """ci check's own verdict on ``changed`` as a pull request without a task."""
    facts = PullRequestFacts(
        "base", "head", "head", changed, SURFACES, (), "base",
        base_adopted=adopted, policy=policy,
    )
    return decide_pull_request(facts)


NO_TASK = "HOOK_NO_ACTIVE_TASK"


def test_the_rows_are_in_order() -> None:
    assert [rule.name for rule in PERSON_RULES] == [
        "a_person", "every_reason_is_a_humans", "every_reason_names_its_paths",
        "ci_does_not_reject",
    ]


def test_a_docs_path_the_base_policy_lets_through_needs_no_task() -> None:
    refusal = _refusal((NO_TASK, ("README.md",)))
    result = for_a_person(refusal, Preview((), (("base", _ci(("README.md",))),)))
    assert result.verdict == "ALLOW"
    assert result.facts["lifted_for_person"] == [NO_TASK]
    assert result.facts["person_notice"] == [
        "CI lets README.md through without a task: rule 'docs' of .plangate/policy.toml at base"
    ]


def test_markers_keep_the_agent_decision() -> None:
    refusal = _refusal((NO_TASK, ("README.md",)))
    result = for_a_person(refusal, Preview(("CLAUDECODE",), (("base", _ci(("README.md",))),)))
    assert result.verdict == "DENY"
    assert result.facts["person_rule"].startswith("a_person: agent or automation markers")


def test_a_path_no_rule_lets_through_keeps_the_refusal() -> None:
    changed = ("README.md", "src/app.py")
    refusal = _refusal((NO_TASK, changed))
    result = for_a_person(refusal, Preview((), (("base", _ci(changed)),)))
    assert result.verdict == "DENY"
    assert "CI_NO_TASK" in result.facts["person_rule"]


def test_without_ci_s_verdict_a_change_without_a_task_stays_refused() -> None:
    result = for_a_person(_refusal((NO_TASK, ("README.md",))), Preview())
    assert result.verdict == "DENY"
    assert result.facts["person_rule"].startswith("ci_does_not_reject")


def test_why_ci_s_verdict_was_not_read_is_what_the_person_reads() -> None:
    why = "it touches a task's directory"
    result = for_a_person(_refusal((NO_TASK, ("README.md",))), Preview(unknown=why))
    assert result.verdict == "DENY"
    assert result.facts["person_rule"] == f"ci_does_not_reject: {why}"


def test_an_unknown_ci_verdict_word_keeps_the_refusal() -> None:
    odd = Result("MAYBE", (), {})
    result = for_a_person(_refusal((NO_TASK, ("README.md",))), Preview((), (("base", odd),)))
    assert result.verdict == "DENY"


def test_the_strictest_base_counts() -> None:
    refusal = _refusal((NO_TASK, ("README.md",)))
    strict = _ci(("README.md",), policy=parse_policy(b""))
    preview = Preview((), (("one", _ci(("README.md",))), ("two", strict)))
    result = for_a_person(refusal, preview)
    assert result.verdict == "DENY"
    assert "(at two)" in result.facts["person_rule"]


def test_a_human_rule_goes_through_with_ci_s_words() -> None:
    refusal = _refusal((NO_TASK, ("pyproject.toml",)))
    result = for_a_person(refusal, Preview((), (("base", _ci(("pyproject.toml",), policy=DEPS)),)))
    assert result.verdict == "ALLOW"
    assert any(line.startswith("CI will ask a human to approve: CI_TASKLESS_HUMAN")
               for line in result.facts["person_notice"])


def test_the_adoption_goes_through_with_ci_s_words() -> None:
    changed = (".claude/settings.json", ".plangate/protected-surfaces.toml")
    refusal = _refusal(
        ("HOOK_CONFIG_FILE", (".claude/settings.json",)),
        ("HOOK_PROTECTED_SURFACE", changed),
        ("HOOK_PLANGATE_STATE", (".plangate/protected-surfaces.toml",)),
        (NO_TASK, changed),
    )
    verdict = _ci(changed, policy=parse_policy(b""), adopted=False)
    result = for_a_person(refusal, Preview((), (("base", verdict),)))
    assert result.verdict == "ALLOW"
    assert result.facts["person_notice"][0].startswith(
        "CI will ask a human to approve: CI_ADOPTS_PLANGATE"
    )


def test_a_protected_surface_in_the_task_s_scope_goes_to_a_human() -> None:
    refusal = _refusal(("HOOK_PROTECTED_SURFACE", ("AGENTS.md",)))
    result = for_a_person(refusal, Preview())
    assert result.verdict == "ALLOW"
    assert result.facts["person_notice"] == [
        "CI will ask a human to approve: a protected surface: AGENTS.md"
    ]


def test_reasons_ci_rejects_too_are_never_lifted() -> None:
    for code in ("HOOK_OUTSIDE_SCOPE", "HOOK_TASK_NOT_VERIFIED", "HOOK_APPROVAL_FILE",
                 "HOOK_GIT_INTERNALS", "HOOK_TARGET_INVALID", "HOOK_SURFACES_UNAVAILABLE"):
        refusal = _refusal(("HOOK_PROTECTED_SURFACE", ("AGENTS.md",)), (code, ("AGENTS.md",)))
        result = for_a_person(refusal, Preview())
        assert result.verdict == "DENY", code
        assert result.facts["person_rule"].startswith("every_reason_is_a_humans")


def test_a_reason_without_a_path_is_never_lifted() -> None:
    refusal = Result("DENY", (Reason("HOOK_PROTECTED_SURFACE", "m", "h", ()),), {})
    result = for_a_person(refusal, Preview())
    assert result.verdict == "DENY"
    assert result.facts["person_rule"].startswith("every_reason_names_its_paths")


def test_an_allowed_decision_is_left_as_it_is() -> None:
    allowed = Result("ALLOW", (), {"action": "commit"})
    assert for_a_person(allowed, Preview(("CLAUDECODE",))) is allowed
