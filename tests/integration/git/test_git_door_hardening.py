"""The git door cannot be lied to: replacement objects, grafts, shallow history,
hooks, fsmonitor and ref names shaped like object ids, in real repositories."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from plangate.git import Git, GitError
from support.cli import RunCli
from support.repo import commit_all, git


def _raw_git(repo: Path, *args: str) -> str:
    """git with replacement objects ON (as an attacker's own git would run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return proc.stdout.decode().strip()


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _marker_script(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """An executable that creates a marker file when anything runs it."""
    marker = tmp_path / f"{name}.ran"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, marker


def _sibling_commits(repo: Path) -> tuple[str, str, str]:
    """base, a commit on a side branch, and a commit on main (not related to side)."""
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "side")
    _write(repo, "src/side.py", "x = 1\n")
    side = commit_all(repo, "side")
    git(repo, "checkout", "-q", "main")
    _write(repo, "CLAUDE.md", "agent instructions changed\n")
    main = commit_all(repo, "main")
    return base, side, main


def test_a_replace_ref_does_not_change_the_diff(git_repo: Path) -> None:
    base = git(git_repo, "rev-parse", "HEAD")
    _write(git_repo, "CLAUDE.md", "weakened\n")
    _write(git_repo, "src/app.py", "print('hi')\n")
    real = commit_all(git_repo, "touches CLAUDE.md")
    git(git_repo, "checkout", "-q", base)
    _write(git_repo, "src/app.py", "print('hi')\n")
    decoy = commit_all(git_repo, "in scope only")
    git(git_repo, "checkout", "-q", "main")
    _raw_git(git_repo, "replace", real, decoy)
    # git itself (replacement on) now reports the decoy's tree for the real commit
    lied = _raw_git(git_repo, "diff", "--name-only", base, real)
    assert lied.split() == ["src/app.py"]
    assert Git(git_repo).changed_paths(base, real) == ["CLAUDE.md", "src/app.py"]


def test_a_replace_graft_does_not_make_a_sibling_an_ancestor(git_repo: Path) -> None:
    _base, side, main = _sibling_commits(git_repo)
    _raw_git(git_repo, "replace", "--graft", main, side)
    assert _raw_git(git_repo, "rev-list", main).split()[1] == side  # git is fooled
    assert Git(git_repo).is_ancestor(side, main) is False


def test_a_graft_file_makes_ancestry_undecidable(git_repo: Path) -> None:
    _base, side, main = _sibling_commits(git_repo)
    (git_repo / ".git" / "info").mkdir(exist_ok=True)
    (git_repo / ".git" / "info" / "grafts").write_text(f"{main} {side}\n")
    with pytest.raises(GitError) as info:
        Git(git_repo).is_ancestor(side, main)
    assert info.value.code == "GIT_HISTORY_UNDECIDABLE"
    assert "grafts" in info.value.hint


def test_an_empty_graft_file_is_still_refused(git_repo: Path) -> None:
    (git_repo / ".git" / "info").mkdir(exist_ok=True)
    (git_repo / ".git" / "info" / "grafts").write_text("")
    head = git(git_repo, "rev-parse", "HEAD")
    with pytest.raises(GitError) as info:
        Git(git_repo).is_ancestor(head, head)
    assert info.value.code == "GIT_HISTORY_UNDECIDABLE"


def test_a_shallow_clone_makes_ancestry_undecidable(git_repo: Path, tmp_path: Path) -> None:
    for n in range(3):
        _write(git_repo, f"f{n}.txt", str(n))
        commit_all(git_repo, f"c{n}")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{git_repo}", str(clone))
    head = git(clone, "rev-parse", "HEAD")
    with pytest.raises(GitError) as info:
        Git(clone).is_ancestor(head, head)
    assert info.value.code == "GIT_HISTORY_UNDECIDABLE"
    assert "unshallow" in info.value.hint


def test_a_full_history_is_decidable(git_repo: Path) -> None:
    base, side, main = _sibling_commits(git_repo)
    door = Git(git_repo)
    assert door.is_ancestor(base, main) is True
    assert door.is_ancestor(side, main) is False


def test_repository_hooks_never_run_inside_plangates_git_calls(
    git_repo: Path, tmp_path: Path
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    script, marker = _marker_script(tmp_path, "post-checkout")
    (hooks / "post-checkout").write_bytes(script.read_bytes())
    (hooks / "post-checkout").chmod(0o755)
    git(git_repo, "config", "core.hooksPath", str(hooks))
    head = git(git_repo, "rev-parse", "HEAD")
    door = Git(git_repo)
    door.add_worktree(tmp_path / "wt", head)
    door.remove_worktree(tmp_path / "wt")
    assert not marker.exists()
    # the same hook does run for git itself: the test would catch a no-op
    git(git_repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt2"), head)
    assert marker.exists()


def test_fsmonitor_never_runs_inside_plangates_git_calls(git_repo: Path, tmp_path: Path) -> None:
    script, marker = _marker_script(tmp_path, "fsmonitor")
    git(git_repo, "config", "core.fsmonitor", str(script))
    _write(git_repo, "new.txt", "x")
    assert Git(git_repo).worktree_changes() == ["new.txt"]
    assert not marker.exists()
    _raw_git(git_repo, "status", "--porcelain")
    assert marker.exists()  # git itself runs it: the check above is not vacuous


def test_textconv_and_external_diff_drivers_never_run(git_repo: Path, tmp_path: Path) -> None:
    script, marker = _marker_script(tmp_path, "driver")
    git(git_repo, "config", "diff.evil.textconv", str(script))
    git(git_repo, "config", "diff.evil.command", str(script))
    git(git_repo, "config", "diff.external", str(script))
    _write(git_repo, ".gitattributes", "* diff=evil\n")
    base = commit_all(git_repo, "attributes")
    _write(git_repo, "a.txt", "changed\n")
    head = commit_all(git_repo, "change")
    assert Git(git_repo).changed_paths(base, head) == ["a.txt"]
    assert not marker.exists()


def test_an_abbreviation_resolves_as_an_object_never_as_a_branch_of_that_name(
    git_repo: Path,
) -> None:
    first = git(git_repo, "rev-parse", "HEAD")
    _write(git_repo, "b.txt", "b")
    second = commit_all(git_repo, "second")
    abbrev = first[:12]
    git(git_repo, "branch", abbrev, second)  # a branch named like the first commit's id
    door = Git(git_repo)
    assert door.resolve_commit(abbrev) == first
    assert door.resolve_commits([abbrev]) == {abbrev: first}
    assert door.resolve_commits([first]) == {first: first}


def test_head_naming_a_tag_or_remote_ref_is_not_on_a_branch(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    door = Git(git_repo)
    assert door.head_state().branch == "refs/heads/main"
    git(git_repo, "update-ref", "refs/remotes/origin/main", head)
    git(git_repo, "symbolic-ref", "HEAD", "refs/remotes/origin/main")
    state = door.head_state()
    assert (state.commit, state.branch, state.ref) == (head, None, "refs/remotes/origin/main")
    git(git_repo, "tag", "v1", head)
    git(git_repo, "symbolic-ref", "HEAD", "refs/tags/v1")
    state = door.head_state()
    assert (state.branch, state.ref) == (None, "refs/tags/v1")


def _surfaces(repo: Path) -> None:
    _write(repo, ".plangate/protected-surfaces.toml",
           'version = 1\n\n[[surface]]\npattern = "CLAUDE.md"\nclass = "rules"\n'
           'reason = "agent instructions are human-owned"\n')


def test_ci_check_judges_the_real_head_under_a_replace_ref(
    git_repo: Path, run_cli: RunCli
) -> None:
    _surfaces(git_repo)
    base = commit_all(git_repo, "surfaces")
    _write(git_repo, "CLAUDE.md", "weakened\n")
    head = commit_all(git_repo, "protected change")
    git(git_repo, "checkout", "-q", base)
    _write(git_repo, "README.md", "# test repo\n\nharmless\n")
    decoy = commit_all(git_repo, "decoy")
    git(git_repo, "checkout", "-q", "main")
    _raw_git(git_repo, "replace", head, decoy)
    result = run_cli(git_repo, "ci", "check", "--base", base, "--head", head, "--json")
    doc = json.loads(result.out)
    assert "CLAUDE.md" in doc["facts"]["changed_paths"]
    assert "CLAUDE.md" in doc["facts"]["protected_paths"]
    assert result.code == 1


def test_output_beyond_the_bound_stops_git_with_a_code(git_repo: Path) -> None:
    for n in range(200):
        _write(git_repo, f"many/file-{n:04d}.txt", "x\n")
    commit = commit_all(git_repo, "many files")
    assert len(Git(git_repo).ls_tree(commit)) > 200
    bounded = Git(git_repo, output_limit=1000)
    with pytest.raises(GitError) as info:
        bounded.ls_tree(commit)
    assert info.value.code == "GIT_OUTPUT_TOO_LARGE"
    assert bounded.resolve_commit("HEAD") == commit  # small answers still pass the bound


def test_the_subprocess_path_has_the_same_bound(git_repo: Path) -> None:
    from plangate._spawn import SpawnOutputTooLarge, subprocess_capture
    from plangate.git import HARDENING_ARGS, scrubbed_env

    argv = ["git", *HARDENING_ARGS, "log", "--format=%H%n%H%n%H"]
    for n in range(20):
        _write(git_repo, f"f{n}", "x\n")
        commit_all(git_repo, f"c{n}")
    code, out, _ = subprocess_capture(argv, git_repo, scrubbed_env(), input_data=None,
                                      timeout=60.0, output_limit=1 << 20)
    assert code == 0 and len(out) > 2000
    with pytest.raises(SpawnOutputTooLarge):
        subprocess_capture(argv, git_repo, scrubbed_env(), input_data=None, timeout=60.0,
                           output_limit=500)


def test_worktree_changes_reads_literal_directories_and_ignored_files(git_repo: Path) -> None:
    _write(git_repo, "docs/working/a.md", "x\n")
    _write(git_repo, "docs/other/b.md", "x\n")
    _write(git_repo, "docs/work*/c.md", "x\n")
    _write(git_repo, ".gitignore", "*.log\n")
    commit_all(git_repo, "ignore logs")
    _write(git_repo, "docs/working/d.log", "x\n")
    door = Git(git_repo)
    assert door.worktree_changes(("docs/working",)) == []
    assert door.worktree_changes(("docs/working",), ignored=True) == ["docs/working/d.log"]
    _write(git_repo, "docs/work*/c.md", "changed\n")
    # A literal pathspec: "docs/work*" never matches docs/working/d.log.
    assert door.worktree_changes(("docs/work*",), ignored=True) == ["docs/work*/c.md"]
    assert door.worktree_changes(("docs/working",)) == []
