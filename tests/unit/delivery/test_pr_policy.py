"""``.plangate/policy.toml`` (pure): its strict parse, and how ``ci check`` judges a pull
request without a task by the base's policy."""

from __future__ import annotations

import pytest

from plangate.delivery.ci import PullRequestFacts, decide
from plangate.delivery.pr_policy import (
    STRICT,
    SUGGESTED_POLICY,
    PullRequestPolicy,
    TasklessRule,
    parse_policy,
    taskless_rule_for,
)
from plangate.errors import InputRejected
from plangate.plan.scope import derive_scope
from plangate.surfaces import ProtectedPattern, ResolvedSurfaces
from plangate.verdict import Reason, Result

BASE, HEAD = "b" * 40, "h" * 40
SURFACES = ResolvedSurfaces(
    "downstream", "x", None,
    (ProtectedPattern("AGENTS.md", "rules", "agent rules"),
     ProtectedPattern(".plangate/**", "plangate", "PlanGate's own files")),
)
DOCS_AND_DEPS = PullRequestPolicy((
    TasklessRule("docs", ("docs/**", "*.md"), human=False),
    TasklessRule("dependencies", ("pyproject.toml", "requirements*.txt"), human=True),
))


def pull_request(*changed: str, policy: PullRequestPolicy = DOCS_AND_DEPS,
                 **more: object) -> PullRequestFacts:
    """A pull request that touches no task, judged under ``policy`` (the base's)."""
    return PullRequestFacts(BASE, HEAD, HEAD, changed, SURFACES, (), "m" * 40, policy=policy,
                            **more)  # type: ignore[arg-type]


def codes(result: Result) -> list[str]:
    return [r.code for r in result.reasons]


# -- the parse ----------------------------------------------------------------------

def test_the_suggested_policy_parses_to_its_two_rules() -> None:
    policy = parse_policy(SUGGESTED_POLICY.encode())
    assert [(r.name, r.human) for r in policy.taskless] == [
        ("docs", False), ("dependencies", True)]
    assert "pyproject.toml" in policy.taskless[1].paths


def test_an_empty_file_is_the_strict_default() -> None:
    assert parse_policy(b"# nothing allowed yet\n") == STRICT


def test_human_defaults_to_true() -> None:
    policy = parse_policy(b'[[taskless]]\nname = "deps"\npaths = ["uv.lock"]\n')
    assert policy.taskless == (TasklessRule("deps", ("uv.lock",), True),)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('allow = ["docs/**"]\n', "allow at the top level"),
        ('[[taskless]]\nname = "d"\npaths = ["docs/**"]\nreviewers = 2\n',
         "reviewers in taskless entry 1"),
    ],
)
def test_an_unknown_key_is_refused_with_its_own_code(text: str, where: str) -> None:
    with pytest.raises(InputRejected) as caught:
        parse_policy(text.encode())
    assert caught.value.code == "PR_POLICY_UNKNOWN_KEY"
    assert where in caught.value.message
    assert "known keys" in caught.value.hint


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("[[taskless]\n", "not valid TOML"),
        ('taskless = "docs/**"\n', "array of tables"),
        ("taskless = [1]\n", "not a table"),
        ('[[taskless]]\npaths = ["docs/**"]\n', "name must be"),
        ('[[taskless]]\nname = "d"\n', "non-empty list"),
        ('[[taskless]]\nname = "d"\npaths = []\n', "non-empty list"),
        ('[[taskless]]\nname = "d"\npaths = ["docs/**"]\nhuman = "no"\n', "true or false"),
        ('[[taskless]]\nname = "d"\npaths = ["docs/../src/**"]\n', "PATH_DOTDOT"),
        ('[[taskless]]\nname = "d"\npaths = ["/etc/**"]\n', "PATH_ABSOLUTE"),
        ('[[taskless]]\nname = "d"\npaths = ["docs\\\\x"]\n', "PATH_BACKSLASH"),
        ('[[taskless]]\nname = "d"\npaths = ["docs/"]\n', "PATH_EMPTY_SEGMENT"),
        ('[[taskless]]\nname = "d"\npaths = ["docs/**x"]\n', "PATTERN_BAD_DOUBLESTAR"),
        ('[[taskless]]\nname = "d"\npaths = [3]\n', "PATH_NOT_STRING"),
        ('[[taskless]]\nname = "d"\npaths = ["a"]\n[[taskless]]\nname = "d"\npaths = ["b"]\n',
         "given twice"),
    ],
)
def test_a_malformed_policy_is_refused_with_a_reason(text: str, detail: str) -> None:
    with pytest.raises(InputRejected) as caught:
        parse_policy(text.encode(), ".plangate/policy.toml@abc")
    assert caught.value.code == "PR_POLICY_INVALID"
    assert caught.value.message.startswith(".plangate/policy.toml@abc: ")
    assert detail in caught.value.message
    assert caught.value.hint


def test_bytes_that_are_not_utf8_or_too_many_are_refused() -> None:
    for data in (b"\xff\xfe", b"#" * (64 * 1024 + 1)):
        with pytest.raises(InputRejected) as caught:
            parse_policy(data)
        assert caught.value.code == "PR_POLICY_INVALID"
    assert parse_policy(b"#" * (64 * 1024)) == STRICT  # 64 KiB exactly is within the limit


def test_a_rule_built_without_human_needs_one() -> None:
    assert TasklessRule("deps", ("uv.lock",)).human is True


def test_no_rule_reaches_plangates_own_files_or_the_tasks() -> None:
    everything = PullRequestPolicy((TasklessRule("all", ("**",), False),))
    assert taskless_rule_for(everything, "src/app.py") == everything.taskless[0]
    assert taskless_rule_for(everything, ".plangate/tools.toml") is None
    assert taskless_rule_for(everything, "docs/working/notes.md") is None


def test_the_first_matching_rule_answers_and_matching_is_case_sensitive() -> None:
    assert taskless_rule_for(DOCS_AND_DEPS, "README.md") == DOCS_AND_DEPS.taskless[0]
    assert taskless_rule_for(DOCS_AND_DEPS, "requirements-dev.txt") == DOCS_AND_DEPS.taskless[1]
    assert taskless_rule_for(DOCS_AND_DEPS, "DOCS/x.txt") is None


# -- the decision -------------------------------------------------------------------

def test_without_a_policy_a_pull_request_without_a_task_is_refused_naming_the_file() -> None:
    result = decide(pull_request("README.md", policy=STRICT))
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_NO_TASK"])
    assert ".plangate/policy.toml" in result.reasons[0].hint


def test_a_docs_change_the_policy_lets_through_is_accepted() -> None:
    result = decide(pull_request("README.md", "docs/guide.md"))
    assert (result.verdict, codes(result)) == ("ACCEPTED", [])
    assert result.facts["policy"]["taskless"] == {"README.md": "docs", "docs/guide.md": "docs"}
    assert result.facts["policy"]["read_at"] == BASE
    assert result.facts["policy"]["rules"] == ["docs", "dependencies"]


def test_docs_mixed_with_code_is_refused_for_the_code_alone() -> None:
    result = decide(pull_request("README.md", "src/app.py"))
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_NO_TASK"])
    assert result.reasons[0].evidence == ("src/app.py",)


def test_a_rule_with_human_true_sends_its_paths_to_a_human() -> None:
    result = decide(pull_request("pyproject.toml", "README.md"))
    assert (result.verdict, codes(result)) == ("HUMAN_REQUIRED", ["CI_TASKLESS_HUMAN"])
    assert result.reasons[0].evidence == ("pyproject.toml",)
    assert "dependencies" in result.reasons[0].message


def test_a_policy_rule_never_lifts_a_protected_surface() -> None:
    result = decide(pull_request("AGENTS.md"))  # '*.md' lets it through, the surface holds
    assert (result.verdict, codes(result)) == ("HUMAN_REQUIRED", ["CI_PROTECTED_SURFACE"])


def test_a_change_to_the_policy_file_goes_to_a_human_even_without_a_policy() -> None:
    result = decide(pull_request(".plangate/policy.toml", policy=STRICT))
    assert result.verdict == "HUMAN_REQUIRED"
    assert "CI_POLICY_CHANGED" in codes(result)
    changed = next(r for r in result.reasons if r.code == "CI_POLICY_CHANGED")
    assert changed.evidence == (".plangate/policy.toml",)  # annotated on the file
    assert "CI_NO_TASK" not in codes(result)


def test_a_policy_the_pull_request_would_merge_must_be_valid() -> None:
    problem = Reason("PR_POLICY_INVALID", ".plangate/policy.toml@hhh: not valid TOML")
    result = decide(pull_request(".plangate/policy.toml", head_policy_problem=problem))
    assert result.verdict == "REJECTED"
    assert codes(result)[0] == "PR_POLICY_INVALID"


def test_an_unusable_base_policy_refuses_what_needs_it_but_not_its_own_repair() -> None:
    problem = Reason("PR_POLICY_UNKNOWN_KEY", ".plangate/policy.toml@bbb: unknown key(s) allow")
    needs_it = decide(pull_request("README.md", policy=STRICT, policy_problem=problem))
    assert needs_it.verdict == "REJECTED"
    assert codes(needs_it) == ["PR_POLICY_UNKNOWN_KEY", "CI_NO_TASK"]
    repair = decide(pull_request(".plangate/policy.toml", policy=STRICT, policy_problem=problem))
    assert (repair.verdict, codes(repair)) == ("HUMAN_REQUIRED", ["CI_POLICY_CHANGED",
                                                                  "CI_PROTECTED_SURFACE"])


def test_a_pull_request_with_a_task_is_never_judged_by_the_policy() -> None:
    plan = b"# Plan\n\n## Files / Components to Touch\n- `src/**`\n"
    outcome = Result("ACCEPTED", (), {"record": {"scope_digest": derive_scope(plan).digest}})
    from plangate.delivery.ci import TaskFacts

    task = TaskFacts("TASK-0001", None, outcome, plan, ("plan.md",))
    built = PullRequestFacts(BASE, HEAD, HEAD, ("docs/working/TASK-0001/plan.md",
                                                "docs/working/TASK-0001/approvals/c3.json",
                                                "src/app.py", "README.md"),
                             SURFACES, (task,), "m" * 40, policy=DOCS_AND_DEPS,
                             policy_problem=Reason("PR_POLICY_INVALID", "x"))
    result = decide(built)
    assert (result.verdict, codes(result)) == ("REJECTED", ["CI_OUTSIDE_SCOPE"])
    assert result.reasons[0].evidence == ("README.md",)


def test_the_adoption_may_bring_the_policy_but_not_a_broken_one() -> None:
    adoption = PullRequestFacts(BASE, HEAD, HEAD, (".plangate/protected-surfaces.toml",
                                                   ".plangate/policy.toml"),
                                SURFACES, (), "m" * 40, base_adopted=False)
    result = decide(adoption)
    assert (result.verdict, codes(result)) == ("HUMAN_REQUIRED", ["CI_ADOPTS_PLANGATE"])
    broken = decide(adoption._replace(
        head_policy_problem=Reason("PR_POLICY_INVALID", "not valid TOML")))
    assert (broken.verdict, codes(broken)) == ("REJECTED", ["PR_POLICY_INVALID",
                                                            "CI_ADOPTS_PLANGATE"])
