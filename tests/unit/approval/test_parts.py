"""A task's approval parts: which files belong to which task, and the statement rule."""

from __future__ import annotations

import pytest

from plangate.approval.parts import (
    PART_RELPATHS,
    part_of,
    statement_verdicts,
    verified_parts,
)
from plangate.authority.approval import ReviewFacts
from plangate.authority.statement import Statement
from plangate.authority.verify import Verified
from plangate.verdict import Reason

PLAN = "sha256:" + "a" * 64
OTHER_PLAN = "sha256:" + "b" * 64
ALICE = Verified("alice@example.com", "ssh-ed25519", "SHA256:x", ("reviewer",), True)


def statement(task: str = "TASK-0001", review: str = "c1", plan: str = PLAN,
              principal: str = "alice@example.com") -> Statement:
    evidence = "review-self.md" if review == "c1" else "review-external.md"
    return Statement(task, review, "PASS", plan, evidence, "sha256:" + "c" * 64, principal)


@pytest.mark.parametrize("rel", PART_RELPATHS)
def test_every_part_of_a_task_is_recognised(rel: str) -> None:
    assert part_of(f"docs/working/TASK-0042/{rel}") == ("TASK-0042", rel)


@pytest.mark.parametrize(
    "path",
    [
        "docs/working/TASK-0042/approvals/other.json",
        "docs/working/TASK-0042/approvals/c3.json.bak",
        "docs/working/TASK-42/approvals/c3.json",
        "docs/working/TASK-0042/plan.md",
        "docs/working/TASK-0042/sub/approvals/c3.json",
        "x/docs/working/TASK-0042/approvals/c3.json",
    ],
)
def test_other_paths_are_no_parts(path: str) -> None:
    assert part_of(path) is None


def test_a_verified_record_covers_signatures_only_when_they_were_verified() -> None:
    unauthenticated = verified_parts("TASK-0001", "unauthenticated", ("plan.md",))
    assert unauthenticated == (
        "docs/working/TASK-0001/approvals/c3.json", "docs/working/TASK-0001/plan.md")
    signed = verified_parts("TASK-0001", {"approved_by": "carol@example.com"}, ())
    assert "docs/working/TASK-0001/approvals/c3.json.sig" in signed
    assert "docs/working/TASK-0001/approvals/review-c2.json.sig" in signed
    assert all(p.startswith("docs/working/TASK-0001/") for p in signed)


def _verdict(facts: ReviewFacts, plan: str | None = PLAN) -> Reason | None:
    out = statement_verdicts("TASK-0001", plan, {"c1": facts})
    assert set(out) == {"docs/working/TASK-0001/approvals/review-c1.json",
                        "docs/working/TASK-0001/approvals/review-c1.json.sig"}
    first, second = out.values()
    assert first == second
    return first


def test_a_statement_of_this_task_and_plan_signed_by_its_principal_is_a_part() -> None:
    assert _verdict(ReviewFacts(statement(), "", ALICE)) is None


@pytest.mark.parametrize(
    ("facts", "plan", "says"),
    [
        (ReviewFacts(statement(task="TASK-0002"), "", ALICE), PLAN, "of TASK-0002"),
        (ReviewFacts(statement(review="c2"), "", ALICE), PLAN, "review c2"),
        (ReviewFacts(statement(plan=OTHER_PLAN), "", ALICE), PLAN, "another plan"),
        (ReviewFacts(statement(), "", ALICE), None, "cannot be read"),
        (ReviewFacts(None, "not canonical", None), PLAN, "not a review statement"),
        (ReviewFacts(statement(), "", None), PLAN, "no trust root"),
        (ReviewFacts(statement(), "", Reason("REVIEW_SIGNATURE_INVALID", "bad")), PLAN,
         "REVIEW_SIGNATURE_INVALID"),
        (ReviewFacts(statement(principal="bob@example.com"), "", ALICE), PLAN,
         "alice@example.com signed it"),
    ],
)
def test_anything_else_is_refused_with_why(
    facts: ReviewFacts, plan: str | None, says: str
) -> None:
    verdict = _verdict(facts, plan)
    assert verdict is not None and verdict.code == "HOOK_APPROVAL_PART_UNVERIFIED"
    assert says in verdict.message
