"""``hooks install`` / ``uninstall`` never write through a link: a linked config directory or
hooks directory is refused with a code, a read-only one is a reason, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import RunCli
from support.privileges import run_plangate
from support.repo import git
from support.swap import tree_files


@pytest.mark.parametrize(
    ("flag", "directory"), [("--claude", ".claude"), ("--codex", ".codex"), ("--cursor", ".cursor")]
)
def test_a_linked_config_directory_is_refused(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, flag: str, directory: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (git_repo / directory).symlink_to(outside)
    res = run_cli(git_repo, "hooks", "install", flag)
    assert res.code == 1, res.err
    assert "PATH_COMPONENT_LINK" in res.err
    assert tree_files(outside) == []


def test_a_linked_hooks_directory_inside_the_repository_is_refused(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    git(git_repo, "config", "core.hooksPath", "githooks")
    (git_repo / "githooks").symlink_to(outside)
    res = run_cli(git_repo, "hooks", "install", "--git")
    assert res.code == 1, res.err
    assert "PATH_COMPONENT_LINK" in res.err
    assert tree_files(outside) == []


def test_a_linked_hook_script_is_not_replaced(
    run_cli: RunCli, git_repo: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("#!/bin/sh\necho mine\n")
    hooks = git_repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").symlink_to(victim)
    res = run_cli(git_repo, "hooks", "install", "--git")
    assert res.code == 1, res.err
    assert "HOOKS_GIT_HOOK_EXISTS" in res.err
    assert victim.read_text() == "#!/bin/sh\necho mine\n"


def test_install_into_a_read_only_config_directory_is_a_reason(git_repo: Path) -> None:
    claude = git_repo / ".claude"
    claude.mkdir()
    claude.chmod(0o555)
    try:
        proc = run_plangate(git_repo, "hooks", "install", "--claude")
    finally:
        claude.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "INTERNAL_ERROR" not in proc.stderr
    assert "PATH_NOT_WRITABLE" in proc.stderr
    assert list(claude.iterdir()) == []
