"""Signing reads and writes through the task directory verified from the repository root:
a linked ``approvals/`` or task directory is refused and nothing is signed or written outside."""

from __future__ import annotations

from pathlib import Path

import pytest

from plangate.authority.signing import sign_record, sign_review
from plangate.errors import PlanGateError
from support.keys import allowed_signers, make_key, trust_toml
from support.repo import commit_all
from support.swap import tree_files
from support.taskkit import make_task, task_dir


def _repo_with_root(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(approver key, reviewer key) listed in a committed trust root, and a task."""
    keys = tmp_path / "keys"
    alice = make_key(keys, "alice@example.com")
    bob = make_key(keys, "bob@example.com")
    carol = make_key(keys, "carol@example.com")
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/trust.toml").write_bytes(
        trust_toml(["alice@example.com", "bob@example.com"], ["carol@example.com"], require=True)
    )
    (repo / ".plangate/allowed_signers").write_bytes(allowed_signers(alice, bob, carol))
    make_task(repo)
    commit_all(repo, "trust root and task")
    return carol.path, alice.path


def test_a_linked_approvals_directory_is_not_signed(git_repo: Path, tmp_path: Path) -> None:
    key, _reviewer = _repo_with_root(git_repo, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c3.json").write_text("{}")
    (task_dir(git_repo) / "approvals").symlink_to(outside)
    with pytest.raises(PlanGateError) as info:
        sign_record(git_repo, "TASK-0001", key)
    assert info.value.code == "PATH_COMPONENT_LINK"
    assert tree_files(outside) == ["c3.json"]


def test_a_linked_task_directory_gets_no_review_statement(git_repo: Path, tmp_path: Path) -> None:
    _approver, key = _repo_with_root(git_repo, tmp_path)
    outside = tmp_path / "outside"
    tdir = task_dir(git_repo)
    tdir.rename(outside)
    tdir.symlink_to(outside)
    before = tree_files(outside)
    with pytest.raises(PlanGateError) as info:
        sign_review(
            git_repo,
            "TASK-0001",
            review="c1",
            verdict="PASS",
            plan_hash="sha256:" + "0" * 64,
            evidence_sha256="sha256:" + "0" * 64,
            key=key,
        )
    assert info.value.code == "PATH_COMPONENT_LINK"
    assert tree_files(outside) == before
