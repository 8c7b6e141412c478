"""The rules of ``plangate runs`` (pure): per-path verdicts of a refused run, run ids, ages
and what prune keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plangate.execution.apply import ResultFacts, TreeFact, judge
from plangate.execution.salvage import (
    PRUNE_RULES,
    PruneFacts,
    RunId,
    left_out_reason,
    parse_duration,
    parse_run_id,
    path_verdicts,
    prune_decision,
)
from plangate.plan.scope import derive_scope
from plangate.surfaces import load_surfaces_bytes
from plangate.verdict import Reason, Result

PLAN = b"""# plan

## Files / Components to Touch

- `src/greet.py`
- `src/lib/**`
"""
SURFACES = b"""version = 1

[[surface]]
pattern = "src/lib/secret.py"
class = "policy-spec"
reason = "a protected file inside the scope"
"""


def _facts(changed: tuple[str, ...], **changes: object) -> ResultFacts:
    facts = ResultFacts(
        task_id="TASK-0001",
        approved="a" * 40,
        result="b" * 40,
        changed=changed,
        unmatchable=(),
        surfaces=load_surfaces_bytes(SURFACES, "downstream", "x"),
        verification=Result("ACCEPTED", (), {"record": {"scope_digest": derive_scope(PLAN).digest}}),
        plan=PLAN,
        tree=tuple(TreeFact(p, "100644", None) for p in changed),
        workspace=(),
    )
    return facts._replace(**changes)


def _verdicts(facts: ResultFacts) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {v.path: (v.verdict, v.codes) for v in path_verdicts(facts, judge)}


def test_each_path_is_judged_on_its_own() -> None:
    got = _verdicts(_facts(("src/greet.py", "src/keep.py", "src/lib/secret.py",
                            "docs/working/TASK-0001/plan.md")))
    assert got["src/greet.py"] == ("ACCEPTED", ())
    assert got["src/keep.py"][0] == "REJECTED"
    assert "CI_OUTSIDE_SCOPE" in got["src/keep.py"][1]
    assert got["src/lib/secret.py"] == ("HUMAN_REQUIRED", ("CI_PROTECTED_SURFACE",))
    assert got["docs/working/TASK-0001/plan.md"][0] == "REJECTED"
    assert "EXEC_PLAN_PACKAGE_CHANGED" in got["docs/working/TASK-0001/plan.md"][1]


def test_a_link_in_scope_is_still_refused_on_its_own() -> None:
    facts = _facts(("src/greet.py",), tree=(TreeFact("src/greet.py", "120000", b"x"),))
    assert _verdicts(facts)["src/greet.py"][0] == "REJECTED"


def test_a_problem_of_the_whole_run_refuses_every_path() -> None:
    unverified = Result("REJECTED", (Reason("C3_RECORD_STALE", "stale"),))
    facts = _facts(("src/greet.py", "src/lib/a.py"), verification=unverified)
    got = _verdicts(facts)
    assert {v for v, _ in got.values()} == {"REJECTED"}
    reason = left_out_reason(path_verdicts(facts, judge))
    assert reason is not None and reason.code == "RUNS_NOTHING_IN_SCOPE"


def test_an_unmatchable_path_is_never_in_scope() -> None:
    facts = _facts(("src/greet.py",), unmatchable=(("src/gr\x01eet.py", "PATH_CONTROL_CHARACTER"),))
    got = _verdicts(facts)
    assert got["src/gr\x01eet.py"] == ("REJECTED", ("PATH_CONTROL_CHARACTER",))
    assert left_out_reason(path_verdicts(facts, judge)) is None


def test_run_ids_are_parsed_only_as_plangate_makes_them() -> None:
    parsed = parse_run_id("TASK-0007-20260102T030405Z-0a1b2c3d")
    assert parsed == RunId("TASK-0007-20260102T030405Z-0a1b2c3d", "TASK-0007",
                           datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    for bad in ("../TASK-0007-20260102T030405Z-0a1b2c3d", "TASK-0007-20261302T030405Z-0a1b2c3d",
                "TASK-0007-20260102T030405Z-0A1B2C3D", "TASK-7-20260102T030405Z-0a1b2c3d", ""):
        assert parse_run_id(bad) is None


@pytest.mark.parametrize(("text", "seconds"), [("0", 0), ("30m", 1800), ("12h", 43200),
                                               ("14d", 14 * 86400), ("2w", 14 * 86400)])
def test_ages(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "7", "d", "-1d", "1.5h", "1y", "1d2h"])
def test_malformed_ages(text: str) -> None:
    assert parse_duration(text) is None


RUN = RunId("TASK-0001-20260101T000000Z-00000000", "TASK-0001", datetime(2026, 1, 1, tzinfo=UTC))


def _prune(**changes: object) -> PruneFacts:
    facts = PruneFacts(RUN, datetime(2026, 2, 1, tzinfo=UTC), timedelta(0), False, "c" * 40,
                       True, False)
    return facts._replace(**changes)


def test_a_finished_merged_run_goes() -> None:
    assert prune_decision(_prune()) is None


def test_a_run_of_a_locked_task_is_never_pruned() -> None:
    keep = prune_decision(_prune(task_locked=True, older_than=timedelta(0)))
    assert keep is not None and keep.what == "run"


def test_a_young_run_is_kept() -> None:
    keep = prune_decision(_prune(older_than=timedelta(days=60)))
    assert keep is not None and keep.what == "run"


def test_a_branch_that_is_the_only_reference_or_checked_out_is_kept() -> None:
    only = prune_decision(_prune(branch_contained_elsewhere=False))
    assert only is not None and only.what == "branch"
    checked = prune_decision(_prune(branch_checked_out=True))
    assert checked is not None and checked.what == "branch"
    assert prune_decision(_prune(branch_commit=None, branch_contained_elsewhere=False)) is None


def test_the_lock_is_the_first_rule() -> None:
    assert PRUNE_RULES[0](_prune(task_locked=True)) is not None
