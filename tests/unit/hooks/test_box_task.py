"""Inside exec's observed box, the active task comes from the run: real files, real plans."""

from __future__ import annotations

from pathlib import Path

from plangate.canonical import sha256_digest
from plangate.hooks.service import box_task_facts
from plangate.isolation.contract import BoxFacts
from support.plan_tasks import PLAN_MD

RUN_ID = "TASK-0001-20261203T093100Z-4bf50be3"


def _facts(plan_hash: str) -> BoxFacts:
    return BoxFacts(RUN_ID, "TASK-0001", "a" * 40, plan_hash, "bubblewrap")


def _workspace(tmp_path: Path, plan: str = PLAN_MD) -> Path:
    task = tmp_path / "docs" / "working" / "TASK-0001"
    task.mkdir(parents=True)
    (task / "plan.md").write_text(plan)
    return tmp_path


def test_the_verified_plan_gives_a_verified_task_with_its_scope(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    task = box_task_facts(str(root), _facts(sha256_digest(PLAN_MD.encode())))
    assert task.verified
    assert task.source == "box"
    assert task.allowed_paths == ("src/greet.py",)


def test_another_plan_or_none_leaves_the_task_unverified(tmp_path: Path) -> None:
    root = _workspace(tmp_path, PLAN_MD + "\n- `src/**`\n")
    task = box_task_facts(str(root), _facts(sha256_digest(PLAN_MD.encode())))
    assert not task.verified
    assert task.verification_codes == ("HOOK_BOX_PLAN_MISMATCH",)
    assert task.allowed_paths is None
    empty = box_task_facts(str(tmp_path / "nowhere"), _facts(sha256_digest(PLAN_MD.encode())))
    assert not empty.verified


def test_a_plan_reached_through_a_linked_task_directory_leaves_the_task_unverified(
    tmp_path: Path,
) -> None:
    """The task directory swapped for a link to a copy of the verified plan: not followed,
    even though the bytes there would match."""
    elsewhere = _workspace(tmp_path / "elsewhere") / "docs" / "working" / "TASK-0001"
    root = tmp_path / "ws"
    (root / "docs" / "working").mkdir(parents=True)
    (root / "docs" / "working" / "TASK-0001").symlink_to(elsewhere)
    task = box_task_facts(str(root), _facts(sha256_digest(PLAN_MD.encode())))
    assert not task.verified
    assert task.verification_codes == ("HOOK_BOX_PLAN_MISMATCH",)
